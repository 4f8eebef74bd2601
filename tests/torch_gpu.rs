//! PyTorch on GPU: `stats` device columns and `stacks --torch` against torch's own answers on
//! two real H200 captures (tests/fixtures/torch_gpu, see its PROVENANCE.md) — an eager fp32
//! transformer and a bf16 one whose training step is a replayed CUDA graph: torch 2.11's
//! `key_averages()` (count, self / total CPU, Self CUDA, memory columns) and `export_stacks`
//! for `self_cpu_time_total` and `self_cuda_time_total`.

use assert_cmd::Command;
use flate2::read::GzDecoder;
use serde_json::Value;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

const STEM: &str = "worker0.1795774111709892780";
/// The CUDA-graph capture (docs/oracle/gen_torch_graph_capture.py).
const GRAPH: &str = "worker0.1795882105227733644";
/// Two streams, H2D prefetch (the same script with `--prefetch`).
const PREFETCH: &str = "worker0.1795887060116290334";
/// The torch.compile capture (the same script with `--compile`).
const COMPILE: &str = "worker0.1795885472423495775";
/// torch's event set (its CPU and device `FunctionEvent`s).
const TORCH_CATS: &str = "cpu_op,user_annotation,cuda_runtime,cuda_driver,kernel,gpu_memcpy,gpu_memset,gpu_user_annotation";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/torch_gpu")
        .join(name)
}

fn gunzip(p: &Path) -> String {
    let raw = std::fs::read(p).expect("read fixture");
    let mut s = String::new();
    GzDecoder::new(&raw[..])
        .read_to_string(&mut s)
        .expect("gunzip");
    s
}

