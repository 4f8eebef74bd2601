//! End-to-end Chrome/Kineto JSON load benchmark: MB/s and peak anonymous memory, plain and gzip.
//!
//! `TRACETUI_BENCH_MB` (default 1024) sets the uncompressed size of the generated Kineto-shaped
//! trace, written once into `target/bench-data/` and reused. `TRACETUI_BENCH_RUNS` (default 2)
//! repeats each measurement; the best time is printed. `TRACETUI_BENCH_ONLY=plain|gz|gz-stream`
//! runs one case (`gz-stream`: the streaming fallback of `.gz` loading). Run: `cargo bench --bench json_load`.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tracetui::formats::{Progress, chrome};
use tracetui::model::SourceInfo;
use tracetui::synth::kineto::write_kineto_trace;

mod common;
use common::{Sampler, rss_anon};

/// CPU seconds (user + system) used by this process so far, from `/proc/self/stat`.
fn cpu_secs() -> f64 {
    let s = fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which ends with ')'): utime is the 12th, stime the 13th.
    let rest = s.rsplit_once(')').map_or("", |r| r.1);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    ticks as f64 / 100.0
}

fn generate(dir: &Path, mb: u64) -> (PathBuf, PathBuf) {
    fs::create_dir_all(dir).expect("create bench dir");
    let plain = dir.join(format!("kineto_{mb}mb.pt.trace.json"));
    let gz = dir.join(format!("kineto_{mb}mb.pt.trace.json.gz"));
    if !plain.exists() {
        // Calibrate bytes per event on a small sample, then write the full file.
        let mut sample = Vec::new();
        let n = write_kineto_trace(&mut sample, 20_000, 1).expect("sample");
        let per_event = sample.len() as f64 / n as f64;
        let events = ((mb * 1_000_000) as f64 / per_event) as usize;
        let t = Instant::now();
        let tmp = plain.with_extension("tmp");
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp).expect("create"));
        let n = write_kineto_trace(&mut w, events, 42).expect("write");
        w.flush().expect("flush");
        drop(w);
        fs::rename(&tmp, &plain).expect("rename");
        eprintln!(
            "generated {} ({} events, {:.1} MB) in {:.1} s",
            plain.display(),
            n,
            fs::metadata(&plain).map(|m| m.len()).unwrap_or(0) as f64 / 1e6,
            t.elapsed().as_secs_f64()
        );
    }
    if !gz.exists() {
        let t = Instant::now();
        let tmp = gz.with_extension("tmp");
        let mut input = File::open(&plain).expect("open");
        let out = BufWriter::new(File::create(&tmp).expect("create gz"));
        let mut enc = flate2::write::GzEncoder::new(out, flate2::Compression::new(6));
        std::io::copy(&mut input, &mut enc).expect("compress");
        enc.finish().expect("finish gz").flush().expect("flush");
        fs::rename(&tmp, &gz).expect("rename");
        eprintln!("compressed in {:.1} s", t.elapsed().as_secs_f64());
    }
    (plain, gz)
}

type Loader = fn(
    &Path,
    SourceInfo,
    &Progress,
) -> Result<tracetui::model::Capture, tracetui::formats::LoadError>;

fn measure(label: &str, load: Loader, path: &Path, json_bytes: u64, runs: u32) {
    let mut best = f64::MAX;
    let mut best_cpu = f64::MAX;
    let mut peak_delta = 0u64;
    let mut stats = String::new();
    for _ in 0..runs {
        let base = rss_anon();
        let sampler = Sampler::start(Duration::from_millis(10));
        let t = Instant::now();
        let c0 = cpu_secs();
        let progress = Progress::default();
        let cap = load(path, SourceInfo::default(), &progress).expect("load");
        let secs = t.elapsed().as_secs_f64();
        best_cpu = best_cpu.min(cpu_secs() - c0);
        let peak = sampler.finish();
        best = best.min(secs);
        peak_delta = peak_delta.max(peak.saturating_sub(base));
        stats = format!(
            "{} slices, {} instants, {} flows, {} strings, heap_bytes {:.1} MB (args arena {:.1} MB, strings {:.1} MB), warnings {:?}",
            cap.slices.len(),
            cap.instants.ts.len(),
            cap.flows.len(),
            cap.strings.len(),
            cap.heap_bytes() as f64 / 1e6,
            cap.args.heap_bytes() as f64 / 1e6,
            cap.strings.heap_bytes() as f64 / 1e6,
            cap.warnings.iter().map(|w| w.kind).collect::<Vec<_>>()
        );
        drop(cap);
    }
    let mb = json_bytes as f64 / 1e6;
    println!(
        "{label:6} {mb:8.1} MB JSON  best {best:6.2} s wall  {:6.1} MB/s  (CPU {best_cpu:.2} s = {:.1} MB per CPU-s)  peak RssAnon +{:.1} MB ({:.2}x JSON)",
        mb / best,
        mb / best_cpu,
        peak_delta as f64 / 1e6,
        peak_delta as f64 / json_bytes as f64
    );
    println!("       {stats}");
}

fn main() {
    let mb: u64 = std::env::var("TRACETUI_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let runs: u32 = std::env::var("TRACETUI_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let only = std::env::var("TRACETUI_BENCH_ONLY").unwrap_or_default();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    let (plain, gz) = generate(&dir, mb);
    let json_bytes = fs::metadata(&plain).map(|m| m.len()).unwrap_or(0);
    let gz_bytes = fs::metadata(&gz).map(|m| m.len()).unwrap_or(0);
    let load = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at start: {}", load.trim());
    println!(
        "json_load: {} ({:.1} MB), gzip {:.1} MB",
        plain.display(),
        json_bytes as f64 / 1e6,
        gz_bytes as f64 / 1e6
    );
    if only.is_empty() || only == "plain" {
        measure("plain", chrome::load, &plain, json_bytes, runs);
    }
    if only.is_empty() || only == "gz" {
        measure("gz", chrome::load, &gz, json_bytes, runs);
    }
    if only == "gz-stream" {
        measure(
            "gz-stream",
            chrome::load_gz_streaming,
            &gz,
            json_bytes,
            runs,
        );
    }
}
