//! `gpu` on a real GPU capture: the device row names its window for what it is, the busy time of
//! device work launched before the trace is shown on its own (`unlinked_busy_ns`), and
//! `--steps` scopes the figures to the device work launched in those steps (the rule of
//! `diff --steps`). Fixture: tests/fixtures/gpu/h200_torch_cut.pt.trace.json.gz — a real H200
//! torch capture whose host events before 2 ms into ProfilerStep#2 were cut away, so the kernels
//! launched before that have no launch in the file (tests/fixtures/gpu/PROVENANCE.md). Expected
//! figures were computed from the JSON events by a separate Python union of [ts, ts + dur) in ns
//! (see PROVENANCE.md), not by tracetui.

use serde_json::Value;
use std::path::{Path, PathBuf};

const FIXTURE: &str = "tests/fixtures/gpu/h200_torch_cut.pt.trace.json.gz";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)
}

fn gpu(extra: &[&str]) -> (i32, String) {
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .arg("gpu")
        .arg(fixture())
        .args(extra)
        .output()
        .expect("run tracetui");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn json(extra: &[&str]) -> Value {
    let mut a = vec!["--json"];
    a.extend_from_slice(extra);
    let (code, text) = gpu(&a);
    assert_eq!(code, 0, "{text}");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    v["captures"][0].clone()
}

fn i(v: &Value, k: &str) -> i64 {
    v[k].as_i64().unwrap_or_else(|| panic!("{k} in {v}"))
}

#[test]
fn unlinked_busy_is_reported_per_device() {
    let c = json(&[]);
    let d = &c["devices"][0];
    let acts: i64 = c["gpu"]
        .as_array()
        .map_or(0, |s| s.iter().map(|s| i(s, "activities")).sum());
    let unlinked: i64 = c["gpu"]
        .as_array()
        .map_or(0, |s| s.iter().map(|s| i(s, "unlinked")).sum());
    assert_eq!((acts, unlinked), (428, 13));
    // |∪ all| = 1 420 766 ns, |∪ linked| = 1 380 222 ns.
    assert_eq!(i(d, "busy_ns"), 1_420_766);
    assert_eq!(i(d, "unlinked_busy_ns"), 40_544);
    assert_eq!(i(d, "busy_ns") - i(d, "unlinked_busy_ns"), 1_380_222);
    // The window is not kernel time: same figure under both names, wider than busy.
    assert_eq!(i(d, "window_ns"), i(d, "kernel_time_ns"));
    assert!(i(d, "window_ns") > i(d, "busy_ns"));
}

#[test]
fn text_names_the_window_and_the_unlinked_busy() {
    let (code, t) = gpu(&[]);
    assert_eq!(code, 0);
    assert!(!t.contains("KERNEL TIME"), "{t}");
    assert!(t.contains("WINDOW") && t.contains("IDLE %WIN"), "{t}");
    assert!(
        t.contains("first activity start to last activity end"),
        "{t}"
    );
    assert!(
        t.contains(
            "device 0: 40.544 µs of the 1.421 ms busy is device work whose launch is not in the file"
        ),
        "{t}"
    );
}

#[test]
fn steps_keep_the_work_launched_in_them() {
    let c = json(&["--steps", "3"]);
    let st = &c["steps"];
    assert_eq!(st["numbers"], serde_json::json!([3]));
    assert_eq!(i(st, "activities_left_out"), 428 - 214);
    let acts: i64 = c["gpu"]
        .as_array()
        .map_or(0, |s| s.iter().map(|s| i(s, "activities")).sum());
    assert_eq!(acts, 214);
    let d = &c["devices"][0];
    assert_eq!(i(d, "busy_ns"), 710_656);
    // Launched in step 3: none of the work launched before the trace.
    assert_eq!(i(d, "unlinked_busy_ns"), 0);
    assert_eq!(
        i(d, "window_ns"),
        4_917_085_621_455_831 - 4_917_085_602_424_007
    );
    let (code, t) = gpu(&["--steps", "3"]);
    assert_eq!(code, 0);
    assert!(
        t.contains(
            "--steps 3: steps 3; device work launched in them (214 activities of the file left out)"
        ),
        "{t}"
    );
}

#[test]
fn steps_that_match_nothing_are_an_error_for_the_capture() {
    let (_, text) = gpu(&["--json", "--steps", "40..50"]);
    let v: Value = serde_json::from_str(&text).expect("JSON");
    let c = &v["captures"][0];
    assert!(
        c["error"]
            .as_str()
            .is_some_and(|e| e.contains("no step numbered")),
        "{c}"
    );
}
