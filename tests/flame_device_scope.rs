//! The merged flame keeps device work in the device scope: a GPU stream's `gpu_user_annotation`
//! `ProfilerStep#N` spans and its kernels go under the `(device)` root and never merge into the
//! host call tree. Fixture: tests/fixtures/gpu/h200_torch_cut.pt.trace.json.gz, cut from a real
//! H200 torch capture (tests/fixtures/gpu/PROVENANCE.md).

use std::path::Path;
use tracetui::analysis::flame::{DeviceLinks, FlameTree, ROOT, Scope, build, build_ancestors};
use tracetui::formats::{self, Progress};
use tracetui::model::{Capture, NO_SLICE, SourceInfo, TrackKind};

fn load() -> Capture {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gpu/h200_torch_cut.pt.trace.json.gz");
    formats::load(&p, SourceInfo::default(), &Progress::default()).expect("load fixture")
}

fn child(t: &FlameTree, c: &Capture, n: u32, name: &str) -> Option<u32> {
    t.children(n)
        .iter()
        .copied()
        .find(|&k| t.name_str(k, &c.strings) == name)
}

fn is_stream(c: &Capture, id: u32) -> bool {
    c.tracks[c.track_of(id) as usize].kind == TrackKind::GpuStream
}

#[test]
fn device_annotations_stay_out_of_the_host_tree() {
    let c = load();
    let links = DeviceLinks::of(&c);
    let t = build(&c, &Scope::all(), Some(&links));
    // Counted from the capture: host and device ProfilerStep spans.
    let steps = |dev: bool| {
        (0..c.slices.len() as u32)
            .filter(|&i| c.slice_name(i).starts_with("ProfilerStep#") && is_stream(&c, i) == dev)
            .count() as u64
    };
    let (host_steps, dev_steps) = (steps(false), steps(true));
    assert_eq!((host_steps, dev_steps), (1, 2));
    let host = child(&t, &c, ROOT, "ProfilerStep*").expect("host step root");
    assert_eq!(t.count(host), host_steps);
    let dev = child(&t, &c, ROOT, "(device)").expect("(device) root");
    let dstep = child(&t, &c, dev, "ProfilerStep*").expect("device step under (device)");
    assert_eq!(t.count(dstep), dev_steps);
    // Every root other than (device) holds host slices only; the device root holds every
    // stream slice without a parent, and its total is theirs.
    for &r in t.children(ROOT) {
        if r == dev {
            continue;
        }
        assert!(t.instances(r).iter().all(|&i| !is_stream(&c, i)));
    }
    let stream_roots: i64 = (0..c.slices.len())
        .filter(|&i| is_stream(&c, i as u32) && c.slices.parent[i] == NO_SLICE)
        .map(|i| c.slices.dur[i])
        .sum();
    assert_eq!(t.total(dev), stream_roots);
    assert_eq!(t.self_time(dev), 0);
    // The root is still every top-level slice of the capture.
    let all_roots: i64 = (0..c.slices.len())
        .filter(|&i| c.slices.parent[i] == NO_SLICE)
        .map(|i| c.slices.dur[i])
        .sum();
    assert_eq!(t.total(ROOT), all_roots);
}

#[test]
fn search_hits_on_device_work_sit_under_the_device_root() {
    let c = load();
    let ids: Vec<u32> = (0..c.slices.len() as u32)
        .filter(|&i| c.slice_name(i).starts_with("ProfilerStep#"))
        .collect();
    let t = build_ancestors(&c, &ids, None);
    let host = child(&t, &c, ROOT, "ProfilerStep*").expect("host step root");
    assert_eq!(t.count(host), 1);
    let dev = child(&t, &c, ROOT, "(device)").expect("(device) root");
    assert_eq!(
        t.count(child(&t, &c, dev, "ProfilerStep*").expect("device step")),
        2
    );
}
