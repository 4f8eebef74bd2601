//! Per-name statistics like torch's `key_averages()`: count, total, self, avg, min, max and the
//! share of its kind's self time (analysis.md §a).
//!
//! Self time = duration − Σ durations of direct children, where children are found per track with
//! torch's containment rule ([`super::nesting`]) among the events kept by the category filter plus
//! the events of the optional "nesting-only" categories (which subtract from their parents but
//! get no row themselves). `ProfilerStep#N` rows group as `ProfilerStep*`. XPlane aggregated
//! (untimed) events add their occurrences and total duration (self = total, no min/max).
//! Instant events are counted (no duration). Rows are kept apart by [`EventKind`] (CPU ops,
//! GPU kernels, runtime calls, memory copies, annotations, ...), and the profiler's own spans
//! (Kineto `PyTorch Profiler (0)`) are left out unless [`StatsOptions::profiler`] is set.
//!
//! Files: [`group`] (which row an event adds to), [`filter`] (which events a table covers),
//! [`kind`] (event kinds and per-kind totals), [`sort`] (row order).

pub mod filter;
pub mod group;
pub mod kind;
pub mod sort;
#[cfg(test)]
mod tests;
pub(crate) mod tree;

pub(crate) use filter::{CatFilter, is_device_process};
pub use filter::{
    ProfilerEvents, categories, is_profiler_track, profiler_events, resolve, shows_profiler,
    track_selected,
};
pub use group::{GroupBy, NO_GROUP, group_name};
pub(crate) use group::{NONE, Rows};
pub use kind::{EventKind, KindTotal};
pub use sort::{SortKey, sort_rows};

use super::nesting::ContainmentStack;
use crate::model::{Capture, Ps};
use regex::Regex;
use tree::{Done, LaunchCursor, Open};

/// Which events a stats table covers and how they are named.
#[derive(Clone, Debug, Default)]
pub struct StatsOptions {
    /// Categories aggregated (raw `cat` string, one of its comma-separated parts, or
    /// [`Category::canonical`](crate::model::Category::canonical)); `None` = every event.
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
    /// Include the profiler's own spans ([`profiler_events`]); left out by default, as torch's
    /// `key_averages` has no such row.
    pub profiler: bool,
    /// Every event of every category, also on a PyTorch capture, whose table is otherwise
    /// torch's `key_averages()` ([`resolve`]).
    pub every: bool,
}

/// One row: all events of one (grouped) name and kind.
#[derive(Clone, Debug, PartialEq)]
pub struct StatRow {
    /// Group name.
    pub name: String,
    /// What its events are (rows of different kinds never merge).
    pub kind: EventKind,
    /// Number of events (aggregated events count their occurrences).
    pub count: u64,
    /// Σ duration, ps (0 for instant events).
    pub total_ps: Ps,
    /// Σ self time, ps (may be negative when children overlap each other, as in torch).
    pub self_ps: Ps,
    /// Shortest timed event, ps (`None` when the row has only aggregated or instant events).
    pub min_ps: Option<Ps>,
    /// Longest timed event, ps.
    pub max_ps: Option<Ps>,
    /// Device time launched by the row's events themselves, ps (torch's Self CUDA; device
    /// activities: their duration; device annotations: 0, see [`tree`]).
    pub self_dev_ps: Ps,
    /// Device time launched by the row's events or any event below them, ps (torch's CUDA
    /// total; device activities and annotations: their duration).
    pub dev_total_ps: Ps,
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

    /// True when the row's events have durations (not instant events).
    pub fn timed(&self) -> bool {
        self.kind != EventKind::Instant
    }
}

/// The statistics of one capture.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatsTable {
    /// Rows, unsorted (see [`sort_rows`]).
    pub rows: Vec<StatRow>,
    /// Σ self time over all rows, ps (every kind, every track: see [`StatsTable::kinds`]).
    pub total_self_ps: Ps,
    /// What the rows of each kind add up to and over how many threads / streams, in table order.
    pub kinds: Vec<KindTotal>,
}

impl StatsTable {
    /// Share of its kind's self time of `row`, in percent.
    pub fn self_pct(&self, row: &StatRow) -> f64 {
        let total = self
            .kinds
            .iter()
            .find(|k| k.kind == row.kind)
            .map_or(0, |k| k.self_ps);
        if total == 0 {
            0.0
        } else {
            row.self_ps as f64 * 100.0 / total as f64
        }
    }

    /// The totals of `kind`, when the table has rows of it.
    pub fn kind(&self, kind: EventKind) -> Option<&KindTotal> {
        self.kinds.iter().find(|k| k.kind == kind)
    }
}

