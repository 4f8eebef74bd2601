//! Aggregated flame graphs: the merged call tree of a scope (same path of names from the root =
//! same node) with total, self, device time and count per node and the slices merged into each,
//! folded stacks out (and torch's `export_stacks` reproduced), and the sandwich of one name.
//!
//! - [`tree`]: the tree and its builder (the API a diff walks: [`FlameTree::nodes`],
//!   [`FlameTree::path_names`], [`FlameTree::child`], [`FlameTree::find_path`]).
//! - [`build`]: from a capture's nesting, for a [`Scope`] (capture, range, tracks, process) or
//!   the ancestors of a list of slices; device time attributed to the launching stack.
//! - [`gpu`]: launch → activity links. [`folded`]: folded-stack lines. [`torch`]: torch's
//!   export_stacks. [`sandwich`]: callers / callees of a name. [`shape`]: what an icicle walks
//!   (the merged tree, or a diff tree with the paths gone in B).
//!
//! See docs/flame.md.

pub mod build;
pub mod diff;
pub mod folded;
pub mod gpu;
pub mod sandwich;
pub mod shape;
pub mod torch;
pub mod tree;

pub use build::{Scope, build, build_ancestors};
pub use diff::{DiffShape, TreeDiff};
pub use folded::{Folded, TimeUnit, fold};
pub use gpu::DeviceLinks;
pub use sandwich::{Sandwich, sandwich};
pub use shape::Shape;
pub use tree::{DEVICE, FlameTree, Metric, ROOT, TreeBuilder, UNLINKED, Unit};
