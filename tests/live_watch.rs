//! Live watching against a real file system: captures are written into a temp dir while it is
//! watched (copied in chunks, renamed from `.tmp`, truncated and rewritten, deleted, new run
//! dirs) and the capture events are checked — through the watcher API and `tracetui watch
//! --json`. Every wait is bounded (a test never hangs; each takes well under 10 s).

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};
use tracetui::live::{self, CaptureEvent, EventKind, WatchEvent, WatchOptions};

/// A 58 KB Kineto capture (gzip).
const KINETO: &str = "tests/fixtures/chrome/worker0.torch-cpu-cnn.pt.trace.json.gz";
/// A 0.5 MB XPlane.
const XPLANE: &str = "tests/fixtures/cli/vm.xplane.pb";

fn start(dir: &Path, poll: bool) -> (live::Watcher, Receiver<WatchEvent>) {
    let (tx, rx) = mpsc::channel();
    let opts = WatchOptions {
        force_poll: poll,
        poll_interval: Duration::from_millis(200),
        ..WatchOptions::default()
    };
    let (w, _) = live::start(dir, &opts, move |e| tx.send(e).is_ok()).expect("watch starts");
    (w, rx)
}

/// Collects capture events until `done` holds for them (or 8 s pass: then panics with what came).
fn until(rx: &Receiver<WatchEvent>, done: impl Fn(&[CaptureEvent]) -> bool) -> Vec<CaptureEvent> {
    let end = Instant::now() + Duration::from_secs(8);
    let mut got = Vec::new();
    while !done(&got) {
        let left = end.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(WatchEvent::Capture(e)) => got.push(e),
            Ok(WatchEvent::Notice(_)) => {}
            Err(_) => panic!("timed out; events so far: {:?}", summary(&got)),
        }
    }
    got
}

fn summary(ev: &[CaptureEvent]) -> Vec<(EventKind, String, u64)> {
    ev.iter()
        .map(|e| (e.kind, e.capture.file_name(), e.capture.bytes))
        .collect()
}

fn has(ev: &[CaptureEvent], kind: EventKind, name: &str) -> bool {
    ev.iter()
        .any(|e| e.kind == kind && e.capture.file_name() == name)
}

/// Writes `data` to `path` through one handle in `n` chunks, pausing between them.
fn write_chunks(path: &Path, data: &[u8], n: usize, pause: Duration) {
    let mut f = fs::File::create(path).expect("create");
    for c in data.chunks(data.len().div_ceil(n)) {
        f.write_all(c).expect("write");
        f.flush().expect("flush");
        std::thread::sleep(pause);
    }
}

#[test]
fn rename_from_tmp_is_new_then_ready_and_delete_is_removed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_w, rx) = start(dir.path(), false);
    let data = fs::read(KINETO).expect("fixture");
    let tmp = dir.path().join("w.7.pt.trace.json.gz.tmp");
    let fin = dir.path().join("w.7.pt.trace.json.gz");
    fs::write(&tmp, &data).expect("write tmp");
    let t0 = Instant::now();
    fs::rename(&tmp, &fin).expect("rename");
    let ev = until(&rx, |e| has(e, EventKind::Ready, "w.7.pt.trace.json.gz"));
    let latency = t0.elapsed();
    assert_eq!(
        summary(&ev),
        vec![
            (
                EventKind::New,
                "w.7.pt.trace.json.gz".into(),
                data.len() as u64
            ),
            (
                EventKind::Ready,
                "w.7.pt.trace.json.gz".into(),
                data.len() as u64
            ),
        ]
    );
    let c = &ev[1].capture;
    assert_eq!((c.host.as_str(), c.span), ("w", Some(7)));
    assert!(latency < Duration::from_secs(1), "{latency:?}");
    fs::remove_file(&fin).expect("delete");
    let ev = until(&rx, |e| !e.is_empty());
    assert_eq!(
        summary(&ev),
        vec![(
            EventKind::Removed,
            "w.7.pt.trace.json.gz".into(),
            data.len() as u64
        )]
    );
}

#[test]
fn chunked_copy_is_writing_until_closed_and_rewrite_is_changed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_w, rx) = start(dir.path(), false);
    let data = fs::read(KINETO).expect("fixture");
    let path = dir.path().join("w.pt.trace.json.gz");
    write_chunks(&path, &data, 6, Duration::from_millis(80));
    let ev = until(&rx, |e| has(e, EventKind::Ready, "w.pt.trace.json.gz"));
    let kinds: Vec<EventKind> = ev.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        vec![EventKind::New, EventKind::Writing, EventKind::Ready]
    );
    // Never announced complete while partial.
    assert_eq!(ev[2].capture.bytes, data.len() as u64);
    // Truncated and rewritten in place (a longer file): writing, then changed at full size.
    let mut longer = data.clone();
    longer.extend_from_slice(&data[..1000]);
    write_chunks(&path, &longer, 4, Duration::from_millis(80));
    let ev = until(&rx, |e| has(e, EventKind::Changed, "w.pt.trace.json.gz"));
    assert_eq!(
        ev.iter().map(|e| e.kind).collect::<Vec<_>>(),
        vec![EventKind::Writing, EventKind::Changed]
    );
    assert_eq!(ev[1].capture.bytes, longer.len() as u64);
}

