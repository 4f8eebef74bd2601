//! End-to-end Chrome/Kineto JSON load benchmark: file → model → index, MB/s and peak anonymous
//! memory, plain and gzip, each run in a fresh process.
//!
//! Two inputs:
//! - synthetic (default): `write_kineto_trace`, `TRACETUI_BENCH_MB` (default 1024) MB;
//! - real-shaped: `TRACETUI_BENCH_SOURCE=tests/fixtures/chrome/alexnet_cuda_sync.json.gz` (any real
//!   Kineto/Chrome JSON, gz or not) replicated in time to `TRACETUI_BENCH_MB` by
//!   `synth::replicate` (`TRACETUI_BENCH_SOURCE=real` picks that bundled A100 capture).
//!
//! Files are written once into `target/bench-data/` and reused. `TRACETUI_BENCH_RUNS` (default 5)
//! fresh processes per case print best / median / worst; `TRACETUI_BENCH_ONLY=plain|gz|preview|explorer|gz-stream`
//! runs one case (`preview`: the partial capture the explorer draws first, plain and gz;
//! `explorer`: parse, then the explorer's index and partner tables and its first frame;
//! `gz-stream`: the streaming fallback of `.gz` loading). Run:
//! `cargo bench --bench json_load`.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tracetui::formats::{Progress, chrome};
use tracetui::index::CaptureIndex;
use tracetui::model::SourceInfo;
use tracetui::synth::kineto::write_kineto_trace;
use tracetui::synth::replicate::replicate;
use tracetui::ui::app::{App, Cmd, Msg};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::draw;
use tracetui::ui::loader::{LoadDone, Loaded};

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
    compress(&plain, &gz);
    (plain, gz)
}

/// Writes the real-shaped trace: `source` replicated in time to `mb` MB.
fn generate_real(dir: &Path, source: &Path, mb: u64) -> (PathBuf, PathBuf) {
    fs::create_dir_all(dir).expect("create bench dir");
    let stem = source
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("source")
        .split('.')
        .next()
        .unwrap_or("source")
        .to_string();
    let plain = dir.join(format!("real_{stem}_{mb}mb.pt.trace.json"));
    let gz = dir.join(format!("real_{stem}_{mb}mb.pt.trace.json.gz"));
    if !plain.exists() {
        let raw = fs::read(source).expect("read TRACETUI_BENCH_SOURCE");
        let text = if raw.starts_with(&[0x1f, 0x8b]) {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&raw[..]), &mut v)
                .expect("inflate source");
            v
        } else {
            raw
        };
        let t = Instant::now();
        let tmp = plain.with_extension("tmp");
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp).expect("create"));
        let r = replicate(&text, mb * 1_000_000, &mut w).expect("replicate");
        w.flush().expect("flush");
        drop(w);
        fs::rename(&tmp, &plain).expect("rename");
        eprintln!(
            "replicated {} x{} → {} ({} events, {:.1} MB) in {:.1} s",
            source.display(),
            r.copies,
            plain.display(),
            r.events,
            r.bytes as f64 / 1e6,
            t.elapsed().as_secs_f64()
        );
    }
    compress(&plain, &gz);
    (plain, gz)
}

fn compress(plain: &Path, gz: &Path) {
    if gz.exists() {
        return;
    }
    let t = Instant::now();
    let tmp = gz.with_extension("tmp");
    let mut input = File::open(plain).expect("open");
    let out = BufWriter::new(File::create(&tmp).expect("create gz"));
    let mut enc = flate2::write::GzEncoder::new(out, flate2::Compression::new(6));
    std::io::copy(&mut input, &mut enc).expect("compress");
    enc.finish().expect("finish gz").flush().expect("flush");
    fs::rename(&tmp, gz).expect("rename");
    eprintln!("compressed in {:.1} s", t.elapsed().as_secs_f64());
}

/// One run in this (fresh) process: parse, then what `case` does after it (index; the explorer's
/// first frame); prints a `RESULT` line for the parent: total s, parse s, CPU s, peak anon
/// bytes, slices, instants, flows, warnings.
fn child(case: &str, path: &Path) {
    let base = rss_anon();
    let sampler = Sampler::start(Duration::from_millis(5));
    let c0 = cpu_secs();
    let t = Instant::now();
    let progress = Progress::default();
    let cap = match case {
        // What the explorer draws first for a big file: its partial preview.
        _ if case.starts_with("preview") => chrome::preview(path, SourceInfo::default()),
        "gz-stream" => chrome::load_gz_streaming(path, SourceInfo::default(), &progress).ok(),
        _ => chrome::load(path, SourceInfo::default(), &progress).ok(),
    }
    .expect("load");
    let t_load = t.elapsed().as_secs_f64();
    let counts = |c: &tracetui::model::Capture| {
        [
            c.slices.len(),
            c.instants.ts.len(),
            c.flows.len(),
            c.warnings.len(),
        ]
    };
    // What was built stays alive until the times are taken, so its drop is not measured.
    let (n, _keep): ([usize; 4], Box<dyn std::any::Any>) = if case == "explorer" {
        // What the explorer does after parsing: index + partner tables, then the first frame.
        let loaded = std::sync::Arc::new(Loaded::new_deferred(cap, Instant::now()));
        let src = CaptureRef {
            source: loaded.cap.source.clone(),
            format: None,
            modified: None,
            span: None,
        };
        let (mut app, cmds) = App::new(vec![src], (200, 60), ColorMode::True);
        let generation = match cmds.as_slice() {
            [Cmd::Load { generation, .. }] => *generation,
            _ => 0,
        };
        app.update(Msg::Load(LoadDone::finished(
            generation,
            0,
            Ok(loaded.clone()),
        )));
        let mut term = Terminal::new(TestBackend::new(200, 60)).expect("backend");
        term.draw(|f| draw::draw(&app, f)).expect("draw");
        (counts(&loaded.cap), Box::new(loaded))
    } else {
        let index = CaptureIndex::build(&cap);
        (counts(&cap), Box::new((cap, index)))
    };
    let total = t.elapsed().as_secs_f64();
    let cpu = cpu_secs() - c0;
    let peak = sampler.finish().saturating_sub(base);
    println!(
        "RESULT {total} {t_load} {cpu} {peak} {} {} {} {}",
        n[0], n[1], n[2], n[3]
    );
}