fn tracetui(args: &[&str]) -> String {
    let out = Command::cargo_bin("tracetui")
        .expect("binary")
        .args(args)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

fn capture() -> String {
    capture_of(STEM)
}

fn capture_of(stem: &str) -> String {
    fixture(&format!("{stem}.pt.trace.json.gz"))
        .to_string_lossy()
        .into_owned()
}

/// `stats --json` rows keyed by (name, device row).
fn stats(extra: &[&str]) -> HashMap<(String, bool), Value> {
    stats_of(STEM, extra)
}

/// With no flags: the default table of a PyTorch capture is torch's (issue 52 §2). Extra
/// arguments go after `--json`.
fn stats_of(stem: &str, extra: &[&str]) -> HashMap<(String, bool), Value> {
    let cap = capture_of(stem);
    let mut args = vec!["stats", cap.as_str(), "--json"];
    args.extend_from_slice(extra);
    let v: Value = serde_json::from_str(&tracetui(&args)).expect("json");
    let rows = v["captures"][0]["stats"].as_array().expect("rows").clone();
    rows.into_iter()
        .map(|r| {
            let dev = matches!(
                r["kind"].as_str(),
                Some("kernel" | "memcpy" | "memset" | "gpu_annotation")
            );
            ((r["name"].as_str().unwrap_or("").to_string(), dev), r)
        })
        .collect()
}

fn near(ours_ns: i64, torch_us: f64) -> bool {
    (ours_ns as f64 / 1000.0 - torch_us).abs() <= (torch_us.abs() * 1e-3).max(1.0)
}

#[test]
fn stats_equals_torch_key_averages_with_device_time() {
    key_averages_equal(STEM, &HashMap::new());
}

/// torch's categories named explicitly give the same table as the default, and the default
/// says which event set it took (torch 2.11: python frames not nested, listed as left out).
#[test]
fn default_table_is_torchs_event_set_and_says_so() {
    let cap = capture_of(STEM);
    let dflt: Value = serde_json::from_str(&tracetui(&["stats", &cap, "--json"])).expect("json");
    let named: Value =
        serde_json::from_str(&tracetui(&["stats", &cap, "--json", "--cat", TORCH_CATS]))
            .expect("json");
    assert_eq!(dflt["captures"][0]["stats"], named["captures"][0]["stats"]);
    let set = &dflt["captures"][0]["event_set"];
    assert_eq!(set["preset"], "torch_key_averages");
    assert_eq!(set["nest_cats"].as_array().map(Vec::len), Some(0));
    assert!(
        set["left_out"]
            .as_array()
            .expect("left_out")
            .iter()
            .any(|c| c["cat"] == "python_function"),
        "{set}"
    );
    assert!(named["captures"][0].get("event_set").is_none());
    // Every event: python frames get rows again.
    let all: Value =
        serde_json::from_str(&tracetui(&["stats", &cap, "--json", "--all-events"])).expect("json");
    let rows = all["captures"][0]["stats"].as_array().expect("rows");
    assert!(
        rows.iter().any(|r| r["kind"] == "python"),
        "no python rows with --all-events"
    );
}

/// The µs of kernels (and copies) launched by `cudaGraphLaunch` calls in `stem`'s capture.
fn graph_kernel_us(stem: &str) -> f64 {
    let v: Value =
        serde_json::from_str(&gunzip(&fixture(&format!("{stem}.pt.trace.json.gz")))).expect("json");
    let ev = v["traceEvents"].as_array().expect("events");
    let corr = |e: &Value| e["args"]["correlation"].as_i64();
    let launches: std::collections::HashSet<i64> = ev
        .iter()
        .filter(|e| e["name"] == "cudaGraphLaunch")
        .filter_map(corr)
        .collect();
    ev.iter()
        .filter(|e| {
            matches!(
                e["cat"].as_str(),
                Some("kernel" | "gpu_memcpy" | "gpu_memset")
            )
        })
        .filter(|e| corr(e).is_some_and(|c| launches.contains(&c)))
        .map(|e| e["dur"].as_f64().unwrap_or(0.0))
        .sum()
}

#[test]
fn cuda_graph_capture_equals_torch_but_for_the_graphs_device_time() {
    // torch links a kernel to an op by `External id`, which a `cudaGraphLaunch` made outside
    // any op lacks: the graph's kernels are no op's there. tracetui gives them to the event
    // around the launch — the step (docs/stats.md). Every other figure equals torch's.
    let graph = graph_kernel_us(GRAPH);
    assert!(graph > 10_000.0, "{graph} µs of graph kernels");
    key_averages_equal(
        GRAPH,
        &HashMap::from([("ProfilerStep*".to_string(), graph)]),
    );
}

#[test]
fn prefetch_capture_equals_torch_in_stats_and_device_stacks() {
    key_averages_equal(PREFETCH, &HashMap::new());
    // The device `ProfilerStep` spans start while the host is inside
    // `Optimizer.zero_grad#AdamW.zero_grad`, an annotation entered inside
    // `_record_function_enter_new` (which returns at once): torch's tree closes the
    // annotation with that call, so the span goes under the `zero_grad` frame.
    let torch = summed(&gunzip(&fixture(&format!(
        "{PREFETCH}.stacks_device.txt.gz"
    ))));
    let cap = capture_of(PREFETCH);
    let ours = summed(&tracetui(&[
        "stacks", &cap, "--torch", "--metric", "device",
    ]));
    let share = matched(&torch, &ours);
    assert!(share >= 0.999, "{:.2} %", share * 100.0);
}

#[test]
fn torch_compile_capture_equals_torch_key_averages() {
    // Inductor's graphs launch from a `## Call CompiledFxGraph` annotation inside
    // `CompiledFunction`; the launch's `External id` is the op's, and torch gives the kernels
    // to the op, not to the innermost annotation.
    key_averages_equal(COMPILE, &HashMap::new());
    let ours = stats_of(COMPILE, &[]);
    let f = &ours[&("CompiledFunction".to_string(), false)];
    assert!(f["self_device_ns"].as_i64().unwrap_or(0) > 1_000_000, "{f}");
}

/// Compares `stem`'s `stats --json` with torch's key_averages; `extra_device` names host rows
/// whose Self CUDA is torch's plus the given µs.
fn key_averages_equal(stem: &str, extra_device: &HashMap<String, f64>) {
    let ours = stats_of(stem, &[]);
    let reference: Value =
        serde_json::from_str(&gunzip(&fixture(&format!("{stem}.key_averages.json.gz"))))
            .expect("json");
    let mut bad = Vec::new();
    let mut device_rows = 0;
    for r in reference.as_array().expect("array") {
        let name = r["name"].as_str().unwrap_or("").to_string();
        let dev = r["cpu_total_us"].as_f64() == Some(0.0) && r["self_cpu_us"].as_f64() == Some(0.0);
        let Some(o) = ours.get(&(name.clone(), dev)) else {
            bad.push(format!("missing {name}"));
            continue;
        };
        let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        let i = |k: &str| o[k].as_i64().unwrap_or(i64::MIN);
        let mut ok = o["count"].as_u64() == r["count"].as_u64();
        if dev {
            device_rows += 1;
            // torch's Self CUDA of a device annotation is its span: tracetui's device total.
            let d = if o["kind"] == "gpu_annotation" {
                assert_eq!(i("self_device_ns"), 0, "{name}");
                i("device_total_ns")
            } else {
                i("self_device_ns")
            };
            ok &= near(d, f("self_device_us"));
            // Device rows allocate nothing.
            ok &= o.get("cpu_mem").is_none();
        } else {
            let extra = extra_device.get(&name).copied().unwrap_or(0.0);
            ok &= near(i("self_ns"), f("self_cpu_us"))
                && near(i("total_ns"), f("cpu_total_us"))
                && near(i("self_device_ns"), f("self_device_us") + extra);
            for k in ["self_cpu_mem", "cpu_mem", "self_device_mem", "device_mem"] {
                ok &= o[k].as_i64() == r[k].as_i64();
            }
        }
        if !ok {
            bad.push(format!("{name}: ours {o} torch {r}"));
        }
    }
    assert!(device_rows > 40, "{stem}: {device_rows} device rows");
    assert!(bad.is_empty(), "{} rows differ: {bad:#?}", bad.len());
}

#[test]
fn device_time_of_the_ops_is_the_kernel_time_they_launched() {
    let ours = stats(&[]);
    let sum = |dev: bool, key: &str| -> i64 {
        ours.iter()
            .filter(|((_, d), r)| *d == dev && r["kind"] != "gpu_annotation")
            .map(|(_, r)| r[key].as_i64().unwrap_or(0))
            .sum()
    };
    // Every activity here has its launch in the file and an op around it: the host rows'
    // self device time adds up to the activities' time.
    let acts = sum(true, "self_device_ns");
    let host = sum(false, "self_device_ns");
    assert!(acts > 1_000_000, "{acts}");
    assert!((acts - host).abs() <= 1_000, "{acts} vs {host}");
    // A total is at least the self time; ProfilerStep* (host) launches nothing itself.
    for ((name, _), r) in &ours {
        assert!(
            r["device_total_ns"].as_i64() >= r["self_device_ns"].as_i64(),
            "{name}"
        );
    }
    // The steps hold the main thread's ops (forward, optimizer); backward runs on the autograd
    // thread, outside them: 509.373 µs of the 1 420.8 µs.
    let step = &ours[&("ProfilerStep*".to_string(), false)];
    assert_eq!(step["self_device_ns"], 0);
    assert_eq!(step["device_total_ns"], 509_373);
}

#[test]
fn sort_by_device_time_and_text_columns() {
    let cap = capture();
    let v: Value = serde_json::from_str(&tracetui(&[
        "stats",
        &cap,
        "--json",
        "--cat",
        "cpu_op",
        "--sort",
        "self_device",
    ]))
    .expect("json");
    let rows = v["captures"][0]["stats"].as_array().expect("rows");
    let d: Vec<i64> = rows
        .iter()
        .map(|r| r["self_device_ns"].as_i64().unwrap_or(0))
        .collect();
    assert!(d.windows(2).all(|w| w[0] >= w[1]), "{d:?}");
    assert_eq!(rows[0]["name"], "aten::mm");
    let text = tracetui(&["stats", &cap, "--cat", "cpu_op", "--sort", "device_total"]);
    assert!(
        text.contains("SELF DEV") && text.contains("DEV TOTAL"),
        "{text}"
    );
}

/// Σ per stack of folded lines.
fn summed(text: &str) -> HashMap<String, i64> {
    let mut m = HashMap::new();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some((s, v)) = l.rsplit_once(' ') {
            *m.entry(s.to_string()).or_insert(0) += v.parse::<i64>().unwrap_or(0);
        }
    }
    m
}