#[test]
fn new_xprof_session_dir_is_named_like_discovery() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_w, rx) = start(dir.path(), false);
    let session = dir.path().join("plugins/profile/2026_11_22_18_00_00");
    fs::create_dir_all(&session).expect("mkdir");
    let data = fs::read(XPLANE).expect("fixture");
    write_chunks(
        &session.join("vm.xplane.pb"),
        &data,
        4,
        Duration::from_millis(50),
    );
    let ev = until(&rx, |e| has(e, EventKind::Ready, "vm.xplane.pb"));
    let ready = ev
        .iter()
        .find(|e| e.kind == EventKind::Ready)
        .expect("ready");
    assert_eq!(ready.capture.run, "2026_11_22_18_00_00");
    assert_eq!(ready.capture.host, "vm");
    assert_eq!(ready.capture.bytes, data.len() as u64);
    assert_eq!(ev[0].kind, EventKind::New);
    // The whole run dir removed: its capture leaves.
    fs::remove_dir_all(dir.path().join("plugins")).expect("rm");
    let ev = until(&rx, |e| has(e, EventKind::Removed, "vm.xplane.pb"));
    assert_eq!(ev.len(), 1, "{:?}", summary(&ev));
}

#[test]
fn polling_fallback_sees_new_captures() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (w, rx) = start(dir.path(), true);
    assert_eq!(w.backend(), live::Backend::Poll);
    let data = fs::read(KINETO).expect("fixture");
    let tmp = dir.path().join("p.pt.trace.json.gz.tmp");
    fs::write(&tmp, &data).expect("write");
    fs::rename(&tmp, dir.path().join("p.pt.trace.json.gz")).expect("rename");
    let ev = until(&rx, |e| has(e, EventKind::Ready, "p.pt.trace.json.gz"));
    assert_eq!(ev[0].kind, EventKind::New);
    assert_eq!(ev.last().map(|e| e.capture.bytes), Some(data.len() as u64));
}

#[test]
fn watch_command_prints_json_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = fs::read(KINETO).expect("fixture");
    fs::write(dir.path().join("old.pt.trace.json.gz"), &data).expect("write");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("tracetui"))
        .args(["watch", "--json", "--exit-after", "3", "--timeout", "8"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // The watch is in place once it says so on stderr.
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    err.read_line(&mut line).expect("stderr line");
    assert!(
        line.starts_with("tracetui: watching ") && line.contains("(inotify, 1 captures)"),
        "{line}"
    );
    let tmp = dir.path().join("new.3.pt.trace.json.gz.tmp");
    fs::write(&tmp, &data).expect("write");
    fs::rename(&tmp, dir.path().join("new.3.pt.trace.json.gz")).expect("rename");
    std::thread::sleep(Duration::from_millis(300));
    fs::remove_file(dir.path().join("old.pt.trace.json.gz")).expect("delete");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let ev: Vec<(&str, &str, &str)> = lines
        .iter()
        .map(|v| {
            (
                v["event"].as_str().unwrap_or(""),
                v["host"].as_str().unwrap_or(""),
                v["format"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        ev,
        vec![
            ("new", "new", "kineto"),
            ("ready", "new", "kineto"),
            ("removed", "old", "kineto")
        ]
    );
    assert_eq!(lines[1]["bytes"], data.len() as u64);
    assert!(
        lines[1]["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("new.3.pt.trace.json.gz"))
    );
}

#[test]
fn a_snapshot_pickle_dropped_in_is_a_new_capture() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A trace already there: the snapshot joins its run.
    fs::copy(KINETO, dir.path().join("w.1.pt.trace.json.gz")).expect("copy");
    let (_w, rx) = start(dir.path(), false);
    let data = fs::read("tests/fixtures/memory/snap_small.pickle").expect("fixture");
    let tmp = dir.path().join("oom.pickle.tmp");
    fs::write(&tmp, &data).expect("write tmp");
    fs::rename(&tmp, dir.path().join("oom.pickle")).expect("rename");
    let ev = until(&rx, |e| has(e, EventKind::Ready, "oom.pickle"));
    let e = ev
        .iter()
        .find(|e| e.kind == EventKind::Ready)
        .expect("ready");
    assert_eq!(e.capture.format, tracetui::model::Format::Snapshot);
    assert_eq!(e.capture.host, "oom");
    assert_eq!(e.capture.bytes, data.len() as u64);
    // Named like the picker names the snapshots of a log dir.
    let root = tracetui::ui::catalog::CaptureRef::from_file(&e.capture.path, dir.path());
    assert_eq!(e.capture.run, root.source.run);
    // Not a capture: a `.pickle` that is no pickle is never announced.
    fs::write(dir.path().join("notes.pickle"), b"hello").expect("write");
    fs::remove_file(dir.path().join("oom.pickle")).expect("remove");
    let ev = until(&rx, |e| has(e, EventKind::Removed, "oom.pickle"));
    assert!(!ev.iter().any(|e| e.capture.file_name() == "notes.pickle"));
}
