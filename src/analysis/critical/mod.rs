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

pub use classify::{GraphOnPath, StepPath, TopEvent, bounds_sentence};
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
        out.push(classify::classify(c, s, &b, &p, skipped, opts.top.max(1)));
    }
    out
}

/// The seam for cross-rank dependencies: NCCL collectives of several ranks' captures would
/// join here (a collective ends when its slowest rank's instance ends). Not implemented: each
/// rank's path is computed alone.
pub fn cross_rank(_ranks: &[&Capture]) -> Option<Vec<Edge>> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::steps::{Step, StepSource};
    use crate::model::{ArgsRef, CaptureBuilder, Format, Key, ProcessKind, SourceInfo, TrackKind};

    /// A host thread: op A [0, 10] launching kernel k1 (launch at 2..4), then a
    /// `cudaStreamSynchronize` [12, 60]; the GPU runs k1 over [20, 55]. A gap of 2 between A and
    /// the sync. Times in µs (× 1e6 ps).
    fn capture() -> Capture {
        let us = 1_000_000;
        let mut b = CaptureBuilder::new();
        let host = b.process(Key::Int(1));
        b.process_mut(host).kind = ProcessKind::Host;
        let gpu = b.process(Key::Int(0));
        b.process_mut(gpu).kind = ProcessKind::Gpu;
        let th = b.track(host, Key::Int(1), TrackKind::Thread);
        let st = b.track(gpu, Key::Int(7), TrackKind::GpuStream);
        let (op, rt, k) = (
            b.intern("cpu_op"),
            b.intern("cuda_runtime"),
            b.intern("kernel"),
        );
        let names: Vec<_> = ["A", "cudaLaunchKernel", "cudaStreamSynchronize", "k1"]
            .iter()
            .map(|n| b.intern(n))
            .collect();
        let n = ArgsRef::NONE;
        b.add_slice(th, 0, 10 * us, names[0], op, n, 0);
        b.add_slice(th, 2 * us, 2 * us, names[1], rt, n, 5);
        b.add_slice(th, 12 * us, 48 * us, names[2], rt, n, 6);
        b.add_slice(st, 20 * us, 35 * us, names[3], k, n, 5);
        b.finish(SourceInfo::default(), Format::Kineto)
    }

    fn whole() -> Steps {
        Steps {
            source: StepSource::Whole,
            steps: vec![Step {
                number: 0,
                start: 0,
                end: 60_000_000,
                partial: false,
            }],
        }
    }

    #[test]
    fn a_synchronize_waits_for_the_kernel_that_ends_inside_it() {
        let c = capture();
        let p = &analyze(&c, &whole(), &Options::default(), None)[0];
        let us = |k: Kind| p.kind_ps(k) / 1_000_000;
        // A's start → launch start (2) → kernel start (launch delay 18) → kernel (35) → sync
        // returns (5): the path spans the whole 60 µs.
        assert_eq!(p.path, 60_000_000);
        assert_eq!(
            (
                us(Kind::CpuOp),
                us(Kind::LaunchDelay),
                us(Kind::Kernel),
                us(Kind::SyncWait)
            ),
            (2, 18, 35, 5)
        );
        assert_eq!(
            c.slice_name(p.wait_site.expect("a wait")),
            "cudaStreamSynchronize"
        );
        let s = bounds_sentence(p, Some("cudaStreamSynchronize"));
        assert!(
            s.starts_with("GPU-bound: 58 % GPU kernels and copies"),
            "{s}"
        );
        // HTA's rules: the sync weighs 0, no device → host edge without a cuda_sync marker: the
        // host chain A (10) … sync (0) is shorter than A's start → kernel end (55).
        let hta = Options {
            mode: Mode::Hta,
            ..Options::default()
        };
        let q = &analyze(&c, &whole(), &hta, None)[0];
        assert_eq!(q.path, 55_000_000);
        assert_eq!(q.kind_ps(Kind::SyncWait), 0);
    }
}
