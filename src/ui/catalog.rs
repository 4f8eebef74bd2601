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
            format: formats::format_of(path),
            modified: meta.and_then(|m| m.modified().ok()),
        }
    }
}

/// Finds the captures below `path` (a file gives itself), newest first. An XProf host with both
/// `host.xplane.pb` and `host.trace.json.gz` in one directory is offered once, as XPlane.
pub fn scan(path: &Path) -> std::io::Result<Vec<CaptureRef>> {
    let meta = std::fs::metadata(path)?;
    if meta.is_file() {
        let root = path.parent().unwrap_or(Path::new("."));
        return Ok(vec![CaptureRef::from_file(path, root)]);
    }
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![(path.to_path_buf(), 0u32)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() && depth < 12 {
                stack.push((p, depth + 1));
            } else if ft.is_file() && formats::format_of(&p).is_some() {
                files.push(p);
            }
        }
    }
    files.sort();
    let has_xplane = |p: &Path| -> bool {
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
            return false;
        };
        let Some(host) = name.strip_suffix(".trace.json.gz") else {
            return false;
        };
        let dir = p.parent().unwrap_or(Path::new("."));
        dir.join(format!("{host}.xplane.pb")).exists()
            || dir.join(format!("{host}.xplane.pb.gz")).exists()
    };
    let mut out: Vec<CaptureRef> = files
        .iter()
        .filter(|p| !has_xplane(p))
        .map(|p| CaptureRef::from_file(p, path))
        .collect();
    out.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.source.path.cmp(&b.source.path))
    });
    Ok(out)
}
