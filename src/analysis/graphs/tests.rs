use super::*;
use crate::model::SourceInfo;
use std::path::Path;

pub(crate) fn load(rel: &str) -> Capture {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    crate::formats::load(
        &p,
        SourceInfo::default(),
        &crate::formats::Progress::default(),
    )
    .expect("load fixture")
}

pub(crate) const VLLM: &str = "inference/vllm_decode_full.json.gz";
pub(crate) const TORCH_GRAPH: &str = "torch_gpu/worker0.1795882105227733644.pt.trace.json.gz";
pub(crate) const TORCH_COMPILE: &str = "torch_gpu/worker0.1795885472423495775.pt.trace.json.gz";
pub(crate) const TORCH_EAGER: &str = "torch_gpu/worker0.1795774111709892780.pt.trace.json.gz";

/// The brute force: for every graph-launch-named slice, every device slice with its
/// correlation id (Kineto's `correlation`), grouped by (enclosing op name, name sequence).
fn brute(c: &Capture) -> Vec<(String, Vec<String>, usize)> {
    let s = &c.slices;
    let mut groups: Vec<(String, Vec<String>, usize)> = Vec::new();
    let mut launches: Vec<u32> = (0..s.len() as u32)
        .filter(|&i| is_graph_launch_name(c.slice_name(i)) && s.corr(i as usize) != 0)
        .collect();
    launches.sort_by_key(|&i| (s.start[i as usize], i));
    for l in launches {
        let corr = s.corr(l as usize);
        let mut ks: Vec<u32> = (0..s.len() as u32)
            .filter(|&k| {
                k != l
                    && s.corr(k as usize) == corr
                    && crate::analysis::flame::build::is_device_track(c, c.track_of(k))
            })
            .collect();
        if ks.is_empty() {
            continue;
        }
        ks.sort_by_key(|&k| (s.start[k as usize], k));
        let names: Vec<String> = ks.iter().map(|&k| c.slice_name(k).to_string()).collect();
        // Enclosing op: the innermost cpu_op / user_annotation containing it on its track.
        let t = c.track_of(l);
        let (a, z) = (s.start[l as usize], s.end(l as usize));
        let tr = &c.tracks[t as usize];
        let op = (tr.slices.0..tr.slices.1)
            .filter(|&p| {
                p != l
                    && matches!(
                        s.kind(p as usize),
                        Category::CpuOp | Category::UserAnnotation
                    )
                    && s.start[p as usize] <= a
                    && s.end(p as usize) >= z
                    && (s.dur[p as usize] > s.dur[l as usize])
            })
            .min_by_key(|&p| s.dur[p as usize])
            .map_or(String::new(), |p| group_name(c.slice_name(p)).to_string());
        match groups.iter_mut().find(|g| g.0 == op && g.1 == names) {
            Some(g) => g.2 += 1,
            None => groups.push((op, names, 1)),
        }
    }
    groups
}

fn check_against_brute(rel: &str) -> (Capture, GraphLaunches) {
    let c = load(rel);
    let g = GraphLaunches::of(&c);
    let want = brute(&c);
    let got: Vec<(String, Vec<String>, usize)> = g
        .groups(&c)
        .iter()
        .map(|gr| {
            let first = &g.launches[gr.launches[0] as usize];
            let names = g
                .kernels_of(first)
                .iter()
                .map(|&k| c.slice_name(k).to_string())
                .collect();
            (gr.host_op.clone(), names, gr.launches.len())
        })
        .collect();
    let short = |v: &[(String, Vec<String>, usize)]| -> Vec<(String, usize, usize)> {
        v.iter().map(|g| (g.0.clone(), g.1.len(), g.2)).collect()
    };
    assert_eq!(short(&got), short(&want), "{rel}");
    assert!(got == want, "{rel}: kernel sequences differ");
    (c, g)
}

#[test]
fn vllm_decode_is_one_graph_of_421_kernels() {
    let (c, g) = check_against_brute(VLLM);
    assert_eq!(g.launches.len(), 1);
    let l = &g.launches[0];
    assert_eq!(c.slice_name(l.launch), "hipGraphLaunch");
    assert_eq!(l.kernel_count(), 421);
    assert!(c.slice_name(l.host_op).starts_with("execute_32_context_0"));
    assert_eq!(l.streams.len(), 1);
    // 10 388.482 µs of kernels (python over the JSON).
    assert!(
        (l.busy_ps - 10_388_482_000).abs() < 1_000_000,
        "{}",
        l.busy_ps
    );
    assert!(l.span.1 - l.span.0 >= l.busy_ps);
}

#[test]
fn torch_graph_replays_group_by_step() {
    let (c, g) = check_against_brute(TORCH_GRAPH);
    assert_eq!(g.launches.len(), 3);
    let groups = g.groups(&c);
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].host_op, "ProfilerStep*");
    assert_eq!(groups[0].kernels_per_launch, 479);
    assert_eq!(groups[0].label(), "graph (479 kernels) @ ProfilerStep*");
}

#[test]
fn torch_compile_graphs_are_forward_and_backward() {
    let (c, g) = check_against_brute(TORCH_COMPILE);
    assert_eq!(g.launches.len(), 6);
    let groups = g.groups(&c);
    assert_eq!(groups.len(), 2);
    assert!(groups.iter().all(|gr| gr.launches.len() == 3));
    assert!(groups[0].host_op.starts_with("## Call CompiledFxGraph"));
}

