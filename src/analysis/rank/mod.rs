//! "What should I optimize?": torch's `BasicEvaluation` ranking (analysis.md §b) over a loaded
//! capture — self time, queue depth, idle time, falling queue-depth phases and scores — in two
//! modes: [`Mode::Default`] (what torch intends) and [`Mode::Compat`] (torch's code, quirks
//! included). Everything is O(n log n); see docs/analysis.md.
//!
//! [`evaluate`] works on plain columns (tested against brute force); [`rank`] picks the columns
//! from a [`Capture`] and keeps per-event lookups for a details pane; [`device_queues`] gives the
//! queue depth as a step series and the idle intervals per device for a timeline.

pub mod callstack;
pub mod cover;
pub mod explain;
pub mod idle;
pub mod par;
pub mod queue;
pub mod score;
pub mod select;
pub mod tree;

use crate::analysis::launch_link;
use crate::model::{Capture, Ps};
use cover::{CompatOverlap, Cover, union};
use queue::{NO_KERNEL, QueuePoint};
use tree::NO_PARENT;

pub use par::par2;

/// Which semantics to follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// What torch intends: overlap with the merged union of intervals, z = 0 when the deviation is
    /// 0 or undefined, ties by start time, kernels = cat `kernel`, driver/HIP launches counted.
    #[default]
    Default,
    /// torch's code exactly, quirks included (float32 scores, the interval walk of
    /// `intervals_overlap`, NaN scores, kernels by device type and name).
    Compat,
}

/// Columns of one evaluation: CPU tree events grouped by track (each group sorted by start asc,
/// end desc), launches (indices into the tree, start-sorted) and kernels (start-sorted).
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// Tree event starts, ps.
    pub start: &'a [Ps],
    /// Tree event ends, ps.
    pub end: &'a [Ps],
    /// Offsets where each track's events begin, plus the total.
    pub groups: &'a [usize],
    /// Launches as tree indices, sorted by start.
    pub launches: &'a [u32],
    /// Correlation id of each launch (0 = none).
    pub launch_corr: &'a [u64],
    /// Kernels `(start, end)`, sorted by start.
    pub kernels: &'a [(Ps, Ps)],
    /// Correlation id of each kernel.
    pub kernel_corr: &'a [u64],
    /// Link each launch to the LAST kernel of its id (XPlane, [`launch_link`]) instead of
    /// torch's forward search ([`queue::link`]).
    pub last_of_id: bool,
}

/// Launch → kernel index by the capture's rule: XPlane's one rule ([`launch_link`]: a launch
/// stands for the last kernel of its id) or torch's forward search.
fn link_rule(last_of_id: bool, launch_corr: &[u64], kernel_corr: &[u64]) -> Vec<u32> {
    if last_of_id {
        launch_link::last_kernel_of(launch_corr, kernel_corr)
    } else {
        queue::link(launch_corr, kernel_corr)
    }
}

/// Everything computed for one capture; per-event columns are indexed like the tree events.
#[derive(Clone, Debug, Default)]
pub struct Evaluation {
    /// Mode used.
    pub mode: Mode,
    /// Tree parent of each event (for source locations), or `u32::MAX`.
    pub parent: Vec<u32>,
    /// Self time, ps.
    pub self_ps: Vec<Ps>,
    /// Idle time overlapping the event, ps.
    pub idle_ps: Vec<Ps>,
    /// Queue depth at the event's start.
    pub queue_depth: Vec<u32>,
    /// Queue-depth points (launches and kernels) in time order.
    pub points: Vec<QueuePoint>,
    /// Idle intervals as torch builds them (edges first; may overlap or be inverted).
    pub idle: Vec<(Ps, Ps)>,
    /// Falling phases `(peak start, drained start)` in torch's order.
    pub falling: Vec<(Ps, Ps)>,
    /// Launches linked to a kernel.
    pub linked: usize,
    /// Ranked candidates (events overlapping a falling phase), best first: (event, score).
    pub ranked: Vec<(u32, f64)>,
    /// Rank position of each event (`u32::MAX` when not a candidate).
    pub rank_of: Vec<u32>,
}

