//! `tracetui ranks` on a run of many ranks made from one real capture.
//!
//! The source (`TRACETUI_BENCH_RANK_SOURCE`, default the HTA NCCL capture
//! /work/shared/traces/hta/nccl_parser_config/nccl_data.json.gz, else the alexnet fixture) is
//! replicated with `synth::replicate` (`TRACETUI_BENCH_RANK_COPIES` copies in time, default 1) into
//! `TRACETUI_BENCH_RANKS` rank files (default 64) under `target/bench-data/ranks/`, each with its
//! own `distributedInfo.rank` and a clock jittered by a rank-dependent 0–499 µs. Then, as child
//! processes of the release binary (wall time and peak RSS from `wait4`):
//! - `tracetui ranks RANK0 --json` with one loading thread — the load of one rank (best of 3);
//! - `tracetui ranks DIR --json` — the whole run, end to end.
//!
//! Targets (issue 23): end to end ≤ 2 × (ranks / cores) × one rank's load; peak RSS ≤ 2 × one
//! rank's. Run: `cargo bench --bench ranks`.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn env_num(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn read_source(p: &Path) -> Vec<u8> {
    let raw = fs::read(p).expect("read source");
    if p.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .expect("gunzip");
        out
    } else {
        raw
    }
}

/// Writes rank `r`: the replicated source with its rank id set and every `ts` shifted by
/// `jitter_us`.
fn write_rank(replicated: &str, r: usize, ranks: usize, jitter_us: i64, path: &Path) {
    let ts = regex::Regex::new(r#""ts"(\s*:\s*)(-?\d+(?:\.\d+)?)"#).expect("regex");
    // Set `rank` and `world_size` inside `distributedInfo` (whose `pg_config` nests objects).
    let mut text = replicated.to_string();
    if let Some(at) = text.find("\"distributedInfo\"") {
        for (key, val) in [("\"rank\"", r), ("\"world_size\"", ranks)] {
            let num = regex::Regex::new(&format!(r"{key}\s*:\s*\d+")).expect("regex");
            if let Some(m) = num.find_at(&text, at) {
                text.replace_range(m.range(), &format!("{key}: {val}"));
            }
        }
    }
    let text = ts.replace_all(&text, |c: &regex::Captures| {
        let v: f64 = c[2].parse().unwrap_or(0.0);
        format!("\"ts\"{}{:.3}", &c[1], v + jitter_us as f64)
    });
    fs::write(path, text.as_bytes()).expect("write rank");
}

/// Runs `exe args`, stdout discarded; returns (wall s, peak RSS MB, exit code). The child is
/// reaped by `wait4` (which also gives its peak RSS), not `Child::wait`.
#[allow(clippy::zombie_processes)]
fn measure(exe: &str, args: &[&str], threads: Option<usize>) -> (f64, f64, i32) {
    let t = Instant::now();
    let mut cmd = Command::new(exe);
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::null());
    if let Some(n) = threads {
        cmd.env("TRACETUI_RANKS_THREADS", n.to_string());
    }
    let child = cmd.spawn().expect("spawn tracetui");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: plain wait4 on our own child with valid out-pointers.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    let wall = t.elapsed().as_secs_f64();
    let code = if rc == pid && libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (wall, ru.ru_maxrss as f64 / 1024.0, code)
}

