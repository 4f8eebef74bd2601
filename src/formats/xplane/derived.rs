//! Derived timelines of GPU planes (design analysis.md §d, after TensorFlow's
//! `derived_timeline.cc`): `Steps`, `XLA Modules`, `XLA Ops`, `Framework Name Scope`,
//! `Framework Ops`, `Source code` from the device events' stats, and `Launch Stats` from host
//! launch events. Pure functions over compact event records. This file holds the records and
//! the line builder; the derivations are in `derive_device.rs` and `launch_stats.rs`.

use crate::model::{Interner, Ps, StrId};

/// `kThreadIdDerivedMin` (0xdeadbeef as a C `int`): first derived line id.
pub const DERIVED_MIN: i64 = -559038737;
/// Number of line ids upstream reserves for derived lines.
pub const DERIVED_SPAN: i64 = 290;

/// Line names of derived timelines (current and older TensorFlow spellings).
pub const DERIVED_NAMES: &[&str] = &[
    "Steps",
    "XLA Modules",
    "XLA Ops",
    "Async XLA Ops",
    "Framework Ops",
    "TensorFlow Ops",
    "Framework Name Scope",
    "TensorFlow Name Scope",
    "Launch Stats",
    "Source code",
    "Host Offload Ops",
];

/// True for a line that upstream derived (by id range or name).
pub fn is_derived_line(id: i64, name: &str) -> bool {
    (DERIVED_MIN..DERIVED_MIN + DERIVED_SPAN).contains(&id) || DERIVED_NAMES.contains(&name)
}

/// Where derivation interns the names it builds (the capture's interner, or a handle shared by
/// the loader's threads).
pub trait NameTable {
    /// Interns `s`.
    fn intern(&mut self, s: &str) -> StrId;
    /// A copy of the text of `id` (the table may be shared between threads).
    fn text(&self, id: StrId) -> String;
}

impl NameTable for Interner {
    fn intern(&mut self, s: &str) -> StrId {
        Interner::intern(self, s)
    }
    fn text(&self, id: StrId) -> String {
        self.get(id).to_string()
    }
}

/// One device event as the derivation needs it (effective stats: event first, then metadata).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DevEvent {
    /// Start, ps.
    pub start: Ps,
    /// Duration, ps.
    pub dur: Ps,
    /// Low-level (kernel) name.
    pub name: StrId,
    /// `group_id` stat value when `grouped` (a plain field pair: 48 B per record, not 56).
    pub group_id: i64,
    /// Has a `group_id` stat.
    pub grouped: bool,
    /// `hlo_op` stat (may hold `a::b` levels).
    pub hlo_op: StrId,
    /// `hlo_module` stat.
    pub hlo_module: StrId,
    /// `tf_op` stat.
    pub tf_op: StrId,
    /// `source` stat.
    pub source: StrId,
    /// Has `kernel_details` (a kernel, not a memcpy/memset).
    pub kernel: bool,
    /// Index of the line it was read from (orders equal-time events of different lines).
    pub line: u16,
}

impl DevEvent {
    /// The `group_id` stat, if any.
    #[inline]
    pub fn group(&self) -> Option<i64> {
        self.grouped.then_some(self.group_id)
    }
}

/// Which derived line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DerivedKind {
    /// `Steps` (+0).
    Steps,
    /// `Launch Stats` (+1).
    LaunchStats,
    /// `Framework Name Scope` (+2).
    NameScope,
    /// `Framework Ops` (+3).
    FrameworkOps,
    /// `XLA Modules` (+4).
    XlaModules,
    /// `XLA Ops` (+5).
    XlaOps,
    /// `Source code` (+7).
    Source,
}

impl DerivedKind {
    /// Upstream line id.
    pub fn line_id(self) -> i64 {
        DERIVED_MIN
            + match self {
                DerivedKind::Steps => 0,
                DerivedKind::LaunchStats => 1,
                DerivedKind::NameScope => 2,
                DerivedKind::FrameworkOps => 3,
                DerivedKind::XlaModules => 4,
                DerivedKind::XlaOps => 5,
                DerivedKind::Source => 7,
            }
    }

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            DerivedKind::Steps => "Steps",
            DerivedKind::LaunchStats => "Launch Stats",
            DerivedKind::NameScope => "Framework Name Scope",
            DerivedKind::FrameworkOps => "Framework Ops",
            DerivedKind::XlaModules => "XLA Modules",
            DerivedKind::XlaOps => "XLA Ops",
            DerivedKind::Source => "Source code",
        }
    }

    /// Drawing order within the plane (derived lines come first, in XProf's order).
    pub fn order(self) -> i64 {
        match self {
            DerivedKind::Steps => 0,
            DerivedKind::LaunchStats => 1,
            DerivedKind::XlaModules => 2,
            DerivedKind::XlaOps => 3,
            DerivedKind::NameScope => 4,
            DerivedKind::FrameworkOps => 5,
            DerivedKind::Source => 6,
        }
    }
}

