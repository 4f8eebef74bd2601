//! `tracetui search` on real fixtures: ranking, exact counts / totals / self times (equal to the
//! `stats` rows), filters including lazily decoded XPlane stats, no-match and bad-regex exits.

use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cli")
        .join(name)
}

const KINETO: &str = "worker0.1795311589169457977.pt.trace.json.gz";

fn search(file: &str, args: &[&str]) -> (i32, Value, String) {
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .arg("search")
        .arg(fixture(file))
        .args(args)
        .output()
        .expect("run");
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn results(v: &Value) -> &Vec<Value> {
    v["captures"][0]["results"].as_array().expect("results")
}

fn row<'a>(v: &'a Value, name: &str) -> &'a Value {
    results(v)
        .iter()
        .find(|r| r["name"] == name)
        .expect("result row")
}

#[test]
fn kineto_counts_and_ranking() {
    let (code, v, err) = search(KINETO, &["aten::", "--json", "--limit", "4"]);
    assert_eq!(code, 0, "{err}");
    let c = &v["captures"][0];
    assert_eq!(
        (c["names"].as_u64(), c["matches"].as_u64()),
        (Some(224), Some(58))
    );
    let names: Vec<&str> = results(&v)
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    // Same score: ordered by total time.
    assert_eq!(names[..2], ["aten::sqrt", "aten::div"]);
    assert_eq!(results(&v)[0]["score"], results(&v)[1]["score"]);
    assert_eq!(names.len(), 4);
    // Exact figures, equal to `tracetui stats` rows.
    let (_, v, _) = search(KINETO, &["aten::conv2d", "--json", "--limit", "1"]);
    let r = row(&v, "aten::conv2d");
    assert_eq!(
        (&r["count"], &r["total_ns"], &r["self_ns"]),
        (&Value::from(4), &Value::from(12101446), &Value::from(57496))
    );
    assert_eq!(
        r["tracks"],
        // The process as users know it: label first (issue 20 §5).
        serde_json::json!(["CPU (python) / thread 13398 (python)"])
    );
    let first = r["first"].as_array().expect("first");
    assert_eq!(first.len(), 3);
    // From the capture's zero (its earliest event), integer ns.
    assert_eq!(first[0]["start_ns"], Value::from(1759525));
    let starts: Vec<f64> = first
        .iter()
        .filter_map(|f| f["start_ns"].as_f64())
        .collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]));
    let (_, v, _) = search(KINETO, &["^aten::mm$", "--regex", "--json"]);
    let r = row(&v, "aten::mm");
    assert_eq!(results(&v).len(), 1);
    assert_eq!(
        (&r["count"], &r["total_ns"], &r["self_ns"], &r["score"]),
        (
            &Value::from(8),
            &Value::from(25867358),
            &Value::from(25862245),
            &Value::from(0)
        )
    );
}

