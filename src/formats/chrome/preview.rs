//! A quick partial capture of a big JSON file for the explorer to draw while the full load runs.

use super::chunks::MIN_BYTES;
use super::load::load_bytes;
use crate::formats::progress::Progress;
use crate::formats::source::{Opened, open as open_file};
use crate::model::{Capture, SourceInfo};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// Text parsed for a [`preview`]: under the chunk-parallel threshold, so a cut prefix goes
/// straight to the sequential parse (which keeps every complete event).
pub const PREVIEW_BYTES: usize = MIN_BYTES - (1 << 20);

/// Files at least this big (uncompressed text, or ×8 for `.gz`) get a [`preview`].
pub const PREVIEW_MIN_FILE: u64 = 48 << 20;

/// A quick partial capture of a big JSON file for the explorer to draw while the full load runs:
/// the complete events of its first [`PREVIEW_BYTES`] of text (a `truncated` warning says where
/// it stops). `None` for small files, non-JSON, or anything that goes wrong.
pub fn preview(path: &Path, source: SourceInfo) -> Option<Capture> {
    preview_with(path, source, PREVIEW_MIN_FILE, PREVIEW_BYTES)
}

pub(super) fn preview_with(
    path: &Path,
    source: SourceInfo,
    min_file: u64,
    bytes: usize,
) -> Option<Capture> {
    let Opened { len, gz, .. } = open_file(path).ok()?;
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
