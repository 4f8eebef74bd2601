//! Issue 38 §4–§6 in the explorer: getting around the timeline's rows (`}` / `{` processes, `x`
//! the GPU rows, `G` without a selection, `PgDn` / `PgUp` a page), the GPU breakdown's busy bar
//! beside its figure, the picker's newest-first order within a worker, and a diff title that
//! tells two captures of one worker apart.

use ratatui::crossterm::event::KeyCode;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tracetui::model::ProcessKind;
use tracetui::ui::app::Row;
use tracetui::ui::app::{App, Screen};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::views::table::TableView;

mod common;
use common::{code, key, run_cmds, screen};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/diff")
        .join(name)
}

/// HTA's test capture (a Kineto GPU trace: GPU streams, then CPU threads) opened at `w`×`h`.
fn gpu_app(w: u16, h: u16) -> App {
    let root = fixture("");
    let caps = vec![CaptureRef::from_file(&fixture("hta_test.json.gz"), &root)];
    let (mut app, cmds) = App::new(caps, (w, h), ColorMode::None);
    run_cmds(&mut app, cmds);
    if app.screen() == Screen::Picker {
        let cmds = app.update(code(KeyCode::Enter));
        run_cmds(&mut app, cmds);
    }
    assert!(app.loaded().is_some());
    app
}

fn is_device(app: &App, r: Row) -> bool {
    let cap = &app.loaded().unwrap().cap;
    matches!(r, Row::Process(p) if matches!(
        cap.processes[p as usize].kind,
        ProcessKind::Gpu | ProcessKind::Tpu | ProcessKind::Device
    ))
}

#[test]
fn x_jumps_to_the_gpu_rows_and_braces_walk_the_processes() {
    let mut app = gpu_app(80, 24);
    let procs: Vec<usize> = (0..app.rows.len())
        .filter(|&i| matches!(app.rows[i], Row::Process(_)))
        .collect();
    assert!(procs.len() >= 2, "{procs:?}");
    // The GPU process leads (issue 53 §5): its streams are on the first screen at 80×24, the
    // cursor on the first busy one, and the status line offers `x`.
    let gpu = (0..app.rows.len())
        .find(|&i| is_device(&app, app.rows[i]))
        .expect("a GPU process");
    assert!(gpu < app.rows.scroll + app.body_height(), "GPU row {gpu}");
    let s = screen(&app);
    assert!(s.contains(" stream "), "{s}");
    assert!(s.lines().last().unwrap().contains("x device"), "{s}");
    assert!(
        app.rows.cursor > gpu,
        "cursor {} on a stream below {gpu}",
        app.rows.cursor
    );
    // `x` walks the devices (one here: back to its header, the top row).
    app.update(key('x'));
    assert_eq!(app.rows.cursor, gpu);
    assert_eq!(app.rows.scroll, gpu.min(app.rows.len() - app.body_height()));
    let s = screen(&app);
    assert!(s.contains("stream"), "{s}");
    // `}` from the top walks every process header in order, then wraps.
    app.update(key('g'));
    let mut seen = Vec::new();
    for _ in 0..procs.len() {
        app.update(key('}'));
        if matches!(app.rows[app.rows.cursor], Row::Process(_)) {
            seen.push(app.rows.cursor);
        }
    }
    assert_eq!(seen, procs);
    app.update(key('{'));
    assert_eq!(app.rows.cursor, procs[procs.len() - 2]);
}

#[test]
fn big_g_without_a_selection_and_page_keys_move_a_page() {
    let mut app = gpu_app(80, 24);
    assert!(app.selected.is_none());
    let n = app.rows.len();
    let h = app.body_height();
    assert!(n > 2 * h, "{n} rows, body {h}");
    app.update(key('g'));
    assert_eq!((app.rows.cursor, app.rows.scroll), (0, 0));
    // PgDn: the rows move by a page (less one row kept), the cursor with them.
    app.update(code(KeyCode::PageDown));
    assert_eq!(app.rows.scroll, h - 1);
    assert_eq!(app.rows.cursor, h - 1);
    app.update(code(KeyCode::PageDown));
    assert_eq!(app.rows.scroll, (2 * (h - 1)).min(n - h));
    app.update(code(KeyCode::PageUp));
    app.update(code(KeyCode::PageUp));
    assert_eq!((app.rows.cursor, app.rows.scroll), (0, 0));
    // G with nothing selected: the last row, shown.
    app.update(key('G'));
    assert_eq!(app.rows.cursor, n - 1);
    assert_eq!(app.rows.scroll, n - h);
    // PgDn at the end stays on the last row; PgUp from there moves a page back.
    app.update(code(KeyCode::PageDown));
    assert_eq!(app.rows.cursor, n - 1);
    app.update(code(KeyCode::PageUp));
    assert_eq!(app.rows.scroll, n - h - (h - 1));
}

