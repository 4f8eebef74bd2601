//! A diff flame graph: the merged tree of B matched node by node with A's by path (the same
//! names from the root; the two captures have their own string tables, so names are compared as
//! text). B's tree gives the widths; each node's Δ = B's figure − A's (0 for A when the path is
//! new in B), both divided by their step counts when both captures have steps, so captures of
//! different lengths compare. Subtrees only in A are listed as removed.

use super::tree::{FlameTree, Metric, ROOT};
use crate::model::Interner;

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
        let mut matched = vec![false; a.len()];
        if !a_of.is_empty() && !matched.is_empty() {
            a_of[ROOT as usize] = ROOT;
            matched[ROOT as usize] = true;
        }
        // Parents are created before their children, so one pass in index order suffices.
        for n in 1..b.len() as u32 {
            let p = a_of[b.parent(n) as usize];
            if p == NONE {
                continue;
            }
            // Same text; merged names (`ProfilerStep*`) by their shown text, as each tree's
            // node is named after a different step.
            let raw = b_strings.get(b.name(n));
            let shown = b.name_str(n, b_strings);
            let k = if shown == raw {
                a_strings.lookup(raw).and_then(|id| a.child(p, id))
            } else {
                a.children(p)
                    .iter()
                    .copied()
                    .find(|&k| a.name_str(k, a_strings) == shown)
            };
            if let Some(k) = k {
                a_of[n as usize] = k;
                matched[k as usize] = true;
            }
        }
        let mut removed: Vec<u32> = (1..a.len() as u32)
            .filter(|&k| !matched[k as usize] && matched[a.parent(k) as usize])
            .collect();
        removed.sort_by_key(|&k| std::cmp::Reverse(a.total(k)));
        let (div_a, div_b) = match steps {
            (sa, sb) if sa > 0 && sb > 0 => (sa as f64, sb as f64),
            _ => (1.0, 1.0),
        };
        TreeDiff {
            a,
            a_of,
            removed,
            div_a,
            div_b,
        }
    }

    /// True when the figures are per step.
    pub fn per_step(&self) -> bool {
        self.div_a != 1.0 || self.div_b != 1.0
    }

    /// A's width of B's node `n` under `m`, normalised (0 when the path is new in B).
    pub fn a_width(&self, n: u32, m: Metric) -> f64 {
        match self.a_of.get(n as usize) {
            Some(&k) if k != NONE => self.a.width(k, m) as f64 / self.div_a,
            _ => 0.0,
        }
    }

    /// B's width of its node `n` under `m`, normalised.
    pub fn b_width(&self, b: &FlameTree, n: u32, m: Metric) -> f64 {
        b.width(n, m) as f64 / self.div_b
    }

    /// Δ = B − A of B's node `n` under `m`, normalised.
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
}
