//! The list of captures the explorer offers: from discovery (a log dir with runs/hosts/workers,
//! newest first), or a single file.

use crate::formats;
use crate::model::{Format, SourceInfo};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One capture the user can open.
#[derive(Clone, Debug)]
pub struct CaptureRef {
    /// Path, run, host and size.
    pub source: SourceInfo,
    /// Format guessed from the file name.
    pub format: Option<Format>,
    /// Modification time of the file.
    pub modified: Option<SystemTime>,
    /// PyTorch span timestamp (`<worker>.<span>.pt.trace.json`): tells apart the captures of
    /// one worker.
    pub span: Option<u64>,
}

impl CaptureRef {
    /// A reference to one file, named after its parent directory and file stem.
    pub fn from_file(path: &Path, root: &Path) -> CaptureRef {
        let meta = std::fs::metadata(path).ok();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let host = name.split('.').next().unwrap_or(name).to_string();
        let run = path
            .parent()
            .and_then(|p| p.strip_prefix(root).ok())
            .map(|p| p.display().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| {
                root.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| ".".into())
            });
        CaptureRef {
            source: SourceInfo {
                path: path.to_path_buf(),
                run,
                host,
                file_bytes: meta.as_ref().map_or(0, |m| m.len()),
            },
            format: formats::format_of(path)
                .or_else(|| crate::discover::is_snapshot_file(path).then_some(Format::Snapshot)),
            modified: meta.and_then(|m| m.modified().ok()),
            span: None,
        }
    }
}

/// Finds the captures below `path` with discovery (runs newest first; a file gives itself). An
/// XProf host with both an XPlane and a JSON export is offered once, as XPlane.
pub fn scan(path: &Path) -> std::io::Result<Vec<CaptureRef>> {
    Ok(scan_all(path)?.0)
}

/// Entries discovery skipped: (path, why).
pub type Problems = Vec<(PathBuf, String)>;

/// Like [`scan`], plus the entries discovery skipped: (path, why) — unreadable files,
/// unsupported `.xplane.riegeli` — for the picker to show. Allocator snapshots (`*.pickle`) below
/// `path` (or `path` itself) are offered after the traces, in the run of their directory.
pub fn scan_all(path: &Path) -> std::io::Result<(Vec<CaptureRef>, Problems)> {
    let snapshots = crate::discover::snapshot_files(path);
    let mut cat = match crate::discover::discover(path) {
        Ok(c) => c,
        Err(_) if !snapshots.is_empty() => crate::discover::Catalog {
            root: path.to_path_buf(),
            runs: Vec::new(),
            problems: Vec::new(),
        },
        Err(e) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                e.to_string(),
            ));
        }
    };
    let mut caps: Vec<CaptureRef> = cat
        .captures()
        .map(|c| CaptureRef {
            source: c.source_info(),
            format: Some(c.format),
            modified: Some(c.mtime),
            span: c.span,
        })
        .collect();
    add_snapshots(path, snapshots, &mut caps, &mut cat.problems);
    Ok((caps, cat.problems))
}

/// Appends the allocator snapshots below `path` (or `path` itself) to `caps`, in the run of
/// their directory (`snapshots`: [`crate::discover::snapshot_files`] of `path`), and
/// drops the "not a recognized trace file" problem discovery reports for them.
pub fn add_snapshots(
    path: &Path,
    snapshots: Vec<PathBuf>,
    caps: &mut Vec<CaptureRef>,
    problems: &mut Problems,
) {
    problems.retain(|(p, _)| !snapshots.contains(p));
    let root = if path.is_file() {
        path.parent().unwrap_or(Path::new("."))
    } else {
        path
    };
    caps.extend(snapshots.iter().map(|p| CaptureRef::from_file(p, root)));
}

/// Loads a capture with the loader its format needs (sniffed JSON with odd names included).
pub fn load(
    c: &CaptureRef,
    progress: &formats::Progress,
) -> Result<crate::model::Capture, formats::LoadError> {
    let src = c.source.clone();
    match c.format {
        Some(Format::XPlane) => formats::xplane::load(&c.source.path, src, progress),
        Some(Format::Snapshot) => formats::snapshot::open(&c.source.path, src).map(|(c, _)| c),
        _ if formats::format_of(&c.source.path).is_some() => {
            formats::load(&c.source.path, src, progress)
        }
        _ => formats::chrome::load(&c.source.path, src, progress),
    }
}