#[test]
fn the_help_names_the_new_keys() {
    let mut app = gpu_app(160, 48);
    app.update(key('?'));
    let s = screen(&app);
    for want in ["next process", "GPU / accelerator rows"] {
        assert!(s.contains(want), "{want}: {s}");
    }
}

#[test]
fn the_busy_bar_sits_beside_its_figure() {
    use tracetui::ui::views::table_view::bar_cell;
    assert_eq!(
        bar_cell(0.57, "57%", 12),
        ("████▌   ".to_string(), " 57%".to_string())
    );
    assert_eq!(bar_cell(0.0, "0%", 6).0, "   ");
    assert_eq!(bar_cell(1.0, "100%", 8).0, "███");
    for (w, h) in [(80u16, 24u16), (160, 48)] {
        let mut app = gpu_app(w, h);
        app.update(key('b'));
        assert_eq!(app.top(), ViewKind::Table);
        let s = screen(&app);
        assert!(!s.contains("█%"), "{s}");
        let t = app
            .views()
            .last()
            .and_then(|v| v.as_any().downcast_ref::<TableView>())
            .expect("GPU table");
        // Every row's figure is drawn whole, after its bar (at 80 columns the bar column is
        // past the right edge).
        for r in t.rows.iter().filter(|_| w == 160) {
            let pct = r.cells.last().unwrap();
            assert!(
                s.lines().any(|l| l.contains(&format!(" {pct}"))),
                "{pct}: {s}"
            );
        }
        if w == 160 {
            insta::assert_snapshot!(format!("gpu_busy_bar_{w}x{h}"), s);
        }
    }
}

/// Two captures of one worker (same run, same host), their files written 7 minutes apart.
fn one_worker_two_spans() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let t0 = UNIX_EPOCH + Duration::from_secs(1_795_000_000);
    for (src, dst, t) in [
        ("hand_a.json", "worker0.1000.pt.trace.json", t0),
        (
            "hand_b.json",
            "worker0.2000.pt.trace.json",
            t0 + Duration::from_secs(420),
        ),
    ] {
        let to = run.join(dst);
        std::fs::copy(fixture(src), &to).unwrap();
        let f = std::fs::File::options().write(true).open(&to).unwrap();
        f.set_modified(t).unwrap();
    }
    dir
}

fn mtime_of(app: &App, i: usize) -> SystemTime {
    app.entries[i].capture.modified.expect("mtime")
}

#[test]
fn a_workers_captures_are_listed_newest_first() {
    let dir = one_worker_two_spans();
    let caps = tracetui::ui::catalog::scan(dir.path()).unwrap();
    // Discovery lists them by span: the older first.
    assert!(caps[0].source.path.ends_with("worker0.1000.pt.trace.json"));
    let (app, _) = App::new(caps, (100, 24), ColorMode::None);
    assert!(mtime_of(&app, 0) > mtime_of(&app, 1));
    assert!(
        app.entries[0]
            .capture
            .source
            .path
            .ends_with("worker0.2000.pt.trace.json")
    );
    // On screen: 11:13 above 11:06.
    let s = screen(&app);
    assert!(s.contains("newest first"), "{s}");
    let (newer, older) = (s.find("11:13"), s.find("11:06"));
    assert!(newer.is_some() && newer < older, "{s}");
}

#[test]
fn the_diff_title_tells_two_captures_of_one_worker_apart() {
    let dir = one_worker_two_spans();
    let caps = tracetui::ui::catalog::scan(dir.path()).unwrap();
    for (w, h) in [(80u16, 24u16), (160, 48)] {
        let (mut app, cmds) = App::new(caps.clone(), (w, h), ColorMode::None);
        run_cmds(&mut app, cmds);
        // Entry 0 is the newer (worker0.2000, B); mark the older as A.
        app.update(key('j'));
        app.update(key('b'));
        app.update(key('k'));
        let cmds = app.update(key('d'));
        run_cmds(&mut app, cmds);
        assert_eq!(app.top(), ViewKind::Table);
        let t = app
            .views()
            .last()
            .and_then(|v| v.as_any().downcast_ref::<TableView>())
            .expect("diff table");
        assert!(
            t.title.starts_with(
                "diff · B worker0.2000 (~11-18 11:13) vs A worker0.1000 (~11-18 11:06)"
            ),
            "{}",
            t.title
        );
        let s = screen(&app);
        insta::assert_snapshot!(format!("one_worker_diff_{w}x{h}"), s);
    }
}
