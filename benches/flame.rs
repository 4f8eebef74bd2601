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
use tracetui::model::{
    ArgsRef, Capture, CaptureBuilder, Format, Key, SourceInfo, StrId, TrackKind,
};
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

/// A training-loop shape: one step's call tree (random, `per_step` slices, depth <= 10, 200
/// names) repeated back to back on 8 threads until `n` slices — the same paths every step, as in
/// a real capture of many steps.
fn repeated_steps(n: usize, per_step: usize) -> Capture {
    let step = nested_capture(&SliceSpec {
        slices: per_step,
        tracks: 1,
        max_depth: 10,
        names: 200,
        overlap_ppm: 0,
        seed: 7,
    });
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(1));
    let names: Vec<StrId> = (0..step.strings.len())
        .map(|i| b.intern(step.strings.get(StrId(i as u32))))
        .collect();
    let cat = b.intern("cpu_op");
    let span = step.span.1 - step.span.0 + 1_000_000;
    let tracks: Vec<u32> = (0..8)
        .map(|t| b.track(p, Key::Int(t), TrackKind::Thread))
        .collect();
    b.reserve_slices(n);
    let s = &step.slices;
    'outer: for k in 0.. {
        for &t in &tracks {
            for i in 0..s.len() {
                if b.slice_count() >= n {
                    break 'outer;
                }
                b.add_slice(
                    t,
                    s.start[i] + k as i64 * span,
                    s.dur[i],
                    names[s.name[i].index()],
                    cat,
                    ArgsRef::NONE,
                    0,
                );
            }
        }
    }
    b.finish(SourceInfo::default(), Format::Chrome)
}

fn main() {
    let n = env("TRACETUI_BENCH_SLICES", 10_000_000);
    let names = env("TRACETUI_BENCH_NAMES", 256);
    let r = repeated_steps(n, 20_000);
    let (ms, rt) = best(3, || build(&r, &Scope::all(), None));
    println!(
        "merged tree of {} slices (one 20 k-slice step repeated): {ms:.1} ms, {} nodes (target <= 300 ms)",
        r.slices.len(),
        rt.len()
    );
    let (a, z) = r.span;
    let w = ((z - a) as f64 * 0.1) as i64;
    let from = a + (z - a) / 2;
    let (ms, rr) = best(5, || build(&r, &Scope::range(from, from + w), None));
    println!(
        "  same, a range of 1/10 of the span: {ms:.1} ms, {} nodes (target <= 50 ms for 1 M slices)",
        rr.len()
    );
    drop(r);
    let c = nested_capture(&SliceSpec {
        slices: n,
        names,
        ..SliceSpec::default()
    });
    let (ms, t) = best(3, || build(&c, &Scope::all(), None));
    println!(
        "merged tree of {} random-tree slices ({} names, worst case: almost every slice a new path): {ms:.1} ms, {} nodes",
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
            diff: None,
        }
        .draw(&mut buf, area);
    });
    println!("re-render of the flame view at 200x60: {ms:.2} ms (target <= 10 ms)");
}
