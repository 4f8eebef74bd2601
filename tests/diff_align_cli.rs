//! `tracetui diff A B --align STREAM`: the aligned timelines headless, on HTA's trace-diff pair.

use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::run_cli as run;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/diff")
        .join(rel)
}

#[test]
fn align_a_stream_json_text_and_errors() {
    let (a, b) = (fixture("hta_control.json.gz"), fixture("hta_test.json.gz"));
    let (a, b) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    let (code, out, err) = run(&[
        "diff", a, b, "--align", "stream 7", "--json", "--limit", "5",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    let n = |k: &str| v[k].as_u64().unwrap_or(u64::MAX);
    assert!(v["stream"].as_str().unwrap_or("").ends_with("/ stream 7"));
    assert_eq!(v["device"], true);
    // Every event of both streams is one row.
    assert_eq!(n("matched") + n("removed"), n("events_a"));
    assert_eq!(n("matched") + n("added"), n("events_b"));
    assert_eq!(n("events_a"), 8964);
    // Root slices: 6 of the stream's 15 136 slices nest in another.
    assert_eq!(n("events_b"), 15130);
    assert_eq!(n("slower") + n("faster") + n("same"), n("matched"));
    assert!(n("fallback_windows") > 0);
    let top = v["top"].as_array().expect("top");
    assert_eq!(top.len(), 5);
    let d: Vec<f64> = top
        .iter()
        .map(|p| p["delta_ns"].as_f64().unwrap_or(0.0).abs())
        .collect();
    assert!(d.windows(2).all(|w| w[0] >= w[1]), "{d:?}");
    for p in top {
        let (x, y) = (p["dur_a_ns"].as_f64(), p["dur_b_ns"].as_f64());
        assert_eq!(p["delta_ns"].as_f64(), x.zip(y).map(|(x, y)| y - x), "{p}");
    }
    // busiest = the same stream here; text mode.
    let (code, out, err) = run(&["diff", a, b, "--align", "busiest"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("stream 7 (device)"), "{out}");
    assert!(out.contains("largest Δ of the matched pairs"), "{out}");
    assert!(out.contains("aligned greedily"), "{out}");
    // An unknown stream lists the ones in common.
    let (code, _, err) = run(&["diff", a, b, "--align", "no such stream"]);
    assert_ne!(code, 0);
    assert!(err.contains("no stream of A and B matches"), "{err}");
    assert!(err.contains("stream 7"), "{err}");
}
