//! Read-only and offline (issue 14 §6): the CLI and the explorer run on a read-only copy of the
//! fixtures and leave it exactly as it was (same files, bytes, permissions and modification
//! times, nothing added), and leave nothing behind in the temporary directory.

#![cfg(unix)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A copy of a few fixtures laid out as a log dir: an XPlane run and a PyTorch run (plain and gz).
fn make_log_dir(root: &Path) {
    let run = root.join("plugins/profile/2024_01_01_00_00_00");
    fs::create_dir_all(&run).expect("mkdir");
    fs::copy(
        fixtures().join("xplane/vm.xplane.pb"),
        run.join("vm.xplane.pb"),
    )
    .expect("copy");
    let torch = root.join("torch");
    fs::create_dir_all(&torch).expect("mkdir");
    fs::copy(
        fixtures().join("cli/worker0.1795311589169457977.pt.trace.json.gz"),
        torch.join("worker0.1795311589169457977.pt.trace.json.gz"),
    )
    .expect("copy");
    fs::copy(
        fixtures().join("chrome/simple_trace.json"),
        torch.join("worker1.1.pt.trace.json"),
    )
    .expect("copy");
}

/// Every entry under `root`: relative path → (mode, mtime, content hash).
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (u32, i64, u64)> {
    use std::hash::{Hash, Hasher};
    use std::os::unix::fs::MetadataExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let meta = fs::symlink_metadata(&d).expect("stat");
        let mut h = std::collections::hash_map::DefaultHasher::new();
        if meta.is_dir() {
            for e in fs::read_dir(&d).expect("read dir") {
                stack.push(e.expect("entry").path());
            }
        } else {
            fs::read(&d).expect("read").hash(&mut h);
        }
        let rel = d.strip_prefix(root).expect("under root").to_path_buf();
        out.insert(
            rel,
            (
                meta.mode(),
                meta.mtime_nsec() + meta.mtime() * 1_000_000_000,
                h.finish(),
            ),
        );
    }
    out
}

/// Sets or clears the write permission of everything under `root` (directories last on the way
/// down, first on the way up, so the walk itself keeps working).
fn set_writable(root: &Path, writable: bool) {
    use std::os::unix::fs::PermissionsExt;
    let mut all = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        if d.is_dir() {
            for e in fs::read_dir(&d).expect("read dir") {
                stack.push(e.expect("entry").path());
            }
        }
        all.push(d);
    }
    if writable {
        all.reverse();
    }
    for p in all {
        let mode = fs::metadata(&p).expect("stat").permissions().mode();
        let mode = if writable {
            mode | 0o200
        } else {
            mode & !0o222
        };
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).expect("chmod");
    }
}

/// Runs the CLI with `TMPDIR` set to `tmp`; returns (exit code, stdout).
fn run(args: &[&str], dir: &Path, tmp: &Path) -> (i32, String) {
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .args(args)
        .arg(dir)
        .env("TMPDIR", tmp)
        .output()
        .expect("run tracetui");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn cli_leaves_a_read_only_log_dir_and_the_temp_dir_untouched() {
    let root = tempfile::tempdir().expect("temp dir");
    let logs = root.path().join("logs");
    let tmp = root.path().join("tmp");
    fs::create_dir_all(&tmp).expect("mkdir");
    make_log_dir(&logs);
    set_writable(&logs, false);
    let before = snapshot(&logs);
    for args in [
        &["summary"][..],
        &["summary", "--json"][..],
        &["stats"][..],
        &["stats", "--json"][..],
        &["stats", "--unified"][..],
    ] {
        let (code, out) = run(args, &logs, &tmp);
        assert_eq!(code, 0, "{args:?}: {out}");
        assert!(!out.is_empty(), "{args:?}");
    }
    let after = snapshot(&logs);
    // (Tests may run as root, which write permission does not stop: the snapshot does.)
    assert_eq!(before, after, "the log dir changed");
    let left: Vec<_> = fs::read_dir(&tmp).expect("read tmp").collect();
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
    set_writable(&logs, true);
}

#[test]
fn explorer_leaves_a_read_only_log_dir_untouched() {
    let root = tempfile::tempdir().expect("temp dir");
    let logs = root.path().join("logs");
    let tmp = root.path().join("tmp");
    fs::create_dir_all(&tmp).expect("mkdir");
    make_log_dir(&logs);
    set_writable(&logs, false);
    let before = snapshot(&logs);
    let mut s = common::pty::Session::spawn(&[&logs], &[("TMPDIR", tmp.as_os_str())]);
    s.wait_for("captures, newest first");
    // Open the first capture, wait for it to load, go back and quit.
    s.press("\r");
    s.wait_for("tracks");
    s.press("q");
    let t = std::time::Instant::now();
    loop {
        if s.exited().is_some() {
            break;
        }
        if t.elapsed() > Duration::from_secs(10) {
            // Still running (q may go back to the picker first): ask again.
            s.press("q");
        }
        assert!(t.elapsed() < Duration::from_secs(30), "did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(before, snapshot(&logs), "the log dir changed");
    let left: Vec<_> = fs::read_dir(&tmp).expect("read tmp").collect();
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
    set_writable(&logs, true);
}
