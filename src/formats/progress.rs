//! How far a load is: the atomics a loader thread updates and the UI reads, and the cancel flag.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Load progress shared between a loader thread and the UI. Loaders update it at most every few
/// thousand events; the UI reads it when it redraws.
#[derive(Debug, Default)]
pub struct Progress {
    /// Bytes of input consumed (uncompressed bytes for `.gz`).
    pub bytes_done: AtomicU64,
    /// Total bytes when known (file size; 0 = unknown).
    pub bytes_total: AtomicU64,
    /// Events parsed so far.
    pub events: AtomicU64,
    /// Set by the UI to ask the loader to stop early.
    pub cancel: AtomicBool,
    /// Keep at most this many events (0 = no cap); loaders report what they left out in a
    /// `capped` warning. Set by [`load_capped`](super::open::load_capped) from `--max-events` and the memory budget.
    pub max_events: AtomicU64,
}

impl Progress {
    /// Records progress.
    #[inline]
    pub fn update(&self, bytes_done: u64, events: u64) {
        self.bytes_done.store(bytes_done, Ordering::Relaxed);
        self.events.store(events, Ordering::Relaxed);
    }

    /// The event cap, if any.
    #[inline]
    pub fn max_events(&self) -> Option<u64> {
        match self.max_events.load(Ordering::Relaxed) {
            0 => None,
            n => Some(n),
        }
    }

    /// True once cancellation was requested.
    #[inline]
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}
/// `part` as a percentage of `total` with one decimal (`"12.5%"`; `"100%"` when `total` is 0).
pub fn percent(part: u64, total: u64) -> String {
    if total == 0 || part >= total {
        return "100%".into();
    }
    format!("{:.1}%", part as f64 * 100.0 / total as f64)
}
