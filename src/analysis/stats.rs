//! Per-name statistics like torch's `key_averages()`: count, total, self, avg, min, max and the
//! share of all self time (analysis.md §a).
//!
//! Self time = duration − Σ durations of direct children, where children are found per track with
//! torch's containment rule ([`super::nesting`]) among the events kept by the category filter plus
//! the events of the optional "nesting-only" categories (which subtract from their parents but
//! get no row themselves). `ProfilerStep#N` rows group as `ProfilerStep*`. XPlane aggregated
//! (untimed) events add their occurrences and total duration (self = total, no min/max).

use super::nesting::ContainmentStack;
use super::unified::{UnifiedKey, UnifiedKeys, ValKey, render};
use crate::model::{Capture, Category, ProcessKind, Ps, StrId};
use regex::Regex;
use rustc_hash::FxHashMap;

/// Row name of the events a grouping finds no value for (no category, no `hlo_op` stat, ...):
/// they are counted in this row, not dropped.
pub const NO_GROUP: &str = "(none)";

/// What one row groups.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupBy {
    /// The event name (`ProfilerStep#N` → `ProfilerStep*`; unified names with
    /// [`StatsOptions::unified`]).
    #[default]
    Name,
    /// The raw category string.
    Category,
    /// The XPlane `hlo_op` stat.
    HloOp,
    /// The XPlane `tf_op` stat (old captures: `level 0`).
    TfOp,
}

impl GroupBy {
    /// Every grouping, in the order the view cycles through them.
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
            GroupBy::Category => "category",
            GroupBy::HloOp => "hlo_op",
            GroupBy::TfOp => "tf_op",
        }
    }

    /// The next grouping (wraps).
    pub fn next(self) -> GroupBy {
        let i = GroupBy::ALL.iter().position(|&g| g == self).unwrap_or(0);
        GroupBy::ALL[(i + 1) % GroupBy::ALL.len()]
    }
}

/// Which events a stats table covers and how they are named.
#[derive(Clone, Debug, Default)]
pub struct StatsOptions {
    /// Categories aggregated (raw `cat` string, one of its comma-separated parts, or
    /// [`Category::canonical`]); `None` = every slice.
    pub cats: Option<Vec<String>>,
    /// Extra categories that take part in nesting (they reduce their parent's self time) without
    /// rows of their own, e.g. `python_function` to reproduce `key_averages` with `with_stack`.
    pub nest_cats: Vec<String>,
    /// Keep only processes / planes whose name (or stable name) matches.
    pub plane: Option<Regex>,
    /// Keep only tracks / lines whose name (or stable name) matches.
    pub line: Option<Regex>,
    /// Group device events by the ejkernel unified name `hlo_module(program_id-scope_range_id)`.
    pub unified: bool,
    /// Only events that start inside `[from, to)` (ps) get counted; durations are not clipped,
    /// and every event still takes part in nesting, so self times are those of the whole
    /// capture. Aggregated (untimed) events are left out when a range is set.
    pub range: Option<(Ps, Ps)>,
    /// Row grouping ([`GroupBy::Name`] by default; `unified` only applies to it).
    pub group: GroupBy,
    /// Keep only this track.
    pub track: Option<u32>,
    /// Keep only the tracks of this process.
    pub process: Option<u32>,
}

/// One row: all events of one (grouped) name.
#[derive(Clone, Debug, PartialEq)]
pub struct StatRow {
    /// Group name.
    pub name: String,
    /// Number of events (aggregated events count their occurrences).
    pub count: u64,
    /// Σ duration, ps.
    pub total_ps: Ps,
    /// Σ self time, ps (may be negative when children overlap each other, as in torch).
    pub self_ps: Ps,
    /// Shortest timed event, ps (`None` when the row has only aggregated events).
    pub min_ps: Option<Ps>,
    /// Longest timed event, ps.
    pub max_ps: Option<Ps>,
}

impl StatRow {
    /// Mean duration, ps.
    pub fn avg_ps(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total_ps as f64 / self.count as f64
        }
    }
}