/// The overview heatmap: 128 ranks × 1000 steps drawn into a 240 × 70 buffer.
fn heatmap_frame() {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::widgets::Widget;
    use tracetui::ui::views::heatmap::{Heatmap, HeatmapData, Unit};
    let (rows, cols) = (128usize, 1000usize);
    let t = Instant::now();
    let values: Vec<Option<f64>> = (0..rows * cols)
        .map(|i| Some(1e9 + ((i * 7919) % 1000) as f64 * 1e6))
        .collect();
    let data = HeatmapData::new(
        (0..rows).map(|r| format!("rank {r}")).collect(),
        (0..cols as i64).collect(),
        values,
        (0..rows).map(|r| r % 17 == 3).collect(),
        "step time",
        Unit::Ps,
        10,
    );
    let build = t.elapsed().as_secs_f64();
    let area = Rect::new(0, 0, 240, 70);
    let mut buf = Buffer::empty(area);
    let mut worst = 0f64;
    let mut total = 0f64;
    let frames = 200;
    for k in 0..frames {
        buf.reset();
        let t = Instant::now();
        Heatmap {
            data: &data,
            cursor: (k % rows, (k * 13) % cols),
            offset: (
                (k % rows).saturating_sub(30),
                ((k * 13) % cols).saturating_sub(40),
            ),
        }
        .render(area, &mut buf);
        let s = t.elapsed().as_secs_f64();
        worst = worst.max(s);
        total += s;
    }
    println!(
        "heatmap {rows} × {cols}: data built in {:.1} ms; frame mean {:.3} ms, worst {:.3} ms \
         over {frames} frames (target ≤ 10 ms)",
        build * 1e3,
        total / frames as f64 * 1e3,
        worst * 1e3
    );
}

/// The whole overview view (title, heatmap, sorted rank table, status line) of 128 ranks × 1000
/// steps drawn into a 240 × 70 buffer from `&State`, with a cursor move (key) between frames.
fn overview_frame() {
    use ratatui::buffer::Buffer;
    use ratatui::crossterm::event::{KeyCode, KeyEvent};
    use ratatui::layout::Rect;
    use tracetui::analysis::ranks::{RankStep, RankSummary};
    use tracetui::analysis::steps::{DeviceParts, Step};
    use tracetui::ui::action::Action;
    use tracetui::ui::app::{App, Msg, View};
    use tracetui::ui::catalog::CaptureRef;
    use tracetui::ui::colors::ColorMode;
    use tracetui::ui::views::overview_view::OverviewView;
    let (rows, steps) = (128usize, 1000usize);
    let cref = |r: usize| CaptureRef {
        source: tracetui::model::SourceInfo {
            path: format!("job/w{r}.1.pt.trace.json").into(),
            run: "job".into(),
            host: format!("w{r}"),
            file_bytes: 0,
        },
        format: None,
        modified: None,
        span: None,
    };
    let summary = |r: usize| {
        let mut t = 0i64;
        RankSummary {
            run: "job".into(),
            host: format!("w{r}"),
            rank: Some(r as i64),
            world_size: Some(rows as i64),
            primary_device: Some(0),
            steps: (0..steps)
                .map(|n| {
                    let d = 1_000_000_000 + ((r * 7919 + n * 104_729) % 1000) as i64 * 1_000_000;
                    let s = RankStep {
                        step: Step {
                            number: n as i64,
                            start: t,
                            end: t + d,
                            partial: false,
                        },
                        start_ns: t / 1000,
                        input: d / 20,
                        devices: vec![DeviceParts {
                            device: 0,
                            idle: d / 5,
                            exposed_communication: d / 10,
                            ..DeviceParts::default()
                        }],
                    };
                    t += d;
                    s
                })
                .collect(),
            ..RankSummary::default()
        }
    };
    let (mut app, _) = App::new((0..rows).map(cref).collect(), (240, 70), ColorMode::Ansi256);
    // Open rank 0 (its load never runs here: the overview needs only the summaries).
    let _ = app.update(Msg::Open(0));
    let (mut view, _) = OverviewView::open(&app).expect("a capture is shown");
    let wanted = app
        .entries
        .iter()
        .map(|e| (e.id, e.capture.clone(), None))
        .collect();
    let jobs = app.state_mut().summaries.request(wanted, rows);
    for (k, j) in jobs.into_iter().enumerate() {
        app.state_mut()
            .summaries
            .finish(j.id, Ok((summary(k), Default::default())), rows);
    }
    let t = Instant::now();
    view.refresh(&app);
    let rebuild = t.elapsed().as_secs_f64();
    let area = Rect::new(0, 0, 240, 70);
    let mut buf = Buffer::empty(area);
    let mut cells = Vec::new();
    let key = KeyEvent::from(KeyCode::Char('l'));
    let (mut worst, mut total) = (0f64, 0f64);
    let frames = 200;
    for k in 0..frames {
        let action = if k % 10 == 9 {
            Action::Down
        } else {
            Action::NextSlice
        };
        buf.reset();
        let t = Instant::now();
        let _ = view.on_key(&key, Some(action), &app);
        view.draw(&app, &mut buf, area, &mut cells);
        let s = t.elapsed().as_secs_f64();
        worst = worst.max(s);
        total += s;
    }
    println!(
        "overview view {rows} ranks × {steps} steps, 240 × 70: analysis + heatmap data {:.1} ms; \
         key + frame mean {:.3} ms, worst {:.3} ms over {frames} frames (target ≤ 10 ms)",
        rebuild * 1e3,
        total / frames as f64 * 1e3,
        worst * 1e3
    );
}

