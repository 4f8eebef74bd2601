//! Range-scoped statistics without re-nesting: [`SelfTimes`] holds every slice's self time
//! (torch's containment rule, computed once per capture and category filter, tracks in
//! parallel), and [`compute_with`] aggregates the slices that start in a range from it — per
//! track the range is one contiguous run of slice ids found by binary search on the sorted
//! starts, and the runs are cut into equal pieces summed on all cores. The rule is the one of
//! [`compute`](super::stats::compute): an event counts when it starts in `[from, to)`,
//! durations are not clipped, self times are those of the whole capture; both give the same
//! table (property-tested below).

use super::nesting::ContainmentStack;
use super::stats::tree::{self, Done, LaunchCursor, Open};
use super::stats::{
    CatFilter, NONE, Rows, StatsOptions, StatsTable, add_instants, group::device_figures,
    is_device_process, resolve, track_selected,
};
use crate::model::{Capture, Ps};

/// Slices under which a table is summed on the calling thread alone.
const PARALLEL_MIN: usize = 200_000;

/// Per-slice self times of one capture for one nesting configuration (`cats`, `nest_cats`).
#[derive(Clone, Debug, Default)]
pub struct SelfTimes {
    cats: Option<Vec<String>>,
    nest_cats: Vec<String>,
    /// `every` and the category grouping: they decide the default event set ([`resolve`]).
    every: bool,
    by_category: bool,
    /// Self time per slice id, ps (0 for slices outside the category filter).
    self_ps: Vec<Ps>,
    /// Slices merged into their parent or with device time, by id ([`tree`]): few, so kept
    /// apart from the per-slice column.
    extra: Vec<(u32, Extra)>,
}

/// What [`SelfTimes`] keeps of a slice beyond its self time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Extra {
    /// Merged into its same-name parent (torch `_remove_dup_nodes`).
    removed: bool,
    /// Device time it launched itself, ps.
    self_dev: Ps,
    /// Device time launched by it or below, ps.
    total_dev: Ps,
}

impl SelfTimes {
    /// Nests every track of `c` (all of them: the track filters do not change self times) with
    /// the category filter of `opts`, on up to [`threads`] threads.
    pub fn new(c: &Capture, opts: &StatsOptions) -> SelfTimes {
        let parts = if c.slices.len() >= PARALLEL_MIN {
            threads()
        } else {
            1
        };
        SelfTimes::in_parts(c, opts, parts)
    }

