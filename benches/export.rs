//! Parquet export of one big Kineto JSON capture: export time against load time (target ≤ 1.5×
//! the load), dataset size against the JSON (target ≤ 0.4×), and the memory the export adds on
//! top of the loaded model (bounded: one batch plus one row group being encoded, whatever the
//! capture size — compare two sizes with `TRACETUI_BENCH_MB`).
//!
//! Input as in `json_load`: synthetic (`write_kineto_trace`) or, with
//! `TRACETUI_BENCH_SOURCE=real` (or a path), a real capture replicated in time to
//! `TRACETUI_BENCH_MB` (default 1024) MB. Files are written once into `target/bench-data/`.
//! Run: `cargo bench --bench export`.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tracetui::dataset::{ExportOptions, export_capture};
use tracetui::formats::{Progress, chrome};
use tracetui::model::SourceInfo;

mod common;
use common::{Sampler, process_cpu_s, rss_anon};

fn input(dir: &Path, mb: u64) -> PathBuf {
    fs::create_dir_all(dir).expect("bench dir");
    let source = std::env::var("TRACETUI_BENCH_SOURCE").ok();
    let (name, real) = match source.as_deref() {
        None | Some("") => (format!("kineto_{mb}mb.pt.trace.json"), None),
        Some(s) => {
            let p = if s == "real" {
                PathBuf::from("tests/fixtures/chrome/alexnet_cuda_sync.json.gz")
            } else {
                PathBuf::from(s)
            };
            let stem = p
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.split('.').next())
                .unwrap_or("source")
                .to_string();
            (format!("real_{stem}_{mb}mb.pt.trace.json"), Some(p))
        }
    };
    let out = dir.join(name);
    if out.exists() {
        return out;
    }
    let tmp = out.with_extension("tmp");
    let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp).expect("create"));
    match real {
        None => {
            let mut sample = Vec::new();
            let n = tracetui::synth::kineto::write_kineto_trace(&mut sample, 20_000, 1)
                .expect("sample");
            let per_event = sample.len() as f64 / n as f64;
            let events = ((mb * 1_000_000) as f64 / per_event) as usize;
            tracetui::synth::kineto::write_kineto_trace(&mut w, events, 42).expect("write");
        }
        Some(src) => {
            let raw = fs::read(&src).expect("read TRACETUI_BENCH_SOURCE");
            let text = if raw.starts_with(&[0x1f, 0x8b]) {
                let mut v = Vec::new();
                std::io::Read::read_to_end(
                    &mut flate2::read::MultiGzDecoder::new(&raw[..]),
                    &mut v,
                )
                .expect("inflate");
                v
            } else {
                raw
            };
            tracetui::synth::replicate::replicate(&text, mb * 1_000_000, &mut w)
                .expect("replicate");
        }
    }
    w.flush().expect("flush");
    drop(w);
    fs::rename(&tmp, &out).expect("rename");
    out
}

fn dir_bytes(p: &Path) -> u64 {
    let mut n = 0;
    if let Ok(rd) = fs::read_dir(p) {
        for e in rd.flatten() {
            let m = e.metadata().expect("stat");
            n += if m.is_dir() {
                dir_bytes(&e.path())
            } else {
                m.len()
            };
        }
    }
    n
}

fn main() {
    let mb: u64 = std::env::var("TRACETUI_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let path = input(Path::new("target/bench-data"), mb);
    let json_bytes = fs::metadata(&path).expect("stat").len();
    eprintln!(
        "input {} ({:.1} MB)",
        path.display(),
        json_bytes as f64 / 1e6
    );

    let cpu0 = process_cpu_s();
    let t = Instant::now();
    let c = chrome::load(
        &path,
        SourceInfo {
            path: path.clone(),
            run: "bench".into(),
            host: "worker0".into(),
            file_bytes: json_bytes,
        },
        &Progress::default(),
    )
    .expect("load");
    let load_s = t.elapsed().as_secs_f64();
    let load_cpu = process_cpu_s() - cpu0;
    let rows = c.slices.len()
        + c.instants.ts.len()
        + c.counters.iter().map(|s| s.ts.len()).sum::<usize>()
        + c.flows.len();
    println!(
        "load: {load_s:.2} s (CPU {load_cpu:.2} s), {} slices, {rows} rows, model RssAnon {:.0} MB",
        c.slices.len(),
        rss_anon() as f64 / 1e6
    );
    for (label, args) in [("args json", true), ("args none", false)] {
        let out = Path::new("target/bench-data").join(format!("export_{mb}mb_{}", args));
        let _ = fs::remove_dir_all(&out);
        let before = rss_anon();
        let sampler = Sampler::start(Duration::from_millis(20));
        let cpu0 = process_cpu_s();
        let t = Instant::now();
        let w = export_capture(
            &c,
            &out,
            &ExportOptions {
                args,
                ..ExportOptions::default()
            },
        )
        .expect("export");
        let export_s = t.elapsed().as_secs_f64();
        let export_cpu = process_cpu_s() - cpu0;
        let peak = sampler.finish();
        let bytes = dir_bytes(&out);
        println!(
            "RESULT export ({label}): {export_s:.2} s = {:.2}x load (CPU {export_cpu:.2} s = {:.2}x), {} rows, {} row groups, \
             {:.1} MB = {:.3}x JSON, export adds {:.0} MB peak RssAnon",
            export_s / load_s,
            export_cpu / load_cpu,
            w.rows,
            w.row_groups,
            bytes as f64 / 1e6,
            bytes as f64 / json_bytes as f64,
            peak.saturating_sub(before) as f64 / 1e6
        );
    }
    println!(
        "loadavg: {}",
        fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
}
