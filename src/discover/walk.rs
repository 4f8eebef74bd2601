//! The directory walk and the grouping of one directory's files into a run.

use super::names::{NameKind, classify};
use super::sniff::sniff;
use super::{CaptureFile, Catalog, DiscoverError, Run, RunKind};
use crate::model::Format;
use rustc_hash::FxHashSet;
use std::fs::{self, Metadata};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Directories deeper than this below the root are not searched (reported as a problem).
const MAX_DEPTH: usize = 64;

/// A file of one directory, with its metadata (symlinks followed).
struct Entry {
    name: String,
    path: PathBuf,
    bytes: u64,
    mtime: SystemTime,
}

/// Walks `root` depth-first; never follows a directory twice (symlink loops).
pub(super) fn discover_dir(root: &Path) -> Result<Catalog, DiscoverError> {
    let mut cat = Catalog {
        root: root.to_path_buf(),
        runs: Vec::new(),
        problems: Vec::new(),
    };
    let root_name = fs::canonicalize(root)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| ".".to_string());
    let mut visited: FxHashSet<PathBuf> = FxHashSet::default();
    let mut files_seen: FxHashSet<PathBuf> = FxHashSet::default();
    // (directory, path components relative to the root)
    let mut stack: Vec<(PathBuf, Vec<String>)> = vec![(root.to_path_buf(), Vec::new())];
    while let Some((dir, rel)) = stack.pop() {
        match fs::canonicalize(&dir) {
            Ok(c) => {
                if !visited.insert(c) {
                    continue;
                }
            }
            Err(e) => {
                cat.problems.push((dir, format!("cannot resolve: {e}")));
                continue;
            }
        }
        let rd = match fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if rel.is_empty() => return Err(DiscoverError::Unreadable(dir, e)),
            Err(e) => {
                cat.problems
                    .push((dir, format!("cannot list directory: {e}")));
                continue;
            }
        };
        let mut files = Vec::new();
        let mut subdirs = Vec::new();
        for ent in rd {
            let ent = match ent {
                Ok(e) => e,
                Err(e) => {
                    cat.problems
                        .push((dir.clone(), format!("cannot list directory entry: {e}")));
                    continue;
                }
            };
            let name = ent.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = ent.path();
            // Follows symlinks; a dangling one is reported only when its name looks like a capture.
            let meta = match fs::metadata(&path) {
                Ok(m) => m,
                Err(e) => {
                    if classify(&name) != NameKind::Ignored {
                        cat.problems.push((path, format!("cannot read: {e}")));
                    }
                    continue;
                }
            };
            if meta.is_dir() {
                subdirs.push(name);
            } else if meta.is_file() {
                if let Ok(c) = fs::canonicalize(&path)
                    && !files_seen.insert(c)
                {
                    continue;
                }
                files.push(entry(name, path, &meta));
            }
        }
        if let Some(run) = group_dir(&dir, &rel, &root_name, files, &mut cat.problems) {
            cat.runs.push(run);
        }
        subdirs.sort();
        for name in subdirs.into_iter().rev() {
            if rel.len() >= MAX_DEPTH {
                cat.problems.push((
                    dir.join(&name),
                    format!("more than {MAX_DEPTH} levels below the root: not searched"),
                ));
                continue;
            }
            let mut r = rel.clone();
            r.push(name.clone());
            stack.push((dir.join(name), r));
        }
    }
    sort_runs(&mut cat.runs);
    Ok(cat)
}

