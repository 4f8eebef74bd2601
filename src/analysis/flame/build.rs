//! Builds the merged tree of a scope from a capture's own nesting (`Slices::parent`, one lane
//! group per properly nested set), with device time attributed to the stack that launched it.
//!
//! Per track, slices are visited in id order (start asc, longer first), so a parent is always
//! visited before its children; the node of a slice is the child of its parent's node named
//! like the slice. A range scope clips every figure to the range: the slices overlapping it are
//! those starting inside (two binary searches) plus those open at its start (per lane group,
//! the ancestors of the last slice starting before it).

use super::gpu::DeviceLinks;
use super::tree::{DEVICE, FlameTree, ROOT, TreeBuilder, UNLINKED};
use crate::analysis::nesting::ContainmentStack;
use crate::analysis::stats::group_name;
use crate::analysis::stats::is_profiler_track;
use crate::model::{Capture, Category, NO_SLICE, ProcessKind, Ps, StrId, TrackKind};
use rustc_hash::FxHashMap;

/// Which slices a tree merges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    /// Only time in `[from, to)` (model ps); figures are clipped to it.
    pub range: Option<(Ps, Ps)>,
    /// Only these tracks (sorted ids); `None` = all tracks.
    pub tracks: Option<Vec<u32>>,
    /// Also the profiler's own spans (Kineto's `PyTorch Profiler (0)`, the `Trace` category),
    /// which span the whole capture; left out by default, as in `stats`.
    pub profiler: bool,
}

impl Scope {
    /// The whole capture.
    pub fn all() -> Scope {
        Scope::default()
    }

    /// The time range `[from, to)`.
    pub fn range(from: Ps, to: Ps) -> Scope {
        Scope {
            range: Some((from, to)),
            ..Scope::default()
        }
    }

    /// Only the given tracks.
    pub fn tracks(mut tracks: Vec<u32>) -> Scope {
        tracks.sort_unstable();
        tracks.dedup();
        Scope {
            tracks: Some(tracks),
            ..Scope::default()
        }
    }

    /// The tracks of one process.
    pub fn process(c: &Capture, p: u32) -> Scope {
        Scope::tracks(
            (0..c.tracks.len() as u32)
                .filter(|&t| c.tracks[t as usize].process == p)
                .collect(),
        )
    }

    fn has_track(&self, t: u32) -> bool {
        self.tracks
            .as_ref()
            .is_none_or(|v| v.binary_search(&t).is_ok())
    }

    fn clip(&self, s: Ps, e: Ps) -> Ps {
        match self.range {
            Some((a, b)) => (e.min(b) - s.max(a)).max(0),
            None => e - s,
        }
    }
}

/// Node of each visited slice of one track: a dense run `[lo, lo + dense.len())` plus the few
/// ancestors open at the range start.
struct NodeOf {
    lo: u32,
    dense: Vec<u32>,
    open: FxHashMap<u32, u32>,
}

impl NodeOf {
    fn get(&self, id: u32) -> Option<u32> {
        if id >= self.lo {
            self.dense
                .get((id - self.lo) as usize)
                .copied()
                .filter(|&n| n != NO_SLICE)
        } else {
            self.open.get(&id).copied()
        }
    }
    fn set(&mut self, id: u32, n: u32) {
        if id >= self.lo {
            if let Some(v) = self.dense.get_mut((id - self.lo) as usize) {
                *v = n;
            }
        } else {
            self.open.insert(id, n);
        }
    }
}

