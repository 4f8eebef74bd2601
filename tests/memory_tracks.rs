//! Memory tracks from hand-made captures: alloc/free pairs, reuse of an address, a free without
//! its alloc, several devices, an OOM, call stacks, attribution to the innermost op of the same
//! thread; XPlane allocator events with their stats; the live-set index against brute force; and
//! torch's key_averages memory columns against a brute-force reference.

use proptest::prelude::*;
use prost::Message;
use tracetui::analysis::memory::{build, key_averages};
use tracetui::formats::xplane::generated::{
    XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata, x_event, x_stat,
};
use tracetui::formats::{Progress, chrome, xplane};
use tracetui::model::memory::{Allocations, LIVE_AT_END, LiveIndex, NO_OP};
use tracetui::model::{Capture, SourceInfo};

fn mem(ts: f64, tid: i64, bytes: i64, addr: u64, total: i64, dev: (i64, i64)) -> String {
    format!(
        r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":{tid},"ts":{ts},"args":{{"Total Reserved":{res},"Total Allocated":{total},"Bytes":{bytes},"Addr":{addr},"Device Id":{},"Device Type":{}}}}}"#,
        dev.1,
        dev.0,
        res = total.max(0) * 2,
    )
}

fn op(name: &str, tid: i64, ts: f64, dur: f64) -> String {
    format!(
        r#"{{"ph":"X","cat":"cpu_op","name":"{name}","pid":1,"tid":{tid},"ts":{ts},"dur":{dur}}}"#
    )
}

const CPU: (i64, i64) = (0, -1);
const GPU: (i64, i64) = (1, 0);

fn hand_made() -> Capture {
    let ev = [
        op("outer", 1, 0.0, 100.0),
        op("inner", 1, 10.0, 20.0),
        op("other_thread", 2, 0.0, 100.0),
        // CPU: a at 0x10 (inner), freed at 50; b at 0x20 (outer) live at end; reuse of 0x30.
        mem(15.0, 1, 64, 0x10, 64, CPU),
        mem(40.0, 1, 128, 0x20, 192, CPU),
        mem(50.0, 1, -64, 0x10, 128, CPU),
        mem(60.0, 1, 32, 0x30, 160, CPU),
        mem(70.0, 1, 16, 0x30, 176, CPU),
        // free of memory allocated before recording
        mem(80.0, 1, -8, 0x99, 168, CPU),
        // GPU on thread 2, outside any op of thread 1's
        mem(5.0, 2, 1000, 0xA0, 1000, GPU),
        mem(200.0, 2, -1000, 0xA0, 0, GPU),
        r#"{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[OutOfMemory]","pid":1,"tid":2,"ts":90,"args":{"Total Reserved":4096,"Total Allocated":2048,"Bytes":999999,"Device Id":0,"Device Type":1}}"#.to_string(),
        r#"{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":95,"args":{"Total Reserved":0,"Total Allocated":200,"Bytes":24,"Addr":64,"Device Id":-1,"Device Type":0,"Call stack":"f.py(3): g;f.py(9): main"}}"#.to_string(),
    ];
    let json = format!("{{\"traceEvents\":[{}]}}", ev.join(",\n"));
    chrome::load_bytes(json.as_bytes(), SourceInfo::default(), &Progress::default()).expect("loads")
}

