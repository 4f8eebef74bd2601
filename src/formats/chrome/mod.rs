//! Chrome Trace Event JSON and PyTorch Kineto JSON loader.
//!
//! Streaming: a serde `DeserializeSeed` chain (`seed`) writes every event straight into the
//! [`CaptureBuilder`](crate::model::CaptureBuilder) (`event`), with `args` packed into the
//! args arena (`args`) and `ts`/`dur` parsed exactly from their text ([`time`]). Files of 8 MB
//! and more are parsed in chunks on all cores (`parallel`, with the event scanner `scan` in front
//! of serde). Plain files are memory-mapped; `.gz` files are inflated into a temporary file
//! while it is parsed (`spill`). Truncated files keep every complete event; known writer defects
//! get a second-chance parse ([`recover`]). Big files get a quick partial [`preview`] for the
//! explorer. See `docs/json-loader.md`.

mod args;
mod event;
mod inflate;
mod parallel;
pub mod recover;
mod samples;
mod scan;
mod seed;
pub(crate) mod spill;
pub mod time;

use super::{LoadError, LoadErrorKind, Progress, percent};
use crate::model::{Capture, Format, SourceInfo};
use event::Loader;
use serde::de::DeserializeSeed;
use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::Ordering;

/// Loads a Chrome/Kineto JSON file (plain or gzip).
pub fn load(
    path: &Path,
    mut source: SourceInfo,
    progress: &Progress,
) -> Result<Capture, LoadError> {
    let io_err = |e: io::Error| LoadError::io(path, "cannot read file", &e);
    let file = File::open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    if source.path.as_os_str().is_empty() {
        source.path = path.to_path_buf();
    }
    if source.file_bytes == 0 {
        source.file_bytes = len;
    }
    let mut magic = [0u8; 2];
    let gz = {
        let mut f = &file;
        f.read_exact(&mut magic).is_ok() && super::is_gzip(&magic)
    };
    let hint = format_from_name(path);
    if gz {
        progress.bytes_total.store(0, Ordering::Relaxed);
        if let Some(r) = load_gz_overlapped(path, &source, hint, progress, len) {
            return r;
        }
        // Fast path: inflate into an unlinked temporary file and parse the mapped text (page
        // cache, not anonymous memory); streaming through serde_json's reader is ~2.5x slower.
        if let Ok(sp) = spill::inflate_to_temp(path, progress) {
            if progress.cancelled() {
                return Err(LoadError::cancelled(path));
            }
            progress.bytes_total.store(sp.len, Ordering::Relaxed);
            // SAFETY: the temporary file is private to this process (unlinked) and not resized.
            if let Ok(m) = unsafe { memmap2::Mmap::map(&sp.file) } {
                let mut cap = parse_slice(path, &m, source, hint, progress)?;
                if let Some(e) = sp.error {
                    cap.warnings.push(gzip_warning(sp.len, &e));
                }
                return Ok(cap);
            }
        }
        return stream_gz(path, source, hint, progress);
    }
    progress.bytes_total.store(len, Ordering::Relaxed);
    // The map lives only during parsing; it survives the file being truncated or rewritten
    // meanwhile, and such a change makes the load fail rather than keep garbage (`mapped`).
    match super::mapped::Mapped::new(file, false) {
        Ok(m) => {
            let loaded = parse_slice(path, &m, source, hint, progress);
            if m.changed() {
                return Err(super::mapped::changed_error(path));
            }
            loaded
        }
        Err(_) => {
            let file = File::open(path).map_err(io_err)?;
            let mut v = Vec::new();
            (&file).read_to_end(&mut v).map_err(io_err)?;
            parse_slice(path, &v, source, hint, progress)
        }
    }
}

/// Compressed `.gz` files at least this big inflate while they are parsed.
const OVERLAP_MIN_GZ: u64 = 1 << 20;

/// `.gz` with inflate and parse overlapped: a thread inflates into a sparse, unlinked temporary
/// file mapped in advance (room for 64× the compressed size) while the chunk-parallel parse reads
/// what has been inflated so far. `None` (nothing kept) when that does not apply or the text
/// outgrows the room: the caller inflates first, then parses.
fn load_gz_overlapped(
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
    // SAFETY: the temporary file is private to this process (unlinked) and only grows while
    // mapped; only bytes below the published inflated length (inside the file) are read, so
    // the map's pages past the file's end are never touched.
    let map = unsafe {
        memmap2::MmapOptions::new()
            .len(usize::try_from(sp.room).ok()?)
            .map(&sp.file)
    }
    .ok()?;
    std::thread::scope(|sc| {
        let inflater = sc.spawn(move || sp.inflate(path, progress));
        let avail = || sp.avail();
        let chunked = parse_chunked(
            &map,
            source,
            hint,
            progress,
            parallel::CHUNK_BYTES,
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
            None => parse_slice(path, text, source.clone(), hint, progress),
        };
        Some(cap.map(|mut c| {
            if let Some(e) = error {
                c.warnings.push(gzip_warning(len, &e));
            }
            c
        }))
    })
}

