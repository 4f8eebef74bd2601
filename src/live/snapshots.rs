//! Allocator snapshots in a watched log dir: the `*.pickle` files discovery finds
//! ([`crate::discover::snapshot_files`]) added to the watcher's catalog as captures, so a snapshot
//! dropped into the dir is announced (and offered in the picker) like a new trace.

use crate::discover::{CaptureFile, Catalog, Run, RunKind, snapshot_files};
use std::path::Path;

/// Adds the snapshot files below the catalog's root (or the root itself) as captures of format
/// `Snapshot` — in the run of their directory (named like the picker names them: the path
/// relative to the root, else the root's name), host the file name's first part — and drops
/// the "not a recognized trace file" problem discovery reports for them. Idempotent: files
/// already in the catalog are not added twice. The live watcher uses it, so a snapshot dropped
/// into a watched log dir appears like a new trace.
pub(super) fn add_snapshots(cat: &mut Catalog) {
    let files = snapshot_files(&cat.root);
    if files.is_empty() {
        return;
    }
    cat.problems.retain(|(p, _)| !files.contains(p));
    let root = if cat.root.is_file() {
        cat.root
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf()
    } else {
        cat.root.clone()
    };
    let root_name = std::fs::canonicalize(&root)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| ".".into());
    for path in files {
        if cat.captures().any(|c| c.path == path) {
            continue;
        }
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let run = dir
            .strip_prefix(&root)
            .ok()
            .map(|p| p.display().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| root_name.clone());
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let host = name.split('.').next().unwrap_or(&name).to_string();
        let mtime = meta.modified().unwrap_or(std::time::SystemTime::UNIX_EPOCH);
        let cap = CaptureFile {
            path,
            run: run.clone(),
            host,
            format: crate::model::Format::Snapshot,
            span: None,
            alternates: Vec::new(),
            bytes: meta.len(),
            mtime,
        };
        match cat.runs.iter_mut().find(|r| r.dir == dir || r.name == run) {
            Some(r) => {
                r.newest_mtime = r.newest_mtime.max(mtime);
                r.captures.push(cap);
            }
            None => cat.runs.push(Run {
                name: run,
                dir,
                kind: RunKind::Other,
                captures: vec![cap],
                newest_mtime: mtime,
            }),
        }
    }
}
