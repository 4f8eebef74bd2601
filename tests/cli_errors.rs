//! CLI behaviour on bad input: clear one-line errors naming the file, exit codes 0 / 1 / 2,
//! never a panic; the good captures of a directory are still reported.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

/// Runs tracetui; returns (exit code, stdout, stderr).
fn run<I, S>(args: I) -> (i32, String, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .args(args)
        .output()
        .expect("run tracetui");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "tracetui panicked: {err}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        err,
    )
}

/// Not JSON at byte 57.
const BROKEN: &str = r#"{"schemaVersion": 1, "traceEvents": [ {"ph": "X", "ts": nope} ]}"#;

fn good_trace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cli/worker0.1795311589169457977.pt.trace.json.gz")
}

#[test]
fn missing_path_exits_1() {
    let (code, _, err) = run(["summary", "/definitely/not/here"]);
    assert_eq!(code, 1);
    assert!(err.contains("/definitely/not/here: no such file"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let (code, _, err) = run(["/definitely/not/here"]);
    assert_eq!(code, 1);
    assert!(err.contains("no such file"), "{err}");
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    assert_eq!(run(["stats"]).0, 2);
    assert_eq!(run(["stats", ".", "--sort", "sideways"]).0, 2);
    let (code, _, err) = run(["stats", ".", "--plane", "(unclosed"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid regex"), "{err}");
    assert_eq!(run(["summary", "--bogus", "."]).0, 2);
    let (code, out, _) = run(["--help"]);
    assert_eq!(code, 0);
    for want in ["summary", "stats", "Examples"] {
        assert!(out.contains(want), "{out}");
    }
    let (code, out, _) = run(["stats", "--help"]);
    assert_eq!(code, 0);
    for want in ["--cat", "--unified", "--plane", "--sort", "key_averages"] {
        assert!(out.contains(want), "{out}");
    }
}

#[test]
fn directory_without_captures_exits_1() {
    let d = tempfile::tempdir().expect("tempdir");
    fs::write(d.path().join("notes.txt"), "hello").expect("write");
    fs::write(d.path().join("config.json"), r#"{"lr":0.1}"#).expect("write");
    for cmd in ["summary", "stats"] {
        let (code, _, err) = run([OsStr::new(cmd), d.path().as_os_str()]);
        assert_eq!(code, 1);
        assert!(err.contains("no captures found"), "{err}");
    }
}

/// A memory snapshot given to a trace command is named as one, with the command that reads it.
#[test]
fn memory_file_given_to_summary_points_to_the_memory_command() {
    let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/memory/snap_small.pickle");
    let (code, _, err) = run([OsStr::new("summary"), f.as_os_str()]);
    assert_eq!(code, 1);
    assert!(err.contains("snap_small.pickle"), "{err}");
    assert!(err.contains("a memory file"), "{err}");
    assert!(err.contains("tracetui memory FILE"), "{err}");
}

#[test]
fn file_that_is_not_a_trace_exits_1_naming_it() {
    let d = tempfile::tempdir().expect("tempdir");
    let f = d.path().join("model.bin");
    fs::write(&f, [0u8, 1, 2, 3, 255]).expect("write");
    let (code, _, err) = run([OsStr::new("summary"), f.as_os_str()]);
    assert_eq!(code, 1);
    assert!(err.contains("model.bin"), "{err}");
    assert!(err.contains("not a recognized trace file"), "{err}");
}

#[test]
fn broken_capture_alone_exits_1_naming_it() {
    let d = tempfile::tempdir().expect("tempdir");
    let bad = d.path().join("w.2.pt.trace.json");
    fs::write(&bad, BROKEN).expect("write");
    for cmd in ["summary", "stats"] {
        let (code, _, err) = run([OsStr::new(cmd), bad.as_os_str()]);
        assert_eq!(code, 1);
        assert!(err.contains("w.2.pt.trace.json: at byte 57:"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn truncated_capture_loads_with_a_warning() {
    let d = tempfile::tempdir().expect("tempdir");
    let f = d.path().join("cut.json");
    fs::write(
        &f,
        r#"{"traceEvents": [ {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}, {"ph": "X", "na"#,
    )
    .expect("write");
    let (code, out, err) = run([OsStr::new("summary"), f.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("truncated"), "{out}");
    let (code, out, _) = run([OsStr::new("summary"), OsStr::new("--json"), f.as_os_str()]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let w = &v["captures"][0]["warnings"];
    assert!(
        w.as_array()
            .expect("warnings")
            .iter()
            .any(|w| w["kind"] == "truncated" && w["count"].as_u64() >= Some(1)),
        "{w}"
    );
    assert_eq!(v["captures"][0]["events"], 1);
}

#[test]
fn good_and_bad_captures_in_one_dir() {
    let d = tempfile::tempdir().expect("tempdir");
    fs::copy(good_trace(), d.path().join("w.1.pt.trace.json.gz")).expect("copy");
    let bad = d.path().join("w.2.pt.trace.json");
    fs::write(&bad, BROKEN).expect("write");
    let (code, out, err) = run([
        OsStr::new("summary"),
        OsStr::new("--json"),
        d.path().as_os_str(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("w.2.pt.trace.json") && err.contains("at byte"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).expect("summary --json");
    let caps = v["captures"].as_array().expect("captures");
    assert_eq!(caps.len(), 2);
    let by_suffix = |s: &str| {
        caps.iter()
            .find(|c| c["path"].as_str().is_some_and(|p| p.ends_with(s)))
            .expect("capture")
    };
    let good = by_suffix("w.1.pt.trace.json.gz");
    assert!(good.get("error").is_none());
    assert!(good["events"].as_u64().is_some_and(|n| n > 0));
    assert_eq!(good["host"], "w");
    let span = good["span_ns"].as_array().expect("span");
    assert!(span[0].as_i64() <= span[1].as_i64());
    assert!(!good["tracks"].as_array().expect("tracks").is_empty());
    let failed = by_suffix("w.2.pt.trace.json");
    assert!(
        failed["error"]
            .as_str()
            .is_some_and(|e| e.contains("at byte"))
    );
    // text mode shows both
    let (code, out, _) = run([OsStr::new("summary"), d.path().as_os_str()]);
    assert_eq!(code, 0);
    assert!(
        out.contains("w.1.pt.trace.json.gz") && out.contains("error:"),
        "{out}"
    );
}

#[cfg(unix)]
#[test]
fn unreadable_file_is_reported_with_its_name() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().expect("tempdir");
    let f = d.path().join("locked.pt.trace.json");
    fs::write(&f, "{}").expect("write");
    fs::set_permissions(&f, fs::Permissions::from_mode(0o000)).expect("chmod");
    if fs::File::open(&f).is_ok() {
        return; // running as root: permissions are not enforced
    }
    let (code, _, err) = run([OsStr::new("summary"), d.path().as_os_str()]);
    assert_eq!(code, 1);
    assert!(err.contains("locked.pt.trace.json"), "{err}");
}

/// Works as root too: a dangling symlink and a self-referencing one named like captures cannot be
/// read; they are reported by name and the readable capture is still summarized.
#[cfg(unix)]
#[test]
fn unreadable_entries_reported_others_loaded() {
    let d = tempfile::tempdir().expect("tempdir");
    fs::copy(good_trace(), d.path().join("w.1.pt.trace.json.gz")).expect("copy");
    std::os::unix::fs::symlink(d.path().join("gone"), d.path().join("w.2.pt.trace.json"))
        .expect("symlink");
    let selfref = d.path().join("w.3.pt.trace.json");
    std::os::unix::fs::symlink(&selfref, &selfref).expect("symlink");
    let (code, out, err) = run([OsStr::new("summary"), d.path().as_os_str()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("w.1.pt.trace.json.gz"), "{out}");
    for name in ["w.2.pt.trace.json", "w.3.pt.trace.json"] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("tracetui: warning:") && l.contains(name)),
            "{err}"
        );
    }
    // the same files given directly: one-line error, exit 1
    let (code, _, err) = run([OsStr::new("stats"), selfref.as_os_str()]);
    assert_eq!(code, 1);
    assert!(err.contains("w.3.pt.trace.json"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A directory mixing a good capture, truncated JSON and XPlane captures, an empty file, binary
/// garbage, an unreadable file (skipped as root) and a non-UTF-8 file name: every file is reported
/// with its kind, the good and partial ones are summarized, exit 0.
#[cfg(unix)]
#[test]
fn mixed_directory_reports_each_file() {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().expect("tempdir");
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    fs::copy(good_trace(), d.path().join("w.1.pt.trace.json.gz")).expect("copy");
    let simple = fs::read(fx.join("chrome/simple_trace.json")).expect("read");
    fs::write(d.path().join("cut.trace.json"), &simple[..3000]).expect("write");
    let vm = fs::read(fx.join("cli/vm.xplane.pb")).expect("read");
    // Past the first plane (199 373 bytes), inside the second.
    fs::write(d.path().join("h.xplane.pb"), &vm[..300_000]).expect("write");
    fs::write(d.path().join("cut0.xplane.pb"), &vm[..4000]).expect("write");
    fs::write(d.path().join("empty.pt.trace.json"), b"").expect("write");
    let garbage: Vec<u8> = (0..600u32).map(|i| (i * 7919 % 251) as u8 | 0x80).collect();
    fs::write(d.path().join("garbage.pt.trace.json"), &garbage).expect("write");
    fs::write(d.path().join("g.xplane.pb"), &garbage).expect("write");
    let odd = d.path().join(OsStr::from_bytes(b"odd\xffname.json"));
    fs::copy(fx.join("chrome/trivial_trace.json"), &odd).expect("copy");
    let locked = d.path().join("locked.pt.trace.json");
    fs::write(&locked, &simple).expect("write");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).expect("chmod");
    let as_root = fs::File::open(&locked).is_ok();
    if as_root {
        fs::remove_file(&locked).expect("rm"); // permissions are not enforced for root
    }

    let (code, out, err) = run([
        OsStr::new("summary"),
        OsStr::new("--json"),
        d.path().as_os_str(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("summary --json");
    let caps = v["captures"].as_array().expect("captures");
    let find = |s: &str| {
        caps.iter()
            .find(|c| c["path"].as_str().is_some_and(|p| p.ends_with(s)))
            .unwrap_or_else(|| panic!("{s} missing from {out}"))
    };
    let kind = |s: &str| find(s)["error_kind"].as_str().map(str::to_owned);
    assert_eq!(kind("w.1.pt.trace.json.gz"), None);
    assert_eq!(find("w.1.pt.trace.json.gz")["events"], 2451);
    assert_eq!(kind("odd\u{fffd}name.json"), None);
    assert_eq!(find("odd\u{fffd}name.json")["events"], 2);
    // Partial loads: what was kept, in events, bytes and percent.
    let warning = |s: &str| {
        find(s)["warnings"]
            .as_array()
            .expect("warnings")
            .iter()
            .find(|w| w["kind"] == "truncated")
            .and_then(|w| w["message"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("no truncated warning for {s}"))
    };
    assert!(warning("cut.trace.json").contains("kept the 24 complete events"));
    let w = warning("h.xplane.pb");
    assert!(
        w.contains("at byte 199373")
            && w.contains("kept the 1 complete XPlanes")
            && w.contains("66.5%"),
        "{w}"
    );
    assert_eq!(kind("cut0.xplane.pb").as_deref(), Some("truncated"));
    assert_eq!(kind("empty.pt.trace.json").as_deref(), Some("not_a_trace"));
    assert_eq!(
        kind("garbage.pt.trace.json").as_deref(),
        Some("not_a_trace")
    );
    assert_eq!(kind("g.xplane.pb").as_deref(), Some("not_a_trace"));
    for name in [
        "cut0.xplane.pb",
        "empty.pt.trace.json",
        "garbage.pt.trace.json",
        "g.xplane.pb",
    ] {
        assert!(
            err.lines().any(|l| l.starts_with("tracetui: error:")
                && l.contains(name)
                && l.contains("at byte")),
            "{name}: {err}"
        );
    }
    if !as_root {
        assert_eq!(kind("locked.pt.trace.json").as_deref(), Some("io"));
        assert!(
            err.contains("locked.pt.trace.json") && err.contains("ermission denied"),
            "{err}"
        );
    }
    let failed = if as_root { 4 } else { 5 };
    assert!(
        err.contains(&format!(
            "{failed} of {} captures could not be loaded",
            caps.len()
        )),
        "{err}"
    );
    // Text mode: the same report, one block per file.
    let (code, out, _) = run([OsStr::new("summary"), d.path().as_os_str()]);
    assert_eq!(code, 0);
    assert!(out.contains("kept the 1 complete XPlanes"), "{out}");
    assert_eq!(out.matches("   error:").count(), failed, "{out}");
}

#[test]
fn max_events_caps_and_reports_prominently() {
    let (code, out, err) = run([
        OsStr::new("summary"),
        OsStr::new("--max-events"),
        OsStr::new("100"),
        good_trace().as_os_str(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("   CAPPED:   kept the first 100 events of 2"),
        "{out}"
    );
    assert!(out.contains("(--max-events 100)"), "{out}");
    let (code, out, _) = run([
        OsStr::new("summary"),
        OsStr::new("--json"),
        OsStr::new("--max-events=100"),
        good_trace().as_os_str(),
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(
        v["captures"][0]["capped"]
            .as_str()
            .is_some_and(|c| c.contains("--max-events 100"))
    );
    assert_eq!(run(["summary", "--max-events", "0", "."]).0, 2);
    let (code, out, _) = run([
        OsStr::new("stats"),
        OsStr::new("--max-events"),
        OsStr::new("100"),
        good_trace().as_os_str(),
    ]);
    assert_eq!(code, 0);
    assert!(!out.is_empty());
}

#[test]
fn truncated_gzip_says_so_with_both_sizes() {
    let d = tempfile::tempdir().expect("tempdir");
    let gz = fs::read(good_trace()).expect("read");
    // 100 bytes: nothing decompresses — a truncated gzip at byte 100, not an "empty file".
    let tiny = d.path().join("w.100.pt.trace.json.gz");
    fs::write(&tiny, &gz[..100]).expect("write");
    let (code, _, err) = run([OsStr::new("summary"), tiny.as_os_str()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("w.100.pt.trace.json.gz: at byte 100: truncated gzip"),
        "{err}"
    );
    assert!(!err.contains("empty file"), "{err}");
    // Cut mid-stream: the kept events are reported with the decompressed and compressed sizes,
    // never the decompressed size as a share of the compressed file.
    let cut = d.path().join("w.cut.pt.trace.json.gz");
    fs::write(&cut, &gz[..30_000]).expect("write");
    let (code, out, err) = run([OsStr::new("summary"), cut.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("decompressed text ends at byte"), "{out}");
    assert!(out.contains("from the 30000-byte compressed file"), "{out}");
    assert!(!out.contains("100% of the file"), "{out}");
}
