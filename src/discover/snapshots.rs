//! torch CUDA allocator snapshots (`torch.cuda.memory._dump_snapshot`, `*.pickle`) and pprof
//! device memory profiles (`jax.profiler.save_device_memory_profile`, `*.prof`): recognised by
//! name and content so `memory` (and the explorer) can open them beside the traces.

use std::io::Read;
use std::path::{Path, PathBuf};

/// True for a file named `*.pickle` / `*.pkl` whose first bytes are a pickle of protocol 2–5, or
/// a pprof memory profile (`*.prof`, `*.pprof`, `*.pb.gz` that decodes as one:
/// `jax.profiler.save_device_memory_profile`).
pub fn is_snapshot_file(path: &Path) -> bool {
    is_pickle_file(path) || crate::formats::pprof::is_pprof_file(path)
}

fn is_pickle_file(path: &Path) -> bool {
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
