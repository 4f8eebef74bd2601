//! `diff` cost on two synthetic nested captures (no loading; the CLI computes each side in the
//! thread that loaded it, so the two sides run in parallel here too): the time a diff adds to
//! loading both captures (target ≤ 300 ms), and re-sorting / filtering the joined table with the
//! search matcher (target ≤ 20 ms).
//!
//! `TRACETUI_BENCH_SLICES` (default 5,000,000 per capture) sets the size; `TRACETUI_BENCH_NAMES`
//! (default 20,000) the distinct names. Run: `cargo bench --bench diff`.
//!
//! First, stream alignment (aligned timelines, issue 26 §4; target ≤ 1 s and ≤ 200 MB for 1 M
//! kernels): two synthetic sequences of `TRACETUI_BENCH_KERNELS` (default 1,000,000) name ids —
//! a 300-kernel step pattern over 200 names, B with ~1 % of A's kernels removed, ~1 % renamed
//! and ~1 % new ones inserted — aligned with the default windows; the time, the peak heap
//! the call allocates (a counting global allocator) and the rows' bytes. Then the same for two
//! unrelated sequences (every window takes the greedy fallback: the worst case).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use tracetui::analysis::diff::align::{AlignOptions, align};
use tracetui::analysis::diff::{DiffOptions, GroupKey, SortKey, join, side, sort_rows};
use tracetui::analysis::search::{Matcher, Mode, Query};
use tracetui::synth::slices::{Rng, SliceSpec, nested_capture};

fn env(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

/// The system allocator, counting live and peak bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                let now = LIVE.fetch_add(new - l.size(), Ordering::Relaxed) + new - l.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A: `n` kernels repeating a 300-kernel step over 200 names; B: A with ~`pct` % removed,
/// ~`pct` % renamed (to one of 50 other names) and ~`pct` % inserted (new names).
fn kernel_streams(n: usize, pct: u64) -> (Vec<u32>, Vec<u32>) {
    let mut r = Rng::new(0x9e37_79b9_7f4a_7c15);
    let step: Vec<u32> = (0..300).map(|_| r.range(0, 200) as u32).collect();
    let a: Vec<u32> = (0..n).map(|i| step[i % step.len()]).collect();
    let mut b = Vec::with_capacity(n + n / 50);
    for &x in &a {
        let k = r.range(0, 100) as u64;
        match k / pct.max(1) {
            0 => {}
            1 => b.push(200 + r.range(0, 50) as u32),
            2 => {
                b.push(x);
                b.push(250 + r.range(0, 50) as u32);
            }
            _ => b.push(x),
        }
    }
    (a, b)
}

fn bench_align(label: &str, a: &[u32], b: &[u32]) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let t = Instant::now();
    let al = align(a, b, AlignOptions::default());
    let secs = t.elapsed().as_secs_f64();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    println!(
        "align {label}: {} + {} events in {:.1} ms · peak heap {:.1} MB (rows {:.1} MB) · \
         {} matched, {} added, {} removed · {} windows, {} greedy ({} events)",
        a.len(),
        b.len(),
        secs * 1e3,
        peak as f64 / 1e6,
        al.heap_bytes() as f64 / 1e6,
        al.matched,
        al.inserted,
        al.deleted,
        al.windows,
        al.fallback_windows,
        al.fallback_events,
    );
}

fn main() {
    let k = env("TRACETUI_BENCH_KERNELS", 1_000_000);
    let (a, b) = kernel_streams(k, 1);
    bench_align("1 M-kernel streams", &a, &b);
    let (_, heavy) = kernel_streams(k, 10);
    bench_align("30 % edited (every window greedy)", &a, &heavy);
    drop(heavy);
    let unrelated: Vec<u32> = a.iter().map(|&x| x + 1000).collect();
    bench_align("unrelated streams (all greedy)", &a, &unrelated);
    drop((a, b, unrelated));
    let n = env("TRACETUI_BENCH_SLICES", 5_000_000);
    let names = env("TRACETUI_BENCH_NAMES", 20_000);
    let spec = |seed| SliceSpec {
        slices: n,
        names,
        seed,
        ..SliceSpec::default()
    };
    let t = Instant::now();
    let (a, b) = (nested_capture(&spec(1)), nested_capture(&spec(2)));
    println!(
        "captures: 2 × {} slices, {names} names (built in {:.2} s)",
        a.slices.len(),
        t.elapsed().as_secs_f64()
    );
    for group in [GroupKey::Name, GroupKey::Short, GroupKey::Stream] {
        let opts = DiffOptions {
            group,
            ..DiffOptions::default()
        };
        let mut best = f64::INFINITY;
        let mut rows = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            let (sa, sb) = std::thread::scope(|s| {
                let ha = s.spawn(|| side(&a, group, None, false, false));
                let sb = side(&b, group, None, false, false);
                (ha.join().ok(), sb)
            });
            let (Some(Ok(sa)), Ok(sb)) = (sa, sb) else {
                println!("diff failed");
                return;
            };
            let d = join(&sa, &sb, &opts);
            best = best.min(t.elapsed().as_secs_f64());
            rows = d.rows;
        }
        println!(
            "diff --group-by {:<8} {:>8.1} ms  ({} rows)",
            group.name(),
            best * 1e3,
            rows.len()
        );
        if group != GroupKey::Name {
            continue;
        }
        for key in SortKey::ALL {
            let t = Instant::now();
            sort_rows(&mut rows, key, false);
            println!(
                "  re-sort by {:<10} {:>7.2} ms",
                key.name(),
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        for q in ["kernel_12", "op_5::", "zzz"] {
            let Ok(m) = Matcher::new(&Query::parse(q, Mode::Fuzzy)) else {
                continue;
            };
            let t = Instant::now();
            let kept = rows.iter().filter(|r| m.score(&r.name).is_some()).count();
            println!(
                "  filter {q:<10}        {:>7.2} ms  ({kept} rows kept)",
                t.elapsed().as_secs_f64() * 1e3
            );
        }
    }
}
