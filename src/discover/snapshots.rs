//! torch CUDA allocator snapshots (`torch.cuda.memory._dump_snapshot`, `*.pickle`): recognised
//! by name and first bytes so `memory` (and the explorer) can open them beside the traces.

use std::io::Read;
use std::path::{Path, PathBuf};

/// True for a file named `*.pickle` / `*.pkl` whose first bytes are a pickle of protocol 2–5.
pub fn is_snapshot_file(path: &Path) -> bool {
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| !n.starts_with('.') && (n.ends_with(".pickle") || n.ends_with(".pkl")));
    if !named || !path.is_file() {
        return false;
    }
    let mut head = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| crate::formats::snapshot::is_pickle(&head))
}

/// Snapshot files below `dir` (hidden entries skipped), sorted by path; `dir` itself when it is
/// one.
pub fn snapshot_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if dir.is_file() {
        if is_snapshot_file(dir) {
            out.push(dir.to_path_buf());
        }
        return out;
    }
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let hidden = e.file_name().to_str().is_none_or(|n| n.starts_with('.'));
            if hidden {
                continue;
            }
            match e.file_type() {
                Ok(t) if t.is_dir() => todo.push(p),
                Ok(t) if t.is_file() && is_snapshot_file(&p) => out.push(p),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

/// Adds the snapshot files below the catalog's root (or the root itself) as captures of format
/// `Snapshot` — in the run of their directory (named like the picker names them: the path
/// relative to the root, else the root's name), host the file name's first part — and drops
/// the "not a recognized trace file" problem discovery reports for them. Idempotent: files
/// already in the catalog are not added twice. The live watcher uses it, so a snapshot dropped
/// into a watched log dir appears like a new trace.
pub fn add_snapshots(cat: &mut super::Catalog) {
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
        let cap = super::CaptureFile {
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
            None => cat.runs.push(super::Run {
                name: run,
                dir,
                kind: super::RunKind::Other,
                captures: vec![cap],
                newest_mtime: mtime,
            }),
        }
    }
}
