//! The capture cache: a snapshot of each big JSON capture's model (`model::snapshot`), so that
//! opening the same file again — the explorer, then `rank`, then `gpu`, … — copies the model
//! instead of parsing gigabytes of JSON.
//!
//! - Where: `$TRACETUI_CACHE_DIR`, else `$XDG_CACHE_HOME/tracetui`, else `~/.cache/tracetui`.
//!   `TRACETUI_CACHE=off` disables it.
//! - What: JSON captures (plain or gzip) of at least [`MIN_FILE_BYTES`] of text that loaded
//!   without being capped. XPlane is not cached (it reads args lazily from its file, and decodes
//!   faster than a snapshot would save).
//! - Key: a hash of the canonical path; the entry also records the file's size, mtime (ns),
//!   inode and device, and is used only when all four still match (and again after decoding).
//!   Any other entry for the path is replaced.
//! - Size: at most `$TRACETUI_CACHE_MAX_MB` (default 8192) MB; the least recently used entries
//!   are deleted past that. Writes go to a temporary file renamed into place.
//! - Safety: entries carry a checksum; a damaged, truncated or foreign entry is a miss (and is
//!   deleted), never a crash. The cache never touches the trace files themselves.

use super::mapped::Mapped;
use crate::model::{Capture, SourceInfo, snapshot};
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Smallest JSON text worth caching (for `.gz`, the compressed size × 8 is compared).
pub const MIN_FILE_BYTES: u64 = 64 << 20;

const HEADER: &[u8; 8] = b"TTCACHE2";

/// The cache directory, or `None` when caching is off or no home is known.
pub fn dir() -> Option<PathBuf> {
    if std::env::var_os("TRACETUI_CACHE").is_some_and(|v| v == "off" || v == "0") {
        return None;
    }
    if let Some(d) = std::env::var_os("TRACETUI_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("tracetui"));
    }
    let home = std::env::var_os("HOME").filter(|d| !d.is_empty())?;
    Some(PathBuf::from(home).join(".cache/tracetui"))
}

fn max_bytes() -> u64 {
    std::env::var("TRACETUI_CACHE_MAX_MB")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(8192)
        .saturating_mul(1 << 20)
}

/// The identity of a trace file an entry stands for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Ident {
    size: u64,
    mtime_ns: i64,
    ino: u64,
    dev: u64,
}

fn ident(m: &fs::Metadata) -> Ident {
    Ident {
        size: m.len(),
        mtime_ns: m.mtime().saturating_mul(1_000_000_000) + m.mtime_nsec(),
        ino: m.ino(),
        dev: m.dev(),
    }
}

/// Whether a file of this size (and gzip or not) is worth caching
/// (`TRACETUI_CACHE_MIN_MB` overrides [`MIN_FILE_BYTES`], for tests).
fn eligible(path: &Path, m: &fs::Metadata) -> bool {
    let gz = path.extension().is_some_and(|e| e == "gz");
    let min = std::env::var("TRACETUI_CACHE_MIN_MB")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(MIN_FILE_BYTES, |mb| mb << 20);
    m.len().saturating_mul(if gz { 8 } else { 1 }) >= min
}

/// The entry file of `path` in `dir`, and `path` made canonical.
fn entry(dir: &Path, path: &Path) -> Option<(PathBuf, PathBuf)> {
    let canon = fs::canonicalize(path).ok()?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in canon.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    Some((dir.join(format!("{h:016x}.snap")), canon))
}

/// An entry's header: magic, the trace's identity, its canonical path (checked on lookup, and
/// listed by `tracetui cache`).
fn header(id: Ident, canon: &Path) -> Vec<u8> {
    let mut v = HEADER.to_vec();
    v.extend_from_slice(&id.size.to_le_bytes());
    v.extend_from_slice(&id.mtime_ns.to_le_bytes());
    v.extend_from_slice(&id.ino.to_le_bytes());
    v.extend_from_slice(&id.dev.to_le_bytes());
    let p = canon.as_os_str().as_encoded_bytes();
    v.extend_from_slice(&(p.len() as u32).to_le_bytes());
    v.extend_from_slice(p);
    v
}

/// The canonical path recorded in an entry's first bytes.
fn recorded_path(head: &[u8]) -> Option<PathBuf> {
    let rest = head.strip_prefix(&HEADER[..])?.get(32..)?;
    let n = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    let p = rest.get(4..4 + n)?;
    Some(PathBuf::from(String::from_utf8_lossy(p).into_owned()))
}

/// One cache entry, for `tracetui cache`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EntryInfo {
    /// The trace file it stands for.
    pub trace: PathBuf,
    /// Whether that file still exists unchanged (else the entry is never used again).
    pub current: bool,
    /// Bytes of the entry.
    pub bytes: u64,
    /// Seconds since it was last used.
    pub idle_s: u64,
    /// The entry file.
    pub file: PathBuf,
}

/// Every entry of the cache directory, most recently used first.
pub fn entries() -> Vec<EntryInfo> {
    let Some(dir) = dir() else { return Vec::new() };
    let Ok(rd) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let now = std::time::SystemTime::now();
    let mut out: Vec<EntryInfo> = rd
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "snap"))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            let mut head = vec![0u8; 4096];
            let n = io::Read::read(&mut File::open(e.path()).ok()?, &mut head).ok()?;
            let trace = recorded_path(&head[..n])?;
            let current = fs::metadata(&trace)
                .ok()
                .is_some_and(|tm| head.starts_with(&header(ident(&tm), &trace)));
            Some(EntryInfo {
                trace,
                current,
                bytes: m.len(),
                idle_s: m
                    .modified()
                    .ok()
                    .and_then(|t| now.duration_since(t).ok())
                    .map_or(0, |d| d.as_secs()),
                file: e.path(),
            })
        })
        .collect();
    out.sort_by_key(|e| e.idle_s);
    out
}

