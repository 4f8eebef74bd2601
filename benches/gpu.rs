//! `gpu` analysis on a large Kineto capture: loading, stream collection and every breakdown.
//!
//! `TRACETUI_BENCH_EVENTS` (default 10,000,000) sets the size of the synthetic Kineto trace
//! (src/synth/kineto.rs), written once into `target/bench-data/` and reused. Prints the load time,
//! the analysis time (best of 3) and their sum. Run: `cargo bench --bench gpu`.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;
use tracetui::analysis::gpu::{self, GpuOptions};
use tracetui::formats::{Progress, chrome};
use tracetui::model::SourceInfo;
use tracetui::synth::kineto::write_kineto_trace;

fn main() {
    let events: usize = std::env::var("TRACETUI_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    fs::create_dir_all(&dir).expect("create bench dir");
    let path = dir.join(format!("gpu_kineto_{events}.pt.trace.json"));
    if !path.exists() {
        let t = Instant::now();
        let tmp = path.with_extension("tmp");
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp).expect("create"));
        let n = write_kineto_trace(&mut w, events, 42).expect("write");
        w.flush().expect("flush");
        drop(w);
        fs::rename(&tmp, &path).expect("rename");
        eprintln!("generated {n} events in {:.1} s", t.elapsed().as_secs_f64());
    }
    let bytes = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let load = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at start: {}", load.trim());
    let t = Instant::now();
    let cap = chrome::load(&path, SourceInfo::default(), &Progress::default()).expect("load");
    let load_s = t.elapsed().as_secs_f64();
    println!(
        "load: {} events, {} slices, {:.1} MB in {load_s:.2} s",
        cap.event_count(),
        cap.slices.len(),
        bytes as f64 / 1e6
    );
    let opts = GpuOptions::default();
    let mut best = f64::INFINITY;
    let mut collect_best = f64::INFINITY;
    let mut acts = 0;
    let mut streams = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let g = gpu::streams::collect(&cap, &opts);
        collect_best = collect_best.min(t.elapsed().as_secs_f64());
        let r = gpu::analyze_streams(&cap, &g, &opts);
        best = best.min(t.elapsed().as_secs_f64());
        acts = g.acts.len();
        streams = r.streams.len();
    }
    println!(
        "gpu analysis: {acts} activities on {streams} streams: collect {:.1} ms, total {:.1} ms \
         ({:.1} M events/s)",
        collect_best * 1e3,
        best * 1e3,
        cap.event_count() as f64 / best / 1e6
    );
    println!("end to end (load + gpu): {:.2} s", load_s + best);
}