/// The statistics of one capture.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatsTable {
    /// Rows, unsorted (see [`sort_rows`]).
    pub rows: Vec<StatRow>,
    /// Σ self time over all rows, ps.
    pub total_self_ps: Ps,
}

impl StatsTable {
    /// Share of all self time of `row`, in percent.
    pub fn self_pct(&self, row: &StatRow) -> f64 {
        if self.total_self_ps == 0 {
            0.0
        } else {
            row.self_ps as f64 * 100.0 / self.total_self_ps as f64
        }
    }
}

/// Row order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SortKey {
    /// Self time, largest first.
    #[default]
    SelfTime,
    /// Total time, largest first.
    Total,
    /// Count, largest first.
    Count,
    /// Average duration, largest first.
    Avg,
    /// Name, ascending.
    Name,
}

/// Sorts rows by `key`; ties by name.
pub fn sort_rows(rows: &mut [StatRow], key: SortKey) {
    rows.sort_by(|a, b| {
        let o = match key {
            SortKey::SelfTime => b.self_ps.cmp(&a.self_ps),
            SortKey::Total => b.total_ps.cmp(&a.total_ps),
            SortKey::Count => b.count.cmp(&a.count),
            SortKey::Avg => b.avg_ps().total_cmp(&a.avg_ps()),
            SortKey::Name => std::cmp::Ordering::Equal,
        };
        o.then_with(|| a.name.cmp(&b.name))
    });
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

/// Category filter state per category `StrId`: 0 unknown, 1 aggregated, 2 nesting only, 3 out.
pub(crate) struct CatFilter<'a> {
    opts: &'a StatsOptions,
    memo: Vec<u8>,
}

impl<'a> CatFilter<'a> {
    /// A filter with an empty memo.
    pub(crate) fn new(opts: &'a StatsOptions) -> Self {
        CatFilter {
            opts,
            memo: Vec::new(),
        }
    }

    /// 1 aggregated, 2 nesting only, 3 out.
    pub(crate) fn class(&mut self, c: &Capture, cat: StrId, kind: Category) -> u8 {
        let i = cat.index();
        if i >= self.memo.len() {
            self.memo.resize(i + 1, 0);
        }
        // The memo is keyed by raw string; the enum is derived from it, so it is consistent.
        if self.memo[i] == 0 {
            let raw = c.strings.get(cat);
            let hit = |list: &[String]| {
                list.iter().any(|want| {
                    want == raw
                        || want == kind.canonical()
                        || raw.split(',').any(|p| p.trim() == want)
                })
            };
            self.memo[i] = match &self.opts.cats {
                None => 1,
                Some(l) if hit(l) => 1,
                _ if hit(&self.opts.nest_cats) => 2,
                _ => 3,
            };
        }
        self.memo[i]
    }
}

