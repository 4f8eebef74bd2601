//! The merged call tree: one node per distinct path of names from the root, with total, self,
//! device time and count, and the slices (instances) merged into each node as one CSR array.
//!
//! Nodes are created after their parent (a node's id is larger than its parent's), so bottom-up
//! sums are one reverse pass. Names are capture `StrId`s, except [`UNLINKED`] (the root of device
//! activities without a launch) and [`DEVICE`] (the root of device tracks); read them with
//! [`FlameTree::name_str`].

use crate::model::{Interner, Ps, StrId};
use rustc_hash::FxHashMap;

/// The root node (no name, the scope as a whole).
pub const ROOT: u32 = 0;

/// Name of the `(unlinked)` root: device activities whose launch is not in the capture.
pub const UNLINKED: StrId = StrId(u32::MAX);

/// Display text of [`UNLINKED`].
pub const UNLINKED_TEXT: &str = "(unlinked)";

/// Name of the `(device)` root: the slices of device tracks (GPU streams, XPlane device lines)
/// — kernels, copies and device-side annotations such as a stream's `ProfilerStep#N` — kept
/// apart from the host call tree.
pub const DEVICE: StrId = StrId(u32::MAX - 1);

/// Display text of [`DEVICE`].
pub const DEVICE_TEXT: &str = "(device)";

/// Names at or below this id (down to [`GRAPH_LOWEST`]) are graph nodes, `graph (N kernels)`
/// with N = `GRAPH_TOP - id` ([`graph_name`]): a CUDA/HIP graph launch's device time under the
/// op that launched it (crate::analysis::graphs).
pub const GRAPH_TOP: u32 = u32::MAX - 2;
/// The lowest graph-node name id.
pub const GRAPH_LOWEST: u32 = GRAPH_TOP - (1 << 24);

/// The node name of a graph of `kernels` activities (the same id in every tree, so diffs of
/// two captures match them by name).
pub fn graph_name(kernels: usize) -> StrId {
    StrId(GRAPH_TOP - (kernels.min(1 << 24) as u32))
}

/// The kernel count of a graph-node name, when it is one.
pub fn graph_kernels(name: StrId) -> Option<usize> {
    (GRAPH_LOWEST..=GRAPH_TOP)
        .contains(&name.0)
        .then(|| (GRAPH_TOP - name.0) as usize)
}

/// What a node's width measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Wall time of the instances (inclusive).
    #[default]
    Total,
    /// Time not covered by children in the scope.
    SelfTime,
    /// Device time launched from this node or below (inclusive).
    Device,
    /// Number of instances.
    Count,
}

impl Metric {
    /// Every metric, in the order the view cycles through them.
    pub const ALL: [Metric; 4] = [
        Metric::Total,
        Metric::SelfTime,
        Metric::Device,
        Metric::Count,
    ];

    /// Short lower-case name (`total`, `self`, `device`, `count`).
    pub fn name(self) -> &'static str {
        match self {
            Metric::Total => "total",
            Metric::SelfTime => "self",
            Metric::Device => "device",
            Metric::Count => "count",
        }
    }

    /// Its index in [`Metric::ALL`] (the declaration order).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The next metric in [`Metric::ALL`].
    pub fn next(self) -> Metric {
        Metric::ALL[(self.index() + 1) % Metric::ALL.len()]
    }

    /// True for time metrics (ps), false for counts.
    pub fn is_time(self) -> bool {
        self != Metric::Count
    }
}

/// What a tree's total and self figures measure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Unit {
    /// Time, ps (call trees of slices).
    #[default]
    Time,
    /// Bytes (live allocations grouped by call stack); there is no device figure.
    Bytes,
}

impl Metric {
    /// The metric after `self` that applies to trees of `unit` (bytes trees skip `Device`).
    pub fn next_for(self, unit: Unit) -> Metric {
        let n = self.next();
        if unit == Unit::Bytes && n == Metric::Device {
            n.next()
        } else {
            n
        }
    }

