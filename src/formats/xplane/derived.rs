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
    "Command Buffers",
];

/// True for a line that upstream derived (by id range or name).
pub fn is_derived_line(id: i64, name: &str) -> bool {
    let base = name.split_once(" - from #").map_or(name, |(k, _)| k);
    (DERIVED_MIN..DERIVED_MIN + DERIVED_SPAN).contains(&id) || DERIVED_NAMES.contains(&base)
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
#[derive(Clone, Copy, Debug, PartialEq)]
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
    /// Has `cuda_graph_exec_id` (a whole CUDA graph execution: treated as a kernel).
    pub graph_exec: bool,
    /// `correlation_id`, [`NO_VALUE`] if absent (links it to its host launch).
    pub corr: i64,
    /// `scope_range_id`, [`NO_VALUE`] if absent (one per module execution).
    pub scope: i64,
    /// `program_id`, [`NO_VALUE`] if absent.
    pub program_id: i64,
    /// `cuda_graph_id` of a kernel run as a node of a CUDA graph (command buffer), 0 if none.
    pub graph_id: u64,
}

/// An absent integer stat in a [`DevEvent`].
pub const NO_VALUE: i64 = i64::MIN;

impl Default for DevEvent {
    fn default() -> Self {
        DevEvent {
            start: 0,
            dur: 0,
            name: StrId::EMPTY,
            group_id: 0,
            grouped: false,
            hlo_op: StrId::EMPTY,
            hlo_module: StrId::EMPTY,
            tf_op: StrId::EMPTY,
            source: StrId::EMPTY,
            kernel: false,
            graph_exec: false,
            corr: NO_VALUE,
            scope: NO_VALUE,
            program_id: NO_VALUE,
            graph_id: 0,
        }
    }
}

impl DevEvent {
    /// The `group_id` stat, if any.
    #[inline]
    pub fn group(&self) -> Option<i64> {
        self.grouped.then_some(self.group_id)
    }
}

/// What the derivation reads of a device event besides its times, group, correlation and scope
/// range id: few distinct values per line, so each line keeps a table of them ([`DevRun`]) and
/// each record an index into it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DevAttr {
    /// `hlo_op` stat (may hold `a::b` levels).
    pub hlo_op: StrId,
    /// `hlo_module` stat.
    pub hlo_module: StrId,
    /// `tf_op` stat.
    pub tf_op: StrId,
    /// `program_id`, [`NO_VALUE`] if absent.
    pub program_id: i64,
    /// `cuda_graph_id`, 0 if none.
    pub graph_id: u64,
    /// Has `kernel_details`.
    pub kernel: bool,
    /// Has `cuda_graph_exec_id`.
    pub graph_exec: bool,
}

impl DevAttr {
    /// The attributes of `e`.
    pub fn of(e: &DevEvent) -> Self {
        DevAttr {
            hlo_op: e.hlo_op,
            hlo_module: e.hlo_module,
            tf_op: e.tf_op,
            program_id: e.program_id,
            graph_id: e.graph_id,
            kernel: e.kernel,
            graph_exec: e.graph_exec,
        }
    }
}

/// One device event of a [`DevRun`] (48 bytes: the per-event values, the rest by index).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DevRec {
    /// Start, ps.
    pub start: Ps,
    /// Duration, ps.
    pub dur: Ps,
    /// Group when [`DevRec::grouped`].
    pub group_id: i64,
    /// `correlation_id`, [`NO_VALUE`] if absent.
    pub corr: i64,
    /// `scope_range_id`, [`NO_VALUE`] if absent.
    pub scope: i64,
    /// Index of its [`DevAttr`] in the run's table.
    pub attr: u32,
    /// Has a group.
    pub grouped: bool,
}

impl DevRec {
    /// The group, if any.
    #[inline]
    pub fn group(&self) -> Option<i64> {
        self.grouped.then_some(self.group_id)
    }
}

/// The derivation records of one stream line: its events and their distinct attributes.
#[derive(Clone, Debug, Default)]
pub struct DevRun {
    /// Index of the line in its plane (orders equal-time events of different lines).
    pub line: u16,
    /// The events, in file order until derivation sorts them.
    pub recs: Vec<DevRec>,
    /// Distinct attributes, indexed by [`DevRec::attr`].
    pub attrs: Vec<DevAttr>,
    index: rustc_hash::FxHashMap<DevAttr, u32>,
    last: Option<(DevAttr, u32)>,
}

impl DevRun {
    /// An empty run of line `line` with room for `n` events.
    pub fn with_capacity(line: u16, n: usize) -> Self {
        DevRun {
            line,
            recs: Vec::with_capacity(n),
            ..DevRun::default()
        }
    }

