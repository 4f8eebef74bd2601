//! CUDA/HIP graph launches as units: each `cudaGraphLaunch` / `hipGraphLaunch` /
//! `cuGraphLaunch` with the device activities it launched (all the activities of its
//! correlation id, [`super::launch_link`]), their device span and busy time, the stream(s) they
//! ran on and the host op around the launch. `stats`, `flame`, `roofline`, `critical` and the
//! explorer's timeline read them (docs/stats.md, "CUDA/HIP graphs").
//!
//! Where a kernel's graph comes from is one function, [`kernel_graph_links`]: today the
//! correlation id of the replay launch; a merged capture trace can add its own links there.
//! Everything is linear in the capture (one pass over the launch → activity pairs, a parent
//! walk per launch).

use crate::analysis::flame::DeviceLinks;
use crate::analysis::stats::group_name;
use crate::model::{Capture, Category, NO_SLICE, Ps, StrId};
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::Hasher;

pub use super::graph_names::{graph_node_name, is_graph_launch_name};

/// False when no event name of `c` is a graph launch ([`is_graph_launch_name`]): then there
/// is nothing to link (one pass over the distinct names, not the events).
pub fn may_have_graphs(c: &Capture) -> bool {
    c.strings.iter().any(|(_, n)| is_graph_launch_name(n))
}

/// One graph launch and what it ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphLaunch {
    /// The host launch slice.
    pub launch: u32,
    /// The innermost CPU op or user annotation around the launch on its thread, or `NO_SLICE`.
    pub host_op: u32,
    /// Its activities: `GraphLaunches::kernels[kernels.0..kernels.1]`, in start order.
    pub kernels: (u32, u32),
    /// First activity start and last activity end, ps.
    pub span: (Ps, Ps),
    /// Σ activity durations, ps.
    pub busy_ps: Ps,
    /// The device tracks (streams) its activities ran on, ascending.
    pub streams: Vec<u32>,
    /// Hash of its activities' names in start order (equal graphs replay equal sequences).
    pub signature: u64,
}

impl GraphLaunch {
    /// Number of activities.
    pub fn kernel_count(&self) -> usize {
        (self.kernels.1 - self.kernels.0) as usize
    }
}

/// Every graph launch of a capture, by launch start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GraphLaunches {
    /// The launches, ordered by the launch slice's start.
    pub launches: Vec<GraphLaunch>,
    /// Activity slices of all launches, grouped by launch (see [`GraphLaunch::kernels`]).
    pub kernels: Vec<u32>,
}

/// Launch → activity pairs that make graphs: (graph launch slice, activity slice), sorted by
/// launch. The one source of kernel → graph links; today the replay launch's correlation id
/// (every activity with a graph launch's id belongs to it), and a merged capture trace's side
/// table ([`crate::model::GraphReplay`]: replayed kernel → original launch).
pub fn kernel_graph_links(c: &Capture, links: &DeviceLinks) -> Vec<(u32, u32)> {
    let mut is_graph: FxHashMap<StrId, bool> = FxHashMap::default();
    let mut out: Vec<(u32, u32)> = links
        .pairs
        .iter()
        .copied()
        .filter(|&(l, _)| {
            let Some(&name) = c.slices.name.get(l as usize) else {
                return false;
            };
            *is_graph
                .entry(name)
                .or_insert_with(|| is_graph_launch_name(c.strings.get(name)))
        })
        .collect();
    // Kernels the capture-trace merge re-linked to their capture-time launch call keep their
    // graph through the merge's side table (docs/graphs.md).
    out.extend(c.graph_replay.kernel_launch.iter().map(|&(k, l)| (l, k)));
    out.sort_unstable();
    out.dedup();
    out
}