    /// Name of the metric for trees of `unit` (`live` for the total of a bytes tree).
    pub fn name_for(self, unit: Unit) -> &'static str {
        match (unit, self) {
            (Unit::Bytes, Metric::Total) => "live",
            _ => self.name(),
        }
    }
}

/// A merged call tree (see the module doc). Immutable once built by [`TreeBuilder::finish`].
#[derive(Clone, Debug, Default)]
pub struct FlameTree {
    unit: Unit,
    name: Vec<StrId>,
    parent: Vec<u32>,
    depth: Vec<u16>,
    total: Vec<Ps>,
    self_time: Vec<Ps>,
    device_self: Vec<Ps>,
    device: Vec<Ps>,
    count: Vec<u64>,
    self_sub: Vec<Ps>,
    count_sub: Vec<i64>,
    child_start: Vec<u32>,
    children: Vec<u32>,
    inst_start: Vec<u32>,
    inst: Vec<u32>,
    index: FxHashMap<u64, u32>,
    /// Text of the graph-node names used ([`graph_name`]).
    graph_text: FxHashMap<u32, String>,
    /// Device activities in the scope without a launch (under the `(unlinked)` root).
    pub unlinked: u64,
    /// Device activities attributed to a launch's stack.
    pub linked: u64,
}

#[inline]
fn key(parent: u32, name: StrId) -> u64 {
    (u64::from(parent) << 32) | u64::from(name.0)
}

impl FlameTree {
    /// What total and self figures measure (time unless built as a bytes tree).
    pub fn unit(&self) -> Unit {
        self.unit
    }

    /// Number of nodes (the root included).
    pub fn len(&self) -> usize {
        self.name.len()
    }

    /// True when the tree has only its root (or nothing).
    pub fn is_empty(&self) -> bool {
        self.name.len() <= 1
    }

    /// Name of a node (`StrId::EMPTY` for the root, [`UNLINKED`] for the `(unlinked)` root,
    /// [`DEVICE`] for the `(device)` root).
    pub fn name(&self, n: u32) -> StrId {
        self.name.get(n as usize).copied().unwrap_or_default()
    }

    /// Name text of a node, read from the capture's strings (merged step annotations read
    /// `ProfilerStep*`, as in torch's tables).
    pub fn name_str<'a>(&'a self, n: u32, strings: &'a Interner) -> &'a str {
        match self.name(n) {
            UNLINKED => UNLINKED_TEXT,
            DEVICE => DEVICE_TEXT,
            s if graph_kernels(s).is_some() => {
                self.graph_text.get(&s.0).map_or("graph", String::as_str)
            }
            s => crate::analysis::stats::group_name(strings.get(s)),
        }
    }

    /// Parent node (`ROOT` for the root itself).
    pub fn parent(&self, n: u32) -> u32 {
        self.parent.get(n as usize).copied().unwrap_or(ROOT)
    }

    /// Depth (root 0, its children 1, ...).
    pub fn depth(&self, n: u32) -> u16 {
        self.depth.get(n as usize).copied().unwrap_or(0)
    }

    /// Deepest node depth.
    pub fn max_depth(&self) -> u16 {
        self.depth.iter().copied().max().unwrap_or(0)
    }

    /// Wall time of the node's instances (inclusive), ps.
    pub fn total(&self, n: u32) -> Ps {
        self.total.get(n as usize).copied().unwrap_or(0)
    }

    /// Self time, ps: instance time not covered by children in the scope.
    pub fn self_time(&self, n: u32) -> Ps {
        self.self_time.get(n as usize).copied().unwrap_or(0)
    }

    /// Device time launched from this node and its descendants, ps.
    pub fn device(&self, n: u32) -> Ps {
        self.device.get(n as usize).copied().unwrap_or(0)
    }

    /// Device time launched directly from this node's instances (not below), ps.
    pub fn device_self(&self, n: u32) -> Ps {
        self.device_self.get(n as usize).copied().unwrap_or(0)
    }

    /// Number of instances.
    pub fn count(&self, n: u32) -> u64 {
        self.count.get(n as usize).copied().unwrap_or(0)
    }

