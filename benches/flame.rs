//! Aggregated flame graphs (issue 24 §4): the merged call tree of a 10 M-slice capture, of a
//! marked range holding 1 M slices, and one re-render of the flame view at 200×60.
//!
//! Run: `cargo bench --bench flame` (`TRACETUI_BENCH_SLICES`, default 10,000,000;
//! `TRACETUI_BENCH_NAMES`, default 256 distinct names — the synthetic generator draws names
//! per level at random, so more names mean far more distinct paths than real traces have).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use std::time::Instant;
use tracetui::analysis::flame::{Scope, build};
use tracetui::synth::slices::{SliceSpec, nested_capture};
use tracetui::ui::views::flame::{FlameState, FlameWidget};

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut out = None;
    let mut ms = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        let v = std::hint::black_box(f());
        ms = ms.min(t.elapsed().as_secs_f64() * 1e3);
        out = Some(v);
    }
    (ms, out.expect("runs > 0"))
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let n = env("TRACETUI_BENCH_SLICES", 10_000_000);
    let names = env("TRACETUI_BENCH_NAMES", 256);
    let c = nested_capture(&SliceSpec {
        slices: n,
        names,
        ..SliceSpec::default()
    });
    let (ms, t) = best(3, || build(&c, &Scope::all(), None));
    println!(
        "merged tree of {} slices ({} names): {ms:.1} ms, {} nodes (target <= 300 ms)",
        c.slices.len(),
        names,
        t.len()
    );
    // A range holding about 1 M slices (slices are spread evenly over time per track).
    let (a, z) = c.span;
    let want = 1_000_000.min(c.slices.len());
    let w = ((z - a) as f64 * want as f64 / c.slices.len().max(1) as f64) as i64;
    let from = a + (z - a) / 2 - w / 2;
    let scope = Scope::range(from, from + w);
    let inside: usize = c
        .tracks
        .iter()
        .map(|tr| {
            let s = &c.slices.start[tr.slices.0 as usize..tr.slices.1 as usize];
            s.partition_point(|&x| x < from + w) - s.partition_point(|&x| x < from)
        })
        .sum();
    let (ms, rt) = best(5, || build(&c, &scope, None));
    println!(
        "merged tree of a range with {inside} slices: {ms:.1} ms, {} nodes (target <= 50 ms)",
        rt.len()
    );
    let st = FlameState::default();
    let area = Rect::new(0, 0, 200, 60);
    let mut buf = Buffer::empty(area);
    let (ms, _) = best(20, || {
        buf.reset();
        FlameWidget {
            tree: &t,
            strings: &c.strings,
            state: &st,
            sandwich: None,
            scope: "bench",
        }
        .draw(&mut buf, area);
    });
    println!("re-render of the flame view at 200x60: {ms:.2} ms (target <= 10 ms)");
}
