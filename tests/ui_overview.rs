//! The explorer's steps and ranks (issue 23): the `Steps` row and the step keys on the timeline,
//! the run overview (`R`) over a hand-made 4-rank run — summaries of loaded and not-loaded
//! ranks, heatmap and rank table at 80×24 and 160×48, metric switch, cell cursor, `Enter`
//! opening the cell's rank zoomed to its step — a single capture as one row, and a PTY run of
//! the real binary.

mod common;
use common::run::write_run;
use common::{code, key, run_cmds, screen};
use ratatui::crossterm::event::KeyCode;
use std::path::Path;
use tracetui::analysis::ranks::Metric;
use tracetui::ui::app::{App, Row};
use tracetui::ui::catalog;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::views::overview_view::OverviewView;

/// The app over the run in `dir` at `size`, with the capture of `host` open.
fn app_on(dir: &Path, size: (u16, u16), host: &str) -> App {
    let caps = catalog::scan(dir).expect("scan");
    let (mut app, cmds) = App::new(caps, size, ColorMode::Ansi256);
    run_cmds(&mut app, cmds);
    let i = app
        .entries
        .iter()
        .position(|e| e.capture.source.host == host)
        .expect("host listed");
    let cmds = app.update(tracetui::ui::app::Msg::Open(i));
    run_cmds(&mut app, cmds);
    assert!(app.loaded().is_some());
    app
}

fn overview(app: &App) -> &OverviewView {
    app.views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<OverviewView>())
        .expect("the overview is on top")
}

fn press(app: &mut App, c: char) {
    let cmds = app.update(key(c));
    run_cmds(app, cmds);
}

#[test]
fn overview_of_a_four_rank_run_and_enter_opens_the_step() {
    let d = tempfile::tempdir().expect("tempdir");
    write_run(d.path(), 4);
    let mut app = app_on(d.path(), (80, 24), "node_100");
    // Only the open rank is loaded, and summarized right after its load; the overview
    // summarizes the other three from their files.
    assert_eq!(app.entries.loaded_count(), 1);
    let open = app.shown().expect("shown");
    assert!(app.summaries.ready(open).is_some());
    press(&mut app, 'R');
    assert_eq!(app.top(), ViewKind::Overview);
    let ov = overview(&app);
    assert_eq!(ov.rows_len(), 4);
    let o = ov.overview.as_ref().expect("built");
    assert_eq!(o.ranks, vec![0, 1, 2, 3]);
    assert_eq!(o.data.cols, vec![0, 1, 2, 3, 4, 5]);
    // Summarizing loaded no model into the capture set.
    assert_eq!(app.entries.loaded_count(), 1);
    // Step 3 is the slowest column (rank 2's GEMM holds everyone): marked ▲ on every rank.
    let slow: Vec<usize> = o.data.slowest.iter().map(|c| c % 6).collect();
    assert!(slow.contains(&3), "{slow:?}");
    // Rank 2 arrives last at the step-3 all-reduce: among HTA's two candidates (rank 3, the
    // slowest in every other step, is the other).
    assert!(ov.stragglers.contains(&2), "{:?}", ov.stragglers);
    insta::assert_snapshot!("overview_80x24", screen(&app));
    // Exposed communication: rank 2 waits least in step 3, its peers 80 µs more.
    press(&mut app, 'm');
    press(&mut app, 'm');
    let o = overview(&app).overview.as_ref().expect("built");
    assert_eq!(o.metric, Metric::ExposedComm);
    let v = |r: usize| o.data.get(r, 3).expect("value");
    assert!(v(0) > v(2) + 70_000_000.0, "{} vs {}", v(0), v(2));
    // Cursor to rank 2, step 3, then Enter: rank 2's timeline zoomed to its step 3.
    press(&mut app, 'j');
    press(&mut app, 'j');
    for _ in 0..3 {
        press(&mut app, 'l');
    }
    let (id, n, t0, t1) = overview(&app).target().expect("cell has a step");
    assert_eq!(n, 3);
    let cmds = app.update(code(KeyCode::Enter));
    run_cmds(&mut app, cmds);
    assert_eq!(app.top(), ViewKind::Timeline);
    assert_eq!(app.shown(), Some(id));
    let host = &app.loaded().expect("loaded").cap.source.host;
    assert_eq!(host, "node_102");
    assert!(app.vp.t0 <= t0 && app.vp.t1 >= t1, "{:?}", (app.vp, t0, t1));
    assert!(
        app.vp.width() <= (t1 - t0) * 12 / 10,
        "{:?}",
        (app.vp, t0, t1)
    );
    let s = screen(&app);
    assert!(s.contains("step 3"), "{s}");
    // Rank 0 stays loaded (least recently used, within the budget), rank 2 now too.
    assert_eq!(app.entries.loaded_count(), 2);
    // R again: the summaries are kept, nothing is summarized twice.
    let cmds = app.update(key('R'));
    assert!(cmds.is_empty(), "{cmds:?}");
    assert_eq!(overview(&app).rows_len(), 4);
    // The cursor starts on the open capture's rank.
    assert_eq!(
        overview(&app).overview.as_ref().map(|o| o.cursor.0),
        Some(2)
    );
}

