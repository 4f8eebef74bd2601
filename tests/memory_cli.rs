//! `tracetui memory` and the memory columns of `tracetui stats` on real and fixture files: the
//! torch CPU capture of tests/fixtures/cli (recorded with profile_memory) and the snapshot
//! pickles of tests/fixtures/memory.

use serde_json::Value;
use std::path::{Path, PathBuf};
use tracetui::analysis::memory::{build, key_averages};
use tracetui::formats::Progress;

const KINETO: &str = "cli/worker0.1795311589169457977.pt.trace.json.gz";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn run(args: &[&str], file: &str) -> (i32, Value, String) {
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .arg(args[0])
        .arg(fixture(file))
        .args(&args[1..])
        .output()
        .expect("run");
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn real_capture_totals_agree_with_the_events() {
    let c = tracetui::formats::load(
        &fixture(KINETO),
        tracetui::model::SourceInfo::default(),
        &Progress::default(),
    )
    .expect("loads");
    let m = build(&c);
    assert_eq!(m.tracks.len(), 1);
    let t = &m.tracks[0];
    assert_eq!(t.device, "cpu");
    assert!(t.totals_from_events);
    assert_eq!(
        t.counts.allocs + t.counts.frees,
        562,
        "every [memory] event"
    );
    // The allocator's running total moves by exactly each event's bytes: the matched allocations
    // and frees explain the series (first total − first bytes = what was allocated before).
    let before = t.allocated[0] - t.allocs.bytes[0];
    let live_end = t.live_at_end().1;
    assert_eq!(t.counts.unmatched_frees, 0);
    assert_eq!(*t.allocated.last().expect("samples"), before + live_end);
    // Every allocation lies inside an op of its thread (torch allocates inside aten ops).
    assert!(t.allocs.op.iter().all(|&o| o != tracetui::model::NO_SLICE));
    // torch's rule: the columns' brute-force reference agrees on the real capture.
    assert_eq!(key_averages::compute(&c), key_averages::compute_brute(&c));
}

#[test]
fn memory_json_on_a_trace() {
    let (code, v, _) = run(&["memory", "--json", "--at", "100ms", "--stacks"], KINETO);
    assert_eq!(code, 0);
    let cap = &v["captures"][0];
    assert_eq!(cap["kind"], "trace");
    let t = &cap["tracks"][0];
    assert_eq!(t["device"], "cpu");
    assert_eq!(t["allocs"], 286);
    assert_eq!(t["frees"], 276);
    assert_eq!(t["live_at_end_count"], 10);
    assert_eq!(t["top_ops"][0]["name"], "aten::mm");
    let live = &t["live"];
    assert_eq!(live["count"], 15);
    let listed: i64 = live["allocations"]
        .as_array()
        .expect("allocations")
        .iter()
        .map(|a| a["bytes"].as_i64().expect("bytes"))
        .sum();
    assert_eq!(live["bytes"].as_i64(), Some(listed));
}

#[test]
fn memory_on_a_snapshot_prints_memory_viz_lines() {
    let (code, v, _) = run(
        &["memory", "--json", "--stacks"],
        "memory/snap_multi.pickle",
    );
    assert_eq!(code, 0);
    let cap = &v["captures"][0];
    assert_eq!(cap["kind"], "snapshot");
    let folded: Vec<String> = cap["folded"]
        .as_array()
        .expect("folded")
        .iter()
        .map(|l| l.as_str().expect("line").to_string())
        .collect();
    let want: Vec<String> = std::fs::read_to_string(fixture("memory/snap_multi.memory.txt"))
        .expect("expected")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(folded, want);
    assert_eq!(cap["tracks"][0]["ooms"][0]["device_free"], 123 << 20);
    let (code, _, text) = run(&["memory"], "memory/snap_multi.pickle");
    assert_eq!(code, 0);
    assert!(text.contains("OUT OF MEMORY"), "{text}");
    assert!(
        text.contains("frees of memory allocated before the trace"),
        "{text}"
    );
}

#[test]
fn stats_has_torch_memory_columns() {
    let (code, v, text) = run(
        &["stats", "--json", "--cat", "cpu_op,user_annotation"],
        KINETO,
    );
    assert_eq!(code, 0, "{text}");
    let rows = v["captures"][0]["stats"].as_array().expect("rows");
    let mm = rows.iter().find(|r| r["name"] == "aten::mm").expect("mm");
    for k in ["self_cpu_mem", "cpu_mem", "self_device_mem", "device_mem"] {
        assert!(mm[k].is_i64(), "{k} in {mm}");
    }
    assert!(mm["cpu_mem"].as_i64() > Some(0));
    assert_eq!(mm["device_mem"], 0);
    let (_, _, text) = run(&["stats", "--cat", "cpu_op,user_annotation"], KINETO);
    assert!(text.contains("SELF CPU MEM"), "{text}");
}

/// A JAX device memory profile (pprof, `jax.profiler.save_device_memory_profile`): bytes by
/// device and buffer kind per track, by allocation stack in the "allocated by" rows.
#[test]
fn memory_on_a_jax_pprof_profile() {
    let (code, v, _) = run(&["memory", "--json"], "memory/jax_cpu.memory.prof");
    assert_eq!(code, 0);
    let t = &v["captures"][0]["tracks"];
    assert_eq!(
        (t[0]["device"].as_str(), t[0]["allocator"].as_str()),
        (Some("cpu:0"), Some("buffer"))
    );
    assert_eq!(t[0]["peak_allocated"], 528_288);
    assert_eq!(t[0]["allocs"], 3);
    assert_eq!(
        (t[1]["allocator"].as_str(), t[1]["allocs"].as_u64()),
        (Some("executable"), Some(5))
    );
    let top: Vec<&str> = t[0]["top_ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert!(
        top.iter()
            .any(|n| n.contains("make_weights") || n.contains("make_ids")),
        "{top:?}"
    );
    // Discovery recognises it; a file named like one that is not says why.
    assert!(tracetui::discover::is_snapshot_file(&fixture(
        "memory/jax_cpu.memory.prof"
    )));
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.prof");
    std::fs::write(&bad, b"\x1f\x8b\x08\x00not gzip at all").unwrap();
    assert!(!tracetui::discover::is_snapshot_file(&bad));
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .args(["memory", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("gzip:") && all.contains("bad.prof"), "{all}");
}
