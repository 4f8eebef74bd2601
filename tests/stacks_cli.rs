//! `tracetui stacks`: folded output, `--torch` against torch's own `export_stacks` lines for a
//! real capture (summed per stack), torch's rules on a hand-made capture (duplicate nodes, backward
//! stacks, frame filter), folded stacks in (file and stdin), and the JSON shape.

use assert_cmd::Command;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn run(args: &[&str], stdin: Option<&str>) -> (String, String, i32) {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin!("tracetui"));
    c.arg("stacks").args(args).env("TRACETUI_CACHE", "off");
    if let Some(s) = stdin {
        c.write_stdin(s);
    }
    let o = c.output().expect("runs");
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

fn summed(text: &str) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        let (s, v) = l.rsplit_once(' ').expect("stack value");
        *m.entry(s.to_string()).or_insert(0) += v.parse::<u64>().expect("integer value");
    }
    m
}

#[test]
fn torch_mode_equals_torchs_own_export_stacks() {
    let f = fixture("flame/worker0.1795536379695100043.pt.trace.json.gz");
    let (out, err, code) = run(&[f.to_str().unwrap_or(""), "--torch"], None);
    assert_eq!(code, 0, "{err}");
    // torch 2.15's own `export_stacks("self_cpu_time_total")` for the same profile.
    let reference = std::fs::read_to_string(fixture(
        "flame/worker0.1795536379695100043.torch.stacks.txt",
    ))
    .expect("reference");
    // Our lines are already one per stack, sorted.
    let ours = summed(&out);
    assert_eq!(ours.len(), out.lines().count());
    assert_eq!(ours, summed(&reference));
    let keys: Vec<&String> = ours.keys().collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn torch_rules_on_a_hand_made_capture() {
    // µs: module [0,1000) ⊃ forward [50,400) ⊃ mm [100,300) ⊃ mm [110,290) ⊃ empty [120,130);
    // module ⊃ autograd backward frame [600,950) ⊃ evaluate_function [650,900) ⊃ MmBackward0
    // [660,860) ⊃ mm [670,820).
    let ev = |name: &str, cat: &str, ts: u32, dur: u32, args: &str| {
        format!(
            r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":1,"tid":1,"ts":{ts},"dur":{dur},"args":{{{args}}}}}"#
        )
    };
    let events = [
        ev("main.py(1): <module>", "python_function", 0, 1000, ""),
        ev("model.py(10): forward", "python_function", 50, 350, ""),
        ev(
            "aten::mm",
            "cpu_op",
            100,
            200,
            r#""Sequence number":5,"Fwd thread id":0"#,
        ),
        ev("aten::mm", "cpu_op", 110, 180, ""),
        ev("aten::empty", "cpu_op", 120, 10, ""),
        ev(
            "torch/autograd/__init__.py(200): backward",
            "python_function",
            600,
            350,
            "",
        ),
        ev(
            "autograd::engine::evaluate_function: MmBackward0",
            "cpu_op",
            650,
            250,
            r#""Sequence number":5,"Fwd thread id":1"#,
        ),
        ev(
            "MmBackward0",
            "cpu_op",
            660,
            200,
            r#""Sequence number":5,"Fwd thread id":1"#,
        ),
        ev("aten::mm", "cpu_op", 670, 150, ""),
    ];
    let json = format!(
        r#"{{"schemaVersion":1,"traceEvents":[{}]}}"#,
        events.join(",")
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("w.pt.trace.json");
    std::fs::write(&p, json).expect("write");
    let (out, err, code) = run(&[p.to_str().unwrap_or(""), "--torch"], None);
    assert_eq!(code, 0, "{err}");
    // Forward stack: mm (dup child removed: 200 − 10 = 190) + empty 10; backward ops take the
    // forward stack: MmBackward0 50 + mm 150. Under `<module>`: evaluate_function keeps its own
    // stack (the autograd backward frame is filtered) 250 − 200 = 50, and the python events
    // write their self time too (torch's verbose event list holds them): forward 350 − 200 = 150,
    // the backward frame 350 − 250 = 100; `<module>` itself has an empty stack.
    assert_eq!(
        out,
        "main.py(1):_<module> 300\nmain.py(1):_<module>;model.py(10):_forward 400\n"
    );
    // Without python frames: a note, and nothing written.
    let plain = dir.path().join("p.pt.trace.json");
    std::fs::write(
        &plain,
        format!(
            r#"{{"traceEvents":[{}]}}"#,
            ev("aten::mm", "cpu_op", 0, 10, "")
        ),
    )
    .expect("write");
    let (out, err, code) = run(&[plain.to_str().unwrap_or(""), "--torch"], None);
    assert_eq!((out.as_str(), code), ("", 0));
    assert!(
        err.contains("no python_function events") && err.contains("verbose=True"),
        "{err}"
    );
    // Our own stacks of the same capture: the op nesting under the python frames.
    let (out, _, _) = run(&[p.to_str().unwrap_or(""), "--metric", "count"], None);
    assert!(
        out.contains(
            "main.py(1):_<module>;model.py(10):_forward;aten::mm;aten::mm;aten::empty 1\n"
        ),
        "{out}"
    );
    let (_, err, code) = run(
        &[p.to_str().unwrap_or(""), "--torch", "--metric", "total"],
        None,
    );
    assert_eq!(code, 2, "{err}");
}

#[test]
fn folded_stacks_in_from_a_file_and_stdin() {
    let text = "a;b 3\na 2\nc;d\t4\na;b 1\nbad\n";
    let (out, err, code) = run(&["-", "--metric", "self"], Some(text));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "a 2\na;b 4\nc;d 4\n");
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("app.folded");
    std::fs::write(&p, text).expect("write");
    std::fs::write(dir.path().join("other.stacks.txt"), "a;b 10\n").expect("write");
    // A log dir: both files are captures; their stacks are summed.
    let (out, err, code) = run(&[dir.path().to_str().unwrap_or("")], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "a 2\na;b 14\nc;d 4\n");
    let (out, _, _) = run(
        &[p.to_str().unwrap_or(""), "--json", "--metric", "total"],
        None,
    );
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["metric"], "total");
    assert_eq!(v["stacks"][0]["frames"][0], "a");
    assert_eq!(v["stacks"][0]["value"], 6);
    let (_, err, _) = run(
        &[
            p.to_str().unwrap_or(""),
            "-o",
            dir.path().join("o.txt").to_str().unwrap_or(""),
        ],
        None,
    );
    assert!(err.contains("bad_line") && !err.contains("error"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("o.txt")).unwrap_or_default(),
        "a 2\na;b 4\nc;d 4\n"
    );
}

#[test]
fn device_metric_and_ranges_on_a_gpu_capture() {
    let f = fixture("chrome/alexnet_cuda_sync.json.gz");
    let (out, err, code) = run(&[f.to_str().unwrap_or(""), "--metric", "device"], None);
    assert_eq!(code, 0, "{err}");
    // Kernel time lands on launch frames (cudaLaunchKernel, cudaMemcpyAsync, …).
    assert!(
        out.lines().any(|l| l.contains(";cudaLaunchKernel ")),
        "{out}"
    );
    let total: u64 = summed(&out).values().sum();
    assert!(total > 0);
    let (r, _, _) = run(
        &[
            f.to_str().unwrap_or(""),
            "--metric",
            "device",
            "--from",
            "0",
            "--to",
            "1ms",
        ],
        None,
    );
    let rt: u64 = summed(&r).values().sum();
    assert!(rt < total);
}