#[test]
fn overview_at_160x48_with_the_table_sorted() {
    let d = tempfile::tempdir().expect("tempdir");
    write_run(d.path(), 4);
    let mut app = app_on(d.path(), (160, 48), "node_101");
    press(&mut app, 'R');
    // Sort by max step time (column 5), then reverse.
    for _ in 0..5 {
        press(&mut app, 's');
    }
    press(&mut app, 'S');
    let o = overview(&app).overview.as_ref().expect("built");
    assert_eq!(o.sort.0, 5);
    // The cursor starts on the open capture's rank.
    assert_eq!(o.cursor.0, 1);
    insta::assert_snapshot!("overview_160x48", screen(&app));
    // Esc closes it.
    let cmds = app.update(code(KeyCode::Esc));
    run_cmds(&mut app, cmds);
    assert_ne!(app.top(), ViewKind::Overview);
}

#[test]
fn a_single_capture_is_one_row() {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ui/alexnet.pt.trace.json.gz");
    let caps = catalog::scan(&p).expect("scan");
    let (mut app, cmds) = App::new(caps, (80, 24), ColorMode::Ansi256);
    run_cmds(&mut app, cmds);
    press(&mut app, 'R');
    let ov = overview(&app);
    assert_eq!(ov.rows_len(), 1);
    let o = ov.overview.as_ref().expect("built");
    assert_eq!(o.ranks.len(), 1);
    assert!(!o.data.cols.is_empty());
    assert!(screen(&app).contains("1 ranks"));
}

#[test]
fn an_allocator_snapshot_beside_a_capture_is_not_a_rank() {
    // A real H200 capture (cut, tests/fixtures/gpu/PROVENANCE.md) with the allocator snapshot
    // and torch's export_stacks file beside it, as gen_torch_capture.py writes them.
    let d = tempfile::tempdir().expect("tempdir");
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for (from, to) in [
        (
            "gpu/h200_torch_cut.pt.trace.json.gz",
            "worker0.1.pt.trace.json.gz",
        ),
        ("memory/h200_snapshot_cut.pickle", "memory_snapshot.pickle"),
        (
            "flame/worker0.1795536379695100043.torch.stacks.txt",
            "worker0.1.stacks.txt",
        ),
    ] {
        std::fs::copy(fx.join(from), d.path().join(to)).expect("copy");
    }
    let caps = catalog::scan(d.path()).expect("scan");
    let (mut app, cmds) = App::new(caps, (80, 24), ColorMode::Ansi256);
    run_cmds(&mut app, cmds);
    let names: Vec<String> = app
        .entries
        .iter()
        .map(|e| e.capture.source.path.display().to_string())
        .collect();
    assert!(names.iter().any(|n| n.ends_with(".pickle")), "{names:?}");
    let i = names
        .iter()
        .position(|n| n.ends_with(".pt.trace.json.gz"))
        .expect("the capture is listed");
    let cmds = app.update(tracetui::ui::app::Msg::Open(i));
    run_cmds(&mut app, cmds);
    press(&mut app, 'R');
    let ov = overview(&app);
    assert_eq!(ov.rows_len(), 1);
    assert!(screen(&app).contains("1 ranks"));
}

#[test]
fn steps_row_and_step_keys() {
    let d = tempfile::tempdir().expect("tempdir");
    write_run(d.path(), 1);
    let mut app = app_on(d.path(), (100, 30), "node_100");
    let l = app.loaded().expect("loaded").clone();
    let steps = &l.steps.steps;
    assert_eq!(steps.len(), 6);
    // The Steps row leads; the cursor starts below it, on the first busy lane.
    assert_eq!(app.rows.first(), Some(&Row::Steps));
    assert!(app.rows.cursor >= 1);
    assert!(matches!(
        app.rows.get(app.rows.cursor),
        Some(Row::Lane { .. })
    ));
    let s = screen(&app);
    assert!(s.contains(" Steps "), "{s}");
    // `]` from the whole capture: the step under the centre's successor, fitted.
    let inside = |app: &App, k: usize| {
        let m = app.vp.t0 + app.vp.width() / 2;
        steps[k].start <= m && m < steps[k].end && app.vp.width() <= steps[k].dur() * 12 / 10
    };
    press(&mut app, 'z');
    let k = (0..6).find(|&k| inside(&app, k)).expect("zoomed to a step");
    press(&mut app, ']');
    assert!(inside(&app, k + 1));
    press(&mut app, '[');
    press(&mut app, '[');
    assert!(inside(&app, k - 1));
    // The status line names it.
    let s = screen(&app);
    let last = s.lines().last().unwrap_or_default();
    assert!(
        last.contains(&format!("step {} ({}/6)", k - 1, k)),
        "{last}"
    );
    // Zoomed inside a step, `]` keeps the zoom and the phase within the step.
    press(&mut app, 'w');
    press(&mut app, 'w');
    let (w, off) = (app.vp.width(), app.vp.t0 - steps[k - 1].start);
    press(&mut app, ']');
    assert_eq!(app.vp.width(), w);
    assert_eq!(app.vp.t0 - steps[k].start, off);
    // On the Steps row, h / l walk the steps and Enter zooms.
    press(&mut app, 'g');
    assert_eq!(app.rows.cursor, 0);
    press(&mut app, 'l');
    assert!(inside(&app, k + 1));
    press(&mut app, 'h');
    assert!(inside(&app, k));
    // Past the last step: a notice, the window stays.
    for _ in 0..6 {
        press(&mut app, ']');
    }
    assert!(inside(&app, 5));
    let s = screen(&app);
    assert!(s.contains("no step after"), "{s}");
}

