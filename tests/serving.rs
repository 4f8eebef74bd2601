//! Serving traces (issue 54 parts 3 and 4) on TraceLens's inference test traces
//! (tests/fixtures/inference, PROVENANCE.md): iterations as steps with their labels, the
//! steady-state window, and the paged-attention / MoE roofline rows equal to TraceLens's
//! perf_csvs.

use std::path::Path;
use tracetui::analysis::roofline::{self, Family, inference};
use tracetui::analysis::serving::annotation::Phase;
use tracetui::analysis::steps::{self, StepOptions, StepSource};
use tracetui::formats::Progress;
use tracetui::model::Capture;

fn load(name: &str) -> Capture {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/inference")
        .join(name);
    tracetui::formats::load(
        &p,
        tracetui::model::SourceInfo::default(),
        &Progress::default(),
    )
    .expect("load fixture")
}

/// MiB as TraceLens's `Data Moved (MB)` column counts them.
const MIB: f64 = 1048576.0;

#[test]
fn iterations_and_labels() {
    // (file, phase, context requests, generation requests, context tokens, generation tokens)
    let cases = [
        ("vllm_decode_full.json.gz", Phase::Decode, 0, 32, 0, 32),
        (
            "vllm_prefilldecode_piecewise.json.gz",
            Phase::Mixed,
            9,
            37,
            8155,
            37,
        ),
        ("sglang_decode.json.gz", Phase::Decode, 0, 32, 0, 32),
    ];
    for (f, phase, rc, rg, tc, tg) in cases {
        let c = load(f);
        let its = steps::serving::iterations(&c);
        assert_eq!(its.list.len(), 1, "{f}");
        let it = &its.list[0].it;
        assert_eq!(it.phase(), phase, "{f}");
        assert_eq!(
            (it.context_requests, it.generation_requests),
            (rc, rg),
            "{f}"
        );
        assert_eq!((it.context_tokens, it.generation_tokens), (tc, tg), "{f}");
        assert!(it.has_sqsk, "{f}");
        let found = steps::find(&c, &StepOptions::default());
        assert_eq!(found.source, StepSource::Serving, "{f}");
        assert_eq!(found.steps.len(), 1);
        // The step covers the device work launched inside the annotation.
        assert!(found.steps[0].end >= its.list[0].host_end, "{f}");
    }
    // SGLang's native `step[DECODE bs=32]` is ignored beside the detailed annotation.
    let c = load("sglang_decode.json.gz");
    assert_eq!(steps::serving::iterations(&c).secondary_ignored, 1);
}

#[test]
fn decode_step_holds_the_graph_kernels() {
    // The FULL-graph decode: the annotation is 2.4 ms of host time, the kernels it launched
    // run 10.7 ms (issue 54); the step must hold them, not read "no device data".
    let c = load("vllm_decode_full.json.gz");
    let found = steps::find(&c, &StepOptions::default());
    let parts = steps::breakdown(&c, &found, &StepOptions::default(), None);
    let dev = steps::primary_device(&parts).expect("a GPU");
    let p = parts[0].devices.iter().find(|d| d.device == dev).unwrap();
    assert!(p.has_data());
    assert!(p.compute > 10_000_000_000, "{}", p.compute); // > 10 ms of compute
}

#[test]
fn steps_json_carries_labels_and_window() {
    let c = load("vllm_prefilldecode_piecewise.json.gz");
    let (source, _, rows, serving) = tracetui::cli::steps::of_capture(&c, &StepOptions::default());
    assert_eq!(source, "serving_iterations");
    let it = rows[0].iteration.as_ref().expect("label");
    assert_eq!(it.batch_size, 8192);
    assert!(it.in_window);
    let a = it.aggregates.expect("aggregates");
    assert_eq!((a.c_sqsq, a.c_sqsk, a.g_sk), (7475785, 7671310, 34489));
    let s = serving.expect("window");
    assert_eq!((s.window_first, s.window_last, s.iterations), (0, 0, 1));
    assert!(s.fallback);
    assert_eq!(s.mean.steps, 1);
    let j = serde_json::to_value(&rows[0]).unwrap();
    assert_eq!(j["iteration"]["phase"], "mixed");
}

#[test]
fn paged_attention_rows_equal_tracelens() {
    // vllm_prefilldecode_piecewise perf_csvs/InferenceAttention_fwd.csv:
    // GFLOPS 65.010180096, 211.826171875 MB, 24 calls.
    let c = load("vllm_prefilldecode_piecewise.json.gz");
    let r = roofline::compute(&c);
    let rows: Vec<_> = r
        .rows
        .iter()
        .filter(|r| r.name == "vllm::unified_attention_with_output")
        .collect();
    assert_eq!(rows.len(), 1);
    let row = rows[0];
    assert_eq!(row.family, Family::Attention);
    assert_eq!(row.count, 24);
    assert_eq!(row.cost.flops, 65_010_180_096.0);
    assert_eq!(row.cost.bytes, Some(211.826171875 * MIB));
    assert!(row.context.starts_with("iteration execute_8192_context_9("));
    assert_eq!(row.roof_label().as_deref(), Some("bf16 matrix"));
    // The device is named nowhere in the trace: told from gfx942, 304 CUs, 192 GiB.
    assert!(r.device.as_ref().is_some_and(|d| d.peaks.is_some()));
    assert!(!row.beyond_peak());
}

