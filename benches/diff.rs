//! `diff` cost on two synthetic nested captures (no loading; the CLI computes each side in the
//! thread that loaded it, so the two sides run in parallel here too): the time a diff adds to
//! loading both captures (target ≤ 300 ms), and re-sorting / filtering the joined table with the
//! search matcher (target ≤ 20 ms).
//!
//! `TRACETUI_BENCH_SLICES` (default 5,000,000 per capture) sets the size; `TRACETUI_BENCH_NAMES`
//! (default 20,000) the distinct names. Run: `cargo bench --bench diff`.

use std::time::Instant;
use tracetui::analysis::diff::{DiffOptions, GroupKey, SortKey, join, side, sort_rows};
use tracetui::analysis::search::{Matcher, Mode, Query};
use tracetui::synth::slices::{SliceSpec, nested_capture};

fn env(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn main() {
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
                let ha = s.spawn(|| side(&a, group, None, false));
                let sb = side(&b, group, None, false);
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
