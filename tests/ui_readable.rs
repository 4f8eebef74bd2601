//! Issue 53 (§1, §2, §5, §6): readable at 80×24 on the H200 PyTorch captures — the first screen
//! shows a GPU stream and offers `x`; the critical-path table (`W`) gives its names the width;
//! cut names keep what tells rows apart and the column telling identical names apart stays;
//! search says when no name holds the text as typed and highlights the matched characters.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Modifier;
use tracetui::ui::app::{App, Row};
use tracetui::ui::draw;
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::views::search::SearchView;

mod common;
use common::{key, screen, top_table};

/// The fp32 transformer (host and device `ProfilerStep*`).
const H200: &str = "tests/fixtures/torch_gpu/worker0.1795774111709892780.pt.trace.json.gz";
/// The bf16 CUDA-graph transformer: its GEMMs are `nvjet` kernels, no name holds "gemm".
const BF16: &str = "tests/fixtures/torch_gpu/worker0.1795882105227733644.pt.trace.json.gz";

/// Streams 7 and 13 of one GPU.
const STREAMS: &str = "tests/fixtures/torch_gpu/worker0.1795887060116290334.pt.trace.json.gz";

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn open(path: &str, (w, h): (u16, u16)) -> App {
    let app = common::open_file(path, (w, h));
    assert!(app.loaded().is_some(), "{path} did not load");
    app
}

fn buffer(app: &App) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(app.size.0, app.size.1)).expect("terminal");
    t.draw(|f| draw::draw(app, f)).expect("draw");
    t.backend().buffer().clone()
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        app.update(key(c));
    }
}

#[test]
fn the_first_screen_of_a_gpu_capture_shows_a_stream_and_offers_x() {
    for (w, h) in SIZES {
        let app = open(H200, (w, h));
        let s = screen(&app);
        let l = app.loaded().unwrap();
        // A GPU stream lane among the rows in view, with the cursor on one.
        let body = app.body_height();
        let shown = &app.rows[app.rows.scroll..(app.rows.scroll + body).min(app.rows.len())];
        let stream = shown.iter().any(|r| match r {
            Row::Lane { track, .. } => {
                tracetui::ui::rows::stream_id(&l.cap, *track).is_some()
                    && l.cap.tracks[*track as usize].slices.1
                        > l.cap.tracks[*track as usize].slices.0
            }
            _ => false,
        });
        assert!(stream, "no GPU stream on the first screen at {w}×{h}:\n{s}");
        assert!(s.lines().any(|l| l.starts_with(" stream ")), "{s}");
        let status = s.lines().last().unwrap();
        assert!(status.contains("x device"), "{status}");
        insta::assert_snapshot!(format!("h200_first_{w}x{h}"), s);
    }
}

#[test]
fn the_critical_path_table_gives_its_names_the_width() {
    for (w, h) in SIZES {
        let mut app = open(H200, (w, h));
        app.update(key('W'));
        assert_eq!(app.top(), ViewKind::Table);
        let s = screen(&app);
        let t = top_table(&app);
        assert_eq!(t.columns[0].name, "name");
        // The first rows show at least 24 characters of their names.
        let shown = t
            .rows
            .iter()
            .take(5)
            .filter(|r| {
                let n: String = r.cells[0].chars().take(24).collect();
                s.contains(&n)
            })
            .count();
        assert_eq!(shown, 5, "names cut under 24 at {w}×{h}:\n{s}");
        insta::assert_snapshot!(format!("h200_critical_{w}x{h}"), s);
    }
}

#[test]
fn two_streams_of_one_gpu_read_apart_at_80_columns() {
    let mut app = open(STREAMS, (80, 24));
    app.update(key('b'));
    let s = screen(&app);
    let t = top_table(&app);
    assert!(t.rows.len() >= 2, "{s}");
    // Every stream row reads differently and ends with its stream number.
    let lines: Vec<&str> = s.lines().filter(|l| l.contains("│GPU 0 (")).collect();
    assert_eq!(lines.len(), t.rows.len(), "{s}");
    assert!(lines.iter().any(|l| l.contains('…')), "a name is cut: {s}");
    for r in &t.rows {
        let n = r.cells[0].rsplit(' ').next().unwrap();
        let want = format!("stream {n}");
        assert!(s.contains(&want), "{want} not on screen:\n{s}");
    }
    insta::assert_snapshot!("h200_gpu_streams_80x24", s);
}

