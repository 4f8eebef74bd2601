//! Gzipped Chrome JSON: the input is compressed (so the inflater sees valid gzip of arbitrary
//! text) and, when it is long enough, also cut short; loaded from a `.json.gz` file (inflated to
//! a temporary file and mapped) and from memory (streamed through the inflater).
#![no_main]

use flate2::Compression;
use flate2::write::GzEncoder;
use libfuzzer_sys::fuzz_target;
use std::io::Write;
use tracetui::formats::{self, Progress, chrome};
use tracetui::model::SourceInfo;

fuzz_target!(|data: &[u8]| {
    // First byte: how much of the compressed stream to drop at the end (0 = none).
    let (cut, text) = match data.split_first() {
        Some((&c, rest)) => (usize::from(c), rest),
        None => (0, data),
    };
    let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
    if enc.write_all(text).is_err() {
        return;
    }
    let Ok(mut gz) = enc.finish() else { return };
    gz.truncate(gz.len().saturating_sub(cut));
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join("fuzz.trace.json.gz");
    if std::fs::write(&path, &gz).is_err() {
        return;
    }
    let r = formats::load(&path, SourceInfo::default(), &Progress::default());
    std::hint::black_box(tracetui_fuzz::check(r, usize::MAX));
    let src = SourceInfo {
        path: path.clone(),
        ..SourceInfo::default()
    };
    let r = chrome::load_bytes(&gz, src, &Progress::default());
    std::hint::black_box(tracetui_fuzz::check(r, usize::MAX));
});
