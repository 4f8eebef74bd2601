//! Interval index benchmark on generated nested stacks (`synth::slices`).
//!
//! `cargo bench --bench index` (10 M slices; `TRACETUI_BENCH_SLICES=1000000` for a quick run).
//! Prints model build (`CaptureBuilder::finish`) and index build times, bytes per slice, and the
//! cost of every query the UI makes per frame or per key press. Figures go in `docs/index.md`.

use std::hint::black_box;
use std::time::{Duration, Instant};
use tracetui::index::postings::Postings;
use tracetui::index::{CaptureIndex, Cell, TrackIndex};
use tracetui::model::{Capture, Format, Ps, SourceInfo, StrId};
use tracetui::synth::slices::{Rng, SliceSpec, nested_builder};

const COLS: usize = 200;
const LANES: usize = 40;

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn fmt(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// On-CPU time of this thread (excludes time preempted by other processes on a busy machine).
fn cpu_time() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// CPU time of the whole process, all threads (10 ms resolution).
fn process_cpu() -> Duration {
    let tick = 10_000_000u64; // USER_HZ = 100 on Linux
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let u: u64 = f.get(11)?.parse().ok()?;
            let k: u64 = f.get(12)?.parse().ok()?;
            Some(Duration::from_nanos((u + k) * tick))
        })
        .unwrap_or(Duration::ZERO)
}

/// Mean wall, best wall and mean on-CPU time per call of `f` over `iters` calls (after one
/// warm-up call).
fn time<F: FnMut(usize)>(iters: usize, mut f: F) -> (Duration, Duration, Duration) {
    f(0);
    let mut best = Duration::MAX;
    let all = Instant::now();
    let cpu = cpu_time();
    for i in 0..iters {
        let t = Instant::now();
        f(i);
        best = best.min(t.elapsed());
    }
    let cpu = cpu_time().saturating_sub(cpu);
    (all.elapsed() / iters as u32, best, cpu / iters as u32)
}

/// Per-call wall and on-CPU time of `n` calls of `f`.
fn per_call<F: FnMut(usize)>(n: usize, mut f: F) -> String {
    let (t, c) = (Instant::now(), cpu_time());
    for i in 0..n {
        f(i);
    }
    let (w, c) = (
        t.elapsed() / n as u32,
        cpu_time().saturating_sub(c) / n as u32,
    );
    format!("{} per call (on-CPU {})", fmt(w), fmt(c))
}

/// The 40 lanes drawn: every lane of the first tracks, in order.
fn visible_lanes(idx: &CaptureIndex, cap: &Capture) -> Vec<(u32, usize)> {
    (0..cap.tracks.len() as u32)
        .flat_map(|t| (0..idx.lane_count(t)).map(move |l| (t, l)))
        .take(LANES)
        .collect()
}

fn frame(idx: &CaptureIndex, cap: &Capture, lanes: &[(u32, usize)], t0: Ps, t1: Ps) -> u64 {
    let mut out = [Cell::EMPTY; COLS];
    let mut acc = 0u64;
    for &(t, l) in lanes {
        idx.lod(cap, t, l, t0, t1, &mut out);
        acc += out.iter().map(|c| u64::from(c.count)).sum::<u64>();
    }
    acc
}

/// The previous (naive) LOD: per column, a window then a scan of every slice in it.
fn naive_frame(idx: &CaptureIndex, cap: &Capture, lanes: &[(u32, usize)], t0: Ps, t1: Ps) -> u64 {
    let s = &cap.slices;
    let mut acc = 0u64;
    for &(t, l) in lanes {
        for k in 0..COLS {
            let a = tracetui::index::column_edge(t0, t1, COLS, k);
            let b = tracetui::index::column_edge(t0, t1, COLS, k + 1).max(a + 1);
            let (mut best, mut busy) = (-1, 0);
            for &id in idx.window(cap, t, l, a, b) {
                let i = id as usize;
                best = best.max(s.dur[i]);
                busy += s.end(i).min(b) - s.start[i].max(a);
                acc += 1;
            }
            acc = acc.wrapping_add((best ^ busy) as u64 & 1);
        }
    }
    acc
}

