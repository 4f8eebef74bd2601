//! Unit and property tests of the statistics tables.
use super::*;
use crate::model::*;
use proptest::prelude::*;

/// Every event (the mechanics under test), not the PyTorch default of torch's event set.
fn every() -> StatsOptions {
    StatsOptions {
        every: true,
        ..StatsOptions::default()
    }
}

fn capture(events: &[(u32, i64, i64, &str, &str)]) -> Capture {
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(1));
    for &(tid, s, d, name, cat) in events {
        let t = b.track(p, Key::Int(i64::from(tid)), TrackKind::Thread);
        let n = b.intern(name);
        let c = b.intern(cat);
        b.add_slice(t, s, d, n, c, ArgsRef::NONE, 0);
    }
    b.finish(SourceInfo::default(), Format::Kineto)
}

fn row<'a>(t: &'a StatsTable, name: &str) -> &'a StatRow {
    t.rows.iter().find(|r| r.name == name).expect("row")
}

#[test]
fn empty_names_get_a_row_that_says_so() {
    let c = capture(&[
        (1, 0, 10, "", "cpu_op"),
        (1, 20, 5, "", "cpu_op"),
        (1, 30, 5, "a", "cpu_op"),
    ]);
    let t = compute(&c, &every());
    assert!(t.rows.iter().all(|r| !r.name.is_empty()));
    let r = row(&t, group::UNNAMED);
    assert_eq!((r.count, r.total_ps), (2, 15));
}

#[test]
fn self_time_and_profiler_steps() {
    let c = capture(&[
        (1, 0, 100, "ProfilerStep#1", "user_annotation"),
        (1, 10, 30, "aten::mm", "cpu_op"),
        (1, 15, 5, "py", "python_function"),
        (1, 50, 20, "aten::mm", "cpu_op"),
        (1, 200, 50, "ProfilerStep#2", "user_annotation"),
        (2, 0, 10, "aten::mm", "Operator"),
    ]);
    let all = compute(&c, &every());
    assert_eq!(row(&all, "ProfilerStep*").count, 2);
    assert_eq!(row(&all, "ProfilerStep*").self_ps, 100 - 30 - 20 + 50);
    assert_eq!(row(&all, "aten::mm").self_ps, 30 - 5 + 20 + 10);
    assert_eq!(all.total_self_ps, 150 + 10);
    let opts = StatsOptions {
        cats: Some(vec!["cpu_op".into(), "user_annotation".into()]),
        ..every()
    };
    let t = compute(&c, &opts);
    assert!(t.rows.iter().all(|r| r.name != "py"));
    // legacy `Operator` matches `cpu_op`
    let mm = row(&t, "aten::mm");
    assert_eq!((mm.count, mm.total_ps, mm.self_ps), (3, 60, 60));
    assert_eq!((mm.min_ps, mm.max_ps), (Some(10), Some(30)));
    let opts = StatsOptions {
        nest_cats: vec!["python_function".into()],
        ..opts
    };
    let t = compute(&c, &opts);
    assert_eq!(row(&t, "aten::mm").self_ps, 55);
    assert!(t.rows.iter().all(|r| r.name != "py"));
}

#[test]
fn track_filters_and_sorting() {
    let c = capture(&[
        (1, 0, 10, "a", "x"),
        (2, 0, 30, "b", "x"),
        (2, 40, 1, "c", "x"),
    ]);
    let opts = StatsOptions {
        line: Some(Regex::new("tid 2$").expect("regex")),
        ..every()
    };
    let mut t = compute(&c, &opts);
    sort_rows(&mut t.rows, SortKey::Name);
    let names: Vec<&str> = t.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, vec!["b", "c"]);
    sort_rows(&mut t.rows, SortKey::SelfTime);
    assert_eq!(t.rows[0].name, "b");
    assert!((t.self_pct(&t.rows[0]) - 3000.0 / 31.0).abs() < 1e-9);
}

