//! File formats: each loader streams one capture file into a [`CaptureBuilder`](crate::model::CaptureBuilder).

pub mod budget;
pub mod cache;
pub mod chrome;
pub mod folded;
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
    /// Keep at most this many events (0 = no cap); loaders report what they left out in a
    /// `capped` warning. Set by [`load_capped`] from `--max-events` and the memory budget.
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

/// What kind of failure a [`LoadError`] is; match on this, never on the message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoadErrorKind {
    /// The file could not be opened, read, stat-ed or mapped (permissions, I/O error).
    Io,
    /// The file is not a trace of a known format (empty, wrong magic, no events at all).
    NotATrace,
    /// The file ends before the first complete unit (event, XPlane) could be read.
    Truncated,
    /// The bytes do not follow the format at `offset`; the message says what was expected.
    Corrupt,
    /// A known format or variant tracetui does not read (e.g. riegeli).
    Unsupported,
    /// The user cancelled the load.
    Cancelled,
    /// The file changed (truncated, rewritten, deleted) while it was being loaded.
    Changed,
    /// Loading would need more memory than the machine has (see `--max-events`).
    TooLarge,
    /// A bug in tracetui (a loader panicked); the message asks for a report.
    Internal,
}

impl LoadErrorKind {
    /// Stable machine-readable name (`io`, `not_a_trace`, `truncated`, `corrupt`, ...), used in
    /// `--json` output.
    pub fn name(self) -> &'static str {
        match self {
            LoadErrorKind::Io => "io",
            LoadErrorKind::NotATrace => "not_a_trace",
            LoadErrorKind::Truncated => "truncated",
            LoadErrorKind::Corrupt => "corrupt",
            LoadErrorKind::Unsupported => "unsupported",
            LoadErrorKind::Cancelled => "cancelled",
            LoadErrorKind::Changed => "changed",
            LoadErrorKind::TooLarge => "too_large",
            LoadErrorKind::Internal => "internal",
        }
    }
}

/// Why a capture could not be loaded at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// What kind of failure this is.
    pub kind: LoadErrorKind,
    /// The file.
    pub path: PathBuf,
    /// Byte offset of the problem, when known (always set for [`LoadErrorKind::Corrupt`]).
    pub offset: Option<u64>,
    /// What went wrong / what was expected.
    pub message: String,
}

impl LoadError {
    /// A new error of `kind` for `path`.
    pub fn new(
        kind: LoadErrorKind,
        path: &Path,
        offset: Option<u64>,
        message: impl Into<String>,
    ) -> Self {
        LoadError {
            kind,
            path: path.to_path_buf(),
            offset,
            message: message.into(),
        }
    }

    /// An I/O failure: `what` (e.g. "cannot open") and the OS error.
    pub fn io(path: &Path, what: &str, e: &std::io::Error) -> Self {
        Self::new(LoadErrorKind::Io, path, None, format!("{what}: {e}"))
    }

    /// The bytes at `offset` are not what the format expects.
    pub fn corrupt(path: &Path, offset: u64, message: impl Into<String>) -> Self {
        Self::new(LoadErrorKind::Corrupt, path, Some(offset), message)
    }

    /// The load was cancelled by the user.
    pub fn cancelled(path: &Path) -> Self {
        Self::new(LoadErrorKind::Cancelled, path, None, CANCELLED)
    }

    /// True when the user cancelled the load.
    pub fn is_cancelled(&self) -> bool {
        self.kind == LoadErrorKind::Cancelled
    }
}

/// The message of every [`LoadErrorKind::Cancelled`] error.
pub const CANCELLED: &str = "loading cancelled";

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{}: at byte {o}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for LoadError {}

/// `part` as a percentage of `total` with one decimal (`"12.5%"`; `"100%"` when `total` is 0).
pub fn percent(part: u64, total: u64) -> String {
    if total == 0 || part >= total {
        return "100%".into();
    }
    format!("{:.1}%", part as f64 * 100.0 / total as f64)
}

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
    } else if folded::is_folded_name(name) {
        Some(Format::Folded)
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

/// A loader of one file format.
pub type LoadFn = fn(&Path, SourceInfo, &Progress) -> Result<Capture, LoadError>;

/// Runs `load` under the memory budget: when `--max-events` is set or the estimated peak memory
/// of the file exceeds what the machine has available ([`budget`]), the loader keeps at most that
/// many events and its `capped` warning says why.
pub fn load_capped(
    path: &Path,
    source: SourceInfo,
    progress: &Progress,
    xplane: bool,
    load: LoadFn,
) -> Result<Capture, LoadError> {
    let bytes = match source.file_bytes {
        0 => std::fs::metadata(path).map_or(0, |m| m.len()),
        n => n,
    };
    let cap = budget::cap_for_file(path, bytes, xplane);
    if let Some(c) = &cap {
        let n = progress
            .max_events()
            .map_or(c.max_events, |m| m.min(c.max_events));
        progress.max_events.store(n, Ordering::Relaxed);
    }
    let mut r = load(path, source, progress);
    if let (Ok(c), Some(cap)) = (&mut r, &cap)
        && let Some(w) = c.warnings.iter_mut().find(|w| w.kind == "capped")
    {
        w.message = format!("{} ({})", w.message, cap.reason);
    }
    r
}

/// Loads one capture file, choosing the loader by file name (under the memory budget, see
/// [`load_capped`]).
pub fn load(path: &Path, source: SourceInfo, progress: &Progress) -> Result<Capture, LoadError> {
    match format_of(path) {
        Some(Format::XPlane) => load_capped(path, source, progress, true, xplane::load),
        Some(Format::Folded) => folded::load(path, source, progress),
        Some(_) => {
            // The cache holds whole captures only: not when this load would be capped
            // (`--max-events`, or too little memory for the whole file).
            let bytes = match source.file_bytes {
                0 => std::fs::metadata(path).map_or(0, |m| m.len()),
                n => n,
            };
            let uncapped = progress.max_events().is_none()
                && budget::cap_for_file(path, bytes, false).is_none();
            if uncapped && let Some(c) = cache::lookup(path, &source) {
                progress.update(c.source.file_bytes, c.event_count());
                return Ok(c);
            }
            load_capped(path, source, progress, false, chrome::load)
        }
        None => Err(LoadError::new(
            LoadErrorKind::NotATrace,
            path,
            None,
            "not a known trace file (expected .xplane.pb or Chrome trace .json[.gz])",
        )),
    }
}
