//! Step grouping of host events, after XProf's `EventForest` (tsl `group_events.cc`): events
//! with a root stat (`_r`, JAX's `StepTraceAnnotation`, TF's step markers) start groups; a group
//! reaches every event nested in its root on the same line, the consumers of a producer
//! (`_pt`/`_p` → `_ct`/`_c`), and, through the correlation id of a host launch, the device
//! events it launched. Only the host events that can matter are recorded (roots, launches,
//! producers, consumers, events already grouped in the file); nesting among them is the same
//! as among all events when events nest properly.

use crate::model::{Ps, StrId};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// No value in an `i64` field.
pub const NONE: i64 = i64::MIN;

/// One host event as grouping needs it (40 bytes; the rarely set stats and the name live in
/// [`HostRare`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostNode {
    /// Start, ps.
    pub start: Ps,
    /// Duration, ps.
    pub dur: Ps,
    /// `correlation_id` (launch), [`NONE`] if absent.
    pub corr: i64,
    /// Which line (unique across the space).
    pub line: u32,
    /// `device_id`, `i32::MIN` if absent.
    pub device: i32,
    /// Index of its [`HostRare`], `u32::MAX` for none.
    pub rare: u32,
    /// [`ASYNC`], [`CU`], [`LAUNCH_PLANE`].
    pub flags: u8,
}

/// `_a` (async: not nested).
pub const ASYNC: u8 = 1;
/// The name starts with `cu` (a CUDA API call, not a launch for Launch Stats).
pub const CU: u8 = 2;
/// On the `/host:CPU` plane (its events with a correlation id are kernel launches).
pub const LAUNCH_PLANE: u8 = 4;

/// The stats of a host event that few events have (and its name, which only a root's group
/// name reads).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostRare {
    /// Event name (full name); not a reason to keep the record by itself.
    pub name: StrId,
    /// Root level (`_r`), 0 for none.
    pub root: i64,
    /// `step_num`, [`NONE`] if absent.
    pub step_num: i64,
    /// `iter_num`, [`NONE`] if absent.
    pub iter_num: i64,
    /// `graph_type` (empty if absent).
    pub graph_type: StrId,
    /// `group_id` given by the file, [`NONE`] if absent.
    pub group: i64,
    /// Producer (`_pt`, `_p`), type [`NONE`] if absent.
    pub prod: (i64, i64),
    /// Consumer (`_ct`, `_c`), type [`NONE`] if absent.
    pub cons: (i64, i64),
}

impl Default for HostRare {
    fn default() -> Self {
        HostRare {
            name: StrId::EMPTY,
            root: 0,
            step_num: NONE,
            iter_num: NONE,
            graph_type: StrId::EMPTY,
            group: NONE,
            prod: (NONE, 0),
            cons: (NONE, 0),
        }
    }
}

impl HostRare {
    /// True when any stat is set (the name does not count).
    pub fn any(&self) -> bool {
        HostRare {
            name: StrId::EMPTY,
            ..*self
        } != HostRare::default()
    }
}

/// The recorded host events: each line's nodes contiguous and in time order (start, then
/// longer first), with their rare stats.
#[derive(Clone, Debug, Default)]
pub struct HostNodes {
    /// The events.
    pub nodes: Vec<HostNode>,
    /// Their rare stats (indexed by [`HostNode::rare`]).
    pub rare: Vec<HostRare>,
}

impl HostNodes {
    /// Records an event when grouping can need it (a launch, a root, a producer or consumer,
    /// an event grouped by the file).
    pub fn push(&mut self, mut n: HostNode, r: HostRare) {
        let any = r.any();
        if n.corr == NONE && !any {
            return;
        }
        n.rare = if any {
            self.rare.push(r);
            (self.rare.len() - 1) as u32
        } else {
            u32::MAX
        };
        self.nodes.push(n);
    }

    /// Appends `other` (a later line), leaving it empty and freed.
    pub fn append(&mut self, other: &mut HostNodes) {
        let other = &mut std::mem::take(other);
        let base = self.rare.len() as u32;
        self.rare.append(&mut other.rare);
        self.nodes.extend(other.nodes.drain(..).map(|mut n| {
            if n.rare != u32::MAX {
                n.rare += base;
            }
            n
        }));
    }

    /// Sorts the nodes of one line (all of `self`) by start, longer first.
    pub fn sort_line(&mut self) {
        let key = |n: &HostNode| (n.start, std::cmp::Reverse(n.dur));
        // Profilers write lines in time order: no sort (and no scratch copy) then.
        if !self.nodes.is_sorted_by_key(key) {
            self.nodes.sort_by_key(key);
        }
    }