#[test]
fn unified_names_and_aggregated_events() {
    let mut b = CaptureBuilder::new();
    let host = b.process(Key::Int(1));
    let gpu = b.process(Key::Int(2));
    b.process_mut(gpu).kind = ProcessKind::Gpu;
    let ht = b.track(host, Key::Int(1), TrackKind::XLine);
    let gt = b.track(gpu, Key::Int(1), TrackKind::XLine);
    let (fusion, jit, hm, pid) = (
        b.intern("fusion"),
        b.intern("jit_f"),
        b.intern("hlo_module"),
        b.intern("program_id"),
    );
    b.args.begin();
    b.args.push(hm, ArgValue::Str(jit));
    b.args.push(pid, ArgValue::I64(9));
    let a = b.args.finish();
    b.add_slice(gt, 0, 10, fusion, StrId::EMPTY, a, 0);
    b.add_slice(gt, 20, 30, fusion, StrId::EMPTY, a, 0);
    b.add_slice(gt, 60, 5, fusion, StrId::EMPTY, ArgsRef::NONE, 0);
    b.add_slice(ht, 0, 7, fusion, StrId::EMPTY, a, 0);
    b.add_aggregated(gt, jit, 4, 100);
    let c = b.finish(SourceInfo::default(), Format::XPlane);
    let t = compute(
        &c,
        &StatsOptions {
            unified: true,
            ..every()
        },
    );
    let r = row(&t, "jit_f(9-None)");
    assert_eq!(
        (r.count, r.total_ps, r.min_ps, r.max_ps),
        (2, 40, Some(10), Some(30))
    );
    assert_eq!(row(&t, "fusion(None-None)").count, 1);
    // host events keep their name
    assert_eq!(row(&t, "fusion").total_ps, 7);
    // aggregated: occurrences and total, no min/max
    let r = row(&t, "jit_f(None-None)");
    assert_eq!(
        (r.count, r.total_ps, r.self_ps, r.min_ps),
        (4, 100, 100, None)
    );
    // without --unified the aggregated row merges with nothing and keeps its name; the device
    // plane's `fusion` ops and the host's `fusion` are two rows (issue 52 §5)
    let t = compute(&c, &every());
    let of = |t: &StatsTable, name: &str, kind: EventKind| {
        t.rows
            .iter()
            .find(|r| r.name == name && r.kind == kind)
            .map(|r| r.count)
    };
    assert_eq!(of(&t, "jit_f", EventKind::DeviceOp), Some(4));
    assert_eq!(of(&t, "fusion", EventKind::DeviceOp), Some(3));
    assert_eq!(of(&t, "fusion", EventKind::Other), Some(1));
    // a --cat filter leaves aggregated (category-less) events out
    let t = compute(
        &c,
        &StatsOptions {
            cats: Some(vec!["other".into()]),
            ..every()
        },
    );
    assert!(t.rows.iter().all(|r| r.name != "jit_f"));
    assert_eq!(of(&t, "fusion", EventKind::DeviceOp), Some(3));
    assert_eq!(of(&t, "fusion", EventKind::Other), Some(1));
}