#[test]
fn moe_calls_of_the_capture_traces_equal_tracelens() {
    // MoE_unfused_fwd.csv, up + down (TraceLens's two pseudo ops of one vllm::moe_forward):
    // decode 4.831838208 + 2.415919104 GFLOP, 284.9228269331473 + 142.93016346657365 MB;
    // prefill-decode 1236.950581248 + 618.475290624 GFLOP, 528 + 384 MB.
    let cases = [
        (
            "vllm_decode_full_capture_moe_layer.json.gz",
            7_247_757_312.0,
            284.9228269331473 + 142.93016346657365,
        ),
        (
            "vllm_prefilldecode_capture_moe_layer.json.gz",
            1_855_425_871_872.0,
            912.0,
        ),
    ];
    for (f, flops, mib) in cases {
        let c = load(f);
        let moe = c
            .strings
            .lookup("vllm::moe_forward")
            .and_then(|n| (0..c.slices.len()).find(|&i| c.slices.name[i] == n))
            .expect("a moe_forward call");
        let (cost, what) = inference::cost_call(&c, moe).expect("a serving op");
        let cost = cost.expect("costed");
        assert_eq!(cost.flops, flops, "{f}");
        let got = cost.bytes.unwrap() / MIB;
        assert!((got - mib).abs() < 1e-9, "{f}: {got} MiB");
        assert!(what.starts_with("top-4, gated, fp4 weights"), "{f}: {what}");
    }
}

#[test]
fn capture_time_calls_have_no_row() {
    // In a capture trace the kernels do not run: the MoE call has no device time, so it is
    // counted as a call without device time, not a row (the replay merge gives it its time).
    let c = load("vllm_decode_full_capture_moe_layer.json.gz");
    let r = roofline::compute(&c);
    assert!(r.rows.iter().all(|r| r.family != Family::Moe));
    assert!(r.no_device_calls >= 1);
}

mod common;

#[test]
fn explorer_steps_row_walks_the_iterations() {
    use tracetui::ui::app::Row;
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/inference/vllm_prefilldecode_piecewise.json.gz");
    let mut app = common::open_file(p.to_str().expect("utf-8 path"), (120, 30));
    let l = app.loaded().expect("loaded").clone();
    assert_eq!(l.steps.source, StepSource::Serving);
    assert_eq!(l.steps.steps.len(), 1);
    assert_eq!(app.rows.first(), Some(&Row::Steps));
    let s = common::screen(&app);
    assert!(s.contains(" Steps "), "{s}");
    // `z` fits the iteration, `]` says there is no further one.
    for c in ['z', ']'] {
        let cmds = app.update(common::key(c));
        common::run_cmds(&mut app, cmds);
    }
    let st = l.steps.steps[0];
    let m = app.vp.t0 + app.vp.width() / 2;
    assert!(st.start <= m && m < st.end);
    assert!(common::screen(&app).contains("no step after"));
}

/// A hand-made serving trace of two iterations: each launches one kernel that runs after its
/// annotation ends; SGLang's native label of the second is ignored beside the detailed ones.
fn two_iterations() -> Capture {
    let ev = |name: &str, cat: &str, pid: i64, tid: i64, ts: i64, dur: i64, corr: Option<i64>| {
        let mut args = serde_json::json!({});
        if let Some(c) = corr {
            args = serde_json::json!({ "correlation": c, "device": 0, "stream": 7 });
        }
        serde_json::json!({ "ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid,
                            "ts": ts, "dur": dur, "args": args })
    };
    let events = vec![
        ev(
            "execute_3_context_1(sq1sk1sqsq1sqsk1)_generation_2(sq2sk9sqsq2sqsk9)",
            "user_annotation",
            10,
            10,
            0,
            100,
            None,
        ),
        ev("hipLaunchKernel", "cuda_runtime", 10, 10, 10, 5, Some(1)),
        ev("k1", "kernel", 0, 7, 50, 200, Some(1)),
        ev(
            "execute_2_context_0(sq0sk0sqsq0sqsk0)_generation_2(sq2sk12sqsq2sqsk12)",
            "user_annotation",
            10,
            10,
            150,
            100,
            None,
        ),
        ev(
            "step[DECODE bs=2]",
            "user_annotation",
            10,
            10,
            151,
            90,
            None,
        ),
        ev("hipLaunchKernel", "cuda_runtime", 10, 10, 160, 5, Some(2)),
        ev("k2", "kernel", 0, 7, 260, 40, Some(2)),
    ];
    let text = serde_json::json!({ "schemaVersion": 1, "traceEvents": events }).to_string();
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().join("two.json");
    std::fs::write(&p, text).expect("write");
    tracetui::formats::load(
        &p,
        tracetui::model::SourceInfo::default(),
        &Progress::default(),
    )
    .expect("load")
}

#[test]
fn iterations_extend_to_their_kernels_up_to_the_next_one() {
    let c = two_iterations();
    let its = steps::serving::iterations(&c);
    assert_eq!(its.list.len(), 2);
    assert_eq!(its.nested, 0);
    assert_eq!(its.secondary_ignored, 1);
    let us = 1_000_000; // ps
    let zero = c.slices.start[its.list[0].slice as usize];
    let w: Vec<(i64, i64)> = its
        .list
        .iter()
        .map(|s| ((s.start - zero) / us, (s.end - zero) / us))
        .collect();
    // Iteration 0's kernel ends at 250 µs: cut at iteration 1's start (150); iteration 1's
    // kernel ends at 300.
    assert_eq!(w, vec![(0, 150), (150, 300)]);
    assert_eq!(its.list[0].it.phase(), Phase::Mixed);
    assert_eq!(its.list[1].it.phase(), Phase::Decode);
    let found = steps::find(&c, &StepOptions::default());
    assert_eq!(found.source, StepSource::Serving);
    assert_eq!(found.steps.len(), 2);
}
