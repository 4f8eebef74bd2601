//! End-to-end: the real binary in a pseudo-terminal diffs two captures from the picker (`b`,
//! `j`, `d`), narrows the diff table to one step (`r`, a range, `Enter`; a bad range is refused
//! in the status line), then opens B's flame view (`F`), where a path gone in B is reached with
//! the arrow keys.

#![cfg(unix)]

mod common;
use common::pty::Session;

#[test]
fn step_range_prompt_and_gone_paths_in_the_diff_flame() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diff");
    for f in ["hand_a.json", "hand_b.json"] {
        std::fs::copy(fixtures.join(f), dir.path().join(f)).expect("copy");
    }
    let path = dir.path().to_str().expect("utf-8 path").to_string();
    let mut s = Session::start(&path);
    s.diff_second_against_first();
    s.wait_for("all steps (2 vs 3)");
    s.press("r");
    s.wait_for("steps (N, A..=B, A..; #N: by position");
    s.press("9");
    s.press("\r");
    // The reason shows on the prompt line (and in the status line).
    s.wait_for("9▏ · diff: A: no step numbered in 9");
    s.press("\x7f");
    s.press("2");
    s.press("\r");
    s.wait_for("steps 2 (1 vs 1)");
    // Back to B's timeline, then its flame view: the diff flame.
    s.press("\x1b");
    // Apart from the next key, or the terminal reads Esc F as Alt-F.
    std::thread::sleep(std::time::Duration::from_millis(300));
    s.press("F");
    s.wait_for("diff vs A per step");
    for k in ["j", "l", "l"] {
        s.press(k);
    }
    s.wait_for("aten::old · gone in B");
    s.quit();
}
