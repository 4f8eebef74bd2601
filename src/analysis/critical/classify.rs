//! What a step's critical path spent its time on: by kind, by track, by event, and the one
//! sentence that says what bounds the step.

use super::graph::{Edge, Kind, LongestPath};
use super::options::Skipped;
use crate::analysis::steps::Step;
use crate::model::{Capture, Category, NO_SLICE, Ps};
use rustc_hash::FxHashMap;

/// One event's time on the path, or one gap's: each `gap` (time between two top-level
/// operators of a thread) is its own entry, with its own start and end, even when several are
/// attributed to the same enclosing slice (a Python frame spanning the whole capture).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopEvent {
    /// Slice id (`NO_SLICE`: time attributed to no event, a gap at the top of a thread); for a
    /// gap, the innermost slice around it.
    pub event: u32,
    /// The kind its time was counted as (its largest; [`Kind::Gap`] for a gap).
    pub kind: Kind,
    /// Time on the path, ps.
    pub ps: Ps,
    /// Start, ps: a gap's own (the end of the operator before it); else the event's start.
    pub start: Ps,
    /// End, ps: a gap's own (the start of the operator after it); else the event's end.
    pub end: Ps,
}

impl TopEvent {
    /// True for one gap between operators (not an event's time).
    pub fn is_gap(&self) -> bool {
        self.kind == Kind::Gap
    }
}

/// Which entry of the path's list an edge adds to: an event (all its edges together) or one
/// gap edge (by its index on the path).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Entry {
    Event(u32),
    Gap(usize),
}

/// The entry of path edge `k` ([`Entry`]).
fn entry(k: usize, e: &Edge) -> Entry {
    if e.kind == Kind::Gap {
        Entry::Gap(k)
    } else {
        Entry::Event(e.event)
    }
}

/// The critical path of one step.
#[derive(Clone, Debug)]
pub struct StepPath {
    /// The step.
    pub step: Step,
    /// Path length, ps.
    pub path: Ps,
    /// Time by kind, ps (every kind, in [`Kind::ALL`] order).
    pub by_kind: Vec<(Kind, Ps)>,
    /// Time by track (longest first): (track, ps).
    pub tracks: Vec<(u32, Ps)>,
    /// Events by time on the path (longest first, at most `top`).
    pub top: Vec<TopEvent>,
    /// The path's edges, first to last.
    pub edges: Vec<Edge>,
    /// The time each edge of [`StepPath::edges`] spans (its source's and destination's node
    /// times), ps.
    pub spans: Vec<(Ps, Ps)>,
    /// The distinct events the path passes, in path order (for jumping along it).
    pub events: Vec<u32>,
    /// Host threads with operator time on the path.
    pub threads: usize,
    /// Where the path waited for the device longest: the outermost operator around that
    /// blocking call.
    pub wait_site: Option<u32>,
    /// What the graph could not join.
    pub skipped: Skipped,
    /// The CUDA/HIP graph launches on the path, each one device node (full mode).
    pub graphs: Vec<GraphOnPath>,
}

/// A CUDA/HIP graph launch on a critical path: one device node from its first activity's
/// start to its last one's end (crate::analysis::graphs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphOnPath {
    /// The activity that stands for the graph: the event of its node's edges.
    pub event: u32,
    /// The launch call (`cudaGraphLaunch`, ...).
    pub launch: u32,
    /// Its activities.
    pub kernels: u32,
    /// First activity start, ps.
    pub start: Ps,
    /// Last activity end, ps.
    pub end: Ps,
}

impl StepPath {
    /// The graph `event` stands for, when it is one's node.
    pub fn graph(&self, event: u32) -> Option<&GraphOnPath> {
        self.graphs.iter().find(|g| g.event == event)
    }
}

impl StepPath {
    /// Time of kind `k`, ps.
    pub fn kind_ps(&self, k: Kind) -> Ps {
        self.by_kind.iter().find(|x| x.0 == k).map_or(0, |x| x.1)
    }