fn main() {
    let n: usize = std::env::var("TRACETUI_BENCH_SLICES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let spec = SliceSpec {
        slices: n,
        ..SliceSpec::default()
    };
    println!("index bench: {spec:?}");
    let t = Instant::now();
    let b = nested_builder(&spec);
    println!("generate (add_slice × n)        {}", fmt(t.elapsed()));
    let rss0 = peak_rss_mb();
    let (t, c) = (Instant::now(), cpu_time());
    let cap = b.finish(SourceInfo::default(), Format::Chrome);
    println!(
        "CaptureBuilder::finish          {} (on-CPU {}; peak RSS {:.0} MB before, {:.0} MB after)",
        fmt(t.elapsed()),
        fmt(cpu_time().saturating_sub(c)),
        rss0,
        peak_rss_mb()
    );
    let lanes_total: usize = cap.tracks.iter().map(|t| t.lanes as usize).sum();
    let depth = cap.tracks.iter().map(|t| t.max_depth).max().unwrap_or(0);
    println!(
        "capture: {} slices, {} tracks, {} lanes, max depth {}, span {:.3} s, model {:.1} B/slice",
        cap.slices.len(),
        cap.tracks.len(),
        lanes_total,
        depth,
        (cap.span.1 - cap.span.0) as f64 / 1e12,
        cap.heap_bytes() as f64 / n as f64
    );

    let mut best_build = Duration::MAX;
    let mut idx = CaptureIndex::default();
    let cpu0 = process_cpu();
    for _ in 0..3 {
        drop(idx);
        let t = Instant::now();
        idx = CaptureIndex::build(&cap);
        best_build = best_build.min(t.elapsed());
    }
    println!(
        "CaptureIndex::build             {} (best of 3, 2 threads; CPU {} per build; {:.1} B/slice, {:.0} MB; peak RSS {:.0} MB)",
        fmt(best_build),
        fmt(process_cpu().saturating_sub(cpu0) / 3),
        idx.heap_bytes() as f64 / n as f64,
        idx.heap_bytes() as f64 / 1e6,
        peak_rss_mb()
    );

    let (t, c) = (Instant::now(), cpu_time());
    let tracks: Vec<TrackIndex> = cap
        .tracks
        .iter()
        .map(|t| TrackIndex::build(&cap.slices, t))
        .collect();
    let (lanes_t, lanes_c) = (t.elapsed(), cpu_time().saturating_sub(c));
    let (t, c) = (Instant::now(), cpu_time());
    let post = Postings::build(&cap.slices, cap.strings.len());
    println!(
        "  parts, one thread: lanes {} (on-CPU {})  postings {} (on-CPU {})",
        fmt(lanes_t),
        fmt(lanes_c),
        fmt(t.elapsed()),
        fmt(cpu_time().saturating_sub(c))
    );
    drop((tracks, post));
    let lanes = visible_lanes(&idx, &cap);
    let (lo, hi) = cap.span;
    let mut rng = Rng::new(1);
    println!("LOD frame: {COLS} columns × {} lanes", lanes.len());
    if std::env::var("TRACETUI_BENCH_PROFILE_LOD").is_ok() {
        // For `perf record`: only the zoomed-out frame, many times.
        let (m, b, c) = time(2000, |_| {
            black_box(frame(&idx, &cap, &lanes, lo, hi));
        });
        println!(
            "  zoomed out ×2000 mean {} best {} on-CPU {}",
            fmt(m),
            fmt(b),
            fmt(c)
        );
        return;
    }
    let (m, b, c) = time(30, |_| {
        black_box(frame(&idx, &cap, &lanes, lo, hi));
    });
    println!(
        "  zoomed out (whole capture)    mean {}  best {}  on-CPU {}",
        fmt(m),
        fmt(b),
        fmt(c)
    );
    let zooms: [(&str, Ps); 3] = [
        ("mid zoom (100 µs/col)", 100_000_000),
        ("1 ms/col", 1_000_000_000),
        ("1 µs/col", 1_000_000),
    ];
    for (name, per_col) in zooms {
        let w = per_col * COLS as Ps;
        let starts: Vec<Ps> = (0..200).map(|_| rng.range(lo, hi - w)).collect();
        let (m, b, c) = time(starts.len(), |i| {
            black_box(frame(&idx, &cap, &lanes, starts[i], starts[i] + w));
        });
        println!(
            "  {name:<29} mean {}  best {}  on-CPU {}",
            fmt(m),
            fmt(b),
            fmt(c)
        );
    }
    let (m, _, c) = time(3, |_| {
        black_box(naive_frame(&idx, &cap, &lanes, lo, hi));
    });
    println!(
        "  previous naive LOD, zoomed out mean {}  on-CPU {}",
        fmt(m),
        fmt(c)
    );

    let q: Vec<(u32, usize, Ps)> = (0..100_000)
        .map(|_| {
            let (t, l) = lanes[rng.range(0, lanes.len() as i64) as usize];
            (t, l, rng.range(lo, hi))
        })
        .collect();
    let names: Vec<StrId> = (0..q.len())
        .map(|_| StrId(rng.range(1, cap.strings.len() as i64) as u32))
        .collect();
    let ids: Vec<u32> = (0..q.len())
        .map(|_| rng.range(0, n as i64) as u32)
        .collect();
    let mut acc = 0u64;
    let r = per_call(q.len(), |i| {
        let (tr, l, x) = q[i];
        acc += u64::from(idx.slice_at(&cap, tr, l, x).is_some());
    });
    println!(
        "slice_at                        {r} ({acc} hits / {})",
        q.len()
    );
    acc = 0;
    let r = per_call(q.len(), |i| {
        let (tr, l, x) = q[i];
        acc += idx.window(&cap, tr, l, x, x + 1_000_000_000).len() as u64;
    });
    println!(
        "window (1 ms)                   {r} (avg {:.1} slices)",
        acc as f64 / q.len() as f64
    );
    let r = per_call(q.len(), |i| {
        let (tr, _, x) = q[i];
        black_box(idx.busy_time(&cap, tr, x, x + (hi - x) / 3));
    });
    println!("busy_time (track, random range) {r}");
    let r = per_call(ids.len(), |i| {
        black_box(idx.next_on_lane(&cap, ids[i]));
    });
    println!("next_on_lane                    {r}");
    acc = 0;
    let r = per_call(ids.len(), |i| {
        acc += idx.children(&cap, ids[i]).len() as u64;
    });
    println!(
        "children                        {r} (avg {:.2})",
        acc as f64 / ids.len() as f64
    );
    acc = 0;
    let r = per_call(q.len(), |i| {
        let occ = idx.occurrences(names[i]);
        // "Next occurrence after t": a binary search over the posting list.
        let x = q[i].2;
        let p = occ.partition_point(|&id| cap.slices.start[id as usize] < x);
        acc += u64::from(p < occ.len());
    });
    println!("occurrences + next after t      {r} ({acc} found)");
    println!("peak RSS {:.0} MB", peak_rss_mb());
}
