//! Row grouping: which row an event adds to ([`GroupBy`], `ProfilerStep#N` → `ProfilerStep*`,
//! unified XPlane names, `hlo_op` / `tf_op` stats), keyed by (kind, group) so kinds never
//! merge, without per-event allocation ([`Rows`]).

use super::kind::{self, EventKind};
use super::{StatRow, StatsOptions, StatsTable, tree};
use crate::analysis::unified::{UnifiedKey, UnifiedKeys, ValKey, render};
use crate::model::{Capture, Ps, StrId};
use rustc_hash::FxHashMap;

/// Row name of the events a grouping finds no value for (no category, no `hlo_op` stat, ...):
/// they are counted in this row, not dropped.
pub const NO_GROUP: &str = "(none)";

/// Row name of events whose name is empty (an XPlane event metadata without a name, a derived
/// line's event with an empty op name): every row says what it holds.
pub const UNNAMED: &str = "(unnamed)";

/// What one row groups.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupBy {
    /// The event name (`ProfilerStep#N` → `ProfilerStep*`; unified names with
    /// [`StatsOptions::unified`]).
    #[default]
    Name,
    /// The event kind ([`EventKind`]): one row per kind.
    Kind,
    /// The raw category string.
    Category,
    /// The XPlane `hlo_op` stat.
    HloOp,
    /// The XPlane `tf_op` stat (old captures: `level 0`).
    TfOp,
}

impl GroupBy {
    /// The groupings the explorer's table cycles through, in order ([`GroupBy::Kind`] is the
    /// command line's `--group-by kind`; the table shows kinds as a column).
    pub const ALL: [GroupBy; 4] = [
        GroupBy::Name,
        GroupBy::Category,
        GroupBy::HloOp,
        GroupBy::TfOp,
    ];

    /// Command-line / display name.
    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Name => "name",
            GroupBy::Kind => "kind",
            GroupBy::Category => "category",
            GroupBy::HloOp => "hlo_op",
            GroupBy::TfOp => "tf_op",
        }
    }

    /// The next grouping (wraps).
    pub fn next(self) -> GroupBy {
        match GroupBy::ALL.iter().position(|&g| g == self) {
            Some(i) => GroupBy::ALL[(i + 1) % GroupBy::ALL.len()],
            None => GroupBy::Name,
        }
    }
}

/// Device figures (self, total) of an event of `kind` from its tree figures: a device
/// activity is its own device time (torch: `device_time_total` of a CUDA event is its
/// duration); a device annotation spans device time it did not launch, so it only has a total.
#[inline]
pub(crate) fn device_figures(kind: EventKind, dur: Ps, self_dev: Ps, total_dev: Ps) -> (Ps, Ps) {
    match kind {
        EventKind::Kernel | EventKind::Memcpy | EventKind::Memset => (dur, dur),
        EventKind::GpuAnnotation => (0, dur),
        _ => (self_dev, total_dev),
    }
}

/// Row-group name of an event name: `ProfilerStep#N` → `ProfilerStep*` (torch `_rewrite_name`).
pub fn group_name(name: &str) -> &str {
    if name.starts_with("ProfilerStep#") {
        "ProfilerStep*"
    } else {
        name
    }
}

pub(crate) const NONE: u32 = u32::MAX;

/// Maps events to row indices by the grouping, without per-event allocation.
pub(crate) struct Rows<'c> {
    c: &'c Capture,
    group: GroupBy,
    ukeys: Option<UnifiedKeys>,
    /// Stat keys read by `hlo_op` / `tf_op` grouping (absent from the capture: `None`).
    stat_keys: [Option<StrId>; 2],
    /// Row of a name string id (for the kind of the row it points to).
    by_str: Vec<u32>,
    by_str_kind: FxHashMap<(EventKind, StrId), u32>,
    /// Rows of a name, one per kind it occurs with.
    by_name: FxHashMap<String, Vec<u32>>,
    /// The [`GroupBy::Kind`] row and the [`NO_GROUP`] row of each kind.
    kind_rows: [u32; EventKind::ALL.len()],
    none_rows: [u32; EventKind::ALL.len()],
    by_unified: FxHashMap<(EventKind, UnifiedKey), u32>,
    by_val: FxHashMap<(EventKind, ValKey), u32>,
    /// Kinds with events per track ([`EventKind::bit`]).
    pub(crate) masks: Vec<u16>,
    pub(crate) rows: Vec<StatRow>,
    /// `hlo_op` grouping, the track being read: `None` off a TPU plane; on a TPU plane
    /// `Some(true)` for its `XLA Ops` line (each event is an HLO op, timed by its
    /// `device_duration_ps`, as XProf's `hlo_stats`), `Some(false)` for its other lines.
    tpu_ops: Option<bool>,
    /// `device_duration_ps` (absent from the capture: `None`).
    k_dev_dur: Option<StrId>,
}