/// Runs `runs` fresh processes of `case` on `path`; prints best / median / worst.
fn measure(case: &str, path: &Path, json_bytes: u64, runs: u32) {
    let exe = std::env::current_exe().expect("current exe");
    let mut rows: Vec<[f64; 4]> = Vec::new();
    let mut counts = String::new();
    for _ in 0..runs {
        let out = std::process::Command::new(&exe)
            .env("TRACETUI_BENCH_CHILD", case)
            .env("TRACETUI_BENCH_PATH", path)
            .output()
            .expect("spawn child");
        let text = String::from_utf8_lossy(&out.stdout);
        let Some(line) = text.lines().find_map(|l| l.strip_prefix("RESULT ")) else {
            eprintln!("child failed: {}", String::from_utf8_lossy(&out.stderr));
            return;
        };
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        rows.push([num(0), num(1), num(2), num(3)]);
        counts = format!(
            "{} slices, {} instants, {} flows, {} warnings",
            f.get(4).unwrap_or(&"?"),
            f.get(5).unwrap_or(&"?"),
            f.get(6).unwrap_or(&"?"),
            f.get(7).unwrap_or(&"?")
        );
    }
    rows.sort_by(|a, b| a[0].total_cmp(&b[0]));
    let mb = json_bytes as f64 / 1e6;
    let pick = |r: &[f64; 4]| {
        format!(
            "{:.2} s ({:.0} MB/s; load {:.2} s, index {:.2} s; CPU {:.2} s; peak anon +{:.0} MB = {:.2}x)",
            r[0],
            mb / r[0],
            r[1],
            r[0] - r[1],
            r[2],
            r[3] / 1e6,
            r[3] / json_bytes as f64
        )
    };
    let (Some(best), Some(worst)) = (rows.first(), rows.last()) else {
        return;
    };
    let median = &rows[rows.len() / 2];
    println!(
        "{case:9} {mb:8.1} MB JSON, {} fresh processes, load + index:",
        rows.len()
    );
    println!("    best   {}", pick(best));
    println!("    median {}", pick(median));
    println!("    worst  {}", pick(worst));
    let max_peak = rows.iter().map(|r| r[3]).fold(0.0, f64::max);
    println!(
        "    max peak anon +{:.0} MB ({:.2}x JSON); {counts}",
        max_peak / 1e6,
        max_peak / json_bytes as f64
    );
}

fn main() {
    if let Ok(case) = std::env::var("TRACETUI_BENCH_CHILD") {
        let path = PathBuf::from(std::env::var_os("TRACETUI_BENCH_PATH").unwrap_or_default());
        child(&case, &path);
        return;
    }
    let mb: u64 = std::env::var("TRACETUI_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let runs: u32 = std::env::var("TRACETUI_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let only = std::env::var("TRACETUI_BENCH_ONLY").unwrap_or_default();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target/bench-data");
    let (plain, gz) = match std::env::var("TRACETUI_BENCH_SOURCE") {
        Ok(s) if s == "real" => generate_real(
            &dir,
            &root.join("tests/fixtures/chrome/alexnet_cuda_sync.json.gz"),
            mb,
        ),
        Ok(s) if !s.is_empty() => generate_real(&dir, Path::new(&s), mb),
        _ => generate(&dir, mb),
    };
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
        measure("plain", &plain, json_bytes, runs);
    }
    if only.is_empty() || only == "gz" {
        measure("gz", &gz, json_bytes, runs);
    }
    if only == "explorer" {
        // "index" in this case's lines is the time from parsed to the first frame drawn.
        measure("explorer", &plain, json_bytes, runs);
    }
    if only.is_empty() || only == "preview" {
        measure("preview", &plain, json_bytes, runs);
        measure("preview-gz", &gz, json_bytes, runs);
    }
    if only == "gz-stream" {
        measure("gz-stream", &gz, json_bytes, runs);
    }
}
