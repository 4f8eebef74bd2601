//! End-to-end: the real binary in a pseudo-terminal (portable-pty + vt100): keys in, screen text
//! out, and `q` leaves with exit code 0, the alternate screen left and raw mode off.

#![cfg(unix)]

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Session {
    out: Arc<Mutex<Vec<u8>>>,
    master: Box<dyn portable_pty::MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Session {
    fn start(arg: &str) -> Session {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: 24,
                cols: 100,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_tracetui"));
        cmd.arg(arg);
        cmd.cwd(env!("CARGO_MANIFEST_DIR"));
        cmd.env("TERM", "xterm-256color");
        let child = pty.slave.spawn_command(cmd).expect("spawn");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("reader");
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = out.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let writer = pty.master.take_writer().expect("writer");
        Session {
            out,
            master: pty.master,
            writer,
            child,
        }
    }

    fn screen(&self) -> String {
        let mut p = vt100::Parser::new(24, 100, 0);
        p.process(&self.out.lock().unwrap());
        p.screen().contents()
    }

    fn wait_for(&self, what: &str) -> String {
        let t = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(what) {
                return s;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "timed out waiting for {what:?}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn press(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Debug text of the terminal's local flags (ICANON / ECHO present = cooked mode).
    fn local_flags(&self) -> String {
        self.master
            .get_termios()
            .map(|t| format!("{:?}", t.local_flags))
            .unwrap_or_default()
    }

    fn quit(mut self) -> Vec<u8> {
        self.press("q");
        let t = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(t.elapsed() < Duration::from_secs(10), "q did not exit");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "exit status {status:?}");
        let flags = self.local_flags();
        assert!(
            flags.contains("ICANON") && flags.contains("ECHO"),
            "raw mode not left: {flags}"
        );
        std::thread::sleep(Duration::from_millis(100));
        self.out.lock().unwrap().clone()
    }
}

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