    fn rare_of(&self, i: u32) -> HostRare {
        let r = self.nodes[i as usize].rare;
        if r == u32::MAX {
            HostRare::default()
        } else {
            self.rare[r as usize]
        }
    }
}

/// Names of events XProf treats as implicit roots (their name is not part of the group name).
const IMPLICIT_ROOTS: &[&str] = &[
    "FunctionRun",
    "SessionRun",
    "RunGraph",
    "ExecutorState::Process",
];

/// What grouping found.
#[derive(Debug, Default)]
pub struct Groups {
    /// Group of each node ([`NONE`] when none), parallel to the nodes.
    pub of_node: Vec<i64>,
    /// Name of each group grouping created (`train 3`), by group id.
    pub names: FxHashMap<i64, String>,
    /// Group of each launch's correlation id (the last launch with that id wins).
    pub by_corr: FxHashMap<i64, i64>,
}

/// Groups the recorded host events. `text` gives the text of a name id.
pub fn group(hn: &HostNodes, text: &dyn Fn(StrId) -> String) -> Groups {
    let nodes = &hn.nodes;
    let n = nodes.len();
    let mut roots: Vec<(i64, Ps, u32)> = Vec::new();
    let mut of_node: Vec<i64> = vec![NONE; n];
    for (i, e) in nodes.iter().enumerate() {
        if e.rare == u32::MAX {
            continue;
        }
        let r = hn.rare[e.rare as usize];
        if r.root > 0 {
            roots.push((r.root, e.start, i as u32));
        }
        of_node[i] = r.group;
    }
    let mut out = Groups::default();
    if roots.is_empty() {
        // No root, no group to make: events keep the groups the file gave them.
        if of_node.iter().any(|&g| g != NONE) {
            by_corr(nodes, &of_node, &mut out.by_corr);
        }
        out.of_node = of_node;
        return out;
    }
    let mut edges: Vec<(u32, u32)> = Vec::with_capacity(n);
    // Nesting within each line (async events take no part).
    let mut stack: Vec<u32> = Vec::new();
    let mut line = u32::MAX;
    for (i, e) in nodes.iter().enumerate() {
        if e.line != line {
            stack.clear();
            line = e.line;
        }
        if e.flags & ASYNC != 0 {
            continue;
        }
        while let Some(&p) = stack.last() {
            let pe = &nodes[p as usize];
            if pe.start <= e.start && e.start + e.dur <= pe.start + pe.dur {
                edges.push((p, i as u32));
                break;
            }
            stack.pop();
        }
        stack.push(i as u32);
    }
    // Producers → consumers of the same context (skipped when both sides are large, as XProf).
    // A node produces at most one context and consumes at most one, so the order of the
    // contexts does not change any node's list of children or parents: contexts are numbered
    // as first seen, and each one's producers and consumers kept in node order in two flat
    // CSR arrays (no vector, no allocation per context; JAX captures have one per launch).
    let mut ctx_of: FxHashMap<(i64, i64), u32> = FxHashMap::default();
    // Per node with a context: (node, context, producer?), in node order.
    let mut sides: Vec<(u32, u32, bool)> = Vec::new();
    for (i, e) in nodes.iter().enumerate() {
        if e.rare == u32::MAX {
            continue;
        }
        let r = hn.rare[e.rare as usize];
        for (key, producer) in [(r.prod, true), (r.cons, false)] {
            if key.0 != NONE {
                let next = ctx_of.len() as u32;
                let k = *ctx_of.entry(key).or_insert(next);
                sides.push((i as u32, k, producer));
            }
        }
    }
    if !sides.is_empty() {
        let m = ctx_of.len();
        drop(ctx_of);
        // Producers then consumers of context k: `list[at[2k]..at[2k + 1]]`, `list[at[2k + 1]..at[2k + 2]]`.
        let slot = |k: u32, producer: bool| 2 * k as usize + usize::from(!producer);
        let mut at = vec![0u32; 2 * m + 1];
        for &(_, k, p) in &sides {
            at[slot(k, p) + 1] += 1;
        }
        for i in 0..2 * m {
            at[i + 1] += at[i];
        }
        let mut fill = at.clone();
        let mut list = vec![0u32; sides.len()];
        for &(i, k, p) in &sides {
            let f = &mut fill[slot(k, p)];
            list[*f as usize] = i;
            *f += 1;
        }
        drop(fill);
        let mut pairs = 0usize;
        for k in 0..m {
            let (np, nc) = (at[2 * k + 1] - at[2 * k], at[2 * k + 2] - at[2 * k + 1]);
            if !(np >= 64 && nc >= 64) {
                pairs += (np as usize) * (nc as usize);
            }
        }
        edges.reserve(pairs);
        for k in 0..m {
            let p = &list[at[2 * k] as usize..at[2 * k + 1] as usize];
            let c = &list[at[2 * k + 1] as usize..at[2 * k + 2] as usize];
            if p.len() >= 64 && c.len() >= 64 {
                continue;
            }
            for &a in p {
                for &b in c {
                    edges.push((a, b));
                }
            }
        }
    }
    let children = csr(n, edges.iter().copied());
    let parents = csr(n, edges.iter().map(|&(a, b)| (b, a)));

    // Higher root levels first, then by start.
    roots.sort_by_key(|&(level, start, i)| (std::cmp::Reverse(level), start, i));
    let mut next = 0i64;
    let mut seen = vec![false; n];
    let mut queue = VecDeque::new();
    for &(_, _, r) in &roots {
        if of_node[r as usize] != NONE || has_root_parent(hn, &parents, r) {
            continue;
        }
        let gid = next;
        next += 1;
        // Propagate to every descendant not grouped yet.
        queue.clear();
        queue.push_back(r);
        let mut visited = vec![r];
        seen[r as usize] = true;
        while let Some(x) = queue.pop_front() {
            if of_node[x as usize] != NONE {
                continue;
            }
            of_node[x as usize] = gid;
            for &c in children.of(x) {
                if !seen[c as usize] {
                    seen[c as usize] = true;
                    visited.push(c);
                    queue.push_back(c);
                }
            }
        }
        for v in visited {
            seen[v as usize] = false;
        }
        out.names
            .insert(gid, group_name(hn, &parents, r, gid, text));
    }
    by_corr(nodes, &of_node, &mut out.by_corr);
    out.of_node = of_node;
    out
}