#[test]
fn grouping_by_category_and_stats_with_a_none_row() {
    // One track: A[0,100) {hlo_op "dot", tf_op "mm:MatMul"} ⊃ B[10,40) {hlo_op "add"}
    // ⊃ C[20,25) (no stats); D[50,60) {hlo_op 7}; track 2: E[0,10) {hlo_op "dot"}.
    let mut b = CaptureBuilder::new();
    let p1 = b.process(Key::Int(1));
    let p2 = b.process(Key::Int(2));
    let t1 = b.track(p1, Key::Int(1), TrackKind::Thread);
    let t2 = b.track(p2, Key::Int(2), TrackKind::Thread);
    let (hlo, tf) = (b.intern("hlo_op"), b.intern("tf_op"));
    let (dot, add, mm) = (b.intern("dot"), b.intern("add"), b.intern("mm:MatMul"));
    let args = |b: &mut CaptureBuilder, pairs: &[(StrId, ArgValue)]| {
        b.args.begin();
        for &(k, v) in pairs {
            b.args.push(k, v);
        }
        b.args.finish()
    };
    let a_args = args(
        &mut b,
        &[(hlo, ArgValue::Str(dot)), (tf, ArgValue::Str(mm))],
    );
    let b_args = args(&mut b, &[(hlo, ArgValue::Str(add))]);
    let d_args = args(&mut b, &[(hlo, ArgValue::I64(7))]);
    let e_args = args(&mut b, &[(hlo, ArgValue::Str(dot))]);
    let ev = [
        (t1, 0, 100, "A", "cpu_op", a_args),
        (t1, 10, 30, "B", "kernel", b_args),
        (t1, 20, 5, "C", "cpu_op", ArgsRef::NONE),
        (t1, 50, 10, "D", "", d_args),
        (t2, 0, 10, "E", "kernel", e_args),
    ];
    for (t, s, d, n, c, a) in ev {
        let (n, c) = (b.intern(n), b.intern(c));
        b.add_slice(t, s, d, n, c, a, 0);
    }
    let c = b.finish(SourceInfo::default(), Format::Kineto);
    let summary = |opts: &StatsOptions| {
        let mut rows: Vec<(String, u64, Ps, Ps)> = compute(&c, opts)
            .rows
            .into_iter()
            .map(|r| (r.name, r.count, r.total_ps, r.self_ps))
            .collect();
        rows.sort();
        rows
    };
    let by = |group| StatsOptions { group, ..every() };
    let s = |n: &str, k, t, sp| (n.to_string(), k, t, sp);
    // self: A 100-30-10 = 60, B 30-5 = 25, C 5, D 10, E 10
    assert_eq!(
        summary(&by(GroupBy::Category)),
        vec![
            s("(none)", 1, 10, 10),
            s("cpu_op", 2, 105, 65),
            s("kernel", 2, 40, 35)
        ]
    );
    assert_eq!(
        summary(&by(GroupBy::HloOp)),
        vec![
            s("(none)", 1, 5, 5),
            s("7", 1, 10, 10),
            s("add", 1, 30, 25),
            s("dot", 2, 110, 70)
        ]
    );
    assert_eq!(
        summary(&by(GroupBy::TfOp)),
        vec![s("(none)", 4, 55, 50), s("mm:MatMul", 1, 100, 60)]
    );
    // Filters: process 2 only; track 0 only with a range; a category.
    let o = StatsOptions {
        process: Some(1),
        ..by(GroupBy::HloOp)
    };
    assert_eq!(summary(&o), vec![s("dot", 1, 10, 10)]);
    let o = StatsOptions {
        track: Some(0),
        range: Some((5, 50)),
        ..every()
    };
    assert_eq!(summary(&o), vec![s("B", 1, 30, 25), s("C", 1, 5, 5)]);
    let o = StatsOptions {
        cats: Some(vec!["kernel".into()]),
        ..by(GroupBy::Category)
    };
    // Without cpu_op events in the nesting, B has no child: self = 30.
    assert_eq!(summary(&o), vec![s("kernel", 2, 40, 40)]);
    assert_eq!(GroupBy::TfOp.next(), GroupBy::Name);
}

