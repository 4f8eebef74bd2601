//! A diff flame graph: the merged tree of B matched node by node with A's by path (the same
//! names from the root; the two captures have their own string tables, so names are compared as
//! text). B's tree gives the widths; each node's Δ = B's figure − A's (0 for A when the path is
//! new in B), both divided by their step counts when both captures have steps, so captures of
//! different lengths compare.
//!
//! Paths only in A ("gone in B") become nodes of the diff tree too: ids from B's node count on
//! ([`TreeDiff::is_gone`]), parents before children, B's figures 0. [`DiffShape`] lays them out
//! at A's width in their place — a node's drawn width is B's plus the A width of the gone
//! subtrees below it — so removed frames are seen, selected and zoomed like the others.

use super::shape::Shape;
use super::tree::{FlameTree, Metric, ROOT, Unit};
use crate::analysis::names::match_name;
use crate::model::{Interner, StrId};
use rustc_hash::FxHashMap;

/// No counterpart on the other side.
pub const NONE: u32 = u32::MAX;

/// B's tree matched with A's.
#[derive(Clone, Debug)]
pub struct TreeDiff {
    /// A's merged tree.
    pub a: FlameTree,
    /// Per node of B: the node of A with the same path, or [`NONE`].
    pub a_of: Vec<u32>,
    /// Roots of the subtrees only in A (their parent has a counterpart in B), widest first.
    pub removed: Vec<u32>,
    /// A's figures are divided by this (its step count, or 1).
    pub div_a: f64,
    /// B's figures are divided by this.
    pub div_b: f64,
    /// Number of B's nodes: gone nodes have ids from here on.
    b_len: u32,
    /// Per gone node (id − `b_len`): its node in A, in A's order (parents first).
    gone_a: Vec<u32>,
    /// Per gone node: its parent in the diff tree (a B node for a removed root).
    gone_parent: Vec<u32>,
    /// Per gone node: its name in `names`.
    gone_name: Vec<StrId>,
    /// Per node of A: its gone index, or [`NONE`] when it has a counterpart in B.
    gone_of_a: Vec<u32>,
    /// Names of the gone nodes (A's text; A's string table is not kept).
    names: Interner,
    /// Per B node with gone nodes below it: their A width per metric (in [`Metric::ALL`]
    /// order), normalised — what the node's drawn width adds to B's.
    gone_below: FxHashMap<u32, [f64; 4]>,
}

