//! `tracetui rank` on real fixtures with exact numbers (cross-checked against the transcription of
//! torch's `BasicEvaluation` in tests/oracle/, see docs/analysis.md).

use serde_json::Value;
use std::path::Path;

fn fixture(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
        .display()
        .to_string()
}

/// Runs tracetui; returns (exit code, stdout).
fn run(args: &[&str]) -> (i32, String) {
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .args(args)
        .output()
        .expect("run tracetui");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn json(args: &[&str]) -> Value {
    let (code, out) = run(args);
    assert_eq!(code, 0, "{out}");
    serde_json::from_str::<Value>(&out).unwrap()["captures"][0].clone()
}

fn counts(c: &Value) -> [u64; 7] {
    [
        "launches",
        "kernels",
        "linked",
        "queue_depth_max",
        "events",
        "falling_phases",
        "candidates",
    ]
    .map(|k| c[k].as_u64().unwrap())
}

#[test]
fn alexnet_default_and_compat() {
    let f = fixture("chrome/alexnet_cuda_sync.json.gz");
    let c = json(&["rank", &f, "--json", "--top", "3"]);
    assert_eq!(c["mode"], "default");
    assert_eq!(counts(&c), [79, 79, 79, 18, 728, 2, 119]);
    let top = c["optimizable"].as_array().unwrap();
    let rows: Vec<(&str, i64, f64, f64, u64)> = top
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap(),
                e["start_epoch_ns"].as_i64().unwrap(),
                e["self_ns"].as_f64().unwrap(),
                e["idle_ns"].as_f64().unwrap(),
                e["queue_depth"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                "[param|cuda]",
                1695835542514261000,
                61949000.0,
                40358565000.0,
                0
            ),
            ("aten::mul", 1695835585804961000, 21316000.0, 21338000.0, 0),
            (
                "aten::fill_",
                1695835585784599000,
                20318000.0,
                20318000.0,
                0
            ),
        ]
    );
    // `start_ns` counts from the capture's zero: the absolute time less `zero_epoch_ns`.
    let zero = c["zero_epoch_ns"].as_i64().unwrap();
    for e in top {
        let start = e["start_ns"].as_i64().unwrap();
        assert!(start >= 0);
        assert_eq!(start, e["start_epoch_ns"].as_i64().unwrap() - zero);
    }
    let scores: Vec<f64> = top.iter().map(|e| e["score"].as_f64().unwrap()).collect();
    for (s, want) in scores.iter().zip([6.690044, 3.058196, 2.965397]) {
        assert!((s - want).abs() < 1e-5, "{s} vs {want}");
    }
    assert_eq!(top[0]["track"], "pid 2869224/thread:tid 2869224");
    assert_eq!(top[0]["dur_ns"].as_f64(), Some(43425283000.0));
    // Compat: cuda_sync events on the GPU stream count as kernels (41 more), the quirky interval
    // walk trims the first event's idle time, and the scores are float32 — the numbers torch's
    // own code gives on this file (tests/oracle).
    let c = json(&["rank", &f, "--json", "--top", "1", "--compat"]);
    assert_eq!(c["mode"], "compat");
    assert_eq!(counts(&c), [79, 120, 79, 18, 728, 2, 130]);
    let e = &c["optimizable"][0];
    assert_eq!(e["name"], "[param|cuda]");
    assert_eq!(e["idle_ns"].as_f64(), Some(40282869000.0));
    assert!((e["score"].as_f64().unwrap() - 7.021383762359619).abs() < 1e-6);
}

#[test]
fn text_table_times_relative_to_first_event() {
    let f = fixture("chrome/alexnet_cuda_sync.json.gz");
    let (code, out) = run(&["rank", &f, "--top", "2"]);
    assert_eq!(code, 0);
    assert!(out.contains("79 launches, 79 kernels, 79 linked; max queue depth 18; 728 CPU events, 2 falling phases, 119 candidates"), "{out}");
    let first = out.lines().find(|l| l.contains("[param|cuda]")).unwrap();
    assert!(
        first.contains("33.132 ms") && first.contains("92.94%"),
        "{first}"
    );
    assert!(out.contains("showing 2 of 119 candidates"), "{out}");
}

#[test]
fn driver_and_hip_launches_only_in_default_mode() {
    let t = fixture("chrome/triton_example.json.gz");
    assert_eq!(
        counts(&json(&["rank", &t, "--json"])),
        [1, 1, 1, 1, 6, 0, 0]
    );
    assert_eq!(
        counts(&json(&["rank", &t, "--json", "--compat"])),
        [0, 1, 0, 0, 6, 0, 0]
    );
    let m = fixture("chrome/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
    assert_eq!(
        counts(&json(&["rank", &m, "--json"])),
        [14, 14, 14, 1, 94, 0, 0]
    );
    // Compat: no launch names match; the 2 gpu_user_annotation slices count as kernels.
    assert_eq!(
        counts(&json(&["rank", &m, "--json", "--compat"])),
        [0, 16, 0, 0, 94, 0, 0]
    );
}

#[test]
fn cpu_only_capture_says_so_and_exits_0() {
    let f = fixture("chrome/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    let (code, out) = run(&["rank", &f]);
    assert_eq!(code, 0);
    assert!(
        out.contains("no GPU work (no kernels): nothing to rank"),
        "{out}"
    );
    let c = json(&["rank", &f, "--json"]);
    assert_eq!(counts(&c), [0, 0, 0, 0, 15, 0, 0]);
    assert_eq!(c["optimizable"].as_array().map(Vec::len), Some(0));
}

#[test]
fn xplane_gpu_capture() {
    let f = fixture("xplane/tf_bert_gpu.xplane.pb.gz");
    let c = json(&["rank", &f, "--json", "--top", "2"]);
    // One linking rule with `gpu` (analysis::launch_link): every stream activity (copies too) is a
    // kernel, every launch links; `gpu` says 1556 activities, 0 unlinked on this capture.
    assert_eq!(counts(&c), [1556, 1556, 1556, 97, 15354, 11, 6318]);
    let names: Vec<&str> = c["optimizable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["Iterator::Prefetch", "Iterator::Prefetch"]);
    assert_eq!(c["optimizable"][0]["queue_depth"].as_u64(), Some(20));
}
