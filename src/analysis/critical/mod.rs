//! The critical path of each step through host threads, launches, syncs and the device
//! (docs/critical-path.md).
//!
//! Per step, a DAG with two nodes per event (its begin and end) — host operators, device
//! activities — and weighted edges: an operator's time between its children's boundaries, the
//! time between top-level operators (`gap`), launch → activity (the launch delay), activity →
//! activity on a stream, device → host where a blocking call waited, and thread → thread where
//! one thread waited for another. Its longest path is what bounded the step; [`classify`] sums
//! the path's time by kind, track and event and says in one sentence what bounds the step.
//!
//! [`Mode::Hta`] applies the rules of HTA 0.5's `CriticalPathAnalysis` instead (one call stack
//! per thread, zero-weight gaps between top-level operators, blocking calls of zero weight,
//! sync edges only from `cuda_sync` markers, launch edges only when the stream's queue was
//! empty), so the figures can be checked against HTA. NCCL collectives across ranks are not
//! joined yet: [`cross_rank`] is the seam.

mod build;
pub mod classify;
mod device;
pub mod graph;
mod hta_index;
mod options;
pub mod roles;

pub use classify::{StepPath, TopEvent, bounds_sentence};
pub use graph::{Edge, Graph, Kind, LongestPath};
pub use options::{Mode, Options, Skipped};
pub use roles::Roles;

use crate::analysis::steps::Steps;
use crate::model::Capture;

/// The critical path of every step of `c` (or of step number `only`).
pub fn analyze(c: &Capture, steps: &Steps, opts: &Options, only: Option<i64>) -> Vec<StepPath> {
    let roles = Roles::new(c);
    let mut b = build::Builder::new(c, &roles, *opts);
    let mut out = Vec::new();
    for s in &steps.steps {
        if only.is_some_and(|n| n != s.number) {
            continue;
        }
        b.build(s.start, s.end);
        let p = b.g.longest_path();
        let mut skipped = b.skipped;
        skipped.negative_edges = b.g.negative;
        skipped.cyclic_nodes = p.cyclic as u64;
        out.push(classify::classify(
            c,
            s,
            &b.g,
            &b.node_ev,
            &p,
            skipped,
            opts.top.max(1),
        ));
    }
    out
}

/// The seam for cross-rank dependencies: NCCL collectives of several ranks' captures would
/// join here (a collective ends when its slowest rank's instance ends). Not implemented: each
/// rank's path is computed alone.
pub fn cross_rank(_ranks: &[&Capture]) -> Option<Vec<Edge>> {
    None
}
