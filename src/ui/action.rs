//! Everything a key can do, as data: the [`Action`] enum with its config-file name. The key table
//! ([`super::keymap`]) maps keys to actions per view; views handle actions, not keys.

/// One thing the user can ask for. The config name (`snake_case`) is what `config.toml` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Leave tracetui.
    Quit,
    /// Open the key help.
    Help,
    /// Close the popup / cancel / clear / go back.
    Back,
    /// Next item or lane.
    Down,
    /// Previous item or lane.
    Up,
    /// One page down.
    PageDown,
    /// One page up.
    PageUp,
    /// First item.
    Top,
    /// Last item.
    Bottom,
    /// Open / select / confirm.
    Confirm,
    /// Zoom in.
    ZoomIn,
    /// Zoom out.
    ZoomOut,
    /// Pan a quarter window left.
    PanLeft,
    /// Pan a quarter window right.
    PanRight,
    /// Next track.
    NextTrack,
    /// Previous track.
    PrevTrack,
    /// Timeline: the next process (or the memory rows), its rows scrolled into view.
    NextProcess,
    /// Timeline: the previous process.
    PrevProcess,
    /// Timeline: the next GPU / accelerator process.
    JumpDevice,
    /// Previous slice on the lane.
    PrevSlice,
    /// Next slice on the lane.
    NextSlice,
    /// Select the parent slice.
    Parent,
    /// Fit the selection or the marked range.
    Fit,
    /// Show the whole capture.
    FitAll,
    /// Collapse / expand the process.
    Collapse,
    /// Jump to the flow / correlation partner.
    Partner,
    /// Next partner.
    NextPartner,
    /// Previous partner.
    PrevPartner,
    /// Mark a range.
    Mark,
    /// Colour by name / by category.
    ToggleColor,
    /// Open the search prompt.
    Search,
    /// Next hit (search occurrence or ranked event).
    NextHit,
    /// Previous hit.
    PrevHit,
    /// `n` / `N` across all tracks or within the cursor's track.
    HitsInTrack,
    /// Dim everything but the hits.
    DimOthers,
    /// Fuzzy / regex matching in the search prompt.
    ToggleRegex,
    /// Sort a table by the next column.
    SortNext,
    /// Reverse a table's sort.
    SortReverse,
    /// Statistics table: group rows by the next key (name, category, hlo_op, tf_op).
    GroupNext,
    /// Statistics table: only the next category (cycles, then all).
    FilterCategory,
    /// Statistics table: only the next track (starting at the cursor's; cycles, then all).
    FilterTrack,
    /// Statistics table: only the next process (starting at the cursor's; cycles, then all).
    FilterProcess,
    /// Open the statistics table.
    OpenStats,
    /// Open the optimizable-events ranking.
    OpenRank,
    /// Open the GPU breakdown.
    OpenGpu,
    /// Open the roofline chart (FLOP/s per op against the device's peak).
    OpenRoofline,
    /// Statistics table: show / hide the achieved FLOP/s, bytes/s and % of peak columns.
    ToggleAchieved,
    /// Open the critical path of the step under the cursor.
    OpenCritical,
    /// Open the newest capture (live watching).
    OpenNewest,
    /// Open the flame graph (merged call tree) of the marked range or the whole capture.
    OpenFlame,
    /// Open the capture form (record a new capture from a profiler server).
    OpenCapture,
    /// Picker: mark the capture as the baseline (A) of a diff (again: unmark).
    MarkBaseline,
    /// Picker: diff the capture (B) against the baseline.
    OpenDiff,
    /// Open the selection's full details (every arg, the call stack, the parents).
    OpenDetails,
    /// Flame view: next metric (wall, self, device time, count).
    CycleMetric,
    /// Flame view: next scope (whole capture, marked range, step, process, track, hits).
    CycleScope,
    /// Flame view: sandwich of the selected name on / off.
    ToggleSandwich,
    /// Flame view: the tree as a table on / off.
    ToggleTable,
    /// Timeline: go to the previous training step.
    PrevStep,
    /// Timeline: go to the next training step.
    NextStep,
    /// Timeline: zoom to the training step under the cursor.
    ZoomStep,
    /// Open the run overview (rank × step heatmap, rank table).
    OpenOverview,
    /// Run overview: open the aligned multi-rank timeline.
    OpenAligned,
    /// Memory rows: move the window and cursor to the allocated peak (the next device's on
    /// repeat).
    JumpPeak,
    /// Open the memory table: allocations live at the cursor, live at end, largest in a range.
    OpenMemory,
    /// List the open capture's load warnings (truncated, repaired, dropped), file and offset.
    OpenWarnings,
    /// Diff table: open the aligned timelines of A's and B's busiest stream.
    OpenDiffAlign,
    /// Diff table: the next noise threshold under which a row is `same`.
    DiffThreshold,
    /// Diff table: prompt for the steps to compare (`10..20`; empty: all steps).
    DiffSteps,
}

