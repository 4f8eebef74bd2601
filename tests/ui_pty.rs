//! End-to-end: the real binary in a pseudo-terminal (portable-pty + vt100): keys in, screen text
//! out, and `q` leaves with exit code 0, the alternate screen left and raw mode off.

#![cfg(unix)]

mod common;
use common::pty::Session;
use portable_pty::PtySize;
use std::time::{Duration, Instant};

#[test]
fn file_opens_keys_work_and_q_restores_the_terminal() {
    let mut s =
        Session::start("assets/sample/torch-cnn/worker0.1795311589169457977.pt.trace.json.gz");
    s.wait_for("w/s zoom");
    s.wait_for("tracks");
    let flags = s.local_flags();
    assert!(!flags.contains("ICANON"), "not in raw mode: {flags}");
    s.press("?");
    s.wait_for("any key closes");
    s.press("x");
    // Walk down the lanes until one has a slice to select (`l` = next slice on the lane).
    let mut screen = String::new();
    for _ in 0..12 {
        s.press("jl");
        std::thread::sleep(Duration::from_millis(150));
        screen = s.screen();
        if screen.contains(" · self ") {
            break;
        }
    }
    assert!(screen.contains(" · self "), "nothing selected:\n{screen}");
    assert!(!screen.contains("any key closes"), "{screen}");
    s.press("w");
    // Resize to 80 columns: the layout shrinks (short key hints, narrow gutter).
    s.master
        .resize(PtySize {
            rows: 24,
            cols: 80,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let t = Instant::now();
    loop {
        let screen = s.screen();
        if screen.contains("tracetui") && screen.lines().all(|l| l.chars().count() <= 80) {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "not redrawn at 80 columns:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = s.quit();
    let needle = b"\x1b[?1049l";
    assert!(
        out.windows(needle.len()).any(|w| w == needle),
        "alternate screen not left"
    );
    let mouse_off = b"\x1b[?1000l";
    assert!(
        out.windows(mouse_off.len()).any(|w| w == mouse_off),
        "mouse capture not turned off"
    );
}

#[test]
fn log_dir_shows_the_picker_newest_first() {
    let s = Session::start("assets/sample");
    let screen = s.wait_for("captures, newest first");
    assert!(
        screen.contains("jax-mlp") && screen.contains("torch-cnn"),
        "{screen}"
    );
    let out = s.quit();
    let needle = b"\x1b[?1049l";
    assert!(out.windows(needle.len()).any(|w| w == needle));
}

#[test]
fn search_types_a_query_jumps_and_steps_with_n() {
    let mut s =
        Session::start("assets/sample/torch-cnn/worker0.1795311589169457977.pt.trace.json.gz");
    s.wait_for("w/s zoom");
    // Loaded (the header counts the tracks): the loading screen shows the hints too, and keys
    // pressed while loading are not for the timeline.
    s.wait_for("tracks");
    s.press("/");
    s.wait_for("search every event");
    s.press("aten::conv2d");
    s.wait_for("/ aten::conv2d");
    s.press("\r");
    // The status line counts the occurrences: 1/N after the jump.
    let screen = s.wait_for(" 1/");
    assert!(screen.contains("aten::conv2d"), "{screen}");
    assert!(
        !screen.contains("search every event"),
        "prompt closed:\n{screen}"
    );
    s.press("n");
    s.wait_for(" 2/");
    s.press("N");
    s.wait_for(" 1/");
    let out = s.quit();
    let needle = b"\x1b[?1049l";
    assert!(out.windows(needle.len()).any(|w| w == needle));
}

#[test]
fn truncating_the_open_xplane_in_place_does_not_crash() {
    // The user report: open a capture, select, `: > file` in another shell, move on.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vm.xplane.pb");
    std::fs::copy("tests/fixtures/xplane/vm.xplane.pb", &path).unwrap();
    let mut s = Session::start(path.to_str().unwrap());
    s.wait_for("w/s zoom");
    s.wait_for("tracks");
    let mut screen = String::new();
    for _ in 0..12 {
        s.press("jl");
        std::thread::sleep(Duration::from_millis(150));
        screen = s.screen();
        if screen.contains(" · self ") {
            break;
        }
    }
    assert!(screen.contains(" · self "), "nothing selected:\n{screen}");
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    // Move the selection: the args of the new slice would be read from the truncated file.
    s.press("lhjl");
    let screen = s.wait_for("file changed on disk");
    assert!(screen.contains("tracetui"), "{screen}");
    // Rewrite it with other bytes: still no crash, no garbage.
    std::fs::write(&path, vec![0xffu8; 4096]).unwrap();
    s.press("kl");
    s.wait_for("file changed on disk");
    // Delete it.
    std::fs::remove_file(&path).unwrap();
    s.press("jh");
    s.wait_for("file changed on disk");
    let out = s.quit();
    let needle = b"\x1b[?1049l";
    assert!(out.windows(needle.len()).any(|w| w == needle));
}