    /// The events and gaps the path passes with time on it, in path order (an event where its
    /// first edge is; its kind that of its first edge with time; each gap apart, with its own
    /// start and end). Edges of no time and edges attributed to no event, gaps excepted, are
    /// left out.
    pub fn rows(&self, c: &Capture) -> Vec<TopEvent> {
        let mut at: FxHashMap<Entry, usize> = FxHashMap::default();
        let mut out: Vec<TopEvent> = Vec::new();
        for (k, e) in self.edges.iter().enumerate() {
            if e.weight <= 0 || (e.event == NO_SLICE && e.kind != Kind::Gap) {
                continue;
            }
            let key = entry(k, e);
            match at.get(&key) {
                Some(&i) => out[i].ps += e.weight,
                None => {
                    at.insert(key, out.len());
                    let (start, end) = match (key, self.graph(e.event)) {
                        (Entry::Event(_), Some(g)) => (g.start, g.end),
                        _ => span_of(c, key, self.spans.get(k).copied()),
                    };
                    out.push(TopEvent {
                        event: e.event,
                        kind: e.kind,
                        ps: e.weight,
                        start,
                        end,
                    });
                }
            }
        }
        out
    }
}

/// Start and end of an entry: a gap's own span, else the event's (`(0, 0)` for no event).
fn span_of(c: &Capture, key: Entry, gap: Option<(Ps, Ps)>) -> (Ps, Ps) {
    match key {
        Entry::Gap(_) => gap.unwrap_or((0, 0)),
        Entry::Event(ev) if (ev as usize) < c.slices.len() => {
            (c.slices.start[ev as usize], c.slices.end(ev as usize))
        }
        Entry::Event(_) => (0, 0),
    }
}

/// Sums the path `p` of the step graph `b` built.
pub(super) fn classify(
    c: &Capture,
    step: &Step,
    b: &super::build::Builder<'_>,
    p: &LongestPath,
    skipped: Skipped,
    top: usize,
) -> StepPath {
    let (g, node_ev, graph_nodes) = (&b.g, &b.node_ev[..], &b.graphs);
    let mut graphs: Vec<GraphOnPath> = Vec::new();
    let mut by_kind: Vec<(Kind, Ps)> = Kind::ALL.iter().map(|&k| (k, 0)).collect();
    let mut tracks: FxHashMap<u32, Ps> = FxHashMap::default();
    let mut per_ev: FxHashMap<Entry, (Ps, [Ps; 10])> = FxHashMap::default();
    let mut host_tracks: FxHashMap<u32, ()> = FxHashMap::default();
    let mut edges = Vec::with_capacity(p.edges.len());
    let mut spans = Vec::with_capacity(p.edges.len());
    let mut events: Vec<u32> = Vec::new();
    let mut wait: Option<(Ps, u32)> = None;
    for (n, &k) in p.edges.iter().enumerate() {
        let e = g.edges[k as usize];
        edges.push(e);
        let at = |x: u32| g.ts.get(x as usize).copied().unwrap_or(0);
        spans.push((at(e.src), at(e.dst)));
        let ki = Kind::ALL.iter().position(|&x| x == e.kind).unwrap_or(0);
        by_kind[ki].1 += e.weight;
        let owner = if e.event != NO_SLICE {
            e.event
        } else {
            node_ev[e.src as usize]
        };
        if owner != NO_SLICE && e.weight > 0 {
            let t = c.track_of(owner);
            *tracks.entry(t).or_default() += e.weight;
            if matches!(e.kind, Kind::CpuOp | Kind::Runtime) {
                host_tracks.insert(t, ());
            }
        }
        if e.weight > 0 || e.kind != Kind::Dependency {
            let slot = per_ev.entry(entry(n, &e)).or_default();
            slot.0 += e.weight;
            slot.1[ki] += e.weight;
        }
        for ev in [node_ev[e.src as usize], node_ev[e.dst as usize]] {
            if ev != NO_SLICE && events.last() != Some(&ev) {
                events.push(ev);
                if let Some((launch, kernels, start, end)) = graph_nodes.rep(ev)
                    && !graphs.iter().any(|g| g.event == ev)
                {
                    graphs.push(GraphOnPath {
                        event: ev,
                        launch,
                        kernels,
                        start,
                        end,
                    });
                }
            }
        }
        if e.kind == Kind::SyncWait && e.event != NO_SLICE {
            // The device time that led into this wait counts for the site too.
            if wait.is_none_or(|w| e.weight > w.0) {
                wait = Some((e.weight, e.event));
            }
        }
    }
    let mut tracks: Vec<(u32, Ps)> = tracks.into_iter().collect();
    tracks.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut top_events: Vec<TopEvent> = per_ev
        .into_iter()
        .filter(|(_, v)| v.0 > 0)
        .map(|(key, (ps, kinds))| {
            let best = (0..kinds.len())
                .max_by_key(|&i| (kinds[i], usize::MAX - i))
                .unwrap_or(0);
            let (event, gap) = match key {
                Entry::Event(ev) => (ev, None),
                Entry::Gap(n) => (edges[n].event, spans.get(n).copied()),
            };
            let (start, end) = match graph_nodes.rep(event) {
                Some((_, _, a, z)) if gap.is_none() => (a, z),
                _ => span_of(c, key, gap),
            };
            TopEvent {
                event,
                kind: Kind::ALL[best],
                ps,
                start,
                end,
            }
        })
        .collect();
    top_events.sort_unstable_by(|a, b| {
        b.ps.cmp(&a.ps)
            .then(a.event.cmp(&b.event))
            .then(a.start.cmp(&b.start))
    });
    top_events.truncate(top);
    StepPath {
        step: *step,
        path: p.length,
        by_kind,
        tracks,
        top: top_events,
        edges,
        spans,
        events,
        threads: host_tracks.len(),
        wait_site: wait.map(|(_, ev)| outermost_op(c, ev)),
        skipped,
        graphs,
    }
}

