//! `tracetui stats --from/--to`: only events starting inside the range (relative to the first
//! event) are counted; bad times are usage errors.

use tracetui::formats::Progress;

const FILE: &str = "tests/fixtures/ui/alexnet.pt.trace.json.gz";

fn counts(args: &[&str]) -> u64 {
    let out = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        // The profiler's own span is a slice like the others here (left out by default), and
        // every category counts (the default on this PyTorch capture is torch's event set).
        .args(["stats", FILE, "--json", "--with-profiler", "--all-events"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["captures"][0]["stats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] != "instant")
        .map(|r| r["count"].as_u64().unwrap())
        .sum()
}

#[test]
fn from_to_counts_events_starting_in_the_range() {
    let cap = tracetui::formats::load(
        std::path::Path::new(FILE),
        Default::default(),
        &Progress::default(),
    )
    .unwrap();
    let z = cap.time_zero();
    let s = &cap.slices;
    let brute = |a: i64, b: i64| {
        (0..s.len())
            .filter(|&i| s.start[i] - z >= a && s.start[i] - z < b)
            .count() as u64
    };
    // 20 s after the first event, in ps.
    let cut = 20_000_000_000_000i64;
    assert_eq!(counts(&["--to", "20s"]), brute(i64::MIN, cut));
    assert_eq!(counts(&["--from", "20s"]), brute(cut, i64::MAX));
    assert_eq!(counts(&["--from", "20000ms", "--to", "20000000us"]), 0);
    let both = counts(&["--to", "20s"]) + counts(&["--from", "20s"]);
    assert_eq!(both, s.len() as u64, "every slice counted once");
}

/// The profiler's own span (`PyTorch Profiler (0)` on `Spans`) is left out by default and said
/// so; `--with-profiler` shows it. Rows carry their kind, and the text says what each kind's
/// self time adds up.
#[test]
fn profiler_spans_left_out_and_totals_explained() {
    let run = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("tracetui")
            .unwrap()
            .args(["stats", FILE])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = run(&["--all-events"]);
    assert!(
        text.contains(
            "left out: the profiler's own spans (2 events: PyTorch Profiler (0), Iteration Start: \
             PyTorch Profiler); --with-profiler shows them"
        ),
        "{text}"
    );
    assert!(!text.contains("   PyTorch Profiler (0)"), "{text}");
    assert!(text.contains("CPU ops: self time"), "{text}");
    assert!(text.contains("summed over 1 thread"), "{text}");
    assert!(text.contains("GPU kernels: self time"), "{text}");
    assert!(text.contains("summed over 2 streams"), "{text}");
    assert!(
        text.contains("instant events: 1 event on 1 thread (no duration)"),
        "{text}"
    );
    assert!(text.contains("capture span"), "{text}");
    // By default this PyTorch capture's table is torch's: it says so, and which events are not
    // in it.
    let dflt = run(&[]);
    assert!(
        dflt.contains("torch's key_averages() table: cpu_op, user_annotation, cuda_runtime"),
        "{dflt}"
    );
    assert!(dflt.contains("--all-events shows every event"), "{dflt}");
    let with = run(&["--with-profiler", "--group-by", "kind"]);
    assert!(with.contains("profiler spans"), "{with}");
    assert!(!with.contains("left out"), "{with}");
    let v: serde_json::Value = serde_json::from_str(&run(&["--json"])).unwrap();
    let cap = &v["captures"][0];
    assert_eq!(cap["left_out"]["profiler_events"], 2);
    let kinds: Vec<&str> = cap["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"cpu_op") && kinds.contains(&"kernel"),
        "{kinds:?}"
    );
    // Integer ns everywhere.
    for r in cap["stats"].as_array().unwrap() {
        assert!(r["total_ns"].is_i64() && r["self_ns"].is_i64(), "{r}");
    }
    assert!(cap["span_ns"].is_i64());
}

/// `--cat` naming no category of the capture lists the ones it has instead of an empty table.
#[test]
fn unknown_category_lists_the_capture_categories() {
    let out = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .args(["stats", FILE, "--cat", "no_such_cat"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no events match the filters"), "{text}");
    assert!(
        text.contains(
            "categories here, most events first: cuda_runtime (361), cpu_op (359), kernel (79)"
        ),
        "{text}"
    );
}

#[test]
fn bad_times_are_usage_errors() {
    let out = assert_cmd::Command::cargo_bin("tracetui")
        .unwrap()
        .args(["stats", FILE, "--from", "3 fortnights"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown time unit"));
}
