//! The status-line hints: which actions each view advertises, and with what label.

use super::view_kind::ViewKind;
use crate::ui::action::Action;

use Action as A;

/// A status-line hint: the first key of each action, `/`-joined, then a label.
pub struct Hint {
    /// Actions whose first keys are shown.
    pub actions: &'static [Action],
    /// Label after the keys (may be empty).
    pub label: &'static str,
}

const fn h(actions: &'static [Action], label: &'static str) -> Hint {
    Hint { actions, label }
}

/// Hints of the picker.
const PICKER_HINTS: &[Hint] = &[
    h(&[A::Down, A::Up], "move"),
    h(&[A::Confirm], "open"),
    h(&[A::Help], "help"),
    h(&[A::Quit], "quit"),
];
/// Hints of the timeline on wide terminals.
const TIMELINE_HINTS: &[Hint] = &[
    h(&[A::ZoomIn, A::ZoomOut], "zoom"),
    h(&[A::PanLeft, A::PanRight], "pan"),
    h(&[A::Down, A::Up], "lane"),
    h(&[A::PrevSlice, A::NextSlice], "slice"),
    h(&[A::Confirm], "select"),
    h(&[A::Mark], "mark"),
    h(&[A::Partner], "flow"),
    h(&[A::JumpDevice], "device"),
    h(&[A::Help], "help"),
];
/// Hints of the timeline below 100 columns.
const TIMELINE_HINTS_NARROW: &[Hint] = &[
    h(&[A::ZoomIn, A::ZoomOut], "zoom"),
    h(&[A::PanLeft, A::PanRight], "pan"),
    h(&[A::Down, A::Up], ""),
    h(&[A::PrevSlice, A::NextSlice], ""),
    h(&[A::Confirm], ""),
    h(&[A::JumpDevice], "device"),
    h(&[A::Help], "help"),
];

/// Hints of the run overview.
const OVERVIEW_HINTS: &[Hint] = &[
    h(&[A::Down, A::Up], "rank"),
    h(&[A::PrevSlice, A::NextSlice], "step"),
    h(&[A::CycleMetric], "metric"),
    h(&[A::SortNext], "sort"),
    h(&[A::Confirm], "open"),
    h(&[A::Help], "help"),
];

/// Hints of the aligned multi-rank timeline.
const ALIGNED_HINTS: &[Hint] = &[
    h(&[A::ZoomIn, A::ZoomOut], "zoom"),
    h(&[A::PanLeft, A::PanRight], "pan"),
    h(&[A::PrevStep, A::NextStep], "step"),
    h(&[A::CycleMetric], "align"),
    h(&[A::Confirm], "open"),
];

/// Hints of the aligned timelines of a diff.
const DIFF_ALIGN_HINTS: &[Hint] = &[
    h(&[A::ZoomIn, A::ZoomOut], "zoom"),
    h(&[A::PanLeft, A::PanRight], "pan"),
    h(&[A::PrevSlice, A::NextSlice], "pair"),
    h(&[A::NextHit, A::PrevHit], "difference"),
    h(&[A::NextTrack], "track"),
    h(&[A::CycleMetric], "overlay"),
    h(&[A::Help], "help"),
];

/// Hints of the roofline chart.
const ROOFLINE_HINTS: &[Hint] = &[
    h(&[A::Down, A::Up], "op"),
    h(&[A::Confirm], "its kernels"),
    h(&[A::CycleMetric], "roofs"),
    h(&[A::Help], "help"),
    h(&[A::Back], "back"),
];

/// The hints of `view` (`narrow` below 100 columns) and the separator between them; `None`
/// for views without a status line of their own.
pub fn for_view(view: ViewKind, narrow: bool) -> Option<(&'static [Hint], &'static str)> {
    match view {
        ViewKind::Picker => Some((PICKER_HINTS, "  ")),
        ViewKind::Timeline if narrow => Some((TIMELINE_HINTS_NARROW, " ")),
        ViewKind::Timeline => Some((TIMELINE_HINTS, "  ")),
        ViewKind::Overview => Some((OVERVIEW_HINTS, if narrow { " " } else { "  " })),
        ViewKind::Aligned => Some((ALIGNED_HINTS, " ")),
        ViewKind::DiffAlign => Some((DIFF_ALIGN_HINTS, if narrow { " " } else { "  " })),
        ViewKind::Roofline => Some((ROOFLINE_HINTS, if narrow { " " } else { "  " })),
        _ => None,
    }
}
