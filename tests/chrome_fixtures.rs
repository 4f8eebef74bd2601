//! Real-capture fixtures (tests/fixtures/chrome, see PROVENANCE.md there). Expected numbers were
//! counted independently with Python's `json` module (event counts per phase, flow ids with both
//! ends, `baseTimeNanoseconds` + first event `ts`).

use std::path::PathBuf;
use tracetui::formats::{Progress, chrome};
use tracetui::model::*;

fn fixture(name: &str) -> Capture {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/chrome")
        .join(name);
    chrome::load(&p, SourceInfo::default(), &Progress::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn warn_count(c: &Capture, kind: &str) -> u64 {
    c.warnings
        .iter()
        .find(|w| w.kind == kind)
        .map_or(0, |w| w.count)
}

fn counter_samples(c: &Capture) -> usize {
    c.counters.iter().map(|s| s.ts.len()).sum()
}

#[test]
fn catapult_begin_end_and_complete() {
    // trivial: 2 B/E pairs; tall: 18 pairs on 16 threads; simple: 8 B/E + 4 X, 6 I, 5 C, 3 P.
    let c = fixture("trivial_trace.json");
    assert_eq!(c.slices.len(), 2);
    assert!(c.warnings.is_empty());
    let c = fixture("tall_trace.json");
    assert_eq!(c.slices.len(), 18);
    assert_eq!(c.tracks.len(), 16);
    let c = fixture("simple_trace.json");
    assert_eq!(c.slices.len(), 12);
    assert_eq!(c.instants.ts.len(), 6);
    assert_eq!(counter_samples(&c), 5);
    assert_eq!(warn_count(&c, "skipped_phase_P"), 3);
    assert_eq!(c.format, Some(Format::Chrome));
}

#[test]
fn catapult_counters_instants_ns() {
    let c = fixture("instance_counters.json");
    assert_eq!(counter_samples(&c), 8);
    assert_eq!(c.slices.len(), 2);
    let c = fixture("instant_events.json");
    assert_eq!(c.instants.ts.len(), 5);
    // displayTimeUnit "ns" is display-only: ts stays µs.
    let c = fixture("nanoseconds.json");
    assert_eq!(c.slices.len(), 8);
    let k = c
        .strings
        .lookup("displayTimeUnit")
        .expect("kept as metadata");
    let v = c
        .args
        .get(c.metadata, k, &c.strings)
        .expect("metadata entry");
    assert_eq!(v.display(&c.strings), "ns");
    assert_eq!(c.span.0, 0);
}

#[test]
fn catapult_async_and_flows() {
    // Legacy S/T/F keyed per (pid, cat, id): 7 matched, 3 ends and 5 begins unmatched (incl. `b`).
    let c = fixture("async_begin_end.json");
    assert_eq!(c.slices.len(), 3 + 7 + 5);
    assert_eq!(c.instants.ts.len(), 7);
    assert_eq!(warn_count(&c, "unmatched_async_end"), 3);
    assert_eq!(warn_count(&c, "unmatched_async_begin"), 5);
    // Nestable b/e/n: 9 b, 9 e (one deliberately unmatched each), 2 n.
    let c = fixture("nestable_async.json");
    assert_eq!(c.slices.len(), 9);
    assert_eq!(c.instants.ts.len(), 2);
    assert_eq!(warn_count(&c, "unmatched_async_end"), 1);
    // Flows: s→t→f and s→f = 3 links, all resolved, 5 X slices.
    let c = fixture("flow_simple.json");
    assert_eq!(c.slices.len(), 5);
    assert_eq!(c.flows.len(), 3);
    assert!(
        c.flows
            .iter()
            .all(|f| f.from != NO_SLICE && f.to != NO_SLICE)
    );
}

#[test]
fn hta_cpu_only() {
    let c = fixture("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    assert_eq!(c.format, Some(Format::Kineto));
    assert_eq!(c.slices.len(), 16);
    assert_eq!(c.instants.ts.len(), 2);
    // baseTimeNanoseconds 1719853884000000000 + first ts 1212075548353.304 µs.
    assert_eq!(
        c.origin_epoch_ns,
        Some(1_719_853_884_000_000_000 + 1_212_075_548_353_304)
    );
    assert!(c.slices.start.contains(&0));
    let k = c.strings.lookup("distributedInfo").expect("metadata key");
    assert!(matches!(
        c.args.get(c.metadata, k, &c.strings),
        Some(ArgValue::Json(_))
    ));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn hta_triton_gpu() {
    let c = fixture("triton_example.json.gz");
    assert_eq!(c.slices.len(), 8);
    // 3 X events carry `correlation`; one kernel on pid 0 stream 7.
    assert_eq!(c.slices.corr.iter().filter(|&&x| x != 0).count(), 3);
    let gpu: Vec<&Track> = c
        .tracks
        .iter()
        .filter(|t| t.kind == TrackKind::GpuStream)
        .collect();
    assert_eq!(gpu.len(), 1);
    assert_eq!(gpu[0].key, Key::Int(7));
    assert_eq!(c.processes[gpu[0].process as usize].kind, ProcessKind::Gpu);
    // ac2g id 35: f listed before s; id 39 has only an s.
    assert_eq!(c.flows.len(), 1);
    let f = c.flows[0];
    assert_eq!(c.slice_name(f.from), "cuLaunchKernel");
    assert_eq!(c.slice_name(f.to), "triton_poi_fused_add_cos_sin_0");
    assert_eq!(warn_count(&c, "unresolved_flow"), 1);
    // ts 2413669097444.592 µs exact (base time 1727743122000000000).
    let k = (0..c.slices.len() as u32)
        .find(|&i| c.slices.kind(i as usize) == Category::Kernel)
        .unwrap();
    assert_eq!(c.slice_name(k), "triton_poi_fused_add_cos_sin_0");
    let abs_ns = c.origin_epoch_ns.unwrap() as i128 + c.slices.start[k as usize] as i128 / 1000;
    assert_eq!(abs_ns, 1_727_743_122_000_000_000 + 2_413_669_097_444_592);
    assert_eq!(c.slices.dur[k as usize], 1_760_000);
}

#[test]
fn hta_amd_flows() {
    let c = fixture("mi250_minitoy_train_ROCm6_2_kineto.json.gz");
    assert_eq!(c.slices.len(), 113);
    assert_eq!(c.instants.ts.len(), 2);
    // 25 ac2g ids: 20 with s and f (4 of them f first), 5 with only an f.
    assert_eq!(c.flows.len(), 20);
    assert_eq!(warn_count(&c, "unresolved_flow"), 5);
    assert_eq!(c.slices.corr.iter().filter(|&&x| x != 0).count(), 37);
    assert_eq!(
        c.tracks
            .iter()
            .filter(|t| t.kind == TrackKind::GpuStream)
            .count(),
        1
    );
}

#[test]
fn torch_cpu_cnn() {
    let c = fixture("worker0.torch-cpu-cnn.pt.trace.json.gz");
    assert_eq!(c.format, Some(Format::Kineto));
    assert_eq!(c.slices.len(), 1887);
    assert_eq!(c.instants.ts.len(), 564);
    assert_eq!(c.flows.len(), 24);
    assert!(
        c.flows
            .iter()
            .all(|f| f.from != NO_SLICE && f.to != NO_SLICE)
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    // baseTimeNanoseconds 1790857026000000000 + first ts 4454562956967.291 µs.
    assert_eq!(
        c.origin_epoch_ns,
        Some(1_790_857_026_000_000_000 + 4_454_562_956_967_291)
    );
}

#[test]
fn xprof_jax_export() {
    let c = fixture("vm.trace.json.gz");
    assert_eq!(c.format, Some(Format::XProfJson));
    // 16019 X, 18 M and the trailing {} placeholder (skipped silently).
    assert_eq!(c.slices.len(), 16019);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(c.span.0, 13_350_000);
}

#[test]
fn truncated_gzip_file_keeps_a_prefix() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/chrome/worker0.torch-cpu-cnn.pt.trace.json.gz");
    let bytes = std::fs::read(src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.pt.trace.json.gz");
    std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
    let c = chrome::load(&p, SourceInfo::default(), &Progress::default()).unwrap();
    assert!(
        c.slices.len() > 100 && c.slices.len() < 1887,
        "{}",
        c.slices.len()
    );
    assert!(c.warnings.iter().any(|w| w.kind == "gzip_error"));
    assert!(c.warnings.iter().any(|w| w.kind == "truncated"));
}

#[test]
fn gzip_streaming_fallback_matches() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/chrome/worker0.torch-cpu-cnn.pt.trace.json.gz");
    let a = chrome::load_gz_streaming(&src, SourceInfo::default(), &Progress::default()).unwrap();
    let b = fixture("worker0.torch-cpu-cnn.pt.trace.json.gz");
    assert_eq!(a.slices.start, b.slices.start);
    assert_eq!(a.slices.dur, b.slices.dur);
    assert_eq!(a.flows.len(), 24);
    assert_eq!(a.origin_epoch_ns, b.origin_epoch_ns);
    let bytes = std::fs::read(&src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.pt.trace.json.gz");
    std::fs::write(&p, &bytes[..bytes.len() / 3]).unwrap();
    let c = chrome::load_gz_streaming(&p, SourceInfo::default(), &Progress::default()).unwrap();
    assert!(
        c.slices.len() > 50 && c.slices.len() < 1887,
        "{}",
        c.slices.len()
    );
    assert!(c.warnings.iter().any(|w| w.kind == "truncated"));
}