impl Action {
    /// Every action, in help order.
    pub const ALL: &'static [Action] = &[
        Action::Quit,
        Action::Help,
        Action::Back,
        Action::Down,
        Action::Up,
        Action::PageDown,
        Action::PageUp,
        Action::Top,
        Action::Bottom,
        Action::Confirm,
        Action::ZoomIn,
        Action::ZoomOut,
        Action::PanLeft,
        Action::PanRight,
        Action::NextTrack,
        Action::PrevTrack,
        Action::NextProcess,
        Action::PrevProcess,
        Action::JumpDevice,
        Action::PrevSlice,
        Action::NextSlice,
        Action::Parent,
        Action::Fit,
        Action::FitAll,
        Action::Collapse,
        Action::Partner,
        Action::NextPartner,
        Action::PrevPartner,
        Action::Mark,
        Action::ToggleColor,
        Action::Search,
        Action::NextHit,
        Action::PrevHit,
        Action::HitsInTrack,
        Action::DimOthers,
        Action::ToggleRegex,
        Action::SortNext,
        Action::SortReverse,
        Action::GroupNext,
        Action::FilterCategory,
        Action::FilterTrack,
        Action::FilterProcess,
        Action::OpenStats,
        Action::OpenRank,
        Action::OpenGpu,
        Action::OpenRoofline,
        Action::ToggleAchieved,
        Action::OpenCritical,
        Action::OpenNewest,
        Action::OpenFlame,
        Action::OpenCapture,
        Action::MarkBaseline,
        Action::OpenDiff,
        Action::OpenDetails,
        Action::CycleMetric,
        Action::CycleScope,
        Action::ToggleSandwich,
        Action::ToggleTable,
        Action::PrevStep,
        Action::NextStep,
        Action::ZoomStep,
        Action::OpenOverview,
        Action::OpenAligned,
        Action::JumpPeak,
        Action::OpenMemory,
        Action::OpenWarnings,
        Action::OpenDiffAlign,
        Action::DiffThreshold,
        Action::DiffSteps,
    ];

    /// The name used in the config file.
    pub fn name(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "help",
            Action::Back => "back",
            Action::Down => "down",
            Action::Up => "up",
            Action::PageDown => "page_down",
            Action::PageUp => "page_up",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::Confirm => "confirm",
            Action::ZoomIn => "zoom_in",
            Action::ZoomOut => "zoom_out",
            Action::PanLeft => "pan_left",
            Action::PanRight => "pan_right",
            Action::NextTrack => "next_track",
            Action::PrevTrack => "prev_track",
            Action::NextProcess => "next_process",
            Action::PrevProcess => "prev_process",
            Action::JumpDevice => "jump_device",
            Action::PrevSlice => "prev_slice",
            Action::NextSlice => "next_slice",
            Action::Parent => "parent",
            Action::Fit => "fit",
            Action::FitAll => "fit_all",
            Action::Collapse => "collapse",
            Action::Partner => "partner",
            Action::NextPartner => "next_partner",
            Action::PrevPartner => "prev_partner",
            Action::Mark => "mark",
            Action::ToggleColor => "toggle_color",
            Action::Search => "search",
            Action::NextHit => "next_hit",
            Action::PrevHit => "prev_hit",
            Action::HitsInTrack => "hits_in_track",
            Action::DimOthers => "dim_others",
            Action::ToggleRegex => "toggle_regex",
            Action::SortNext => "sort_next",
            Action::SortReverse => "sort_reverse",
            Action::GroupNext => "group_next",
            Action::FilterCategory => "filter_category",
            Action::FilterTrack => "filter_track",
            Action::FilterProcess => "filter_process",
            Action::OpenStats => "open_stats",
            Action::OpenRank => "open_rank",
            Action::OpenGpu => "open_gpu",
            Action::OpenRoofline => "open_roofline",
            Action::ToggleAchieved => "toggle_achieved",
            Action::OpenCritical => "open_critical",
            Action::OpenNewest => "open_newest",
            Action::OpenFlame => "open_flame",
            Action::OpenCapture => "open_capture",
            Action::MarkBaseline => "mark_baseline",
            Action::OpenDiff => "open_diff",
            Action::OpenDetails => "open_details",
            Action::CycleMetric => "cycle_metric",
            Action::CycleScope => "cycle_scope",
            Action::ToggleSandwich => "toggle_sandwich",
            Action::ToggleTable => "toggle_table",
            Action::PrevStep => "prev_step",
            Action::NextStep => "next_step",
            Action::ZoomStep => "zoom_step",
            Action::OpenOverview => "open_overview",
            Action::OpenAligned => "open_aligned",
            Action::JumpPeak => "jump_peak",
            Action::OpenMemory => "open_memory",
            Action::OpenWarnings => "open_warnings",
            Action::OpenDiffAlign => "open_diff_align",
            Action::DiffThreshold => "diff_threshold",
            Action::DiffSteps => "diff_steps",
        }
    }

    /// The action named `name` in the config file.
    pub fn from_name(name: &str) -> Option<Action> {
        Action::ALL.iter().copied().find(|a| a.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::Action;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &a in Action::ALL {
            assert!(seen.insert(a.name()), "{} twice", a.name());
            assert_eq!(Action::from_name(a.name()), Some(a));
        }
        assert_eq!(Action::from_name("zoom"), None);
    }
}