/// Maps events to row indices by the grouping, without per-event allocation.
pub(crate) struct Rows<'c> {
    c: &'c Capture,
    group: GroupBy,
    ukeys: Option<UnifiedKeys>,
    /// Stat keys read by `hlo_op` / `tf_op` grouping (absent from the capture: `None`).
    stat_keys: [Option<StrId>; 2],
    by_str: Vec<u32>,
    by_name: FxHashMap<String, u32>,
    by_unified: FxHashMap<UnifiedKey, u32>,
    by_val: FxHashMap<ValKey, u32>,
    none_row: u32,
    pub(crate) rows: Vec<StatRow>,
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
            by_name: FxHashMap::default(),
            by_unified: FxHashMap::default(),
            by_val: FxHashMap::default(),
            none_row: NONE,
            rows: Vec::new(),
        }
    }

    fn named(&mut self, name: &str) -> u32 {
        if let Some(&r) = self.by_name.get(name) {
            return r;
        }
        let r = self.rows.len() as u32;
        self.rows.push(StatRow {
            name: name.to_string(),
            count: 0,
            total_ps: 0,
            self_ps: 0,
            min_ps: None,
            max_ps: None,
        });
        self.by_name.insert(name.to_string(), r);
        r
    }

    fn none(&mut self) -> u32 {
        if self.none_row == NONE {
            self.none_row = self.named(NO_GROUP);
        }
        self.none_row
    }

    #[inline]
    fn of_name(&mut self, name: StrId) -> u32 {
        let i = name.index();
        if let Some(&r) = self.by_str.get(i)
            && r != NONE
        {
            return r;
        }
        let c = self.c;
        let text = c.strings.get(name);
        let r = match self.group {
            GroupBy::Name => self.named(group_name(text)),
            _ if text.is_empty() => self.none(),
            _ => self.named(text),
        };
        if i >= self.by_str.len() {
            self.by_str.resize(i + 1, NONE);
        }
        self.by_str[i] = r;
        r
    }

    fn of_unified(&mut self, k: UnifiedKey) -> u32 {
        if let Some(&r) = self.by_unified.get(&k) {
            return r;
        }
        let r = self.named(&render(self.c, k));
        self.by_unified.insert(k, r);
        r
    }

    fn of_val(&mut self, v: ValKey) -> u32 {
        match v {
            ValKey::None => self.none(),
            ValKey::S(s) => self.of_name(s),
            v => {
                if let Some(&r) = self.by_val.get(&v) {
                    return r;
                }
                let mut text = String::new();
                v.write(self.c, &mut text);
                let r = self.named(&text);
                self.by_val.insert(v, r);
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
        match self.group {
            GroupBy::Name => match self.ukeys {
                Some(k) if device_track || s.kind(i).is_device() => {
                    self.of_unified(k.key(self.c, s.name[i], s.args[i]))
                }
                _ => self.of_name(s.name[i]),
            },
            GroupBy::Category => self.of_name(s.cat(i)),
            GroupBy::HloOp | GroupBy::TfOp => {
                let v = self.stat(i);
                self.of_val(v)
            }
        }
    }

    /// Row of aggregated (untimed, argument-less) event `name` on a device process or not.
    fn of_aggregated(&mut self, name: StrId, device_track: bool) -> u32 {
        match (self.group, self.ukeys) {
            (GroupBy::Name, Some(k)) if device_track => {
                self.of_unified(k.key(self.c, name, crate::model::ArgsRef::NONE))
            }
            (GroupBy::Name, _) => self.of_name(name),
            _ => self.none(),
        }
    }

    /// Counts one timed event of row `r`.
    #[inline]
    pub(crate) fn add_timed(&mut self, r: u32, dur: Ps) {
        if let Some(row) = self.rows.get_mut(r as usize) {
            row.count += 1;
            row.total_ps += dur;
            row.min_ps = Some(row.min_ps.map_or(dur, |m| m.min(dur)));
            row.max_ps = Some(row.max_ps.map_or(dur, |m| m.max(dur)));
        }
    }

    /// Adds `count` timed events (Σ duration, Σ self, min and max duration) to row `r`.
    pub(crate) fn add_counted(
        &mut self,
        r: u32,
        count: u64,
        total: Ps,
        self_ps: Ps,
        min: Ps,
        max: Ps,
    ) {
        if let Some(row) = self.rows.get_mut(r as usize) {
            row.count += count;
            row.total_ps += total;
            row.self_ps += self_ps;
            row.min_ps = Some(row.min_ps.map_or(min, |m| m.min(min)));
            row.max_ps = Some(row.max_ps.map_or(max, |m| m.max(max)));
        }
    }

    /// Adds self time to row `r`.
    #[inline]
    pub(crate) fn add_self(&mut self, r: u32, self_ps: Ps) {
        if let Some(row) = self.rows.get_mut(r as usize) {
            row.self_ps += self_ps;
        }
    }

    /// Adds another partial table (of the same capture and grouping) row by row, by name; rows
    /// new to `self` are appended in `other`'s order.
    pub(crate) fn merge(&mut self, other: Rows<'_>) {
        for o in other.rows {
            let r = self.named(&o.name);
            if let Some(row) = self.rows.get_mut(r as usize) {
                row.count += o.count;
                row.total_ps += o.total_ps;
                row.self_ps += o.self_ps;
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
    /// table.
    pub(crate) fn finish(mut self, opts: &StatsOptions) -> StatsTable {
        let c = self.c;
        if opts.cats.is_none() && opts.range.is_none() {
            for a in &c.aggregated {
                if !track_selected(c, a.track, opts) {
                    continue;
                }
                let r = self.of_aggregated(a.name, is_device_process(c, a.track));
                if let Some(row) = self.rows.get_mut(r as usize) {
                    row.count += a.occurrences;
                    row.total_ps += a.dur;
                    row.self_ps += a.dur;
                }
            }
        }
        let rows = self.rows;
        let total_self_ps = rows.iter().map(|r| r.self_ps).sum();
        StatsTable {
            rows,
            total_self_ps,
        }
    }
}

/// True when the process / track pass the `--plane` / `--line` filters.
pub fn track_selected(c: &Capture, t: u32, opts: &StatsOptions) -> bool {
    let Some(tr) = c.tracks.get(t as usize) else {
        return false;
    };
    if opts.track.is_some_and(|want| want != t) || opts.process.is_some_and(|p| p != tr.process) {
        return false;
    }
    if let Some(re) = &opts.plane
        && !re.is_match(&c.process_name(tr.process))
        && !re.is_match(&c.process_stable_name(tr.process))
    {
        return false;
    }
    if let Some(re) = &opts.line
        && !re.is_match(&c.track_name(t))
        && !re.is_match(&c.track_stable_name(t))
    {
        return false;
    }
    true
}

/// True when track `t` belongs to a GPU / TPU / other accelerator process.
pub(crate) fn is_device_process(c: &Capture, t: u32) -> bool {
    c.tracks
        .get(t as usize)
        .and_then(|tr| c.processes.get(tr.process as usize))
        .is_some_and(|p| {
            matches!(
                p.kind,
                ProcessKind::Gpu | ProcessKind::Tpu | ProcessKind::Device
            )
        })
}

/// Computes the statistics table of a capture in one pass (the nesting and the aggregation
/// together). For repeated range queries see [`super::stats_index`].
pub fn compute(c: &Capture, opts: &StatsOptions) -> StatsTable {
    let mut cats = CatFilter::new(opts);
    let mut rows = Rows::new(c, opts);
    let s = &c.slices;
    // Stack payload: (row or NONE for nesting-only events, self-time accumulator).
    let mut stack: ContainmentStack<(u32, Ps)> = ContainmentStack::new();
    let mut closed: Vec<(u32, Ps)> = Vec::new();
    for (t, tr) in c.tracks.iter().enumerate() {
        let t = t as u32;
        if tr.slices.0 >= tr.slices.1 || !track_selected(c, t, opts) {
            continue;
        }
        let device_track = is_device_process(c, t);
        let (lo, hi) = (tr.slices.0 as usize, (tr.slices.1 as usize).min(s.len()));
        // With a range: start at the first slice starting in it (slices are sorted by start
        // within a track) and stop once past it and past the end of every counted slice.
        let (first, mut until) = match opts.range {
            Some((a, b)) => (lo + s.start[lo..hi].partition_point(|&st| st < a), b),
            None => (lo, Ps::MAX),
        };
        for i in first..hi {
            let (start, dur) = (s.start[i], s.dur[i]);
            if start >= until {
                break;
            }
            let in_range = opts.range.is_none_or(|(a, b)| start >= a && start < b);
            let class = match cats.class(c, s.cat(i), s.kind(i)) {
                1 if !in_range => 2,
                k => k,
            };
            if class == 1 && opts.range.is_some() {
                until = until.max(start + dur);
            }
            let row = match class {
                1 => rows.of_slice(i, device_track),
                2 => NONE,
                _ => continue,
            };
            if row != NONE {
                rows.add_timed(row, dur);
            }
            stack.push(
                start,
                start + dur,
                (row, dur),
                |d| closed.push(d),
                |p| p.1 -= dur,
            );
            for (r, sp) in closed.drain(..) {
                if r != NONE {
                    rows.add_self(r, sp);
                }
            }
        }
        stack.drain(|d| closed.push(d));
        for (r, sp) in closed.drain(..) {
            if r != NONE {
                rows.add_self(r, sp);
            }
        }
    }
    rows.finish(opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;
    use proptest::prelude::*;

    fn capture(events: &[(u32, i64, i64, &str, &str)]) -> Capture {
        let mut b = CaptureBuilder::new();
        let p = b.process(Key::Int(1));
        for &(tid, s, d, name, cat) in events {
            let t = b.track(p, Key::Int(i64::from(tid)), TrackKind::Thread);
            let n = b.intern(name);
            let c = b.intern(cat);
            b.add_slice(t, s, d, n, c, ArgsRef::NONE, 0);
        }
        b.finish(SourceInfo::default(), Format::Kineto)
    }

    fn row<'a>(t: &'a StatsTable, name: &str) -> &'a StatRow {
        t.rows.iter().find(|r| r.name == name).expect("row")
    }

    #[test]
    fn self_time_and_profiler_steps() {
        let c = capture(&[
            (1, 0, 100, "ProfilerStep#1", "user_annotation"),
            (1, 10, 30, "aten::mm", "cpu_op"),
            (1, 15, 5, "py", "python_function"),
            (1, 50, 20, "aten::mm", "cpu_op"),
            (1, 200, 50, "ProfilerStep#2", "user_annotation"),
            (2, 0, 10, "aten::mm", "Operator"),
        ]);
        let all = compute(&c, &StatsOptions::default());
        assert_eq!(row(&all, "ProfilerStep*").count, 2);
        assert_eq!(row(&all, "ProfilerStep*").self_ps, 100 - 30 - 20 + 50);
        assert_eq!(row(&all, "aten::mm").self_ps, 30 - 5 + 20 + 10);
        assert_eq!(all.total_self_ps, 150 + 10);
        let opts = StatsOptions {
            cats: Some(vec!["cpu_op".into(), "user_annotation".into()]),
            ..Default::default()
        };
        let t = compute(&c, &opts);
        assert!(t.rows.iter().all(|r| r.name != "py"));
        // legacy `Operator` matches `cpu_op`
        let mm = row(&t, "aten::mm");
        assert_eq!((mm.count, mm.total_ps, mm.self_ps), (3, 60, 60));
        assert_eq!((mm.min_ps, mm.max_ps), (Some(10), Some(30)));
        let opts = StatsOptions {
            nest_cats: vec!["python_function".into()],
            ..opts
        };
        let t = compute(&c, &opts);
        assert_eq!(row(&t, "aten::mm").self_ps, 55);
        assert!(t.rows.iter().all(|r| r.name != "py"));
    }

    #[test]
    fn track_filters_and_sorting() {
        let c = capture(&[
            (1, 0, 10, "a", "x"),
            (2, 0, 30, "b", "x"),
            (2, 40, 1, "c", "x"),
        ]);
        let opts = StatsOptions {
            line: Some(Regex::new("tid 2$").expect("regex")),
            ..Default::default()
        };
        let mut t = compute(&c, &opts);
        sort_rows(&mut t.rows, SortKey::Name);
        let names: Vec<&str> = t.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, vec!["b", "c"]);
        sort_rows(&mut t.rows, SortKey::SelfTime);
        assert_eq!(t.rows[0].name, "b");
        assert!((t.self_pct(&t.rows[0]) - 3000.0 / 31.0).abs() < 1e-9);
    }

    #[test]
    fn unified_names_and_aggregated_events() {
        let mut b = CaptureBuilder::new();
        let host = b.process(Key::Int(1));
        let gpu = b.process(Key::Int(2));
        b.process_mut(gpu).kind = ProcessKind::Gpu;
        let ht = b.track(host, Key::Int(1), TrackKind::XLine);
        let gt = b.track(gpu, Key::Int(1), TrackKind::XLine);
        let (fusion, jit, hm, pid) = (
            b.intern("fusion"),
            b.intern("jit_f"),
            b.intern("hlo_module"),
            b.intern("program_id"),
        );
        b.args.begin();
        b.args.push(hm, ArgValue::Str(jit));
        b.args.push(pid, ArgValue::I64(9));
        let a = b.args.finish();
        b.add_slice(gt, 0, 10, fusion, StrId::EMPTY, a, 0);
        b.add_slice(gt, 20, 30, fusion, StrId::EMPTY, a, 0);
        b.add_slice(gt, 60, 5, fusion, StrId::EMPTY, ArgsRef::NONE, 0);
        b.add_slice(ht, 0, 7, fusion, StrId::EMPTY, a, 0);
        b.add_aggregated(gt, jit, 4, 100);
        let c = b.finish(SourceInfo::default(), Format::XPlane);
        let t = compute(
            &c,
            &StatsOptions {
                unified: true,
                ..Default::default()
            },
        );
        let r = row(&t, "jit_f(9-None)");
        assert_eq!(
            (r.count, r.total_ps, r.min_ps, r.max_ps),
            (2, 40, Some(10), Some(30))
        );
        assert_eq!(row(&t, "fusion(None-None)").count, 1);
        // host events keep their name
        assert_eq!(row(&t, "fusion").total_ps, 7);
        // aggregated: occurrences and total, no min/max
        let r = row(&t, "jit_f(None-None)");
        assert_eq!(
            (r.count, r.total_ps, r.self_ps, r.min_ps),
            (4, 100, 100, None)
        );
        // without --unified the aggregated row merges with nothing and keeps its name
        let t = compute(&c, &StatsOptions::default());
        assert_eq!(row(&t, "jit_f").count, 4);
        assert_eq!(row(&t, "fusion").count, 4);
        // a --cat filter leaves aggregated (category-less) events out
        let t = compute(
            &c,
            &StatsOptions {
                cats: Some(vec!["other".into()]),
                ..Default::default()
            },
        );
        assert!(t.rows.iter().all(|r| r.name != "jit_f"));
        assert_eq!(row(&t, "fusion").count, 4);
    }

    #[test]
    fn grouping_by_category_and_stats_with_a_none_row() {
        // One track: A[0,100) {hlo_op "dot", tf_op "mm:MatMul"} ⊃ B[10,40) {hlo_op "add"}
        // ⊃ C[20,25) (no stats); D[50,60) {hlo_op 7}; track 2: E[0,10) {hlo_op "dot"}.
        let mut b = CaptureBuilder::new();
        let p1 = b.process(Key::Int(1));
        let p2 = b.process(Key::Int(2));
        let t1 = b.track(p1, Key::Int(1), TrackKind::Thread);
        let t2 = b.track(p2, Key::Int(2), TrackKind::Thread);
        let (hlo, tf) = (b.intern("hlo_op"), b.intern("tf_op"));
        let (dot, add, mm) = (b.intern("dot"), b.intern("add"), b.intern("mm:MatMul"));
        let args = |b: &mut CaptureBuilder, pairs: &[(StrId, ArgValue)]| {
            b.args.begin();
            for &(k, v) in pairs {
                b.args.push(k, v);
            }
            b.args.finish()
        };
        let a_args = args(
            &mut b,
            &[(hlo, ArgValue::Str(dot)), (tf, ArgValue::Str(mm))],
        );
        let b_args = args(&mut b, &[(hlo, ArgValue::Str(add))]);
        let d_args = args(&mut b, &[(hlo, ArgValue::I64(7))]);
        let e_args = args(&mut b, &[(hlo, ArgValue::Str(dot))]);
        let ev = [
            (t1, 0, 100, "A", "cpu_op", a_args),
            (t1, 10, 30, "B", "kernel", b_args),
            (t1, 20, 5, "C", "cpu_op", ArgsRef::NONE),
            (t1, 50, 10, "D", "", d_args),
            (t2, 0, 10, "E", "kernel", e_args),
        ];
        for (t, s, d, n, c, a) in ev {
            let (n, c) = (b.intern(n), b.intern(c));
            b.add_slice(t, s, d, n, c, a, 0);
        }
        let c = b.finish(SourceInfo::default(), Format::Kineto);
        let summary = |opts: &StatsOptions| {
            let mut rows: Vec<(String, u64, Ps, Ps)> = compute(&c, opts)
                .rows
                .into_iter()
                .map(|r| (r.name, r.count, r.total_ps, r.self_ps))
                .collect();
            rows.sort();
            rows
        };
        let by = |group| StatsOptions {
            group,
            ..Default::default()
        };
        let s = |n: &str, k, t, sp| (n.to_string(), k, t, sp);
        // self: A 100-30-10 = 60, B 30-5 = 25, C 5, D 10, E 10
        assert_eq!(
            summary(&by(GroupBy::Category)),
            vec![
                s("(none)", 1, 10, 10),
                s("cpu_op", 2, 105, 65),
                s("kernel", 2, 40, 35)
            ]
        );
        assert_eq!(
            summary(&by(GroupBy::HloOp)),
            vec![
                s("(none)", 1, 5, 5),
                s("7", 1, 10, 10),
                s("add", 1, 30, 25),
                s("dot", 2, 110, 70)
            ]
        );
        assert_eq!(
            summary(&by(GroupBy::TfOp)),
            vec![s("(none)", 4, 55, 50), s("mm:MatMul", 1, 100, 60)]
        );
        // Filters: process 2 only; track 0 only with a range; a category.
        let o = StatsOptions {
            process: Some(1),
            ..by(GroupBy::HloOp)
        };
        assert_eq!(summary(&o), vec![s("dot", 1, 10, 10)]);
        let o = StatsOptions {
            track: Some(0),
            range: Some((5, 50)),
            ..Default::default()
        };
        assert_eq!(summary(&o), vec![s("B", 1, 30, 25), s("C", 1, 5, 5)]);
        let o = StatsOptions {
            cats: Some(vec!["kernel".into()]),
            ..by(GroupBy::Category)
        };
        // Without cpu_op events in the nesting, B has no child: self = 30.
        assert_eq!(summary(&o), vec![s("kernel", 2, 40, 40)]);
        assert_eq!(GroupBy::TfOp.next(), GroupBy::Name);
    }

    proptest! {
        /// Self time of every name equals a brute-force computation: for each event, its duration
        /// minus the durations of the events whose torch parent it is (found by an O(n²) search
        /// of the innermost earlier containing event, which equals the stack rule on nested input).
        #[test]
        fn matches_brute_force_on_nested_input(spec in proptest::collection::vec((0u8..4, 1i64..6), 1..40)) {
            // Build properly nested events from a random walk: (depth change, duration weight).
            let mut ev: Vec<(i64, i64, String)> = Vec::new();
            let mut open: Vec<(i64, usize)> = Vec::new(); // (end, idx)
            let mut t = 0i64;
            for (k, (op, w)) in spec.iter().enumerate() {
                while let Some(&(e, _)) = open.last() { if e <= t { open.pop(); } else { break; } }
                let limit = open.last().map_or(t + 1000, |o| o.0);
                let dur = ((limit - t) * w / 6).max(0);
                ev.push((t, dur, format!("n{}", k % 3)));
                if *op > 0 { open.push((t + dur, ev.len() - 1)); t += 1; } else { t += dur.max(1); }
            }
            let events: Vec<(u32, i64, i64, &str, &str)> =
                ev.iter().map(|(s, d, n)| (1, *s, *d, n.as_str(), "cpu_op")).collect();
            let c = capture(&events);
            let table = compute(&c, &StatsOptions::default());
            // brute force over the sorted slices of the capture
            let s = &c.slices;
            let n = s.len();
            let mut selfv: Vec<i64> = s.dur.clone();
            for i in 0..n {
                // innermost earlier (in sort order) event that strictly contains i
                let par = (0..i).rev().find(|&j| s.start[j] <= s.start[i] && s.end(i) <= s.end(j) && s.start[i] < s.end(j));
                if let Some(j) = par { selfv[j] -= s.dur[i]; }
            }
            for r in &table.rows {
                let want: i64 = (0..n).filter(|&i| c.slice_name(i as u32) == r.name).map(|i| selfv[i]).sum();
                prop_assert_eq!(r.self_ps, want);
            }
        }
    }
}