#[test]
fn names_alike_stay_apart_in_the_statistics_at_80_and_120_columns() {
    for (w, h) in SIZES {
        let mut app = open(H200, (w, h));
        app.update(key('t'));
        typed(&mut app, "/evaluate_function");
        app.update(common::code(ratatui::crossterm::event::KeyCode::Enter));
        let s = screen(&app);
        // The name cell of each row: up to the padding before the count.
        let names: Vec<&str> = s
            .lines()
            .filter_map(|l| l.split_once("│autograd::"))
            .map(|(_, rest)| rest.split("  ").next().unwrap_or(""))
            .collect();
        assert!(names.len() >= 5, "{s}");
        let mut uniq = names.clone();
        uniq.sort_unstable();
        uniq.dedup();
        assert_eq!(uniq.len(), names.len(), "rows read alike at {w}×{h}:\n{s}");
        assert!(names.iter().any(|n| n.contains('…')), "{s}");
        insta::assert_snapshot!(format!("h200_stats_evaluate_function_{w}x{h}"), s);
    }
}

#[test]
fn identical_names_keep_the_column_that_tells_them_apart() {
    let mut app = open(H200, (80, 24));
    app.update(key('t'));
    let t = top_table(&app);
    let steps: Vec<String> = t
        .rows
        .iter()
        .filter(|r| r.cells[0] == "ProfilerStep*")
        .map(|r| r.cells[8].clone())
        .collect();
    assert_eq!(steps.len(), 2, "a host and a device ProfilerStep*");
    assert_ne!(steps[0], steps[1]);
    // Filter to them so both are on screen: the kind column is shown.
    typed(&mut app, "/ProfilerStep");
    app.update(common::code(ratatui::crossterm::event::KeyCode::Enter));
    let s = screen(&app);
    assert!(s.contains("columns hidden"), "{s}");
    assert!(s.contains(" kind"), "kind hidden:\n{s}");
    let rows: Vec<&str> = s.lines().filter(|l| l.contains("ProfilerStep*")).collect();
    assert_eq!(rows.len(), 2, "{s}");
    for k in &steps {
        let short: String = k.chars().take(8).collect();
        assert!(
            rows.iter().any(|r| r.contains(&short)),
            "{k} not shown:\n{s}"
        );
    }
    insta::assert_snapshot!("h200_stats_profiler_steps_80x24", s);
}

#[test]
fn the_columns_a_asks_for_show_at_80_columns() {
    let mut app = open(H200, (80, 24));
    app.update(key('t'));
    app.update(key('A'));
    let s = screen(&app);
    let t = top_table(&app);
    assert!(t.title.contains("achieved"), "{}", t.title);
    let head = s.lines().find(|l| l.contains("│name ")).expect("heads");
    for c in ["TFLOP/s", "TB/s", "% peak"] {
        assert!(head.contains(c), "{c} hidden: {head}\n{s}");
    }
    insta::assert_snapshot!("h200_stats_achieved_80x24", s);
}

#[test]
fn gemm_says_no_name_contains_it_and_highlights_the_letters() {
    for (w, h) in SIZES {
        let mut app = open(BF16, (w, h));
        app.update(key('/'));
        typed(&mut app, "gemm");
        let v = app
            .views()
            .last()
            .and_then(|v| v.as_any().downcast_ref::<SearchView>())
            .expect("search on top");
        let res = v.results.as_ref().expect("results");
        assert!(!res.hits.is_empty());
        assert!(res.only_scattered());
        let s = screen(&app);
        assert!(s.contains("no name contains “gemm”"), "{s}");
        // Matched characters are bold and underlined in the list (rows below the heads).
        let buf = buffer(&app);
        let lit = (0..buf.area.height)
            .flat_map(|y| (0..buf.area.width).map(move |x| (x, y)))
            .filter(|&p| buf[p].modifier.contains(Modifier::UNDERLINED))
            .count();
        assert!(lit >= 4, "no highlight at {w}×{h}");
        // Names take the width first: at 120 columns well over the old 47 characters.
        let head = s.lines().find(|l| l.contains("│name ")).expect("heads");
        let name_w = head.find("count").unwrap() - head.find("name").unwrap();
        assert!(name_w >= if w >= 120 { 60 } else { 28 }, "{name_w}: {head}");
        insta::assert_snapshot!(format!("bf16_search_gemm_{w}x{h}"), s);
    }
}

#[test]
fn contiguous_matches_rank_above_scattered_ones() {
    let mut app = open(BF16, (120, 40));
    app.update(key('/'));
    typed(&mut app, "mm");
    let v = app
        .views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<SearchView>())
        .expect("search on top");
    let res = v.results.as_ref().expect("results");
    let l = app.loaded().unwrap();
    let ranked = &res.hits[..res.ranked()];
    let first_scattered = ranked.iter().position(|h| !h.contiguous);
    assert!(ranked[0].contiguous);
    for (i, h) in ranked.iter().enumerate() {
        let name = l.cap.strings.get(h.name).to_lowercase();
        assert_eq!(name.contains("mm"), h.contiguous, "{name}");
        if let Some(f) = first_scattered {
            assert_eq!(i < f, h.contiguous, "{name} out of its tier");
        }
    }
    let s = screen(&app);
    assert!(s.contains("names match"), "{s}");
    assert!(!s.contains("no name contains"), "{s}");
}
