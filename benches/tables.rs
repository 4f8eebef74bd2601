//! Table views and range-scoped statistics (issue 12 §5): re-sorting and re-filtering a 100 k-row
//! table, and `stats` of a marked range on a 10 M-slice capture (one pass, and from precomputed
//! self times: `analysis::stats_index`).
//!
//! Run: `cargo bench --bench tables` (`TRACETUI_BENCH_SLICES`, default 10,000,000).

use std::time::Instant;
use tracetui::analysis::stats::{StatsOptions, compute};
use tracetui::analysis::stats_index::{SelfTimes, compute_with, threads};
use tracetui::synth::slices::{SliceSpec, nested_capture};
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::views::table::{Column, Key, Row, TableView, Target};

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    // 1. A 100 k-row table: sort by each column, reverse, filter.
    let rows: Vec<Row> = (0..100_000u64)
        .map(|i| {
            let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20;
            Row {
                cells: vec![
                    format!("aten::op_{x}_{i}"),
                    x.to_string(),
                    (x % 977).to_string(),
                ],
                keys: vec![
                    Key::Text(format!("aten::op_{x}_{i}")),
                    Key::Num(x as f64),
                    Key::Num((x % 977) as f64),
                ],
                target: Target::None,
                bar: None,
            }
        })
        .collect();
    let col = |name, width, right| Column { name, width, right };
    let mut t = TableView::new(
        ViewKind::Table,
        "bench".into(),
        vec![col("name", 0, false), col("a", 9, true), col("b", 9, true)],
        rows,
    );
    for c in 0..3 {
        let ms = best(5, || t.sort_by(c, false));
        println!("re-sort 100 k rows by column {c}: {ms:.2} ms (target <= 20 ms)");
    }
    let ms = best(5, || t.sort_by(1, true));
    println!("reverse sort 100 k rows: {ms:.2} ms (target <= 20 ms)");
    t.filter = "op_12".into();
    let ms = best(5, || t.refresh());
    println!(
        "re-filter 100 k rows (fuzzy \"op_12\"): {ms:.2} ms, {} rows kept (target <= 20 ms)",
        t.order.len()
    );

    // 2. Range-scoped statistics on a large capture.
    let n: usize = std::env::var("TRACETUI_BENCH_SLICES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let cap = nested_capture(&SliceSpec {
        slices: n,
        tracks: 8,
        max_depth: 12,
        names: 5_000,
        overlap_ppm: 0,
        seed: 3,
    });
    let (a, b) = cap.span;
    let whole = best(2, || compute(&cap, &StatsOptions::default()));
    println!("one-pass stats of the whole capture ({n} slices): {whole:.1} ms");
    let mut st = SelfTimes::default();
    let ms = best(2, || st = SelfTimes::new(&cap, &StatsOptions::default()));
    println!(
        "self times of every slice, once per capture ({} threads): {ms:.1} ms, {} MB",
        threads(),
        st.heap_bytes() >> 20
    );
    for frac in [1, 2, 10, 100, 1000] {
        let w = (b - a) / frac;
        let mid = a + (b - a) / 2;
        let opts = StatsOptions {
            range: Some((mid - w / 2, mid + w / 2 + 1)),
            ..Default::default()
        };
        let one = best(3, || compute(&cap, &opts));
        let ms = best(3, || compute_with(&cap, &st, &opts));
        println!(
            "stats of a range of 1/{frac} of the span: {ms:.1} ms from the self times \
             (target <= 100 ms; one pass: {one:.1} ms)"
        );
    }
}