    /// The node's figure for `m` (inclusive for total and device; counts as numbers).
    pub fn value(&self, n: u32, m: Metric) -> i64 {
        match m {
            Metric::Total => self.total(n),
            Metric::SelfTime => self.self_time(n),
            Metric::Device => self.device(n),
            Metric::Count => i64::try_from(self.count(n)).unwrap_or(i64::MAX),
        }
    }

    /// The node's own share of `m`: self time, direct device time, or count (what a folded-stack
    /// line carries; `Total` gives the inclusive total).
    pub fn own_value(&self, n: u32, m: Metric) -> i64 {
        match m {
            Metric::Total => self.total(n),
            Metric::SelfTime => self.self_time(n),
            Metric::Device => self.device_self(n),
            Metric::Count => i64::try_from(self.count(n)).unwrap_or(i64::MAX),
        }
    }

    /// Width of a node in the icicle for `m`: inclusive wall and device time; for self time and
    /// counts the sum over the subtree (so a parent is at least as wide as its children).
    pub fn width(&self, n: u32, m: Metric) -> i64 {
        let i = n as usize;
        match m {
            Metric::Count => self.count_sub.get(i).copied().unwrap_or(0),
            Metric::SelfTime => self.self_sub.get(i).copied().unwrap_or(0),
            _ => self.value(n, m).max(0),
        }
    }

