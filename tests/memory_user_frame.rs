//! Memory on real GPU captures: allocator-snapshot allocations group by their first user frame,
//! not by the allocator's own frame (oracle: docs/oracle/memory_viz_gpu.py, which applies torch's
//! memory_viz `_frame_filter` to the frames and wrote the expectation file); the live list at a
//! time says how much of the allocator's counter was allocated before the capture began.
//! Fixtures (PROVENANCE.md beside each): tests/fixtures/memory/h200_snapshot_cut.pickle, cut from
//! the H200 capture's `memory_snapshot.pickle`; tests/fixtures/gpu/h200_torch_cut.pt.trace.json.gz.

use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn memory_json(rel: &str, extra: &[&str]) -> Value {
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .arg("memory")
        .arg(fixture(rel))
        .arg("--json")
        .args(extra)
        .output()
        .expect("run tracetui");
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["captures"][0].clone()
}

#[test]
fn snapshot_allocations_group_by_first_user_frame() {
    let c = memory_json("memory/h200_snapshot_cut.pickle", &[]);
    let top = c["tracks"][0]["top_ops"].clone();
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("memory/h200_snapshot_cut.sites.json")).expect("read"),
    )
    .expect("expected JSON");
    assert_eq!(top, expected);
    let names: Vec<&str> = top.as_array().map_or(Vec::new(), |v| {
        v.iter().filter_map(|t| t["name"].as_str()).collect()
    });
    assert!(
        names.iter().all(|n| !n.contains("CachingAllocator")),
        "{names:?}"
    );
    // Python lines for the forward pass; the autograd thread's allocations (no Python frame)
    // under their backward formula, past the dispatcher and the generated wrappers.
    assert!(names.contains(&"module.py:1097:<lambda>"), "{names:?}");
    assert!(
        names.iter().any(|n| n.contains("mm_mat1_backward")),
        "{names:?}"
    );
    assert!(
        names.iter().all(|n| !n.contains("wrapper_CUDA")),
        "{names:?}"
    );
}

#[test]
fn live_list_says_what_was_allocated_before_the_capture() {
    // At 10 ms into the cut capture (inside ProfilerStep#3): the cuda:0 counter holds the
    // model's weights and optimizer state, allocated before profiling started.
    let c = memory_json("gpu/h200_torch_cut.pt.trace.json.gz", &["--at", "10ms"]);
    let t = c["tracks"]
        .as_array()
        .and_then(|v| v.iter().find(|t| t["device"] == "cuda:0"))
        .expect("cuda:0 track")
        .clone();
    let live = &t["live"];
    let (allocated, listed, before) = (
        live["allocated"].as_i64().unwrap_or(0),
        live["bytes"].as_i64().unwrap_or(0),
        live["before_capture_bytes"].as_i64().unwrap_or(-1),
    );
    assert!(before > 0, "{live}");
    assert_eq!(before, allocated - listed);
}
