//! `stats` table throughput on a synthetic nested capture (no loading): events per second for the
//! default table (all slices), a category-filtered table and the unified-name grouping.
//!
//! `TRACETUI_BENCH_SLICES` (default 5,000,000) sets the capture size. Run:
//! `cargo bench --bench stats`.

use std::time::Instant;
use tracetui::analysis::stats::{StatsOptions, compute};
use tracetui::synth::slices::{SliceSpec, nested_capture};

fn main() {
    let n: usize = std::env::var("TRACETUI_BENCH_SLICES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000_000);
    let spec = SliceSpec {
        slices: n,
        ..SliceSpec::default()
    };
    let t = Instant::now();
    let c = nested_capture(&spec);
    println!(
        "capture: {} slices, {} tracks, {} names (built in {:.2} s)",
        c.slices.len(),
        c.tracks.len(),
        spec.names,
        t.elapsed().as_secs_f64()
    );
    let cases: [(&str, StatsOptions); 3] = [
        ("all slices", StatsOptions::default()),
        (
            "--cat cpu_op (every slice matches)",
            StatsOptions {
                cats: Some(vec!["cpu_op".into()]),
                ..Default::default()
            },
        ),
        (
            "--unified (host tracks keep names)",
            StatsOptions {
                unified: true,
                ..Default::default()
            },
        ),
    ];
    for (label, opts) in cases {
        let mut best = f64::INFINITY;
        let mut rows = 0;
        for _ in 0..3 {
            let t = Instant::now();
            let table = compute(&c, &opts);
            best = best.min(t.elapsed().as_secs_f64());
            rows = table.rows.len();
        }
        println!(
            "stats {label:<36} {:>8.1} ms  {:>7.1} M slices/s  ({rows} rows)",
            best * 1e3,
            c.slices.len() as f64 / best / 1e6
        );
    }
}