impl<'c> Rows<'c> {
    /// Empty rows for `opts`' grouping.
    pub(crate) fn new(c: &'c Capture, opts: &StatsOptions) -> Self {
        let stat_keys = match opts.group {
            GroupBy::HloOp => [c.strings.lookup("hlo_op"), None],
            GroupBy::TfOp => [c.strings.lookup("tf_op"), c.strings.lookup("level 0")],
            _ => [None, None],
        };
        Rows {
            c,
            group: opts.group,
            ukeys: (opts.unified && opts.group == GroupBy::Name).then(|| UnifiedKeys::new(c)),
            stat_keys,
            by_str: Vec::new(),
            by_str_kind: FxHashMap::default(),
            by_name: FxHashMap::default(),
            kind_rows: [NONE; EventKind::ALL.len()],
            none_rows: [NONE; EventKind::ALL.len()],
            by_unified: FxHashMap::default(),
            by_val: FxHashMap::default(),
            masks: vec![0; c.tracks.len()],
            rows: Vec::new(),
            tpu_ops: None,
            k_dev_dur: c.strings.lookup("device_duration_ps"),
        }
    }

    /// Notes which track the next slices come from (see `tpu_ops`).
    pub(crate) fn begin_track(&mut self, t: u32) {
        let c = self.c;
        self.tpu_ops = (self.group == GroupBy::HloOp)
            .then(|| {
                let tr = c.tracks.get(t as usize)?;
                let p = c.processes.get(tr.process as usize)?;
                (p.kind == crate::model::ProcessKind::Tpu).then(|| c.track_name(t) == "XLA Ops")
            })
            .flatten();
    }

    /// True on a TPU plane's `XLA Ops` line under `hlo_op` grouping: each op counts on its own,
    /// its self time is its time (XProf's `hlo_stats`: ops of that line do not nest).
    pub(crate) fn flat_track(&self) -> bool {
        self.tpu_ops == Some(true)
    }

    /// The duration slice `i` counts with: on a TPU plane's `XLA Ops` line under `hlo_op`
    /// grouping its `device_duration_ps` when it has one, else `dur`.
    #[inline]
    pub(crate) fn counted_dur(&self, i: usize, dur: crate::model::Ps) -> crate::model::Ps {
        if self.tpu_ops != Some(true) {
            return dur;
        }
        let (c, args) = (self.c, self.c.slices.args[i]);
        let Some(key) = self.k_dev_dur.filter(|_| args.is_some()) else {
            return dur;
        };
        match c.args.get(args, key, &c.strings) {
            Some(crate::model::ArgValue::I64(v)) if v >= 0 => v,
            Some(crate::model::ArgValue::U64(v)) => i64::try_from(v).unwrap_or(dur),
            _ => dur,
        }
    }

    fn named(&mut self, kind: EventKind, name: &str) -> u32 {
        let rows = &self.rows;
        if let Some(&r) = self.by_name.get(name).and_then(|v| {
            v.iter()
                .find(|&&r| rows.get(r as usize).is_some_and(|x| x.kind == kind))
        }) {
            return r;
        }
        let r = self.rows.len() as u32;
        self.rows.push(StatRow {
            name: name.to_string(),
            kind,
            count: 0,
            total_ps: 0,
            self_ps: 0,
            min_ps: None,
            max_ps: None,
            self_dev_ps: 0,
            dev_total_ps: 0,
        });
        self.by_name.entry(name.to_string()).or_default().push(r);
        r
    }

    /// The row of `kind` for [`GroupBy::Kind`] (`none`: false) or its [`NO_GROUP`] row.
    #[inline]
    fn fixed(&mut self, kind: EventKind, none: bool) -> u32 {
        let k = kind as usize;
        let cached = if none {
            self.none_rows[k]
        } else {
            self.kind_rows[k]
        };
        if cached != NONE {
            return cached;
        }
        let r = self.named(kind, if none { NO_GROUP } else { kind.label() });
        if none {
            self.none_rows[k] = r;
        } else {
            self.kind_rows[k] = r;
        }
        r
    }

