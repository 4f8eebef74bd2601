//! File formats: each loader streams one capture file into a [`CaptureBuilder`](crate::model::CaptureBuilder).

pub mod chrome;
pub mod mapped;
pub mod xplane;

use crate::model::{Capture, Format, SourceInfo};
use std::fmt;
use std::path::{Path, PathBuf};
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
}

impl Progress {
    /// Records progress.
    #[inline]
    pub fn update(&self, bytes_done: u64, events: u64) {
        self.bytes_done.store(bytes_done, Ordering::Relaxed);
        self.events.store(events, Ordering::Relaxed);
    }

    /// True once cancellation was requested.
    #[inline]
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// Threads a loader uses: the environment variable `var` when set (benchmark A/B; at least 1),
/// else the available parallelism (at most 8).
pub fn threads_from_env(var: &str) -> usize {
    if let Some(n) = std::env::var(var)
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        return n.clamp(1, 64);
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

/// Why a capture could not be loaded at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The file.
    pub path: PathBuf,
    /// Byte offset of the problem, when known.
    pub offset: Option<u64>,
    /// What went wrong / what was expected.
    pub message: String,
}

impl LoadError {
    /// A new error for `path`.
    pub fn new(path: &Path, offset: Option<u64>, message: impl Into<String>) -> Self {
        LoadError {
            path: path.to_path_buf(),
            offset,
            message: message.into(),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{}: at byte {o}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for LoadError {}

/// True when `bytes` start with the gzip magic number.
#[inline]
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Guesses the format of a file from its name (and for generic JSON, its content).
pub fn format_of(path: &Path) -> Option<Format> {
    let name = path.file_name()?.to_str()?;
    if name.ends_with(".xplane.pb") || name.ends_with(".xplane.pb.gz") {
        Some(Format::XPlane)
    } else if name.ends_with(".pt.trace.json") || name.ends_with(".pt.trace.json.gz") {
        Some(Format::Kineto)
    } else if name.ends_with(".trace.json.gz") || name == "perfetto_trace.json.gz" {
        Some(Format::XProfJson)
    } else if name.ends_with(".json") || name.ends_with(".json.gz") {
        Some(Format::Chrome)
    } else {
        None
    }
}

/// Loads one capture file, choosing the loader by file name.
pub fn load(path: &Path, source: SourceInfo, progress: &Progress) -> Result<Capture, LoadError> {
    match format_of(path) {
        Some(Format::XPlane) => xplane::load(path, source, progress),
        Some(_) => chrome::load(path, source, progress),
        None => Err(LoadError::new(
            path,
            None,
            "not a known trace file (expected .xplane.pb or Chrome trace .json[.gz])",
        )),
    }
}