    /// [`SelfTimes::new`] on `parts` threads (1 when the tracks are not in id order).
    fn in_parts(c: &Capture, asked: &StatsOptions, parts: usize) -> SelfTimes {
        let resolved = resolve(c, asked);
        let opts = resolved.as_ref().unwrap_or(asked);
        let n = c.slices.len();
        let mut self_ps = vec![0; n];
        // Tracks own contiguous id ranges in track order; cut the id space at track boundaries
        // into pieces of about equal slice counts, one per thread.
        let mut ordered = true;
        let mut end = 0u32;
        for tr in c.tracks.iter().filter(|tr| tr.slices.0 < tr.slices.1) {
            ordered &= tr.slices.0 >= end;
            end = tr.slices.1;
        }
        let parts = if ordered { parts.max(1) } else { 1 };
        let mut cuts: Vec<(usize, usize)> = vec![(0, 0)]; // (first track, first id)
        for (t, tr) in c.tracks.iter().enumerate() {
            let lo = tr.slices.0 as usize;
            if cuts.len() < parts && tr.slices.0 < tr.slices.1 && lo >= cuts.len() * n / parts {
                cuts.push((t, lo));
            }
        }
        cuts.push((c.tracks.len(), n));
        let mut rest: &mut [Ps] = &mut self_ps;
        let mut pieces = Vec::with_capacity(cuts.len());
        for w in cuts.windows(2) {
            let (head, tail) = rest.split_at_mut(w[1].1 - w[0].1);
            pieces.push((w[0].0..w[1].0, w[0].1, head));
            rest = tail;
        }
        let launches = tree::launched_device_time(c);
        let launches = &launches;
        let extras: Vec<Vec<(u32, Extra)>> = std::thread::scope(|sc| {
            let mut pieces = pieces.into_iter();
            let first = pieces.next();
            let handles: Vec<_> = pieces
                .map(|(tracks, base, out)| {
                    sc.spawn(move || nest_tracks(c, opts, launches, tracks, base, out))
                })
                .collect();
            let mut all = Vec::new();
            if let Some((tracks, base, out)) = first {
                all.push(nest_tracks(c, opts, launches, tracks, base, out));
            }
            for h in handles {
                all.push(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
            }
            all
        });
        let mut extra: Vec<(u32, Extra)> = extras.into_iter().flatten().collect();
        extra.sort_unstable_by_key(|e| e.0);
        // What `fits` compares: the options as asked (resolution depends on the capture only).
        SelfTimes {
            cats: asked.cats.clone(),
            nest_cats: asked.nest_cats.clone(),
            every: asked.every,
            by_category: asked.group == super::stats::GroupBy::Category,
            self_ps,
            extra,
        }
    }

    /// True when these self times hold for `opts` (same capture assumed): same category
    /// filter and nesting-only categories.
    pub fn fits(&self, opts: &StatsOptions) -> bool {
        self.cats == opts.cats
            && self.nest_cats == opts.nest_cats
            && self.every == opts.every
            && self.by_category == (opts.group == super::stats::GroupBy::Category)
    }

    /// Self time of slice `id`, ps.
    pub fn get(&self, id: u32) -> Ps {
        self.self_ps.get(id as usize).copied().unwrap_or(0)
    }

    /// Heap bytes held (8 per slice, and 24 per merged slice or slice with device time).
    pub fn heap_bytes(&self) -> usize {
        self.self_ps.capacity() * std::mem::size_of::<Ps>()
            + self.extra.capacity() * std::mem::size_of::<(u32, Extra)>()
    }
}

/// Per-row accumulator of [`compute_with`].
#[derive(Clone, Copy)]
struct Acc {
    count: u64,
    total: Ps,
    self_ps: Ps,
    min: Ps,
    max: Ps,
    self_dev: Ps,
    total_dev: Ps,
}

impl Acc {
    const EMPTY: Acc = Acc {
        count: 0,
        total: 0,
        self_ps: 0,
        min: Ps::MAX,
        max: Ps::MIN,
        self_dev: 0,
        total_dev: 0,
    };
}

/// Threads used: the available cores, at most 8.
pub use crate::threads::cores as threads;

/// Nests `tracks` (their slices are ids `base..base + out.len()`), writes each kept slice's
/// self time to `out` and returns the slices merged into their parent or with device time
/// (the rules of [`compute`](super::stats::compute), [`tree`]).
fn nest_tracks(
    c: &Capture,
    opts: &StatsOptions,
    launches: &[(u32, tree::Launched)],
    tracks: std::ops::Range<usize>,
    base: usize,
    out: &mut [Ps],
) -> Vec<(u32, Extra)> {
    let s = &c.slices;
    let mut cats = CatFilter::new(opts);
    let mut stack: ContainmentStack<Open> = ContainmentStack::new();
    let mut done: Vec<Done> = Vec::new();
    let mut extra: Vec<(u32, Extra)> = Vec::new();
    let mut write = |done: &mut Vec<Done>| {
        for d in done.drain(..) {
            if d.row == NONE {
                continue;
            }
            if let Some(o) = (d.id as usize)
                .checked_sub(base)
                .and_then(|k| out.get_mut(k))
            {
                *o = d.self_ps;
            }
            if d.removed || d.self_dev != 0 || d.total_dev != 0 {
                let e = Extra {
                    removed: d.removed,
                    self_dev: d.self_dev,
                    total_dev: d.total_dev,
                };
                extra.push((d.id, e));
            }
        }
    };
    let first = tracks.start;
    for (k, tr) in c.tracks.get(tracks).unwrap_or(&[]).iter().enumerate() {
        let same_name = |a: u32, b: u32| tree::same_name(c, a, b);
        let same = tree::merges(c, (first + k) as u32).then_some(&same_name);
        let (lo, hi) = (tr.slices.0 as usize, (tr.slices.1 as usize).min(s.len()));
        let mut dev = LaunchCursor::new(launches, lo as u32);
        for i in lo..hi {
            let (start, dur) = (s.start[i], s.dur[i]);
            let launched = dev.get(i as u32);
            let class = cats.class(c, s.cat(i));
            let id = match class {
                1 => i as u32,
                2 => NONE,
                _ => {
                    tree::give_up(&mut stack, launched, |st| {
                        st.containing_mut(start, start + dur)
                    });
                    continue;
                }
            };
            stack.close_before(start, start + dur, |o, p| {
                tree::close(o, p, same, &mut |d| done.push(d))
            });
            write(&mut done);
            let o = Open::new(i as u32, id, class == 1, dur);
            tree::enter(
                &mut stack,
                o,
                start + dur,
                tree::launch_goes_up(s.kind(i)),
                launched,
            );
        }
        stack.drain_linked(|o, p| tree::close(o, p, same, &mut |d| done.push(d)));
        write(&mut done);
    }
    extra
}

/// The statistics table of `opts` (range, track / process filters, grouping) from precomputed
/// self times: one pass over the slices starting in the range, on all cores for large ranges.
/// `st` must [fit](SelfTimes::fits) `opts`; equals [`compute`](super::stats::compute).
pub fn compute_with(c: &Capture, st: &SelfTimes, opts: &StatsOptions) -> StatsTable {
    compute_in_parts(c, st, opts, None)
}

/// [`compute_with`] on `parts` threads (`None`: all cores for large ranges, else one).
fn compute_in_parts(
    c: &Capture,
    st: &SelfTimes,
    opts: &StatsOptions,
    parts: Option<usize>,
) -> StatsTable {
    let resolved = resolve(c, opts);
    let opts = resolved.as_ref().unwrap_or(opts);
    let s = &c.slices;
    // Per selected track: the run of ids starting in the range (track, first, end, device).
    let mut runs: Vec<(u32, usize, usize, bool)> = Vec::new();
    let mut total = 0usize;
    let mut selected: Vec<u32> = Vec::new();
    for (t, tr) in c.tracks.iter().enumerate() {
        let t = t as u32;
        let (lo, hi) = (tr.slices.0 as usize, (tr.slices.1 as usize).min(s.len()));
        if !track_selected(c, t, opts) {
            continue;
        }
        selected.push(t);
        if lo >= hi {
            continue;
        }
        let (a, b) = match opts.range {
            Some((a, b)) => (
                lo + s.start[lo..hi].partition_point(|&x| x < a),
                lo + s.start[lo..hi].partition_point(|&x| x < b),
            ),
            None => (lo, hi),
        };
        if a < b {
            runs.push((t, a, b, is_device_process(c, t)));
            total += b - a;
        }
    }
    let parts = match parts {
        Some(p) => p.max(1),
        None if total >= PARALLEL_MIN => threads(),
        None => 1,
    };
    // Cut the runs into `parts` pieces of about `total / parts` slices each.
    let mut pieces: Vec<Vec<(u32, usize, usize, bool)>> = vec![Vec::new(); parts];
    let per = total.div_ceil(parts).max(1);
    let (mut k, mut room) = (0usize, per);
    for &(t, mut a, b, dev) in &runs {
        while a < b {
            let take = (b - a).min(room);
            if let Some(p) = pieces.get_mut(k) {
                p.push((t, a, a + take, dev));
            }
            a += take;
            room -= take;
            if room == 0 {
                k = (k + 1).min(parts - 1);
                room = per;
            }
        }
    }
    // Kept (class 1) per class index, and for slices whose class is out of the table.
    let mut cats = CatFilter::new(opts);
    let keep: Vec<bool> = s
        .classes
        .iter()
        .map(|&(raw, _)| cats.class(c, raw) == 1)
        .collect();
    let keep_other = cats.class(c, crate::model::StrId::EMPTY) == 1;
    let sum = |piece: &[(u32, usize, usize, bool)]| {
        let mut rows = Rows::new(c, opts);
        // Accumulators per row, one cache line each, no `Option` in the loop.
        let mut acc: Vec<Acc> = Vec::new();
        for &(t, a, b, dev) in piece {
            // Kinds of this run's rows, marked on its track once at the end of the run.
            let mut seen: u16 = 0;
            rows.begin_track(t);
            let mut ex = st.extra.partition_point(|e| (e.0 as usize) < a);
            for i in a..b {
                if !keep
                    .get(usize::from(s.class[i]))
                    .copied()
                    .unwrap_or(keep_other)
                {
                    continue;
                }
                let r = rows.of_slice(i, dev) as usize;
                if r >= acc.len() {
                    acc.resize(r + 1, Acc::EMPTY);
                }
                while st.extra.get(ex).is_some_and(|e| (e.0 as usize) < i) {
                    ex += 1;
                }
                let e = match st.extra.get(ex) {
                    Some(&(id, e)) if id as usize == i => e,
                    _ => Extra::default(),
                };
                let d = s.dur[i];
                let kind = rows.kind_of(r as u32);
                let (self_dev, total_dev) = device_figures(kind, d, e.self_dev, e.total_dev);
                seen |= rows.kind_bit(r as u32);
                if e.removed {
                    continue;
                }
                let x = &mut acc[r];
                x.self_ps += st.self_ps.get(i).copied().unwrap_or(0);
                x.self_dev += self_dev;
                x.count += 1;
                x.total += d;
                x.min = x.min.min(d);
                x.max = x.max.max(d);
                x.total_dev += total_dev;
            }
            rows.mark_bits(t, seen);
        }
        for (r, x) in acc.iter().enumerate() {
            if x.count > 0 {
                let dev = (x.self_dev, x.total_dev);
                rows.add_counted(r as u32, x.count, x.total, x.self_ps, x.min, x.max, dev);
            }
        }
        rows
    };
    let mut partial: Vec<Rows> = std::thread::scope(|sc| {
        let handles: Vec<_> = pieces[1..]
            .iter()
            .map(|p| sc.spawn(move || sum(p)))
            .collect();
        let mut out = vec![sum(&pieces[0])];
        for h in handles {
            out.push(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        out
    })
    .into_iter()
    .collect();
    let mut rows = partial.remove(0);
    for p in partial {
        rows.merge(p);
    }
    let mut cats = CatFilter::new(opts);
    for t in selected {
        add_instants(c, t, opts, &mut cats, &mut rows);
    }
    rows.finish(opts)
}

/// Ids of the slices that [`compute_with`] counts in the row named `row` (same range, filters
/// and grouping), in track order.
pub fn slices_of_row(c: &Capture, opts: &StatsOptions, row: &str) -> Vec<u32> {
    let resolved = resolve(c, opts);
    let opts = resolved.as_ref().unwrap_or(opts);
    let s = &c.slices;
    let mut rows = Rows::new(c, opts);
    let mut cats = CatFilter::new(opts);
    let mut want: Option<u32> = None;
    let mut out = Vec::new();
    for (t, tr) in c.tracks.iter().enumerate() {
        let (lo, hi) = (tr.slices.0 as usize, (tr.slices.1 as usize).min(s.len()));
        if lo >= hi || !track_selected(c, t as u32, opts) {
            continue;
        }
        let (a, b) = match opts.range {
            Some((a, b)) => (
                lo + s.start[lo..hi].partition_point(|&x| x < a),
                lo + s.start[lo..hi].partition_point(|&x| x < b),
            ),
            None => (lo, hi),
        };
        let dev = is_device_process(c, t as u32);
        rows.begin_track(t as u32);
        for i in a..b {
            if cats.class(c, s.cat(i)) != 1 {
                continue;
            }
            let r = rows.of_slice(i, dev);
            if want.is_none() && rows.rows.get(r as usize).is_some_and(|x| x.name == row) {
                want = Some(r);
            }
            if want == Some(r) {
                out.push(i as u32);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::nesting::parents;
    use crate::analysis::stats::{GroupBy, StatRow, compute};
    use crate::model::*;
    use proptest::prelude::*;

    /// Every event (the mechanics under test), not the PyTorch default of torch's event set.
    fn every() -> StatsOptions {
        StatsOptions {
            every: true,
            ..StatsOptions::default()
        }
    }

    /// (track, start, dur, name, category) → capture on two processes (tracks 0-1: pid 1).
    fn capture(events: &[(u32, i64, i64, u8, u8)]) -> Capture {
        let mut b = CaptureBuilder::new();
        let procs = [b.process(Key::Int(1)), b.process(Key::Int(2))];
        for &(tid, s, d, name, cat) in events {
            let p = procs[(tid / 2) as usize % 2];
            let t = b.track(p, Key::Int(i64::from(tid)), TrackKind::Thread);
            let n = b.intern(&format!("n{name}"));
            let c = b.intern(["cpu_op", "kernel", "python_function"][cat as usize % 3]);
            b.add_slice(t, s, d, n, c, ArgsRef::NONE, 0);
        }
        b.finish(SourceInfo::default(), Format::Kineto)
    }

    fn sorted(mut rows: Vec<StatRow>) -> Vec<StatRow> {
        rows.sort_by(|a, b| a.name.cmp(&b.name).then(a.kind.cmp(&b.kind)));
        rows
    }

    /// Brute force: every kept slice starting in the range, self time from the reference
    /// parent function over the track's kept + nesting-only slices.
    fn brute(c: &Capture, opts: &StatsOptions) -> Vec<StatRow> {
        let s = &c.slices;
        let keep = |i: usize| {
            let cat = c.strings.get(s.cat(i));
            let kept = opts
                .cats
                .as_ref()
                .is_none_or(|l| l.iter().any(|x| x == cat));
            let nest = opts.nest_cats.iter().any(|x| x == cat);
            (kept, kept || nest)
        };
        let mut selfv = vec![0i64; s.len()];
        let mut removed = vec![false; s.len()];
        for tr in &c.tracks {
            let ids: Vec<usize> = (tr.slices.0 as usize..tr.slices.1 as usize)
                .filter(|&i| keep(i).1)
                .collect();
            let ev: Vec<(Ps, Ps)> = ids.iter().map(|&i| (s.start[i], s.end(i))).collect();
            // torch's `_remove_dup_nodes`, literally: repeat until nothing changes.
            let mut parent: Vec<Option<usize>> = parents(&ev);
            let mut kids: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
            for (k, p) in parent.iter().enumerate() {
                if let Some(p) = *p {
                    kids[p].push(k);
                }
            }
            let mut gone = vec![false; ids.len()];
            let same = |a: usize, b: usize| {
                keep(ids[a]).0
                    && keep(ids[b]).0
                    && s.name[ids[a]] == s.name[ids[b]]
                    && s.kind(ids[a]) == s.kind(ids[b])
            };
            loop {
                let mut changed = false;
                for k in 0..ids.len() {
                    if gone[k] {
                        continue;
                    }
                    if let Some(p) = parent[k]
                        && same(p, k)
                        && kids[p].len() == 1
                    {
                        let moved = std::mem::take(&mut kids[k]);
                        for &g in &moved {
                            parent[g] = Some(p);
                        }
                        kids[p] = moved;
                        gone[k] = true;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            for (k, &i) in ids.iter().enumerate() {
                removed[i] = gone[k];
                selfv[i] = s.dur[i] - kids[k].iter().map(|&g| s.dur[ids[g]]).sum::<Ps>();
            }
        }
        let mut rows: Vec<StatRow> = Vec::new();
        for (t, tr) in c.tracks.iter().enumerate() {
            if !track_selected(c, t as u32, opts) {
                continue;
            }
            let ids = tr.slices.0 as usize..tr.slices.1 as usize;
            for (i, &own) in selfv.iter().enumerate().take(ids.end).skip(ids.start) {
                let inr = opts
                    .range
                    .is_none_or(|(a, b)| s.start[i] >= a && s.start[i] < b);
                if !keep(i).0 || !inr || removed[i] {
                    continue;
                }
                let name = match opts.group {
                    GroupBy::Category => c.strings.get(s.cat(i)).to_string(),
                    _ => c.slice_name(i as u32).to_string(),
                };
                let d = s.dur[i];
                let kind = crate::analysis::stats::EventKind::of_event(
                    s.kind(i),
                    crate::analysis::stats::is_device_process(c, t as u32),
                );
                // Host-track kernels: a device activity's own time (no launches here).
                let dev = if kind == crate::analysis::stats::EventKind::Kernel {
                    d
                } else {
                    0
                };
                match rows.iter_mut().find(|r| r.name == name && r.kind == kind) {
                    Some(r) => {
                        r.count += 1;
                        r.total_ps += d;
                        r.self_ps += own;
                        r.min_ps = r.min_ps.map(|m| m.min(d));
                        r.max_ps = r.max_ps.map(|m| m.max(d));
                        r.self_dev_ps += dev;
                        r.dev_total_ps += dev;
                    }
                    None => rows.push(StatRow {
                        name,
                        kind,
                        count: 1,
                        total_ps: d,
                        self_ps: own,
                        min_ps: Some(d),
                        max_ps: Some(d),
                        self_dev_ps: dev,
                        dev_total_ps: dev,
                    }),
                }
            }
        }
        sorted(rows)
    }

    #[test]
    fn hand_computed_range() {
        // track 0: A[0,100) ⊃ B[10,40) ⊃ C[20,25); B[50,60); track 2 (pid 2): A[30,35)
        let c = capture(&[
            (0, 0, 100, 0, 0),
            (0, 10, 30, 1, 0),
            (0, 20, 5, 2, 0),
            (0, 50, 10, 1, 0),
            (2, 30, 5, 0, 0),
        ]);
        let opts = StatsOptions {
            range: Some((10, 51)),
            ..every()
        };
        let st = SelfTimes::new(&c, &opts);
        assert_eq!(st.get(0), 100 - 30 - 10);
        let t = compute_with(&c, &st, &opts);
        let rows = sorted(t.rows);
        // n0: only the pid-2 event starts in range; n1: both B, self 25 + 10; n2: C.
        let got: Vec<(&str, u64, Ps, Ps)> = rows
            .iter()
            .map(|r| (r.name.as_str(), r.count, r.total_ps, r.self_ps))
            .collect();
        assert_eq!(
            got,
            vec![("n0", 1, 5, 5), ("n1", 2, 40, 35), ("n2", 1, 5, 5)]
        );
        // process filter: pid 2 only
        let p2 = StatsOptions {
            process: Some(1),
            ..opts.clone()
        };
        let t = compute_with(&c, &st, &p2);
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.total_self_ps, 5);
        // The slices behind a row: both B (ids 1 and 3), C by category.
        assert_eq!(slices_of_row(&c, &opts, "n1"), vec![1, 3]);
        let by_cat = StatsOptions {
            group: GroupBy::Category,
            ..opts.clone()
        };
        assert_eq!(slices_of_row(&c, &by_cat, "cpu_op"), vec![1, 2, 3, 4]);
        assert!(slices_of_row(&c, &by_cat, "kernel").is_empty());
    }

    proptest! {
        /// `compute_with` (any range, filters, grouping) equals `compute` and a brute force.
        #[test]
        fn equals_compute_and_brute_force(
            ev in proptest::collection::vec((0u32..4, 0i64..200, 0i64..60, 0u8..5, 0u8..3), 1..80),
            from in -10i64..220, len in 0i64..250,
            cat_filter in 0u8..3, by_cat in any::<bool>(), track in proptest::option::of(0u32..4),
            parts in 1usize..5,
        ) {
            let c = capture(&ev);
            let opts = StatsOptions {
                cats: match cat_filter { 0 => None, 1 => Some(vec!["cpu_op".into()]),
                    _ => Some(vec!["cpu_op".into(), "kernel".into()]) },
                nest_cats: if cat_filter == 1 { vec!["python_function".into()] } else { vec![] },
                range: (len < 240).then_some((from, from + len)),
                group: if by_cat { GroupBy::Category } else { GroupBy::Name },
                track: track.filter(|&t| (t as usize) < c.tracks.len()),
                ..every()
            };
            // Split over `parts` threads (the small inputs would otherwise run on one).
            let st = SelfTimes::in_parts(&c, &opts, parts);
            prop_assert_eq!(&st.self_ps, &SelfTimes::new(&c, &opts).self_ps);
            let fast = compute_in_parts(&c, &st, &opts, Some(parts));
            prop_assert_eq!(&fast, &compute_with(&c, &st, &opts));
            let slow = compute(&c, &opts);
            prop_assert_eq!(fast.total_self_ps, slow.total_self_ps);
            let want = brute(&c, &opts);
            prop_assert_eq!(&sorted(fast.rows), &want);
            prop_assert_eq!(sorted(slow.rows), want);
        }
    }
}
