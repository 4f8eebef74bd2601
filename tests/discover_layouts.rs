//! Discovery on temp dirs laid out like XProf / TensorBoard and PyTorch log dirs.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};
use tracetui::discover::{RunKind, discover};
use tracetui::model::Format;

const CHROME: &str = r#"{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1}]}"#;
/// (run name, kind, [(file name, span)]).
type RunView<'a> = (&'a str, RunKind, Vec<(String, Option<u64>)>);

const KINETO: &str = r#"{"schemaVersion":1,"traceEvents":[]}"#;

fn write(p: &Path, body: &str) {
    if let Some(d) = p.parent() {
        fs::create_dir_all(d).expect("mkdir");
    }
    fs::write(p, body).expect("write");
}

fn touch_at(p: &Path, secs: u64) {
    let f = fs::File::options().write(true).open(p).expect("open");
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .expect("set mtime");
}

#[test]
fn xprof_sessions_are_runs_with_alternates() {
    let d = tempfile::tempdir().expect("tempdir");
    let root = d.path();
    let s1 = root.join("plugins/profile/2026_01_01_00_00_00");
    write(&s1.join("vm.xplane.pb"), "x");
    write(&s1.join("vm.trace.json.gz"), "x");
    write(&s1.join("perfetto_trace.json.gz"), "x");
    write(&s1.join("vm.memory_profile.json.gz"), "x");
    write(&s1.join("vm.overview_page.pb"), "x");
    write(&s1.join("vm.xplane.riegeli"), "x");
    let s2 = root.join("train/plugins/profile/2026_01_02_00_00_00");
    write(&s2.join("h1.xplane.pb"), "x");
    write(&s2.join("h2.xplane.pb.gz"), "x");
    write(&s2.join("h3.trace.json.gz"), "x");
    touch_at(&s1.join("vm.xplane.pb"), 1000);
    for f in ["vm.trace.json.gz", "perfetto_trace.json.gz"] {
        touch_at(&s1.join(f), 1000);
    }
    for f in ["h1.xplane.pb", "h2.xplane.pb.gz", "h3.trace.json.gz"] {
        touch_at(&s2.join(f), 2000);
    }

    let cat = discover(root).expect("discover");
    let names: Vec<&str> = cat.runs.iter().map(|r| r.name.as_str()).collect();
    // newest first
    assert_eq!(
        names,
        vec!["train/2026_01_02_00_00_00", "2026_01_01_00_00_00"]
    );
    let r0 = &cat.runs[1];
    assert_eq!(r0.kind, RunKind::XProf);
    assert_eq!(r0.captures.len(), 1, "{:?}", r0.captures);
    let c = &r0.captures[0];
    assert_eq!((c.host.as_str(), c.format), ("vm", Format::XPlane));
    let alts: Vec<String> = c
        .alternates
        .iter()
        .map(|p| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(alts, vec!["vm.trace.json.gz", "perfetto_trace.json.gz"]);
    assert_eq!(c.source_info().run, "2026_01_01_00_00_00");
    assert_eq!(c.key(), "2026_01_01_00_00_00/vm.xplane.pb");
    let r1 = &cat.runs[0];
    let hosts: Vec<(&str, Format)> = r1
        .captures
        .iter()
        .map(|c| (c.host.as_str(), c.format))
        .collect();
    assert_eq!(
        hosts,
        vec![
            ("h1", Format::XPlane),
            ("h2", Format::XPlane),
            ("h3", Format::XProfJson)
        ]
    );
    // riegeli is reported, not loaded
    assert!(
        cat.problems
            .iter()
            .any(|(p, m)| p.ends_with("vm.xplane.riegeli") && m.contains("not supported"))
    );
}

#[test]
fn session_dir_given_directly_keeps_its_name() {
    let d = tempfile::tempdir().expect("tempdir");
    let s = d.path().join("logs/plugins/profile/sess");
    write(&s.join("a.xplane.pb"), "x");
    let cat = discover(&s).expect("discover");
    assert_eq!(cat.runs.len(), 1);
    assert_eq!(cat.runs[0].name, "sess");
    assert_eq!(cat.runs[0].kind, RunKind::XProf);
    let f = discover(&s.join("a.xplane.pb")).expect("discover file");
    assert_eq!(f.runs[0].name, "sess");
    assert_eq!(f.runs[0].captures[0].host, "a");
}

#[test]
fn pytorch_runs_and_sniffed_json() {
    let d = tempfile::tempdir().expect("tempdir");
    let root = d.path();
    write(&root.join("exp1/w0.100.pt.trace.json"), KINETO);
    write(&root.join("exp1/w0.20.pt.trace.json.gz"), "not even gzip");
    write(&root.join("exp1/w1.pt.trace.json"), KINETO);
    write(&root.join("exp1/w0.30.pt.trace.json.tmp"), KINETO);
    write(
        &root.join("exp1/w0.100.key_averages.json"),
        r#"[{"name":"a","count":1}]"#,
    );
    write(&root.join("other/chrome.json"), CHROME);
    write(
        &root.join("other/array.json"),
        r#"[ {"ph":"B","name":"x","ts":0}]"#,
    );
    write(&root.join("other/config.json"), r#"{"lr": 0.1}"#);
    write(&root.join("other/notes.txt"), "hello");
    write(&root.join(".hidden/x.pt.trace.json"), KINETO);
    write(&root.join("top.pt.trace.json"), KINETO);
    let cat = discover(root).expect("discover");
    let mut runs: Vec<RunView> = cat
        .runs
        .iter()
        .map(|r| {
            (
                r.name.as_str(),
                r.kind,
                r.captures.iter().map(|c| (c.file_name(), c.span)).collect(),
            )
        })
        .collect();
    runs.sort_by(|a, b| a.0.cmp(b.0));
    let root_name = fs::canonicalize(root)
        .expect("canon")
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let mut want: Vec<RunView> = vec![
        (
            "exp1",
            RunKind::PyTorch,
            vec![
                ("w0.20.pt.trace.json.gz".to_string(), Some(20)),
                ("w0.100.pt.trace.json".to_string(), Some(100)),
                ("w1.pt.trace.json".to_string(), None),
            ],
        ),
        (
            "other",
            RunKind::Other,
            vec![
                ("array.json".to_string(), None),
                ("chrome.json".to_string(), None),
            ],
        ),
        (
            root_name.as_str(),
            RunKind::PyTorch,
            vec![("top.pt.trace.json".to_string(), None)],
        ),
    ];
    want.sort_by(|a, b| a.0.cmp(b.0));
    assert_eq!(runs, want);
    let w = cat
        .captures()
        .find(|c| c.file_name() == "w0.100.pt.trace.json")
        .expect("capture");
    assert_eq!((w.host.as_str(), w.format), ("w0", Format::Kineto));
    assert!(cat.problems.is_empty(), "{:?}", cat.problems);
}

#[cfg(unix)]
#[test]
fn symlink_loops_terminate_and_dedupe() {
    let d = tempfile::tempdir().expect("tempdir");
    let root = d.path();
    write(&root.join("a/w.pt.trace.json"), KINETO);
    std::os::unix::fs::symlink(root, root.join("a/loop")).expect("symlink");
    std::os::unix::fs::symlink(root.join("a"), root.join("alias")).expect("symlink");
    std::os::unix::fs::symlink(root.join("missing"), root.join("a/dangling.pt.trace.json"))
        .expect("symlink");
    let cat = discover(root).expect("discover");
    assert_eq!(cat.capture_count(), 1, "{:?}", cat.runs);
    assert!(
        cat.problems
            .iter()
            .any(|(p, _)| p.ends_with("dangling.pt.trace.json"))
    );
}

#[test]
fn missing_and_empty() {
    let d = tempfile::tempdir().expect("tempdir");
    assert!(discover(&d.path().join("nope")).is_err());
    let cat = discover(d.path()).expect("empty dir is fine");
    assert!(cat.is_empty());
    // a file that is not a trace is a problem, not a capture
    let f = d.path().join("notes.txt");
    write(&f, "hello");
    let cat = discover(&f).expect("discover");
    assert!(cat.is_empty());
    assert_eq!(cat.problems.len(), 1);
    // an explicit .json is always tried (the loader reports where it is broken)
    let j = d.path().join("broken.json");
    write(&j, "{ nope");
    assert_eq!(discover(&j).expect("discover").capture_count(), 1);
}

#[cfg(unix)]
#[test]
fn unreadable_entries_are_problems() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().expect("tempdir");
    let root = d.path();
    write(&root.join("ok/w.pt.trace.json"), KINETO);
    write(&root.join("locked/w.pt.trace.json"), KINETO);
    write(&root.join("ok/secret.json"), CHROME);
    fs::set_permissions(root.join("locked"), fs::Permissions::from_mode(0o000)).expect("chmod");
    fs::set_permissions(
        root.join("ok/secret.json"),
        fs::Permissions::from_mode(0o000),
    )
    .expect("chmod");
    let readable = fs::read_dir(root.join("locked")).is_ok(); // root ignores permissions
    let cat = discover(root).expect("discover");
    fs::set_permissions(root.join("locked"), fs::Permissions::from_mode(0o755)).expect("chmod");
    if readable {
        return;
    }
    assert_eq!(cat.capture_count(), 1);
    assert!(cat.problems.iter().any(|(p, _)| p.ends_with("locked")));
    assert!(cat.problems.iter().any(|(p, _)| p.ends_with("secret.json")));
}
