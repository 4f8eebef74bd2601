//! Chrome Trace Event JSON and PyTorch Kineto JSON loader.
//!
//! Stages, each calling only the ones after it (see `docs/json-loader.md`):
//!
//! 1. bytes — [`crate::formats::source`]: a plain file mapped, a `.gz` inflated into a temporary
//!    file (or streamed when none can be written);
//! 2. tokenizers — the text → one `RawEvent` (`raw`) at a time: `shape` (events of a learned
//!    layout, tried first), `scan` (hand-written, on the byte-level lexer `lex`) and `seed`
//!    (serde `DeserializeSeed` chain, which also reads the document around the events and takes
//!    whatever the scanner declines); `ts`/`dur` are read exactly from their text ([`time`]);
//! 3. argument decoding — `args`: `args` objects → arena blocks (through the `intern` caches);
//! 4. apply — `apply`: a complete raw event → [`CaptureBuilder`](crate::model::CaptureBuilder),
//!    with `M` events in `metadata` and what is applied once all events are read in `finalize`
//!    (sampled stacks from `samples`, thread metadata, origin, the counted warnings).
//!
//! On top, the orchestration: `load` (entry points, which path a file takes), `chunks` (chunk-
//! parallel parse of mapped text, replayed in file order), `sequential` (single-threaded parse
//! and what its end means: truncation, errors, the repaired second chance of [`recover`]) and
//! `preview` (a quick partial capture of a big file). This file only lists and re-exports.

mod apply;
mod args;
mod chunks;
mod finalize;
mod intern;
mod learned;
mod lex;
mod load;
mod metadata;
mod preview;
mod raw;
pub mod recover;
mod samples;
mod scan;
mod seed;
mod sequential;
mod shape;
pub mod time;

pub use load::{load, load_bytes, load_bytes_chunked, load_gz_streaming};
pub use preview::{PREVIEW_BYTES, PREVIEW_MIN_FILE, preview};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_chunks;
#[cfg(test)]
mod tests_scan;
#[cfg(test)]
mod tests_shape;
