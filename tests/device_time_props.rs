//! Invariants of device time on random captures (ops nesting on a host thread, runtime launches
//! with correlation ids, kernels on two streams, some launched before the capture began):
//!
//! - `stacks --metric device` (no `--torch`) sums to the capture's device activity time: every
//!   activity is on its launching stack or under `(unlinked)`.
//! - `stats`: the host rows' self device time is the time of the activities whose launch is in
//!   the file and sits inside an op; a row's device total is at least its self device time.

use proptest::prelude::*;
use tracetui::analysis::flame::{DeviceLinks, Metric, Scope, TimeUnit, build, fold};
use tracetui::analysis::stats::{EventKind, StatsOptions, compute};
use tracetui::model::{ArgsRef, Capture, CaptureBuilder, Format, Key, SourceInfo, TrackKind};

/// One op with an optional nested op and a launch inside the innermost one; `unlinked`
/// kernels have a correlation id no launch has.
#[derive(Clone, Debug)]
struct Op {
    gap: i64,
    dur: i64,
    nested: bool,
    name: u8,
    launch: bool,
    kernel_dur: i64,
    stream: u8,
}

fn capture(ops: &[Op], unlinked: &[(i64, i64)]) -> (Capture, i64, i64) {
    let mut b = CaptureBuilder::new();
    let host = b.process(Key::Int(1));
    let gpu = b.process(Key::Int(0));
    b.process_mut(gpu).kind = tracetui::model::ProcessKind::Gpu;
    let thread = b.track(host, Key::Int(1), TrackKind::Thread);
    let streams = [
        b.track(gpu, Key::Int(7), TrackKind::GpuStream),
        b.track(gpu, Key::Int(8), TrackKind::GpuStream),
    ];
    let (cpu_op, runtime, kernel) = (
        b.intern("cpu_op"),
        b.intern("cuda_runtime"),
        b.intern("kernel"),
    );
    let launch_name = b.intern("cudaLaunchKernel");
    let k_name = b.intern("k");
    let (mut t, mut gpu_t, mut corr) = (0i64, 0i64, 100u64);
    let (mut linked, mut all) = (0i64, 0i64);
    let mut kernels = Vec::new();
    for o in ops {
        t += o.gap * 1000;
        let n = b.intern(&format!("op{}", o.name));
        let d = o.dur * 1000 + 4000;
        b.add_slice(thread, t, d, n, cpu_op, ArgsRef::NONE, 0);
        let (mut s, mut e) = (t + 1000, t + d - 1000);
        if o.nested {
            b.add_slice(thread, s, e - s, n, cpu_op, ArgsRef::NONE, 0);
            (s, e) = (s + 500, e - 500);
        }
        if o.launch {
            corr += 1;
            b.add_slice(
                thread,
                s,
                (e - s).min(500),
                launch_name,
                runtime,
                ArgsRef::NONE,
                corr,
            );
            gpu_t = gpu_t.max(t) + 2000;
            kernels.push((
                o.stream as usize % 2,
                gpu_t,
                o.kernel_dur * 1000 + 1000,
                corr,
            ));
            gpu_t += o.kernel_dur * 1000 + 1000;
            linked += o.kernel_dur * 1000 + 1000;
        }
        t += d;
    }
    for &(at, dur) in unlinked {
        corr += 1;
        kernels.push((
            0,
            -1_000_000 + at * 1000,
            dur * 1000 + 1000,
            1_000_000 + corr,
        ));
        all += dur * 1000 + 1000;
    }
    kernels.sort_by_key(|k| (k.0, k.1));
    for (s, start, dur, c) in kernels {
        b.add_slice(streams[s], start, dur, k_name, kernel, ArgsRef::NONE, c);
    }
    (
        b.finish(SourceInfo::default(), Format::Kineto),
        linked,
        linked + all,
    )
}

fn op() -> impl Strategy<Value = Op> {
    (
        0i64..5,
        0i64..20,
        any::<bool>(),
        0u8..3,
        any::<bool>(),
        0i64..30,
        0u8..2,
    )
        .prop_map(|(gap, dur, nested, name, launch, kernel_dur, stream)| Op {
            gap,
            dur,
            nested,
            name,
            launch,
            kernel_dur,
            stream,
        })
}

proptest! {
    #[test]
    fn device_stacks_sum_to_device_time(
        ops in proptest::collection::vec(op(), 1..30),
        unlinked in proptest::collection::vec((0i64..100, 0i64..20), 0..4),
    ) {
        let (c, linked, all) = capture(&ops, &unlinked);
        let links = DeviceLinks::of(&c);
        let tree = build(&c, &Scope::all(), Some(&links));
        let f = fold(&tree, &c.strings, Metric::Device, TimeUnit::Ns);
        let sum: i64 = f.lines.iter().map(|l| l.1 as i64).sum();
        // Values are whole ns; activity times here are whole µs.
        prop_assert_eq!(sum * 1000, all);

        let t = compute(&c, &StatsOptions::default());
        let host: i64 = t.rows.iter().filter(|r| r.kind == EventKind::CpuOp).map(|r| r.self_dev_ps).sum();
        prop_assert_eq!(host, linked);
        let dev: i64 = t.rows.iter().filter(|r| r.kind == EventKind::Kernel).map(|r| r.self_dev_ps).sum();
        prop_assert_eq!(dev, all);
        for r in &t.rows {
            prop_assert!(r.dev_total_ps >= r.self_dev_ps, "{:?}", r);
        }
        // Runtime calls keep no device time; a nested same-name op merged into its parent.
        for r in t.rows.iter().filter(|r| r.kind == EventKind::Runtime) {
            prop_assert_eq!(r.self_dev_ps, 0);
            prop_assert_eq!(r.dev_total_ps, 0);
        }
        let ops_count: u64 = t.rows.iter().filter(|r| r.kind == EventKind::CpuOp).map(|r| r.count).sum();
        prop_assert_eq!(ops_count, ops.len() as u64);
    }
}