#[test]
fn kineto_tracks_match_and_attribute() {
    let c = hand_made();
    let m = build(&c);
    assert_eq!(m.tracks.len(), 2, "one track per device");
    let cpu = m.tracks.iter().find(|t| t.device == "cpu").expect("cpu");
    let gpu = m
        .tracks
        .iter()
        .find(|t| t.device == "cuda:0")
        .expect("cuda:0");
    assert_eq!(cpu.counts.allocs, 5);
    assert_eq!(cpu.counts.frees, 2);
    assert_eq!(cpu.counts.unmatched_frees, 1);
    assert_eq!(cpu.counts.addr_reuse, 1);
    assert!(cpu.totals_from_events && cpu.has_reserved);
    // Peak from the running totals: 200 at 95 µs.
    let z = c.time_zero();
    assert_eq!(cpu.peak_allocated(), Some((95_000_000 + z - z, 200)));
    let names: Vec<Option<&str>> = (0..cpu.allocs.len())
        .map(|i| {
            let o = cpu.allocs.op[i];
            (o != NO_OP).then(|| c.slice_name(o))
        })
        .collect();
    assert_eq!(
        names,
        vec![
            Some("inner"),
            Some("outer"),
            Some("outer"),
            Some("outer"),
            Some("outer")
        ]
    );
    // 0x10 freed at 50 µs; the first 0x30 closed by the reuse at 70 µs; 0x20, second 0x30 and
    // the stacked one live at end.
    assert_eq!(cpu.allocs.end[0], 50_000_000);
    assert_eq!(cpu.allocs.end[2], 70_000_000);
    assert_eq!(cpu.live_at_end(), (3, 128 + 16 + 24));
    let stacked = cpu.allocs.stack[4];
    let frames: Vec<String> = m
        .stacks
        .get(stacked)
        .iter()
        .map(|&f| m.stacks.frames[f as usize].short())
        .collect();
    assert_eq!(frames, vec!["f.py(3): g", "f.py(9): main"]);
    // GPU: attributed to thread 2's op, OOM recorded, everything freed.
    assert_eq!(gpu.allocs.op[0], {
        let o = gpu.allocs.op[0];
        assert_eq!(c.slice_name(o), "other_thread");
        o
    });
    assert_eq!(gpu.ooms.len(), 1);
    assert_eq!(gpu.ooms[0].bytes, 999999);
    assert_eq!(gpu.ooms[0].reserved, Some(4096));
    assert_eq!(gpu.live_at_end(), (0, 0));
    // Live set at 45 µs: a (64) and b (128).
    let idx = LiveIndex::new(&cpu.allocs);
    let mut out = Vec::new();
    idx.live_at(&cpu.allocs, 45_000_000, &mut out);
    assert_eq!(out, vec![0, 1]);
    idx.live_at(&cpu.allocs, 50_000_000, &mut out);
    assert_eq!(out, vec![1], "released at its free");
}

#[test]
fn summed_totals_when_events_have_none() {
    let ev = [
        r#"{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Bytes":10,"Addr":1,"Device Type":0,"Device Id":-1}}"#,
        r#"{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":2,"args":{"Bytes":5,"Addr":2,"Device Type":0,"Device Id":-1}}"#,
        r#"{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":3,"args":{"Bytes":-10,"Addr":1,"Device Type":0,"Device Id":-1}}"#,
    ];
    let json = format!("[{}]", ev.join(","));
    let c = chrome::load_bytes(json.as_bytes(), SourceInfo::default(), &Progress::default())
        .expect("loads");
    let m = build(&c);
    let t = &m.tracks[0];
    assert!(!t.totals_from_events && !t.has_reserved);
    assert_eq!(t.allocated, vec![10, 15, 5]);
    assert_eq!(t.peak_allocated().map(|p| p.1), Some(15));
}

fn stat(mid: i64, v: x_stat::Value) -> XStat {
    XStat {
        metadata_id: mid,
        value: Some(v),
    }
}

#[test]
fn xplane_allocator_events() {
    use x_stat::Value::{Int64Value, StrValue, Uint64Value};
    let mut p = XPlane {
        name: "/host:CPU".into(),
        ..XPlane::default()
    };
    for (id, n) in [
        (1, "allocator_name"),
        (2, "bytes_allocated"),
        (3, "allocation_bytes"),
        (4, "addr"),
        (5, "bytes_reserved"),
        (6, "tf_op"),
    ] {
        p.stat_metadata.insert(
            id,
            XStatMetadata {
                id,
                name: n.into(),
                description: String::new(),
            },
        );
    }
    for (id, n) in [
        (1, "MemoryAllocation"),
        (2, "MemoryDeallocation"),
        (3, "train_step"),
    ] {
        p.event_metadata.insert(
            id,
            XEventMetadata {
                id,
                name: n.into(),
                ..XEventMetadata::default()
            },
        );
    }
    let ev = |mid: i64, off: i64, dur: i64, stats: Vec<XStat>| XEvent {
        metadata_id: mid,
        duration_ps: dur,
        stats,
        data: Some(x_event::Data::OffsetPs(off)),
    };
    let alloc = |off: i64, alloc: &str, bytes: i64, addr: u64, total: i64, free: bool| {
        ev(
            if free { 2 } else { 1 },
            off,
            0,
            vec![
                stat(1, StrValue(alloc.into())),
                stat(2, Int64Value(total)),
                stat(3, Int64Value(bytes)),
                stat(4, Uint64Value(addr)),
                stat(5, Int64Value(1 << 20)),
                stat(6, StrValue("dense/MatMul".into())),
            ],
        )
    };
    p.lines.push(XLine {
        id: 1,
        name: "python".into(),
        timestamp_ns: 1000,
        events: vec![
            ev(3, 0, 1_000_000, vec![]),
            alloc(100, "GPU_0_bfc", 256, 0x1000, 256, false),
            alloc(200, "GPU_0_bfc", 512, 0x2000, 768, false),
            alloc(300, "GPU_0_bfc", 256, 0x1000, 512, true),
            alloc(400, "cpu", 8, 0x9, 8, false),
        ],
        ..XLine::default()
    });
    let space = XSpace {
        planes: vec![p],
        ..XSpace::default()
    };
    let c = xplane::load_bytes(
        &space.encode_to_vec(),
        SourceInfo::default(),
        &Progress::default(),
    )
    .expect("decodes");
    let m = build(&c);
    assert_eq!(m.tracks.len(), 2);
    let g = m
        .tracks
        .iter()
        .find(|t| t.device == "GPU_0_bfc")
        .expect("gpu allocator");
    assert_eq!(g.counts.allocs, 2);
    assert_eq!(g.counts.frees, 1);
    assert_eq!(g.allocated, vec![256, 768, 512], "bytes_allocated stats");
    assert!(g.has_reserved);
    assert_eq!(g.peak_allocated().map(|p| p.1), Some(768));
    assert_eq!(g.allocs.end[0], g.allocs.start[0] + 200);
    assert_eq!(g.allocs.end[1], LIVE_AT_END);
    // XProf's attribution: the `tf_op` stat, not the enclosing `train_step`.
    assert_eq!(g.allocs.op[0], NO_OP);
    let f = m.stacks.get(g.allocs.stack[0])[0];
    assert_eq!(m.stacks.frames[f as usize].name, "dense/MatMul");
    // `bytes_reserved` (1 MiB) is a stack reservation: in use = heap + stack.
    assert_eq!(
        g.reserved,
        vec![256 + (1 << 20), 768 + (1 << 20), 512 + (1 << 20)]
    );
}