    /// Appends `e` (its attributes interned: one hash lookup only when they differ from the
    /// previous event's).
    #[inline]
    pub fn push(&mut self, e: &DevEvent) {
        let a = DevAttr::of(e);
        let attr = match self.last {
            Some((l, i)) if l == a => i,
            _ => {
                let next = self.attrs.len() as u32;
                let i = *self.index.entry(a).or_insert(next);
                if i == next {
                    self.attrs.push(a);
                }
                self.last = Some((a, i));
                i
            }
        };
        self.recs.push(DevRec {
            start: e.start,
            dur: e.dur,
            group_id: e.group_id,
            corr: e.corr,
            scope: e.scope,
            attr,
            grouped: e.grouped,
        });
    }

    /// Frees the interning index (no more pushes).
    pub fn seal(&mut self) {
        self.index = rustc_hash::FxHashMap::default();
        self.last = None;
    }

    /// A run of `events` (tests and small inputs).
    pub fn from_events(line: u16, events: &[DevEvent]) -> Self {
        let mut r = DevRun::with_capacity(line, events.len());
        for e in events {
            r.push(e);
        }
        r.seal();
        r
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
    /// `Command Buffers`: one event per execution of a CUDA graph (XProf 2.24).
    CommandBuffers,
    /// `Host Offload Ops row N` of a TPU plane (+8 + N; rows 0–40).
    HostOffload(u16),
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
                DerivedKind::CommandBuffers => 8,
                DerivedKind::HostOffload(row) => 8 + i64::from(row),
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
            DerivedKind::CommandBuffers => "Command Buffers",
            DerivedKind::HostOffload(_) => "Host Offload Ops",
        }
    }

    /// The line's title: its name, with the row of a `Host Offload Ops` line.
    pub fn title(self) -> String {
        match self {
            DerivedKind::HostOffload(row) => format!("Host Offload Ops row {row}"),
            k => k.name().to_string(),
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
            DerivedKind::CommandBuffers => 7,
            DerivedKind::HostOffload(row) => 8 + i64::from(row),
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
    /// The stream line it was derived from (XLine id; XProf names the line
    /// `<kind> - from #<id>`), `None` for plane-wide lines (Steps, Launch Stats).
    pub from: Option<i64>,
    /// Its events.
    pub events: Vec<DerivedEvent>,
    /// For `Launch Stats` lines, the values of each event (parallel to `events`); else empty.
    pub launch: Vec<LaunchValues>,
}

/// The open event of one level: what a following event must match to extend it.
#[derive(Clone, Copy, Debug)]
struct Last {
    idx: usize,
    key: StrId,
    group: i64,
    scope: i64,
    corr: i64,
}

/// Builds one derived line like XProf's `DerivedXLineBuilder` on a GPU plane: an event extends
/// the open event of its level when both have the same key and group, their scope range ids
/// agree (or either has none) and, for command buffers, the same correlation id; otherwise it
/// starts a new event, closing that level and the deeper ones. Closing levels whose events
/// have equal spans shortens the deeper ones by 1 ns per level
/// (`AdjustDurationForTraceViewer`).
pub(super) struct LineBuilder {
    kind: DerivedKind,
    from: Option<i64>,
    events: Vec<DerivedEvent>,
    last: Vec<Option<Last>>,
    gap_rule: bool,
}

impl LineBuilder {
    pub(super) fn new(kind: DerivedKind, from: Option<i64>) -> Self {
        LineBuilder {
            kind,
            from,
            events: Vec::new(),
            last: Vec::new(),
            gap_rule: false,
        }
    }

    /// The rule of a non-GPU plane (TPU): an event without a group extends the open one only
    /// when it starts at most twice the open event's duration after its end.
    pub(super) fn with_gap_rule(mut self) -> Self {
        self.gap_rule = true;
        self
    }

    /// Closes the open events of `level` and deeper (`ResetLastEvents`; the caller resets
    /// dependent lines when `level` is 0).
    pub(super) fn reset_from(&mut self, level: usize) {
        self.adjust(level);
        for l in self.last.iter_mut().skip(level) {
            *l = None;
        }
    }

    /// `AdjustDurationForTraceViewer`: in the stack of open events from `level` down, each event
    /// whose span equals the one above it is cut short by one more ns (at most the top's
    /// duration in ns − 1).
    fn adjust(&mut self, level: usize) {
        if !matches!(self.last.get(level), Some(Some(_))) {
            return;
        }
        let mut max = level;
        while max < self.last.len() && self.last[max].is_some() {
            max += 1;
        }
        max -= 1;
        if max <= level {
            return;
        }
        let Some(top) = self.last[max] else { return };
        let max_shrink = self.events[top.idx].dur / 1000 - 1;
        let mut shrink = 0i64;
        let mut prev: Option<(Ps, Ps)> = None;
        for i in level..=max {
            let Some(l) = self.last[i] else { break };
            let e = &mut self.events[l.idx];
            let span = (e.start, e.dur);
            if shrink < max_shrink && prev == Some(span) {
                shrink += 1;
            }
            prev = Some(span);
            if shrink > 0 {
                e.dur = span.1 - 1000 * shrink;
            }
        }
    }

    /// Extends the open event of `level` with `ev` or starts a new one (see the type).
    /// `scope` and `corr` are [`NO_VALUE`] when absent. Returns true when a new event was
    /// started at level 0 (the caller then resets the dependent lines).
    pub(super) fn expand_or_add(
        &mut self,
        level: usize,
        key: StrId,
        ev: DerivedEvent,
        scope: i64,
        corr: i64,
    ) -> bool {
        if self.last.len() <= level {
            self.last.resize(level + 1, None);
        }
        if let Some(last) = self.last[level]
            && last.key == key
            && last.group == ev.group_id
            && (scope == NO_VALUE || last.scope == NO_VALUE || last.scope == scope)
            && last.corr == corr
            && (!self.gap_rule || ev.group_id != NO_GROUP || {
                let o = &self.events[last.idx];
                o.start.saturating_add(o.dur.saturating_mul(3)) >= ev.start
            })
        {
            let e = &mut self.events[last.idx];
            let end = (ev.start + ev.dur).max(e.start + e.dur);
            e.dur = end - e.start;
            return false;
        }
        self.reset_from(level);
        self.last[level] = Some(Last {
            idx: self.events.len(),
            key,
            group: ev.group_id,
            scope,
            corr,
        });
        self.events.push(ev);
        level == 0
    }

    /// The multi-level form (`ExpandOrAddEvents`): each level in turn with its scope range id
    /// (when `scopes` has one per level), then levels deeper than `levels` are closed. Returns
    /// true when level 0 started a new event.
    pub(super) fn expand_or_add_levels(
        &mut self,
        levels: &[(StrId, DerivedEvent)],
        scopes: &[i64],
    ) -> bool {
        if levels.is_empty() {
            return false;
        }
        let mut new0 = false;
        for (i, &(key, ev)) in levels.iter().enumerate() {
            let scope = scopes.get(i).copied().unwrap_or(NO_VALUE);
            new0 |= self.expand_or_add(i, key, ev, scope, NO_VALUE);
        }
        self.reset_from(levels.len());
        new0
    }

    /// The line, events sorted by (start asc, duration desc).
    pub(super) fn finish(mut self) -> DerivedLine {
        self.events
            .sort_by(|a, b| a.start.cmp(&b.start).then(b.dur.cmp(&a.dur)));
        DerivedLine {
            kind: self.kind,
            from: self.from,
            events: self.events,
            launch: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_event_stays_compact() {
        // one record per GPU event of a plane is alive during derivation
        assert!(std::mem::size_of::<DevEvent>() <= 88);
        assert_eq!(std::mem::size_of::<DevRec>(), 48);
        assert_eq!(std::mem::size_of::<DerivedEvent>(), 32);
    }

    #[test]
    fn gap_rule_splits_ungrouped_events_far_apart() {
        let mut s = Interner::new();
        let k = s.intern("op");
        let ev = |start, dur, group_id| DerivedEvent {
            start,
            dur,
            name: k,
            long_name: StrId::EMPTY,
            group_id,
        };
        let run = |gap: bool| {
            let mut b = LineBuilder::new(DerivedKind::FrameworkOps, None);
            if gap {
                b = b.with_gap_rule();
            }
            for e in [
                ev(0, 10, NO_GROUP),
                ev(30, 10, NO_GROUP), // starts by end + 2 × duration: extends to [0, 40)
                ev(121, 1, NO_GROUP), // 40 + 2 × 40 < 121: a new event
                ev(1000, 1, 7),       // another group: a new event
                ev(5000, 1, 7),       // same group: extends, whatever the gap
            ] {
                b.expand_or_add(0, k, e, NO_VALUE, NO_VALUE);
            }
            let line = b.finish();
            line.events
                .iter()
                .map(|e| (e.start, e.dur))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(true), vec![(0, 40), (121, 1), (1000, 4001)]);
        // A GPU plane extends whenever key and group agree.
        assert_eq!(run(false), vec![(0, 122), (1000, 4001)]);
    }
}