/// Slices of track `t` open at time `a` (start < a < end), ascending: per lane group, the
/// ancestors-or-self of the last slice starting before `a` that end after it.
fn open_at(c: &Capture, t: u32, lo: u32, a: Ps) -> Vec<u32> {
    let tr = &c.tracks[t as usize];
    let s = &c.slices;
    let groups = tr.group_bases.len().max(1);
    let mut seen = vec![false; groups];
    let mut left = groups;
    let mut out = Vec::new();
    let mut i = lo;
    while i > tr.slices.0 && left > 0 {
        i -= 1;
        let lane = s.lane[i as usize];
        let g = tr
            .group_bases
            .partition_point(|&b| b <= lane)
            .saturating_sub(1);
        if g >= groups || seen[g] {
            continue;
        }
        seen[g] = true;
        left -= 1;
        let mut k = i;
        while k != NO_SLICE {
            if s.end(k as usize) > a {
                out.push(k);
            }
            k = s.parent[k as usize];
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// True for a device track: a GPU stream (Kineto / Chrome), or an XPlane line of a device
/// plane. Its slices (kernels, copies, device-side annotations like a stream's
/// `ProfilerStep#N`) are roots under [`DEVICE`], not of the host call tree. A device process's
/// CPU threads (torch puts Python frames under the GPU's pid) stay host tracks.
pub fn is_device_track(c: &Capture, t: u32) -> bool {
    let Some(tr) = c.tracks.get(t as usize) else {
        return false;
    };
    match tr.kind {
        TrackKind::GpuStream => true,
        TrackKind::XLine => c.processes.get(tr.process as usize).is_some_and(|p| {
            matches!(
                p.kind,
                ProcessKind::Gpu | ProcessKind::Tpu | ProcessKind::Device
            )
        }),
        _ => false,
    }
}

/// Names that merge into one node: every `ProfilerStep#N` is the node of the first one seen
/// (shown as `ProfilerStep*`, [`FlameTree::name_str`]), so the steps of a run merge like the
/// frames under them. A table over the capture's string ids, built once per tree.
pub struct NameMerge(Vec<StrId>);

impl NameMerge {
    /// The merge table of `c`'s names.
    pub fn of_capture(c: &Capture) -> NameMerge {
        let mut first: Option<StrId> = None;
        let mut v: Vec<StrId> = Vec::with_capacity(c.strings.len());
        for (id, text) in c.strings.iter() {
            if group_name(text) != text {
                v.push(*first.get_or_insert(id));
            } else {
                v.push(id);
            }
        }
        NameMerge(v)
    }

    /// The node name of a slice named `id`.
    #[inline]
    pub fn of(&self, id: StrId) -> StrId {
        self.0.get(id.index()).copied().unwrap_or(id)
    }
}

/// One open slice on a track's containment stack while the tree is built.
#[derive(Clone, Copy)]
struct Frame {
    /// Its node.
    node: u32,
    /// The end of the part of its time the tree counts (which starts at the first `mark`).
    to: Ps,
    /// Its children count time from here on: the start of its counted part, then the end of
    /// the last child counted.
    mark: Ps,
}

/// The merged tree of `scope`, with device time from `links` (see [`super::gpu`]).
///
/// Per track, a slice's parent is given by torch's containment rule
/// ([`crate::analysis::nesting`], the rule `stats` and `stacks --torch` nest with): a slice that
/// only partly overlaps an open one is its sibling, not its child. Each slice counts the part of
/// its time inside its parent's counted part and after its earlier siblings' (a partial overlap
/// is counted once, by the slice that started first), so per track the roots never add up to
/// more than the track's busy time and no child outgrows its parent. The profiler's own spans
/// are left out unless [`Scope::profiler`] is set.
pub fn build(c: &Capture, scope: &Scope, links: Option<&DeviceLinks>) -> FlameTree {
    let s = &c.slices;
    let merge = NameMerge::of_capture(c);
    let mut b = TreeBuilder::new();
    let mut node_of = NodeOf {
        lo: 0,
        dense: Vec::new(),
        open: FxHashMap::default(),
    };
    let mut path: Vec<u32> = Vec::new();
    let mut stack: ContainmentStack<Frame> = ContainmentStack::new();
    let (ra, rz) = scope.range.unwrap_or((Ps::MIN, Ps::MAX));
    let mut graph_names = GraphNames::default();
    for (t, tr) in c.tracks.iter().enumerate() {
        let t = t as u32;
        let (first, end) = tr.slices;
        if first == end || !scope.has_track(t) || (!scope.profiler && is_profiler_track(c, t)) {
            continue;
        }
        let starts = &s.start[first as usize..end as usize];
        let (lo, hi, open) = match scope.range {
            Some((a, z)) => {
                let lo = first + starts.partition_point(|&x| x < a) as u32;
                let hi = first + starts.partition_point(|&x| x < z) as u32;
                (lo, hi, open_at(c, t, lo, a))
            }
            None => (first, end, Vec::new()),
        };
        // Roots of a device track go under the `(device)` root.
        let top = if is_device_track(c, t) && (hi > lo || !open.is_empty()) {
            b.child(ROOT, DEVICE)
        } else {
            ROOT
        };
        node_of.lo = lo;
        node_of.dense.clear();
        node_of.dense.resize((hi - lo) as usize, NO_SLICE);
        node_of.open.clear();
        b.reserve_instances((hi - lo) as usize + open.len());
        stack.drain(|_| {});
        let mut root_mark = Ps::MIN;
        for id in open.into_iter().chain(lo..hi) {
            let i = id as usize;
            if !scope.profiler && s.kind(i) == Category::Trace {
                continue;
            }
            let (st, en) = (s.start[i], s.end(i));
            stack.close_before(st, en, |_, _| {});
            let (pn, from, to) = match stack.top_mut() {
                Some(p) => {
                    let from = st.max(ra).max(p.mark);
                    let to = en.min(rz).min(p.to);
                    if to > p.mark {
                        p.mark = to;
                    }
                    (p.node, from, to)
                }
                None => {
                    let from = st.max(ra).max(root_mark);
                    let to = en.min(rz);
                    root_mark = root_mark.max(to);
                    (top, from, to)
                }
            };
            let d = (to - from).max(0);
            let n = b.child(pn, merge.of(s.name[i]));
            node_of.set(id, n);
            b.add(n, d, d, Some(id));
            if pn != top {
                b.sub_self(pn, d);
            }
            stack.enter(
                en,
                Frame {
                    node: n,
                    to: to.max(from),
                    mark: from,
                },
            );
        }
        if let Some(l) = links {
            let pairs = l.launched_on(tr.slices);
            let mut i = 0;
            while i < pairs.len() {
                // Pairs are sorted by launch: one launch's activities are a run.
                let launch = pairs[i].0;
                let j = i + pairs[i..].partition_point(|p| p.0 == launch);
                let run = &pairs[i..j];
                i = j;
                let n = match node_of.get(launch) {
                    Some(n) => n,
                    None => {
                        // Launch outside the range: create its path without figures.
                        path.clear();
                        let mut k = launch;
                        while k != NO_SLICE {
                            path.push(k);
                            k = s.parent[k as usize];
                        }
                        let mut n = ROOT;
                        for &k in path.iter().rev() {
                            n = b.child(n, merge.of(s.name[k as usize]));
                        }
                        n
                    }
                };
                // A graph launch: its activities go under a `graph (N kernels)` node beside
                // the launch call, under the op that launched it (crate::analysis::graphs).
                let graph = graph_names.is_graph(c, s.name[launch as usize]).then(|| {
                    let g = b.graph_child(b.parent(n), run.len());
                    b.add(g, 0, 0, None);
                    g
                });
                for &(_, act) in run {
                    let ai = act as usize;
                    let d = scope.clip(s.start[ai], s.end(ai));
                    if d == 0 && scope.range.is_some() {
                        continue;
                    }
                    match graph {
                        Some(g) => {
                            let k = b.child(g, merge.of(s.name[ai]));
                            b.add_device(k, d);
                        }
                        None => b.add_device(n, d),
                    }
                    b.count_device(true);
                }
            }
        }
    }
    if let Some(l) = links {
        add_unlinked(c, scope, l, &merge, &mut b);
    }
    b.finish()
}

/// Which launch names replay a graph ([`crate::analysis::graph_names::is_graph_launch_name`]),
/// read once per name.
#[derive(Default)]
struct GraphNames(FxHashMap<StrId, bool>);

impl GraphNames {
    fn is_graph(&mut self, c: &Capture, name: StrId) -> bool {
        *self.0.entry(name).or_insert_with(|| {
            crate::analysis::graph_names::is_graph_launch_name(c.strings.get(name))
        })
    }
}

fn add_unlinked(
    c: &Capture,
    scope: &Scope,
    l: &DeviceLinks,
    merge: &NameMerge,
    b: &mut TreeBuilder,
) {
    let s = &c.slices;
    let mut root = None;
    for &act in &l.unlinked {
        let ai = act as usize;
        if !scope.has_track(c.track_of(act)) {
            continue;
        }
        let d = scope.clip(s.start[ai], s.end(ai));
        if d == 0 && scope.range.is_some() {
            continue;
        }
        let r = *root.get_or_insert_with(|| b.child(ROOT, UNLINKED));
        let n = b.child(r, merge.of(s.name[ai]));
        b.add_device(n, d);
        b.add_instance(n, act);
        b.count_device(false);
    }
}

/// Parent of each slice of track `t` by torch's containment rule (the rule [`build`] nests
/// with), indexed by `id - first`; `NO_SLICE` for a root. The profiler's `Trace` slices are
/// nobody's parent.
pub fn containment_parents(c: &Capture, t: u32) -> Vec<u32> {
    let s = &c.slices;
    let Some(tr) = c.tracks.get(t as usize) else {
        return Vec::new();
    };
    let (first, end) = (tr.slices.0, (tr.slices.1 as usize).min(s.len()) as u32);
    let mut out = vec![NO_SLICE; end.saturating_sub(first) as usize];
    let mut stack: ContainmentStack<u32> = ContainmentStack::new();
    for id in first..end {
        let i = id as usize;
        if s.kind(i) == Category::Trace {
            continue;
        }
        let (st, en) = (s.start[i], s.end(i));
        stack.close_before(st, en, |_, _| {});
        if let Some(&mut p) = stack.top_mut() {
            out[(id - first) as usize] = p;
        }
        stack.enter(en, id);
    }
    out
}

/// The merged tree of the given slices and all their ancestors (e.g. the search hits): full
/// durations; self time is what the included children do not cover. Ancestors by the
/// containment rule, as in [`build`].
pub fn build_ancestors(c: &Capture, ids: &[u32], links: Option<&DeviceLinks>) -> FlameTree {
    let s = &c.slices;
    let merge = NameMerge::of_capture(c);
    let mut parents: FxHashMap<u32, (u32, Vec<u32>)> = FxHashMap::default();
    let mut parent_of = |id: u32| -> u32 {
        let t = c.track_of(id);
        let (first, v) = parents.entry(t).or_insert_with(|| {
            let first = c.tracks.get(t as usize).map_or(0, |tr| tr.slices.0);
            (first, containment_parents(c, t))
        });
        id.checked_sub(*first)
            .and_then(|k| v.get(k as usize).copied())
            .unwrap_or(NO_SLICE)
    };
    let mut set: Vec<(u32, u32)> = Vec::with_capacity(ids.len() * 2);
    for &id in ids {
        let mut k = id;
        while k != NO_SLICE && (k as usize) < s.len() {
            let p = parent_of(k);
            set.push((k, p));
            k = p;
        }
    }
    set.sort_unstable();
    set.dedup();
    let mut node_of: FxHashMap<u32, u32> = FxHashMap::default();
    let mut b = TreeBuilder::new();
    let mut device_root = None;
    for &(id, p) in &set {
        let i = id as usize;
        let top = if is_device_track(c, c.track_of(id)) {
            *device_root.get_or_insert_with(|| b.child(ROOT, DEVICE))
        } else {
            ROOT
        };
        let pn = node_of.get(&p).copied().unwrap_or(top);
        let n = b.child(pn, merge.of(s.name[i]));
        node_of.insert(id, n);
        let d = s.dur[i];
        b.add(n, d, d, Some(id));
        if pn != top {
            b.sub_self(pn, d);
        }
    }
    if let Some(l) = links {
        for &(launch, act) in &l.pairs {
            if let Some(&n) = node_of.get(&launch) {
                b.add_device(n, s.dur[act as usize]);
                b.count_device(true);
            }
        }
    }
    b.finish()
}