impl Evaluation {
    /// Idle fraction of event `i` (0 for zero-length events).
    pub fn idle_fraction(&self, i: usize, dur: Ps) -> f64 {
        if dur == 0 {
            0.0
        } else {
            self.idle_ps[i] as f64 / dur as f64
        }
    }

    /// Largest queue depth seen.
    pub fn queue_depth_max(&self) -> u32 {
        self.points.iter().map(|p| p.depth).max().unwrap_or(0)
    }
}

/// The launch/kernel side of an evaluation: links, points, per-event queue depth, falling phases.
struct QueueSide {
    linked: usize,
    points: Vec<QueuePoint>,
    queue_depth: Vec<u32>,
    falling: Vec<(Ps, Ps)>,
}

fn queue_side(inp: &Input, groups: &[usize]) -> QueueSide {
    let kernel_of = link_rule(inp.last_of_id, inp.launch_corr, inp.kernel_corr);
    let linked = kernel_of.iter().filter(|&&k| k != NO_KERNEL).count();
    let launch_iv: Vec<(Ps, Ps)> = inp
        .launches
        .iter()
        .map(|&l| (inp.start[l as usize], inp.end[l as usize]))
        .collect();
    let points = queue::points(&launch_iv, &kernel_of, inp.kernels);
    // Depth at each start: within a track the starts ascend, so the search gallops forward.
    let pstart: Vec<Ps> = points.iter().map(|p| p.start).collect();
    let mut queue_depth = vec![0u32; inp.start.len()];
    for w in groups.windows(2) {
        let mut k = 0usize;
        let (st, qd) = (&inp.start[w[0]..w[1]], &mut queue_depth[w[0]..w[1]]);
        for (&t, d) in st.iter().zip(qd) {
            k = cover::gallop(&pstart, k, |s| s <= t);
            *d = k.checked_sub(1).map_or(0, |k| points[k].depth);
        }
    }
    let falling = idle::falling_phases(&points);
    QueueSide {
        linked,
        points,
        queue_depth,
        falling,
    }
}