impl TreeDiff {
    /// Matches `b` (names in `b_strings`) with `a` (names in `a_strings`); figures are divided
    /// by `steps_a` / `steps_b` when both are non-zero.
    pub fn new(
        a: FlameTree,
        a_strings: &Interner,
        b: &FlameTree,
        b_strings: &Interner,
        steps: (usize, usize),
    ) -> TreeDiff {
        let mut a_of = vec![NONE; b.len()];
        let mut b_of_a = vec![NONE; a.len()];
        if !a_of.is_empty() && !b_of_a.is_empty() {
            a_of[ROOT as usize] = ROOT;
            b_of_a[ROOT as usize] = ROOT;
        }
        // Parents are created before their children, so one pass in index order suffices.
        for n in 1..b.len() as u32 {
            let p = a_of[b.parent(n) as usize];
            if p == NONE {
                continue;
            }
            // Same text; merged names (`ProfilerStep*`) by their shown text, as each tree's
            // node is named after a different step.
            // Python frames that differ only in object addresses (`… at 0x7f…>`) are the same
            // frame ([`match_name`], as `diff` and `ranks` match names).
            let raw = b_strings.get(b.name(n));
            let shown = b.name_str(n, b_strings);
            let exact = if shown == raw {
                a_strings.lookup(raw).and_then(|id| a.child(p, id))
            } else {
                None
            };
            let k = exact.or_else(|| {
                let want = match_name(shown);
                a.children(p).iter().copied().find(|&k| {
                    b_of_a[k as usize] == NONE && match_name(a.name_str(k, a_strings)) == want
                })
            });
            if let Some(k) = k {
                a_of[n as usize] = k;
                b_of_a[k as usize] = n;
            }
        }
        let (div_a, div_b) = match steps {
            (sa, sb) if sa > 0 && sb > 0 => (sa as f64, sb as f64),
            _ => (1.0, 1.0),
        };
        // The gone nodes: A's unmatched nodes, in A's order (a parent before its children).
        let b_len = b.len() as u32;
        let mut gone_of_a = vec![NONE; a.len()];
        let (mut gone_a, mut gone_parent, mut gone_name) = (Vec::new(), Vec::new(), Vec::new());
        let mut names = Interner::default();
        let mut removed = Vec::new();
        for k in 1..a.len() as u32 {
            if b_of_a[k as usize] != NONE {
                continue;
            }
            let p = a.parent(k);
            let parent = match b_of_a.get(p as usize) {
                Some(&n) if n != NONE => {
                    removed.push(k);
                    n
                }
                _ => match gone_of_a.get(p as usize) {
                    Some(&g) if g != NONE => b_len + g,
                    _ => continue,
                },
            };
            gone_of_a[k as usize] = gone_a.len() as u32;
            gone_a.push(k);
            gone_parent.push(parent);
            gone_name.push(names.intern(a.name_str(k, a_strings)));
        }
        removed.sort_by_key(|&k| std::cmp::Reverse(a.total(k)));
        // Each removed root's A widths count in every B ancestor's drawn width.
        let mut gone_below: FxHashMap<u32, [f64; 4]> = FxHashMap::default();
        for &k in &removed {
            let w = Metric::ALL.map(|m| a.width(k, m) as f64 / div_a);
            let mut n = b_of_a[a.parent(k) as usize];
            loop {
                let e = gone_below.entry(n).or_insert([0.0; 4]);
                for (x, y) in e.iter_mut().zip(w) {
                    *x += y;
                }
                if n == ROOT {
                    break;
                }
                n = b.parent(n);
            }
        }
        TreeDiff {
            a,
            a_of,
            removed,
            div_a,
            div_b,
            b_len,
            gone_a,
            gone_parent,
            gone_name,
            gone_of_a,
            names,
            gone_below,
        }
    }

    /// True when the figures are per step.
    pub fn per_step(&self) -> bool {
        self.div_a != 1.0 || self.div_b != 1.0
    }

    /// Nodes of the diff tree: B's, then the gone ones.
    pub fn len(&self) -> usize {
        self.b_len as usize + self.gone_a.len()
    }

    /// True when the diff tree has no node but the root.
    pub fn is_empty(&self) -> bool {
        self.len() <= 1
    }

    /// Number of gone nodes (every node of the removed subtrees).
    pub fn gone_count(&self) -> usize {
        self.gone_a.len()
    }

    /// True when `n` is a path only in A (gone in B).
    pub fn is_gone(&self, n: u32) -> bool {
        n >= self.b_len && ((n - self.b_len) as usize) < self.gone_a.len()
    }

    /// The diff-tree node of a node of A that is gone in B.
    pub fn gone_node_of_a(&self, k: u32) -> Option<u32> {
        match self.gone_of_a.get(k as usize) {
            Some(&g) if g != NONE => Some(self.b_len + g),
            _ => None,
        }
    }

    /// A's node for a diff-tree node: B's counterpart, or the gone node's own.
    pub fn a_node(&self, n: u32) -> Option<u32> {
        if n >= self.b_len {
            return self.gone_a.get((n - self.b_len) as usize).copied();
        }
        self.a_of.get(n as usize).copied().filter(|&k| k != NONE)
    }

