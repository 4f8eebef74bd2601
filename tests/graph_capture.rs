//! Graph capture merge (formats::graph_capture, docs/graphs.md) on TraceLens's vLLM decode
//! trace (tests/fixtures/inference, PROVENANCE.md): the merged attribution equals TraceLens's
//! ops_summary per op, ≥ 95 % of device time belongs to a cpu_op, and capture folders that do
//! not match the replay give warnings naming the graph and the first difference.

use std::path::{Path, PathBuf};
use tracetui::analysis::launch_link::{launches, track_roles};
use tracetui::analysis::launchers::{launcher_of, launchers};
use tracetui::formats::{Progress, load};
use tracetui::model::{Capture, Category, NO_SLICE, SourceInfo, slice_flags};

const CAPTURE: &str = "graph_capture_rank_0.1773709742341309550.pt.trace.json.gz";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/inference/vllm_decode_full")
}

fn open(p: &Path) -> Capture {
    match load(p, SourceInfo::default(), &Progress::default()) {
        Ok(c) => c,
        Err(e) => panic!("{}: {e}", p.display()),
    }
}

/// TraceLens 171dd747 `TraceLens_generate_perf_report_pytorch_inference` on the full (uncut)
/// trace and capture: ops_summary.csv (name, total_direct_kernel_time_sum µs, Count).
const TRACELENS: &[(&str, f64, u64)] = &[
    ("vllm::moe_forward", 7171.5322265625, 24),
    ("aten::addmm", 953.8779296875, 72),
    ("vllm::unified_attention_with_output", 724.361328125, 24),
    ("SortTokens", 375.1181640625, 24),
    ("aiter::rmsnorm2d_fwd_with_add_ck", 326.0380859375, 48),
    ("triton_poi_fused__to_copy_1", 292.3740234375, 23),
    ("aten::mm", 276.677734375, 1),
    ("_C::rotary_embedding", 149.73828125, 24),
    ("_C_cache_ops::reshape_and_cache_flash", 136.41015625, 24),
    (
        "triton_poi_fused_constant_pad_nd_moe_forward_0",
        122.6103515625,
        24,
    ),
    ("TopK", 119.814453125, 24),
    ("aten::copy_", 45.1494140625, 10),
    ("triton_poi_fused_0", 10.59765625, 1),
    ("aiter::rms_norm", 5.9990234375, 1),
    ("aten::sub", 4.439453125, 1),
    ("aten::index", 2.958984375, 1),
];

#[test]
fn merged_direct_kernel_time_equals_tracelens_per_op() {
    let c = open(&fixture().join("graph_execution.json.gz"));
    let l = launchers(&c);
    assert_eq!(l.rows.len(), TRACELENS.len(), "{:?}", l.rows);
    for &(name, us, count) in TRACELENS {
        let r = l
            .rows
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no launcher row {name}"));
        let ours = r.direct_ps as f64 / 1e6;
        assert!(
            (ours - us).abs() <= 0.01 * us,
            "{name}: {ours} µs vs TraceLens {us} µs"
        );
        assert_eq!(r.count, count, "{name}");
        assert!(r.cpu_op, "{name}");
    }
}

#[test]
fn merged_attribution_covers_95_percent_of_device_time() {
    let c = open(&fixture().join("graph_execution.json.gz"));
    let l = launchers(&c);
    assert!(l.device_ps > 10_000_000_000, "{}", l.device_ps);
    assert!(
        l.op_ps as f64 >= 0.95 * l.device_ps as f64,
        "{} of {} ps",
        l.op_ps,
        l.device_ps
    );
    // One note per graph launch, every kernel matched.
    assert_eq!(c.graph_replay.notes.len(), 1);
    assert!(
        c.graph_replay.notes[0].contains("421/421 kernels matched (exact)"),
        "{:?}",
        c.graph_replay.notes
    );
    assert!(
        !c.warnings
            .iter()
            .any(|w| w.kind.starts_with("graph_capture"))
    );
}

#[test]
fn replayed_kernels_link_to_captured_calls_and_keep_their_graph() {
    let c = open(&fixture().join("graph_execution.json.gz"));
    let (_, host) = track_roles(&c);
    let ln = launches(&c, &host);
    assert_eq!(c.graph_replay.kernel_launch.len(), 421);
    let mut linked = 0;
    for &(k, g) in &c.graph_replay.kernel_launch {
        assert_eq!(c.slice_name(g), "hipGraphLaunch");
        assert!(matches!(
            c.slices.kind(k as usize),
            Category::Kernel | Category::Memcpy | Category::Memset
        ));
        let call = ln.launch_of(c.slices.corr(k as usize));
        assert_ne!(call, NO_SLICE);
        // The launch is a capture-time call on the synthetic track, flagged, under an op.
        assert_ne!(c.slices.flags[call as usize] & slice_flags::CAPTURED, 0);
        let tr = c.track_name(c.track_of(call));
        assert!(tr.contains("graph bs=32 FULL (captured ops)"), "{tr}");
        let op = launcher_of(&c, call);
        assert_eq!(c.slices.kind(op as usize), Category::CpuOp);
        // Placed inside the graph launch's span.
        assert!(c.slices.start[call as usize] >= c.slices.start[g as usize]);
        assert!(c.slices.end(call as usize) <= c.slices.end(g as usize));
        linked += 1;
    }
    assert_eq!(linked, 421);
    // The launch → kernel flows start at the captured calls.
    let from_graph = c
        .flows
        .iter()
        .filter(|f| f.from != NO_SLICE && c.slice_name(f.from) == "hipGraphLaunch")
        .count();
    assert_eq!(from_graph, 0);
}