proptest! {
    /// Self time of every name equals a brute-force computation: for each event, its duration
    /// minus the durations of the events whose torch parent it is (found by an O(n²) search
    /// of the innermost earlier containing event, which equals the stack rule on nested input).
    #[test]
    fn matches_brute_force_on_nested_input(spec in proptest::collection::vec((0u8..4, 1i64..6), 1..40)) {
        // Build properly nested events from a random walk: (depth change, duration weight).
        let mut ev: Vec<(i64, i64, String)> = Vec::new();
        let mut open: Vec<(i64, usize)> = Vec::new(); // (end, idx)
        let mut t = 0i64;
        for (k, (op, w)) in spec.iter().enumerate() {
            while let Some(&(e, _)) = open.last() { if e <= t { open.pop(); } else { break; } }
            let limit = open.last().map_or(t + 1000, |o| o.0);
            let dur = ((limit - t) * w / 6).max(0);
            ev.push((t, dur, format!("n{}", k % 3)));
            if *op > 0 { open.push((t + dur, ev.len() - 1)); t += 1; } else { t += dur.max(1); }
        }
        let events: Vec<(u32, i64, i64, &str, &str)> =
            ev.iter().map(|(s, d, n)| (1, *s, *d, n.as_str(), "cpu_op")).collect();
        let c = capture(&events);
        let table = compute(&c, &every());
        // brute force over the sorted slices of the capture
        let s = &c.slices;
        let n = s.len();
        let mut selfv: Vec<i64> = s.dur.clone();
        for i in 0..n {
            // innermost earlier (in sort order) event that strictly contains i
            let par = (0..i).rev().find(|&j| s.start[j] <= s.start[i] && s.end(i) <= s.end(j) && s.start[i] < s.end(j));
            if let Some(j) = par { selfv[j] -= s.dur[i]; }
        }
        for r in &table.rows {
            let want: i64 = (0..n).filter(|&i| c.slice_name(i as u32) == r.name).map(|i| selfv[i]).sum();
            prop_assert_eq!(r.self_ps, want);
        }
    }
}

/// A Kineto-like capture: the profiler's own span on `Spans`, CPU ops and a runtime call on
/// two threads, kernels and a memcpy on one stream, `aten::mm` also as a (fake) kernel name,
/// and two instant events.
fn kineto_like() -> Capture {
    let mut b = CaptureBuilder::new();
    let host = b.process(Key::Int(1));
    let spans_key = b.intern("Spans");
    let spans = b.process(Key::Str(spans_key));
    let gpu = b.process(Key::Int(0));
    b.process_mut(gpu).kind = ProcessKind::Gpu;
    let prof = b.intern("PyTorch Profiler");
    let t_prof = b.track(spans, Key::Str(prof), TrackKind::Thread);
    let t1 = b.track(host, Key::Int(1), TrackKind::Thread);
    let t2 = b.track(host, Key::Int(2), TrackKind::Thread);
    let s7 = b.track(gpu, Key::Int(7), TrackKind::GpuStream);
    let add = |b: &mut CaptureBuilder, t, s, d, name: &str, cat: &str| {
        let (n, c) = (b.intern(name), b.intern(cat));
        b.add_slice(t, s, d, n, c, ArgsRef::NONE, 0);
    };
    add(&mut b, t_prof, 0, 1000, "PyTorch Profiler (0)", "Trace");
    add(&mut b, t1, 10, 100, "aten::mm", "cpu_op");
    add(&mut b, t1, 20, 30, "cudaLaunchKernel", "cuda_runtime");
    add(&mut b, t2, 10, 50, "aten::mm", "cpu_op");
    add(&mut b, s7, 60, 40, "aten::mm", "kernel");
    add(&mut b, s7, 100, 20, "Memcpy HtoD", "gpu_memcpy");
    let (mem, cat) = (b.intern("[memory]"), b.intern("cpu_instant_event"));
    b.add_instant(t1, 15, mem, cat, ArgsRef::NONE, b't');
    b.add_instant(t2, 500, mem, cat, ArgsRef::NONE, b't');
    b.finish(SourceInfo::default(), Format::Kineto)
}

#[test]
fn profiler_spans_are_left_out_unless_asked_for() {
    let c = kineto_like();
    let t = compute(&c, &every());
    assert!(t.rows.iter().all(|r| r.name != "PyTorch Profiler (0)"));
    assert!(t.kind(EventKind::Profiler).is_none());
    let p = profiler_events(&c);
    assert_eq!(
        (p.events, p.names.clone()),
        (1, vec!["PyTorch Profiler (0)".to_string()])
    );
    for opts in [
        StatsOptions {
            profiler: true,
            ..every()
        },
        StatsOptions {
            cats: Some(vec!["Trace".into()]),
            ..every()
        },
    ] {
        let t = compute(&c, &opts);
        let r = row(&t, "PyTorch Profiler (0)");
        assert_eq!((r.kind, r.count, r.self_ps), (EventKind::Profiler, 1, 1000));
    }
    // The categories a `--cat` / the `c` key offers: most events first, no profiler ones.
    let cats = categories(&c);
    assert_eq!(
        &cats[..2],
        [
            ("cpu_instant_event".to_string(), 2),
            ("cpu_op".to_string(), 2)
        ]
    );
    assert!(cats.iter().all(|(c, _)| c != "Trace"));
    assert!(
        cats.iter()
            .any(|(c, n)| c == "cpu_instant_event" && *n == 2)
    );
}