    #[inline]
    fn of_name(&mut self, kind: EventKind, name: StrId) -> u32 {
        let i = name.index();
        if let Some(&r) = self.by_str.get(i)
            && r != NONE
        {
            if self.rows.get(r as usize).is_some_and(|x| x.kind == kind) {
                return r;
            }
            if let Some(&r) = self.by_str_kind.get(&(kind, name)) {
                return r;
            }
        }
        let c = self.c;
        let text = c.strings.get(name);
        let r = match self.group {
            GroupBy::Name if text.is_empty() => self.named(kind, UNNAMED),
            GroupBy::Name => self.named(kind, group_name(text)),
            _ if text.is_empty() => self.fixed(kind, true),
            _ => self.named(kind, text),
        };
        if i >= self.by_str.len() {
            self.by_str.resize(i + 1, NONE);
        }
        if self.by_str[i] == NONE {
            self.by_str[i] = r;
        } else {
            self.by_str_kind.insert((kind, name), r);
        }
        r
    }

    fn of_unified(&mut self, kind: EventKind, k: UnifiedKey) -> u32 {
        if let Some(&r) = self.by_unified.get(&(kind, k)) {
            return r;
        }
        let r = self.named(kind, &render(self.c, k));
        self.by_unified.insert((kind, k), r);
        r
    }

    fn of_val(&mut self, kind: EventKind, v: ValKey) -> u32 {
        match v {
            ValKey::None => self.fixed(kind, true),
            ValKey::S(s) => self.of_name(kind, s),
            v => {
                if let Some(&r) = self.by_val.get(&(kind, v)) {
                    return r;
                }
                let mut text = String::new();
                v.write(self.c, &mut text);
                let r = self.named(kind, &text);
                self.by_val.insert((kind, v), r);
                r
            }
        }
    }

    /// The value of the grouping stat of slice `i` (the first of the stat keys present).
    fn stat(&self, i: usize) -> ValKey {
        let (c, args) = (self.c, self.c.slices.args[i]);
        if !args.is_some() {
            return ValKey::None;
        }
        for key in self.stat_keys.into_iter().flatten() {
            if let Some(v) = c.args.get(args, key, &c.strings) {
                return ValKey::of(Some(v));
            }
        }
        ValKey::None
    }

    /// Row of slice `i` (on a device process when `device_track`).
    #[inline]
    pub(crate) fn of_slice(&mut self, i: usize, device_track: bool) -> u32 {
        let s = &self.c.slices;
        let kind = EventKind::of_event(s.kind(i), device_track);
        match self.group {
            GroupBy::Name => match self.ukeys {
                Some(k) if device_track || s.kind(i).is_device() => {
                    self.of_unified(kind, k.key(self.c, s.name[i], s.args[i]))
                }
                _ => self.of_name(kind, s.name[i]),
            },
            GroupBy::Kind => self.fixed(kind, false),
            GroupBy::Category => self.of_name(kind, s.cat(i)),
            // XPlane stat groupings: one row per value, whatever the category says.
            // A TPU plane's XLA ops carry no `hlo_op`: the event is the op. Its other lines
            // (modules, async transfers, TraceMe) have no HLO op row (XProf's `hlo_stats`).
            GroupBy::HloOp if self.tpu_ops == Some(true) => {
                self.of_name(EventKind::Other, s.name[i])
            }
            GroupBy::HloOp if self.tpu_ops == Some(false) => self.fixed(EventKind::Other, true),
            GroupBy::HloOp | GroupBy::TfOp => {
                let v = self.stat(i);
                self.of_val(EventKind::Other, v)
            }
        }
    }

    /// Row of instant `i`: kind [`EventKind::Instant`], grouped by name or category.
    pub(crate) fn of_instant(&mut self, i: usize) -> u32 {
        let inst = &self.c.instants;
        let kind = EventKind::Instant;
        match self.group {
            GroupBy::Name => self.of_name(kind, inst.name[i]),
            GroupBy::Kind => self.fixed(kind, false),
            GroupBy::Category => self.of_name(kind, inst.cat[i]),
            GroupBy::HloOp | GroupBy::TfOp => self.fixed(kind, true),
        }
    }

    /// Row of aggregated (untimed, argument-less) event `name` on a device process or not.
    fn of_aggregated(&mut self, name: StrId, device_track: bool) -> u32 {
        let kind = EventKind::of_event(crate::model::Category::Other, device_track);
        match (self.group, self.ukeys) {
            (GroupBy::Name, Some(k)) if device_track => {
                self.of_unified(kind, k.key(self.c, name, crate::model::ArgsRef::NONE))
            }
            (GroupBy::Name, _) => self.of_name(kind, name),
            (GroupBy::Kind, _) => self.fixed(kind, false),
            _ => self.fixed(kind, true),
        }
    }

    /// Notes that track `t` has events of row `r`'s kind.
    #[inline]
    pub(crate) fn mark(&mut self, t: u32, r: u32) {
        if let (Some(m), Some(row)) = (self.masks.get_mut(t as usize), self.rows.get(r as usize)) {
            *m |= row.kind.bit();
        }
    }

