//! One launch linking rule for XPlane (`analysis::launch_link`), used by `gpu` and `rank`: on the
//! H200 JAX capture (30 CUDA-graph launches of 28 kernels each, 24 single-kernel launches) both
//! count 54 launches and 864 device activities, every one linked; the rank queue depth after a
//! graph launch counts the graph's kernels, as gpu's queue length does.

use std::path::Path;
use tracetui::analysis::gpu::{self, GpuOptions};
use tracetui::analysis::launch_link;
use tracetui::analysis::rank::{self, Mode};
use tracetui::formats::Progress;
use tracetui::model::NO_SLICE;

fn capture() -> tracetui::model::Capture {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/xplane/h200_jax_gpu_attn.xplane.pb.gz");
    tracetui::formats::load(
        &p,
        tracetui::model::SourceInfo::default(),
        &Progress::default(),
    )
    .expect("loads")
}

#[test]
fn gpu_and_rank_link_alike() {
    let c = capture();
    let l = launch_link::xplane_links(&c);
    assert_eq!(l.launches.by_corr.len(), 54);
    assert_eq!(l.activities.len(), 864);
    assert_eq!((l.linked_activities(), l.linked_launches()), (864, 54));
    let graph = l
        .launch
        .iter()
        .filter(|&&x| x != NO_SLICE && c.slice_name(x).starts_with("cuGraphLaunch"))
        .count();
    assert_eq!(graph, 30 * 28);

    let g = gpu::analyze(&c, &GpuOptions::default());
    let acts: u64 = g.streams.iter().map(|s| s.activities).sum();
    let unlinked: u64 = g.streams.iter().map(|s| s.unlinked).sum();
    assert_eq!((acts, unlinked), (864, 0));
    assert_eq!(g.host_correlated as usize, l.launches.host_correlated);

    for mode in [Mode::Default, Mode::Compat] {
        let r = rank::rank(&c, mode);
        assert_eq!(
            (r.launches, r.kernels, r.eval.linked),
            (54, 864, 54),
            "{mode:?}"
        );
        // A graph launch before any of its kernels started: depth 28 at least once.
        assert!(
            r.eval.queue_depth_max() >= 28,
            "{}",
            r.eval.queue_depth_max()
        );
    }
    let gmax = g.streams.iter().map(|s| s.queue.max).max().unwrap_or(0);
    let rmax = rank::rank(&c, Mode::Default).eval.queue_depth_max();
    assert_eq!(i64::from(rmax), gmax, "one stream: the same queue");
}
