//! `tracetui export` and `tracetui sql` end to end through the binary: a partitioned export,
//! queries printed as text, JSON and CSV, and SQL straight over a log dir.
#![cfg(feature = "sql")]

use assert_cmd::Command;

fn tracetui(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("tracetui")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn export_then_query_as_text_json_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ds");
    let o = out.to_str().unwrap();
    let (code, stdout, stderr) = tracetui(&[
        "export",
        "tests/fixtures/chrome",
        "--parquet",
        o,
        "--partition-by",
        "run,rank",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let caps: Vec<&serde_json::Value> = v["captures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["error"].is_null())
        .collect();
    assert!(caps.len() >= 10);
    let rows: u64 = caps.iter().filter_map(|c| c["rows"].as_u64()).sum();
    for c in &caps {
        let p = c["files"][0].as_str().unwrap();
        assert!(
            p.contains("/run=") && p.contains("/rank=") && p.ends_with(".parquet"),
            "{p}"
        );
    }

    let q = "SELECT COUNT(*) AS n, COUNT(DISTINCT rank) AS ranks FROM events";
    let (code, stdout, stderr) = tracetui(&["sql", o, q, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v[0]["n"].as_u64(), Some(rows));
    assert_eq!(v[0]["ranks"].as_u64(), Some(caps.len() as u64));

    let (code, stdout, _) = tracetui(&["sql", o, q, "--csv"]);
    assert_eq!(code, 0);
    assert_eq!(stdout, format!("n,ranks\n{rows},{}\n", caps.len()));

    let (code, stdout, _) = tracetui(&["sql", o, "assets/queries/top_kernels.sql"]);
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with("name") && stdout.contains("total_ns"),
        "{stdout}"
    );
    // The same query by name, and as text that begins with its `--` comment lines.
    let (code, by_name, err) = tracetui(&["sql", o, "top_kernels"]);
    assert_eq!((code, &by_name), (0, &stdout), "{err}");
    let text = std::fs::read_to_string("assets/queries/top_kernels.sql").unwrap();
    assert!(text.starts_with("--"));
    let (code, as_text, err) = tracetui(&["sql", o, &text]);
    assert_eq!((code, &as_text), (0, &stdout), "{err}");
    let (code, list, _) = tracetui(&["sql", "--list"]);
    assert_eq!(code, 0);
    assert!(
        list.contains("top_kernels") && list.contains("Top GPU kernels across ranks"),
        "{list}"
    );
    // Flows are arrows: no duration.
    let (code, flows, err) = tracetui(&[
        "sql",
        o,
        "SELECT COUNT(*) AS n, COUNT(dur_ns) AS d FROM events WHERE phase = 'flow'",
        "--csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let counts: Vec<&str> = flows.lines().nth(1).unwrap().split(',').collect();
    assert_ne!(counts[0], "0", "the fixtures have flows");
    assert_eq!(counts[1], "0", "{flows}");
    assert!(stdout.trim_end().ends_with("rows)"));

    // A bad query is an error with DataFusion's message, exit 1.
    let (code, _, stderr) = tracetui(&["sql", o, "SELECT nope FROM events"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("nope"), "{stderr}");
}

#[test]
fn sql_over_a_log_dir_exports_it_first() {
    let (code, stdout, stderr) = tracetui(&[
        "sql",
        "tests/fixtures/cli",
        "SELECT phase, kind, COUNT(*) AS n FROM events GROUP BY phase, kind ORDER BY phase, kind",
        "--csv",
    ]);
    assert_eq!(code, 0, "{stderr}");
    // `phase` says what a row is; `kind` speaks the vocabulary of `stats`.
    assert!(
        stdout.starts_with("phase,kind,n\n")
            && stdout.contains("slice,cpu_op,")
            && stdout.contains("flow,flow,"),
        "{stdout}"
    );
}

#[test]
fn bad_partition_key_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = tracetui(&[
        "export",
        "tests/fixtures/cli",
        "--parquet",
        dir.path().to_str().unwrap(),
        "--partition-by",
        "day",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot partition by `day`"), "{stderr}");
}