fn gzip_warning(len: u64, e: &io::Error) -> crate::model::Warning {
    crate::model::Warning {
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
        Ok(Box::new(inflate::Pipelined::spawn(gz)))
    };
    parse_stream(path, &open, source, hint, progress)
}

/// Text parsed for a [`preview`]: under the chunk-parallel threshold, so a cut prefix goes
/// straight to the sequential parse (which keeps every complete event).
pub const PREVIEW_BYTES: usize = parallel::MIN_BYTES - (1 << 20);

/// Files at least this big (uncompressed text, or ×8 for `.gz`) get a [`preview`].
pub const PREVIEW_MIN_FILE: u64 = 48 << 20;

/// A quick partial capture of a big JSON file for the explorer to draw while the full load runs:
/// the complete events of its first [`PREVIEW_BYTES`] of text (a `truncated` warning says where
/// it stops). `None` for small files, non-JSON, or anything that goes wrong.
pub fn preview(path: &Path, source: SourceInfo) -> Option<Capture> {
    preview_with(path, source, PREVIEW_MIN_FILE, PREVIEW_BYTES)
}

fn preview_with(path: &Path, source: SourceInfo, min_file: u64, bytes: usize) -> Option<Capture> {
    let file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let mut magic = [0u8; 2];
    (&file).read_exact(&mut magic).ok()?;
    let gz = super::is_gzip(&magic);
    if len.saturating_mul(if gz { 8 } else { 1 }) < min_file {
        return None;
    }
    let file = File::open(path).ok()?;
    let mut text = Vec::with_capacity(bytes);
    let limit = bytes as u64;
    let read = if gz {
        let d = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, file));
        d.take(limit).read_to_end(&mut text)
    } else {
        file.take(limit).read_to_end(&mut text)
    };
    read.ok()?;
    let cap = load_bytes(&text, source, &Progress::default()).ok()?;
    (!cap.slices.is_empty() || !cap.instants.ts.is_empty()).then_some(cap)
}

/// Loads a capture from bytes in memory (plain JSON, or gzip when the bytes start with its magic).
pub fn load_bytes(
    bytes: &[u8],
    source: SourceInfo,
    progress: &Progress,
) -> Result<Capture, LoadError> {
    let path = source.path.clone();
    let hint = format_from_name(&path);
    if super::is_gzip(bytes) {
        let open = || -> io::Result<Box<dyn Read + '_>> {
            Ok(Box::new(flate2::read::MultiGzDecoder::new(bytes)))
        };
        return parse_stream(&path, &open, source, hint, progress);
    }
    progress
        .bytes_total
        .store(bytes.len() as u64, Ordering::Relaxed);
    parse_slice(&path, bytes, source, hint, progress)
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

fn run_slice(bytes: &[u8], ld: &mut Loader<'_>) -> Result<(), serde_json::Error> {
    let lo = bytes.as_ptr() as usize;
    ld.input_range = (lo, lo + bytes.len());
    let mut de = serde_json::Deserializer::from_slice(bytes);
    seed::TopSeed(ld).deserialize(&mut de)?;
    de.end()
}

/// Counts bytes read from the inner (decompressed) stream, for progress.
struct Counting<R> {
    inner: R,
    n: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n.set(self.n.get() + k as u64);
        Ok(k)
    }
}

fn run_reader(r: impl Read, ld: &mut Loader<'_>) -> Result<(), serde_json::Error> {
    let n = Rc::new(Cell::new(0u64));
    ld.stream_bytes = Some(n.clone());
    let rd = BufReader::with_capacity(1 << 18, Counting { inner: r, n });
    let mut de = serde_json::Deserializer::from_reader(rd);
    seed::TopSeed(ld).deserialize(&mut de)?;
    de.end()
}

/// How parsing ended, once mapped to the capture's terms.
enum Outcome {
    Done,
    /// Syntax error worth a repair attempt (message kept for the final report).
    Repairable(serde_json::Error),
}