/// Deletes every entry (and stray temporary files); the number of files removed.
pub fn clear() -> usize {
    let Some(dir) = dir() else { return 0 };
    let Ok(rd) = fs::read_dir(&dir) else { return 0 };
    rd.flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.ends_with(".snap") || (n.starts_with('.') && n.ends_with(".tmp"))
        })
        .filter(|e| fs::remove_file(e.path()).is_ok())
        .count()
}

/// True when `file` begins with `head` (an entry's header).
fn starts_with(file: &Path, head: &[u8]) -> bool {
    let mut got = vec![0u8; head.len()];
    File::open(file)
        .and_then(|mut f| io::Read::read_exact(&mut f, &mut got))
        .is_ok()
        && got == head
}

/// Where the entry of an eligible trace lives and what it must start with.
struct Slot {
    dir: PathBuf,
    file: PathBuf,
    canon: PathBuf,
    head: Vec<u8>,
    id: Ident,
}

/// The [`Slot`] of `path`; `None` when caching is off or the trace is not eligible.
fn slot(path: &Path) -> Option<Slot> {
    let dir = dir()?;
    let m = fs::metadata(path).ok()?;
    if !eligible(path, &m) {
        return None;
    }
    let id = ident(&m);
    let (file, canon) = entry(&dir, path)?;
    let head = header(id, &canon);
    Some(Slot {
        dir,
        file,
        canon,
        head,
        id,
    })
}

/// True when a current entry for `path` exists (reads its header only): the explorer then
/// skips the partial preview, the whole capture being a snapshot read away.
pub fn has_current(path: &Path) -> bool {
    slot(path).is_some_and(|s| starts_with(&s.file, &s.head))
}

/// The cached model of `path` when a current entry exists (`None`: load it).
pub fn lookup(path: &Path, source: &SourceInfo) -> Option<Capture> {
    let Slot {
        file,
        canon,
        head,
        id,
        ..
    } = slot(path)?;
    let f = File::open(&file).ok()?;
    let map = Mapped::new(f, true).ok()?;
    if map.get(..head.len()) != Some(&head[..]) {
        // An older version of this trace (same path): it can never be used again.
        if map.get(..4096.min(map.len())).and_then(recorded_path) == Some(canon) {
            drop(map);
            let _ = fs::remove_file(&file);
        }
        return None;
    }
    let decoded = snapshot::decode(&map[head.len()..], source.clone());
    let changed = map.changed();
    drop(map);
    let cap = match decoded {
        Ok(c) if !changed => c,
        _ => {
            // Damaged or rewritten meanwhile: drop it, the caller loads the trace.
            let _ = fs::remove_file(&file);
            return None;
        }
    };
    // The trace must still be the file the entry was made from.
    if fs::metadata(path).ok().map(|m| ident(&m)) != Some(id) {
        return None;
    }
    // Recently used: keep it over older entries when the cache is trimmed.
    if let Ok(f) = File::options().append(true).open(&file) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
    Some(cap)
}

/// Writes the model of `path` into the cache when eligible; errors are ignored (the cache is
/// an optimisation: a read-only or full disk just means the next open parses again).
pub fn store(path: &Path, cap: &Capture) {
    let _ = try_store(path, cap);
}

fn try_store(path: &Path, cap: &Capture) -> io::Result<bool> {
    let Some(Slot {
        dir,
        file,
        head: want,
        id,
        ..
    }) = slot(path)
    else {
        return Ok(false);
    };
    if !snapshot::supported(cap)
        || cap.warnings.iter().any(|w| w.kind == "capped")
        || !cap.graph_replay.is_empty()
    {
        return Ok(false);
    }
    // Already current (this file was opened from the cache, or stored by another process).
    if starts_with(&file, &want) {
        return Ok(false);
    }
    fs::create_dir_all(&dir)?;
    let tmp = dir.join(format!(".{}.{}.tmp", std::process::id(), id.ino));
    let res = (|| -> io::Result<bool> {
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        w.write_all(&want)?;
        if !snapshot::encode_to(cap, &mut w)? {
            return Ok(false);
        }
        w.into_inner().map_err(|e| e.into_error())?;
        // The trace changed while we wrote: the entry would describe a stale model.
        if fs::metadata(path).map(|m| ident(&m))? != id {
            return Ok(false);
        }
        fs::rename(&tmp, &file)?;
        Ok(true)
    })();
    if !matches!(res, Ok(true)) {
        let _ = fs::remove_file(&tmp);
    }
    if matches!(res, Ok(true)) {
        trim(&dir, max_bytes());
    }
    res
}

/// Deletes the least recently used entries until the cache holds at most `limit` bytes.
fn trim(dir: &Path, limit: u64) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = rd
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "snap"))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some((m.modified().ok()?, m.len(), e.path()))
        })
        .collect();
    let mut total: u64 = entries.iter().map(|e| e.1).sum();
    entries.sort();
    for (_, len, p) in entries {
        if total <= limit {
            break;
        }
        if fs::remove_file(&p).is_ok() {
            total -= len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_keeps_the_newest_under_the_limit() {
        let d = tempfile::tempdir().unwrap();
        for (i, name) in ["a", "b", "c"].iter().enumerate() {
            let p = d.path().join(format!("{name}.snap"));
            fs::write(&p, vec![0u8; 1000]).unwrap();
            let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(i as u64);
            File::options()
                .append(true)
                .open(&p)
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
        fs::write(d.path().join("other.txt"), vec![0u8; 5000]).unwrap();
        trim(d.path(), 2000);
        let mut left: Vec<String> = fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        left.sort();
        assert_eq!(left, ["b.snap", "c.snap", "other.txt"]);
    }
}
