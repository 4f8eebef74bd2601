//! Frame cost of the timeline: a 200×60 frame drawn into `TestBackend` over a synthetic
//! 10 M-slice capture at every zoom level, and the delay from "load finished" to the first frame.
//!
//! Run: `cargo bench --bench frame` (optional argument: number of slices, default 10 000 000).

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracetui::synth::slices::{SliceSpec, nested_capture};
use tracetui::ui::app::{App, Cmd, Msg};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::draw;
use tracetui::ui::loader::{LoadDone, Loaded};

fn key(c: char) -> Msg {
    Msg::Key(KeyEvent::from(KeyCode::Char(c)))
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let (w, h) = (200u16, 60u16);
    let t = Instant::now();
    let cap = nested_capture(&SliceSpec {
        slices: n,
        tracks: 8,
        ..SliceSpec::default()
    });
    let gen_time = t.elapsed();
    let t = Instant::now();
    let loaded = Arc::new(Loaded::new(cap, t));
    println!(
        "capture: {} slices, {} tracks; generate+finish {:.2} s, index+partners {:.2} s",
        loaded.cap.slices.len(),
        loaded.cap.tracks.len(),
        gen_time.as_secs_f64(),
        loaded.load_time.as_secs_f64()
    );

    let src = CaptureRef {
        source: loaded.cap.source.clone(),
        format: None,
        modified: None,
        span: None,
    };
    let (mut app, cmds) = App::new(vec![src], (w, h), ColorMode::True);
    let generation = match cmds.as_slice() {
        [Cmd::Load { generation, .. }] => *generation,
        _ => 0,
    };
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("backend");
    // Load finished → first timeline frame.
    let t = Instant::now();
    app.update(Msg::Load(LoadDone::finished(
        generation,
        0,
        Ok(loaded.clone()),
    )));
    term.draw(|f| draw::draw(&app, f)).expect("draw");
    println!(
        "first timeline frame after load: {:.2} ms (update + draw)",
        t.elapsed().as_secs_f64() * 1e3
    );

    // The index's share: LOD queries alone for the visible lanes over the whole capture.
    let cols = app.areas().lanes.width as usize;
    let rows = app.areas().lanes.height as usize;
    let mut cells = vec![tracetui::index::Cell::EMPTY; cols];
    let mut lanes = 0;
    let t = Instant::now();
    for r in app.rows.iter().take(rows) {
        if let tracetui::ui::app::Row::Lane { track, lane } = *r {
            loaded.index.lod(
                &loaded.cap,
                track,
                lane as usize,
                app.vp.t0,
                app.vp.t1,
                &mut cells,
            );
            lanes += 1;
        }
    }
    println!(
        "index.lod alone, whole capture, {lanes} lanes x {cols} columns: {:.2} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    println!(
        "{:>14} {:>10} {:>10} {:>10}",
        "window", "mean ms", "max ms", "frames"
    );
    let mut worst = Duration::ZERO;
    // Move the cursor into the first thread, then zoom in step by step around the centre.
    app.update(key('j'));
    for level in 0..40 {
        let mut total = Duration::ZERO;
        let mut max = Duration::ZERO;
        let frames = 10;
        for i in 0..frames {
            // Pan a little each frame so nothing is cached between frames.
            app.update(key(if i % 2 == 0 { 'd' } else { 'a' }));
            let t = Instant::now();
            term.draw(|f| draw::draw(&app, f)).expect("draw");
            let d = t.elapsed();
            total += d;
            max = max.max(d);
        }
        worst = worst.max(max);
        println!(
            "{:>14} {:>10.3} {:>10.3} {:>10}",
            tracetui::ui::ruler::format_dur(app.vp.t1 - app.vp.t0),
            total.as_secs_f64() * 1e3 / f64::from(frames),
            max.as_secs_f64() * 1e3,
            frames
        );
        let before = app.vp.t1 - app.vp.t0;
        app.update(key('w'));
        if app.vp.t1 - app.vp.t0 == before || level > 0 && app.vp.t1 - app.vp.t0 < 2_000 {
            break;
        }
    }
    println!(
        "worst frame: {:.3} ms (target ≤ 10 ms)",
        worst.as_secs_f64() * 1e3
    );
}
