//! XPlane bytes: wire scan, metadata decode, the parallel line walk, derived lines, then a lazy
//! read of every event's stats and the index build.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use tracetui::formats::{Progress, xplane};
use tracetui::model::SourceInfo;

fuzz_target!(|data: &[u8]| {
    let src = SourceInfo {
        path: PathBuf::from("fuzz.xplane.pb"),
        ..SourceInfo::default()
    };
    let r = xplane::load_bytes_threads(data, src, &Progress::default(), 2);
    std::hint::black_box(tracetui_fuzz::check(r, data.len()));
    let _ = std::hint::black_box(xplane::line_event_counts(data));
});
