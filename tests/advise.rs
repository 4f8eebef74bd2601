//! `tracetui advise`: each rule fires on a real capture where its own instrument shows time to
//! gain and stays silent on one where it shows none; evidence ids open the events they name.
//! Fixtures: tests/fixtures/torch_gpu (H200 PyTorch eager, CUDA graph), tests/fixtures/gpu
//! (a cut of the H200 eager capture), tests/fixtures/critical (HTA's alexnet), tests/fixtures/cli
//! (CPU-only PyTorch, JAX CPU XPlane); see their PROVENANCE.md.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use tracetui::analysis::advise::{Ctx, Finding, advise};
use tracetui::analysis::steps::{self, StepOptions};
use tracetui::model::Capture;

const EAGER: (&str, &str) = ("torch_gpu", "worker0.1795774111709892780.pt.trace.json.gz");
const GRAPH: (&str, &str) = ("torch_gpu", "worker0.1795882105227733644.pt.trace.json.gz");
const CUT: (&str, &str) = ("gpu", "h200_torch_cut.pt.trace.json.gz");
const ALEXNET: (&str, &str) = ("critical", "alexnet.trace.json.gz");
const HTA_TEST: (&str, &str) = ("diff", "hta_test.json.gz");
const CPU_TORCH: (&str, &str) = ("cli", "worker0.1795311589169457977.pt.trace.json.gz");
const CPU_JAX: (&str, &str) = ("cli", "vm.xplane.pb");
const TPU: (&str, &str) = ("xplane", "tpu_inference_2.xplane.pb.gz");
const JAX_GPU: (&str, &str) = ("xplane", "h200_jax_gpu_attn.xplane.pb.gz");

fn fixture(f: (&str, &str)) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(f.0)
        .join(f.1)
}

fn load(f: (&str, &str)) -> Capture {
    tracetui::formats::load(
        &fixture(f),
        tracetui::model::SourceInfo::default(),
        &tracetui::formats::Progress::default(),
    )
    .expect("load fixture")
}

/// Every finding of `f` (no 1 % cut), with the capture's steps and mean step.
fn findings(f: (&str, &str)) -> (Vec<Finding>, Vec<i64>) {
    let c = load(f);
    let opts = StepOptions::default();
    let found = steps::find(&c, &opts);
    let ctx = Ctx::new(&c, &found, &opts);
    let steps = ctx.steps.iter().map(|s| s.number).collect();
    (advise(&ctx), steps)
}

fn rule<'a>(fs: &'a [Finding], id: &str) -> Option<&'a Finding> {
    fs.iter().find(|f| f.rule == id)
}

#[test]
fn eager_capture_is_host_bound_with_an_idle_device_and_short_kernels() {
    let (fs, steps) = findings(EAGER);
    assert_eq!(steps, vec![2, 3]);
    // Ranked by saving.
    assert!(fs.windows(2).all(|w| w[0].saving >= w[1].saving));
    let h = rule(&fs, "host_bound").expect("host_bound fires");
    // `steps`: the device is idle ~97 % of each step; the saving is at most that idle time.
    let pct = 100 * h.saving / h.step;
    assert!((90..=99).contains(&pct), "{pct} {}", h.title);
    assert!(!h.event_ids.is_empty() && h.analysis == "critical");
    let d = rule(&fs, "device_idle").expect("device_idle fires");
    assert!(d.saving >= h.saving, "host time on the path ≤ device idle");
    assert!(d.title.contains("waiting for the host"), "{}", d.title);
    let s = rule(&fs, "short_kernels").expect("short_kernels fires");
    // `gpu`'s launch statistics: 189 of 202 activities per step shorter than their launch.
    assert!(s.title.contains("189 of 202"), "{}", s.title);
    assert!(s.saving <= d.saving);
    // No input annotations; no pageable copy inside the steps.
    assert!(rule(&fs, "input_wait").is_none());
    assert!(rule(&fs, "pageable_copy").is_none());
    // `roofline`: fp32 matmuls and attention on an H200 (TF32 peak 495 TFLOP/s).
    let m = rule(&fs, "fp32_matmul").expect("fp32_matmul fires");
    assert!(m.title.contains("NVIDIA H200"), "{}", m.title);
    assert!(m.saving > 0 && m.saving < m.step / 10);
    // foreach AdamW: 8 multi_tensor_apply kernels per step, no fused kernel.
    let o = rule(&fs, "unfused_optimizer").expect("unfused_optimizer fires");
    assert!(o.title.contains("launches 8 kernels"), "{}", o.title);
}