/// Interprets a parse result: Ok, truncation (warned), or an error.
fn settle(
    path: &Path,
    ld: &mut Loader<'_>,
    res: Result<(), serde_json::Error>,
    offset: &dyn Fn(&serde_json::Error) -> u64,
    total: u64,
    can_repair: bool,
) -> Result<Outcome, LoadError> {
    use serde_json::error::Category as C;
    let e = match res {
        Ok(()) => {
            if !ld.saw_events {
                return Err(LoadError::new(
                    LoadErrorKind::NotATrace,
                    path,
                    Some(0),
                    "not a trace: expected a JSON array of events or an object with \"traceEvents\"",
                ));
            }
            if ld.no_phase_anywhere() {
                return Err(LoadError::new(
                    LoadErrorKind::NotATrace,
                    path,
                    Some(0),
                    format!(
                        "not a trace: none of its {} elements has a \"ph\" (phase) field",
                        ld.events
                    ),
                ));
            }
            return Ok(Outcome::Done);
        }
        Err(e) => e,
    };
    if ld.cancelled {
        return Err(LoadError::cancelled(path));
    }
    // A token cut by the end of the input (`12.`, `tr`) is a syntax error at EOF: a truncation.
    let mut class = e.classify();
    if class == C::Syntax && offset(&e) + 1 >= total {
        class = C::Eof;
    }
    match class {
        C::Eof => {
            if ld.saw_events {
                let n = ld.events;
                ld.b.warn(
                    "truncated",
                    format!(
                        "file ends at byte {total} inside the trace (unterminated {}): kept the {n} complete events before the cut (all {total} bytes read, 100% of the file)",
                        if ld.object_form { "object" } else { "array" }
                    ),
                );
                Ok(Outcome::Done)
            } else if total == 0 {
                Err(LoadError::new(
                    LoadErrorKind::NotATrace,
                    path,
                    Some(0),
                    "empty file: expected a JSON array of trace events or an object with \"traceEvents\"",
                ))
            } else {
                Err(LoadError::new(
                    LoadErrorKind::Truncated,
                    path,
                    Some(total),
                    "unexpected end of file before the first event: expected a JSON array of trace events or an object with \"traceEvents\"",
                ))
            }
        }
        C::Io => {
            if ld.saw_events {
                let at = ld.byte_offset();
                ld.b.warn(
                    "truncated",
                    format!(
                        "compressed stream ends or is corrupt after {at} uncompressed bytes ({e}): kept the {} complete events before it",
                        ld.events
                    ),
                );
                Ok(Outcome::Done)
            } else {
                Err(LoadError::new(
                    LoadErrorKind::Corrupt,
                    path,
                    None,
                    format!("cannot read the (compressed) stream: {e}"),
                ))
            }
        }
        C::Syntax | C::Data => {
            if can_repair && e.classify() == C::Syntax {
                return Ok(Outcome::Repairable(e));
            }
            let at = offset(&e);
            let msg = strip_position(&e);
            if ld.events > 0 {
                ld.b.warn(
                    "parse_error",
                    format!(
                        "invalid JSON at byte {at} ({msg}): kept the {} events before it ({} of the file), the remaining {} bytes were not loaded",
                        ld.events,
                        percent(at, total),
                        total.saturating_sub(at)
                    ),
                );
                Ok(Outcome::Done)
            } else {
                let kind = if ld.saw_events {
                    LoadErrorKind::Corrupt
                } else {
                    LoadErrorKind::NotATrace
                };
                Err(LoadError::new(
                    kind,
                    path,
                    Some(at),
                    format!(
                        "{msg} (expected a JSON array of trace events or an object with \"traceEvents\")"
                    ),
                ))
            }
        }
    }
}

/// serde_json's message without its " at line L column C" suffix.
fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(k) => s[..k].to_string(),
        None => s,
    }
}

fn finish(mut ld: Loader<'_>, source: SourceInfo, hint: Option<Format>) -> Capture {
    ld.finalize();
    ld.report_progress();
    let format = hint.unwrap_or(if ld.kineto_hint {
        Format::Kineto
    } else {
        Format::Chrome
    });
    ld.b.finish(source, format)
}

/// Parsing threads for the chunk-parallel path (1: single-threaded): `TRACETUI_JSON_THREADS`
/// when set (benchmark A/B), else the available parallelism (at most 8).
fn threads() -> usize {
    crate::threads::from_env("TRACETUI_JSON_THREADS")
}

/// Chunk-parallel parse of mapped text ([`parallel`]); `None` when it declined or failed, in
/// which case the caller parses single-threaded (which owns every error and truncation case).
fn parse_chunked(
    bytes: &[u8],
    source: &SourceInfo,
    hint: Option<Format>,
    progress: &Progress,
    chunk_bytes: usize,
    threads: usize,
    avail: Option<parallel::Avail<'_>>,
) -> Option<Capture> {
    let pos = Rc::new(Cell::new(0usize));
    let mut ld = Loader::new(progress);
    let lo = bytes.as_ptr() as usize;
    ld.input_range = (lo, lo + bytes.len());
    ld.chunked = Some(parallel::Chunked {
        bytes,
        pos: pos.clone(),
        chunk_bytes,
        threads,
        avail,
    });
    let mut de = serde_json::Deserializer::from_reader(parallel::Frame { bytes, pos, avail });
    let res = seed::TopSeed(&mut ld)
        .deserialize(&mut de)
        .and_then(|()| de.end());
    if res.is_err()
        || !ld.saw_events
        || ld.chunked.is_some()
        || ld.no_phase_anywhere()
        || progress.cancelled()
    {
        return None;
    }
    ld.chunked = None;
    Some(finish(ld, source.clone(), hint))
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
    parse_chunked(bytes, &source, hint, progress, chunk_bytes, threads, None)
}