/// Runs steps 1–4 of analysis.md §b on columns. The CPU tree is built on one thread while the
/// queue side (links, points, depths, falling phases) runs on another; the per-event overlaps are
/// split over two threads by track.
pub fn evaluate(inp: &Input, mode: Mode) -> Evaluation {
    let n = inp.start.len();
    let groups = tree::whole_groups(inp.groups, n);
    let (q, tr) = par2(
        || queue_side(inp, &groups),
        || tree::build(inp.start, inp.end, &groups),
    );
    let QueueSide {
        linked,
        points,
        queue_depth,
        falling,
    } = q;
    // Step 3: idle intervals; edges from the first start and from the end of the latest-starting
    // event (ties: the last in torch's metrics order).
    let edges = tree_edges(inp.start, inp.end, || tr.order.clone());
    let idle_iv = idle::idle_intervals(&points, edges);
    // Idle overlap and "touches a falling phase" per event.
    let mut idle_ps: Vec<Ps> = vec![0; n];
    let mut touches = vec![false; n];
    let (ic, fc, first_calls) = match mode {
        Mode::Default => (
            vec![Cover::new(union(&idle_iv))],
            vec![Cover::new(union(&falling))],
            0,
        ),
        // torch's calls in metrics order: call k counts with cover min(k, len − 1); every event
        // is computed with the settled cover, then the first few calls are redone with theirs.
        Mode::Compat => {
            let ic = CompatOverlap::new(idle_iv.clone()).covers(n);
            let fc = CompatOverlap::new(falling.clone()).covers(n);
            let first = ic.len().max(fc.len()).saturating_sub(1);
            (ic, fc, first)
        }
    };
    if let (Some(il), Some(fl)) = (ic.last(), fc.last()) {
        let g = groups.len() - 1;
        let cut_g = groups[..g].partition_point(|&o| o * 2 < n);
        let cut = groups[cut_g];
        let (ia, ib) = idle_ps.split_at_mut(cut);
        let (ta, tb) = touches.split_at_mut(cut);
        let run = |gs: &[usize], io: &mut [Ps], to: &mut [bool]| {
            let base = gs[0];
            for w in gs.windows(2) {
                let (lo, hi) = (w[0], w[1]);
                let (st, en) = (&inp.start[lo..hi], &inp.end[lo..hi]);
                let (io, to) = (&mut io[lo - base..hi - base], &mut to[lo - base..hi - base]);
                il.overlap_run(st, en, |i, v| io[i] = v);
                fl.overlap_run(st, en, |i, v| to[i] = v > 0);
            }
        };
        par2(
            || run(&groups[..=cut_g], ia, ta),
            || run(&groups[cut_g..], ib, tb),
        );
    }
    for (k, &e) in tr.order.iter().take(first_calls).enumerate() {
        let e = e as usize;
        let (a, b) = (inp.start[e], inp.end[e]);
        let pick = |c: &[Cover]| {
            c.get(k.min(c.len().saturating_sub(1)))
                .map(|c| c.overlap(a, b))
        };
        idle_ps[e] = pick(&ic).unwrap_or(0);
        touches[e] = pick(&fc).unwrap_or(0) > 0;
    }
    // Step 4: candidates in metrics order, scores, order.
    let cand: Vec<u32> = tr
        .order
        .iter()
        .copied()
        .filter(|&e| touches[e as usize])
        .collect();
    drop(touches);
    let frac = |e: u32| {
        let e = e as usize;
        let d = inp.end[e] - inp.start[e];
        if d == 0 {
            0.0
        } else {
            idle_ps[e] as f64 / d as f64
        }
    };
    let f: Vec<f64> = cand.iter().map(|&e| frac(e)).collect();
    let s: Vec<Ps> = cand.iter().map(|&e| tr.self_ps[e as usize]).collect();
    let ranked: Vec<(u32, f64)> = match mode {
        Mode::Default => {
            let sc = score::scores_default(&f, &s);
            let st: Vec<Ps> = cand.iter().map(|&e| inp.start[e as usize]).collect();
            score::order_default(&sc, &st, &cand)
                .into_iter()
                .map(|k| (cand[k as usize], sc[k as usize]))
                .collect()
        }
        Mode::Compat => {
            let sc = score::scores_compat(&f, &s);
            score::order_compat(&sc)
                .into_iter()
                .map(|k| (cand[k as usize], f64::from(sc[k as usize])))
                .collect()
        }
    };
    let mut rank_of = vec![u32::MAX; n];
    for (r, &(e, _)) in ranked.iter().enumerate() {
        rank_of[e as usize] = r as u32;
    }
    Evaluation {
        mode,
        parent: tr.parent,
        self_ps: tr.self_ps,
        idle_ps,
        queue_depth,
        points,
        idle: idle_iv,
        falling,
        linked,
        ranked,
        rank_of,
    }
}

/// `(start of the earliest event, end of the latest-starting event)`, ties of the latter going to
/// the last in torch's metrics order (`order()`, only called on a tie); `None` without events.
fn tree_edges(start: &[Ps], end: &[Ps], order: impl FnOnce() -> Vec<u32>) -> Option<(Ps, Ps)> {
    let (&s0, &e0) = (start.first()?, end.first()?);
    let (mut first, mut last, mut tie) = (s0, (s0, e0), false);
    for (&s, &e) in start.iter().zip(end) {
        first = first.min(s);
        if s > last.0 {
            last = (s, e);
            tie = false;
        } else if s == last.0 && e != last.1 {
            tie = true;
        }
    }
    if tie {
        for e in order() {
            let e = e as usize;
            if start[e] == last.0 {
                last.1 = end[e];
            }
        }
    }
    Some((first, last.1))
}

/// Per-event results of a capture's ranking, keyed by slice id.
#[derive(Clone, Debug, Default)]
pub struct Ranking {
    /// CPU tree events (slice ids, ascending); per-event columns of `eval` follow this order.
    pub events: Vec<u32>,
    /// Number of launches and kernels found.
    pub launches: usize,
    /// Number of kernels found.
    pub kernels: usize,
    /// The evaluation.
    pub eval: Evaluation,
}

/// What a details pane shows for one CPU event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EventInfo {
    /// Self time, ps.
    pub self_ps: Ps,
    /// Idle time overlapping it, ps.
    pub idle_ps: Ps,
    /// Idle time / duration.
    pub idle_fraction: f64,
    /// Queue depth at its start.
    pub queue_depth: u32,
    /// Position in the ranking (0 = best) and score, when it is a candidate.
    pub rank: Option<(usize, f64)>,
}