#[test]
fn kinds_stay_apart_and_say_what_they_sum() {
    let c = kineto_like();
    let t = compute(&c, &every());
    // `aten::mm` as a CPU op (two threads) and as a kernel: two rows.
    let mm: Vec<(EventKind, u64, Ps)> = t
        .rows
        .iter()
        .filter(|r| r.name == "aten::mm")
        .map(|r| (r.kind, r.count, r.self_ps))
        .collect();
    assert_eq!(mm.len(), 2);
    assert!(mm.contains(&(EventKind::CpuOp, 2, 70 + 50)));
    assert!(mm.contains(&(EventKind::Kernel, 1, 40)));
    let cpu = t.kind(EventKind::CpuOp).expect("cpu ops");
    assert_eq!((cpu.threads, cpu.streams, cpu.self_ps), (2, 0, 120));
    assert_eq!(cpu.over(), "2 threads");
    let k = t.kind(EventKind::Kernel).expect("kernels");
    assert_eq!(
        (k.threads, k.streams, k.over().as_str()),
        (0, 1, "1 stream")
    );
    assert_eq!(t.kind(EventKind::Runtime).map(|k| k.self_ps), Some(30));
    assert_eq!(t.kind(EventKind::Memcpy).map(|k| k.count), Some(1));
    // SELF % is a share of the row's own kind.
    let kernel_mm = t
        .rows
        .iter()
        .find(|r| r.name == "aten::mm" && r.kind == EventKind::Kernel)
        .expect("kernel row");
    assert!((t.self_pct(kernel_mm) - 100.0).abs() < 1e-9);
    // Sorted: kinds in table order, then the key.
    let mut rows = t.rows.clone();
    sort_rows(&mut rows, SortKey::SelfTime);
    let kinds: Vec<EventKind> = rows.iter().map(|r| r.kind).collect();
    let mut want = kinds.clone();
    want.sort();
    assert_eq!(kinds, want);
    // One row per kind.
    let by_kind = compute(
        &c,
        &StatsOptions {
            group: GroupBy::Kind,
            ..every()
        },
    );
    let names: Vec<&str> = by_kind.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(by_kind.rows.len(), 5, "{names:?}");
    assert_eq!(row(&by_kind, "GPU kernels").total_ps, 40);
}

#[test]
fn instant_events_are_counted_without_duration() {
    let c = kineto_like();
    let t = compute(&c, &every());
    let r = row(&t, "[memory]");
    assert_eq!(
        (r.kind, r.count, r.total_ps, r.min_ps, r.timed()),
        (EventKind::Instant, 2, 0, None, false)
    );
    assert_eq!(t.kind(EventKind::Instant).map(|k| k.threads), Some(2));
    // A range counts the instants in it; the fast path agrees.
    let opts = StatsOptions {
        range: Some((0, 100)),
        ..every()
    };
    assert_eq!(row(&compute(&c, &opts), "[memory]").count, 1);
    let st = crate::analysis::stats_index::SelfTimes::new(&c, &opts);
    let fast = crate::analysis::stats_index::compute_with(&c, &st, &opts);
    assert_eq!(row(&fast, "[memory]").count, 1);
    // A category filter applies to them too.
    let opts = StatsOptions {
        cats: Some(vec!["cpu_op".into()]),
        ..every()
    };
    assert!(compute(&c, &opts).rows.iter().all(|r| r.name != "[memory]"));
}