#[test]
fn key_averages_columns_on_hand_made() {
    let c = hand_made();
    let k = key_averages::compute(&c);
    assert_eq!(k, key_averages::compute_brute(&c));
    let inner = k.by_name["inner"];
    assert_eq!((inner.cpu_mem, inner.self_cpu_mem), (64, 64));
    let outer = k.by_name["outer"];
    // 15: +64, 40: +128, 50: −64, 60: +32, 70: +16, 80: −8, 95: +24 on CPU; the GPU record at 5
    // lies inside `outer` too (any thread counts).
    assert_eq!(outer.cpu_mem, 64 + 128 - 64 + 32 + 16 - 8 + 24);
    assert_eq!(outer.self_cpu_mem, outer.cpu_mem - 64);
    assert_eq!(outer.device_mem, 1000);
    let other = k.by_name["other_thread"];
    assert_eq!(
        other.cpu_mem, outer.cpu_mem,
        "records of other threads count"
    );
    // The GPU free at 200 µs lies in no op: a [memory] row; the OOM its own row.
    let names: Vec<&str> = k.extra_rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names, vec!["[memory]", "[OutOfMemory]"]);
    assert_eq!(k.extra_rows[0].2.device_mem, -1000);
    assert_eq!(k.extra_rows[1].2.device_mem, 999999);
}

fn brute_live(a: &Allocations, t: i64) -> Vec<u32> {
    (0..a.len() as u32)
        .filter(|&i| a.start[i as usize] <= t && a.end[i as usize] > t)
        .collect()
}