#[test]
fn eager_capture_has_no_graph() {
    let c = load(TORCH_EAGER);
    assert!(GraphLaunches::of(&c).is_empty());
    assert!(is_graph_launch_name("cudaGraphLaunch_v10000"));
    assert!(is_graph_launch_name("cuGraphLaunch"));
    assert!(!is_graph_launch_name("cudaLaunchKernel"));
    assert!(!is_graph_launch_name("cudaGraphInstantiate"));
}

mod props {
    use super::*;
    use crate::model::{ArgsRef, CaptureBuilder, Format, Key, ProcessKind, TrackKind};
    use proptest::prelude::*;

    /// One host op: (op name 0..2, is a graph launch, kernels as (name 0..3, stream 0..2)).
    type Op = (u8, bool, Vec<(u8, u8)>);

    fn capture(ops: &[Op]) -> Capture {
        let mut b = CaptureBuilder::new();
        let host = b.process(Key::Int(1));
        b.process_mut(host).kind = ProcessKind::Host;
        let gpu = b.process(Key::Int(2));
        b.process_mut(gpu).kind = ProcessKind::Gpu;
        let th = b.track(host, Key::Int(1), TrackKind::Thread);
        let st = [
            b.track(gpu, Key::Int(7), TrackKind::GpuStream),
            b.track(gpu, Key::Int(8), TrackKind::GpuStream),
        ];
        let (cpu, rt, kc) = (
            b.intern("cpu_op"),
            b.intern("cuda_runtime"),
            b.intern("kernel"),
        );
        let ops_n = [b.intern("opA"), b.intern("opB")];
        let launch_n = [b.intern("cudaLaunchKernel"), b.intern("cudaGraphLaunch")];
        let kern_n = [b.intern("k0"), b.intern("k1"), b.intern("k2")];
        let step = b.intern("ProfilerStep#1");
        let ua = b.intern("user_annotation");
        let us = 1_000_000;
        let n = ArgsRef::NONE;
        b.add_slice(th, 0, (ops.len() as i64 + 1) * 100 * us, step, ua, n, 0);
        let mut dev = [0i64; 2];
        for (k, (op, graph, ks)) in ops.iter().enumerate() {
            let t = (k as i64 * 100 + 10) * us;
            let corr = k as u64 + 1;
            b.add_slice(th, t, 50 * us, ops_n[*op as usize % 2], cpu, n, 0);
            b.add_slice(
                th,
                t + 10 * us,
                10 * us,
                launch_n[usize::from(*graph)],
                rt,
                n,
                corr,
            );
            for &(name, s) in ks {
                let s = s as usize % 2;
                dev[s] = dev[s].max(t + 20 * us) + us;
                b.add_slice(
                    st[s],
                    dev[s],
                    3 * us,
                    kern_n[name as usize % 3],
                    kc,
                    n,
                    corr,
                );
                dev[s] += 3 * us;
            }
        }
        b.finish(SourceInfo::default(), Format::Kineto)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn grouping_matches_the_brute_force(
            ops in proptest::collection::vec(
                (0u8..2, any::<bool>(), proptest::collection::vec((0u8..3, 0u8..2), 0..4)),
                0..12,
            )
        ) {
            let c = capture(&ops);
            let g = GraphLaunches::of(&c);
            let want = brute(&c);
            let got: Vec<(String, Vec<String>, usize)> = g
                .groups(&c)
                .iter()
                .map(|gr| {
                    let first = &g.launches[gr.launches[0] as usize];
                    let names = g.kernels_of(first).iter().map(|&k| c.slice_name(k).to_string()).collect();
                    (gr.host_op.clone(), names, gr.launches.len())
                })
                .collect();
            prop_assert_eq!(got, want);
            let launched = ops.iter().filter(|o| o.1 && !o.2.is_empty()).count();
            prop_assert_eq!(g.launches.len(), launched);
            let busy: Ps = g.launches.iter().map(|l| l.busy_ps).sum();
            let kernels: usize = ops.iter().filter(|o| o.1).map(|o| o.2.len()).sum();
            prop_assert_eq!(busy, kernels as i64 * 3_000_000);
        }
    }
}

#[test]
fn flame_puts_the_graph_under_the_launching_frame() {
    use crate::analysis::flame::{DeviceLinks, Scope, build, tree::graph_name};
    let c = load(VLLM);
    let links = DeviceLinks::of(&c);
    let t = build(&c, &Scope::all(), Some(&links));
    let nodes = t.nodes_named(graph_name(421));
    assert_eq!(nodes.len(), 1);
    let n = nodes[0];
    assert_eq!(t.name_str(n, &c.strings), "graph (421 kernels)");
    assert_eq!(t.count(n), 1);
    let g = GraphLaunches::of(&c);
    assert_eq!(t.device(n), g.busy_ps());
    // Beside the launch call, not under it; the launch call keeps no device time.
    let parent = t.parent(n);
    let launch = t
        .children(parent)
        .iter()
        .copied()
        .find(|&k| t.name_str(k, &c.strings) == "hipGraphLaunch")
        .expect("launch node beside the graph");
    assert_eq!(t.device(launch), 0);
    assert_eq!(t.children(n).len(), {
        let mut names: Vec<_> = g
            .kernels
            .iter()
            .map(|&k| c.slices.name[k as usize])
            .collect();
        names.sort_unstable();
        names.dedup();
        names.len()
    });
}
