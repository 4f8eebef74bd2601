//! `tracetui watch PATH [--json]`: one line per capture event (new, writing, ready, changed,
//! removed) until interrupted, for scripts. Notices (polling fallback, path gone) go to stderr.

use clap::Args;
use std::path::PathBuf;

use super::report::fail;
use super::text::clean;
use crate::live::{self, CaptureEvent, WatchEvent, WatchOptions};
use serde::Serialize;
use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant, UNIX_EPOCH};

pub const WATCH_AFTER: &str = "\
Examples:
  tracetui watch logs/                  tab-separated: event, run, host, path, bytes
  tracetui watch logs/ --json | jq -c 'select(.event == \"ready\")'

A capture is announced `ready` (new) or `changed` (rewritten) only once it is complete: closed after
its last write, renamed into place, or unchanged for the settle window (1 s); `writing` means it is
still being written. Uses inotify; where that fails (limits reached), polls every 500 ms.";

/// Arguments of `watch`.
#[derive(Args, Debug)]
pub struct WatchArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON lines (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Poll the file system instead of using inotify
    #[arg(long)]
    pub poll: bool,
    /// A file not closed after writing is complete once unchanged this long (ms)
    #[arg(long, value_name = "MS", default_value_t = 1000, hide = true)]
    pub settle_ms: u64,
    /// Exit after printing N events (tests)
    #[arg(long, value_name = "N", hide = true)]
    pub exit_after: Option<usize>,
    /// Exit after SECS seconds (tests)
    #[arg(long, value_name = "SECS", hide = true)]
    pub timeout: Option<f64>,
}

/// One JSON line of `watch --json` (shape documented in docs/cli.md).
#[derive(Serialize)]
struct Line<'a> {
    event: &'static str,
    run: &'a str,
    host: &'a str,
    path: String,
    format: &'static str,
    bytes: u64,
    mtime_ns: u64,
}

/// The text line: `<event> <run> <host> <path> <bytes>` separated by tabs, sanitized.
fn text_line(e: &CaptureEvent) -> String {
    let c = &e.capture;
    format!(
        "{}\t{}\t{}\t{}\t{}\n",
        e.kind.name(),
        clean(&c.run),
        clean(&c.host),
        clean(&c.path.display().to_string()),
        c.bytes
    )
}

fn json_line(e: &CaptureEvent) -> String {
    let c = &e.capture;
    let line = Line {
        event: e.kind.name(),
        run: &c.run,
        host: &c.host,
        path: c.path.display().to_string(),
        format: c.format.name(),
        bytes: c.bytes,
        mtime_ns: c
            .mtime
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    };
    serde_json::to_string(&line).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}")) + "\n"
}

/// Runs `watch`; returns the exit code (0 when stopped by `--exit-after` / `--timeout` or a
/// closed pipe, 1 when the path cannot be watched).
pub fn cmd_watch(a: &WatchArgs) -> i32 {
    let opts = WatchOptions {
        force_poll: a.poll,
        settle: Duration::from_millis(a.settle_ms),
        ..WatchOptions::default()
    };
    let (tx, rx) = mpsc::channel::<WatchEvent>();
    let (watcher, cat) = match live::start(&a.path, &opts, move |e| tx.send(e).is_ok()) {
        Ok(w) => w,
        Err(e) => return fail(&clean(&e.to_string())),
    };
    eprintln!(
        "tracetui: watching {} ({}, {} captures)",
        clean(&a.path.display().to_string()),
        watcher.backend().name(),
        cat.capture_count()
    );
    let deadline = a
        .timeout
        .map(|s| Instant::now() + Duration::from_secs_f64(s.max(0.0)));
    let mut printed = 0usize;
    let mut out = std::io::stdout().lock();
    loop {
        if a.exit_after.is_some_and(|n| printed >= n) {
            return 0;
        }
        let msg = match deadline {
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return 0;
                }
                match rx.recv_timeout(left) {
                    Ok(m) => m,
                    Err(mpsc::RecvTimeoutError::Timeout) => return 0,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return 1,
                }
            }
            None => match rx.recv() {
                Ok(m) => m,
                Err(_) => return 1,
            },
        };
        match msg {
            WatchEvent::Notice(n) => eprintln!("tracetui: notice: {}", clean(&n)),
            WatchEvent::Capture(e) => {
                let s = if a.json { json_line(&e) } else { text_line(&e) };
                match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
                    Ok(()) => printed += 1,
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return 0,
                    Err(e) => return fail(&format!("cannot write output: {e}")),
                }
            }
        }
    }
}
