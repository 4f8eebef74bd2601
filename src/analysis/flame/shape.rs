//! What an icicle walks: a tree's shape (parent, children) and each node's width under a
//! metric. The merged tree is one; a diff tree (B's tree plus the paths gone in B, see
//! [`super::diff::DiffShape`]) is another, so layout and keyboard moves are written once.

use super::tree::{FlameTree, Metric, Unit};

/// A tree an icicle can lay out and the cursor can walk.
pub trait Shape {
    /// What the widths measure (time or bytes).
    fn unit(&self) -> Unit;
    /// Parent of `n` (the root is its own parent).
    fn parent(&self, n: u32) -> u32;
    /// Appends the children of `n` (any order) to `out`.
    fn children_into(&self, n: u32, out: &mut Vec<u32>);
    /// Width of `n` under `m` (a parent is at least as wide as its children together).
    fn span(&self, n: u32, m: Metric) -> f64;
}

impl Shape for FlameTree {
    fn unit(&self) -> Unit {
        FlameTree::unit(self)
    }

    fn parent(&self, n: u32) -> u32 {
        FlameTree::parent(self, n)
    }

    fn children_into(&self, n: u32, out: &mut Vec<u32>) {
        out.extend_from_slice(self.children(n));
    }

    fn span(&self, n: u32, m: Metric) -> f64 {
        self.width(n, m) as f64
    }
}