    /// The kind bit of row `r` (0 for no row).
    #[inline]
    pub(crate) fn kind_bit(&self, r: u32) -> u16 {
        self.rows.get(r as usize).map_or(0, |x| x.kind.bit())
    }

    /// Notes that track `t` has events of the kinds in `bits`.
    pub(crate) fn mark_bits(&mut self, t: u32, bits: u16) {
        if let Some(m) = self.masks.get_mut(t as usize) {
            *m |= bits;
        }
    }

    /// Adds one nested event, final ([`tree::Done`]); a merged (removed) event adds nothing.
    #[inline]
    pub(crate) fn add_done(&mut self, d: &tree::Done) {
        if d.removed {
            return;
        }
        if let Some(row) = self.rows.get_mut(d.row as usize) {
            let (self_dev, total_dev) = device_figures(row.kind, d.dur, d.self_dev, d.total_dev);
            let dur = d.dur;
            row.count += 1;
            row.total_ps += dur;
            row.self_ps += d.self_ps;
            row.self_dev_ps += self_dev;
            row.dev_total_ps += total_dev;
            row.min_ps = Some(row.min_ps.map_or(dur, |m| m.min(dur)));
            row.max_ps = Some(row.max_ps.map_or(dur, |m| m.max(dur)));
        }
    }

    /// The kind of row `r`.
    #[inline]
    pub(crate) fn kind_of(&self, r: u32) -> EventKind {
        self.rows
            .get(r as usize)
            .map_or(EventKind::Other, |x| x.kind)
    }

    /// Counts one instant event of row `r` (no duration: min / max stay unset).
    #[inline]
    pub(crate) fn add_instant(&mut self, r: u32) {
        if let Some(row) = self.rows.get_mut(r as usize) {
            row.count += 1;
        }
    }

    /// Adds `count` timed events (Σ duration, Σ self, min and max duration, Σ self and total
    /// device time) to row `r`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add_counted(
        &mut self,
        r: u32,
        count: u64,
        total: Ps,
        self_ps: Ps,
        min: Ps,
        max: Ps,
        dev: (Ps, Ps),
    ) {
        if let Some(row) = self.rows.get_mut(r as usize) {
            row.count += count;
            row.total_ps += total;
            row.self_ps += self_ps;
            row.self_dev_ps += dev.0;
            row.dev_total_ps += dev.1;
            row.min_ps = Some(row.min_ps.map_or(min, |m| m.min(min)));
            row.max_ps = Some(row.max_ps.map_or(max, |m| m.max(max)));
        }
    }

    /// Adds another partial table (of the same capture and grouping) row by row, by kind and
    /// name; rows new to `self` are appended in `other`'s order.
    pub(crate) fn merge(&mut self, other: Rows<'_>) {
        for (m, o) in self.masks.iter_mut().zip(&other.masks) {
            *m |= o;
        }
        for o in other.rows {
            let r = self.named(o.kind, &o.name);
            if let Some(row) = self.rows.get_mut(r as usize) {
                row.count += o.count;
                row.total_ps += o.total_ps;
                row.self_ps += o.self_ps;
                row.self_dev_ps += o.self_dev_ps;
                row.dev_total_ps += o.dev_total_ps;
                row.min_ps = match (row.min_ps, o.min_ps) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                row.max_ps = match (row.max_ps, o.max_ps) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
            }
        }
    }

    /// Adds the aggregated (untimed) events of the selected tracks — only for whole-capture
    /// tables without a category filter (they have no category and no start) — and returns the
    /// table with its per-kind totals.
    pub(crate) fn finish(mut self, opts: &StatsOptions) -> StatsTable {
        let c = self.c;
        if opts.cats.is_none() && opts.range.is_none() {
            for a in &c.aggregated {
                if !super::track_selected(c, a.track, opts) {
                    continue;
                }
                let r = self.of_aggregated(a.name, super::is_device_process(c, a.track));
                self.mark(a.track, r);
                if let Some(row) = self.rows.get_mut(r as usize) {
                    row.count += a.occurrences;
                    row.total_ps += a.dur;
                    row.self_ps += a.dur;
                }
            }
        }
        // A row whose only events merged into a parent outside the range has nothing.
        self.rows
            .retain(|r| r.count > 0 || r.self_ps != 0 || r.self_dev_ps != 0);
        let kinds = kind::totals(c, &self.rows, &self.masks);
        let rows = self.rows;
        let total_self_ps = rows.iter().map(|r| r.self_ps).sum();
        StatsTable {
            rows,
            total_self_ps,
            kinds,
        }
    }
}
