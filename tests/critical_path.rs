//! The critical path (`analysis::critical`, `tracetui critical`) against HTA 0.5's
//! `CriticalPathAnalysis` on HTA's own critical-path test traces (tests/fixtures/critical, see
//! its PROVENANCE.md) and on the H200 capture of tests/fixtures/torch_gpu.
//!
//! HTA's figures (path length and time by `bound_by`, µs) come from running HTA 0.5.0 on the
//! same files (docs/oracle/hta_critical_path.py); the node counts (315 on simple_add, 149 on
//! alexnet) are the ones HTA's tests assert.

use serde_json::Value;
use std::path::{Path, PathBuf};
use tracetui::analysis::critical::{self, Kind, Mode, Options, StepPath};
use tracetui::analysis::steps::{Step, StepSource, Steps};
use tracetui::model::Capture;

mod common;

const PARAM_FORWARD: &str = "[param|pytorch.model.alex_net|0|0|0|measure|forward]";

fn fixture(dir: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir)
        .join(name)
}

fn load(p: &Path) -> Capture {
    tracetui::formats::load(
        p,
        tracetui::model::SourceInfo::default(),
        &tracetui::formats::Progress::default(),
    )
    .expect("load fixture")
}

/// HTA's window for `annotation` instance `k`: the k-th slice (in start order) named so.
fn window(c: &Capture, annotation: &str, k: usize) -> Steps {
    let mut found: Vec<u32> = (0..c.slices.len() as u32)
        .filter(|&i| c.slice_name(i) == annotation)
        .collect();
    found.sort_by_key(|&i| c.slices.start[i as usize]);
    let id = found[k] as usize;
    Steps {
        source: StepSource::Regex,
        steps: vec![Step {
            number: k as i64,
            start: c.slices.start[id],
            end: c.slices.end(id),
            partial: false,
        }],
    }
}

fn hta(zero_weight_launch_edges: bool) -> Options {
    Options {
        mode: Mode::Hta,
        zero_weight_launch_edges,
        top: 10,
    }
}

fn us(ps: i64) -> f64 {
    ps as f64 / 1e6
}

/// HTA's `bound_by` sums of a path, µs.
fn bound(p: &StepPath, class: &str) -> f64 {
    us(p
        .by_kind
        .iter()
        .filter(|(k, _)| k.hta_bound() == class)
        .map(|x| x.1)
        .sum())
}

#[test]
fn simple_add_matches_hta() {
    let c = load(&fixture("critical", "simple_add.trace.json.gz"));
    let steps = window(&c, PARAM_FORWARD, 1);
    for zero in [false, true] {
        let p = &critical::analyze(&c, &steps, &hta(zero), None)[0];
        eprintln!("simple_add {} {:?} {}", us(p.path), p.by_kind, p.edges.len());
        assert_eq!(us(p.path), 241724.0);
        assert_eq!(bound(p, "cpu_bound"), 241190.0);
        assert_eq!(bound(p, "gpu_compute_bound"), 508.0);
        assert_eq!(bound(p, "gpu_kernel_kernel_overhead"), 9.0);
        assert_eq!(bound(p, "gpu_kernel_launch_overhead"), 17.0);
        // HTA's test: 315 nodes on the path (with zero-weight launch edges).
        if zero {
            assert_eq!(p.edges.len() + 1, 315);
        }
    }
}

#[test]
fn alexnet_matches_hta() {
    let c = load(&fixture("critical", "alexnet.trace.json.gz"));
    let steps = window(&c, PARAM_FORWARD, 1);
    let p = &critical::analyze(&c, &steps, &hta(true), None)[0];
    eprintln!("alexnet {} {:?} {} {:?}", us(p.path), p.by_kind, p.edges.len(), p.skipped);
    assert_eq!(us(p.path), 35834.0);
    assert_eq!(bound(p, "cpu_bound"), 32042.0);
    assert_eq!(bound(p, "gpu_compute_bound"), 3712.0);
    assert_eq!(bound(p, "gpu_kernel_kernel_overhead"), 50.0);
    assert_eq!(bound(p, "gpu_kernel_launch_overhead"), 30.0);
    assert_eq!(p.edges.len() + 1, 149);
}