proptest! {
    #[test]
    fn live_index_equals_brute_force(
        spans in proptest::collection::vec((0i64..1000, 0i64..300, any::<bool>()), 0..200),
        probes in proptest::collection::vec(-10i64..1400, 1..20),
    ) {
        let mut s = spans.clone();
        s.sort_by_key(|x| x.0);
        let mut a = Allocations::default();
        for (k, &(start, len, live)) in s.iter().enumerate() {
            a.push(start, 1, k as u64, NO_OP, u32::MAX, 0);
            if !live {
                a.end[k] = start + len;
            }
        }
        let idx = LiveIndex::new(&a);
        let mut out = Vec::new();
        for t in probes {
            idx.live_at(&a, t, &mut out);
            prop_assert_eq!(&out, &brute_live(&a, t));
        }
    }

    #[test]
    fn allocations_are_attributed_to_the_innermost_op_of_their_thread(
        // (thread, levels present) per 10 µs block: nested ops [10k, 10k+8], [10k+1, 10k+5],
        // [10k+2, 10k+3] µs.
        blocks in proptest::collection::vec((0u8..3, 0u8..8), 1..20),
        recs in proptest::collection::vec((0u8..3, 0u32..2100, 0u8..2), 0..60),
    ) {
        let mut ev = Vec::new();
        for (k, &(tid, levels)) in blocks.iter().enumerate() {
            let base = 10.0 * k as f64;
            for (l, (at, dur)) in [(0.0, 8.0), (1.0, 4.0), (2.0, 1.0)].into_iter().enumerate() {
                if levels & (1 << l) != 0 {
                    ev.push(op(&format!("l{l}"), i64::from(tid), base + at, dur));
                }
            }
        }
        for (i, &(tid, tenth, dev)) in recs.iter().enumerate() {
            let d = if dev == 0 { CPU } else { GPU };
            ev.push(mem(f64::from(tenth) / 10.0, i64::from(tid), 64, 0x1000 + 64 * i as u64, 0, d));
        }
        let json = format!("[{}]", ev.join(","));
        let c = chrome::load_bytes(json.as_bytes(), SourceInfo::default(), &Progress::default())
            .expect("loads");
        let m = build(&c);
        let mut seen = 0;
        for t in &m.tracks {
            for (i, &e) in t.allocs.event.iter().enumerate() {
                let (ts, track) = (c.instants.ts[e as usize], c.instants.track[e as usize]);
                let tr = &c.tracks[track as usize];
                // Brute force: the enclosing slice of the thread that starts last (nested ops).
                let want = (tr.slices.0..tr.slices.1)
                    .filter(|&s| c.slices.start[s as usize] <= ts && ts <= c.slices.end(s as usize))
                    .max_by_key(|&s| (c.slices.start[s as usize], -c.slices.dur[s as usize]))
                    .unwrap_or(NO_OP);
                prop_assert_eq!(t.allocs.op[i], want, "allocation at {} on track {}", ts, track);
                seen += 1;
            }
        }
        prop_assert_eq!(seen, recs.len());
    }

    #[test]
    fn key_averages_equals_brute_force(
        ops in proptest::collection::vec((0u8..3, 0u32..200, 0u32..120), 1..25),
        recs in proptest::collection::vec((0u8..3, 0u32..330, -500i64..500, 0u8..3), 0..40),
    ) {
        let mut ev: Vec<String> = ops
            .iter()
            .enumerate()
            .map(|(k, &(tid, ts, dur))| op(&format!("op{}", k % 5), i64::from(tid), f64::from(ts), f64::from(dur)))
            .collect();
        for &(tid, ts, bytes, dev) in &recs {
            let d = match dev { 0 => CPU, 1 => GPU, _ => (9, 0) };
            ev.push(mem(f64::from(ts), i64::from(tid), bytes, 1, 0, d));
        }
        let json = format!("[{}]", ev.join(","));
        let c = chrome::load_bytes(json.as_bytes(), SourceInfo::default(), &Progress::default())
            .expect("loads");
        prop_assert_eq!(key_averages::compute(&c), key_averages::compute_brute(&c));
    }
}

#[test]
fn real_xplane_allocator_tracks_are_consistent() {
    // TF 2020 BERT capture on 8 GPUs (tests/fixtures/xplane): BFC allocator TraceMes on the host.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/xplane/tf_bert_gpu.xplane.pb.gz");
    let c =
        tracetui::formats::load(&path, SourceInfo::default(), &Progress::default()).expect("loads");
    let m = build(&c);
    let g4 = m
        .tracks
        .iter()
        .find(|t| t.device == "GPU_4_bfc")
        .expect("GPU_4_bfc");
    assert_eq!((g4.counts.allocs, g4.counts.frees), (761, 208));
    for t in &m.tracks {
        let live = t.allocs.end.iter().filter(|&&e| e == LIVE_AT_END).count() as u64;
        // Every matched free or address reuse closes exactly one allocation.
        assert_eq!(
            live,
            t.counts.allocs - (t.counts.frees - t.counts.unmatched_frees) - t.counts.addr_reuse,
            "{}",
            t.device
        );
        assert!(t.totals_from_events, "bytes_allocated stats used");
        assert_eq!(
            t.peak_allocated().map(|p| p.1),
            t.allocated.iter().copied().max()
        );
    }
    // Attributed by the `tf_op` stat, as XProf's memory profile: no enclosing op.
    assert!(g4.allocs.op.iter().all(|&o| o == NO_OP));
    let top = tracetui::analysis::memory::summary::top_allocators(g4, 1, |i| {
        m.stacks
            .get(g4.allocs.stack[i])
            .first()
            .map_or("(no op)".into(), |&f| {
                m.stacks.frames[f as usize].name.clone()
            })
    });
    assert!(
        top[0].name.starts_with("replica_4/bert_span_labeler/") && top[0].name.ends_with("/Cast"),
        "{}",
        top[0].name
    );
}