#[test]
fn graph_capture_keeps_the_device_busier_than_half_and_syncs_once_per_step() {
    let (fs, _) = findings(GRAPH);
    // `steps`: the device is busy 56 % of each step (the CUDA graph): below the 50 % idle rule.
    assert!(rule(&fs, "device_idle").is_none());
    let s = rule(&fs, "sync_in_step").expect("sync_in_step fires");
    // The eval forward's `.cpu()` (aten::to: a device→host copy and its sync), reached from the
    // script's module level (line 102 of the recorded script).
    assert!(
        s.title
            .contains("aten::to at gen_torch_graph_capture.py(102)"),
        "{}",
        s.title
    );
    assert_eq!(s.steps, vec![2, 3, 4]);
    // Its pageable device→host copies, 3 in 3 steps.
    let p = rule(&fs, "pageable_copy").expect("pageable_copy fires");
    assert!(
        p.title.contains("0 host→device, 3 device→host"),
        "{}",
        p.title
    );
}

#[test]
fn no_sync_or_pageable_copy_in_the_cut_eager_step() {
    let (fs, _) = findings(CUT);
    assert!(rule(&fs, "sync_in_step").is_none());
    assert!(rule(&fs, "pageable_copy").is_none());
    assert!(rule(&fs, "host_bound").is_some());
}

#[test]
fn gpu_bound_capture_is_neither_host_bound_nor_idle_nor_input_bound() {
    // HTA's trace_diff test trace: `steps` shows the device idle 3–4.5 % of each step, input
    // annotations ~0.1 ms of 80–166 ms; its optimizer is apex's FusedAdam.
    let (fs, steps) = findings(HTA_TEST);
    assert_eq!(steps.len(), 6);
    for r in [
        "host_bound",
        "device_idle",
        "input_wait",
        "unfused_optimizer",
    ] {
        assert!(rule(&fs, r).is_none(), "{r} fired");
    }
    // Short kernels: the saving is capped by the device's idle time (≤ 4.5 % of the step).
    let s = rule(&fs, "short_kernels").expect("short_kernels fires");
    assert!(s.saving * 100 <= s.step * 5, "{}", s.title);
}

#[test]
fn alexnet_copies_its_inputs_from_pageable_memory() {
    let (fs, _) = findings(ALEXNET);
    let p = rule(&fs, "pageable_copy").expect("pageable_copy fires");
    assert!(p.title.contains("16 copies"), "{}", p.title);
    assert_eq!(p.analysis, "gpu");
}

#[test]
fn nothing_fires_on_cpu_only_captures_but_jax_compiling_in_step_0() {
    let (fs, _) = findings(CPU_TORCH);
    let rules: Vec<&str> = fs.iter().map(|f| f.rule).collect();
    assert!(rules.is_empty(), "{rules:?}");
    // The JAX CPU capture compiles its 4 functions inside step 0 (`search compile`: 4
    // backend_compile_and_load, 136.8 ms in all; step 0 is 193.5 ms): no device rule fires.
    let (fs, steps) = findings(CPU_JAX);
    let rules: Vec<&str> = fs.iter().map(|f| f.rule).collect();
    assert_eq!(rules, vec!["xla_compile"]);
    let x = &fs[0];
    assert_eq!(x.steps, vec![0]);
    assert!(x.title.contains("4 XLA compilations"), "{}", x.title);
    assert!(x.title.contains("136.841 ms"), "{}", x.title);
    // Mean over the 5 analysed steps.
    assert_eq!(steps.len(), 5);
    assert!(
        (x.saving - 136_841_000_000 / 5).abs() < 1_000_000,
        "{}",
        x.saving
    );
}

#[test]
fn hta_trace_exposes_its_collectives_and_eager_has_none() {
    // `steps` on HTA's trace_diff test rank: EXP.COMM 11.4, 9.8, 9.5, 7.5, 11.3, 9.5 % of
    // steps 1009–1014 (all ≥ 5 %).
    let (fs, _) = findings(HTA_TEST);
    let e = rule(&fs, "exposed_comm").expect("exposed_comm fires");
    assert_eq!(e.steps, (1009..=1014).collect::<Vec<i64>>());
    let p = 100 * e.saving / e.step;
    assert!((9..=10).contains(&p), "{p} {}", e.title);
    assert!(e.title.contains("ncclKernel_AllReduce"), "{}", e.title);
    let (fs, _) = findings(EAGER);
    assert!(rule(&fs, "exposed_comm").is_none());
}

