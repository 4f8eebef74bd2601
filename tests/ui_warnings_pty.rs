//! End-to-end (issue 53 §4, §7): the real binary in a pseudo-terminal opens a truncated capture
//! and says so on the status line, `!` lists the warnings; a `--print-config` copy with `quit`
//! moved to `x` quits on `x` (the user's key wins over `jump_device`'s default).

#![cfg(unix)]

mod common;
use common::pty::Session;
use std::time::{Duration, Instant};

#[test]
fn a_truncated_capture_says_so_and_bang_lists_why() {
    let mut s = Session::start("tests/fixtures/ui/alexnet.truncated.pt.trace.json.gz");
    s.wait_for("⚠ 3 load warnings (!)");
    // `!` is the attention view (issue 56): Tab to its load-warnings tab.
    s.press("!");
    s.press("\t");
    let screen = s.wait_for("truncated ×1");
    assert!(
        screen.contains("decompressed text ends at byte 185449"),
        "{screen}"
    );
    assert!(screen.contains("gzip_error ×1"), "{screen}");
    // Any key closes it.
    s.press("\x1b");
    let t = Instant::now();
    while s.screen().contains("truncated ×1") {
        assert!(t.elapsed() < Duration::from_secs(10), "popup not closed");
        std::thread::sleep(Duration::from_millis(50));
    }
    s.quit();
}

#[test]
fn a_key_moved_in_a_print_config_copy_wins_over_the_default() {
    let d = tempfile::tempdir().expect("tempdir");
    let cfg = d.path().join("config.toml");
    let text = tracetui::ui::config::default_toml()
        .replace("quit = [\"q\", \"Ctrl-C\"]", "quit = [\"x\", \"Ctrl-C\"]");
    assert!(text.contains("quit = [\"x\""));
    std::fs::write(&cfg, text).expect("write config");
    let args = [
        std::ffi::OsStr::new("--config"),
        cfg.as_os_str(),
        std::ffi::OsStr::new("tests/fixtures/ui/alexnet.pt.trace.json.gz"),
    ];
    let mut s = Session::spawn(&args, &[]);
    s.wait_for("? help");
    s.press("x");
    let t = Instant::now();
    let status = loop {
        if let Some(st) = s.exited() {
            break st;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "x did not quit:\n{}",
            s.screen()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
}