/// One derived event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DerivedEvent {
    /// Start, ps.
    pub start: Ps,
    /// Duration, ps.
    pub dur: Ps,
    /// Display name.
    pub name: StrId,
    /// Full name when it differs from the display name (`long_name` arg), else empty.
    pub long_name: StrId,
    /// Group id (step) it belongs to, [`NO_GROUP`] for none (read with
    /// [`DerivedEvent::group`]; a plain i64 keeps the record at 32 bytes).
    pub group_id: i64,
}

/// `DerivedEvent::group_id` of an event without a group.
pub const NO_GROUP: i64 = i64::MIN;

impl DerivedEvent {
    /// The group (step) it belongs to.
    #[inline]
    pub fn group(&self) -> Option<i64> {
        (self.group_id != NO_GROUP).then_some(self.group_id)
    }
}

/// `Launch Stats` values of one event: `num_launches`, `max_launch_time_us`, `avg_launch_time_us`.
pub type LaunchValues = (u64, f64, f64);

/// One derived line with its events in start order.
#[derive(Clone, Debug, PartialEq)]
pub struct DerivedLine {
    /// Which line.
    pub kind: DerivedKind,
    /// Its events.
    pub events: Vec<DerivedEvent>,
    /// For `Launch Stats` lines, the values of each event (parallel to `events`); else empty.
    pub launch: Vec<LaunchValues>,
}

#[derive(Clone, Debug)]
struct Last {
    idx: usize,
    key: StrId,
    group: Option<i64>,
    low: Vec<StrId>,
}

/// Builds one derived line with per-level merging (`ExpandOrAddLevelEvent`).
pub(super) struct LineBuilder {
    kind: DerivedKind,
    events: Vec<DerivedEvent>,
    last: Vec<Option<Last>>,
}

impl LineBuilder {
    pub(super) fn new(kind: DerivedKind) -> Self {
        LineBuilder {
            kind,
            events: Vec::new(),
            last: Vec::new(),
        }
    }

    pub(super) fn reset_from(&mut self, level: usize) {
        for l in self.last.iter_mut().skip(level) {
            *l = None;
        }
    }

    /// Merges `ev` into the previous event of `level` when it has the same key and group and
    /// `low` is not yet recorded there; else starts a new event. Returns true when a new event
    /// was added at level 0 (the caller then resets dependent lines).
    pub(super) fn expand_or_add(
        &mut self,
        level: usize,
        key: StrId,
        ev: DerivedEvent,
        low: StrId,
        use_group: bool,
    ) -> bool {
        if self.last.len() <= level {
            self.last.resize(level + 1, None);
        }
        let group = if use_group { ev.group() } else { None };
        if let Some(last) = &mut self.last[level]
            && last.key == key
            && last.group == group
            && (low == StrId::EMPTY || !last.low.contains(&low))
        {
            let e = &mut self.events[last.idx];
            let end = (ev.start + ev.dur).max(e.start + e.dur);
            e.dur = end - e.start;
            if low != StrId::EMPTY {
                last.low.push(low);
            }
            return false;
        }
        self.reset_from(level);
        let mut lows = Vec::new();
        if low != StrId::EMPTY {
            lows.push(low);
        }
        self.last[level] = Some(Last {
            idx: self.events.len(),
            key,
            group,
            low: lows,
        });
        self.events.push(ev);
        level == 0
    }

    /// The multi-level form: each level in turn, then levels deeper than `n` are reset.
    /// Returns true when level 0 started a new event.
    pub(super) fn expand_or_add_levels(
        &mut self,
        levels: &[(StrId, DerivedEvent)],
        low: StrId,
        use_group: bool,
    ) -> bool {
        let mut new0 = false;
        for (i, &(key, ev)) in levels.iter().enumerate() {
            new0 |= self.expand_or_add(i, key, ev, low, use_group);
        }
        self.reset_from(levels.len());
        new0
    }

    /// The line, events sorted by (start asc, duration desc): events of overlapping streams
    /// start new events out of order.
    pub(super) fn finish(mut self) -> DerivedLine {
        self.events
            .sort_by(|a, b| a.start.cmp(&b.start).then(b.dur.cmp(&a.dur)));
        DerivedLine {
            kind: self.kind,
            events: self.events,
            launch: Vec::new(),
        }
    }
}

/// Splits a framework op `name:type` (or a JAX path without a type) into (name, type).
pub fn parse_tf_op(full: &str) -> (&str, &str) {
    match full.split_once(':') {
        Some((name, ty)) => {
            let ty = ty.split('[').next().unwrap_or(ty);
            (name, ty)
        }
        None => (full, full.rsplit('/').next().unwrap_or(full)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_event_stays_compact() {
        // one record per GPU event of a plane is alive during derivation
        assert!(std::mem::size_of::<DevEvent>() <= 48);
        assert_eq!(std::mem::size_of::<DerivedEvent>(), 32);
    }
}
