//! Derived timeline rows on real and hand-made GPU captures: the per-device GPU queue depth and the
//! per-stream queue length (HTA) sit under their process header; a capture handed to the UI
//! before its derived rows are computed gets them with [`Msg::Derived`], the cursor staying put.

use std::sync::Arc;
use std::time::Instant;
use tracetui::analysis::gpu::{GpuOptions, queue_series};
use tracetui::ui::app::{App, Cmd, Msg, Row};
use tracetui::ui::catalog::{self, CaptureRef};
use tracetui::ui::colors::ColorMode;
use tracetui::ui::loader::{self, LoadDone, Loaded};

mod common;
use common::screen;

fn capture(path: &str) -> CaptureRef {
    let p = std::path::Path::new(path);
    CaptureRef::from_file(p, p.parent().unwrap())
}

/// An app showing `path`, loaded synchronously (`deferred`: without its derived rows).
fn open(path: &str, deferred: bool) -> (App, u64) {
    let (mut app, cmds) = App::new(vec![capture(path)], (120, 30), ColorMode::None);
    let mut generation = 0;
    for c in cmds {
        if let Cmd::Load {
            generation: g,
            entry,
            capture,
            progress,
        } = c
        {
            generation = g;
            let result = if deferred {
                catalog::load(&capture, &progress)
                    .map(|cap| Arc::new(Loaded::new_deferred(cap, Instant::now())))
                    .map_err(|e| e.to_string())
            } else {
                loader::load_sync(&capture, &progress).map(Arc::new)
            };
            app.update(Msg::Load(LoadDone::finished(g, entry, result)));
        }
    }
    (app, generation)
}

#[test]
fn stream_queue_length_rows_follow_hta_series() {
    let (app, _) = open("tests/fixtures/gpu/hand_two_streams.json", false);
    let l = app.loaded().unwrap().clone();
    let names: Vec<&str> = l.derived.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["GPU queue depth", "queue stream 7"]);
    // Stream 7: the series of `analysis::gpu` (launches at 0, 10, 20, 100, 290 µs; activities
    // start at 10, 35, 90, 105, 400 µs); stream 20 has no linked launch, so no row.
    let series = queue_series(&l.cap, &GpuOptions::default());
    let (track, s7) = series.iter().find(|s| !s.1.is_empty()).unwrap();
    let d = &l.derived[1];
    assert_eq!(d.process, l.cap.tracks[*track as usize].process);
    assert_eq!(d.ts, s7.iter().map(|p| p.0).collect::<Vec<_>>());
    assert_eq!(d.value, s7.iter().map(|p| p.1 as f64).collect::<Vec<_>>());
    assert_eq!(d.max, 2.0);
    assert_eq!(d.value.last(), Some(&0.0));
    // Both rows right under the GPU process header, depth first.
    let pos = app.rows.iter().position(|r| *r == Row::Derived(0)).unwrap();
    assert_eq!(app.rows.list[pos - 1], Row::Process(d.process));
    assert_eq!(app.rows.list[pos + 1], Row::Derived(1));
    let s = screen(&app);
    assert!(s.contains("GPU queue depth"), "{s}");
    assert!(s.contains("queue stream 7"), "{s}");
}

#[test]
fn alexnet_shows_a_queue_length_row_per_stream() {
    let (app, _) = open("tests/fixtures/chrome/alexnet_cuda_sync.json.gz", false);
    let l = app.loaded().unwrap().clone();
    let streams = queue_series(&l.cap, &GpuOptions::default())
        .into_iter()
        .filter(|s| !s.1.is_empty())
        .count();
    assert!(streams > 0);
    let queue_rows = l
        .derived
        .iter()
        .filter(|d| d.name.starts_with("queue "))
        .count();
    assert_eq!(queue_rows, streams);
    for (i, d) in l.derived.iter().enumerate() {
        assert!(
            app.rows.contains(&Row::Derived(i as u32)),
            "row {} shown",
            d.name
        );
    }
    insta::assert_snapshot!("alexnet_derived_rows_120x30", screen(&app));
}

#[test]
fn deferred_rows_arrive_with_a_message_and_keep_the_cursor() {
    let (mut app, generation) = open("tests/fixtures/gpu/hand_two_streams.json", true);
    let l = app.loaded().unwrap().clone();
    assert!(l.derived.is_empty() && !l.derived.is_ready());
    assert!(!app.rows.iter().any(|r| matches!(r, Row::Derived(_))));
    let last = app.rows.list.len() - 1;
    app.state_mut().rows.cursor = last;
    let at = app.rows.list[last];
    assert_eq!(l.derive().len(), 2);
    app.update(Msg::Derived(generation));
    assert_eq!(app.rows.list.len(), last + 1 + 2);
    assert_eq!(app.rows.list[app.rows.cursor], at);
    assert!(l.ranking_if_ready().is_some(), "ranked in the same pass");
}
