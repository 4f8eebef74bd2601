//! Live watching: latency from a rename into the watched dir to the capture's `ready` event
//! (inotify and the polling fallback), and the watcher thread's CPU while nothing changes.
//!
//! Kineto writes `<file>.tmp` and renames it; the bench does the same with a 58 KB fixture,
//! `TRACETUI_BENCH_FILES` (default 20) files 300 ms apart, then idles `TRACETUI_BENCH_IDLE_S`
//! (default 10) seconds and reads this process's CPU time from `/proc/self/stat` (Linux).
//! Run: `cargo bench --bench live`.

use std::fs;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tracetui::live::{self, EventKind, WatchEvent, WatchOptions};

const FIXTURE: &str = "tests/fixtures/chrome/worker0.torch-cpu-cnn.pt.trace.json.gz";

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// utime + stime of this process in clock ticks (0 where /proc is unavailable).
fn cpu_ticks() -> u64 {
    let Ok(s) = fs::read_to_string("/proc/self/stat") else {
        return 0;
    };
    // Fields after the `(comm)`: state is field 3, utime 14, stime 15.
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let get = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    get(11) + get(12)
}

fn run(poll: bool, files: u64, idle_s: u64) {
    let data = match fs::read(FIXTURE) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{FIXTURE}: {e}");
            return;
        }
    };
    let Ok(dir) = tempfile::tempdir() else {
        eprintln!("no temp dir");
        return;
    };
    let (tx, rx) = mpsc::channel();
    let opts = WatchOptions {
        force_poll: poll,
        ..WatchOptions::default()
    };
    let (w, _) = match live::start(dir.path(), &opts, move |e| tx.send(e).is_ok()) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("cannot watch: {e}");
            return;
        }
    };
    let mut lat = Vec::new();
    for i in 0..files {
        let name = format!("w.{i}.pt.trace.json.gz");
        let tmp = dir.path().join(format!("{name}.tmp"));
        if fs::write(&tmp, &data).is_err() {
            continue;
        }
        let t = Instant::now();
        if fs::rename(&tmp, dir.path().join(&name)).is_err() {
            continue;
        }
        let end = t + Duration::from_secs(5);
        loop {
            match rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
                Ok(WatchEvent::Capture(e))
                    if e.kind == EventKind::Ready && e.capture.file_name() == name =>
                {
                    lat.push(t.elapsed().as_secs_f64() * 1e3);
                    break;
                }
                Ok(_) => {}
                Err(_) => {
                    eprintln!("{name}: no ready event within 5 s");
                    break;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    lat.sort_by(f64::total_cmp);
    let pick = |q: f64| {
        lat.get(((lat.len() as f64 - 1.0) * q).round() as usize)
            .copied()
    };
    println!(
        "{:<8} rename → ready, {} files: min {:.1} ms, median {:.1} ms, p90 {:.1} ms, max {:.1} ms",
        w.backend().name(),
        lat.len(),
        pick(0.0).unwrap_or(f64::NAN),
        pick(0.5).unwrap_or(f64::NAN),
        pick(0.9).unwrap_or(f64::NAN),
        pick(1.0).unwrap_or(f64::NAN),
    );
    // Let the last events drain, then measure a quiet period.
    std::thread::sleep(Duration::from_millis(1500));
    let c0 = cpu_ticks();
    std::thread::sleep(Duration::from_secs(idle_s));
    let c1 = cpu_ticks();
    println!(
        "{:<8} idle {idle_s} s with {} captures watched: {} CPU ticks (1 tick = 10 ms)",
        w.backend().name(),
        lat.len(),
        c1.saturating_sub(c0)
    );
}

fn main() {
    let files = env("TRACETUI_BENCH_FILES", 20);
    let idle_s = env("TRACETUI_BENCH_IDLE_S", 10);
    run(false, files, idle_s);
    run(true, files, idle_s);
}
