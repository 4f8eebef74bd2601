//! Why a capture could not be loaded: [`LoadError`] (kind, file, byte offset, message).

use std::fmt;
use std::path::{Path, PathBuf};

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