/// Share of torch's weight on identical lines (±1 µs).
fn matched(torch: &HashMap<String, i64>, ours: &HashMap<String, i64>) -> f64 {
    let total: i64 = torch.values().sum();
    let ok: i64 = torch
        .iter()
        .filter(|(s, v)| (ours.get(*s).copied().unwrap_or(0) - **v).abs() <= 1)
        .map(|(_, v)| v)
        .sum();
    ok as f64 / total as f64
}

#[test]
fn torch_stacks_equal_torchs_export_stacks_for_both_metrics() {
    // The graph capture: the graph's kernels take the stack of their `cudaGraphLaunch`, and a
    // device annotation the stack of what its host thread runs when the span starts on the GPU
    // (the CPU is ahead there: a different op each step).
    for stem in [STEM, GRAPH] {
        let cap = capture_of(stem);
        for (metric, file, want) in [
            ("self", "stacks.txt.gz", 0.995),
            ("device", "stacks_device.txt.gz", 0.999),
        ] {
            let torch = summed(&gunzip(&fixture(&format!("{stem}.{file}"))));
            let ours = summed(&tracetui(&["stacks", &cap, "--torch", "--metric", metric]));
            let share = matched(&torch, &ours);
            assert!(
                share >= want,
                "{stem} --metric {metric}: {:.2} %",
                share * 100.0
            );
        }
    }
}

