//! Which view a key binding belongs to ([`ViewKind`]), with its `[keys.<name>]` config name.

use crate::ui::action::Action;

/// Which view a binding belongs to. `Global` bindings apply in every view unless the view binds
/// the same key itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ViewKind {
    /// Every view.
    Global,
    /// The capture list.
    Picker,
    /// The timeline of the open capture.
    Timeline,
    /// The key help popup.
    Help,
    /// The search prompt and its results.
    Search,
    /// Table popups: statistics, rankings, GPU breakdown.
    Table,
    /// The flame graph (merged call tree).
    Flame,
    /// The selection's full details.
    Details,
    /// The run overview (rank × step heatmap, rank table).
    Overview,
    /// The aligned multi-rank timeline.
    Aligned,
    /// The aligned timelines of a diff (one stream of A over its partner in B).
    DiffAlign,
    /// The roofline chart and its ops.
    Roofline,
}

impl ViewKind {
    /// Whether `action` acts in this view: opening the newest capture and the capture form
    /// (global keys) act only in the picker and on the timeline, where `App::update` opens
    /// them; every other action wherever it is bound.
    pub fn takes(self, action: Action) -> bool {
        !matches!(action, Action::OpenNewest | Action::OpenCapture)
            || matches!(
                self,
                ViewKind::Global | ViewKind::Picker | ViewKind::Timeline
            )
    }

    /// Every kind, in config order.
    pub const ALL: &'static [ViewKind] = &[
        ViewKind::Global,
        ViewKind::Picker,
        ViewKind::Timeline,
        ViewKind::Help,
        ViewKind::Search,
        ViewKind::Table,
        ViewKind::Flame,
        ViewKind::Details,
        ViewKind::Overview,
        ViewKind::Aligned,
        ViewKind::DiffAlign,
        ViewKind::Roofline,
    ];

    /// Name of the `[keys.<name>]` table in the config file.
    pub fn name(self) -> &'static str {
        match self {
            ViewKind::Global => "global",
            ViewKind::Picker => "picker",
            ViewKind::Timeline => "timeline",
            ViewKind::Help => "help",
            ViewKind::Search => "search",
            ViewKind::Table => "table",
            ViewKind::Flame => "flame",
            ViewKind::Details => "details",
            ViewKind::Overview => "overview",
            ViewKind::Aligned => "aligned",
            ViewKind::DiffAlign => "diff_align",
            ViewKind::Roofline => "roofline",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<ViewKind> {
        ViewKind::ALL.iter().copied().find(|v| v.name() == name)
    }
}
