//! The single-threaded parse: text (a slice, or a stream) → the serde seeds → the loader, and
//! what its end means — done, cut short (kept, warned `truncated`), broken (`parse_error`, or a
//! [`LoadError`] with the byte offset), or worth one repaired second chance ([`recover`]). Every
//! defective file ends here: the chunk-parallel parse declines them.

use super::apply::Loader;
use super::recover;
use super::seed;
use crate::formats::error::{LoadError, LoadErrorKind};
use crate::formats::progress::{Progress, percent};
use crate::model::{Capture, Format, SourceInfo};
use serde::de::DeserializeSeed;
use std::cell::Cell;
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::rc::Rc;

/// Parses `bytes` single-threaded through the serde seeds: truncation keeps every complete
/// event, a mid-file syntax error gets one repaired second chance ([`recover`]).
pub fn parse_slice(
    path: &Path,
    bytes: &[u8],
    source: SourceInfo,
    hint: Option<Format>,
    progress: &Progress,
) -> Result<Capture, LoadError> {
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

/// Interprets a parse result: Ok, truncation (warned), or an error. `total` is the length of
/// the text parsed.
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
    // The text parsed is not the file when the file is gzip: offsets and sizes are then of the
    // decompressed text, and the messages say so (with the compressed file's size).
    let file_bytes = gzip_size(path).unwrap_or(0);
    let inflated = file_bytes > 0;
    // A token cut by the end of the input (`12.`, `tr`) is a syntax error at EOF: a truncation.
    let mut class = e.classify();
    if class == C::Syntax && offset(&e) + 1 >= total {
        class = C::Eof;
    }
    match class {
        C::Eof => {
            if ld.saw_events {
                let n = ld.events;
                let form = if ld.object_form { "object" } else { "array" };
                let message = if inflated {
                    format!(
                        "decompressed text ends at byte {total} inside the trace (unterminated {form}): kept the {n} complete events before the cut (all {total} decompressed bytes read, from the {file_bytes}-byte compressed file)"
                    )
                } else {
                    format!(
                        "file ends at byte {total} inside the trace (unterminated {form}): kept the {n} complete events before the cut (all {total} bytes read, 100% of the file)"
                    )
                };
                ld.b.warn("truncated", message);
                Ok(Outcome::Done)
            } else if total == 0 && inflated {
                Err(LoadError::new(
                    LoadErrorKind::Truncated,
                    path,
                    Some(file_bytes),
                    format!(
                        "the {file_bytes}-byte compressed file decompresses to no text: truncated or empty gzip"
                    ),
                ))
            } else if total == 0 {
                Err(LoadError::new(
                    LoadErrorKind::NotATrace,
                    path,
                    Some(0),
                    "empty file: expected a JSON array of trace events or an object with \"traceEvents\"",
                ))
            } else {
                let what = if inflated {
                    "decompressed text"
                } else {
                    "file"
                };
                Err(LoadError::new(
                    LoadErrorKind::Truncated,
                    path,
                    Some(total),
                    format!(
                        "unexpected end of {what} before the first event: expected a JSON array of trace events or an object with \"traceEvents\""
                    ),
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
                        "invalid JSON at byte {at}{} ({msg}): kept the {} events before it ({} of the {}), the remaining {} bytes were not loaded",
                        if inflated { " of the decompressed text" } else { "" },
                        ld.events,
                        percent(at, total),
                        if inflated { "decompressed text" } else { "file" },
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

/// Size of the file at `path` when it is gzip (its first bytes are gzip's magic), else `None`.
fn gzip_size(path: &Path) -> Option<u64> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut magic = [0u8; 2];
    f.read_exact(&mut magic).ok()?;
    if !crate::formats::source::is_gzip(&magic) {
        return None;
    }
    Some(f.metadata().ok()?.len())
}

/// serde_json's message without its " at line L column C" suffix.
fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(k) => s[..k].to_string(),
        None => s,
    }
}

/// Finalizes the loader (warnings, origin, metadata) and builds the capture; `hint` is the
/// format implied by the file name.
pub fn finish(mut ld: Loader<'_>, source: SourceInfo, hint: Option<Format>) -> Capture {
    crate::timings::mark("parse");
    ld.finalize();
    crate::timings::mark("finalize");
    ld.report_progress();
    let format = hint.unwrap_or(if ld.kineto_hint {
        Format::Kineto
    } else {
        Format::Chrome
    });
    ld.b.finish(source, format)
}

/// [`parse_slice`] for text read from a stream (`open` starts it again from the beginning, for
/// error offsets and the repair).
pub fn parse_stream<'a>(
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
