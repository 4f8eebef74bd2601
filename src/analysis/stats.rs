//! Per-name statistics like torch's `key_averages()`: count, total, self, avg, min, max and the
//! share of all self time (analysis.md §a).
//!
//! Self time = duration − Σ durations of direct children, where children are found per track with
//! torch's containment rule ([`super::nesting`]) among the events kept by the category filter plus
//! the events of the optional "nesting-only" categories (which subtract from their parents but
//! get no row themselves). `ProfilerStep#N` rows group as `ProfilerStep*`. XPlane aggregated
//! (untimed) events add their occurrences and total duration (self = total, no min/max).

use super::nesting::ContainmentStack;
use super::unified::{UnifiedKey, UnifiedKeys, render};
use crate::model::{Capture, Category, ProcessKind, Ps, StrId};
use regex::Regex;
use rustc_hash::FxHashMap;

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

const NONE: u32 = u32::MAX;

/// Category filter state per category `StrId`: 0 unknown, 1 aggregated, 2 nesting only, 3 out.
struct CatFilter<'a> {
    opts: &'a StatsOptions,
    memo: Vec<u8>,
}

impl CatFilter<'_> {
    fn class(&mut self, c: &Capture, cat: StrId, kind: Category) -> u8 {
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

/// Maps event names (and unified keys) to row indices without per-event allocation.
struct Rows<'c> {
    c: &'c Capture,
    by_str: Vec<u32>,
    by_name: FxHashMap<String, u32>,
    by_unified: FxHashMap<UnifiedKey, u32>,
    rows: Vec<StatRow>,
}

impl<'c> Rows<'c> {
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

    fn of_name(&mut self, name: StrId) -> u32 {
        let i = name.index();
        if let Some(&r) = self.by_str.get(i)
            && r != NONE
        {
            return r;
        }
        let c = self.c;
        let r = self.named(group_name(c.strings.get(name)));
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

    fn add_timed(&mut self, r: u32, dur: Ps) {
        if let Some(row) = self.rows.get_mut(r as usize) {
            row.count += 1;
            row.total_ps += dur;
            row.min_ps = Some(row.min_ps.map_or(dur, |m| m.min(dur)));
            row.max_ps = Some(row.max_ps.map_or(dur, |m| m.max(dur)));
        }
    }

    fn add_self(&mut self, r: u32, self_ps: Ps) {
        if let Some(row) = self.rows.get_mut(r as usize) {
            row.self_ps += self_ps;
        }
    }
}

/// True when the process / track pass the `--plane` / `--line` filters.
pub fn track_selected(c: &Capture, t: u32, opts: &StatsOptions) -> bool {
    let Some(tr) = c.tracks.get(t as usize) else {
        return false;
    };
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

fn is_device_process(c: &Capture, t: u32) -> bool {
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

/// Computes the statistics table of a capture.
pub fn compute(c: &Capture, opts: &StatsOptions) -> StatsTable {
    let mut cats = CatFilter {
        opts,
        memo: Vec::new(),
    };
    let mut rows = Rows {
        c,
        by_str: Vec::new(),
        by_name: FxHashMap::default(),
        by_unified: FxHashMap::default(),
        rows: Vec::new(),
    };
    let ukeys = opts.unified.then(|| UnifiedKeys::new(c));
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
                1 => match &ukeys {
                    Some(k) if device_track || s.kind(i).is_device() => {
                        rows.of_unified(k.key(c, s.name[i], s.args[i]))
                    }
                    _ => rows.of_name(s.name[i]),
                },
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
    // Aggregated events have no category: they are kept only when no --cat filter is given.
    if opts.cats.is_none() && opts.range.is_none() {
        for a in &c.aggregated {
            if !track_selected(c, a.track, opts) {
                continue;
            }
            let r = match &ukeys {
                Some(k) if is_device_process(c, a.track) => {
                    rows.of_unified(k.key(c, a.name, crate::model::ArgsRef::NONE))
                }
                _ => rows.of_name(a.name),
            };
            if let Some(row) = rows.rows.get_mut(r as usize) {
                row.count += a.occurrences;
                row.total_ps += a.dur;
                row.self_ps += a.dur;
            }
        }
    }
    let rows = rows.rows;
    let total_self_ps = rows.iter().map(|r| r.self_ps).sum();
    StatsTable {
        rows,
        total_self_ps,
    }
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