    /// Children of a node, in creation order.
    pub fn children(&self, n: u32) -> &[u32] {
        let i = n as usize;
        match (self.child_start.get(i), self.child_start.get(i + 1)) {
            (Some(&a), Some(&b)) => self.children.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The child of `n` named `name`, if any.
    pub fn child(&self, n: u32, name: StrId) -> Option<u32> {
        self.index.get(&key(n, name)).copied()
    }

    /// Slice ids merged into a node (ascending).
    pub fn instances(&self, n: u32) -> &[u32] {
        let i = n as usize;
        match (self.inst_start.get(i), self.inst_start.get(i + 1)) {
            (Some(&a), Some(&b)) => self.inst.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Nodes from the root's child down to `n` (empty for the root).
    pub fn path(&self, n: u32) -> Vec<u32> {
        let mut p = Vec::with_capacity(usize::from(self.depth(n)));
        let mut k = n;
        while k != ROOT && (k as usize) < self.len() {
            p.push(k);
            k = self.parent(k);
        }
        p.reverse();
        p
    }

    /// Names along the path of `n` (root excluded), root first.
    pub fn path_names(&self, n: u32) -> Vec<StrId> {
        self.path(n).into_iter().map(|k| self.name(k)).collect()
    }

    /// The node at a path of names from the root (`&[]` is the root).
    pub fn find_path(&self, names: &[StrId]) -> Option<u32> {
        names.iter().try_fold(ROOT, |n, &s| self.child(n, s))
    }

    /// Every node but the root in creation order (parents before children), with its depth:
    /// what a diff walks to match two trees by path.
    pub fn nodes(&self) -> impl Iterator<Item = u32> + '_ {
        1..self.len() as u32
    }

    /// Nodes named `name` (any depth).
    pub fn nodes_named(&self, name: StrId) -> Vec<u32> {
        self.nodes().filter(|&n| self.name(n) == name).collect()
    }

    /// Approximate heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.name.capacity() * 44 + self.inst.capacity() * 4 + self.index.capacity() * 16
    }
}

/// Grows a [`FlameTree`]: find-or-create children, add figures and instances, then
/// [`finish`](TreeBuilder::finish).
#[derive(Debug)]
pub struct TreeBuilder {
    t: FlameTree,
    inst_node: Vec<u32>,
    inst_slice: Vec<u32>,
}

impl Default for TreeBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl TreeBuilder {
    /// A builder holding only the root.
    pub fn new() -> Self {
        let mut t = FlameTree::default();
        t.name.push(StrId::EMPTY);
        t.parent.push(ROOT);
        t.depth.push(0);
        t.total.push(0);
        t.self_time.push(0);
        t.device_self.push(0);
        t.count.push(0);
        TreeBuilder {
            t,
            inst_node: Vec::new(),
            inst_slice: Vec::new(),
        }
    }

    /// Sets what total and self figures measure (default: time).
    pub fn set_unit(&mut self, unit: Unit) {
        self.t.unit = unit;
    }

    /// Reserves room for `n` instances.
    pub fn reserve_instances(&mut self, n: usize) {
        self.inst_node.reserve(n);
        self.inst_slice.reserve(n);
    }

    /// Number of nodes so far.
    pub fn len(&self) -> usize {
        self.t.name.len()
    }

    /// True when only the root exists.
    pub fn is_empty(&self) -> bool {
        self.t.name.len() <= 1
    }

    /// Parent of a node created so far (`ROOT` for the root).
    pub fn parent(&self, n: u32) -> u32 {
        self.t.parent.get(n as usize).copied().unwrap_or(ROOT)
    }

    /// The graph node of `kernels` activities under `parent` ([`graph_name`]), created when
    /// missing.
    pub fn graph_child(&mut self, parent: u32, kernels: usize) -> u32 {
        self.child(parent, graph_name(kernels))
    }

    /// The child of `parent` named `name`, created when missing.
    #[inline]
    pub fn child(&mut self, parent: u32, name: StrId) -> u32 {
        let next = self.t.name.len() as u32;
        let t = &mut self.t;
        let id = *t.index.entry(key(parent, name)).or_insert(next);
        if id == next {
            if let Some(k) = graph_kernels(name) {
                // A graph node (also one copied from another tree: a sandwich) reads its text
                // from this tree.
                t.graph_text
                    .entry(name.0)
                    .or_insert_with(|| crate::analysis::graph_names::graph_node_name(k));
            }
            let d = t.depth.get(parent as usize).copied().unwrap_or(0);
            t.name.push(name);
            t.parent.push(parent);
            t.depth.push(d.saturating_add(1));
            t.total.push(0);
            t.self_time.push(0);
            t.device_self.push(0);
            t.count.push(0);
        }
        id
    }

    /// Adds one instance's figures: wall time, self time, and its slice id (`None` for merged
    /// figures without a slice).
    #[inline]
    pub fn add(&mut self, n: u32, total: Ps, self_time: Ps, slice: Option<u32>) {
        let i = n as usize;
        if i >= self.t.name.len() {
            return;
        }
        self.t.total[i] += total;
        self.t.self_time[i] += self_time;
        self.t.count[i] += 1;
        if let Some(s) = slice {
            self.inst_node.push(n);
            self.inst_slice.push(s);
        }
    }

    /// Adds merged figures (sandwich, folded input): totals and a count, no instances.
    pub fn add_merged(&mut self, n: u32, total: Ps, self_time: Ps, count: u64) {
        let i = n as usize;
        if i < self.t.name.len() {
            self.t.total[i] += total;
            self.t.self_time[i] += self_time;
            self.t.count[i] += count;
        }
    }

    /// Records an instance of `n` without adding figures.
    pub fn add_instance(&mut self, n: u32, slice: u32) {
        if (n as usize) < self.t.name.len() {
            self.inst_node.push(n);
            self.inst_slice.push(slice);
        }
    }

    /// Subtracts a child's time from a node's self time.
    #[inline]
    pub fn sub_self(&mut self, n: u32, d: Ps) {
        if let Some(v) = self.t.self_time.get_mut(n as usize) {
            *v -= d;
        }
    }

    /// Adds device time launched directly from `n`.
    #[inline]
    pub fn add_device(&mut self, n: u32, d: Ps) {
        if let Some(v) = self.t.device_self.get_mut(n as usize) {
            *v += d;
        }
    }

    /// Counts device activities attributed (`linked`) or under `(unlinked)`.
    pub fn count_device(&mut self, linked: bool) {
        if linked {
            self.t.linked += 1;
        } else {
            self.t.unlinked += 1;
        }
    }

    /// Finishes: root figures (sum of its children), inclusive device time, child and instance
    /// arrays.
    pub fn finish(self) -> FlameTree {
        let TreeBuilder {
            mut t,
            inst_node,
            inst_slice,
        } = self;
        let n = t.name.len();
        // The `(device)` root holds no instance of its own: its total is its roots' totals.
        for k in 1..n {
            let p = t.parent[k] as usize;
            if p != ROOT as usize && t.name[p] == DEVICE && t.parent[p] == ROOT {
                t.total[p] += t.total[k];
            }
        }
        // Root: the scope as a whole.
        let mut rt = 0;
        for k in 1..n {
            if t.parent[k] == ROOT {
                rt += t.total[k];
            }
        }
        t.total[0] = rt;
        t.self_time[0] = 0;
        t.count[0] = 0;
        t.device = t.device_self.clone();
        t.self_sub = t.self_time.iter().map(|&v| v.max(0)).collect();
        t.count_sub = t
            .count
            .iter()
            .map(|&v| i64::try_from(v).unwrap_or(i64::MAX))
            .collect();
        for k in (1..n).rev() {
            let p = t.parent[k] as usize;
            t.device[p] += t.device[k];
            t.self_sub[p] = t.self_sub[p].saturating_add(t.self_sub[k]);
            t.count_sub[p] = t.count_sub[p].saturating_add(t.count_sub[k]);
        }
        // Children CSR (creation order).
        let mut cnt = vec![0u32; n + 1];
        for k in 1..n {
            cnt[t.parent[k] as usize + 1] += 1;
        }
        for k in 0..n {
            cnt[k + 1] += cnt[k];
        }
        let mut fill = cnt.clone();
        let mut children = vec![0u32; n.saturating_sub(1)];
        for k in 1..n {
            let p = t.parent[k] as usize;
            children[fill[p] as usize] = k as u32;
            fill[p] += 1;
        }
        t.child_start = cnt;
        t.children = children;
        // Instances CSR (counting sort by node; slice order kept within a node).
        let mut start = vec![0u32; n + 1];
        for &k in &inst_node {
            start[k as usize + 1] += 1;
        }
        for k in 0..n {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut inst = vec![0u32; inst_node.len()];
        for (&k, &s) in inst_node.iter().zip(&inst_slice) {
            let f = &mut fill[k as usize];
            inst[*f as usize] = s;
            *f += 1;
        }
        for k in 0..n {
            let (a, b) = (start[k] as usize, start[k + 1] as usize);
            if let Some(run) = inst.get_mut(a..b)
                && !run.is_sorted()
            {
                run.sort_unstable();
            }
        }
        t.inst_start = start;
        t.inst = inst;
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_index_is_its_place_in_all() {
        for (i, m) in Metric::ALL.iter().enumerate() {
            assert_eq!(m.index(), i);
            assert_eq!(Metric::ALL[(i + 1) % 4], m.next());
        }
    }

    #[test]
    fn builder_merges_paths_and_sums() {
        let mut b = TreeBuilder::new();
        let a = b.child(ROOT, StrId(1));
        let ab = b.child(a, StrId(2));
        assert_eq!(b.child(ROOT, StrId(1)), a);
        b.add(a, 10, 4, Some(7));
        b.add(ab, 6, 6, Some(8));
        b.add(a, 5, 5, Some(3));
        b.add_device(ab, 9);
        let t = b.finish();
        assert_eq!(t.len(), 3);
        assert_eq!(t.total(a), 15);
        assert_eq!(t.count(a), 2);
        assert_eq!(t.total(ROOT), 15);
        assert_eq!(t.device(a), 9);
        assert_eq!(t.device_self(a), 0);
        assert_eq!(t.instances(a), &[3, 7]);
        assert_eq!(t.children(a), &[ab]);
        assert_eq!(t.find_path(&[StrId(1), StrId(2)]), Some(ab));
        assert_eq!(t.path_names(ab), vec![StrId(1), StrId(2)]);
        assert_eq!(t.width(ROOT, Metric::Count), 3);
        assert_eq!(Metric::Count.next(), Metric::Total);
    }
}