fn main() {
    heatmap_frame();
    overview_frame();
    if std::env::var_os("TRACETUI_BENCH_FRAMES_ONLY").is_some() {
        return;
    }
    let ranks = env_num("TRACETUI_BENCH_RANKS", 64);
    let copies = env_num("TRACETUI_BENCH_RANK_COPIES", 1);
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let source = std::env::var("TRACETUI_BENCH_RANK_SOURCE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            let hta = PathBuf::from("/work/shared/traces/hta/nccl_parser_config/nccl_data.json.gz");
            if hta.exists() {
                hta
            } else {
                manifest.join("tests/fixtures/chrome/alexnet_cuda_sync.json.gz")
            }
        });
    let dir = manifest.join(format!("target/bench-data/ranks/{ranks}x{copies}"));
    if !dir.join("done").exists() {
        fs::create_dir_all(&dir).expect("mkdir");
        let t = Instant::now();
        let src = read_source(&source);
        let mut out = Vec::new();
        let target = (src.len() as u64).saturating_mul(copies.saturating_sub(1) as u64) + 1;
        let r = tracetui::synth::replicate::replicate(&src, target, &mut out).expect("replicate");
        let text = String::from_utf8_lossy(&out).into_owned();
        for k in 0..ranks {
            let jitter = ((k as i64) * 7919) % 500;
            write_rank(
                &text,
                k,
                ranks,
                jitter,
                &dir.join(format!("worker{k}.1.pt.trace.json")),
            );
        }
        fs::write(dir.join("done"), b"").expect("mark");
        eprintln!(
            "generated {ranks} ranks of {} events ({:.1} MB each) in {:.1} s",
            r.events,
            r.bytes as f64 / 1e6,
            t.elapsed().as_secs_f64()
        );
    }
    let exe = env!("CARGO_BIN_EXE_tracetui");
    let cores = tracetui::threads::cores();
    println!(
        "load average at start: {}",
        fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!(
        "source {} × {copies} copies, {ranks} ranks, {cores} cores",
        source.display()
    );
    let rank0 = dir.join("worker0.1.pt.trace.json");
    let rank0 = rank0.to_string_lossy();
    let d = dir.to_string_lossy();
    // Warm the page cache, then best of 3 for the single rank.
    let _ = measure(exe, &["summary", &rank0], None);
    let mut one = (f64::INFINITY, 0.0);
    for _ in 0..3 {
        let (t, m, code) = measure(exe, &["ranks", &rank0, "--json"], Some(1));
        assert_eq!(code, 0, "tracetui ranks on one rank failed");
        if t < one.0 {
            one = (t, m);
        }
    }
    println!(
        "one rank (ranks on one file): {:.2} s, peak RSS {:.0} MB",
        one.0, one.1
    );
    let per_core = (ranks as f64 / cores as f64).ceil() * one.0;
    let (t, m, code) = measure(exe, &["ranks", &d, "--json"], None);
    assert_eq!(code, 0, "tracetui ranks failed");
    println!(
        "{ranks} ranks end to end: {t:.2} s, peak RSS {m:.0} MB; one rank per core would take {per_core:.2} s \
         → {:.2}× (target ≤ 2), memory {:.2}× one rank (target ≤ 2)",
        t / per_core,
        m / one.1
    );
    let (t1, m1, _) = measure(exe, &["ranks", &d, "--json"], Some(1));
    println!("{ranks} ranks with one loading thread: {t1:.2} s, peak RSS {m1:.0} MB");
}