/// A single file given on the command line: always tried, named after its directory.
pub(super) fn discover_file(path: &Path, meta: &Metadata) -> Catalog {
    let mut cat = Catalog {
        root: path.to_path_buf(),
        runs: Vec::new(),
        problems: Vec::new(),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let run_name = match session_of(&dir) {
        Some(s) => s,
        None => fs::canonicalize(&dir)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| ".".into()),
    };
    let e = entry(name.clone(), path.to_path_buf(), meta);
    let kind = classify(&name);
    let (host, format, span) = match kind {
        NameKind::XPlane { host, .. } => (host, Format::XPlane, None),
        NameKind::XProfJson { host } => (host, Format::XProfJson, None),
        NameKind::Perfetto => ("perfetto_trace".into(), Format::XProfJson, None),
        NameKind::Kineto { worker, span } => (worker, Format::Kineto, span),
        NameKind::Folded { stem } => (stem, Format::Folded, None),
        NameKind::Riegeli => {
            cat.problems.push((path.to_path_buf(), riegeli_note()));
            return cat;
        }
        NameKind::MaybeJson { stem } => {
            let f = sniff(path).ok().flatten().unwrap_or(Format::Chrome);
            (stem, f, None)
        }
        NameKind::Ignored => match sniff(path) {
            Ok(Some(f)) => (name.clone(), f, None),
            Ok(None) if super::is_snapshot_file(path) => {
                cat.problems.push((
                    path.to_path_buf(),
                    "a memory file (torch allocator snapshot or pprof profile), not a trace: \
                     open it with `tracetui memory FILE` or the explorer"
                        .into(),
                ));
                return cat;
            }
            Ok(None) => {
                cat.problems.push((
                    path.to_path_buf(),
                    "not a recognized trace file (expected .xplane.pb[.gz], .pt.trace.json[.gz] \
                     or Chrome trace JSON)"
                        .into(),
                ));
                return cat;
            }
            Err(err) => {
                cat.problems
                    .push((path.to_path_buf(), format!("cannot read: {err}")));
                return cat;
            }
        },
    };
    let run_kind = match format {
        Format::XPlane | Format::XProfJson => RunKind::XProf,
        Format::Kineto => RunKind::PyTorch,
        Format::Chrome | Format::Folded | Format::Snapshot => RunKind::Other,
    };
    let cap = capture(&e, &run_name, host, format, span);
    cat.runs.push(Run {
        name: run_name,
        dir,
        kind: run_kind,
        newest_mtime: cap.mtime,
        captures: vec![cap],
    });
    cat
}

fn riegeli_note() -> String {
    "XPlane riegeli chunks (continuous profiling) are not supported: capture an .xplane.pb instead"
        .into()
}

fn entry(name: String, path: PathBuf, meta: &Metadata) -> Entry {
    Entry {
        name,
        path,
        bytes: meta.len(),
        mtime: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
    }
}

fn capture(e: &Entry, run: &str, host: String, format: Format, span: Option<u64>) -> CaptureFile {
    CaptureFile {
        path: e.path.clone(),
        run: run.to_string(),
        host,
        format,
        span,
        alternates: Vec::new(),
        bytes: e.bytes,
        mtime: e.mtime,
    }
}

/// `Some(session)` when `dir` is `…/plugins/profile/<session>`.
fn session_of(dir: &Path) -> Option<String> {
    let abs = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let session = abs.file_name()?.to_string_lossy().into_owned();
    let profile = abs.parent()?;
    let plugins = profile.parent()?;
    (profile.file_name()? == "profile" && plugins.file_name()? == "plugins").then_some(session)
}

/// The run name of a directory: XProf session naming, else the relative path (root: its name).
fn run_name(dir: &Path, rel: &[String], root_name: &str) -> (String, bool) {
    let n = rel.len();
    if n >= 3 && rel[n - 3] == "plugins" && rel[n - 2] == "profile" {
        let prefix = rel[..n - 3].join("/");
        let s = &rel[n - 1];
        return (
            if prefix.is_empty() {
                s.clone()
            } else {
                format!("{prefix}/{s}")
            },
            true,
        );
    }
    if n < 3
        && let Some(s) = session_of(dir)
    {
        // The root is (inside) a plugins/profile dir: the session name alone.
        return (s, true);
    }
    if rel.is_empty() {
        (root_name.to_string(), false)
    } else {
        (rel.join("/"), false)
    }
}