    /// Name text of a diff-tree node (B's strings for B's nodes).
    pub fn name_str<'s>(&'s self, b: &'s FlameTree, n: u32, b_strings: &'s Interner) -> &'s str {
        if n >= self.b_len {
            return self
                .gone_name
                .get((n - self.b_len) as usize)
                .map_or("", |&s| self.names.get(s));
        }
        b.name_str(n, b_strings)
    }

    /// Depth of a diff-tree node (a gone node's is its depth in A: the same path).
    pub fn depth(&self, b: &FlameTree, n: u32) -> u16 {
        match self.a_node(n) {
            Some(k) if n >= self.b_len => self.a.depth(k),
            _ => b.depth(n),
        }
    }

    /// A's width of node `n` under `m`, normalised (0 when the path is new in B).
    pub fn a_width(&self, n: u32, m: Metric) -> f64 {
        self.a_node(n)
            .map_or(0.0, |k| self.a.width(k, m) as f64 / self.div_a)
    }

    /// B's width of node `n` under `m`, normalised (0 for a gone node).
    pub fn b_width(&self, b: &FlameTree, n: u32, m: Metric) -> f64 {
        if n >= self.b_len {
            return 0.0;
        }
        b.width(n, m) as f64 / self.div_b
    }

    /// Δ = B − A of node `n` under `m`, normalised.
    pub fn delta(&self, b: &FlameTree, n: u32, m: Metric) -> f64 {
        self.b_width(b, n, m) - self.a_width(n, m)
    }

    /// Relative change of node `n` in −1..=1: Δ / max(A, B) (1: new in B; −1: gone).
    pub fn change(&self, b: &FlameTree, n: u32, m: Metric) -> f64 {
        let (wa, wb) = (self.a_width(n, m), self.b_width(b, n, m));
        let big = wa.max(wb);
        if big <= 0.0 {
            0.0
        } else {
            ((wb - wa) / big).clamp(-1.0, 1.0)
        }
    }

    /// Drawn width of node `n`: B's (normalised) plus A's of the gone subtrees below it; a gone
    /// node's is A's.
    pub fn span(&self, b: &FlameTree, n: u32, m: Metric) -> f64 {
        if n >= self.b_len {
            return self.a_width(n, m);
        }
        let extra = self.gone_below.get(&n).map_or(0.0, |w| w[m.index()]);
        self.b_width(b, n, m) + extra
    }

    /// The A width (normalised) of everything gone in B under `m`.
    pub fn gone_width(&self, m: Metric) -> f64 {
        self.gone_below.get(&ROOT).map_or(0.0, |w| w[m.index()])
    }

    /// The diff tree over B's tree `b`, for layout and moves.
    pub fn over<'a>(&'a self, b: &'a FlameTree) -> DiffShape<'a> {
        DiffShape { b, d: self }
    }
}

/// The diff tree as an icicle walks it: B's nodes and the gone ones (see the module doc).
#[derive(Clone, Copy, Debug)]
pub struct DiffShape<'a> {
    /// B's merged tree.
    pub b: &'a FlameTree,
    /// Its match with A.
    pub d: &'a TreeDiff,
}