/// The outermost CPU operator around `id` (the user's call: `aten::item` around a copy and a
/// synchronize), or `id`.
pub(crate) fn outermost_op(c: &Capture, id: u32) -> u32 {
    c.ancestors(id)
        .filter(|&p| c.slices.kind(p as usize) == Category::CpuOp)
        .last()
        .unwrap_or(id)
}

fn pct(part: Ps, whole: Ps) -> f64 {
    if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    }
}

/// The sentence that says what bounds the step ("host-bound: 62 % CPU ops on 2 threads, 24 %
/// Python/framework between ops, 9 % GPU work and waits at `aten::item`"). `site` is the
/// wait site's name, already made safe for a terminal.
pub fn bounds_sentence(p: &StepPath, site: Option<&str>) -> String {
    if p.path <= 0 {
        return "no critical path: the step has no host operators or device activities".into();
    }
    let k = |x: Kind| p.kind_ps(x);
    let host = k(Kind::CpuOp) + k(Kind::Runtime) + k(Kind::Gap);
    let device = k(Kind::Kernel) + k(Kind::Memcpy) + k(Kind::Communication) + k(Kind::KernelGap);
    let launch = k(Kind::LaunchDelay);
    let wait = k(Kind::SyncWait);
    let head = if host >= device.max(launch) {
        "host-bound"
    } else if device >= launch {
        "GPU-bound"
    } else {
        "launch-bound"
    };
    let threads = if p.threads == 1 {
        "1 thread".to_string()
    } else {
        format!("{} threads", p.threads)
    };
    let mut parts: Vec<(Ps, String)> = vec![
        (
            k(Kind::CpuOp) + k(Kind::Runtime),
            format!("CPU ops on {threads}"),
        ),
        (k(Kind::Gap), "Python/framework between ops".into()),
        (
            k(Kind::Kernel) + k(Kind::Memcpy) + k(Kind::Communication),
            "GPU kernels and copies".into(),
        ),
        (k(Kind::KernelGap), "GPU idle between kernels".into()),
        (launch, "launch latency".into()),
        (
            wait,
            match site {
                Some(s) => format!("waiting for the GPU at `{s}`"),
                None => "waiting for the GPU".into(),
            },
        ),
    ];
    parts.sort_by_key(|b| std::cmp::Reverse(b.0));
    let list: Vec<String> = parts
        .iter()
        .filter(|x| pct(x.0, p.path) >= 0.5)
        .map(|x| format!("{:.0} % {}", pct(x.0, p.path), x.1))
        .collect();
    let mut s = format!("{head}: {}", list.join(", "));
    if wait == 0
        && let Some(site) = site
    {
        s.push_str(&format!(" (the device work ends at `{site}`)"));
    }
    s
}
