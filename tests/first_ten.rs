//! What a new user meets first on the command line (issue 22): warnings worded as facts about
//! the file, times from the capture's zero (never negative), and the instant events of a real
//! Kineto capture counted by `stats`.

use assert_cmd::Command;

const AMD: &str = "tests/fixtures/chrome/mi250_minitoy_train_ROCm6_2_kineto.json.gz";
const KINETO: &str = "tests/fixtures/cli/worker0.1795311589169457977.pt.trace.json.gz";

fn run(args: &[&str]) -> String {
    let out = Command::cargo_bin("tracetui")
        .unwrap()
        .env("TRACETUI_CACHE", "off")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn warnings_read_as_facts_about_the_file() {
    let text = run(&["summary", AMD]);
    assert!(
        text.contains("5 flow ends without a start in the file (profilers write both ends"),
        "{text}"
    );
    assert!(
        text.contains("15 device processes without events (GPU 0–1, 3–15)"),
        "{text}"
    );
    assert!(!text.contains("no tracks:"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&run(&["summary", AMD, "--json"])).unwrap();
    let w = &v["captures"][0]["warnings"][0];
    assert_eq!(
        (w["kind"].as_str(), w["count"].as_u64()),
        (Some("unresolved_flow"), Some(5))
    );
}

#[test]
fn times_count_from_the_capture_zero() {
    for f in [AMD, KINETO] {
        let v: serde_json::Value = serde_json::from_str(&run(&["summary", f, "--json"])).unwrap();
        let c = &v["captures"][0];
        let span = c["span_ns"].as_array().unwrap();
        assert_eq!(span[0], 0, "{f}");
        assert!(span[1].as_i64().is_some_and(|e| e > 0), "{f}");
        let v: serde_json::Value = serde_json::from_str(&run(&["stats", f, "--json"])).unwrap();
        let c = &v["captures"][0];
        assert_eq!(c["span_ns"], span[1], "{f}");
        assert!(c["zero_epoch_ns"].is_i64(), "{f}");
    }
}

#[test]
fn stats_count_instant_events() {
    // Every event: torch's default table has no instant rows.
    let v: serde_json::Value =
        serde_json::from_str(&run(&["stats", KINETO, "--json", "--all-events"])).unwrap();
    let c = &v["captures"][0];
    let mem = c["stats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "[memory]")
        .expect("[memory] row");
    assert_eq!(mem["kind"], "instant");
    assert_eq!(mem["count"], 562);
    assert_eq!(mem["total_ns"], 0);
    assert!(mem["min_ns"].is_null());
    let text = run(&["stats", KINETO, "--all-events"]);
    assert!(text.contains("instant events: "), "{text}");
    assert!(text.contains("(no duration)"), "{text}");
}

/// The picker's capture time comes from the trace, not the file's modification time: a copied
/// file still says when it was taken, and the probe agrees with the loaded model's zero to the
/// second.
#[test]
fn capture_time_from_the_trace_not_the_file() {
    use tracetui::discover::discover;
    use tracetui::discover::taken::capture_time;
    for f in [
        AMD,
        KINETO,
        "tests/fixtures/chrome/alexnet_cuda_sync.json.gz",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let name = std::path::Path::new(f).file_name().unwrap();
        let copy = dir.path().join(name);
        std::fs::copy(f, &copy).unwrap();
        let cat = discover(&copy).unwrap();
        let cap = cat.captures().next().expect("capture");
        let probed = capture_time(cap);
        let model = tracetui::formats::load(&copy, Default::default(), &Default::default())
            .unwrap()
            .zero_epoch_ns();
        match (probed, model) {
            (Some(p), Some(m)) => assert!((p - m).abs() < 1_000_000_000, "{f}: {p} vs {m}"),
            other => panic!("{f}: {other:?}"),
        }
    }
}

/// The ranking says what its score means and how it is sorted, and what each figure covers.
#[test]
fn rank_explains_itself() {
    let text = run(&[
        "rank",
        "tests/fixtures/chrome/alexnet_cuda_sync.json.gz",
        "--top",
        "3",
    ]);
    assert!(
        text.contains("score = z(idle fraction) + 0.6 z(self time)")
            && text.contains("sorted by score, best first"),
        "{text}"
    );
    assert!(text.contains("QD: GPU queue depth at its start"), "{text}");
    assert!(text.contains("START is from the capture's zero"), "{text}");
}

/// Every `*_ns` field (and `*_ns` arrays) in `v`, with where it is.
fn ns_fields(v: &serde_json::Value, at: &str, out: &mut Vec<(String, serde_json::Value)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let here = format!("{at}.{k}");
                if k.ends_with("_ns") {
                    out.push((here.clone(), x.clone()));
                }
                ns_fields(x, &here, out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                ns_fields(x, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_ns_field_of_every_json_output_is_an_integer() {
    const GPU: &str = "tests/fixtures/ui/alexnet.pt.trace.json.gz";
    let runs: [&[&str]; 8] = [
        &["summary", GPU, "--json"],
        &["stats", GPU, "--json"],
        &["search", GPU, "relu", "--json"],
        &["rank", GPU, "--json"],
        &["gpu", GPU, "--json"],
        &["steps", KINETO, "--json"],
        &["steps", GPU, "--json"],
        &["memory", KINETO, "--json"],
    ];
    for args in runs {
        let v: serde_json::Value = serde_json::from_str(&run(args)).unwrap();
        let mut fields = Vec::new();
        ns_fields(&v, "", &mut fields);
        assert!(!fields.is_empty(), "{args:?}: no ns field");
        for (at, x) in fields {
            let ok = match &x {
                serde_json::Value::Null => true,
                serde_json::Value::Array(a) => a.iter().all(|e| e.is_i64()),
                other => other.is_i64(),
            };
            assert!(ok, "{args:?}: {at} = {x} is not integer ns");
        }
    }
}