/// A copy of the fixture in a temporary directory, with `edit` applied to the capture text
/// (written plain) and to the `execution_details.json` text.
fn edited(
    edit_capture: impl Fn(String) -> String,
    edit_details: impl Fn(String) -> String,
) -> (tempfile::TempDir, Capture) {
    use std::io::Read;
    let dir = tempfile::tempdir().expect("tempdir");
    let src = fixture();
    std::fs::copy(
        src.join("graph_execution.json.gz"),
        dir.path().join("graph_execution.json.gz"),
    )
    .expect("copy replay");
    let cap_dir = dir.path().join("capture_traces");
    std::fs::create_dir(&cap_dir).expect("mkdir");
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(src.join("capture_traces").join(CAPTURE)).expect("open"),
    )
    .read_to_string(&mut text)
    .expect("gunzip");
    std::fs::write(cap_dir.join("capture.json"), edit_capture(text)).expect("write capture");
    let details = r#"[{"file": "capture.json", "batch_size": 32, "mode": "FULL"}]"#.to_string();
    std::fs::write(
        cap_dir.join("execution_details.json"),
        edit_details(details),
    )
    .expect("write");
    let c = open(&dir.path().join("graph_execution.json.gz"));
    (dir, c)
}

fn warning<'a>(c: &'a Capture, kind: &str) -> &'a str {
    c.warnings
        .iter()
        .find(|w| w.kind == kind)
        .map(|w| w.message.as_str())
        .unwrap_or_else(|| panic!("no {kind} warning: {:?}", c.warnings))
}

#[test]
fn other_batch_size_warns_and_loads_unmerged() {
    let (_d, c) = edited(|t| t, |d| d.replace("32", "16"));
    let w = warning(&c, "graph_capture_missing");
    assert!(w.contains("batch size 32") && w.contains("[16]"), "{w}");
    assert!(w.contains("execute_32_context_0"), "{w}");
    assert!(c.graph_replay.notes.is_empty());
    // The rest still loads: the replay's 425 kernels are there.
    let l = launchers(&c);
    assert!(l.device_ps > 10_000_000_000);
}

#[test]
fn missing_graph_file_warns() {
    let (_d, c) = edited(|t| t, |d| d.replace("capture.json", "gone.json"));
    let w = warning(&c, "graph_capture_missing");
    assert!(w.contains("gone.json") && w.contains("bs=32 FULL"), "{w}");
}

#[test]
fn differing_kernel_sequence_warns_with_the_first_difference() {
    // The capture launched another kernel where the replay ran triton_poi_fused_0.
    let (_d, c) = edited(
        |t| {
            t.replacen(
                r#""kernel":"triton_poi_fused_0""#,
                r#""kernel":"other_kernel""#,
                1,
            )
        },
        |d| d,
    );
    let w = warning(&c, "graph_capture_mismatch");
    assert!(w.contains("hipGraphLaunch at"), "{w}");
    assert!(
        w.contains("kernel #0") && w.contains("`other_kernel`"),
        "{w}"
    );
    assert!(w.contains("420/421 kernels matched"), "{w}");
    assert!(
        c.graph_replay.notes[0].contains("unmatched: #0 triton_poi_fused_0"),
        "{:?}",
        c.graph_replay.notes
    );
    // The rest is merged: attribution still above 95 %.
    let l = launchers(&c);
    assert!(l.op_ps as f64 >= 0.95 * l.device_ps as f64);
}

#[test]
fn explorer_details_of_a_replayed_kernel_name_the_capture_time_op() {
    use tracetui::ui::app::App;
    use tracetui::ui::catalog::CaptureRef;
    use tracetui::ui::colors::ColorMode;
    use tracetui::ui::details;
    use tracetui::ui::loader::Loaded;
    let c = open(&fixture().join("graph_execution.json.gz"));
    // The first aten::addmm GEMM of the graph.
    let l = Loaded::new(c, std::time::Instant::now());
    let k = l
        .cap
        .graph_replay
        .kernel_launch
        .iter()
        .map(|e| e.0)
        .find(|&k| l.cap.slice_name(k).starts_with("Cijk_"))
        .expect("a GEMM kernel");
    let (mut app, _) = App::new(Vec::<CaptureRef>::new(), (160, 40), ColorMode::None);
    app.state_mut().selected = Some(k);
    let text: Vec<String> = details::lines(&app, &l).into_iter().map(|x| x.0).collect();
    assert!(
        text.iter()
            .any(|t| t
                .starts_with("graph replay: captured by aten::addmm · replayed by hipGraphLaunch")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|t| t.contains("graph bs=32 FULL (captured ops)")),
        "{text:?}"
    );
}

#[test]
fn capture_option_points_at_a_folder_elsewhere() {
    let dir = tempfile::tempdir().expect("tempdir");
    let replay = dir.path().join("replay.json.gz");
    std::fs::copy(fixture().join("graph_execution.json.gz"), &replay).expect("copy");
    let run = |extra: &[&str]| {
        let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
            .args(["stats", "--launchers", "--json"])
            .arg(&replay)
            .args(extra)
            .output()
            .expect("run");
        assert!(out.status.success(), "{out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let c = &v["captures"][0];
        c["op_ns"].as_f64().unwrap_or(0.0) / c["device_ns"].as_f64().unwrap_or(1.0)
    };
    // Alone, the graph's kernels belong to no op; with --capture, nearly all device time does.
    assert!(run(&[]) < 0.1);
    let cap = fixture().join("capture_traces");
    let cap = cap.to_str().expect("utf-8 path");
    assert!(run(&["--capture", cap]) >= 0.95);
}