#[test]
fn aligned_ranks_show_the_late_rank() {
    use tracetui::ui::views::aligned::{Align, AlignedView};
    let d = tempfile::tempdir().expect("tempdir");
    write_run(d.path(), 4);
    let mut app = app_on(d.path(), (80, 24), "node_100");
    press(&mut app, 'R');
    for _ in 0..3 {
        press(&mut app, 'l');
    }
    press(&mut app, 't');
    assert_eq!(app.top(), ViewKind::Aligned);
    let v = app
        .views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<AlignedView>())
        .expect("aligned view on top");
    assert_eq!((v.rows.len(), v.step, v.align), (4, 3, Align::Collectives));
    // Each rank's busiest device track is its GEMM stream.
    assert!(
        v.rows
            .iter()
            .all(|r| r.tracks.tracks[0].name.starts_with("stream 7"))
    );
    // The second busiest: the all-reduce stream (Tab), and back.
    let cmds = app.update(code(KeyCode::Tab));
    run_cmds(&mut app, cmds);
    let v = app
        .views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<AlignedView>())
        .expect("aligned view on top");
    assert_eq!(v.pick, 1);
    assert!(v.track(0).is_some_and(|t| t.name.starts_with("stream 9")));
    assert!(screen(&app).contains("aligned ranks · 2nd busiest device track"));
    let cmds = app.update(code(KeyCode::BackTab));
    run_cmds(&mut app, cmds);
    // Busy columns of each rank in step 3: rank 2's GEMM runs 80 µs longer.
    let s = screen(&app);
    let busy = |rank: usize| {
        let line = s
            .lines()
            .find(|l| {
                l.trim_start_matches(['!', ' '])
                    .starts_with(&format!("rank {rank}"))
            })
            .expect("rank row");
        line.chars().skip(9).filter(|c| "░▒▓█".contains(*c)).count()
    };
    assert!(busy(2) > busy(0) + 20, "{s}");
    insta::assert_snapshot!("aligned_80x24", s);
    // `m`: wall clock, then step start; then the next step; Enter opens rank 0 at the window.
    press(&mut app, 'm');
    press(&mut app, 'm');
    press(&mut app, ']');
    let v = app
        .views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<AlignedView>())
        .expect("aligned view on top");
    assert_eq!((v.step, v.align), (4, Align::StepStart));
    let (w0, w1) = v.window;
    assert!(
        w0 < 0 && w1 > 0,
        "step 4 starts at 0 on every rank: {:?}",
        v.window
    );
    app.state_mut().size = (160, 48);
    insta::assert_snapshot!("aligned_160x48", screen(&app));
    app.state_mut().size = (80, 24);
    let cmds = app.update(code(KeyCode::Enter));
    run_cmds(&mut app, cmds);
    assert_eq!(app.top(), ViewKind::Timeline);
    let l = app.loaded().expect("loaded").clone();
    let st4 = l
        .steps
        .steps
        .iter()
        .find(|s| s.number == 4)
        .expect("step 4");
    assert!(app.vp.t0 <= st4.start && app.vp.t1 >= st4.end);
}

#[test]
fn help_of_the_new_views_fits_80x24_without_cutting_a_line() {
    let app = App::new(Vec::new(), (80, 24), ColorMode::Ansi256).0;
    for kind in [ViewKind::Timeline, ViewKind::Overview, ViewKind::Aligned] {
        let rows = app.keymap.help_rows(kind);
        // The popup is 76 wide: 74 inside, a key column of the widest keys (8..=22), 2 gaps.
        let kw = rows
            .iter()
            .map(|(k, _)| k.chars().count())
            .max()
            .unwrap_or(0)
            .clamp(8, 22);
        // On the timeline, the rows of the step and overview keys (issue 22 shortens the others).
        let mine = |k: &str| kind != ViewKind::Timeline || ["[", "]", "z", "R"].contains(&k);
        for (k, what) in rows.iter().filter(|(k, _)| mine(k)) {
            assert!(
                what.chars().count() <= 74 - 2 - kw,
                "{kind:?}: `{k}` {what} is cut"
            );
        }
    }
}