#[test]
fn alexnet_allocates_inside_its_step_and_eager_does_not() {
    // `search cudaMalloc|cudaFree`: 24 cudaMalloc + 15 cudaFree on the host thread; cudaFree
    // alone 6.554 s, the longest 6.009 s.
    let (fs, _) = findings(ALEXNET);
    let a = rule(&fs, "alloc_in_step").expect("alloc_in_step fires");
    assert!(
        a.title.contains("the longest: cudaFree (6.009 s)"),
        "{}",
        a.title
    );
    let (fs, _) = findings(EAGER);
    assert!(rule(&fs, "alloc_in_step").is_none());
    assert!(rule(&fs, "xla_compile").is_none());
}

#[test]
fn tpu_offload_copies_hide_under_the_xla_ops() {
    // The TPU host-offload stress test: each TPU's Host Offload Ops lines are busy ~80 % of
    // the capture, all but < 1 µs under its XLA Ops: nothing to gain from overlapping them.
    let (fs, _) = findings(TPU);
    assert!(rule(&fs, "host_offload").is_none());
    // Compilation inside the (whole-capture) step: 4 compiles.
    assert!(rule(&fs, "xla_compile").is_some());
    let (fs, _) = findings(JAX_GPU);
    assert!(rule(&fs, "xla_compile").is_none());
}