#[test]
fn no_match_and_bad_regex() {
    let (code, v, _) = search(KINETO, &["zzzqqq", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["captures"][0]["matches"], 0);
    assert!(results(&v).is_empty());
    let (code, _, err) = search(KINETO, &["(conv", "--regex"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("tracetui: error: invalid regex \"(conv\": "),
        "{err}"
    );
    assert!(err.contains("unclosed group"), "{err}");
    // Text output names the counts.
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .args([
            "search".as_ref(),
            fixture(KINETO).as_os_str(),
            "conv".as_ref(),
        ])
        .args(["--limit", "5"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("31 of 224 names match (showing 5"), "{text}");
}

#[test]
fn xplane_filters_and_lazy_stats() {
    let f = "vm.xplane.pb";
    let (code, v, err) = search(f, &["dot arg:hlo_op=dot proc:CPU", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["captures"][0]["names"], 1018);
    let names: Vec<&str> = results(&v)
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["dot.3", "dot.1", "dot.2", "dot"]);
    let r = row(&v, "dot.3");
    // Same as the `stats` row: every dot.3 event has an hlo_op stat naming it.
    assert_eq!(
        (&r["count"], &r["total_ns"], &r["self_ns"]),
        (
            &Value::from(5),
            &Value::from(21023924),
            &Value::from(21023504)
        )
    );
    let (_, v, _) = search(f, &["thunkexec", "--json", "--limit", "2"]);
    let r = row(&v, "ThunkExecutor::Execute");
    assert_eq!(
        (&r["count"], &r["total_ns"], &r["self_ns"]),
        (
            &Value::from(26),
            &Value::from(120664016),
            &Value::from(15401024)
        )
    );
    assert_eq!(r["tracks"].as_array().map(Vec::len), Some(4));
    // A track filter re-sums per-track groups.
    let (_, v, _) = search(f, &["thunkexec track:PjRt", "--json"]);
    let r = row(&v, "ThunkExecutor::Execute (wait for completion)");
    assert_eq!(r["tracks"].as_array().map(Vec::len), Some(2));
    let (_, v, _) = search(f, &["arg:no_such_stat", "--json"]);
    assert!(results(&v).is_empty());
}

/// A query whose best matches are names of one pattern (`ProfilerStep#2`, `#3`) walks all of
/// them as one list in time order; instant events (`[memory]`) are found like any event; every
/// time is integer ns from the capture's zero, never negative.
#[test]
fn patterns_instants_and_times_from_zero() {
    let (code, v, err) = search(KINETO, &["ProfilerStep", "--json"]);
    assert_eq!(code, 0, "{err}");
    let c = &v["captures"][0];
    let p = &c["pattern"];
    assert_eq!(p["pattern"], "ProfilerStep#N");
    assert_eq!(
        (p["names"].as_u64(), p["count"].as_u64()),
        (Some(2), Some(2))
    );
    let starts: Vec<i64> = p["first"]
        .as_array()
        .expect("first")
        .iter()
        .filter_map(|f| f["start_ns"].as_i64())
        .collect();
    assert_eq!(starts.len(), 2);
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
    assert!(c["zero_epoch_ns"].as_i64().is_some_and(|z| z > 0));
    // A name without a shared pattern has none.
    let (_, v, _) = search(KINETO, &["aten::conv2d", "--json"]);
    assert!(v["captures"][0].get("pattern").is_none());
    // Instant events: counted, found, with their times.
    let (_, v, _) = search(KINETO, &["memory", "--json"]);
    let r = row(&v, "[memory]");
    assert_eq!(
        (r["count"].as_u64(), r["total_ns"].as_i64()),
        (Some(562), Some(0))
    );
    assert_eq!(results(&v)[0]["name"], "[memory]", "the strong match first");
    let f = &r["first"][0];
    assert_eq!(f["dur_ns"], 0);
    for q in ["", "aten", "memory"] {
        let (_, v, _) = search(KINETO, &[q, "--json"]);
        for r in results(&v) {
            for f in r["first"].as_array().expect("first") {
                assert!(f["start_ns"].as_i64().is_some_and(|s| s >= 0), "{f}");
            }
        }
    }
}

/// Several words: each must match, in any order; the name holding both words ranks first; a
/// quoted phrase is one exact substring.
#[test]
fn words_and_phrases() {
    let f = "../ui/alexnet.pt.trace.json.gz";
    for q in ["cudnn conv", "conv cudnn"] {
        let (code, v, err) = search(f, &[q, "--json"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(results(&v)[0]["name"], "aten::cudnn_convolution", "{q}");
        for r in results(&v) {
            let n = r["name"].as_str().expect("name").to_lowercase();
            // Every row holds both words' letters in order (fuzzy per word).
            let has = |w: &str| {
                let mut it = n.chars();
                w.chars().all(|c| it.any(|x| x == c))
            };
            assert!(has("cudnn") && has("conv"), "{n}");
        }
    }
    let (_, v, _) = search(f, &["\"cudnn_conv\"", "--json"]);
    let names: Vec<&str> = results(&v)
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["aten::cudnn_convolution"]);
    let (_, v, _) = search(f, &["\"cudnn conv\"", "--json"]);
    assert!(
        results(&v).is_empty(),
        "the phrase has a space no name holds"
    );
}