impl Ranking {
    /// Index of slice `id` among the tree events.
    pub fn index_of(&self, id: u32) -> Option<usize> {
        self.events.binary_search(&id).ok()
    }

    /// Per-event lookup for slice `id` (`None` when it is not a CPU tree event).
    pub fn info(&self, c: &Capture, id: u32) -> Option<EventInfo> {
        let i = self.index_of(id)?;
        let e = &self.eval;
        let r = e.rank_of[i];
        Some(EventInfo {
            self_ps: e.self_ps[i],
            idle_ps: e.idle_ps[i],
            idle_fraction: e.idle_fraction(i, c.slices.dur[id as usize]),
            queue_depth: e.queue_depth[i],
            rank: (r != u32::MAX).then(|| (r as usize, e.ranked[r as usize].1)),
        })
    }

    /// Slice id of the nearest event at or above tree event `i` whose name is a source location
    /// (`file.py(N): func`).
    pub fn source(&self, c: &Capture, i: usize) -> Option<u32> {
        let mut k = i as u32;
        while k != NO_PARENT {
            let id = *self.events.get(k as usize)?;
            if tree::is_source(c.slice_name(id)) {
                return Some(id);
            }
            k = self.eval.parent[k as usize];
        }
        None
    }

    /// The ranked events, best first: (slice id, tree index, score).
    pub fn ranked(&self) -> impl Iterator<Item = (u32, usize, f64)> + '_ {
        self.eval
            .ranked
            .iter()
            .map(|&(e, s)| (self.events[e as usize], e as usize, s))
    }
}

/// Builds the columns of `roles` (kernels filtered by `keep`) and evaluates them; `events` is left
/// empty for the caller to move `roles.tree` into.
fn rank_roles(
    c: &Capture,
    roles: &select::Roles,
    mode: Mode,
    keep: impl Fn(u32) -> bool,
) -> Ranking {
    let s = &c.slices;
    let kernels: Vec<u32> = roles.kernels.iter().copied().filter(|&k| keep(k)).collect();
    let kiv: Vec<(Ps, Ps)> = kernels
        .iter()
        .map(|&k| (s.start[k as usize], s.end(k as usize)))
        .collect();
    let kcorr: Vec<u64> = kernels.iter().map(|&k| s.corr(k as usize)).collect();
    // When kernels were filtered (one device), keep only the launches of the kept kernels.
    let launches: Vec<u32> = if kernels.len() == roles.kernels.len() {
        roles.launches.clone()
    } else {
        let mut ids = kcorr.clone();
        ids.sort_unstable();
        roles
            .launches
            .iter()
            .copied()
            .filter(|&l| {
                ids.binary_search(&s.corr(roles.tree[l as usize] as usize))
                    .is_ok()
            })
            .collect()
    };
    let lcorr: Vec<u64> = launches
        .iter()
        .map(|&l| s.corr(roles.tree[l as usize] as usize))
        .collect();
    let inp = Input {
        start: &roles.start,
        end: &roles.end,
        groups: &roles.groups,
        launches: &launches,
        launch_corr: &lcorr,
        kernels: &kiv,
        kernel_corr: &kcorr,
        last_of_id: roles.last_of_id,
    };
    let eval = evaluate(&inp, mode);
    Ranking {
        events: Vec::new(),
        launches: launches.len(),
        kernels: kernels.len(),
        eval,
    }
}

/// Ranks the CPU events of a capture (analysis.md §b). A capture without kernels gets no points,
/// no idle intervals and no candidates.
pub fn rank(c: &Capture, mode: Mode) -> Ranking {
    let roles = select::select(c, mode);
    let mut r = rank_roles(c, &roles, mode, |_| true);
    r.events = roles.tree;
    r
}

/// Queue depth and idle intervals of one device, for a timeline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceQueue {
    /// The device's process (Kineto GPU pid, XPlane `/device:GPU:N` plane).
    pub process: u32,
    /// Queue depth as a step series `(time, depth)`, ps; the depth holds until the next entry.
    pub steps: Vec<(Ps, u32)>,
    /// Idle intervals (merged union, non-empty), ps.
    pub idle: Vec<(Ps, Ps)>,
}

