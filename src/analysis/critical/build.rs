//! Builds one step's graph: selects the step's host operators and device activities, gives each
//! two nodes, then adds the host edges (call stacks per thread, thread waits) and the device
//! edges (`device.rs`). Rules: docs/critical-path.md.

use super::graph::{Graph, Kind};
use super::hta_index::{HtaEvents, hta_queue};
use super::options::{Mode, Options, Skipped};
use super::roles::{self, Roles, THREAD_WAIT, host_kind};
use crate::model::{Capture, Category, NO_SLICE, Ps};

/// Per-capture scratch reused by every step: the graph, the selected events and the slice →
/// node map. Nothing here is allocated per event.
pub struct Builder<'a> {
    pub(super) c: &'a Capture,
    pub(super) roles: &'a Roles,
    pub(super) opts: Options,
    /// The graph of the current step.
    pub g: Graph,
    /// Slice id → its start node (end node = start + 1), or `NO_SLICE`.
    pub(super) node_of: Vec<u32>,
    /// Node → its event.
    pub node_ev: Vec<u32>,
    /// Selected host operators, grouped by thread (`host_off`).
    pub(super) host: Vec<u32>,
    pub(super) host_off: Vec<u32>,
    /// Thread-wait slices (`run_backward`) of the step: (thread index, slice).
    pub(super) waits: Vec<(u32, u32)>,
    /// Selected device activities, grouped by stream (`act_off`).
    pub(super) acts: Vec<u32>,
    pub(super) act_off: Vec<u32>,
    /// Top-level operators per thread, in time order: (start node, end node), grouped by
    /// thread (`top_off`).
    pub(super) tops: Vec<(u32, u32)>,
    pub(super) top_off: Vec<u32>,
    /// Gap edges (default mode) before thread waits drop some: (src, dst, event, thread).
    pub(super) gaps: Vec<(u32, u32, u32, u32)>,
    /// Blocking calls that waited on the device (their start nodes): their own time is not
    /// added, the wait edge carries it.
    pub(super) waited: Vec<bool>,
    stack: Vec<u32>,
    merged: Vec<u32>,
    /// HTA sync markers (`cuda_sync` on a stream) of the step: (slice, stream index).
    pub(super) syncs: Vec<(u32, u32)>,
    /// Activities launched by a blocking call: (call, activity).
    pub(super) blocking_acts: Vec<(u32, u32)>,
    /// Device scratch: per stream its last end node; activities by end; HTA's order.
    pub(super) last: Vec<u32>,
    pub(super) ends: Vec<(Ps, u32, Ps)>,
    pub(super) order: Vec<(Ps, u32, u32)>,
    /// The file clock's offset, ns (HTA rounding).
    shift_ns: i64,
    /// XPlane: HTA does not read it; times are not rounded.
    hta_no_rounding: bool,
    /// HTA's event-sync index (HTA mode only).
    pub(super) hta_events: HtaEvents,
    /// HTA: (waiting activity, activity it waits for), sorted.
    pub(super) kernel_sync: Vec<(u32, u32)>,
    /// HTA's queue lengths per activity (HTA mode only).
    pub(super) queue: Vec<(i32, i32)>,
    /// Counts of what the rules could not join (shown, never dropped silently).
    pub skipped: Skipped,
    /// Full mode: CUDA/HIP graph launches as one device node each (crate::analysis::graphs).
    pub(super) graphs: GraphNodes,
}

/// The device node of each CUDA/HIP graph launch (full mode): the graph's first activity stands
/// for the whole graph (its span is the graph's, first start → last end) and its other
/// activities are left out of the graph of the step.
#[derive(Clone, Debug, Default)]
pub struct GraphNodes {
    /// Per slice (empty without graphs): 0 not in a graph, 1 a member left out, 2 the graph's
    /// representative.
    role: Vec<u8>,
    /// Representative activity → (launch slice, activities, span start, span end), sorted.
    pub reps: Vec<(u32, u32, u32, Ps, Ps)>,
}