fn run(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_tracetui"))
        .args(args)
        .output()
        .expect("run tracetui");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn json_shape_and_evidence_ids_open_their_events_in_search() {
    let path = fixture(GRAPH);
    let p = path.to_str().expect("utf-8 path");
    let v = run(&["advise", p, "--json", "-q"]);
    let cap = &v["captures"][0];
    let fs = cap["findings"].as_array().expect("findings");
    // sync_in_step and pageable_copy are below 1 % of the step: left out and counted.
    assert_eq!(cap["below_threshold"], 2);
    assert!(!fs.is_empty());
    let c = load(GRAPH);
    for f in fs {
        for k in [
            "rule",
            "title",
            "saving_ns",
            "step_ns",
            "steps",
            "evidence",
            "fix",
            "threshold",
        ] {
            assert!(f.get(k).is_some(), "{k} missing in {f}");
        }
        let ev = &f["evidence"];
        let ids = ev["event_ids"].as_array().expect("ids");
        assert!(ev["analysis"].is_string() && ev["tracks"].is_array());
        for (id, e) in ids.iter().zip(ev["events"].as_array().expect("events")) {
            let id = id.as_u64().expect("id") as u32;
            assert_eq!(e["id"].as_u64(), Some(id as u64));
            assert_eq!(e["name"].as_str(), Some(c.slice_name(id)));
        }
        // The first event, through `search`: same name, track and start.
        if let Some(e) = ev["events"].as_array().and_then(|a| a.first()) {
            let name = e["name"].as_str().expect("name");
            let re = format!("^{}$", regex::escape(name));
            let s = run(&["search", p, &re, "--regex", "--json", "-q"]);
            let r = &s["captures"][0]["results"][0];
            assert_eq!(r["name"].as_str(), Some(name));
            let tracks: Vec<&str> = r["tracks"]
                .as_array()
                .expect("tracks")
                .iter()
                .filter_map(|t| t.as_str())
                .collect();
            assert!(
                tracks.contains(&e["track"].as_str().expect("track")),
                "{tracks:?} {e}"
            );
        }
    }
    // --all keeps them; --step narrows the analysed steps.
    let v = run(&["advise", p, "--json", "-q", "--all", "--step", "3"]);
    let cap = &v["captures"][0];
    assert_eq!(cap["below_threshold"], 0);
    assert_eq!(cap["analysed_steps"], serde_json::json!([3]));
}

/// Every evidence event of `advise --json --all` on three captures: its name, track, start and
/// duration are the slice's; `search` finds its name on its track; the explorer selects it.
#[test]
fn every_evidence_id_opens_its_event_in_search_and_the_explorer() {
    for f in [GRAPH, EAGER, ALEXNET] {
        let path = fixture(f);
        let p = path.to_str().expect("utf-8 path");
        let v = run(&["advise", p, "--json", "-q", "--all"]);
        let c = load(f);
        let zero = c.time_zero();
        let mut app = ui_open(p);
        let mut names: Vec<(String, String)> = Vec::new();
        let mut n = 0;
        for fd in v["captures"][0]["findings"].as_array().expect("findings") {
            let ev = &fd["evidence"];
            let ids = ev["event_ids"].as_array().expect("ids");
            let events = ev["events"].as_array().expect("events");
            assert_eq!(ids.len(), events.len(), "{}", fd["rule"]);
            for e in events {
                let id = e["id"].as_u64().expect("id") as usize;
                assert!(id < c.slices.len());
                assert_eq!(e["name"].as_str(), Some(c.slice_name(id as u32)));
                assert_eq!(
                    e["start_ns"].as_i64(),
                    Some((c.slices.start[id] - zero) / 1000)
                );
                assert_eq!(e["dur_ns"].as_i64(), Some(c.slices.dur[id] / 1000));
                // The explorer: the id selects that slice.
                app.update(tracetui::ui::app::Msg::JumpTo(id as u32));
                assert_eq!(app.selected, Some(id as u32));
                let key = (
                    e["name"].as_str().expect("name").to_string(),
                    e["track"].as_str().expect("track").to_string(),
                );
                if !names.contains(&key) {
                    names.push(key);
                }
                n += 1;
            }
        }
        assert!(n > 0, "{f:?}: no evidence events");
        // `search`: each name, matched exactly, is found on the event's track.
        for (name, track) in names {
            let re = format!("^{}$", regex::escape(&name));
            let s = run(&["search", p, &re, "--regex", "--json", "-q"]);
            let r = &s["captures"][0]["results"][0];
            assert_eq!(r["name"].as_str(), Some(name.as_str()));
            let tracks: Vec<&str> = r["tracks"]
                .as_array()
                .expect("tracks")
                .iter()
                .filter_map(|t| t.as_str())
                .collect();
            assert!(tracks.contains(&track.as_str()), "{f:?} {name}: {tracks:?}");
        }
    }
}

/// The explorer opened on one capture file (its load run through the real loader).
fn ui_open(path: &str) -> tracetui::ui::app::App {
    use std::sync::Arc;
    use tracetui::ui::app::{App, Cmd, Msg};
    let p = Path::new(path);
    let cap = tracetui::ui::catalog::CaptureRef::from_file(p, p.parent().expect("a file path"));
    let (mut app, cmds) = App::new(vec![cap], (120, 40), tracetui::ui::colors::ColorMode::None);
    for c in cmds {
        if let Cmd::Load {
            generation,
            entry,
            capture,
            progress,
        } = c
        {
            let result = tracetui::ui::loader::load_sync(&capture, &progress).map(Arc::new);
            app.update(Msg::Load(tracetui::ui::loader::LoadDone::finished(
                generation, entry, result,
            )));
        }
    }
    app
}

#[test]
fn kernels_outside_graphs_fire_only_where_graphs_replay() {
    // torch.cuda.graphs training capture: the optimizer and loss run eagerly beside 3 replays.
    let (fs, _) = findings(GRAPH);
    let g = rule(&fs, "outside_graphs").expect("outside_graphs fires on the CUDA graph capture");
    assert!(
        g.saving > g.step / 100,
        "saving {} of step {}",
        g.saving,
        g.step
    );
    assert!(g.saving <= g.step);
    assert!(!g.event_ids.is_empty());
    // Its evidence kernels are not the graphs' own.
    let c = load(GRAPH);
    let graphs = tracetui::analysis::graphs::GraphLaunches::of(&c);
    assert!(g.event_ids.iter().all(|id| !graphs.kernels.contains(id)));
    // vLLM PIECEWISE: the eager attention launches are found, their saving is small.
    let (fs, _) = findings(("inference", "vllm_prefilldecode_piecewise.json.gz"));
    let p = rule(&fs, "outside_graphs").expect("fires on PIECEWISE");
    assert!(
        p.title.contains("25 CUDA/HIP graph launches"),
        "{}",
        p.title
    );
    // An eager capture has no graph: the rule is silent.
    let (fs, _) = findings(EAGER);
    assert!(rule(&fs, "outside_graphs").is_none());
}
