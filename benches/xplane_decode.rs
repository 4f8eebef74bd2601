//! XPlane decode benchmark: a synthetic 8 M-event XSpace (generated once under
//! `target/bench-data/`) decoded into the model. Prints MB/s and peak anonymous memory
//! (RssAnon sampled from `/proc/self/status` every 2 ms) relative to the file size.
//!
//! `cargo bench --bench xplane_decode` (env `XPLANE_BENCH_EVENTS_PER_LINE` to resize,
//! `XPLANE_BENCH_FILE` to decode a given capture instead).

use std::path::PathBuf;
use std::time::{Duration, Instant};
use tracetui::formats::{Progress, xplane};
use tracetui::model::SourceInfo;
use tracetui::synth::xplane::{XPlaneSynth, write_xspace};

mod common;
use common::{Sampler, rss_anon};

/// CPU time of the calling thread in ns (`/proc/thread-self/schedstat`): insensitive to other
/// processes competing for the 2 cores.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// CPU time of the whole process (all threads) in seconds, from `/proc/self/stat`.
fn process_cpu_s() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = s.rsplit_once(')').map_or("", |x| x.1);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

fn main() {
    if std::env::var_os("XPLANE_BENCH_CHILD").is_some() {
        if let Some(p) = std::env::var_os("XPLANE_BENCH_FILE") {
            child(std::path::Path::new(&p));
        }
        return;
    }
    let per_line: u64 = std::env::var("XPLANE_BENCH_EVENTS_PER_LINE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let cfg = XPlaneSynth {
        events_per_line: per_line,
        ..XPlaneSynth::default()
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).expect("bench-data dir");
    // `XPLANE_BENCH_FILE=path` decodes a real capture instead of the synthetic one.
    let given = std::env::var_os("XPLANE_BENCH_FILE").map(PathBuf::from);
    let path = given
        .clone()
        .unwrap_or_else(|| dir.join(format!("synth_{}ev.xplane.pb", cfg.event_count())));
    if given.is_none() && !path.exists() {
        let t = Instant::now();
        let tmp = path.with_extension("tmp");
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp).expect("create"));
        write_xspace(&cfg, &mut w).expect("write synthetic xspace");
        drop(w);
        std::fs::rename(&tmp, &path).expect("rename");
        println!("generated {} in {:.2?}", path.display(), t.elapsed());
    }
    let size = std::fs::metadata(&path).expect("stat").len();
    // Warm the page cache.
    let events: u64 = xplane::line_event_counts(&std::fs::read(&path).expect("read"))
        .expect("walk")
        .iter()
        .map(|c| c.2)
        .sum();
    println!(
        "file {} : {:.1} MB, {} events",
        path.display(),
        size as f64 / 1e6,
        events
    );
    let runs: u32 = std::env::var("XPLANE_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    // Floor: the first-pass wire walk alone (planes, lines, event lengths).
    {
        let bytes = std::fs::read(&path).expect("read");
        let cpu0 = thread_cpu_ns();
        let counts = xplane::line_event_counts(&bytes).expect("walk");
        let cpu = (thread_cpu_ns() - cpu0) as f64 / 1e9;
        println!(
            "scan only (line_event_counts): {:.3} s thread CPU = {:.0} MB/s, {} lines",
            cpu,
            size as f64 / 1e6 / cpu,
            counts.len()
        );
    }
    // Phases: first-pass scan, event walk into the builder (incl. derived lines), finish.
    {
        let bytes = std::fs::read(&path).expect("read");
        let progress = Progress::default();
        let r0 = rss_anon() / 1024;
        let c0 = Instant::now();
        let space = xplane::scan::scan_space(&bytes).expect("scan");
        let c1 = c0.elapsed().as_nanos();
        let (b, _tables) = xplane::plane::Decoder::new(&progress, 0)
            .run(&space)
            .expect("decode");
        let c2 = c0.elapsed().as_nanos();
        let r2 = rss_anon() / 1024;
        let cap = b.finish(SourceInfo::default(), tracetui::model::Format::XPlane);
        let c3 = c0.elapsed().as_nanos();
        let r3 = rss_anon() / 1024;
        println!(
            "anon above start: after walk+derive +{} MB, after finish +{} MB",
            r2.saturating_sub(r0) / 1024,
            r3.saturating_sub(r0) / 1024
        );
        println!(
            "phases (wall, file read into memory): scan {:.3} s, walk+derive into builder {:.3} s, finish {:.3} s ({} slices)",
            c1 as f64 / 1e9,
            (c2 - c1) as f64 / 1e9,
            (c3 - c2) as f64 / 1e9,
            cap.slices.len()
        );
    }
    // Each measured run is a fresh process (this binary re-run with XPLANE_BENCH_CHILD=1), so
    // no run inherits the heap the previous one freed: peak anonymous memory is clean.
    let me = std::env::current_exe().expect("bench binary");
    let mut walls = Vec::new();
    for run in 0..runs {
        let out = std::process::Command::new(&me)
            .env("XPLANE_BENCH_CHILD", "1")
            .env("XPLANE_BENCH_FILE", &path)
            .output()
            .expect("run child");
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().find(|l| l.starts_with("child:")).unwrap_or("");
        let mut f = line
            .split_whitespace()
            .skip(1)
            .map(|v| v.parse::<f64>().unwrap_or(0.0));
        let (secs, cpu, peak_b, slices, heap) = (
            f.next().unwrap_or(0.0),
            f.next().unwrap_or(0.0),
            f.next().unwrap_or(0.0),
            f.next().unwrap_or(0.0),
            f.next().unwrap_or(0.0),
        );
        walls.push(secs);
        println!(
            "run {run}: wall {:.3} s ({:.0} MB/s), process CPU {:.2} s, {:.1} M events/s, {} slices, peak anon +{:.0} MB ({:.2}x file), model heap {:.0} MB",
            secs,
            size as f64 / 1e6 / secs,
            cpu,
            events as f64 / 1e6 / secs,
            slices,
            peak_b / 1e6,
            peak_b / size as f64,
            heap / 1e6,
        );
    }
    walls.sort_by(f64::total_cmp);
    if let (Some(&best), Some(&median)) = (walls.first(), walls.get(walls.len() / 2)) {
        println!(
            "best wall: {:.3} s = {:.0} MB/s; median {:.3} s = {:.0} MB/s",
            best,
            size as f64 / 1e6 / best,
            median,
            size as f64 / 1e6 / median
        );
    }
}

/// One measured decode in this (fresh) process; prints `child: wall cpu peak slices heap`.
fn child(path: &std::path::Path) {
    let _ = std::fs::read(path).map(|v| v.len());
    let base = rss_anon();
    let sampler = Sampler::start(Duration::from_millis(1));
    let t = Instant::now();
    let cpu0 = process_cpu_s();
    let cap = xplane::load(path, SourceInfo::default(), &Progress::default()).expect("decode");
    let secs = t.elapsed().as_secs_f64();
    let cpu = process_cpu_s() - cpu0;
    let peak_b = sampler.finish().saturating_sub(base);
    println!(
        "child: {secs} {cpu} {peak_b} {} {}",
        cap.slices.len(),
        cap.heap_bytes()
    );
}