impl GraphNodes {
    fn of(c: &Capture) -> GraphNodes {
        let g = crate::analysis::graphs::GraphLaunches::of(c);
        if g.is_empty() {
            return GraphNodes::default();
        }
        let mut role = vec![0u8; c.slices.len()];
        let mut reps = Vec::with_capacity(g.launches.len());
        for l in &g.launches {
            let ks = g.kernels_of(l);
            for &k in ks {
                if let Some(r) = role.get_mut(k as usize) {
                    *r = 1;
                }
            }
            if let Some(&first) = ks.first() {
                role[first as usize] = 2;
                reps.push((first, l.launch, ks.len() as u32, l.span.0, l.span.1));
            }
        }
        reps.sort_unstable();
        GraphNodes { role, reps }
    }

    /// The graph `id` represents: (launch, activities, start, end).
    pub fn rep(&self, id: u32) -> Option<(u32, u32, Ps, Ps)> {
        if self.role.get(id as usize) != Some(&2) {
            return None;
        }
        let k = self.reps.binary_search_by_key(&id, |r| r.0).ok()?;
        let r = self.reps[k];
        Some((r.1, r.2, r.3, r.4))
    }

    /// True for an activity of a graph that its representative stands for.
    fn left_out(&self, id: u32) -> bool {
        self.role.get(id as usize) == Some(&1)
    }
}

