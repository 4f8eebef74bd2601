//! `tracetui nested` on a real JAX CPU capture (tests/fixtures/xplane/vm.xplane.pb): the XLA op
//! events carry `hlo_module`/`program_id` stats, so their unified names are `jit_*(N-None)`.
//! Figures cross-checked with `tracetui stats`: `wrapped_subtract` (40 events, min 1.030 µs,
//! max 5.828 ms, total 23.483 ms) splits into `jit_subtract(20-None)` and `jit_subtract(24-None)`.

const FILE: &str = "tests/fixtures/xplane/vm.xplane.pb";

fn run(args: &[&str]) -> serde_json::Value {
    run_on(FILE, args)
}

fn row<'a>(v: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    v["captures"][0]["nested"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap()
}

#[test]
fn jit_events_of_a_real_capture() {
    let v = run(&[]);
    let names: Vec<&str> = v["captures"][0]["nested"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "jit_subtract(20-None)",
            "jit_mlp(16-None)",
            "jit_multiply(18-None)",
            "jit_subtract(24-None)",
            "jit_multiply(22-None)"
        ]
    );
    let s20 = row(&v, "jit_subtract(20-None)");
    assert_eq!(s20["count"], 20);
    assert_eq!(s20["mean_ns"], 1171469.95);
    assert_eq!(
        (s20["min_ns"].as_f64(), s20["max_ns"].as_f64()),
        (Some(157424.0), Some(5827904.0))
    );
    let s24 = row(&v, "jit_subtract(24-None)");
    assert_eq!(
        (s24["count"].as_u64(), s24["min_ns"].as_f64()),
        (Some(20), Some(1030.0))
    );
    assert_eq!(s24["mean_ns"], 2688.2);
    assert_eq!(v["captures"][0]["short_skipped"], 9966);
    assert_eq!(v["functions"].as_array().unwrap().len(), 0);
}

#[test]
fn function_ids_from_a_custom_pattern() {
    let v = run(&["--id-pattern", r"^jit_(subtract)\("]);
    let f = &v["functions"][0];
    assert_eq!(
        (f["id"].as_str(), f["samples"].as_u64()),
        (Some("subtract"), Some(2))
    );
    // Two samples: no trimming; mean and population std of the two names' LAST values
    // (199 087 and 2 176 ns), as ejkernel's port gives (docs/oracle/ejkernel_nested.py).
    assert!((f["mean_ns"].as_f64().unwrap() - 100631.5).abs() < 1e-6);
    assert!((f["std_ns"].as_f64().unwrap() - 98455.5).abs() < 1e-6);
}

#[test]
fn min_dur_raises_the_floor() {
    let v = run(&["--min-dur", "100us"]);
    assert!(
        v["captures"][0]["nested"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["min_ns"].as_f64().unwrap() >= 100_000.0)
    );
}

/// The H200 JAX capture (30 CUDA-graph steps, then `jit_autotune_fn_0..2` 4 times each): ejkernel
/// reads `/device:GPU:0` only, where the kernels are named by their `hlo_module` stat, one name per
/// scope range. Figures from docs/oracle/ejkernel_nested.py (a port over jax's ProfileData).
const H200: &str = "tests/fixtures/xplane/h200_jax_gpu_attn.xplane.pb.gz";

fn run_on(file: &str, args: &[&str]) -> serde_json::Value {
    let out = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .args(["nested", file, "--json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn gpu_plane_by_default_as_ejkernel() {
    let v = run_on(H200, &[]);
    let c = &v["captures"][0];
    assert_eq!(c["plane"], "/device:GPU:0");
    assert_eq!(c["platform"], "gpu");
    assert_eq!(
        (c["kept"].as_u64(), c["capped"].as_bool()),
        (Some(864), Some(false))
    );
    // Only device-plane names: no host `…(None-None)` rows, no `:XLA GPU module` rows.
    let rows = c["nested"].as_array().unwrap();
    assert_eq!(rows.len(), 54);
    assert!(
        rows.iter()
            .all(|r| !r["name"].as_str().unwrap().contains("None"))
    );
    let r = rows
        .iter()
        .find(|r| r["name"] == "jit_autotune_fn_2(43024-281474976711024)")
        .unwrap();
    assert_eq!(
        (r["count"].as_u64(), r["last_ns"].as_f64()),
        (Some(1), Some(29600.0))
    );
    let f = v["functions"].as_array().unwrap();
    let got: Vec<(&str, u64, f64, f64)> = f
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap(),
                f["samples"].as_u64().unwrap(),
                f["mean_ns"].as_f64().unwrap(),
                f["std_ns"].as_f64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("0", 8, 5904.0, 2938.822),
        ("1", 8, 5861.333, 2885.590),
        ("2", 8, 16234.667, 13269.441),
    ];
    assert_eq!(got.len(), 3);
    for (g, w) in got.iter().zip(want) {
        assert_eq!((g.0, g.1), (w.0, w.1));
        assert!(
            (g.2 - w.2).abs() < 1e-3 && (g.3 - w.3).abs() < 1e-3,
            "{g:?} vs {w:?}"
        );
    }
}

#[test]
fn platform_picks_another_plane_or_fails() {
    let v = run_on(H200, &["--platform", "CPU"]);
    let c = &v["captures"][0];
    assert_eq!(c["plane"], "/host:CPU");
    let f = v["functions"].as_array().unwrap();
    // The host's `jit_autotune_fn_N:XLA GPU module` spans: one name, one sample per id.
    assert_eq!(f.len(), 3);
    assert_eq!(
        (f[1]["samples"].as_u64(), f[1]["mean_ns"].as_f64()),
        (Some(1), Some(90732.0))
    );
    let out = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .args(["nested", H200, "--json", "--platform", "tpu"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = v["captures"][0]["error"].as_str().unwrap();
    assert!(
        e.contains("no plane name contains 'tpu'") && e.contains("/device:GPU:0"),
        "{e}"
    );
    // The cap: the first 100 kept events only.
    let v = run_on(H200, &["--max-events", "100"]);
    assert_eq!(v["captures"][0]["kept"], 100);
    assert_eq!(v["captures"][0]["capped"], true);
}

#[test]
fn pytorch_capture_says_what_to_pass() {
    let torch = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cli/worker0.1795311589169457977.pt.trace.json.gz");
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .arg("nested")
        .arg(&torch)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("no event name starts with 'jit_': this is a trace-event (PyTorch) capture"),
        "{text}"
    );
    assert!(text.contains("--prefix ProfilerStep"), "{text}");
    assert!(
        text.contains("--id-pattern 'ProfilerStep#([0-9]+)'"),
        "{text}"
    );
    // The suggestion works: step ids come back as functions.
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .arg("nested")
        .arg(&torch)
        .args([
            "--prefix",
            "ProfilerStep",
            "--id-pattern",
            "ProfilerStep#([0-9]+)",
        ])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("== functions (samples"), "{text}");
}
