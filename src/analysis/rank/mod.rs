//! "What should I optimize?": torch's `BasicEvaluation` ranking (analysis.md §b) over a loaded
//! capture — self time, queue depth, idle time, falling queue-depth phases and scores — in two
//! modes: [`Mode::Default`] (what torch intends) and [`Mode::Compat`] (torch's code, quirks
//! included). Everything is O(n log n); see docs/analysis.md.
//!
//! [`evaluate`] works on plain columns (tested against brute force); [`rank`] picks the columns
//! from a [`Capture`] and keeps per-event lookups for a details pane; [`device_queues`] gives the
//! queue depth as a step series and the idle intervals per device for a timeline.

pub mod cover;
pub mod idle;
pub mod queue;
pub mod score;
pub mod select;
pub mod tree;

use crate::model::{Capture, Ps};
use cover::{CompatOverlap, Cover, union};
use queue::{NO_KERNEL, QueuePoint};
use tree::NO_PARENT;

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

/// Runs steps 1–4 of analysis.md §b on columns.
pub fn evaluate(inp: &Input, mode: Mode) -> Evaluation {
    let n = inp.start.len();
    let tr = tree::build(inp.start, inp.end, inp.groups);
    // Step 2: link and queue depth.
    let kernel_of = queue::link(inp.launch_corr, inp.kernel_corr);
    let linked = kernel_of.iter().filter(|&&k| k != NO_KERNEL).count();
    let launch_iv: Vec<(Ps, Ps)> = inp
        .launches
        .iter()
        .map(|&l| (inp.start[l as usize], inp.end[l as usize]))
        .collect();
    let points = queue::points(&launch_iv, &kernel_of, inp.kernels);
    let queue_depth: Vec<u32> = inp
        .start
        .iter()
        .map(|&t| queue::depth_at(&points, t))
        .collect();
    // Step 3: idle intervals; edges from the first start and from the end of the latest-starting
    // event (ties: the last in torch's metrics order).
    let edges = tree_edges(inp, &tr.order);
    let idle_iv = idle::idle_intervals(&points, edges);
    let falling = idle::falling_phases(&points);
    let mut idle_ps = vec![0; n];
    let mut touches = vec![false; n];
    match mode {
        Mode::Default => {
            let ic = Cover::new(union(&idle_iv));
            let fc = Cover::new(union(&falling));
            for i in 0..n {
                idle_ps[i] = ic.overlap(inp.start[i], inp.end[i]);
                touches[i] = fc.overlap(inp.start[i], inp.end[i]) > 0;
            }
        }
        Mode::Compat => {
            let mut ic = CompatOverlap::new(idle_iv.clone());
            let mut fc = CompatOverlap::new(falling.clone());
            for &e in &tr.order {
                let e = e as usize;
                idle_ps[e] = ic.next(inp.start[e], inp.end[e]);
            }
            for &e in &tr.order {
                let e = e as usize;
                touches[e] = fc.next(inp.start[e], inp.end[e]) > 0;
            }
        }
    }
    // Step 4: candidates in metrics order, scores, order.
    let cand: Vec<u32> = tr
        .order
        .iter()
        .copied()
        .filter(|&e| touches[e as usize])
        .collect();
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
/// the last in torch's metrics order (`order`); `None` without events.
fn tree_edges(inp: &Input, order: &[u32]) -> Option<(Ps, Ps)> {
    let mut first: Option<Ps> = None;
    let mut last: Option<(Ps, Ps)> = None;
    for &e in order {
        let (s, en) = (inp.start[e as usize], inp.end[e as usize]);
        first = Some(first.map_or(s, |f| f.min(s)));
        if last.is_none_or(|(ls, _)| s >= ls) {
            last = Some((s, en));
        }
    }
    Some((first?, last?.1))
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

/// Builds the columns of `roles` (kernels filtered by `keep`) and evaluates them.
fn rank_roles(
    c: &Capture,
    roles: &select::Roles,
    mode: Mode,
    keep: impl Fn(u32) -> bool,
) -> Ranking {
    let s = &c.slices;
    let start: Vec<Ps> = roles.tree.iter().map(|&i| s.start[i as usize]).collect();
    let end: Vec<Ps> = roles.tree.iter().map(|&i| s.end(i as usize)).collect();
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
        start: &start,
        end: &end,
        groups: &roles.groups,
        launches: &launches,
        launch_corr: &lcorr,
        kernels: &kiv,
        kernel_corr: &kcorr,
    };
    let eval = evaluate(&inp, mode);
    Ranking {
        events: roles.tree.clone(),
        launches: launches.len(),
        kernels: kernels.len(),
        eval,
    }
}

/// Ranks the CPU events of a capture (analysis.md §b). A capture without kernels gets no points,
/// no idle intervals and no candidates.
pub fn rank(c: &Capture, mode: Mode) -> Ranking {
    let roles = select::select(c, mode);
    rank_roles(c, &roles, mode, |_| true)
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
