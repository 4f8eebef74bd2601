//! CUDA/HIP graph launches as units (docs/stats.md "CUDA/HIP graphs"): each of `stats`,
//! `stacks --metric device` (the flame), `roofline`, `critical` on a vLLM decode replay (HIP
//! graphs, TraceLens's test trace), a PyTorch training step replayed as a CUDA graph, a
//! torch.compile(mode="reduce-overhead") capture and a JAX command-buffer capture; and a capture
//! without graphs that reads as before. The timeline's `graphs` row: src/ui/graph_row.rs.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

const VLLM: &str = "inference/vllm_decode_full.json.gz";
const TORCH_GRAPH: &str = "torch_gpu/worker0.1795882105227733644.pt.trace.json.gz";
const TORCH_COMPILE: &str = "torch_gpu/worker0.1795885472423495775.pt.trace.json.gz";
const TORCH_EAGER: &str = "torch_gpu/worker0.1795774111709892780.pt.trace.json.gz";
const JAX: &str = "xplane/h200_jax_gpu_attn.xplane.pb.gz";

fn path(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn run(args: &[&str]) -> String {
    let out = Command::cargo_bin("tracetui")
        .expect("binary")
        .args(args)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

fn json(args: &[&str]) -> Value {
    let v: Value = serde_json::from_str(&run(args)).expect("json");
    v["captures"][0].clone()
}

/// (graph name, launches, kernels per launch) of `stats --json`.
fn stats_graphs(rel: &str) -> Vec<(String, u64, u64, i64)> {
    let c = json(&["stats", &path(rel), "--json"]);
    c["graphs"]
        .as_array()
        .map(|v| {
            v.iter()
                .map(|g| {
                    (
                        g["name"].as_str().unwrap_or("").to_string(),
                        g["launches"].as_u64().unwrap_or(0),
                        g["kernels_per_launch"].as_u64().unwrap_or(0),
                        g["device_ns"].as_i64().unwrap_or(0),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Σ device µs of the folded device stacks, and of those under a `graph (…)` frame.
fn device_stacks(rel: &str) -> (i64, i64, Vec<String>) {
    let text = run(&["stacks", &path(rel), "--metric", "device"]);
    let (mut all, mut graph) = (0, 0);
    let mut parents = Vec::new();
    for line in text.lines() {
        let Some((stack, v)) = line.rsplit_once(' ') else {
            continue;
        };
        let v: i64 = v.parse().unwrap_or(0);
        all += v;
        let frames: Vec<&str> = stack.split(';').collect();
        if let Some(k) = frames.iter().position(|f| f.starts_with("graph_(")) {
            graph += v;
            // The graph frame holds kernels (one frame below it), never a launch call.
            assert_eq!(frames.len(), k + 2, "{stack}");
            assert!(k > 0 && !frames[k - 1].contains("GraphLaunch"), "{stack}");
            parents.push(frames[k - 1].to_string());
        }
    }
    parents.sort();
    parents.dedup();
    (all, graph, parents)
}

#[test]
fn vllm_decode_replay_is_one_graph_in_every_view() {
    // stats: one graph row, 421 kernels, 10.388 ms of its 10.718 ms device time.
    let g = stats_graphs(VLLM);
    assert_eq!(g.len(), 1);
    assert!(
        g[0].0
            .starts_with("graph (421 kernels) @ execute_32_context_0"),
        "{}",
        g[0].0
    );
    assert_eq!((g[0].1, g[0].2), (1, 421));
    assert_eq!(g[0].3, 10_388_482);
    // flame: the graph's device time hangs under the frame that launched it, in a graph node.
    let (all, graph, parents) = device_stacks(VLLM);
    assert!(graph * 100 >= all * 96, "{graph} of {all} µs under a graph");
    assert_eq!(parents.len(), 1);
    assert!(parents[0].contains("replay"), "{parents:?}");
    // roofline: the graph's kernels are counted as not modelled, by graph.
    let r = json(&["roofline", &path(VLLM), "--json"]);
    let in_g = &r["in_graphs"][0];
    assert_eq!(in_g["count"], 421);
    assert_eq!(in_g["device_ns"], 10_388_482);
    assert!(run(&["roofline", &path(VLLM)]).contains("inside graphs, 421 kernels, not modelled"));
    // critical: the graph is one device node on the path.
    let c = json(&["critical", &path(VLLM), "--json"]);
    let top = &c["steps"][0]["top"][0];
    assert_eq!(top["name"], "graph (421 kernels) via hipGraphLaunch");
    assert_eq!(top["kind"], "kernel");
    let (s, e) = (top["start_ns"].as_i64(), top["end_ns"].as_i64());
    assert_eq!(e.zip(s).map(|(e, s)| e - s), Some(10_388_902));
}

#[test]
fn torch_cuda_graph_training_step_is_one_graph_per_step() {
    let g = stats_graphs(TORCH_GRAPH);
    assert_eq!(g.len(), 1);
    assert_eq!(g[0].0, "graph (479 kernels) @ ProfilerStep*");
    assert_eq!((g[0].1, g[0].2), (3, 479));
    let (all, graph, parents) = device_stacks(TORCH_GRAPH);
    assert!(graph > 0 && graph < all);
    assert_eq!(parents.len(), 1, "{parents:?}");
    let r = json(&["roofline", &path(TORCH_GRAPH), "--json"]);
    assert_eq!(r["in_graphs"][0]["count"], 3 * 479);
    // The steps are host-bound: the graph is off the path, but never split into kernels on it.
    let c = json(&["critical", &path(TORCH_GRAPH), "--json"]);
    for step in c["steps"].as_array().expect("steps") {
        for t in step["top"].as_array().expect("top") {
            let n = t["name"].as_str().unwrap_or("");
            assert!(t["kind"] != "kernel" || n.starts_with("graph ("), "{n}");
        }
    }
}

#[test]
fn torch_compile_and_jax_command_buffers_are_graphs() {
    let g = stats_graphs(TORCH_COMPILE);
    assert_eq!(g.len(), 2, "{g:?}");
    assert!(
        g.iter()
            .all(|r| r.1 == 3 && r.0.contains("@ ## Call CompiledFxGraph"))
    );
    let g = stats_graphs(JAX);
    assert!(!g.is_empty());
    assert!(
        g[0].0.starts_with("graph (") && g[0].0.ends_with("@ command_buffer_1"),
        "{g:?}"
    );
    let (_, graph, parents) = device_stacks(JAX);
    assert!(graph > 0);
    assert!(
        parents.iter().all(|p| p == "command_buffer::execute"),
        "{parents:?}"
    );
}

#[test]
fn a_capture_without_graphs_reads_as_before() {
    assert!(stats_graphs(TORCH_EAGER).is_empty());
    let c = json(&["stats", &path(TORCH_EAGER), "--json"]);
    assert!(c.get("graphs").is_none());
    assert!(!run(&["stats", &path(TORCH_EAGER)]).contains("CUDA/HIP graphs"));
    let (all, graph, _) = device_stacks(TORCH_EAGER);
    assert!(all > 0 && graph == 0);
    let r = json(&["roofline", &path(TORCH_EAGER), "--json"]);
    assert!(r.get("in_graphs").is_none());
}
