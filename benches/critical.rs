//! `critical` on a real-shaped capture: the H200 transformer capture of tests/fixtures/torch_gpu
//! (two training steps, two host threads, one GPU stream, ~10 k events) replicated in time with
//! `synth::replicate` to `TRACETUI_BENCH_EVENTS` events (default 1,000,000), then the critical
//! path of every step, full rules and HTA rules, best of `TRACETUI_BENCH_RUNS` (default 3),
//! wall and CPU time. Target (issue 39): all steps of a 1 M-event capture in ≤ 1 s.
//! Run: `cargo bench --bench critical`.

mod common;

use flate2::read::GzDecoder;
use std::fs;
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;
use tracetui::analysis::critical::{self, Mode, Options};
use tracetui::analysis::steps::{self, Step, StepOptions};
use tracetui::formats::{Progress, load};
use tracetui::model::Category;
use tracetui::model::SourceInfo;

fn main() {
    let events: u64 = common::env_or("TRACETUI_BENCH_EVENTS", 1_000_000);
    let runs: u32 = common::env_or("TRACETUI_BENCH_RUNS", 3);
    let dir = PathBuf::from("target/bench-data");
    fs::create_dir_all(&dir).expect("bench dir");
    let path = dir.join(format!("critical_{events}.pt.trace.json"));
    if !path.exists() {
        let gz = fs::read("tests/fixtures/torch_gpu/worker0.1795774111709892780.pt.trace.json.gz")
            .expect("fixture");
        let mut src = Vec::new();
        GzDecoder::new(&gz[..])
            .read_to_end(&mut src)
            .expect("gunzip");
        // ~10.3 k events per copy of the source.
        let copies = events.div_ceil(10_300).max(1);
        let mut out = Vec::new();
        let target = (src.len() as u64).saturating_mul(copies.saturating_sub(1)) + 1;
        let r = tracetui::synth::replicate::replicate(&src, target, &mut out).expect("replicate");
        fs::write(&path, &out).expect("write");
        eprintln!("generated {} ({} events)", path.display(), r.events);
    }
    let c = load(
        &path,
        SourceInfo {
            path: path.clone(),
            ..Default::default()
        },
        &Progress::default(),
    )
    .expect("load");
    // Every host ProfilerStep slice is a step: the replicated copies repeat the source's step
    // numbers, which `steps::find` would merge.
    let mut found = steps::find(&c, &StepOptions::default());
    let mut marks: Vec<Step> = (0..c.slices.len() as u32)
        .filter(|&i| {
            c.slices.kind(i as usize) == Category::UserAnnotation
                && c.slice_name(i).starts_with("ProfilerStep#")
        })
        .map(|i| Step {
            number: 0,
            start: c.slices.start[i as usize],
            end: c.slices.end(i as usize),
            partial: false,
        })
        .collect();
    marks.sort_by_key(|s| s.start);
    for (k, s) in marks.iter_mut().enumerate() {
        s.number = k as i64;
    }
    found.steps = marks;
    println!(
        "capture: {} slices, {} steps ({})",
        c.slices.len(),
        found.steps.len(),
        found.source.name()
    );
    for (label, mode) in [("full", Mode::Full), ("hta", Mode::Hta)] {
        let opts = Options {
            mode,
            top: 10,
            ..Options::default()
        };
        let (mut wall, mut cpu) = (f64::INFINITY, f64::INFINITY);
        let mut path_ps = 0i64;
        for _ in 0..runs {
            let (t, c0) = (Instant::now(), common::process_cpu_s());
            let paths = critical::analyze(&c, &found, &opts, None);
            wall = wall.min(t.elapsed().as_secs_f64());
            cpu = cpu.min(common::process_cpu_s() - c0);
            path_ps = paths.iter().map(|p| p.path).sum();
        }
        println!(
            "critical {label:4}: {:.3} s wall, {:.3} s CPU for {} steps (Σ path {:.1} ms)",
            wall,
            cpu,
            found.steps.len(),
            path_ps as f64 / 1e9
        );
    }
}
