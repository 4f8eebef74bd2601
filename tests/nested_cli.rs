//! `tracetui nested` on a real JAX CPU capture (tests/fixtures/xplane/vm.xplane.pb): the XLA op
//! events carry `hlo_module`/`program_id` stats, so their unified names are `jit_*(N-None)`.
//! Figures cross-checked with `tracetui stats`: `wrapped_subtract` (40 events, min 1.030 µs,
//! max 5.828 ms, total 23.483 ms) splits into `jit_subtract(20-None)` and `jit_subtract(24-None)`.

const FILE: &str = "tests/fixtures/xplane/vm.xplane.pb";

fn run(args: &[&str]) -> serde_json::Value {
    let out = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .args(["nested", FILE, "--json"])
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
    // Two samples: no trimming; mean and population std of the two per-name means.
    assert!((f["mean_ns"].as_f64().unwrap() - 587079.075).abs() < 1e-6);
    assert!((f["std_ns"].as_f64().unwrap() - 584390.875).abs() < 1e-6);
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