fn parse_slice(
    path: &Path,
    bytes: &[u8],
    source: SourceInfo,
    hint: Option<Format>,
    progress: &Progress,
) -> Result<Capture, LoadError> {
    let n = threads();
    if bytes.len() >= parallel::MIN_BYTES
        && n > 1
        && progress.max_events().is_none()
        && let Some(cap) = parse_chunked(
            bytes,
            &source,
            hint,
            progress,
            parallel::CHUNK_BYTES,
            n,
            None,
        )
    {
        return Ok(cap);
    }
    let mut ld = Loader::new(progress);
    let res = run_slice(bytes, &mut ld);
    let off = |e: &serde_json::Error| recover::offset_of(bytes, e.line(), e.column());
    let len = bytes.len() as u64;
    match settle(path, &mut ld, res, &off, len, true)? {
        Outcome::Done => Ok(finish(ld, source, hint)),
        Outcome::Repairable(e) => match recover::repair(bytes) {
            None => {
                settle(path, &mut ld, Err(e), &off, len, false)?;
                Ok(finish(ld, source, hint))
            }
            Some((fixed, reps)) => {
                drop(ld);
                reparse_repaired(path, &fixed, reps, &e, off(&e), source, hint, progress)
            }
        },
    }
}

fn parse_stream<'a>(
    path: &Path,
    open: &dyn Fn() -> io::Result<Box<dyn Read + 'a>>,
    source: SourceInfo,
    hint: Option<Format>,
    progress: &Progress,
) -> Result<Capture, LoadError> {
    let io_err = |e: io::Error| LoadError::io(path, "cannot read file", &e);
    let mut ld = Loader::new(progress);
    let res = run_reader(open().map_err(io_err)?, &mut ld);
    let total = ld.byte_offset();
    let off = |e: &serde_json::Error| match open() {
        Ok(r) => recover::offset_of(r, e.line(), e.column()),
        Err(_) => 0,
    };
    match settle(path, &mut ld, res, &off, total, true)? {
        Outcome::Done => Ok(finish(ld, source, hint)),
        Outcome::Repairable(e) => {
            let (bytes, _) = recover::read_all(open().map_err(io_err)?);
            match recover::repair(&bytes) {
                None => {
                    settle(path, &mut ld, Err(e), &off, total, false)?;
                    Ok(finish(ld, source, hint))
                }
                Some((fixed, reps)) => {
                    drop(ld);
                    drop(bytes);
                    reparse_repaired(path, &fixed, reps, &e, off(&e), source, hint, progress)
                }
            }
        }
    }
}

/// Parses the repaired text again from the start and reports what was repaired.
#[allow(clippy::too_many_arguments)]
fn reparse_repaired(
    path: &Path,
    fixed: &[u8],
    reps: recover::Repairs,
    first: &serde_json::Error,
    first_at: u64,
    source: SourceInfo,
    hint: Option<Format>,
    progress: &Progress,
) -> Result<Capture, LoadError> {
    let mut ld = Loader::new(progress);
    let res = run_slice(fixed, &mut ld);
    let off = |e: &serde_json::Error| recover::offset_of(fixed, e.line(), e.column());
    // Offsets of the repaired text are not offsets of the file (repairs change lengths): a
    // failure is reported at the first error of the original text.
    settle(path, &mut ld, res, &off, fixed.len() as u64, false).map_err(|e| {
        if e.is_cancelled() {
            return e;
        }
        LoadError::new(
            e.kind,
            path,
            Some(first_at),
            format!(
                "{} (a second-chance parse after repairs failed too: {})",
                strip_position(first),
                e.message
            ),
        )
    })?;
    ld.b.warn(
        "repaired",
        format!(
            "second-chance parse after \"{}\" at byte {first_at}: quoted {} bare N/A/NaN token(s), escaped {} control character(s), replaced {} invalid UTF-8 sequence(s) and {} bad escape(s), dropped {} trailing comma(s), read {} empty value(s) as null",
            strip_position(first),
            reps.bare_tokens,
            reps.control_chars,
            reps.invalid_utf8,
            reps.bad_escapes,
            reps.trailing_commas,
            reps.empty_values
        ),
    );
    Ok(finish(ld, source, hint))
}

#[cfg(test)]
mod tests;