impl<'a> Builder<'a> {
    /// A builder for `c`.
    pub fn new(c: &'a Capture, roles: &'a Roles, opts: Options) -> Builder<'a> {
        Builder {
            c,
            roles,
            opts,
            g: Graph::default(),
            node_of: vec![NO_SLICE; c.slices.len()],
            node_ev: Vec::new(),
            host: Vec::new(),
            host_off: Vec::new(),
            waits: Vec::new(),
            acts: Vec::new(),
            act_off: Vec::new(),
            tops: Vec::new(),
            top_off: Vec::new(),
            gaps: Vec::new(),
            waited: Vec::new(),
            stack: Vec::new(),
            merged: Vec::new(),
            syncs: Vec::new(),
            blocking_acts: Vec::new(),
            last: Vec::new(),
            ends: Vec::new(),
            order: Vec::new(),
            shift_ns: c.file_clock0_ns(),
            hta_no_rounding: roles.xplane,
            hta_events: if opts.mode == Mode::Hta {
                HtaEvents::new(c, roles)
            } else {
                Default::default()
            },
            kernel_sync: Vec::new(),
            queue: if opts.mode == Mode::Hta {
                hta_queue(c, roles)
            } else {
                Vec::new()
            },
            skipped: Skipped::default(),
            graphs: if opts.mode == Mode::Full {
                GraphNodes::of(c)
            } else {
                GraphNodes::default()
            },
        }
    }

    /// Start and end of slice `id`; in HTA mode rounded inward to whole µs of the file's clock
    /// as HTA's loader does (`ceil(ts)`, `floor(ts + dur)` in f64 µs).
    #[inline]
    pub(super) fn span(&self, id: u32) -> (Ps, Ps) {
        if let Some((_, _, a, z)) = self.graphs.rep(id) {
            return (a, z);
        }
        self.round(
            self.c.slices.start[id as usize],
            self.c.slices.end(id as usize),
        )
    }

    /// HTA's rounding of a span (identity outside HTA mode).
    #[inline]
    fn round(&self, s: Ps, e: Ps) -> (Ps, Ps) {
        if self.opts.mode != Mode::Hta || self.hta_no_rounding {
            return (s, e);
        }
        let ts = (s.div_euclid(1000) + self.shift_ns) as f64 / 1000.0;
        let dur = (e - s).div_euclid(1000) as f64 / 1000.0;
        let back = |us: f64| (us as i64 * 1000 - self.shift_ns) * 1000;
        (back(ts.ceil()), back((ts + dur).floor()))
    }

    #[inline]
    pub(super) fn start(&self, id: u32) -> Ps {
        self.span(id).0
    }

    #[inline]
    pub(super) fn end(&self, id: u32) -> Ps {
        self.span(id).1
    }

    /// Gives `id` its two nodes.
    fn add_nodes(&mut self, id: u32) {
        let s = self.g.node(self.start(id));
        self.g.node(self.end(id));
        self.node_ev.push(id);
        self.node_ev.push(id);
        self.waited.push(false);
        self.waited.push(false);
        self.node_of[id as usize] = s;
    }

    /// Builds the graph of the step `[lo, hi]` (rounded like HTA in HTA mode).
    pub fn build(&mut self, lo: Ps, hi: Ps) {
        self.reset();
        let (lo, hi) = self.round(lo, hi);
        self.select_host(lo, hi);
        self.select_device(lo, hi);
        if self.opts.mode == Mode::Full {
            self.gpu_waits();
        }
        self.walk_threads();
        if self.opts.mode == Mode::Full {
            self.thread_waits();
        }
        self.device_edges();
    }

    fn reset(&mut self) {
        for &id in self.host.iter().chain(&self.acts) {
            self.node_of[id as usize] = NO_SLICE;
        }
        self.g.clear();
        self.node_ev.clear();
        self.waited.clear();
        self.host.clear();
        self.host_off.clear();
        self.waits.clear();
        self.acts.clear();
        self.act_off.clear();
        self.tops.clear();
        self.top_off.clear();
        self.gaps.clear();
        self.syncs.clear();
        self.blocking_acts.clear();
        self.skipped = Skipped::default();
    }

    /// Host operators starting in the window with a duration (HTA's clipping), per thread.
    fn select_host(&mut self, lo: Ps, hi: Ps) {
        let (c, roles) = (self.c, self.roles);
        for (ti, &t) in roles.threads.iter().enumerate() {
            self.host_off.push(self.host.len() as u32);
            let tr = &c.tracks[t as usize];
            let (a, b) = (tr.slices.0 as usize, tr.slices.1 as usize);
            // Rounding moves a start by under 1 µs.
            let first = a + c.slices.start[a..b].partition_point(|&s| s < lo - 1_000_000);
            for id in first as u32..b as u32 {
                let i = id as usize;
                if c.slices.start[i] > hi + 1_000_000 {
                    break;
                }
                let (s, e) = self.span(id);
                if e <= s || s < lo || s > hi {
                    continue;
                }
                let fl = roles.flags(c, id);
                if fl & THREAD_WAIT != 0 {
                    self.waits.push((ti as u32, id));
                }
                if host_kind(c, id, roles.xplane).is_some() {
                    self.host.push(id);
                }
            }
            let from = self.host_off[ti] as usize;
            for k in from..self.host.len() {
                let id = self.host[k];
                self.add_nodes(id);
            }
        }
        self.host_off.push(self.host.len() as u32);
    }

    /// Device activities whose launch starts in the window (with a duration), per stream.
    fn select_device(&mut self, lo: Ps, hi: Ps) {
        let (c, roles) = (self.c, self.roles);
        for (k, &t) in roles.streams.iter().enumerate() {
            self.act_off.push(self.acts.len() as u32);
            let tr = &c.tracks[t as usize];
            let (a, b) = (tr.slices.0 as usize, tr.slices.1 as usize);
            let first = a + c.slices.start[a..b].partition_point(|&s| s < lo);
            let limit = hi.saturating_add(roles.max_delay);
            for id in first as u32..b as u32 {
                let i = id as usize;
                if c.slices.start[i] > limit {
                    break;
                }
                let sync = c.slices.kind(i) == Category::Sync;
                if !sync && roles::activity_kind(c, id, roles.xplane).is_none() {
                    continue;
                }
                if self.graphs.left_out(id) {
                    continue;
                }
                let l = roles.launch_of(c, k, id);
                if sync {
                    if l != NO_SLICE && self.node_of[l as usize] != NO_SLICE {
                        self.syncs.push((id, k as u32));
                    }
                    continue;
                }
                if l == NO_SLICE {
                    self.skipped.unlaunched += 1;
                    continue;
                }
                let (ls, le) = self.span(l);
                if ls < lo || ls > hi || le <= ls {
                    continue;
                }
                self.acts.push(id);
                if roles.flags(c, l) & roles::BLOCKING != 0 {
                    self.blocking_acts.push((l, id));
                }
            }
            let from = self.act_off[k] as usize;
            for j in from..self.acts.len() {
                let id = self.acts[j];
                self.add_nodes(id);
            }
        }
        self.act_off.push(self.acts.len() as u32);
    }

    /// Walks every thread's call stack.
    fn walk_threads(&mut self) {
        let mut list = std::mem::take(&mut self.merged);
        for ti in 0..self.roles.threads.len() {
            self.top_off.push(self.tops.len() as u32);
            list.clear();
            let (a, b) = (self.host_off[ti] as usize, self.host_off[ti + 1] as usize);
            list.extend_from_slice(&self.host[a..b]);
            self.walk(ti as u32, &list);
        }
        self.top_off.push(self.tops.len() as u32);
        self.merged = list;
    }

    /// One call stack (HTA `_construct_graph_from_call_stack`): the nodes of operators in
    /// (start, longest first) order, each joined to the previous node of the thread.
    fn walk(&mut self, thread: u32, list: &[u32]) {
        let hta = self.opts.mode == Mode::Hta;
        self.stack.clear();
        let mut last: Option<u32> = None; // node
        let mut top_start = NO_SLICE;
        for &id in list {
            let s = self.start(id);
            while let Some(&top) = self.stack.last() {
                if self.end(top) <= s {
                    self.exit(top, &mut last, thread, &mut top_start, hta);
                } else {
                    break;
                }
            }
            self.enter(id, &mut last, thread, &mut top_start, hta);
        }
        while let Some(&top) = self.stack.last() {
            self.exit(top, &mut last, thread, &mut top_start, hta);
        }
    }

    /// The event an edge src → dst inside a call stack is attributed to (HTA's four cases),
    /// with its kind.
    fn attribute(&self, src: u32, dst: u32, parent: u32) -> (Kind, u32) {
        let ev = if src.is_multiple_of(2) {
            self.node_ev[src as usize]
        } else if dst % 2 == 1 {
            self.node_ev[dst as usize]
        } else {
            parent
        };
        if ev == NO_SLICE {
            return (Kind::Gap, NO_SLICE);
        }
        let k = host_kind(self.c, ev, self.roles.xplane).unwrap_or(Kind::CpuOp);
        (k, ev)
    }

    fn enter(&mut self, id: u32, last: &mut Option<u32>, thread: u32, top: &mut u32, hta: bool) {
        let sn = self.node_of[id as usize];
        let parent = self.stack.last().copied().unwrap_or(NO_SLICE);
        if let Some(l) = *last {
            if self.stack.is_empty() {
                if hta {
                    self.g.edge(l, sn, Kind::Dependency, NO_SLICE);
                } else {
                    // Time between top-level operators: attributed to the innermost slice
                    // around the next one (a Python frame, the step annotation).
                    let p = self.c.slices.parent[id as usize];
                    self.gaps.push((l, sn, p, thread));
                }
            } else {
                let (k, ev) = self.attribute(l, sn, parent);
                self.g.edge(l, sn, k, ev);
            }
        }
        if self.stack.is_empty() {
            *top = sn;
        }
        *last = Some(sn);
        self.stack.push(id);
    }

    fn exit(&mut self, id: u32, last: &mut Option<u32>, _thread: u32, top: &mut u32, hta: bool) {
        self.stack.pop();
        let en = self.node_of[id as usize] + 1;
        let parent = self.stack.last().copied().unwrap_or(NO_SLICE);
        if let Some(l) = *last {
            let (k, ev) = self.attribute(l, en, parent);
            let blocking = self.roles.flags(self.c, id) & roles::BLOCKING != 0;
            if hta && blocking {
                self.g.edge_w(l, en, 0, k, ev);
            } else if !(self.waited[en as usize - 1]) {
                self.g.edge(l, en, k, ev);
            }
        }
        if self.stack.is_empty() {
            self.tops.push((*top, en));
        }
        *last = Some(en);
    }
}
