//! The real binary in a pseudo-terminal (portable-pty + vt100): keys in, screen text out.

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `tracetui` on a 100×24 pseudo-terminal.
pub struct Session {
    out: Arc<Mutex<Vec<u8>>>,
    /// The terminal side (resize, termios).
    pub master: Box<dyn portable_pty::MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    /// The process.
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Session {
    /// Starts `tracetui ARGS` in the crate's directory with `TERM=xterm-256color` and `envs`.
    pub fn spawn<S: AsRef<OsStr>>(args: &[S], envs: &[(&str, &OsStr)]) -> Session {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: 24,
                cols: 100,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_tracetui"));
        cmd.args(args);
        cmd.cwd(env!("CARGO_MANIFEST_DIR"));
        cmd.env("TERM", "xterm-256color");
        for (k, v) in envs {
            cmd.env(k, v);
        }
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
                if let Ok(mut v) = sink.lock() {
                    v.extend_from_slice(&buf[..n]);
                }
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

    /// `tracetui ARG`.
    pub fn start(arg: &str) -> Session {
        Session::spawn(&[arg], &[])
    }

    /// Everything written so far.
    pub fn output(&self) -> Vec<u8> {
        self.out.lock().expect("lock").clone()
    }

    /// The screen as text.
    pub fn screen(&self) -> String {
        let mut p = vt100::Parser::new(24, 100, 0);
        p.process(&self.out.lock().expect("lock"));
        p.screen().contents()
    }

    /// Waits (30 s at most) until the screen shows `what`; the screen then.
    pub fn wait_for(&self, what: &str) -> String {
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

    /// In the picker of a log dir of two captures: marks the first as the baseline (A) and
    /// diffs the second (B) against it.
    pub fn diff_second_against_first(&mut self) {
        self.wait_for("2 captures");
        self.press("b");
        self.wait_for("baseline A: ");
        self.press("j");
        self.press("d");
    }

    /// Types `keys`.
    pub fn press(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).expect("key");
        self.writer.flush().expect("flush");
    }

    /// The exit status once the process has ended.
    pub fn exited(&mut self) -> Option<portable_pty::ExitStatus> {
        self.child.try_wait().expect("wait")
    }

    /// Debug text of the terminal's local flags (ICANON / ECHO present = cooked mode).
    pub fn local_flags(&self) -> String {
        self.master
            .get_termios()
            .map(|t| format!("{:?}", t.local_flags))
            .unwrap_or_default()
    }

    /// Presses `q` and checks that the process exits within 10 s with success and leaves the
    /// terminal in cooked mode; everything it wrote.
    pub fn quit(mut self) -> Vec<u8> {
        self.press("q");
        let t = Instant::now();
        let status = loop {
            if let Some(s) = self.exited() {
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
        self.output()
    }
}