/// Per device: the same queue-depth and idle computation restricted to that device's kernels (a
/// launch counts for the device of the kernel it links to; torch computes one queue over all
/// devices, which is what [`rank`] ranks with).
pub fn device_queues(c: &Capture, mode: Mode) -> Vec<DeviceQueue> {
    queues_of(c, &select::select(c, mode))
}

/// [`rank`] and [`device_queues`] from one selection.
pub fn rank_and_queues(c: &Capture, mode: Mode) -> (Ranking, Vec<DeviceQueue>) {
    let roles = select::select(c, mode);
    let queues = queues_of(c, &roles);
    let mut r = rank_roles(c, &roles, mode, |_| true);
    r.events = roles.tree;
    (r, queues)
}

/// The device queues of `roles`: kernels and launches bucketed by device in one pass, then each
/// device's links, points and idle intervals (devices split over two threads).
fn queues_of(c: &Capture, roles: &select::Roles) -> Vec<DeviceQueue> {
    let s = &c.slices;
    let dev_of: Vec<u32> = roles
        .kernels
        .iter()
        .map(|&k| {
            c.tracks
                .get(c.track_of(k) as usize)
                .map_or(u32::MAX, |t| t.process)
        })
        .collect();
    // Few devices: collect them without sorting a copy of every kernel's device.
    let mut procs: Vec<u32> = Vec::new();
    let mut last = None;
    for &p in &dev_of {
        if last != Some(p) && !procs.contains(&p) {
            procs.push(p);
        }
        last = Some(p);
    }
    procs.sort_unstable();
    let nd = procs.len();
    let slot = |p: u32| procs.binary_search(&p).unwrap_or(0);
    // Kernels per device, in start order.
    let mut kernels: Vec<Vec<u32>> = vec![Vec::new(); nd];
    for (&k, &p) in roles.kernels.iter().zip(&dev_of) {
        kernels[slot(p)].push(k);
    }
    // Launches per device: those whose correlation id is among the device's kernels (all of them
    // when one device holds every kernel).
    let mut launches: Vec<Vec<u32>> = vec![Vec::new(); nd];
    if nd == 1 {
        launches[0] = roles.launches.clone();
    } else {
        let mut corr_dev: Vec<(u64, u32)> = roles
            .kernels
            .iter()
            .zip(&dev_of)
            .map(|(&k, &p)| (s.corr(k as usize), slot(p) as u32))
            .collect();
        corr_dev.sort_unstable();
        corr_dev.dedup();
        for &l in &roles.launches {
            let corr = s.corr(roles.tree[l as usize] as usize);
            let lo = corr_dev.partition_point(|e| e.0 < corr);
            for &(_, d) in corr_dev[lo..].iter().take_while(|e| e.0 == corr) {
                launches[d as usize].push(l);
            }
        }
    }
    let edges = tree_edges(&roles.start, &roles.end, || {
        tree::build(&roles.start, &roles.end, &roles.groups).order
    });
    let one = |d: usize| -> DeviceQueue {
        let (ks, ls) = (&kernels[d], &launches[d]);
        let kiv: Vec<(Ps, Ps)> = ks
            .iter()
            .map(|&k| (s.start[k as usize], s.end(k as usize)))
            .collect();
        let kcorr: Vec<u64> = ks.iter().map(|&k| s.corr(k as usize)).collect();
        let lcorr: Vec<u64> = ls
            .iter()
            .map(|&l| s.corr(roles.tree[l as usize] as usize))
            .collect();
        let liv: Vec<(Ps, Ps)> = ls
            .iter()
            .map(|&l| (roles.start[l as usize], roles.end[l as usize]))
            .collect();
        let kernel_of = link_rule(roles.last_of_id, &lcorr, &kcorr);
        let points = queue::points(&liv, &kernel_of, &kiv);
        let idle = union(&idle::idle_intervals(&points, edges));
        DeviceQueue {
            process: procs[d],
            steps: queue::steps(&points),
            idle,
        }
    };
    let half = nd / 2;
    let (mut a, b) = par2(
        || (0..half).map(one).collect::<Vec<_>>(),
        || (half..nd).map(one).collect::<Vec<_>>(),
    );
    a.extend(b);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The per-device queues as first written: the whole ranking once per device.
    fn reference_queues(c: &Capture, mode: Mode) -> Vec<DeviceQueue> {
        let roles = select::select(c, mode);
        let mut procs: Vec<u32> = roles
            .kernels
            .iter()
            .map(|&k| c.tracks[c.track_of(k) as usize].process)
            .collect();
        procs.sort_unstable();
        procs.dedup();
        procs
            .into_iter()
            .map(|p| {
                let r = rank_roles(c, &roles, mode, |k| {
                    c.tracks[c.track_of(k) as usize].process == p
                });
                DeviceQueue {
                    process: p,
                    steps: queue::steps(&r.eval.points),
                    idle: union(&r.eval.idle),
                }
            })
            .collect()
    }

    #[test]
    fn one_pass_queues_match_per_device_rankings() {
        let mut devices = 0;
        for f in [
            "tests/fixtures/chrome/alexnet_cuda_sync.json.gz",
            "tests/fixtures/chrome/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
            "tests/fixtures/chrome/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
            "tests/fixtures/gpu/hand_two_streams.json",
        ] {
            let p = std::path::Path::new(f);
            let cref = crate::ui::catalog::CaptureRef::from_file(p, p.parent().unwrap());
            let c = crate::ui::catalog::load(&cref, &crate::formats::Progress::default()).unwrap();
            for mode in [Mode::Default, Mode::Compat] {
                let q = device_queues(&c, mode);
                assert_eq!(q, reference_queues(&c, mode), "{f} {mode:?}");
                devices += q.len();
                let (r, q2) = rank_and_queues(&c, mode);
                assert_eq!(q2, q);
                let plain = rank(&c, mode);
                assert_eq!(r.eval.ranked, plain.eval.ranked);
                assert_eq!(r.eval.idle_ps, plain.eval.idle_ps);
            }
        }
        assert!(devices >= 5, "{devices}");
    }

    /// A Kineto capture with launches on two threads and kernels on three devices (some ids
    /// shared across devices, some unlinked), from a fixed pseudo-random seed.
    fn three_devices(seed: u64) -> Capture {
        let mut x = seed;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let mut ev = Vec::new();
        let mut t = [0u64; 2];
        for corr in 1..=120u64 {
            let th = next(2) as usize;
            t[th] += 1 + next(5);
            let cat = if next(4) == 0 {
                "cpu_op"
            } else {
                "cuda_runtime"
            };
            let name = if cat == "cpu_op" {
                "aten::mm"
            } else {
                "cudaLaunchKernel"
            };
            ev.push(format!(
                "{{\"ph\":\"X\",\"cat\":\"{cat}\",\"name\":\"{name}\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{\"correlation\":{corr}}}}}",
                th + 1,
                t[th],
                1 + next(3)
            ));
            for _ in 0..next(3) {
                let dev = 10 + next(3);
                let ts = t[th] + next(40);
                ev.push(format!(
                    "{{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":{dev},\"tid\":7,\"ts\":{ts},\"dur\":{},\"args\":{{\"correlation\":{corr},\"device\":{dev}}}}}",
                    1 + next(9)
                ));
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.pt.trace.json");
        std::fs::write(
            &path,
            format!("{{\"schemaVersion\":1,\"traceEvents\":[{}]}}", ev.join(",")),
        )
        .unwrap();
        let src = crate::model::SourceInfo {
            path: path.clone(),
            ..Default::default()
        };
        crate::formats::load(&path, src, &crate::formats::Progress::default()).unwrap()
    }

    #[test]
    fn one_pass_queues_match_on_several_devices() {
        for seed in 0..6 {
            let c = three_devices(seed);
            for mode in [Mode::Default, Mode::Compat] {
                let q = device_queues(&c, mode);
                assert_eq!(q.len(), 3, "seed {seed}");
                assert_eq!(q, reference_queues(&c, mode), "seed {seed} {mode:?}");
            }
        }
    }
}