/// Turns the files of one directory into a run (or nothing when none is a capture).
fn group_dir(
    dir: &Path,
    rel: &[String],
    root_name: &str,
    mut files: Vec<Entry>,
    problems: &mut Vec<(PathBuf, String)>,
) -> Option<Run> {
    files.sort_by(|a, b| a.name.cmp(&b.name));
    let kinds: Vec<NameKind> = files.iter().map(|f| classify(&f.name)).collect();
    if kinds.iter().all(|k| *k == NameKind::Ignored) {
        return None;
    }
    let (name, is_session) = run_name(dir, rel, root_name);
    let mut caps: Vec<CaptureFile> = Vec::new();
    // XPlanes first: `.xplane.pb` preferred over `.xplane.pb.gz` of the same host.
    for gz_pass in [false, true] {
        for (f, k) in files.iter().zip(&kinds) {
            if let NameKind::XPlane { host, gz } = k
                && *gz == gz_pass
            {
                match caps.iter_mut().find(|c| c.host == *host) {
                    Some(c) => c.alternates.push(f.path.clone()),
                    None => caps.push(capture(f, &name, host.clone(), Format::XPlane, None)),
                }
            }
        }
    }
    for (f, k) in files.iter().zip(&kinds) {
        if let NameKind::XProfJson { host } = k {
            match caps
                .iter_mut()
                .find(|c| c.host == *host && c.format == Format::XPlane)
            {
                Some(c) => c.alternates.push(f.path.clone()),
                None => {
                    let fmt = if is_session {
                        Format::XProfJson
                    } else {
                        sniff(&f.path).ok().flatten().unwrap_or(Format::XProfJson)
                    };
                    caps.push(capture(f, &name, host.clone(), fmt, None));
                }
            }
        }
    }
    for (f, k) in files.iter().zip(&kinds) {
        if *k == NameKind::Perfetto {
            // The perfetto file is the export of the session's single host.
            if caps.len() == 1 {
                caps[0].alternates.push(f.path.clone());
            } else {
                caps.push(capture(
                    f,
                    &name,
                    "perfetto_trace".into(),
                    Format::XProfJson,
                    None,
                ));
            }
        }
    }
    let mut any_kineto = false;
    for (f, k) in files.iter().zip(&kinds) {
        match k {
            NameKind::Kineto { worker, span } => {
                any_kineto = true;
                caps.push(capture(f, &name, worker.clone(), Format::Kineto, *span));
            }
            NameKind::Riegeli => problems.push((f.path.clone(), riegeli_note())),
            NameKind::Folded { stem } => {
                caps.push(capture(f, &name, stem.clone(), Format::Folded, None))
            }
            NameKind::MaybeJson { stem } => match sniff(&f.path) {
                Ok(Some(fmt)) => caps.push(capture(f, &name, stem.clone(), fmt, None)),
                Ok(None) => {}
                Err(e) => problems.push((f.path.clone(), format!("cannot read: {e}"))),
            },
            _ => {}
        }
    }
    if caps.is_empty() {
        return None;
    }
    caps.sort_by(|a, b| {
        a.host
            .cmp(&b.host)
            .then(a.span.cmp(&b.span))
            .then(a.path.cmp(&b.path))
    });
    let kind = if is_session {
        RunKind::XProf
    } else if any_kineto {
        RunKind::PyTorch
    } else {
        RunKind::Other
    };
    let newest = caps
        .iter()
        .map(|c| c.mtime)
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH);
    Some(Run {
        name,
        dir: dir.to_path_buf(),
        kind,
        captures: caps,
        newest_mtime: newest,
    })
}

/// Newest run first; ties by name.
fn sort_runs(runs: &mut [Run]) {
    runs.sort_by(|a, b| {
        b.newest_mtime
            .cmp(&a.newest_mtime)
            .then_with(|| a.name.cmp(&b.name))
    });
}