/// For each of `launches` (any order), the innermost host op on its track whose time contains
/// it, or `NO_SLICE`: whatever lane group either is in (a step annotation that partly overlaps
/// Python frames is not a `Slices::parent`). A host op is a CPU op or user annotation; on an
/// XPlane capture also a host TraceMe not named like a runtime function (`a::b`) — the XLA thunk
/// (`command_buffer_1`) around `command_buffer::execute` and its `cuGraphLaunch`. One sweep per
/// track holding a launch, over that track's slices.
pub fn host_ops_of(c: &Capture, launches: &[u32]) -> Vec<u32> {
    let s = &c.slices;
    let xplane = c.format == Some(crate::model::Format::XPlane);
    let mut named: FxHashMap<StrId, bool> = FxHashMap::default();
    let mut is_op = |j: usize| match s.kind(j) {
        Category::CpuOp | Category::UserAnnotation => true,
        Category::Other if xplane => *named.entry(s.name[j]).or_insert_with(|| {
            let n = c.strings.get(s.name[j]);
            !n.is_empty() && !n.contains("::") && !is_graph_launch_name(n)
        }),
        _ => false,
    };
    let mut order: Vec<(u32, usize)> = launches
        .iter()
        .enumerate()
        .map(|(k, &l)| (l, k))
        .filter(|&(l, _)| (l as usize) < s.len())
        .collect();
    order.sort_unstable();
    let mut out = vec![NO_SLICE; launches.len()];
    let mut open: Vec<u32> = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let t = c.track_of(order[i].0);
        let Some(tr) = c.tracks.get(t as usize) else {
            break;
        };
        open.clear();
        let mut id = tr.slices.0;
        while i < order.len() && order[i].0 < tr.slices.1 {
            let (l, k) = order[i];
            while id < l {
                let j = id as usize;
                if is_op(j) {
                    open.retain(|&o| s.end(o as usize) > s.start[j]);
                    open.push(id);
                }
                id += 1;
            }
            let (a, z) = (s.start[l as usize], s.end(l as usize));
            out[k] = open
                .iter()
                .rev()
                .copied()
                .find(|&o| s.start[o as usize] <= a && s.end(o as usize) >= z)
                .unwrap_or(NO_SLICE);
            i += 1;
        }
    }
    out
}

impl GraphLaunches {
    /// Finds every graph launch of `c` with its activities.
    pub fn of(c: &Capture) -> GraphLaunches {
        if !may_have_graphs(c) {
            return GraphLaunches::default();
        }
        Self::of_links(c, &DeviceLinks::of(c))
    }

    /// Finds every graph launch of `c` among its launch → activity links.
    pub fn of_links(c: &Capture, links: &DeviceLinks) -> GraphLaunches {
        Self::from_links(c, &kernel_graph_links(c, links))
    }

    /// The launches made of `pairs` ((launch, activity), sorted by launch).
    pub fn from_links(c: &Capture, pairs: &[(u32, u32)]) -> GraphLaunches {
        let s = &c.slices;
        let mut out = GraphLaunches::default();
        let mut i = 0;
        while i < pairs.len() {
            let launch = pairs[i].0;
            let mut j = i;
            while j < pairs.len() && pairs[j].0 == launch {
                j += 1;
            }
            let lo = out.kernels.len();
            out.kernels.extend(
                pairs[i..j]
                    .iter()
                    .map(|p| p.1)
                    .filter(|&a| (a as usize) < s.len()),
            );
            i = j;
            let ks = &mut out.kernels[lo..];
            if ks.is_empty() || (launch as usize) >= s.len() {
                out.kernels.truncate(lo);
                continue;
            }
            ks.sort_unstable_by_key(|&a| (s.start[a as usize], a));
            let mut h = FxHasher::default();
            let (mut a, mut z, mut busy) = (Ps::MAX, Ps::MIN, 0);
            let mut streams: Vec<u32> = Vec::new();
            for &k in ks.iter() {
                let k = k as usize;
                h.write_u32(s.name[k].0);
                a = a.min(s.start[k]);
                z = z.max(s.end(k));
                busy += s.dur[k];
                let t = c.track_of(k as u32);
                if !streams.contains(&t) {
                    streams.push(t);
                }
            }
            streams.sort_unstable();
            out.launches.push(GraphLaunch {
                launch,
                host_op: NO_SLICE,
                kernels: (lo as u32, out.kernels.len() as u32),
                span: (a, z),
                busy_ps: busy,
                streams,
                signature: h.finish(),
            });
        }
        let ids: Vec<u32> = out.launches.iter().map(|g| g.launch).collect();
        for (g, op) in out.launches.iter_mut().zip(host_ops_of(c, &ids)) {
            g.host_op = op;
        }
        out.launches
            .sort_by_key(|g| (s.start[g.launch as usize], g.launch));
        out
    }