impl Shape for DiffShape<'_> {
    fn unit(&self) -> Unit {
        self.b.unit()
    }

    fn parent(&self, n: u32) -> u32 {
        let d = self.d;
        if n >= d.b_len {
            return d
                .gone_parent
                .get((n - d.b_len) as usize)
                .copied()
                .unwrap_or(ROOT);
        }
        self.b.parent(n)
    }

    fn children_into(&self, n: u32, out: &mut Vec<u32>) {
        let d = self.d;
        if n < d.b_len {
            out.extend_from_slice(self.b.children(n));
        }
        if let Some(k) = d.a_node(n) {
            out.extend(d.a.children(k).iter().filter_map(|&c| d.gone_node_of_a(c)));
        }
    }

    fn span(&self, n: u32, m: Metric) -> f64 {
        self.d.span(self.b, n, m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::flame::TreeBuilder;

    fn tree(strings: &mut Interner, paths: &[(&[&str], i64)]) -> FlameTree {
        let mut b = TreeBuilder::new();
        for (path, v) in paths {
            let mut n = ROOT;
            for name in *path {
                n = b.child(n, strings.intern(name));
                b.add(n, *v, 0, None);
            }
        }
        b.finish()
    }

    /// Frames that differ only in an object address are one node (issue 52 §4); a frame of
    /// another name is not.
    #[test]
    fn frames_differing_only_in_addresses_match() {
        let (mut sa, mut sb) = (Interner::default(), Interner::default());
        let fa = "<built-in method run of PyCapsule object at 0x7f3a11c2b0f0>";
        let fb = "<built-in method run of PyCapsule object at 0x7f09d4e1a330>";
        let a = tree(&mut sa, &[(&["main", fa], 10), (&["main", "other"], 1)]);
        let b = tree(&mut sb, &[(&["main", fb], 12), (&["main", "another"], 1)]);
        let d = TreeDiff::new(a, &sa, &b, &sb, (1, 1));
        let find = |t: &FlameTree, s: &Interner, p: &[&str]| {
            let ids: Vec<_> = p.iter().map(|x| s.lookup(x).unwrap()).collect();
            t.find_path(&ids).unwrap()
        };
        let nb = find(&b, &sb, &["main", fb]);
        assert_eq!(d.a_of[nb as usize], find(&d.a, &sa, &["main", fa]));
        assert_eq!(d.delta(&b, nb, Metric::Total), 2.0);
        assert_eq!(d.a_of[find(&b, &sb, &["main", "another"]) as usize], NONE);
        assert_eq!(
            d.gone_count(),
            1,
            "`other` is gone, the address frame is not"
        );
    }

    #[test]
    fn nodes_match_by_path_and_removed_subtrees_are_listed() {
        let (mut sa, mut sb) = (Interner::default(), Interner::default());
        // Different interning orders on purpose.
        sb.intern("zzz");
        let a = tree(
            &mut sa,
            &[(&["main", "mm"], 10), (&["main", "old", "x"], 5)],
        );
        let b = tree(&mut sb, &[(&["main", "mm"], 30), (&["main", "new"], 7)]);
        let d = TreeDiff::new(a, &sa, &b, &sb, (2, 3));
        assert!(d.per_step());
        let find = |t: &FlameTree, s: &Interner, p: &[&str]| {
            let ids: Vec<_> = p.iter().map(|x| s.lookup(x).unwrap()).collect();
            t.find_path(&ids).unwrap()
        };
        let mm = find(&b, &sb, &["main", "mm"]);
        assert_eq!(d.a_of[mm as usize], find(&d.a, &sa, &["main", "mm"]));
        // Per step: B 30/3 = 10, A 10/2 = 5.
        assert_eq!(d.delta(&b, mm, Metric::Total), 5.0);
        assert_eq!(d.change(&b, mm, Metric::Total), 0.5);
        let new = find(&b, &sb, &["main", "new"]);
        assert_eq!(d.a_of[new as usize], NONE);
        assert_eq!(d.change(&b, new, Metric::Total), 1.0);
        assert_eq!(d.removed, vec![find(&d.a, &sa, &["main", "old"])]);
    }

    /// Every node of the diff tree from the root, with its path of names.
    fn walk(d: &TreeDiff, b: &FlameTree, sb: &Interner) -> Vec<(u32, Vec<String>)> {
        let shape = d.over(b);
        let mut out = Vec::new();
        let mut stack = vec![(ROOT, Vec::<String>::new())];
        let mut kids = Vec::new();
        while let Some((n, path)) = stack.pop() {
            kids.clear();
            shape.children_into(n, &mut kids);
            for &c in &kids {
                assert_eq!(shape.parent(c), n);
                let mut p = path.clone();
                p.push(d.name_str(b, c, sb).to_string());
                stack.push((c, p));
            }
            out.push((n, path));
        }
        out
    }

    #[test]
    fn gone_paths_are_nodes_once_with_a_figures() {
        let (mut sa, mut sb) = (Interner::default(), Interner::default());
        sb.intern("zzz");
        let a = tree(
            &mut sa,
            &[
                (&["main", "mm"], 10),
                (&["main", "old", "x"], 5),
                (&["main", "old", "y"], 2),
                (&["gone_root"], 4),
            ],
        );
        let b = tree(&mut sb, &[(&["main", "mm"], 30), (&["main", "new"], 7)]);
        let d = TreeDiff::new(a.clone(), &sa, &b, &sb, (1, 1));
        let nodes = walk(&d, &b, &sb);
        let gone: Vec<_> = nodes.iter().filter(|(n, _)| d.is_gone(*n)).collect();
        // old, old/x, old/y, gone_root: each exactly once, each with A's figures.
        assert_eq!(gone.len(), 4);
        assert_eq!(d.gone_count(), 4);
        let mut paths: Vec<String> = gone.iter().map(|(_, p)| p.join("/")).collect();
        paths.sort();
        assert_eq!(paths, ["gone_root", "main/old", "main/old/x", "main/old/y"]);
        for (n, p) in gone {
            let ids: Vec<_> = p.iter().map(|x| sa.lookup(x).unwrap()).collect();
            let k = a.find_path(&ids).unwrap();
            assert_eq!(d.a_node(*n), Some(k));
            assert_eq!(d.a_width(*n, Metric::Total), a.total(k) as f64);
            assert_eq!(d.b_width(&b, *n, Metric::Total), 0.0);
            assert_eq!(d.change(&b, *n, Metric::Total), -1.0);
            assert_eq!(d.span(&b, *n, Metric::Total), a.total(k) as f64);
        }
        // Every B node is there once too.
        assert_eq!(nodes.len(), b.len() + 4);
        // Drawn widths: B's plus the gone A below; siblings fit in their parent.
        let main = b.find_path(&[sb.lookup("main").unwrap()]).unwrap();
        assert_eq!(d.span(&b, main, Metric::Total), 37.0 + 7.0);
        assert_eq!(d.span(&b, ROOT, Metric::Total), 37.0 + 11.0);
        assert_eq!(d.gone_width(Metric::Total), 11.0);
        // Instances: old ×2 (x and y each add one), x, y, gone_root.
        assert_eq!(d.gone_width(Metric::Count), 5.0);
        let shape = d.over(&b);
        for (n, _) in &nodes {
            let mut kids = Vec::new();
            shape.children_into(*n, &mut kids);
            let sum: f64 = kids.iter().map(|&c| shape.span(c, Metric::Count)).sum();
            assert!(sum <= shape.span(*n, Metric::Count), "node {n}");
        }
        assert!(!d.is_gone(ROOT) && !d.is_gone(main));
        assert!(!d.is_gone(d.len() as u32));
    }

    #[test]
    fn a_capture_against_itself_has_nothing_gone() {
        let mut s = Interner::default();
        let a = tree(
            &mut s,
            &[
                (&["main", "mm"], 10),
                (&["main", "old", "x"], 5),
                (&["y"], 1),
            ],
        );
        let d = TreeDiff::new(a.clone(), &s, &a, &s, (0, 0));
        assert!(d.removed.is_empty());
        assert_eq!(d.gone_count(), 0);
        assert_eq!(d.len(), a.len());
        assert_eq!(d.gone_width(Metric::Total), 0.0);
        for n in 0..a.len() as u32 {
            assert_eq!(d.delta(&a, n, Metric::Total), 0.0);
            assert_eq!(
                d.span(&a, n, Metric::Total),
                a.width(n, Metric::Total) as f64
            );
        }
        assert_eq!(walk(&d, &a, &s).len(), a.len());
    }

    proptest::proptest! {
        /// Every path of A is in the diff tree exactly once: as B's node when B has it, else
        /// as a gone node with A's width.
        #[test]
        fn every_a_path_is_in_the_diff_tree_once(
            pa in proptest::collection::vec((proptest::collection::vec(0u8..4, 1..4), 1i64..50), 1..12),
            pb in proptest::collection::vec((proptest::collection::vec(0u8..4, 1..4), 1i64..50), 0..12),
        ) {
            let names = ["a", "b", "c", "d"];
            let mk = |s: &mut Interner, p: &[(Vec<u8>, i64)]| {
                let v: Vec<(Vec<&str>, i64)> = p
                    .iter()
                    .map(|(x, w)| (x.iter().map(|&i| names[i as usize]).collect(), *w))
                    .collect();
                let r: Vec<(&[&str], i64)> = v.iter().map(|(x, w)| (x.as_slice(), *w)).collect();
                tree(s, &r)
            };
            let (mut sa, mut sb) = (Interner::default(), Interner::default());
            let a = mk(&mut sa, &pa);
            let b = mk(&mut sb, &pb);
            let d = TreeDiff::new(a.clone(), &sa, &b, &sb, (0, 0));
            let nodes = walk(&d, &b, &sb);
            let mut seen = std::collections::HashSet::new();
            for (n, p) in &nodes {
                proptest::prop_assert!(seen.insert(p.clone()), "path twice: {:?}", p);
                if d.is_gone(*n) {
                    let k = d.a_node(*n).unwrap();
                    proptest::prop_assert_eq!(d.span(&b, *n, Metric::Total), a.total(k) as f64);
                }
            }
            for k in a.nodes() {
                let p: Vec<String> = a.path(k).iter().map(|&x| a.name_str(x, &sa).to_string()).collect();
                proptest::prop_assert!(seen.contains(&p), "A path missing: {:?}", p);
            }
            proptest::prop_assert_eq!(nodes.len(), d.len());
        }
    }
}