#[test]
fn device_stacks_without_torch_sum_to_the_device_activity_time() {
    let cap = capture();
    let text = gunzip(Path::new(&cap));
    let v: Value = serde_json::from_str(&text).expect("json");
    let acts_ns: f64 = v["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| {
            matches!(
                e["cat"].as_str(),
                Some("kernel" | "gpu_memcpy" | "gpu_memset")
            )
        })
        .map(|e| e["dur"].as_f64().unwrap_or(0.0) * 1000.0)
        .sum();
    let ours: i64 = summed(&tracetui(&[
        "stacks", &cap, "--metric", "device", "--unit", "ns",
    ]))
    .values()
    .sum();
    // Each stack's value is truncated to whole ns.
    assert!(
        (ours as f64 - acts_ns).abs() <= 1000.0,
        "{ours} vs {acts_ns}"
    );
}

/// Hand-made Kineto capture (same_name_chain.pt.trace.json) with torch.autocast's chains:
/// `aten::layer_norm` → `aten::layer_norm` → `aten::native_layer_norm` → launch (twice), and
/// `aten::copy_` → `aten::copy_` whose inner op launches a copy itself. Expected figures by
/// torch's rules (`_remove_dup_nodes`, `device_time_total`, memory columns), worked by hand.
#[test]
fn same_name_chains_merge_as_torch_does() {
    let p = fixture("same_name_chain.pt.trace.json");
    let v: Value = serde_json::from_str(&tracetui(&[
        "stats",
        &p.to_string_lossy(),
        "--json",
        "--cat",
        TORCH_CATS,
    ]))
    .expect("json");
    let rows = v["captures"][0]["stats"].as_array().expect("rows");
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name && r["kind"] == "cpu_op")
            .unwrap_or_else(|| panic!("{name}"))
    };
    let fig = |r: &Value| -> Vec<i64> {
        [
            "count",
            "total_ns",
            "self_ns",
            "self_device_ns",
            "device_total_ns",
            "self_device_mem",
            "device_mem",
        ]
        .iter()
        .map(|k| r[*k].as_i64().unwrap_or(-1))
        .collect()
    };
    // Two outer layer_norms (400 + 300 µs) remain; their self is duration − native's: 40 + 40.
    // They launch nothing themselves; the native ops' kernels (50 + 60 µs) are below them.
    // Memory: the inner (removed) events' bytes leave the row: 1 KiB + 2 KiB once, not twice.
    assert_eq!(
        fig(row("aten::layer_norm")),
        vec![2, 700_000, 80_000, 0, 110_000, 0, 3072]
    );
    assert_eq!(
        fig(row("aten::native_layer_norm")),
        vec![2, 620_000, 600_000, 110_000, 110_000, 3072, 3072]
    );
    // The inner copy_ launched the 20 µs copy: torch lifts it to the outer one (self and total).
    assert_eq!(
        fig(row("aten::copy_")),
        vec![1, 70_000, 60_000, 20_000, 20_000, 0, 0]
    );
    // Runtime calls keep no device time; the device annotation has a span, no self device time.
    for r in rows.iter().filter(|r| r["kind"] == "runtime") {
        assert_eq!(
            (r["self_device_ns"].as_i64(), r["device_total_ns"].as_i64()),
            (Some(0), Some(0))
        );
    }
    let ann = rows
        .iter()
        .find(|r| r["kind"] == "gpu_annotation")
        .expect("device annotation");
    assert_eq!(
        (
            ann["self_device_ns"].as_i64(),
            ann["device_total_ns"].as_i64()
        ),
        (Some(0), Some(770_000))
    );
    assert!(ann.get("device_mem").is_none(), "{ann}");
}
