//! Chrome / Kineto JSON from memory: the single-threaded parser (with its repair pass) and the
//! chunk-parallel path with tiny chunks, so chunk borders fall everywhere. Differential: when the
//! chunked path (event scanner first, serde for what it declines) accepts an input, its capture
//! must equal the sequential serde parse's.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use tracetui::formats::{Progress, chrome};
use tracetui::model::SourceInfo;

fuzz_target!(|data: &[u8]| {
    let src = SourceInfo {
        path: PathBuf::from("fuzz.pt.trace.json"),
        ..SourceInfo::default()
    };
    let r = chrome::load_bytes(data, src.clone(), &Progress::default());
    let seq = r.as_ref().ok().map(|c| format!("{c:?}"));
    std::hint::black_box(tracetui_fuzz::check(r, data.len()));
    if let Some(cap) = chrome::load_bytes_chunked(data, src, &Progress::default(), 64, 2) {
        std::hint::black_box(tracetui_fuzz::touch_all(&cap));
        let seq = seq.expect("the chunked path loaded what the sequential parse rejected");
        assert!(seq == format!("{cap:?}"), "chunked capture differs from the sequential one");
    }
});