/// Computes the statistics table of a capture in one pass (the nesting and the aggregation
/// together). For repeated range queries see [`super::stats_index`].
pub fn compute(c: &Capture, opts: &StatsOptions) -> StatsTable {
    let resolved = resolve(c, opts);
    let opts = resolved.as_ref().unwrap_or(opts);
    let mut cats = CatFilter::new(opts);
    let mut rows = Rows::new(c, opts);
    let s = &c.slices;
    let launches = tree::launched_device_time(c);
    let mut stack: ContainmentStack<Open> = ContainmentStack::new();
    let mut done: Vec<Done> = Vec::new();
    for (t, tr) in c.tracks.iter().enumerate() {
        let t = t as u32;
        if !track_selected(c, t, opts) {
            continue;
        }
        add_instants(c, t, opts, &mut cats, &mut rows);
        if tr.slices.0 >= tr.slices.1 {
            continue;
        }
        let device_track = is_device_process(c, t);
        rows.begin_track(t);
        let same_name = |a: u32, b: u32| tree::same_name(c, a, b);
        let same = tree::merges(c, t).then_some(&same_name);
        let (lo, hi) = (tr.slices.0 as usize, (tr.slices.1 as usize).min(s.len()));
        if rows.flat_track() {
            for i in lo..hi {
                let in_range = opts
                    .range
                    .is_none_or(|(a, b)| s.start[i] >= a && s.start[i] < b);
                if !in_range || cats.class(c, s.cat(i)) != 1 {
                    continue;
                }
                let row = rows.of_slice(i, device_track);
                if row != NONE {
                    rows.mark(t, row);
                    let dur = rows.counted_dur(i, s.dur[i]);
                    rows.add_done(&tree::Done {
                        id: i as u32,
                        row,
                        named: true,
                        dur,
                        self_ps: dur,
                        self_dev: 0,
                        total_dev: 0,
                        removed: false,
                    });
                }
            }
            continue;
        }
        let mut dev = LaunchCursor::new(&launches, lo as u32);
        // A kept event's figures are final when it and its parent have closed (merge).
        let flush = |done: &mut Vec<Done>, rows: &mut Rows<'_>| {
            for d in done.drain(..) {
                if d.row != NONE {
                    rows.add_done(&d);
                }
            }
        };
        // With a range every slice of the track still nests (an event's merge depends on its
        // parent and on all its siblings, wherever they start); only the counting is ranged.
        for i in lo..hi {
            let (start, dur) = (s.start[i], s.dur[i]);
            let in_range = opts.range.is_none_or(|(a, b)| start >= a && start < b);
            let launched = dev.get(i as u32);
            let class = cats.class(c, s.cat(i));
            let row = match class {
                1 if in_range => rows.of_slice(i, device_track),
                1 | 2 => NONE,
                _ => {
                    // Not in the table: its launches still belong to the event around it.
                    tree::give_up(&mut stack, launched, |st| {
                        st.containing_mut(start, start + dur)
                    });
                    continue;
                }
            };
            if row != NONE {
                rows.mark(t, row);
            }
            stack.close_before(start, start + dur, |o, p| {
                tree::close(o, p, same, &mut |d| done.push(d))
            });
            flush(&mut done, &mut rows);
            let o = Open::new(i as u32, row, class == 1, dur);
            tree::enter(
                &mut stack,
                o,
                start + dur,
                tree::launch_goes_up(s.kind(i)),
                launched,
            );
        }
        stack.drain_linked(|o, p| tree::close(o, p, same, &mut |d| done.push(d)));
        flush(&mut done, &mut rows);
    }
    rows.finish(opts)
}

/// Counts the instant events of track `t` that pass the category filter and start in the
/// range.
pub(crate) fn add_instants(
    c: &Capture,
    t: u32,
    opts: &StatsOptions,
    cats: &mut CatFilter<'_>,
    rows: &mut Rows<'_>,
) {
    let Some(tr) = c.tracks.get(t as usize) else {
        return;
    };
    let inst = &c.instants;
    let (mut a, mut b) = (
        tr.instants.0 as usize,
        (tr.instants.1 as usize).min(inst.ts.len()),
    );
    if a >= b {
        return;
    }
    if let Some((from, to)) = opts.range {
        let ts = &inst.ts[a..b];
        (a, b) = (
            a + ts.partition_point(|&x| x < from),
            a + ts.partition_point(|&x| x < to),
        );
    }
    for i in a..b {
        if cats.class(c, inst.cat[i]) == 1 {
            let r = rows.of_instant(i);
            rows.add_instant(r);
            rows.mark(t, r);
        }
    }
}
