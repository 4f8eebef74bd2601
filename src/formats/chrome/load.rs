//! Entry points: a file's bytes from [`source`](crate::formats::source) → the chunk-parallel
//! parse ([`chunks`](super::chunks)) when the text is big and mapped, else (and whenever that
//! declines) the single-threaded parse ([`sequential`](super::sequential)). A big `.gz` is
//! inflated by one thread while the others parse what has been inflated; a `.gz` that cannot be
//! spilled to a temporary file is streamed.

use super::chunks;
use super::sequential::{parse_slice, parse_stream};
use crate::formats::error::{LoadError, LoadErrorKind};
use crate::formats::progress::Progress;
use crate::formats::source::{inflate as inflate_gz, is_gzip, open as open_file, pipe, spill};
use crate::model::{Capture, Format, SourceInfo, Warning};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::sync::atomic::Ordering;

/// Loads a Chrome/Kineto JSON file (plain or gzip).
pub fn load(
    path: &Path,
    mut source: SourceInfo,
    progress: &Progress,
) -> Result<Capture, LoadError> {
    let io_err = |e: io::Error| LoadError::io(path, "cannot read file", &e);
    let opened = open_file(path).map_err(|(_, e)| io_err(e))?;
    let len = opened.len;
    if source.path.as_os_str().is_empty() {
        source.path = path.to_path_buf();
    }
    if source.file_bytes == 0 {
        source.file_bytes = len;
    }
    let hint = format_from_name(path);
    if opened.gz {
        progress.bytes_total.store(0, Ordering::Relaxed);
        if let Some(r) = load_gz_overlapped(path, &source, hint, progress, len) {
            return r;
        }
        // Fast path: inflate into an unlinked temporary file and parse the mapped text (page
        // cache, not anonymous memory); streaming through serde_json's reader is ~2.5x slower.
        if let Ok(inflated) = inflate_gz(path, progress) {
            if progress.cancelled() {
                return Err(LoadError::cancelled(path));
            }
            let text: &[u8] = &inflated.source;
            progress
                .bytes_total
                .store(text.len() as u64, Ordering::Relaxed);
            let parsed = parse_slice_any(path, text, source, hint, progress);
            let n = text.len() as u64;
            return match (parsed, inflated.error) {
                (Ok(mut cap), Some(e)) => {
                    cap.warnings.push(gzip_warning(n, &e));
                    Ok(cap)
                }
                (Ok(cap), None) => Ok(cap),
                (Err(err), Some(e)) if !err.is_cancelled() => Err(gzip_error(path, len, n, &e)),
                (Err(err), _) => Err(err),
            };
        }
        return stream_gz(path, source, hint, progress);
    }
    progress.bytes_total.store(len, Ordering::Relaxed);
    // The map lives only during parsing; it survives the file being truncated or rewritten
    // meanwhile, and such a change makes the load fail rather than keep garbage (`mapped`).
    let text = opened.plain(false).map_err(io_err)?;
    let loaded = parse_slice_any(path, &text, source, hint, progress);
    if text.changed() {
        return Err(crate::formats::mapped::changed_error(path));
    }
    loaded
}

/// Compressed `.gz` files at least this big inflate while they are parsed.
const OVERLAP_MIN_GZ: u64 = 1 << 20;

/// `.gz` with inflate and parse overlapped: a thread inflates into a sparse, unlinked temporary
/// file mapped in advance (room for 64× the compressed size) while the chunk-parallel parse reads
/// what has been inflated so far. `None` (nothing kept) when that does not apply or the text
/// outgrows the room: the caller inflates first, then parses.
pub(super) fn load_gz_overlapped(
    path: &Path,
    source: &SourceInfo,
    hint: Option<Format>,
    progress: &Progress,
    gz_len: u64,
) -> Option<Result<Capture, LoadError>> {
    let threads = threads();
    if gz_len < OVERLAP_MIN_GZ || threads < 2 || progress.max_events().is_some() {
        return None;
    }
    let room = gz_len.saturating_mul(64).max(64 << 20);
    let sp = &spill::Growing::create(room).ok()?;
    let map = sp.map().ok()?;
    std::thread::scope(|sc| {
        let inflater = sc.spawn(move || sp.inflate(path, progress));
        let avail = || sp.avail();
        let chunked = chunks::parse(
            &map,
            source,
            hint,
            progress,
            chunks::CHUNK_BYTES,
            threads,
            Some(&avail),
        );
        let (len, error) = match inflater.join() {
            Ok(Ok(x)) => x,
            // Out of room or a write error: start over the usual way.
            _ => return None,
        };
        if progress.cancelled() {
            return Some(Err(LoadError::cancelled(path)));
        }
        progress.bytes_total.store(len, Ordering::Relaxed);
        let text = map.get(..usize::try_from(len).ok()?)?;
        let cap = match chunked {
            Some(c) => Ok(c),
            // Declined (a defect, truncation): the complete text, parsed as before.
            None => parse_slice_any(path, text, source.clone(), hint, progress),
        };
        Some(match (cap, error) {
            (Ok(mut c), Some(e)) => {
                c.warnings.push(gzip_warning(len, &e));
                Ok(c)
            }
            (Ok(c), None) => Ok(c),
            (Err(err), Some(e)) if !err.is_cancelled() => Err(gzip_error(path, gz_len, len, &e)),
            (Err(err), _) => Err(err),
        })
    })
}

