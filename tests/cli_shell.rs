//! The conventions of command-line tools: shell completions and the man page are generated from
//! the clap definitions, and the lean default build names the opt-in feature a command needs.

mod common;

/// Runs tracetui; returns (exit code, stdout, stderr). Never a panic.
fn run<const N: usize>(args: [&str; N]) -> (i32, String, String) {
    let (code, out, err) = common::run_cli(&args);
    assert!(!err.contains("panicked"), "tracetui panicked: {err}");
    (code, out, err)
}

#[test]
fn completions_generate_for_every_shell() {
    // Each script names the binary and completes a subcommand and one of its options.
    for (shell, marker) in [
        ("bash", "_tracetui()"),
        ("zsh", "#compdef tracetui"),
        ("fish", "complete -c tracetui"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion:arg-completer[tracetui]"),
    ] {
        let (code, out, err) = run(["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains(marker), "{shell}: no `{marker}` in\n{out}");
        assert!(out.contains("summary"), "{shell}: subcommands missing");
        assert!(
            out.contains("idle-threshold-us"),
            "{shell}: options missing"
        );
    }
    let (code, _, err) = run(["completions", "tcsh"]);
    assert_eq!(code, 2, "an unknown shell is a usage error: {err}");
}

#[test]
fn man_page_has_every_command() {
    let (code, out, err) = run(["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(".ie") || out.contains(".TH tracetui 1"),
        "{out}"
    );
    for page in [
        "tracetui-summary",
        "tracetui-stats",
        "tracetui-gpu",
        "tracetui-stacks",
    ] {
        assert!(
            out.contains(&format!(".TH {page} 1")),
            "no man page for {page}"
        );
    }
    assert!(
        out.contains("\\-\\-json") || out.contains("--json"),
        "options missing"
    );
}

/// The default build leaves the engines out; each entry point says which feature and how to get it.
#[cfg(not(feature = "sql"))]
#[test]
fn default_build_names_the_sql_feature() {
    let (code, out, err) = run(["sql", "events/", "SELECT 1"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(err.contains("`sql` feature"), "{err}");
    assert!(
        err.contains("cargo install tracetui --features sql"),
        "{err}"
    );
    let (_, help, _) = run(["--help"]);
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with("sql "))
        .expect("sql in --help");
    assert!(line.contains("--features sql"), "{line}");
}

#[cfg(not(feature = "export"))]
#[test]
fn default_build_names_the_export_feature() {
    let (code, _, err) = run(["export", "logs/", "--parquet", "out/"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`export` feature"), "{err}");
    assert!(
        err.contains("cargo install tracetui --features export"),
        "{err}"
    );
    let (_, help, _) = run(["--help"]);
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with("export "))
        .expect("export in --help");
    assert!(line.contains("--features export"), "{line}");
}

#[cfg(not(feature = "cloud"))]
#[test]
fn default_build_names_the_cloud_feature() {
    for url in ["gs://bucket/logs", "s3://bucket/logs"] {
        let (code, _, err) = run(["summary", url]);
        assert_eq!(code, 2, "{url}: {err}");
        assert!(err.contains(url), "{err}");
        assert!(
            err.contains("cargo install tracetui --features cloud"),
            "{err}"
        );
    }
}

fn alexnet() -> String {
    format!(
        "{}/tests/fixtures/ui/alexnet.pt.trace.json.gz",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Load warnings are one line per file, without a repeat count; `--quiet` silences them.
#[test]
fn warnings_once_per_file_and_quiet_silences_them() {
    let t = alexnet();
    let (code, _, err) = run(["stacks", &t, "-o", "/dev/null"]);
    assert_eq!(code, 0, "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].contains("unresolved_flow") && !warnings[0].contains("(x"),
        "{err}"
    );
    let (code, _, err) = run(["stacks", &t, "-o", "/dev/null", "--quiet"]);
    assert_eq!(code, 0);
    assert!(err.is_empty(), "--quiet printed: {err}");
    let (_, _, err) = run(["stacks", "-q", &t, "-o", "/dev/null"]);
    assert!(err.is_empty(), "-q: {err}");
}

/// Text tables cut long names but keep rows apart; `--wide` keeps whole names.
#[test]
fn wide_keeps_whole_names() {
    let t = alexnet();
    let (_, json, _) = run(["stats", &t, "--cat", "kernel", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let names: Vec<String> = v["captures"][0]["stats"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["name"].as_str().map(String::from))
        .collect();
    let longest = names.iter().max_by_key(|n| n.len()).expect("a kernel");
    assert!(longest.len() > 60);
    let (_, cut, _) = run(["stats", &t, "--cat", "kernel", "--limit", "100"]);
    let (_, wide, _) = run(["stats", &t, "--cat", "kernel", "--limit", "100", "--wide"]);
    assert!(!cut.contains(longest.as_str()), "{cut}");
    for n in &names {
        assert!(wide.contains(n.as_str()), "--wide cut {n}");
    }
    // Cut rows stay distinct: one text row per name.
    let rows: Vec<String> = cut
        .lines()
        .filter(|l| l.starts_with("   ") && !l.starts_with("   NAME"))
        .map(|l| l.chars().take(66).collect())
        .collect();
    assert!(rows.iter().any(|r| r.contains('…')), "{cut}");
    let mut distinct = rows.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        rows.len(),
        "two rows read the same: {rows:?}"
    );
}
