//! XPlane (XSpace protobuf) loader: `.xplane.pb` (memory-mapped) and `.xplane.pb.gz` (inflated
//! into an unlinked temporary file, then mapped). Metadata maps are decoded with the prost types
//! in [`generated`]; events are streamed from the wire straight into the
//! [`CaptureBuilder`](crate::model::CaptureBuilder) on all cores, and their stats are read
//! lazily from the kept bytes ([`lazy`]; see `docs/xplane.md`).

pub mod dedup;
pub mod derive_device;
mod derive_sched;
pub mod derived;
pub mod group;
pub mod hlo_cost;
pub mod hlo_op_profile;
pub mod hlo_symbols;
#[rustfmt::skip]
#[allow(clippy::all, missing_docs)]
pub mod generated;
pub mod launch_stats;
pub mod lazy;
pub mod plane;
mod plane_derived;
pub mod scan;
pub mod stats;
pub mod tables;
pub mod tf_op;
pub mod tpu_lines;
mod walk;
pub mod wire;

use super::error::{LoadError, LoadErrorKind};
use super::mapped::changed_error;
use super::progress::{Progress, percent};
use super::source::{Source, inflate as inflate_gz, is_gzip, maybe_gunzip, open as open_file};
use crate::model::{Capture, Format, SourceInfo};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Loads an `.xplane.pb` / `.xplane.pb.gz` file.
pub fn load(
    path: &Path,
    mut source: SourceInfo,
    progress: &Progress,
) -> Result<Capture, LoadError> {
    let opened = open_file(path).map_err(|(what, e)| LoadError::io(path, what, &e))?;
    let len = opened.len;
    if source.path.as_os_str().is_empty() {
        source.path = path.to_path_buf();
    }
    if source.file_bytes == 0 {
        source.file_bytes = len;
    }
    if len == 0 {
        return load_bytes(&[], source, progress);
    }
    if opened.gz {
        // Inflate into an unlinked temporary file and map it: the capture keeps the bytes for
        // lazy stats, and page cache is not anonymous memory.
        if let Ok(inflated) = inflate_gz(path, progress) {
            // A cut or corrupt gzip stream: decode the inflated prefix (complete planes).
            let gz_error = inflated.error.map(|e| {
                format!(
                    "gzip stream ends or is corrupt after {} uncompressed bytes ({e})",
                    inflated.source.len()
                )
            });
            return load_source(Arc::new(inflated.source), source, progress, None, gz_error);
        }
        let mut raw = Vec::new();
        (&opened.file)
            .seek(SeekFrom::Start(0))
            .and_then(|_| (&opened.file).read_to_end(&mut raw))
            .map_err(|e| LoadError::io(path, "cannot read", &e))?;
        return load_bytes(&raw, source, progress);
    }
    // Populated: every page is read anyway, so map them in one go instead of fault by fault.
    // The capture keeps the map for lazy stats; it survives the file being truncated or
    // rewritten by another process, during loading or later (`mapped`).
    let data = Arc::new(
        opened
            .plain(true)
            .map_err(|e| LoadError::io(path, "cannot map", &e))?,
    );
    let loaded = load_source(data.clone(), source, progress, None, None);
    if data.changed() {
        return Err(changed_error(path));
    }
    loaded
}

/// Decodes an XSpace (plain or gzipped) held in memory. `source.path` names it in errors. The
/// capture keeps a copy of the (inflated) bytes for lazy stats.
pub fn load_bytes(
    bytes: &[u8],
    source: SourceInfo,
    progress: &Progress,
) -> Result<Capture, LoadError> {
    let owned = owned_plain(bytes, &source.path)?;
    load_source(Arc::new(Source::Owned(owned)), source, progress, None, None)
}

