//! The CPU event tree of torch's `BasicEvaluation` (analysis.md §b step 1): parents by the
//! containment rule per track, self time, torch's DFS order and source locations.

use crate::analysis::nesting::ContainmentStack;
use crate::model::Ps;

/// "No parent".
pub const NO_PARENT: u32 = u32::MAX;

/// The tree over the selected CPU events (indices into the caller's event list).
#[derive(Clone, Debug, Default)]
pub struct Tree {
    /// Direct parent of each event, or [`NO_PARENT`].
    pub parent: Vec<u32>,
    /// Duration minus the durations of the direct children (no clamping), ps.
    pub self_ps: Vec<Ps>,
    /// torch's metrics order: DFS with a stack seeded with the roots in start order, popping the
    /// last pushed first (so the last root and last children come first).
    pub order: Vec<u32>,
}

/// Builds the tree. `start`/`end` are the events grouped by track, each group sorted by (start asc,
/// end desc); `groups` holds the offsets where groups begin (plus the total at the end). O(n) apart
/// from sorting the roots.
pub fn build(start: &[Ps], end: &[Ps], groups: &[usize]) -> Tree {
    let n = start.len();
    let mut parent = vec![NO_PARENT; n];
    let mut self_ps: Vec<Ps> = (0..n).map(|i| end[i] - start[i]).collect();
    let mut st: ContainmentStack<u32> = ContainmentStack::new();
    for w in groups.windows(2) {
        for i in w[0]..w[1] {
            st.push(start[i], end[i], i as u32, |_| {}, |p| parent[i] = *p);
        }
        st.drain(|_| {});
    }
    // Children lists (CSR), children in index order = start order within a track.
    let mut first = vec![0u32; n + 1];
    for &p in &parent {
        if p != NO_PARENT {
            first[p as usize + 1] += 1;
        }
    }
    for i in 0..n {
        first[i + 1] += first[i];
    }
    let mut fill = first.clone();
    let mut kids = vec![0u32; first[n] as usize];
    let mut roots: Vec<u32> = Vec::new();
    for (i, &p) in parent.iter().enumerate() {
        if p == NO_PARENT {
            roots.push(i as u32);
        } else {
            let p = p as usize;
            self_ps[p] -= end[i] - start[i];
            kids[fill[p] as usize] = i as u32;
            fill[p] += 1;
        }
    }
    roots.sort_by_key(|&r| (start[r as usize], r));
    let mut order = Vec::with_capacity(n);
    let mut stack = roots;
    while let Some(e) = stack.pop() {
        order.push(e);
        let e = e as usize;
        stack.extend_from_slice(&kids[first[e] as usize..first[e + 1] as usize]);
    }
    Tree {
        parent,
        self_ps,
        order,
    }
}

/// True for names torch takes as a source location (regex `\.py\(.*\)`, searched anywhere).
pub fn is_source(name: &str) -> bool {
    name.find(".py(")
        .is_some_and(|k| name[k + 4..].contains(')'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_time_and_dfs_order() {
        // Track 0: a [0,100) ⊃ b [10,40), c [50,90) ⊃ d [60,70); track 1: e [5,20).
        let start = [0, 10, 50, 60, 5];
        let end = [100, 40, 90, 70, 20];
        let t = build(&start, &end, &[0, 4, 5]);
        assert_eq!(t.parent, vec![NO_PARENT, 0, 0, 2, NO_PARENT]);
        assert_eq!(t.self_ps, vec![100 - 30 - 40, 30, 40 - 10, 10, 15]);
        // Roots by start: a (0), e (5); pop e first, then a, then a's last child c, d, then b.
        assert_eq!(t.order, vec![4, 0, 2, 3, 1]);
    }

    #[test]
    fn source_names() {
        assert!(is_source("train.py(12): step"));
        assert!(is_source("x/module.py(1501): _call_impl"));
        assert!(!is_source("aten::mm"));
        assert!(!is_source("a.py(12"));
    }
}
