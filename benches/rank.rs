//! `rank` on a synthetic Kineto capture: the analysis alone (both modes), the per-device queues
//! (alone and shared with the ranking, as the explorer's loader thread computes them), the
//! per-stream queue-length series, and end to end (load the JSON file + rank), best of
//! `TRACETUI_BENCH_RUNS` (default 3).
//!
//! `TRACETUI_BENCH_EVENTS` (default 10,000,000) sets the number of trace events; the file is
//! written once into `target/bench-data/` and reused. Run: `cargo bench --bench rank`.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;
use tracetui::analysis::gpu::{GpuOptions, queue_series};
use tracetui::analysis::rank::{Mode, device_queues, rank, rank_and_queues};
use tracetui::formats::{Progress, load};
use tracetui::model::SourceInfo;
use tracetui::synth::kineto::write_kineto_trace;

fn main() {
    let events: usize = std::env::var("TRACETUI_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let runs: u32 = std::env::var("TRACETUI_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let dir = PathBuf::from("target/bench-data");
    fs::create_dir_all(&dir).expect("bench dir");
    let path = dir.join(format!("rank_{events}.pt.trace.json"));
    if !path.exists() {
        let t = Instant::now();
        let tmp = path.with_extension("tmp");
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp).expect("create"));
        let n = write_kineto_trace(&mut w, events, 42).expect("write");
        w.flush().expect("flush");
        drop(w);
        fs::rename(&tmp, &path).expect("rename");
        eprintln!(
            "generated {} ({n} events) in {:.1} s",
            path.display(),
            t.elapsed().as_secs_f64()
        );
    }
    let bytes = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let src = || SourceInfo {
        path: path.clone(),
        ..Default::default()
    };
    let c = load(&path, src(), &Progress::default()).expect("load");
    println!(
        "capture: {} slices, {:.1} MB JSON",
        c.slices.len(),
        bytes as f64 / 1e6
    );
    for (label, mode) in [("default", Mode::Default), ("compat", Mode::Compat)] {
        let mut best = f64::INFINITY;
        let mut summary = String::new();
        for _ in 0..runs {
            let t = Instant::now();
            let r = rank(&c, mode);
            best = best.min(t.elapsed().as_secs_f64());
            summary = format!(
                "{} CPU events, {} launches, {} kernels, {} linked, max depth {}, {} candidates",
                r.events.len(),
                r.launches,
                r.kernels,
                r.eval.linked,
                r.eval.queue_depth_max(),
                r.eval.ranked.len()
            );
        }
        println!(
            "rank analysis ({label:<7}) {:>8.1} ms  ({summary})",
            best * 1e3
        );
    }
    let best_of = |f: &dyn Fn() -> usize| {
        let mut best = f64::INFINITY;
        let mut n = 0;
        for _ in 0..runs {
            let t = Instant::now();
            n = f();
            best = best.min(t.elapsed().as_secs_f64());
        }
        (best * 1e3, n)
    };
    let (ms, n) = best_of(&|| device_queues(&c, Mode::Default).len());
    println!("device queues            {ms:>8.1} ms  ({n} devices)");
    let (ms, n) = best_of(&|| rank_and_queues(&c, Mode::Default).1.len());
    println!("rank + device queues     {ms:>8.1} ms  ({n} devices, one selection)");
    let (ms, n) = best_of(&|| queue_series(&c, &GpuOptions::default()).len());
    println!("stream queue lengths     {ms:>8.1} ms  ({n} streams)");
    drop(c);
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        let c = load(&path, src(), &Progress::default()).expect("load");
        let r = rank(&c, Mode::Default);
        std::hint::black_box(r.eval.ranked.first());
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("rank end to end (load + default) {:>8.1} ms", best * 1e3);
}
