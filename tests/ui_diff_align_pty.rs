//! End-to-end: the real binary in a pseudo-terminal diffs two captures from the picker (`b`,
//! `j`, `d`), opens the aligned timelines (`a`), walks the aligned pairs and closes them.

#![cfg(unix)]

mod common;
use common::pty::Session;

#[test]
fn aligned_timelines_open_from_the_diff_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ev = |n: &str, ts: u32, d: u32| {
        format!(r#"{{"ph":"X","name":"{n}","cat":"cpu_op","ts":{ts},"dur":{d},"pid":1,"tid":1}}"#)
    };
    let a = [ev("k1", 0, 10), ev("k2", 10, 10), ev("k3", 20, 10)];
    let b = [ev("k1", 0, 10), ev("k2", 10, 20), ev("k4", 30, 10)];
    for (f, e) in [("a.json", a), ("b.json", b)] {
        let text = format!("{{\"traceEvents\":[{}]}}", e.join(","));
        std::fs::write(dir.path().join(f), text).expect("write");
    }
    let path = dir.path().to_str().expect("utf-8 path").to_string();
    let mut s = Session::start(&path);
    s.diff_second_against_first();
    s.wait_for("diff · B ");
    s.press("a");
    s.wait_for("2 matched (1 slower, 0 faster)");
    s.wait_for("pair 1 of 4 · same · k1");
    s.press("l");
    s.wait_for("pair 2 of 4 · slower · k2");
    s.press("n");
    s.wait_for("pair 3 of 4 · ");
    s.press("\x1b");
    s.wait_for("diff · B ");
    s.quit();
}
