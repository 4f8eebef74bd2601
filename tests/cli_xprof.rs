//! `summary` / `stats` on a TensorBoard/XProf log dir: the XPlane is loaded, its JSON exports are
//! listed as alternates, and per-line event counts match an independent wire-format walk.

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cli")
        .join(name)
}

fn run_json(args: &[&std::ffi::OsStr]) -> Value {
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .args(args)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json output")
}

fn log_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    let s = d.path().join("logs/plugins/profile/2026_11_22_01_25_12");
    fs::create_dir_all(&s).expect("mkdir");
    fs::copy(fixture("vm.xplane.pb"), s.join("vm.xplane.pb")).expect("copy");
    // Stand-ins for the JSON exports: never loaded, so their content does not matter.
    fs::write(s.join("vm.trace.json.gz"), "not loaded").expect("write");
    fs::write(s.join("perfetto_trace.json.gz"), "not loaded").expect("write");
    d
}

#[test]
fn xplane_preferred_and_line_counts_match() {
    let d = log_dir();
    let root = d.path().join("logs");
    let v = run_json(&["summary".as_ref(), "--json".as_ref(), root.as_os_str()]);
    let caps = v["captures"].as_array().expect("captures");
    assert_eq!(caps.len(), 1, "{v}");
    let c = &caps[0];
    assert!(c.get("error").is_none(), "{}", c["error"]);
    assert_eq!(c["format"], "xplane");
    assert_eq!(c["run"], "2026_11_22_01_25_12");
    assert_eq!(c["host"], "vm");
    let alts: Vec<&str> = c["alternates"]
        .as_array()
        .expect("alternates")
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    assert_eq!(alts.len(), 2);
    assert!(alts[0].ends_with("vm.trace.json.gz") && alts[1].ends_with("perfetto_trace.json.gz"));

    let want: Value =
        serde_json::from_str(&fs::read_to_string(fixture("vm.line_counts.json")).expect("read"))
            .expect("line counts");
    let tracks = c["tracks"].as_array().expect("tracks");
    let mut checked = 0;
    for (plane, lines) in want.as_object().expect("object") {
        for (line, n) in lines.as_object().expect("lines") {
            let t = tracks
                .iter()
                .find(|t| t["process"] == plane.as_str() && t["name"] == line.as_str())
                .unwrap_or_else(|| panic!("no track {plane} / {line}"));
            assert_eq!(&t["events"], n, "{plane} / {line}");
            checked += 1;
        }
    }
    assert!(checked > 0);

    // text mode says which files were not loaded
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .arg("summary")
        .arg(&root)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "also:     vm.trace.json.gz, perfetto_trace.json.gz (same capture, not loaded)"
        ),
        "{text}"
    );

    // stats without filters covers every slice exactly once (this capture has only timed events)
    assert_eq!(c["events"], c["slices"]);
    let s = run_json(&["stats".as_ref(), "--json".as_ref(), root.as_os_str()]);
    let rows = s["captures"][0]["stats"].as_array().expect("stats");
    let counted: u64 = rows.iter().filter_map(|r| r["count"].as_u64()).sum();
    let slices: u64 = tracks.iter().filter_map(|t| t["slices"].as_u64()).sum();
    assert_eq!(counted, slices);
    // --line keeps one line only
    let s = run_json(&[
        "stats".as_ref(),
        "--json".as_ref(),
        "--line".as_ref(),
        "^python$".as_ref(),
        root.as_os_str(),
    ]);
    let rows = s["captures"][0]["stats"].as_array().expect("stats");
    let counted: u64 = rows.iter().filter_map(|r| r["count"].as_u64()).sum();
    let python = tracks
        .iter()
        .find(|t| t["name"] == "python")
        .and_then(|t| t["slices"].as_u64())
        .expect("python line");
    assert_eq!(counted, python);
}

#[test]
fn broken_xplane_falls_back_to_its_json_export() {
    use std::io::Write;
    let d = tempfile::tempdir().expect("tempdir");
    let s = d.path().join("plugins/profile/sess");
    fs::create_dir_all(&s).expect("mkdir");
    fs::write(s.join("vm.xplane.pb"), [0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]).expect("write");
    let json = r#"{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[
        {"ph":"M","pid":701,"name":"process_name","args":{"name":"/host:CPU"}},
        {"ph":"X","pid":701,"tid":1,"ts":1.5,"dur":2,"name":"jit_step","args":{}},{}]}"#;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(json.as_bytes()).expect("gzip");
    fs::write(s.join("vm.trace.json.gz"), gz.finish().expect("gzip")).expect("write");
    let v = run_json(&["summary".as_ref(), "--json".as_ref(), d.path().as_os_str()]);
    let c = &v["captures"][0];
    assert!(c.get("error").is_none(), "{c}");
    assert_eq!(c["slices"], 1);
    let w = c["warnings"].as_array().expect("warnings");
    assert!(
        w.iter().any(|w| w["kind"] == "fallback_alternate"
            && w["message"]
                .as_str()
                .is_some_and(|m| m.contains("vm.xplane.pb"))),
        "{c}"
    );
}
