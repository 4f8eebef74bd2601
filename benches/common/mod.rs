//! Measurement helpers shared by the bench binaries (each includes this with `mod common;`).
#![allow(dead_code)] // each bench binary uses its own subset

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// `RssAnon` of this process in bytes (heap and other anonymous pages; mapped files excluded).
pub fn rss_anon() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// CPU time (user + system) of this process and all its threads so far, s: on a loaded
/// machine it says what the work cost when wall time says how long it waited.
pub fn process_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Samples `RssAnon` on a thread every `every` until `finish`; returns the high-water mark.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    /// Starts sampling now.
    pub fn start(every: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(rss_anon()));
        let (s, p) = (stop.clone(), peak.clone());
        let handle = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                p.fetch_max(rss_anon(), Ordering::Relaxed);
                std::thread::sleep(every);
            }
        });
        Sampler {
            stop,
            peak,
            handle: Some(handle),
        }
    }

    /// Stops sampling; the peak `RssAnon` in bytes seen since `start`.
    pub fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.peak.fetch_max(rss_anon(), Ordering::Relaxed);
        self.peak.load(Ordering::Relaxed)
    }
}

/// The value of environment variable `name` parsed as `T`, else `default` (bench sizes and run
/// counts: `TRACETUI_BENCH_EVENTS`, `TRACETUI_BENCH_RUNS`).
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
