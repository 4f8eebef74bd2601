//! Memory analysis speed: building the memory tracks of a capture with 1 M `[memory]` events
//! (target ≤ 150 ms), the live set at a time (target ≤ 10 ms), torch's key_averages memory columns,
//! and opening an allocator snapshot of 1 M trace entries (target ≤ 1 s).
//!
//! `TRACETUI_BENCH_MEM_EVENTS` (default 1,000,000) sets the event / entry count;
//! `TRACETUI_MEMORY_THREADS=1` builds the tracks on one thread. Run:
//! `cargo bench --bench memory`.

mod common;

use common::process_cpu_s;
use std::path::Path;
use std::time::Instant;
use tracetui::analysis::memory::events::KEY_NAMES;
use tracetui::analysis::memory::{build, key_averages};
use tracetui::model::memory::LiveIndex;
use tracetui::model::{
    ArgValue, ArgsRef, Capture, CaptureBuilder, Format, Key, SourceInfo, TrackKind,
};

/// 4 threads of nested ops (one op per 8 events) with `[memory]` instants on CPU and CUDA:0:
/// about half the allocations freed soon, some live long, a few never.
fn capture(n: usize) -> Capture {
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(1));
    let mem = b.intern("[memory]");
    let cat = b.intern("cpu_instant_event");
    let op_cat = b.intern("cpu_op");
    let names: Vec<_> = ["aten::empty", "aten::mm", "aten::add", "aten::conv2d"]
        .iter()
        .map(|s| b.intern(s))
        .collect();
    // Bytes, Addr, Total Allocated, Total Reserved, Device Type, Device Id.
    let k: [_; 6] = std::array::from_fn(|i| b.intern(KEY_NAMES[i]));
    let threads: Vec<u32> = (0..4)
        .map(|t| b.track(p, Key::Int(t), TrackKind::Thread))
        .collect();
    let mut live: Vec<Vec<(u64, i64)>> = vec![Vec::new(); 2];
    let mut total = [0i64; 2];
    let mut rng = 0x1234_5678u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut addr = 0x1000u64;
    for i in 0..n {
        let ts = i as i64 * 1_000_000; // 1 µs apart
        let th = threads[i % 4];
        if i % 8 == 0 {
            let name = names[(i / 8) % names.len()];
            b.add_slice(th, ts, 8_000_000 * 4, name, op_cat, ArgsRef::NONE, 0);
        }
        let dev = (next() % 2) as usize;
        let r = next();
        let (bytes, a) = if !live[dev].is_empty() && r % 100 < 48 {
            let j = (r as usize / 100) % live[dev].len();
            let (a, sz) = live[dev].swap_remove(j);
            (-sz, a)
        } else {
            addr += 512;
            let sz = 512 * (1 + (r % 64) as i64);
            live[dev].push((addr, sz));
            (sz, addr)
        };
        total[dev] += bytes;
        b.args.begin();
        b.args.push(k[0], ArgValue::I64(bytes));
        b.args.push(k[1], ArgValue::U64(a));
        b.args.push(k[2], ArgValue::I64(total[dev]));
        b.args.push(k[3], ArgValue::I64(total[dev] * 2));
        b.args.push(k[4], ArgValue::I64(dev as i64));
        b.args
            .push(k[5], ArgValue::I64(if dev == 0 { -1 } else { 0 }));
        let args = b.args.finish();
        b.add_instant(th, ts + 100, mem, cat, args, b't');
    }
    b.finish(SourceInfo::default(), Format::Kineto)
}