/// The load error of a `.gz` of `gz_len` bytes whose stream broke (`e`) after `text_len`
/// decompressed bytes, before anything could be kept: a truncated (or corrupt) gzip, reported at
/// the end of the compressed file, never as an "empty file".
fn gzip_error(path: &Path, gz_len: u64, text_len: u64, e: &io::Error) -> LoadError {
    let (kind, what) = match e.kind() {
        io::ErrorKind::UnexpectedEof => (LoadErrorKind::Truncated, "truncated gzip"),
        _ => (LoadErrorKind::Corrupt, "corrupt gzip"),
    };
    LoadError::new(
        kind,
        path,
        Some(gz_len),
        format!(
            "{what}: the compressed stream ({gz_len} bytes) breaks off after {text_len} decompressed bytes, before the first complete event ({e})"
        ),
    )
}

fn gzip_warning(len: u64, e: &io::Error) -> Warning {
    Warning {
        kind: "gzip_error",
        count: 1,
        message: format!(
            "gzip stream ends or is corrupt after {len} uncompressed bytes ({e}): loaded what came before"
        ),
    }
}

/// Loads a `.gz` file by streaming it through serde_json's reader (the fallback used when no
/// temporary file can be written); public for the benchmark.
#[doc(hidden)]
pub fn load_gz_streaming(
    path: &Path,
    source: SourceInfo,
    progress: &Progress,
) -> Result<Capture, LoadError> {
    stream_gz(path, source, format_from_name(path), progress)
}

/// Streams a `.gz` file, inflating on a second thread.
fn stream_gz(
    path: &Path,
    source: SourceInfo,
    hint: Option<Format>,
    progress: &Progress,
) -> Result<Capture, LoadError> {
    let open = || -> io::Result<Box<dyn Read>> {
        let f = File::open(path)?;
        let gz = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, f));
        Ok(Box::new(pipe::Pipelined::spawn(gz)))
    };
    parse_stream(path, &open, source, hint, progress)
}

/// Loads a capture from bytes in memory (plain JSON, or gzip when the bytes start with its magic).
pub fn load_bytes(
    bytes: &[u8],
    source: SourceInfo,
    progress: &Progress,
) -> Result<Capture, LoadError> {
    let path = source.path.clone();
    let hint = format_from_name(&path);
    if is_gzip(bytes) {
        let open = || -> io::Result<Box<dyn Read + '_>> {
            Ok(Box::new(flate2::read::MultiGzDecoder::new(bytes)))
        };
        return parse_stream(&path, &open, source, hint, progress);
    }
    progress
        .bytes_total
        .store(bytes.len() as u64, Ordering::Relaxed);
    parse_slice_any(&path, bytes, source, hint, progress)
}

/// Format implied by the file name alone (`None`: decide from the content).
fn format_from_name(path: &Path) -> Option<Format> {
    let name = path.file_name()?.to_str()?;
    if name.contains(".pt.trace.json") {
        Some(Format::Kineto)
    } else if name.ends_with(".trace.json.gz") || name == "perfetto_trace.json.gz" {
        Some(Format::XProfJson)
    } else {
        None
    }
}

/// Parsing threads for the chunk-parallel path (1: single-threaded): `TRACETUI_JSON_THREADS`
/// when set (benchmark A/B), else the available parallelism (at most 8).
fn threads() -> usize {
    crate::threads::from_env("TRACETUI_JSON_THREADS")
}

/// Loads in-memory JSON through the chunk-parallel path with the given chunk size and thread
/// count, whatever the input size; `None` when that path declined (tests compare it with
/// [`load_bytes`]).
#[doc(hidden)]
pub fn load_bytes_chunked(
    bytes: &[u8],
    source: SourceInfo,
    progress: &Progress,
    chunk_bytes: usize,
    threads: usize,
) -> Option<Capture> {
    let hint = format_from_name(&source.path);
    chunks::parse(bytes, &source, hint, progress, chunk_bytes, threads, None)
}

/// Text in memory or mapped: chunk-parallel when it is big enough and nothing caps the events,
/// single-threaded otherwise and whenever the chunked parse declines.
fn parse_slice_any(
    path: &Path,
    bytes: &[u8],
    source: SourceInfo,
    hint: Option<Format>,
    progress: &Progress,
) -> Result<Capture, LoadError> {
    let n = threads();
    if bytes.len() >= chunks::MIN_BYTES
        && n > 1
        && progress.max_events().is_none()
        && let Some(cap) =
            chunks::parse(bytes, &source, hint, progress, chunks::CHUNK_BYTES, n, None)
    {
        return Ok(cap);
    }
    parse_slice(path, bytes, source, hint, progress)
}
