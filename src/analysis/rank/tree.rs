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
/// from sorting the roots; the groups are split over two threads.
///
/// torch's order needs no child lists: the DFS that pops the last child first is the reverse of a
/// post-order, and the containment stack closes events in post-order. So each group yields its
/// closing sequence and, per root, the end of that root's subtree in it; the roots are then taken
/// in descending (start, index) order and each subtree's closing run is copied reversed.
pub fn build(start: &[Ps], end: &[Ps], groups: &[usize]) -> Tree {
    let n = start.len();
    let groups = whole_groups(groups, n);
    let mut parent = vec![NO_PARENT; n];
    let mut self_ps = vec![0; n];
    let mut closing = vec![0u32; n];
    // Split the groups where the first half of the events ends.
    let g = groups.len() - 1;
    let cut_g = groups[..g].partition_point(|&o| o * 2 < n);
    let cut = groups[cut_g];
    let (pa, pb) = parent.split_at_mut(cut);
    let (sa, sb) = self_ps.split_at_mut(cut);
    let (ca, cb) = closing.split_at_mut(cut);
    let (ga, gb) = (&groups[..=cut_g], &groups[cut_g..]);
    let (mut roots, rb) = super::par::par2(
        || close_groups(start, end, ga, pa, sa, ca),
        || close_groups(start, end, gb, pb, sb, cb),
    );
    roots.extend(rb);
    // Roots with their subtree's run in `closing`, taken in descending (start, index) order.
    // Each group's roots are already in order: the stable sort merges the runs.
    roots.sort_by_key(|r| (start[r.0 as usize], r.0));
    let mut order = Vec::with_capacity(n);
    for &(_, lo, hi) in roots.iter().rev() {
        order.extend(closing[lo as usize..hi as usize].iter().rev());
    }
    Tree {
        parent,
        self_ps,
        order,
    }
}

/// `groups` as offsets covering `[0, n)`: starting at 0 and ending at `n` (callers pass them so;
/// any other input is made whole by adding the missing ends).
pub fn whole_groups(groups: &[usize], n: usize) -> std::borrow::Cow<'_, [usize]> {
    if groups.first() == Some(&0) && groups.last() == Some(&n) {
        return std::borrow::Cow::Borrowed(groups);
    }
    let mut owned = vec![0];
    owned.extend(groups.iter().copied().filter(|&o| o > 0 && o < n));
    owned.push(n);
    owned.dedup();
    std::borrow::Cow::Owned(owned)
}

/// The containment pass over `groups` (full-column offsets; the output slices begin at
/// `groups[0]`): parents, self times and the closing (post-)order. Returns the roots as
/// `(index, run start, run end)`, the run being the root's subtree in closing positions.
fn close_groups(
    start: &[Ps],
    end: &[Ps],
    groups: &[usize],
    parent: &mut [u32],
    self_ps: &mut [Ps],
    closing: &mut [u32],
) -> Vec<(u32, u32, u32)> {
    let base = groups.first().copied().unwrap_or(0);
    let mut st: ContainmentStack<u32> = ContainmentStack::new();
    let mut w = 0usize;
    let mut close = |e: u32| {
        closing[w] = e;
        w += 1;
    };
    for gw in groups.windows(2) {
        for i in gw[0]..gw[1] {
            let d = end[i] - start[i];
            self_ps[i - base] = d;
            let mut p = NO_PARENT;
            st.push(start[i], end[i], i as u32, &mut close, |q| p = *q);
            if p != NO_PARENT {
                parent[i - base] = p;
                self_ps[p as usize - base] -= d;
            }
        }
        st.drain(&mut close);
    }
    // A root closes last of its subtree, which closes right after the previous root.
    let mut roots = Vec::new();
    let mut run = base;
    for (k, &e) in closing.iter().enumerate() {
        if parent[e as usize - base] == NO_PARENT {
            roots.push((e, run as u32, (base + k + 1) as u32));
            run = base + k + 1;
        }
    }
    roots
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

    /// torch's DFS transcribed: child lists, roots by (start, index), pop the last pushed.
    fn reference_order(parent: &[u32], start: &[Ps]) -> Vec<u32> {
        let n = parent.len();
        let mut kids: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, &p) in parent.iter().enumerate() {
            if p == NO_PARENT {
                roots.push(i as u32);
            } else {
                kids[p as usize].push(i as u32);
            }
        }
        roots.sort_by_key(|&r| (start[r as usize], r));
        let mut order = Vec::new();
        let mut stack = roots;
        while let Some(e) = stack.pop() {
            order.push(e);
            stack.extend_from_slice(&kids[e as usize]);
        }
        order
    }

    proptest::proptest! {
        #[test]
        fn order_and_self_match_reference(
            tracks in proptest::collection::vec(
                proptest::collection::vec((0i64..60, 0i64..30), 0..12), 1..5),
        ) {
            let (mut start, mut end, mut groups) = (Vec::new(), Vec::new(), vec![0]);
            for t in &tracks {
                let mut ev: Vec<(Ps, Ps)> = t.iter().map(|&(s, d)| (s, s + d)).collect();
                ev.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
                for (s, e) in ev {
                    start.push(s);
                    end.push(e);
                }
                groups.push(start.len());
            }
            let t = build(&start, &end, &groups);
            let brute: Vec<Option<usize>> = groups
                .windows(2)
                .flat_map(|w| {
                    let ev: Vec<(Ps, Ps)> = (w[0]..w[1]).map(|i| (start[i], end[i])).collect();
                    crate::analysis::nesting::parents(&ev)
                        .into_iter()
                        .map(move |p| p.map(|p| p + w[0]))
                })
                .collect();
            let want: Vec<u32> = brute.iter().map(|p| p.map_or(NO_PARENT, |p| p as u32)).collect();
            proptest::prop_assert_eq!(&t.parent, &want);
            let mut self_ps: Vec<Ps> = (0..start.len()).map(|i| end[i] - start[i]).collect();
            for (i, &p) in want.iter().enumerate() {
                if p != NO_PARENT {
                    self_ps[p as usize] -= end[i] - start[i];
                }
            }
            proptest::prop_assert_eq!(&t.self_ps, &self_ps);
            proptest::prop_assert_eq!(t.order, reference_order(&want, &start));
        }
    }

    #[test]
    fn source_names() {
        assert!(is_source("train.py(12): step"));
        assert!(is_source("x/module.py(1501): _call_impl"));
        assert!(!is_source("aten::mm"));
        assert!(!is_source("a.py(12"));
    }
}
