//! GPU breakdowns (`tracetui gpu`, `analysis::gpu`): hand-made traces with hand-computed
//! answers for every figure, degenerate inputs, a brute-force reference for the temporal
//! breakdown, and the CLI on real fixtures with exact numbers.

use proptest::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tracetui::analysis::gpu::classify::KernelClass;
use tracetui::analysis::gpu::temporal::breakdown;
use tracetui::analysis::gpu::{self, GpuOptions};
use tracetui::formats::{self, Progress};
use tracetui::model::{Capture, SourceInfo};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn load(rel: &str) -> Capture {
    let p = fixture(rel);
    formats::load(&p, SourceInfo::default(), &Progress::default()).expect("load fixture")
}

/// Runs `tracetui gpu --json` plus `extra`; returns (exit code, parsed stdout, stdout text).
fn gpu_json(rel: &str, extra: &[&str]) -> (i32, Value) {
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .arg("gpu")
        .arg(fixture(rel))
        .arg("--json")
        .args(extra)
        .output()
        .expect("run tracetui");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let v: Value = serde_json::from_str(&text).expect("gpu --json output is JSON");
    (out.status.code().unwrap_or(-1), v)
}

fn gpu_text(rel: &str) -> (i32, String) {
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .arg("gpu")
        .arg(fixture(rel))
        .output()
        .expect("run tracetui");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

const US: f64 = 1000.0; // ns per µs

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

#[test]
fn two_streams_every_figure() {
    let (code, v) = gpu_json("gpu/hand_two_streams.json", &[]);
    assert_eq!(code, 0);
    let c = &v["captures"][0];
    let rows = c["gpu"].as_array().expect("gpu rows");
    assert_eq!(rows.len(), 2);
    // Stream 7: gemm [10,30) [35,45), memcpy [90,100), nccl [105,150), elementwise [400,402),
    // sync [402,422) (busy only); the annotation is not an activity.
    let s7 = &rows[0];
    assert_eq!(
        (s7["device"].as_i64(), s7["stream"].as_i64()),
        (Some(0), Some(7))
    );
    assert_eq!(s7["activities"].as_u64(), Some(6));
    assert_eq!(s7["unlinked"].as_u64(), Some(1)); // the sync
    assert_eq!(f(s7, "busy_ns"), 107.0 * US);
    assert_eq!(f(s7, "compute_ns"), 32.0 * US);
    assert_eq!(f(s7, "communication_ns"), 45.0 * US);
    assert_eq!(f(s7, "memory_ns"), 10.0 * US);
    assert_eq!(f(s7, "other_ns"), 20.0 * US);
    assert_eq!(f(s7, "idle_ns"), 305.0 * US);
    // Gaps: 5 (launched at 10 < 30: kernel wait), 45 (≥ 30: other), 5 (launch at 100 = prev
    // end, not after: kernel wait), 250 (launched at 290 > 150: host wait).
    assert_eq!(f(s7, "host_wait_ns"), 250.0 * US);
    assert_eq!(f(s7, "kernel_wait_ns"), 10.0 * US);
    assert_eq!(f(s7, "idle_other_ns"), 45.0 * US);
    // Queue: +1@0 +1@10 −1@10 +1@20 −1@35 −1@90 +1@100 −1@105 +1@290 −1@400.
    assert_eq!(s7["queue_len_max"].as_i64(), Some(2));
    assert_eq!(f(s7, "queue_len_mean"), 0.9);
    assert_eq!(f(s7, "queue_len_time_mean"), 220.0 / 400.0);
    assert_eq!(f(s7, "queue_blocked_ns"), 0.0);
    // Launch statistics (cuLaunchKernel is not in HTA's set): delays 5, 20, 10, 106 µs.
    assert_eq!(s7["launched"].as_u64(), Some(4));
    assert_eq!(f(s7, "launch_delay_p50_ns"), 15.0 * US);
    let p99 = f(s7, "launch_delay_p99_ns");
    assert!((p99 - (20.0 + 0.97 * 86.0) * US).abs() < 1e-6, "{p99}");
    assert_eq!(f(s7, "launch_cpu_mean_ns"), 18.5 * US);
    assert_eq!(s7["short_kernels"].as_u64(), Some(1)); // elementwise: 2 µs < its 4 µs launch
    assert_eq!(s7["runtime_outliers"].as_u64(), Some(1)); // the 60 µs cudaMemcpyAsync
    assert_eq!(s7["launch_delay_outliers"].as_u64(), Some(1)); // 106 µs
    assert_eq!(s7["window_ns"], serde_json::json!([10_000, 422_000]));

    // Stream 20: nccl [20,50) without correlation, gemm2 [60,70) whose launch is missing.
    let s20 = &rows[1];
    assert_eq!(s20["stream"].as_i64(), Some(20));
    assert_eq!(s20["unlinked"].as_u64(), Some(2));
    assert_eq!(f(s20, "busy_ns"), 40.0 * US);
    assert_eq!(f(s20, "compute_ns"), 10.0 * US);
    assert_eq!(f(s20, "communication_ns"), 30.0 * US);
    assert_eq!(f(s20, "idle_ns"), 10.0 * US);
    assert_eq!(f(s20, "kernel_wait_ns"), 10.0 * US);
    assert_eq!(f(s20, "host_wait_ns"), 0.0);
    assert!(s20["queue_len_max"].is_null() && s20["launch_delay_p50_ns"].is_null());

    // Device 0 over both streams.
    let d = &c["devices"][0];
    assert_eq!(d["streams"].as_u64(), Some(2));
    assert_eq!(f(d, "kernel_time_ns"), 412.0 * US);
    assert_eq!(f(d, "busy_ns"), 127.0 * US);
    assert_eq!(f(d, "compute_ns"), 42.0 * US);
    assert_eq!(f(d, "non_compute_ns"), 85.0 * US);
    assert_eq!(f(d, "communication_ns"), 55.0 * US);
    assert_eq!(f(d, "memory_ns"), 10.0 * US);
    assert_eq!(f(d, "other_ns"), 20.0 * US);
    assert_eq!(f(d, "idle_ns"), 285.0 * US);
    assert_eq!(f(d, "communication_total_ns"), 75.0 * US);
    assert_eq!(f(d, "comm_overlap"), 20.0 / 75.0);
    assert_eq!(c["host_correlated"].as_u64(), Some(5));
}

#[test]
fn idle_threshold_and_cutoffs_are_configurable() {
    let (_, v) = gpu_json(
        "gpu/hand_two_streams.json",
        &[
            "--idle-threshold-us",
            "50",
            "--runtime-cutoff-us",
            "70",
            "--launch-delay-cutoff-us",
            "10",
            "--queue-full",
            "2",
        ],
    );
    let s7 = &v["captures"][0]["gpu"][0];
    // The 45 µs gap is now kernel wait.
    assert_eq!(f(s7, "kernel_wait_ns"), 55.0 * US);
    assert_eq!(f(s7, "idle_other_ns"), 0.0);
    assert_eq!(s7["runtime_outliers"].as_u64(), Some(0));
    // The 60 µs memcpy launch is now within the cut-off and its copy (10 µs) shorter: short.
    assert_eq!(s7["short_kernels"].as_u64(), Some(2));
    assert_eq!(s7["launch_delay_outliers"].as_u64(), Some(2)); // 20 and 106
    // Length ≥ 2 during [10,10) and [20,35).
    assert_eq!(f(s7, "queue_blocked_ns"), 15.0 * US);
}

#[test]
fn overlapping_kernels_on_one_stream() {
    // big [0,100) launched at 0; inner [10,20) and after [30,40) without launches.
    let c = load("gpu/hand_overlap.json");
    let r = gpu::analyze(&c, &GpuOptions::default());
    let s = &r.streams[0];
    assert_eq!(s.breakdown.busy, 100_000_000);
    assert_eq!(s.breakdown.idle(), 0);
    // HTA's rule uses the previous row's end: gaps −90 and +10, both kernel wait.
    assert_eq!(s.idle.kernel_wait, -80_000_000);
    assert_eq!((s.idle.host_wait, s.idle.other), (0, 0));
    assert_eq!(s.launch.delay_p50, Some(0.0)); // kernel starts with its launch: delay 0
    assert_eq!(s.queue_series, vec![(0, 1), (0, 0)]);
    assert_eq!(s.unlinked, 2);
    let recs = gpu::launch_records(&c, &gpu::streams::collect(&c, &GpuOptions::default()));
    assert_eq!(recs.len(), 1);
    assert_eq!(
        (recs[0].cpu_dur, recs[0].gpu_dur, recs[0].delay),
        (1_000_000, 100_000_000, 0)
    );
    let series = gpu::queue_series(&c, &GpuOptions::default());
    assert_eq!(series.len(), 1);
    assert_eq!(series[0].1.len(), 2);
}

#[test]
fn one_kernel() {
    let (code, v) = gpu_json("gpu/hand_one_kernel.json", &[]);
    assert_eq!(code, 0);
    let s = &v["captures"][0]["gpu"][0];
    assert_eq!(
        (s["device"].as_i64(), s["stream"].as_i64()),
        (Some(1), Some(3))
    );
    assert_eq!(f(s, "busy_ns"), 7.0 * US);
    assert_eq!(f(s, "compute_ns"), 7.0 * US);
    assert_eq!(f(s, "idle_ns"), 0.0);
    assert_eq!(
        f(s, "host_wait_ns") + f(s, "kernel_wait_ns") + f(s, "idle_other_ns"),
        0.0
    );
    assert!(s["queue_len_max"].is_null());
    assert!(s["launch_delay_p99_ns"].is_null());
    assert_eq!(s["unlinked"].as_u64(), Some(1));
    assert!(v["captures"][0]["devices"][0]["comm_overlap"].is_null());
}

#[test]
fn no_gpu_says_so_and_exits_0() {
    let (code, v) = gpu_json("chrome/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", &[]);
    assert_eq!(code, 0);
    assert_eq!(v["captures"][0]["gpu"].as_array().map(Vec::len), Some(0));
    let (code, t) = gpu_text("chrome/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    assert_eq!(code, 0);
    assert!(t.contains("no GPU activity"), "{t}");
}

#[test]
fn text_table_lists_streams() {
    let (code, t) = gpu_text("gpu/hand_two_streams.json");
    assert_eq!(code, 0);
    assert!(t.contains("HOST WAIT") && t.contains("COMM OVERLAP"), "{t}");
    assert!(t.contains("250.000 µs"), "{t}");
    assert!(t.contains("4 in HTA's statistics set"), "{t}");
}

#[test]
fn amd_mi250_fixture_exact_and_equal_to_hta() {
    let rel = "chrome/mi250_minitoy_train_ROCm6_2_kineto.json.gz";
    let (code, v) = gpu_json(rel, &[]);
    assert_eq!(code, 0);
    let c = &v["captures"][0];
    let s = &c["gpu"][0];
    assert_eq!(
        (s["device"].as_i64(), s["stream"].as_i64()),
        (Some(2), Some(0))
    );
    assert_eq!(s["activities"].as_u64(), Some(16));
    assert_eq!(f(s, "busy_ns"), 149_042.0);
    assert_eq!(f(s, "compute_ns"), 110_881.0);
    assert_eq!(f(s, "memory_ns"), 38_161.0);
    assert_eq!(f(s, "idle_ns"), 8_762_845.0);
    assert_eq!(f(s, "host_wait_ns"), 8_762_845.0);
    assert_eq!(s["queue_len_max"].as_i64(), Some(1));
    // hipLaunchKernel is not in HTA's launch-statistics set.
    assert_eq!(s["launched"].as_u64(), Some(0));
    assert_eq!(f(&c["devices"][0], "kernel_time_ns"), 8_911_887.0);
    // With HTA's preprocessing: HTA 0.5.0's own figures (docs/oracle/hta_compare.py): idle 8780,
    // compute 96, non-compute 35, kernel time 8911 µs; host wait 8780 µs.
    let (_, v) = gpu_json(rel, &["--hta"]);
    let d = &v["captures"][0]["devices"][0];
    assert_eq!(f(d, "idle_ns"), 8_780.0 * US);
    assert_eq!(f(d, "compute_ns"), 96.0 * US);
    assert_eq!(f(d, "non_compute_ns"), 35.0 * US);
    assert_eq!(f(d, "kernel_time_ns"), 8_911.0 * US);
    assert_eq!(f(&v["captures"][0]["gpu"][0], "host_wait_ns"), 8_780.0 * US);
}

#[test]
fn triton_fixture_exact() {
    let (code, v) = gpu_json("chrome/triton_example.json.gz", &[]);
    assert_eq!(code, 0);
    let c = &v["captures"][0];
    let s = &c["gpu"][0];
    assert_eq!(s["activities"].as_u64(), Some(1));
    assert_eq!(f(s, "busy_ns"), 1_760.0);
    assert_eq!(f(s, "compute_ns"), 1_760.0);
    // Launched by cuLaunchKernel: in the queue (max 1) but not in the launch statistics.
    assert_eq!(s["queue_len_max"].as_i64(), Some(1));
    assert_eq!(f(s, "queue_len_mean"), 0.5);
    assert!(s["launch_delay_p50_ns"].is_null());
    assert_eq!(c["host_correlated"].as_u64(), Some(2));
}

#[test]
fn xplane_tf_bert_fixture_exact() {
    let (code, v) = gpu_json("xplane/tf_bert_gpu.xplane.pb.gz", &[]);
    assert_eq!(code, 0);
    let c = &v["captures"][0];
    let rows = c["gpu"].as_array().expect("rows");
    assert_eq!(rows.len(), 9);
    assert_eq!(c["host_correlated"].as_u64(), Some(1556));
    let s = rows
        .iter()
        .find(|r| r["device"].as_i64() == Some(4) && r["stream"].as_i64() == Some(134))
        .expect("GPU 4 stream 134");
    assert_eq!(s["stream_name"].as_str(), Some("Stream #134(Compute)"));
    assert_eq!(s["activities"].as_u64(), Some(665));
    assert_eq!(s["unlinked"].as_u64(), Some(0));
    assert_eq!(f(s, "busy_ns"), 14_825_385.0);
    assert_eq!(f(s, "compute_ns"), 14_825_385.0);
    assert_eq!(f(s, "idle_ns"), 5_040_106.0);
    assert_eq!(f(s, "host_wait_ns"), 2_047_987.0);
    assert_eq!(f(s, "kernel_wait_ns"), 2_992_119.0);
    assert_eq!(f(s, "idle_other_ns"), 0.0);
    assert_eq!(s["queue_len_max"].as_i64(), Some(84));
    assert_eq!(f(s, "launch_delay_p50_ns"), 701_787.0);
    assert_eq!(
        (
            s["short_kernels"].as_u64(),
            s["runtime_outliers"].as_u64(),
            s["launch_delay_outliers"].as_u64()
        ),
        (Some(172), Some(6), Some(477))
    );
    let d4 = &c["devices"][1];
    assert_eq!(d4["device_name"].as_str(), Some("/device:GPU:4"));
    assert_eq!(f(d4, "kernel_time_ns"), 119_308_658.0);
    assert_eq!(f(d4, "busy_ns"), 14_983_622.0);
    assert_eq!(f(d4, "memory_ns"), 158_237.0);
}

/// Brute force: paint each time unit with the highest-priority active class.
fn brute(acts: &[(i64, i64, KernelClass)]) -> [i64; 6] {
    let lo = acts.iter().map(|a| a.0).min().unwrap_or(0);
    let hi = acts.iter().map(|a| a.1).max().unwrap_or(0);
    let mut out = [0i64; 6]; // compute, comm, mem, other, idle, overlap
    for t in lo..hi {
        let on = |k: KernelClass| acts.iter().any(|a| a.2 == k && a.0 <= t && t < a.1);
        let any = acts.iter().any(|a| a.0 <= t && t < a.1);
        let (c, m, y) = (
            on(KernelClass::Compute),
            on(KernelClass::Communication),
            on(KernelClass::Memory),
        );
        let slot = if c {
            0
        } else if m {
            1
        } else if y {
            2
        } else if any {
            3
        } else {
            4
        };
        out[slot] += 1;
        if c && m {
            out[5] += 1;
        }
    }
    out
}

proptest! {
    #[test]
    fn temporal_breakdown_matches_brute_force(
        raw in prop::collection::vec((0i64..200, 0i64..40, 0u8..4), 1..40)
    ) {
        let classes = [
            KernelClass::Compute,
            KernelClass::Communication,
            KernelClass::Memory,
            KernelClass::Other,
        ];
        let mut acts: Vec<(i64, i64, KernelClass)> = raw
            .iter()
            .map(|&(s, d, k)| (s, s + d, classes[k as usize]))
            .collect();
        acts.sort_by_key(|a| a.0);
        let b = breakdown(acts.iter().copied());
        let want = brute(&acts);
        prop_assert_eq!(
            [b.compute, b.communication, b.memory, b.other, b.idle(), b.comm_compute_overlap],
            want
        );
        prop_assert_eq!(b.busy, want[0] + want[1] + want[2] + want[3]);
    }
}

/// A negative idle part (activities overlapping on a stream, counted as HTA does) is said under
/// the table, naming the stream; a capture without one says nothing of it.
#[test]
fn negative_idle_parts_are_explained() {
    let (code, v) = gpu_json("xplane/h200_jax_gpu_attn.xplane.pb.gz", &[]);
    assert_eq!(code, 0);
    let negative = v["captures"][0]["gpu"]
        .as_array()
        .expect("gpu rows")
        .iter()
        .any(|r| r["kernel_wait_ns"].as_i64().is_some_and(|k| k < 0));
    assert!(negative, "the JAX H200 stream has overlapping activities");
    let (_, text) = gpu_text("xplane/h200_jax_gpu_attn.xplane.pb.gz");
    assert!(
        text.contains("negative HOST / KERN WAIT / IDLE OTHER on device 0 stream 14"),
        "{text}"
    );
    let (_, text) = gpu_text("ui/alexnet.pt.trace.json.gz");
    assert!(!text.contains("negative HOST"), "{text}");
}