/// The group of each launch's correlation id: the last launch with an id is the one its device
/// events hang from.
fn by_corr(nodes: &[HostNode], of_node: &[i64], out: &mut FxHashMap<i64, i64>) {
    for (e, &g) in nodes.iter().zip(of_node) {
        if e.flags & LAUNCH_PLANE == 0 || e.corr == NONE {
            continue;
        }
        if g != NONE {
            out.insert(e.corr, g);
        } else if !out.is_empty() {
            out.remove(&e.corr);
        }
    }
}

/// Adjacency lists in one buffer.
struct Csr {
    start: Vec<u32>,
    to: Vec<u32>,
}

impl Csr {
    fn of(&self, i: u32) -> &[u32] {
        let i = i as usize;
        &self.to[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

fn csr(n: usize, edges: impl Iterator<Item = (u32, u32)> + Clone) -> Csr {
    let mut start = vec![0u32; n + 1];
    for (a, _) in edges.clone() {
        start[a as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut to = vec![0u32; start[n] as usize];
    for (a, b) in edges {
        to[fill[a as usize] as usize] = b;
        fill[a as usize] += 1;
    }
    Csr { start, to }
}

/// Ancestors of `r` (breadth first, `r` excluded).
fn ancestors(parents: &Csr, r: u32) -> Vec<u32> {
    let mut seen = vec![r];
    let mut queue: VecDeque<u32> = parents.of(r).iter().copied().collect();
    seen.extend(parents.of(r));
    let mut out = Vec::new();
    while let Some(x) = queue.pop_front() {
        out.push(x);
        for &p in parents.of(x) {
            if !seen.contains(&p) {
                seen.push(p);
                queue.push_back(p);
            }
        }
    }
    out
}

/// True when an ancestor of root `r` is a root of the same level (that one groups it).
fn has_root_parent(hn: &HostNodes, parents: &Csr, r: u32) -> bool {
    let level = hn.rare_of(r).root;
    ancestors(parents, r)
        .into_iter()
        .any(|p| hn.rare_of(p).root == level)
}

/// `GetGroupName`: `<graph_type or root name> <iter_num or step_num or group id>`, stats looked
/// up on the root, then its ancestors.
fn group_name(
    hn: &HostNodes,
    parents: &Csr,
    r: u32,
    gid: i64,
    text: &dyn Fn(StrId) -> String,
) -> String {
    let chain: Vec<HostRare> = std::iter::once(r)
        .chain(ancestors(parents, r))
        .map(|i| hn.rare_of(i))
        .collect();
    let mut name = String::new();
    if let Some(x) = chain.iter().find(|x| x.graph_type != StrId::EMPTY) {
        name.push_str(&text(x.graph_type));
        name.push(' ');
    } else {
        let own = text(hn.rare_of(r).name);
        if !IMPLICIT_ROOTS.contains(&own.as_str()) {
            name.push_str(&own);
            name.push(' ');
        }
    }
    let step = if let Some(x) = chain.iter().find(|x| x.iter_num != NONE) {
        x.iter_num
    } else if let Some(x) = chain.iter().find(|x| x.step_num != NONE) {
        x.step_num
    } else {
        gid
    };
    name.push_str(&step.to_string());
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Interner;

    fn node(line: u32, start: Ps, dur: Ps) -> HostNode {
        HostNode {
            start,
            dur,
            corr: NONE,
            line,
            device: i32::MIN,
            rare: u32::MAX,
            flags: 0,
        }
    }

    fn launch(line: u32, start: Ps, corr: i64) -> HostNode {
        HostNode {
            corr,
            flags: LAUNCH_PLANE,
            ..node(line, start, 5)
        }
    }

    #[test]
    fn roots_group_nested_launches_and_consumers() {
        let mut s = Interner::new();
        let train = s.intern("train");
        let exec = s.intern("Execute");
        let root = |step| HostRare {
            name: train,
            root: 1,
            step_num: step,
            ..HostRare::default()
        };
        let mut h = HostNodes::default();
        // line 0: two steps, each with a launch; a producer in the first
        h.push(node(0, 0, 100), root(5));
        h.push(launch(0, 10, 1), HostRare::default());
        h.push(
            node(0, 20, 5),
            HostRare {
                prod: (14, 7),
                ..HostRare::default()
            },
        );
        h.push(node(0, 200, 100), root(6));
        h.push(launch(0, 210, 2), HostRare::default());
        // after the steps: an ungrouped launch; an event grouping does not need
        h.push(launch(0, 400, 3), HostRare::default());
        h.push(node(0, 450, 5), HostRare::default());
        // line 1: the consumer of the first step's producer, with a launch nested in it
        let mut l1 = HostNodes::default();
        l1.push(
            node(1, 500, 50),
            HostRare {
                name: exec,
                cons: (14, 7),
                ..HostRare::default()
            },
        );
        l1.push(launch(1, 510, 4), HostRare::default());
        h.append(&mut l1);
        assert_eq!(h.nodes.len(), 8);
        assert_eq!(l1.nodes.capacity(), 0);
        let g = group(&h, &|id| s.get(id).to_string());
        assert_eq!(g.of_node, vec![0, 0, 0, 1, 1, NONE, 0, 0]);
        assert_eq!(g.names[&0], "train 5");
        assert_eq!(g.names[&1], "train 6");
        assert_eq!(g.by_corr.get(&1), Some(&0));
        assert_eq!(g.by_corr.get(&2), Some(&1));
        assert_eq!(g.by_corr.get(&3), None);
        assert_eq!(g.by_corr.get(&4), Some(&0));
    }

    #[test]
    fn outer_root_of_same_level_wins_and_file_groups_stay() {
        let mut s = Interner::new();
        let outer = s.intern("SessionRun");
        let r1 = HostRare {
            root: 1,
            ..HostRare::default()
        };
        let mut h = HostNodes::default();
        h.push(node(0, 0, 100), HostRare { name: outer, ..r1 });
        h.push(node(0, 10, 20), r1);
        h.push(
            node(0, 40, 10),
            HostRare {
                group: 42,
                ..HostRare::default()
            },
        );
        h.push(launch(0, 41, 9), HostRare::default());
        let g = group(&h, &|id| s.get(id).to_string());
        // Propagation stops at an event grouped already: what it nests keeps no group.
        assert_eq!(g.of_node, vec![0, 0, 42, NONE]);
        // An implicit root gives no name part.
        assert_eq!(g.names[&0], "0");
        assert_eq!(g.names.len(), 1);
        assert!(g.by_corr.is_empty());
    }

    /// Without a root no group is made: launches keep the groups the file gave them, a name
    /// alone does not keep an event.
    #[test]
    fn without_roots_file_groups_reach_launches() {
        let mut s = Interner::new();
        let mut h = HostNodes::default();
        h.push(
            launch(0, 0, 7),
            HostRare {
                group: 3,
                ..HostRare::default()
            },
        );
        h.push(launch(0, 10, 8), HostRare::default());
        h.push(
            node(0, 20, 5),
            HostRare {
                name: s.intern("x"),
                ..HostRare::default()
            },
        );
        let g = group(&h, &|id| s.get(id).to_string());
        assert_eq!(h.nodes.len(), 2);
        assert_eq!(g.of_node, vec![3, NONE]);
        assert!(g.names.is_empty());
        assert_eq!(g.by_corr.get(&7), Some(&3));
        assert_eq!(g.by_corr.get(&8), None);
    }
}
