//! The default key table: every binding (view, action, keys, description), in help order.

use super::view_kind::ViewKind;
use crate::ui::action::Action;

/// One row of the default table.
#[derive(Debug)]
pub struct Default {
    /// The view.
    pub view: ViewKind,
    /// The action.
    pub action: Action,
    /// Default keys (parsed with [`Key::parse`]).
    pub keys: &'static [&'static str],
    /// What it does, for help and docs.
    pub desc: &'static str,
}

const fn d(
    view: ViewKind,
    action: Action,
    keys: &'static [&'static str],
    desc: &'static str,
) -> Default {
    Default {
        view,
        action,
        keys,
        desc,
    }
}

use Action as A;
use ViewKind as V;

/// Every default binding, in help order within each view.
pub const DEFAULTS: &[Default] = &[
    d(V::Global, A::Quit, &["q", "Ctrl-c"], "quit"),
    d(V::Global, A::Help, &["?"], "this help"),
    d(
        V::Global,
        A::OpenNewest,
        &["O"],
        "open the newest capture (announced when it appears)",
    ),
    d(V::Picker, A::Down, &["j", "Down"], "next capture"),
    d(V::Picker, A::Up, &["k", "Up"], "previous capture"),
    d(V::Picker, A::Top, &["g", "Home"], "first capture"),
    d(V::Picker, A::Bottom, &["G", "End"], "last capture"),
    d(V::Picker, A::Confirm, &["Enter"], "open the capture"),
    d(V::Picker, A::Back, &["Esc"], "back to the open capture"),
    d(
        V::Timeline,
        A::ZoomIn,
        &["w", "+", "="],
        "zoom in (around the selection or the centre)",
    ),
    d(V::Timeline, A::ZoomOut, &["s", "-"], "zoom out"),
    d(V::Timeline, A::PanLeft, &["a", "Left"], "pan left"),
    d(V::Timeline, A::PanRight, &["d", "Right"], "pan right"),
    d(
        V::Timeline,
        A::Down,
        &["j", "Down"],
        "next lane (the selection follows)",
    ),
    d(V::Timeline, A::Up, &["k", "Up"], "previous lane"),
    d(V::Timeline, A::PageDown, &["PgDn"], "page down"),
    d(V::Timeline, A::PageUp, &["PgUp"], "page up"),
    d(V::Timeline, A::Top, &["g"], "first track"),
    d(V::Timeline, A::Bottom, &["G"], "last track"),
    d(V::Timeline, A::NextTrack, &["Tab"], "next track"),
    d(V::Timeline, A::PrevTrack, &["BackTab"], "previous track"),
    d(
        V::Timeline,
        A::PrevSlice,
        &["h"],
        "previous slice on the lane",
    ),
    d(V::Timeline, A::NextSlice, &["l"], "next slice on the lane"),
    d(
        V::Timeline,
        A::Confirm,
        &["Enter"],
        "select the slice under the cursor; again: zoom; process row: fold",
    ),
    d(V::Timeline, A::Parent, &["u"], "select the parent"),
    d(
        V::Timeline,
        A::Fit,
        &["f"],
        "fit the selection (or the marked range)",
    ),
    d(
        V::Timeline,
        A::FitAll,
        &["0", "Home"],
        "show the whole capture",
    ),
    d(
        V::Timeline,
        A::Collapse,
        &["Space"],
        "collapse / expand the process",
    ),
    d(
        V::Timeline,
        A::Partner,
        &["p"],
        "jump to the flow / correlation partner",
    ),
    d(V::Timeline, A::NextPartner, &[">"], "next partner"),
    d(V::Timeline, A::PrevPartner, &["<"], "previous partner"),
    d(
        V::Timeline,
        A::Mark,
        &["m"],
        "mark a range (press at both ends)",
    ),
    d(
        V::Timeline,
        A::ToggleColor,
        &["c"],
        "colour by name / by category",
    ),
    d(
        V::Timeline,
        A::Back,
        &["Esc"],
        "cancel load, clear mark / selection, then the picker",
    ),
    d(
        V::Timeline,
        A::Search,
        &["/"],
        "search every event name (fuzzy; Ctrl-R: regex)",
    ),
    d(
        V::Timeline,
        A::NextHit,
        &["n"],
        "next hit (search occurrence / ranked event)",
    ),
    d(V::Timeline, A::PrevHit, &["N"], "previous hit"),
    d(
        V::Timeline,
        A::HitsInTrack,
        &["T"],
        "n / N: all tracks or the cursor's track only",
    ),
    d(
        V::Timeline,
        A::DimOthers,
        &["D"],
        "dim everything but the hits",
    ),
    d(
        V::Timeline,
        A::OpenStats,
        &["t"],
        "statistics per name (of the marked range, else all)",
    ),
    d(
        V::Timeline,
        A::OpenRank,
        &["o"],
        "optimizable events: what starves the GPU",
    ),
    d(
        V::Timeline,
        A::OpenGpu,
        &["b"],
        "GPU breakdown per device and stream",
    ),
    d(
        V::Timeline,
        A::OpenFlame,
        &["F"],
        "flame graph: merged call tree (of the marked range, else all)",
    ),
    d(
        V::Timeline,
        A::JumpPeak,
        &["^"],
        "memory: to the allocated peak (again: next device)",
    ),
    d(
        V::Timeline,
        A::OpenMemory,
        &["M"],
        "memory: allocations live at the cursor, at end, in range",
    ),
    d(V::Help, A::Down, &["j", "Down"], "scroll down"),
    d(V::Help, A::Up, &["k", "Up"], "scroll up"),
    d(V::Help, A::Back, &["Esc"], "close (any other key too)"),
    d(V::Search, A::Down, &["Down", "Ctrl-n"], "next result"),
    d(
        V::Search,
        A::Up,
        &["Up", "Ctrl-p"],
        "previous result (in an empty prompt: history)",
    ),
    d(V::Search, A::PageDown, &["PgDn"], "page down"),
    d(V::Search, A::PageUp, &["PgUp"], "page up"),
    d(
        V::Search,
        A::Confirm,
        &["Enter"],
        "jump to the first occurrence; n / N step through all",
    ),
    d(V::Search, A::ToggleRegex, &["Ctrl-r"], "fuzzy / regex"),
    d(V::Search, A::Back, &["Esc"], "close"),
    d(V::Table, A::Down, &["j", "Down"], "next row"),
    d(V::Table, A::Up, &["k", "Up"], "previous row"),
    d(V::Table, A::PageDown, &["PgDn"], "page down"),
    d(V::Table, A::PageUp, &["PgUp"], "page up"),
    d(V::Table, A::Top, &["g", "Home"], "first row"),
    d(V::Table, A::Bottom, &["G", "End"], "last row"),
    d(V::Table, A::SortNext, &["s"], "sort by the next column"),
    d(V::Table, A::SortReverse, &["S"], "reverse the sort"),
    d(
        V::Table,
        A::GroupNext,
        &["v"],
        "statistics: group by name / category / …; memory: scope",
    ),
    d(
        V::Table,
        A::FilterCategory,
        &["c"],
        "statistics: only the next category (then all)",
    ),
    d(
        V::Table,
        A::FilterTrack,
        &["T"],
        "statistics: only the cursor's / next track; memory: device",
    ),
    d(
        V::Table,
        A::FilterProcess,
        &["P"],
        "statistics: only the cursor's / next process (then all)",
    ),
    d(
        V::Table,
        A::Search,
        &["/"],
        "filter the rows (fuzzy, on the first column)",
    ),
    d(
        V::Table,
        A::Confirm,
        &["Enter"],
        "go to the row's event / hits / track on the timeline",
    ),
    d(V::Table, A::Back, &["Esc"], "close"),
    d(
        V::Flame,
        A::Down,
        &["j", "Down"],
        "to the widest child (table: next row)",
    ),
    d(
        V::Flame,
        A::Up,
        &["k", "Up"],
        "to the parent (table: previous row)",
    ),
    d(V::Flame, A::PrevSlice, &["h", "Left"], "previous sibling"),
    d(V::Flame, A::NextSlice, &["l", "Right"], "next sibling"),
    d(
        V::Flame,
        A::ZoomIn,
        &["w", "+", "="],
        "zoom: the selected node becomes the root",
    ),
    d(V::Flame, A::ZoomOut, &["s", "-"], "zoom out one level"),
    d(
        V::Flame,
        A::CycleMetric,
        &["m"],
        "metric: total (wall), self, device time, count",
    ),
    d(
        V::Flame,
        A::ToggleSandwich,
        &["x"],
        "sandwich: callers and callees of the selected name",
    ),
    d(V::Flame, A::ToggleTable, &["t"], "the tree as a table"),
    d(
        V::Flame,
        A::SortNext,
        &["o"],
        "table: sort by the next column",
    ),
    d(
        V::Flame,
        A::Search,
        &["/"],
        "highlight names containing text (Enter / Esc ends typing)",
    ),
    d(
        V::Flame,
        A::Confirm,
        &["Enter"],
        "the node's instances become the hits; back to the timeline at the first",
    ),
    d(V::Flame, A::Back, &["Esc"], "close"),
];