    /// True when the capture has no graph launch.
    pub fn is_empty(&self) -> bool {
        self.launches.is_empty()
    }

    /// The activity slices of launch `g`.
    pub fn kernels_of(&self, g: &GraphLaunch) -> &[u32] {
        self.kernels
            .get(g.kernels.0 as usize..g.kernels.1 as usize)
            .unwrap_or(&[])
    }

    /// Per activity slice id: the index of its launch in [`GraphLaunches::launches`], for the
    /// activities inside graphs (sorted by slice id).
    pub fn graph_of_kernel(&self) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> = Vec::with_capacity(self.kernels.len());
        for (gi, g) in self.launches.iter().enumerate() {
            v.extend(self.kernels_of(g).iter().map(|&k| (k, gi as u32)));
        }
        v.sort_unstable();
        v
    }

    /// Σ activity time inside graphs, ps.
    pub fn busy_ps(&self) -> Ps {
        self.launches.iter().map(|g| g.busy_ps).sum()
    }

    /// The launches grouped by (host op name, `ProfilerStep#N` → `ProfilerStep*`; activity
    /// sequence): one group per distinct graph, by first launch.
    pub fn groups(&self, c: &Capture) -> Vec<GraphGroup> {
        let mut key: FxHashMap<(&str, u64), usize> = FxHashMap::default();
        let mut out: Vec<GraphGroup> = Vec::new();
        for (gi, g) in self.launches.iter().enumerate() {
            let op = if g.host_op == NO_SLICE {
                ""
            } else {
                group_name(c.slice_name(g.host_op))
            };
            let k = *key.entry((op, g.signature)).or_insert_with(|| {
                out.push(GraphGroup {
                    host_op: op.to_string(),
                    launch_name: c.slice_name(g.launch).to_string(),
                    signature: g.signature,
                    kernels_per_launch: g.kernel_count(),
                    launches: Vec::new(),
                    busy_ps: 0,
                    span_ps: 0,
                    launch_ps: 0,
                });
                out.len() - 1
            });
            let r = &mut out[k];
            r.launches.push(gi as u32);
            r.busy_ps += g.busy_ps;
            r.span_ps += g.span.1 - g.span.0;
            r.launch_ps += c.slices.dur[g.launch as usize];
        }
        out
    }
}

/// The launches of one graph (same host op, same activity sequence).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphGroup {
    /// The host op around its launches (`""` when none), step names merged.
    pub host_op: String,
    /// The launch call's name (`cudaGraphLaunch`, ...).
    pub launch_name: String,
    /// Its activity-sequence hash.
    pub signature: u64,
    /// Activities per launch.
    pub kernels_per_launch: usize,
    /// Its launches (indices into [`GraphLaunches::launches`]).
    pub launches: Vec<u32>,
    /// Σ activity time over its launches, ps.
    pub busy_ps: Ps,
    /// Σ device span (first start → last end) over its launches, ps.
    pub span_ps: Ps,
    /// Σ host launch-call time, ps.
    pub launch_ps: Ps,
}

impl GraphGroup {
    /// The row name: `graph (N kernels) @ host op`.
    pub fn label(&self) -> String {
        let op = if self.host_op.is_empty() {
            "(no host op)"
        } else {
            &self.host_op
        };
        format!("{} @ {op}", graph_node_name(self.kernels_per_launch))
    }
}

#[cfg(test)]
pub(crate) mod tests;
