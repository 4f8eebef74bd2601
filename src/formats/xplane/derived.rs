//! Derived timelines of GPU planes (design analysis.md §d, after TensorFlow's
//! `derived_timeline.cc`): `Steps`, `XLA Modules`, `XLA Ops`, `Framework Name Scope`,
//! `Framework Ops`, `Source code` from the device events' stats, and `Launch Stats` from host
//! launch events. Pure functions over compact event records.

use crate::model::{Interner, Ps, StrId};
use rustc_hash::FxHashMap;

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
struct LineBuilder {
    kind: DerivedKind,
    events: Vec<DerivedEvent>,
    last: Vec<Option<Last>>,
}

impl LineBuilder {
    fn new(kind: DerivedKind) -> Self {
        LineBuilder {
            kind,
            events: Vec::new(),
            last: Vec::new(),
        }
    }

    fn reset_from(&mut self, level: usize) {
        for l in self.last.iter_mut().skip(level) {
            *l = None;
        }
    }

    /// Merges `ev` into the previous event of `level` when it has the same key and group and
    /// `low` is not yet recorded there; else starts a new event. Returns true when a new event
    /// was added at level 0 (the caller then resets dependent lines).
    fn expand_or_add(
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
    fn expand_or_add_levels(
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
    fn finish(mut self) -> DerivedLine {
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

/// Derives `Steps`, `XLA Modules`, `XLA Ops`, `Framework Name Scope`, `Framework Ops` and
/// `Source code` from one GPU plane's events. Empty lines are left out. Steps carry no step
/// name here: host planes may still be loading; the loader adds it as the `step_name` arg.
pub fn derive_device_lines(
    events: &mut [DevEvent],
    strings: &mut impl NameTable,
) -> Vec<DerivedLine> {
    derive_device_runs(&mut [events], strings)
}

/// [`derive_device_lines`] over the records of several lines, each in its own vector (no
/// concatenation: the runs are sorted one by one and merged by start, longer first, then line
/// index, which is the order one stable sort of the concatenation would give).
pub fn derive_device_runs<R: AsMut<[DevEvent]>>(
    runs: &mut [R],
    strings: &mut impl NameTable,
) -> Vec<DerivedLine> {
    use std::cmp::Reverse;
    type Key = (Ps, Reverse<Ps>, u16);
    let key = |e: &DevEvent| -> Key { (e.start, Reverse(e.dur), e.line) };
    for r in runs.iter_mut() {
        // Stable and adaptive: a line's records are usually in order already.
        r.as_mut().sort_by_key(key);
    }
    let runs: Vec<&[DevEvent]> = runs.iter_mut().map(|r| &*r.as_mut()).collect();
    let mut d = Deriver::default();
    if let [one] = runs[..] {
        for e in one {
            d.push(e, strings);
        }
    } else if runs.len() <= 8 {
        // Few lines (GPU streams): pick the smallest head by a linear scan.
        let mut pos = vec![0usize; runs.len()];
        loop {
            let mut best: Option<(usize, Key)> = None;
            for (k, r) in runs.iter().enumerate() {
                if let Some(e) = r.get(pos[k]) {
                    let kk = key(e);
                    if best.is_none_or(|(_, b)| kk < b) {
                        best = Some((k, kk));
                    }
                }
            }
            let Some((k, _)) = best else { break };
            d.push(&runs[k][pos[k]], strings);
            pos[k] += 1;
        }
    } else {
        let mut heap = std::collections::BinaryHeap::with_capacity(runs.len());
        for (k, r) in runs.iter().enumerate() {
            if let Some(e) = r.first() {
                heap.push(Reverse((key(e), k, 0usize)));
            }
        }
        while let Some(Reverse((_, k, i))) = heap.pop() {
            let e = &runs[k][i];
            d.push(e, strings);
            if let Some(n) = runs[k].get(i + 1) {
                heap.push(Reverse((key(n), k, i + 1)));
            }
        }
    }
    d.finish()
}

/// The state of one plane's derivation, fed its events in time order.
struct Deriver {
    steps: LineBuilder,
    modules: LineBuilder,
    ops: LineBuilder,
    scope: LineBuilder,
    fw: LineBuilder,
    source: LineBuilder,
    group_names: FxHashMap<i64, StrId>,
    levels: Vec<(StrId, DerivedEvent)>,
    // Split names cached per interned op string (no per-event allocation).
    op_levels: FxHashMap<StrId, Vec<StrId>>,
    tf_ops: FxHashMap<StrId, (Vec<StrId>, StrId)>,
    buf: String,
}

impl Default for Deriver {
    fn default() -> Self {
        Deriver {
            steps: LineBuilder::new(DerivedKind::Steps),
            modules: LineBuilder::new(DerivedKind::XlaModules),
            ops: LineBuilder::new(DerivedKind::XlaOps),
            scope: LineBuilder::new(DerivedKind::NameScope),
            fw: LineBuilder::new(DerivedKind::FrameworkOps),
            source: LineBuilder::new(DerivedKind::Source),
            group_names: FxHashMap::default(),
            levels: Vec::new(),
            op_levels: FxHashMap::default(),
            tf_ops: FxHashMap::default(),
            buf: String::new(),
        }
    }
}

impl Deriver {
    fn push(&mut self, e: &DevEvent, strings: &mut impl NameTable) {
        let base = DerivedEvent {
            start: e.start,
            dur: e.dur,
            name: StrId::EMPTY,
            long_name: StrId::EMPTY,
            group_id: e.group().unwrap_or(NO_GROUP),
        };
        if let Some(g) = e.group() {
            let buf = &mut self.buf;
            let name = *self.group_names.entry(g).or_insert_with(|| {
                use std::fmt::Write;
                buf.clear();
                let _ = write!(buf, "{g}");
                strings.intern(buf)
            });
            let ev = DerivedEvent { name, ..base };
            if self.steps.expand_or_add(0, name, ev, StrId::EMPTY, true) {
                // Steps → XLA Modules → {Name Scope → Ops, XLA Ops}
                for l in [
                    &mut self.modules,
                    &mut self.ops,
                    &mut self.scope,
                    &mut self.fw,
                ] {
                    l.reset_from(0);
                }
            }
        }
        if !e.kernel {
            return;
        }
        if e.hlo_module != StrId::EMPTY {
            let ev = DerivedEvent {
                name: e.hlo_module,
                ..base
            };
            if self
                .modules
                .expand_or_add(0, e.hlo_module, ev, StrId::EMPTY, false)
            {
                for l in [&mut self.ops, &mut self.scope, &mut self.fw] {
                    l.reset_from(0);
                }
            }
        }
        if e.hlo_op != StrId::EMPTY {
            let parts = self.op_levels.entry(e.hlo_op).or_insert_with(|| {
                let full = strings.text(e.hlo_op);
                full.split("::")
                    .filter(|p| !p.is_empty())
                    .map(|p| strings.intern(p))
                    .collect()
            });
            self.levels.clear();
            self.levels.extend(
                parts
                    .iter()
                    .map(|&id| (id, DerivedEvent { name: id, ..base })),
            );
            self.ops
                .expand_or_add_levels(&self.levels, StrId::EMPTY, true);
        }
        if e.tf_op != StrId::EMPTY {
            let (scopes, ty) = self.tf_ops.entry(e.tf_op).or_insert_with(|| {
                let full = strings.text(e.tf_op);
                let (name, ty) = parse_tf_op(&full);
                let mut parts: Vec<StrId> = name
                    .split('/')
                    .filter(|p| !p.is_empty())
                    .map(|p| strings.intern(p))
                    .collect();
                parts.pop();
                (parts, strings.intern(ty))
            });
            let ty = *ty;
            self.levels.clear();
            self.levels.extend(
                scopes
                    .iter()
                    .map(|&id| (id, DerivedEvent { name: id, ..base })),
            );
            if self.scope.expand_or_add_levels(&self.levels, e.name, true) {
                self.fw.reset_from(0);
            }
            let ev = DerivedEvent {
                name: ty,
                long_name: if ty == e.tf_op { StrId::EMPTY } else { e.tf_op },
                ..base
            };
            self.fw.expand_or_add(0, e.tf_op, ev, e.name, true);
        }
        if e.source != StrId::EMPTY {
            let ev = DerivedEvent {
                name: e.source,
                ..base
            };
            self.source
                .expand_or_add(0, e.source, ev, StrId::EMPTY, false);
        }
    }

    fn finish(self) -> Vec<DerivedLine> {
        [
            self.steps,
            self.modules,
            self.ops,
            self.scope,
            self.fw,
            self.source,
        ]
        .into_iter()
        .map(LineBuilder::finish)
        .filter(|l| !l.events.is_empty())
        .collect()
    }
}

/// One host launch event (`DeriveEventsFromHostTrace` input).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// `device_id` stat.
    pub device: i64,
    /// `group_id` stat.
    pub group: i64,
    /// Start, ps.
    pub start: Ps,
    /// Duration, ps.
    pub dur: Ps,
}

/// Per device id, one `Launch Stats` event per group: span = hull of the launches, with
/// `num_launches`, max and average launch time in µs.
pub fn derive_launch_stats(
    launches: &[Launch],
    strings: &mut Interner,
    step_names: &FxHashMap<i64, StrId>,
) -> Vec<(i64, DerivedLine)> {
    #[derive(Default)]
    struct Acc {
        lo: Ps,
        hi: Ps,
        n: u64,
        max: Ps,
        total: i128,
    }
    let mut by: FxHashMap<(i64, i64), Acc> = FxHashMap::default();
    for l in launches {
        let a = by.entry((l.device, l.group)).or_insert(Acc {
            lo: l.start,
            hi: l.start + l.dur,
            ..Acc::default()
        });
        a.lo = a.lo.min(l.start);
        a.hi = a.hi.max(l.start + l.dur);
        a.n += 1;
        a.max = a.max.max(l.dur);
        a.total += i128::from(l.dur);
    }
    let mut keys: Vec<(i64, i64)> = by.keys().copied().collect();
    keys.sort_unstable();
    let mut out: Vec<(i64, DerivedLine)> = Vec::new();
    for (dev, group) in keys {
        let Some(a) = by.get(&(dev, group)) else {
            continue;
        };
        let label = match step_names.get(&group) {
            Some(&s) => strings.get(s).to_string(),
            None => group.to_string(),
        };
        let name = strings.intern(&format!("Launch Stats for {label}"));
        let avg = (a.total / i128::from(a.n.max(1))) as f64 / 1e6;
        let ev = DerivedEvent {
            start: a.lo,
            dur: a.hi - a.lo,
            name,
            long_name: StrId::EMPTY,
            group_id: group,
        };
        let vals = (a.n, a.max as f64 / 1e6, avg);
        match out.last_mut() {
            Some((d, line)) if *d == dev => {
                line.events.push(ev);
                line.launch.push(vals);
            }
            _ => out.push((
                dev,
                DerivedLine {
                    kind: DerivedKind::LaunchStats,
                    events: vec![ev],
                    launch: vec![vals],
                },
            )),
        }
    }
    // Start order within each line (the builder then needs no sort).
    for (_, line) in &mut out {
        let mut pairs: Vec<(DerivedEvent, LaunchValues)> = line
            .events
            .iter()
            .copied()
            .zip(line.launch.iter().copied())
            .collect();
        pairs.sort_by(|a, b| a.0.start.cmp(&b.0.start).then(b.0.dur.cmp(&a.0.dur)));
        line.events = pairs.iter().map(|p| p.0).collect();
        line.launch = pairs.iter().map(|p| p.1).collect();
    }
    out
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

    fn ev(s: &mut Interner, start: Ps, dur: Ps, name: &str, group: Option<i64>) -> DevEvent {
        DevEvent {
            start,
            dur,
            name: s.intern(name),
            group_id: group.unwrap_or(0),
            grouped: group.is_some(),
            kernel: true,
            ..DevEvent::default()
        }
    }

    fn names(s: &Interner, l: &DerivedLine) -> Vec<(String, Ps, Ps)> {
        l.events
            .iter()
            .map(|e| (s.get(e.name).to_string(), e.start, e.dur))
            .collect()
    }

    #[test]
    fn merges_consecutive_ops_and_splits_levels() {
        let mut s = Interner::new();
        let (m, a, b) = (
            s.intern("jit_f"),
            s.intern("fusion::inner"),
            s.intern("dot"),
        );
        let mut evs = vec![
            DevEvent {
                hlo_module: m,
                hlo_op: a,
                ..ev(&mut s, 0, 10, "k1", Some(1))
            },
            DevEvent {
                hlo_module: m,
                hlo_op: a,
                ..ev(&mut s, 20, 10, "k2", Some(1))
            },
            DevEvent {
                hlo_module: m,
                hlo_op: b,
                ..ev(&mut s, 40, 5, "k3", Some(1))
            },
            DevEvent {
                hlo_module: m,
                hlo_op: b,
                ..ev(&mut s, 50, 5, "k3", Some(2))
            },
            // not a kernel: only the step line sees it
            DevEvent {
                hlo_module: m,
                hlo_op: b,
                kernel: false,
                ..ev(&mut s, 60, 5, "memcpy", Some(2))
            },
        ];
        let lines = derive_device_lines(&mut evs, &mut s);
        let get = |k| lines.iter().find(|l| l.kind == k).unwrap();
        assert_eq!(
            names(&s, get(DerivedKind::Steps)),
            vec![("1".into(), 0, 45), ("2".into(), 50, 15)]
        );
        // new step breaks the module merge
        assert_eq!(
            names(&s, get(DerivedKind::XlaModules)),
            vec![("jit_f".into(), 0, 45), ("jit_f".into(), 50, 5)]
        );
        assert_eq!(
            names(&s, get(DerivedKind::XlaOps)),
            vec![
                ("fusion".into(), 0, 30),
                ("inner".into(), 0, 30),
                ("dot".into(), 40, 5),
                ("dot".into(), 50, 5)
            ]
        );
        assert!(lines.iter().all(|l| l.kind != DerivedKind::FrameworkOps));
    }

    #[test]
    fn framework_ops_split_on_repeated_kernel() {
        let mut s = Interner::new();
        let op = s.intern("model/dense/MatMul:MatMul");
        let mut evs = vec![
            DevEvent {
                tf_op: op,
                ..ev(&mut s, 0, 10, "gemm", None)
            },
            DevEvent {
                tf_op: op,
                ..ev(&mut s, 10, 10, "bias", None)
            },
            DevEvent {
                tf_op: op,
                ..ev(&mut s, 20, 10, "gemm", None)
            },
        ];
        let lines = derive_device_lines(&mut evs, &mut s);
        let get = |k| lines.iter().find(|l| l.kind == k).unwrap();
        assert_eq!(
            names(&s, get(DerivedKind::FrameworkOps)),
            vec![("MatMul".into(), 0, 20), ("MatMul".into(), 20, 10)]
        );
        assert_eq!(get(DerivedKind::FrameworkOps).events[0].long_name, op);
        assert_eq!(
            names(&s, get(DerivedKind::NameScope)),
            vec![
                ("model".into(), 0, 20),
                ("dense".into(), 0, 20),
                ("model".into(), 20, 10),
                ("dense".into(), 20, 10)
            ]
        );
        assert_eq!(parse_tf_op("a/b/c"), ("a/b/c", "c"));
        assert_eq!(parse_tf_op("a/b:Conv[x]"), ("a/b", "Conv"));
    }

    #[test]
    fn launch_stats_per_device_and_group() {
        let mut s = Interner::new();
        let l = |device, group, start, dur| Launch {
            device,
            group,
            start,
            dur,
        };
        let out = derive_launch_stats(
            &[
                l(0, 7, 100, 2_000_000),
                l(0, 7, 5_000_000, 4_000_000),
                l(1, 7, 0, 1),
            ],
            &mut s,
            &FxHashMap::default(),
        );
        assert_eq!(out.len(), 2);
        let (d, line) = &out[0];
        assert_eq!(*d, 0);
        let e = line.events[0];
        assert_eq!((e.start, e.dur), (100, 9_000_000 - 100));
        assert_eq!(line.launch[0], (2, 4.0, 3.0));
        assert_eq!(s.get(e.name), "Launch Stats for 7");
        assert!(is_derived_line(DERIVED_MIN + 3, "x"));
        assert!(is_derived_line(5, "TensorFlow Ops"));
        assert!(!is_derived_line(5, "Stream #1"));
    }
}

#[cfg(test)]
mod merge_props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Deriving from per-line runs (linear merge for few lines, heap for many) equals
        /// deriving from the concatenation in line order.
        #[test]
        fn runs_equal_concatenation(
            evs in prop::collection::vec((0i64..40, 0i64..15, 0u16..12, 0u8..4, 0i64..3, any::<bool>()), 0..120),
        ) {
            let mut s = Interner::new();
            let ops = [s.intern("a::b"), s.intern("a::c"), s.intern("d"), StrId::EMPTY];
            let module = s.intern("jit_m");
            let mut runs: Vec<Vec<DevEvent>> = vec![Vec::new(); 12];
            for &(start, dur, line, op, group, kernel) in &evs {
                runs[usize::from(line)].push(DevEvent {
                    start,
                    dur,
                    name: ops[usize::from(op) % 3],
                    group_id: group,
                    grouped: group > 0,
                    hlo_op: ops[usize::from(op)],
                    hlo_module: module,
                    kernel,
                    line,
                    ..DevEvent::default()
                });
            }
            let mut all: Vec<DevEvent> = runs.concat();
            let want = derive_device_lines(&mut all, &mut s);
            let mut few: Vec<Vec<DevEvent>> = runs.iter().take(5).cloned().collect();
            let mut few_all: Vec<DevEvent> = few.concat();
            prop_assert_eq!(
                derive_device_runs(&mut few, &mut s),
                derive_device_lines(&mut few_all, &mut s)
            );
            prop_assert_eq!(derive_device_runs(&mut runs, &mut s), want);
        }
    }
}