/// A snapshot pickle (protocol 4) with `n` trace entries on one device, frames shared per site.
fn snapshot_pickle(n: usize) -> Vec<u8> {
    let mut o: Vec<u8> = vec![0x80, 4];
    let s = |o: &mut Vec<u8>, t: &str| {
        o.push(0x8c);
        o.push(t.len() as u8);
        o.extend_from_slice(t.as_bytes());
    };
    let int = |o: &mut Vec<u8>, v: i64| {
        o.push(0x8a);
        o.push(8);
        o.extend_from_slice(&v.to_le_bytes());
    };
    // memo 0..3: three frames lists
    for site in 0..3 {
        o.push(b']');
        o.push(b'(');
        for f in 0..4 {
            o.push(b'}');
            o.push(b'(');
            s(&mut o, "filename");
            s(&mut o, &format!("/src/model{site}.py"));
            s(&mut o, "line");
            int(&mut o, 10 + f);
            s(&mut o, "name");
            s(&mut o, &format!("fn{site}_{f}"));
            o.push(b'u');
        }
        o.push(b'e');
        o.push(0x94);
        o.push(b'0');
    }
    o.push(b'}');
    o.push(b'(');
    s(&mut o, "segments");
    o.push(b']');
    s(&mut o, "device_traces");
    o.push(b']');
    o.push(b']');
    o.push(b'(');
    let mut live: Vec<(i64, i64)> = Vec::new();
    let mut addr = 1i64 << 40;
    for i in 0..n {
        o.push(b'}');
        o.push(b'(');
        let (act, a, size) = if !live.is_empty() && i % 2 == 1 {
            let (a, sz) = live.swap_remove((i * 7919) % live.len());
            ("free_completed", a, sz)
        } else {
            addr += 4096;
            live.push((addr, 4096));
            ("alloc", addr, 4096)
        };
        s(&mut o, "action");
        s(&mut o, act);
        s(&mut o, "addr");
        int(&mut o, a);
        s(&mut o, "size");
        int(&mut o, size);
        s(&mut o, "stream");
        int(&mut o, 0);
        s(&mut o, "time_us");
        int(&mut o, 1_700_000_000_000_000 + i as i64);
        s(&mut o, "frames");
        o.push(b'h');
        o.push((i % 3) as u8);
        o.push(b'u');
    }
    o.push(b'e');
    o.push(b'a');
    o.push(b'u');
    o.push(b'.');
    o
}

/// Best wall time of `runs` runs (and that run's process CPU time, all threads — the build reads
/// args on a helper thread — printed), plus the result.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut cpu = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs {
        let c = process_cpu_s();
        let t = Instant::now();
        let r = f();
        let w = t.elapsed().as_secs_f64();
        if w < best {
            best = w;
            cpu = process_cpu_s() - c;
        }
        out = Some(r);
    }
    print!("[cpu {:>7.1} ms] ", cpu * 1e3);
    (best, out.expect("ran"))
}

fn main() {
    let n: usize = std::env::var("TRACETUI_BENCH_MEM_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let c = capture(n);
    println!(
        "capture: {} memory events, {} ops",
        c.instants.ts.len(),
        c.slices.len()
    );
    let (t, m) = best(5, || build(&c));
    let allocs: usize = m.tracks.iter().map(|t| t.allocs.len()).sum();
    println!(
        "memory tracks built          {:>8.1} ms  ({} tracks, {allocs} allocations)  target ≤ 150 ms",
        t * 1e3,
        m.tracks.len()
    );
    let tr = &m.tracks[0];
    let (ti, idx) = best(3, || LiveIndex::new(&tr.allocs));
    println!("live index built             {:>8.1} ms", ti * 1e3);
    let mut out = Vec::new();
    let mut worst = 0.0f64;
    let mut most = 0;
    let mut worst_cpu = 0.0f64;
    for q in 0..50 {
        let at = (q as i64 * n as i64 / 50) * 1_000_000;
        let c = process_cpu_s();
        let s = Instant::now();
        idx.live_at(&tr.allocs, at, &mut out);
        worst = worst.max(s.elapsed().as_secs_f64());
        worst_cpu = worst_cpu.max(process_cpu_s() - c);
        most = most.max(out.len());
    }
    println!(
        "[cpu {:>7.3} ms] live set at a time (worst of 50) {:>5.3} ms  (up to {most} live)  target ≤ 10 ms",
        worst_cpu * 1e3,
        worst * 1e3
    );
    let (tk, k) = best(3, || key_averages::compute(&c));
    println!(
        "key_averages memory columns  {:>8.1} ms  ({} names)",
        tk * 1e3,
        k.by_name.len()
    );
    let bytes = snapshot_pickle(n);
    let (ts, snap) = best(3, || {
        tracetui::formats::snapshot::load_bytes(&bytes, Path::new("bench.pickle"))
    });
    let entries = snap.map(|s| s.entries).unwrap_or(0);
    println!(
        "snapshot of {entries} entries ({:.1} MB) opened {:>8.1} ms  target ≤ 1000 ms",
        bytes.len() as f64 / 1e6,
        ts * 1e3
    );
}
