//! Graph-mode inference inputs: the iteration annotations (vLLM / SGLang / ATOM / xDiT names,
//! parsed by the serving steps and by the capture merge) and a `capture_traces/` folder
//! (`execution_details.json` and a capture trace) merged into the vLLM decode replay fixture.
//! Arbitrary names, details and capture traces give a merged capture or warnings; nothing
//! panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;
use tracetui::model::{Capture, SourceInfo};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/inference")
}

/// The replay trace, loaded once.
fn replay() -> &'static Capture {
    static R: OnceLock<Capture> = OnceLock::new();
    R.get_or_init(|| {
        tracetui::formats::load(
            &fixtures().join("vllm_decode_full.json.gz"),
            SourceInfo::default(),
            &tracetui::formats::Progress::default(),
        )
        .expect("replay fixture")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => {
            let s = String::from_utf8_lossy(rest);
            let _ = tracetui::analysis::serving::annotation::parse(&s);
            let _ = tracetui::formats::graph_capture::details::iteration(&s);
        }
        _ => {
            let Ok(dir) = tempfile::tempdir() else { return };
            let details = dir.path().join("execution_details.json");
            if mode % 3 == 1 {
                // Fuzzed details naming a real (cut) capture trace.
                let cap = fixtures()
                    .join("vllm_decode_full/capture_traces")
                    .join("graph_capture_rank_0.1773709742341309550.pt.trace.json.gz");
                let _ = std::fs::copy(&cap, dir.path().join("c.json.gz"));
                let _ = std::fs::write(&details, rest);
            } else {
                // Real details shape naming a fuzzed capture trace.
                let _ = std::fs::write(
                    &details,
                    r#"[{"file": "c.json", "batch_size": 32, "mode": "FULL"}]"#,
                );
                let _ = std::fs::write(dir.path().join("c.json"), rest);
            }
            let merged = tracetui::formats::graph_capture::merge(replay().clone(), dir.path());
            assert_eq!(merged.slices.len(), merged.slices.start.len());
        }
    }
});
