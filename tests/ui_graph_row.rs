//! The timeline's `graphs` row (src/ui/graph_row.rs): a GPU stream that replayed CUDA/HIP
//! graphs shows one block per launch above its lanes; a capture without graphs has no such row.

use tracetui::ui::app::{App, Row};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;

mod common;
use common::{run_cmds, screen};

fn open_file(path: &str, w: u16, h: u16) -> App {
    let p = std::path::Path::new(path);
    let cap = CaptureRef::from_file(p, p.parent().expect("dir"));
    let (mut app, cmds) = App::new(vec![cap], (w, h), ColorMode::None);
    run_cmds(&mut app, cmds);
    assert!(app.loaded().is_some(), "{path} did not load");
    app
}

#[test]
fn the_vllm_decode_stream_shows_its_graph_launch() {
    let app = open_file("tests/fixtures/inference/vllm_decode_full.json.gz", 120, 30);
    let graphs: Vec<u32> = app
        .rows
        .iter()
        .filter_map(|r| match r {
            Row::Graphs(t) => Some(*t),
            _ => None,
        })
        .collect();
    assert_eq!(graphs.len(), 1);
    // The row sits right above the stream's first lane.
    let at = app
        .rows
        .iter()
        .position(|r| *r == Row::Graphs(graphs[0]))
        .expect("row");
    assert_eq!(
        app.rows.get(at + 1),
        Some(&Row::Lane {
            track: graphs[0],
            lane: 0
        })
    );
    let s = screen(&app);
    let line = s
        .lines()
        .find(|l| l.starts_with(" graphs"))
        .unwrap_or_else(|| panic!("no graphs row on the first screen:\n{s}"));
    assert!(line.contains("graph (421 kernels)"), "{line}");
}

#[test]
fn an_eager_capture_has_no_graphs_row() {
    let app = open_file(
        "tests/fixtures/torch_gpu/worker0.1795774111709892780.pt.trace.json.gz",
        120,
        30,
    );
    assert!(!app.rows.iter().any(|r| matches!(r, Row::Graphs(_))));
}
