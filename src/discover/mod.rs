//! Log-dir discovery: finds every capture below a path and names runs and hosts the way
//! XProf and torch-tb-profiler do.
//!
//! Rules (design: formats.md §3):
//! - every `**/plugins/profile/<session>/` dir is an XProf run named `<session>` (plugins dir at
//!   the root) or `<relative/path>/<session>`; `<host>.xplane.pb[.gz]`, `<host>.trace.json.gz` and
//!   `perfetto_trace.json.gz` are captures of that run, and the JSON exports of a host that also
//!   has an XPlane are listed as that capture's `alternates` instead of being loaded twice;
//! - any other directory holding `<worker>[.<span>].pt.trace.json[.gz]` files is a PyTorch run;
//! - other `*.json[.gz]` files whose first bytes look like a Chrome trace form a run of their dir;
//! - `*.tmp`, hidden entries and files of other types are skipped; `.xplane.riegeli` is reported as
//!   unsupported; unreadable entries are reported as problems, never fatal.

mod names;
mod snapshots;
mod sniff;
pub mod taken;
mod walk;

pub use names::{NameKind, classify, kineto_name};
pub use snapshots::{is_snapshot_file, snapshot_files};
pub use sniff::{classify_head, sniff};

use crate::formats::{self, LoadError, Progress};
use crate::model::{Capture, Format, SourceInfo};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What wrote a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunKind {
    /// An XProf / TensorBoard profile session (`plugins/profile/<session>`).
    XProf,
    /// A PyTorch `tensorboard_trace_handler` directory (`*.pt.trace.json[.gz]`).
    PyTorch,
    /// Other Chrome trace files, or a file opened directly.
    Other,
}

impl RunKind {
    /// Short lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            RunKind::XProf => "xprof",
            RunKind::PyTorch => "pytorch",
            RunKind::Other => "other",
        }
    }
}

/// One capture file found by discovery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureFile {
    /// The file to load.
    pub path: PathBuf,
    /// Name of its run (stable across reloads).
    pub run: String,
    /// Host (XProf) or worker (PyTorch) name; the file stem for other JSON.
    pub host: String,
    /// Format expected from the name and first bytes.
    pub format: Format,
    /// PyTorch span timestamp (`<worker>.<span>.pt.trace.json`).
    pub span: Option<u64>,
    /// Other files holding the same capture (XProf JSON exports), not loaded.
    pub alternates: Vec<PathBuf>,
    /// File size.
    pub bytes: u64,
    /// Modification time.
    pub mtime: SystemTime,
}

impl CaptureFile {
    /// The file name as text.
    pub fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// A key that stays the same across reloads: `<run>/<file name>`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.run, self.file_name())
    }

    /// The [`SourceInfo`] a loader needs.
    pub fn source_info(&self) -> SourceInfo {
        SourceInfo {
            path: self.path.clone(),
            run: self.run.clone(),
            host: self.host.clone(),
            file_bytes: self.bytes,
        }
    }

    /// Loads the capture with the loader its format needs.
    pub fn load(&self, progress: &Progress) -> Result<Capture, LoadError> {
        self.load_file(&self.path, self.format, progress)
    }

    /// Loads the capture; when the preferred file fails and alternates exist (an XPlane with its
    /// JSON exports), loads the first alternate that works instead and says so in a
    /// `fallback_alternate` warning. The error of the preferred file is returned when all fail.
    pub fn load_or_alternate(&self, progress: &Progress) -> Result<Capture, LoadError> {
        let err = match self.load(progress) {
            Ok(c) => return Ok(c),
            Err(e) => e,
        };
        for alt in &self.alternates {
            if let Ok(mut c) = self.load_file(alt, Format::XProfJson, progress) {
                c.warnings.push(crate::model::Warning {
                    kind: "fallback_alternate",
                    count: 1,
                    message: format!(
                        "{err}; loaded {} instead (same capture, may be truncated to 1M events)",
                        alt.display()
                    ),
                });
                return Ok(c);
            }
        }
        Err(err)
    }

    fn load_file(
        &self,
        path: &Path,
        format: Format,
        progress: &Progress,
    ) -> Result<Capture, LoadError> {
        let mut source = self.source_info();
        source.path = path.to_path_buf();
        if let Ok(m) = std::fs::metadata(path) {
            source.file_bytes = m.len();
        }
        match format {
            Format::XPlane => {
                formats::load_capped(path, source, progress, true, formats::xplane::load)
            }
            Format::Snapshot => formats::snapshot::open(path, source).map(|(c, _)| c),
            _ if formats::format_of(path).is_some() => formats::load(path, source, progress),
            // A sniffed Chrome trace with an unusual extension.
            _ => formats::load_capped(path, source, progress, false, formats::chrome::load),
        }
    }
}

/// One run: a directory of captures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// Display name as XProf / torch-tb-profiler show it.
    pub name: String,
    /// Its directory.
    pub dir: PathBuf,
    /// What wrote it.
    pub kind: RunKind,
    /// Its captures, sorted by host, span, file name.
    pub captures: Vec<CaptureFile>,
    /// Newest modification time of its captures.
    pub newest_mtime: SystemTime,
}

/// Everything found below a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Catalog {
    /// The path discovery started from.
    pub root: PathBuf,
    /// Runs, newest first (ties by name).
    pub runs: Vec<Run>,
    /// Entries that could not be read or are not supported: (path, why).
    pub problems: Vec<(PathBuf, String)>,
}

impl Catalog {
    /// All captures, run by run.
    pub fn captures(&self) -> impl Iterator<Item = &CaptureFile> {
        self.runs.iter().flat_map(|r| r.captures.iter())
    }

    /// Number of captures.
    pub fn capture_count(&self) -> usize {
        self.runs.iter().map(|r| r.captures.len()).sum()
    }

    /// True when no capture was found.
    pub fn is_empty(&self) -> bool {
        self.capture_count() == 0
    }
}

/// Why discovery could not start.
#[derive(Debug)]
pub enum DiscoverError {
    /// The path does not exist.
    NotFound(PathBuf),
    /// The path exists but cannot be read.
    Unreadable(PathBuf, std::io::Error),
}

impl fmt::Display for DiscoverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiscoverError::NotFound(p) => write!(f, "{}: no such file or directory", p.display()),
            DiscoverError::Unreadable(p, e) => write!(f, "{}: cannot read: {e}", p.display()),
        }
    }
}

impl std::error::Error for DiscoverError {}

/// Finds every capture in a file or below a directory. An empty catalog (no captures) is not an
/// error; callers decide.
pub fn discover(path: &Path) -> Result<Catalog, DiscoverError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(DiscoverError::NotFound(path.to_path_buf()));
        }
        Err(e) => return Err(DiscoverError::Unreadable(path.to_path_buf(), e)),
    };
    if meta.is_dir() {
        walk::discover_dir(path)
    } else {
        Ok(walk::discover_file(path, &meta))
    }
}