/// A copy of `bytes`, gunzipped when they start with the gzip magic.
fn owned_plain(bytes: &[u8], path: &Path) -> Result<Vec<u8>, LoadError> {
    if is_gzip(bytes) {
        let mut buf = Vec::new();
        maybe_gunzip(bytes, path, &mut buf, u64::MAX)?;
        Ok(buf)
    } else {
        Ok(bytes.to_vec())
    }
}

/// [`load_bytes`] with a given number of walking threads (tests: the capture must not depend
/// on it).
#[doc(hidden)]
pub fn load_bytes_threads(
    bytes: &[u8],
    source: SourceInfo,
    progress: &Progress,
    threads: usize,
) -> Result<Capture, LoadError> {
    let owned = owned_plain(bytes, &source.path)?;
    load_source(
        Arc::new(Source::Owned(owned)),
        source,
        progress,
        Some(threads),
        None,
    )
}

/// Keys an XSpace can start with: planes, errors, warnings, hostnames (all length-delimited).
const XSPACE_FIRST_KEYS: [u8; 4] = [0x0a, 0x12, 0x1a, 0x22];

/// The length the first field of an XSpace claims, when it is a length-delimited XSpace key.
fn first_field_len(bytes: &[u8]) -> Option<u64> {
    if !XSPACE_FIRST_KEYS.contains(bytes.first()?) {
        return None;
    }
    let mut v = 0u64;
    for (k, &b) in bytes.iter().skip(1).take(10).enumerate() {
        v |= u64::from(b & 0x7f) << (7 * k);
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The [`LoadError`] for a wire error of the file at `path`.
fn wire_error(path: &Path, e: &wire::WireError) -> LoadError {
    let kind = if e.cancelled {
        LoadErrorKind::Cancelled
    } else if e.truncated {
        LoadErrorKind::Truncated
    } else {
        LoadErrorKind::Corrupt
    };
    LoadError::new(kind, path, Some(e.offset), e.message.clone())
}

/// Decodes the XSpace in `data` (plain protobuf), keeping `data` for lazy stats. `gz_error`:
/// the inflated bytes end early because of this gzip error (reported with the planes kept).
fn load_source(
    data: Arc<Source>,
    source: SourceInfo,
    progress: &Progress,
    threads: Option<usize>,
    gz_error: Option<String>,
) -> Result<Capture, LoadError> {
    let bytes: &[u8] = &data;
    let path = source.path.clone();
    progress
        .bytes_total
        .store(bytes.len() as u64, Ordering::Relaxed);
    let to_err = |e: Box<wire::WireError>| {
        let mut le = wire_error(&path, &e);
        if let Some(g) = &gz_error {
            le.message = format!("{} ({g})", le.message);
        }
        le
    };
    if let Some(len) = first_field_len(bytes)
        && len > bytes.len() as u64
        && len >= 1 << 31
    {
        // A cut file claims at most what the whole file had; protobuf messages are under 2 GiB.
        return Err(LoadError::new(
            LoadErrorKind::Corrupt,
            &path,
            Some(1),
            format!(
                "corrupt XSpace: its first field claims {len} bytes (the file has {}; protobuf messages are under 2 GiB)",
                bytes.len()
            ),
        ));
    }
    let mut space = match scan::scan_space(bytes) {
        Ok(s) => s,
        // Not even the first key is an XSpace field: some other file, not a damaged capture.
        Err(_)
            if bytes
                .first()
                .is_some_and(|b| !XSPACE_FIRST_KEYS.contains(b)) =>
        {
            return Err(LoadError::new(
                LoadErrorKind::NotATrace,
                &path,
                Some(0),
                format!(
                    "not an XSpace protobuf: starts with byte 0x{:02x} (expected 0x0a, the key of XSpace.planes)",
                    bytes[0]
                ),
            ));
        }
        Err(e) => return Err(to_err(e)),
    };
    if bytes.is_empty() {
        return Err(LoadError::new(
            LoadErrorKind::NotATrace,
            &path,
            Some(0),
            "empty file: no XSpace",
        ));
    }
    if space.planes.is_empty() {
        return Err(LoadError::new(
            LoadErrorKind::NotATrace,
            &path,
            Some(0),
            "no XPlane in this XSpace: not an .xplane.pb file?",
        ));
    }
    let origin_ns = match space.min_timestamp_ns() {
        Some(t) if t > 1_000_000_000_000_000 => t,
        _ => 0,
    };
    let capped = progress
        .max_events()
        .and_then(|cap| cap_lines(&mut space, cap));
    let mut decoder = plane::Decoder::new(progress, origin_ns);
    if let Some(n) = threads {
        decoder = decoder.with_threads(n);
    }
    let (mut b, tables) = decoder.run(&space).map_err(to_err)?;
    let lines: Vec<(u32, u32)> = space
        .planes
        .iter()
        .enumerate()
        .flat_map(|(pi, p)| {
            p.lines.iter().filter_map(move |l| {
                let at = u32::try_from(l.r.base()).ok()?;
                Some((at, pi as u32))
            })
        })
        .collect();
    let total = bytes.len() as u64;
    let kept = space.planes.last().map_or(0, |p| p.end) as u64;
    let events = space.event_count();
    let planes = space.planes.len();
    let cut = match (&space.cut, &gz_error) {
        (Some(e), _) => Some(format!("at byte {}: {}", e.offset, e.message)),
        (None, Some(g)) => Some(g.clone()),
        (None, None) => None,
    };
    if let Some(why) = cut {
        b.warn(
            "truncated",
            format!(
                "{why}: kept the {planes} complete XPlanes before it ({events} events, the first {kept} bytes = {} of the decoded input); the rest was not loaded",
                percent(kept, total)
            ),
        );
    }
    if let Some((kept, total, lines)) = capped {
        b.warn_n(
            "capped",
            format!(
                "kept {kept} of {total} events ({}): whole XLines in file order up to the cap; {lines} lines ({} events) not loaded",
                percent(kept, total),
                total - kept
            ),
            total - kept,
        );
    }
    drop(space);
    b.args.lazy = Some(Arc::new(lazy::XStats::new(data.clone(), lines, tables)));
    Ok(b.finish(source, Format::XPlane))
}

/// Keeps whole lines, in file order, while their events fit in `cap` (a line that does not fit
/// is left out, later smaller ones may still fit). `Some((kept, total, lines left out))` when
/// anything was left out.
fn cap_lines(space: &mut scan::SpaceScan<'_>, cap: u64) -> Option<(u64, u64, u64)> {
    let total = space.event_count();
    if total <= cap {
        return None;
    }
    let (mut kept, mut dropped) = (0u64, 0u64);
    for p in &mut space.planes {
        p.lines.retain(|l| {
            let fits = kept + l.events <= cap;
            if fits {
                kept += l.events;
            } else {
                dropped += 1;
            }
            fits
        });
    }
    Some((kept, total, dropped))
}

/// Raw XEvent counts per (plane name, line title) in file order; lines with the same title in a
/// plane are summed. Planes without lines contribute nothing.
pub fn line_event_counts(bytes: &[u8]) -> Result<Vec<(String, String, u64)>, LoadError> {
    let path = Path::new("<bytes>");
    let mut buf = Vec::new();
    let bytes = maybe_gunzip(bytes, path, &mut buf, u64::MAX)?;
    let space = scan::scan_space(bytes).map_err(|e| wire_error(path, &e))?;
    let mut out: Vec<(String, String, u64)> = Vec::new();
    for p in &space.planes {
        let pname = String::from_utf8_lossy(p.name).into_owned();
        let first = out.len();
        for l in &p.lines {
            let title = String::from_utf8_lossy(l.title()).into_owned();
            match out[first..].iter_mut().find(|(_, t, _)| *t == title) {
                Some(e) => e.2 += l.events,
                None => out.push((pname.clone(), title, l.events)),
            }
        }
    }
    Ok(out)
}
