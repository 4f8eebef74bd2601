//! App-level tests: drive `App::update` with key messages, render with `TestBackend`, snapshot.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;
use std::sync::Arc;
use std::time::Instant;
use tracetui::ui::app::{App, Cmd, Mark, Msg, Row, Screen};
use tracetui::ui::catalog::{self, CaptureRef};
use tracetui::ui::colors::ColorMode;
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::loader::{LoadDone, Loaded};
use tracetui::ui::loading::EntryState;
use tracetui::ui::{demo, draw};

mod common;
use common::{code, key, run_cmds, screen};

/// Moves the picker cursor to entry `i` with the keys.
fn pick(app: &mut App, i: usize) {
    app.update(key('g'));
    for _ in 0..i {
        app.update(key('j'));
    }
    assert_eq!(app.picker_cursor(), i);
}

/// Moves the row cursor with the keys (`g`, then `j`) to the first lane of the demo's CPU
/// thread (device processes lead, so it is not the top row) and returns its row.
fn to_cpu_thread(app: &mut App) -> usize {
    app.update(key('g'));
    let l = app.loaded().unwrap().clone();
    let row = app
        .rows
        .iter()
        .position(|r| matches!(r, Row::Lane { track, lane: 0 } if l.cap.tracks[*track as usize].kind == tracetui::model::TrackKind::Thread))
        .expect("a CPU thread lane");
    for _ in 0..row {
        app.update(key('j'));
    }
    assert_eq!(app.rows.cursor, row);
    row
}

fn demo_app(w: u16, h: u16) -> App {
    let cap = CaptureRef {
        source: tracetui::model::SourceInfo {
            path: "demo.pt.trace.json".into(),
            run: "demo".into(),
            host: "worker0".into(),
            file_bytes: 0,
        },
        format: Some(tracetui::model::Format::Kineto),
        modified: None,
        span: None,
    };
    let (mut app, cmds) = App::new(vec![cap], (w, h), ColorMode::Ansi256);
    let generation = match cmds.as_slice() {
        [Cmd::Load { generation, .. }] => *generation,
        other => panic!("expected one load, got {other:?}"),
    };
    let loaded = Loaded::new(demo::capture(6, 4, true), Instant::now());
    app.update(Msg::Load(LoadDone::finished(
        generation,
        0,
        Ok(Arc::new(loaded)),
    )));
    app
}

fn snap(name: &str, app: &App) {
    // Mask what depends on the machine (file times); insta's `filters` feature is not enabled.
    let text = screen(app);
    let re = regex::Regex::new(r"\d{4}-\d\d-\d\d \d\d:\d\d").unwrap();
    let masked = re.replace_all(&text, "[mtime]         ");
    insta::assert_snapshot!(name, masked);
}

#[test]
fn opens_directly_and_draws_every_region() {
    let app = demo_app(80, 24);
    assert_eq!(app.screen(), Screen::Timeline);
    let s = screen(&app);
    assert!(s.contains("python3"), "{s}");
    assert!(s.contains("GPU 0"), "{s}");
    assert!(s.contains("memory"), "{s}");
    // Cut step labels keep their number.
    assert!(s.contains("Pr…#1"), "{s}");
    // No control character from the evil name reaches the screen.
    assert!(!s.chars().any(|c| c.is_control() && c != '\n'));
}

#[test]
fn stale_generation_is_dropped() {
    let mut app = demo_app(80, 24);
    let before = app.rows.len();
    app.update(Msg::Load(LoadDone::finished(
        app.entries.generation + 7,
        0,
        Err("late".into()),
    )));
    assert!(matches!(app.entries[0].state, EntryState::Ready(_)));
    assert_eq!(app.rows.len(), before);
}

#[test]
fn zoom_pan_and_fit() {
    let mut app = demo_app(120, 40);
    let (a, b) = (app.vp.t0, app.vp.t1);
    app.update(key('w'));
    assert!(app.vp.t1 - app.vp.t0 < b - a);
    app.update(key('s'));
    app.update(key('s'));
    assert!(app.vp.t1 - app.vp.t0 > (b - a) / 2);
    app.update(key('0'));
    assert_eq!((app.vp.t0, app.vp.t1), (a, b));
    app.update(key('w'));
    let t0 = app.vp.t0;
    app.update(key('d'));
    assert!(app.vp.t0 > t0);
    app.update(code(KeyCode::Left));
    assert_eq!(app.vp.t0, t0);
}

#[test]
fn select_navigate_parent_and_partner() {
    let mut app = demo_app(120, 40);
    // Cursor to the first lane of the CPU thread, select, walk down to an op.
    to_cpu_thread(&mut app);
    assert!(matches!(
        app.rows[app.rows.cursor],
        Row::Lane { lane: 0, .. }
    ));
    app.update(code(KeyCode::Enter));
    let step = app.selected.expect("selected a step");
    let l = app.loaded().unwrap().clone();
    assert!(l.cap.slice_name(step).starts_with("ProfilerStep#"));
    app.update(key('j'));
    app.update(key('j'));
    let op = app.selected.unwrap();
    assert_eq!(l.cap.depth(op), 2);
    app.update(key('l'));
    let next = app.selected.unwrap();
    assert!(l.cap.slices.start[next as usize] > l.cap.slices.start[op as usize]);
    app.update(key('h'));
    assert_eq!(app.selected, Some(op));
    app.update(key('u'));
    let parent = app.selected.unwrap();
    assert_eq!(l.cap.depth(parent), 1);
    // Down to a launch and jump to its kernel and back.
    app.update(code(KeyCode::Down));
    app.update(code(KeyCode::Down));
    app.update(code(KeyCode::Down));
    let launch = app.selected.unwrap();
    assert_eq!(l.cap.slice_name(launch), "cudaLaunchKernel");
    app.update(key('p'));
    let kernel = app.selected.unwrap();
    assert_eq!(
        l.cap.slices.corr[kernel as usize],
        l.cap.slices.corr[launch as usize]
    );
    assert_ne!(kernel, launch);
    assert!(
        matches!(app.rows[app.rows.cursor], Row::Lane { track, .. } if track == l.cap.track_of(kernel))
    );
    app.update(key('p'));
    assert_eq!(app.selected, Some(launch));
    // Fit the selection: the window shrinks to about the launch.
    app.update(key('f'));
    let d = l.cap.slices.dur[launch as usize];
    assert!(app.vp.t1 - app.vp.t0 <= d * 2);
}

#[test]
fn collapse_tab_and_mark() {
    let mut app = demo_app(120, 40);
    let n = app.rows.len();
    app.update(key(' '));
    assert!(app.rows.len() < n);
    app.update(key(' '));
    assert_eq!(app.rows.len(), n);
    app.update(code(KeyCode::Tab));
    let t1 = app.rows[app.rows.cursor].track();
    app.update(code(KeyCode::Tab));
    assert_ne!(app.rows[app.rows.cursor].track(), t1);
    app.update(key('G'));
    assert_eq!(app.rows.cursor, app.rows.len() - 1);
    app.update(key('g'));
    assert_eq!(app.rows.cursor, 0);
    app.update(key('0'));
    app.update(key('m'));
    assert!(matches!(app.mark, Mark::Start(_)));
    app.update(key('w'));
    app.update(key('d'));
    app.update(key('m'));
    let Mark::Range(a, b, st) = app.mark.clone() else {
        panic!("no range")
    };
    assert!(b > a);
    assert!(st.slices > 0);
    assert!(st.busy.iter().all(|&(_, busy)| busy <= b - a));
    app.update(code(KeyCode::Esc));
    assert_eq!(app.mark, Mark::None);
}

#[test]
fn help_lists_every_key_and_q_quits() {
    let mut app = demo_app(100, 30);
    app.update(key('?'));
    assert_eq!(app.top(), ViewKind::Help);
    let s = screen(&app);
    for k in [
        "w / + / =",
        "Shift-Tab",
        "Space",
        "Enter",
        "PgDn",
        "q / Ctrl-C",
    ] {
        assert!(s.contains(k), "missing {k}");
    }
    app.update(key('x'));
    assert_ne!(app.top(), ViewKind::Help);
    assert!(matches!(app.update(key('q')).as_slice(), [Cmd::Quit]));
}

#[test]
fn demo_snapshots() {
    let mut app = demo_app(80, 24);
    snap("demo_80x24_start", &app);
    to_cpu_thread(&mut app);
    for m in [code(KeyCode::Enter), key('j'), key('j'), key('w'), key('w')] {
        app.update(m);
    }
    snap("demo_80x24_selected", &app);
    let mut app = demo_app(160, 48);
    to_cpu_thread(&mut app);
    for m in [key('j'), key('j'), code(KeyCode::Enter), key('f')] {
        app.update(m);
    }
    snap("demo_160x48_fit_op", &app);
    app.update(key('c'));
    app.update(key('?'));
    snap("demo_160x48_help", &app);
}

/// A copy of `assets/sample` with fixed file times (the JAX run newer than the PyTorch run). The
/// picker orders by when each capture was taken, from the traces themselves (PyTorch 01:39,
/// JAX 01:25 on 2026-11-22), so the PyTorch run comes first whatever the file times.
fn sample_dir() -> tempfile::TempDir {
    fn copy(from: &std::path::Path, to: &std::path::Path, t: std::time::SystemTime) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let dst = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &dst, t);
            } else {
                std::fs::copy(e.path(), &dst).unwrap();
                let f = std::fs::File::options().write(true).open(&dst).unwrap();
                f.set_modified(t).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let t0 = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_000_000);
    let src = std::path::Path::new("assets/sample");
    copy(&src.join("torch-cnn"), &dir.path().join("torch-cnn"), t0);
    copy(
        &src.join("jax-mlp"),
        &dir.path().join("jax-mlp"),
        t0 + std::time::Duration::from_secs(3600),
    );
    dir
}

#[test]
fn sample_captures_open_through_the_loader() {
    let sample = sample_dir();
    let caps = catalog::scan(sample.path()).unwrap();
    assert!(caps.len() >= 2, "{caps:?}");
    let (mut app, cmds) = App::new(caps, (80, 24), ColorMode::None);
    assert!(cmds.is_empty());
    assert_eq!(app.screen(), Screen::Picker);
    snap("sample_80x24_picker", &app);
    let cmds = app.update(code(KeyCode::Enter));
    run_cmds(&mut app, cmds);
    snap("sample_80x24_first", &app);
    app.update(code(KeyCode::Esc));
    assert_eq!(app.screen(), Screen::Picker);
    app.update(key('j'));
    let cmds = app.update(code(KeyCode::Enter));
    run_cmds(&mut app, cmds);
    app.state_mut().size = (160, 48);
    // The cursor starts on the first lane with slices (issue 22 §3): the thread's lane 0.
    assert!(matches!(
        app.rows[app.rows.cursor],
        Row::Lane { lane: 0, .. }
    ));
    for m in [code(KeyCode::Enter), key('j')] {
        app.update(m);
    }
    snap("sample_160x48_second", &app);
}

#[test]
fn esc_cancels_a_running_load_and_late_results_are_dropped() {
    let caps = catalog::scan(std::path::Path::new("assets/sample")).unwrap();
    let (mut app, _) = App::new(caps, (80, 24), ColorMode::None);
    let cmds = app.update(code(KeyCode::Enter));
    let Some(Cmd::Load { generation, .. }) = cmds.into_iter().next() else {
        panic!("no load")
    };
    assert!(app.loading());
    let cmds = app.update(code(KeyCode::Esc));
    assert!(matches!(cmds.as_slice(), [Cmd::Cancel(_)]));
    assert_eq!(app.screen(), Screen::Picker);
    assert!(!app.loading());
    // The cancelled job's result arrives late: ignored.
    app.update(Msg::Load(LoadDone::finished(
        generation,
        0,
        Err("cancelled".into()),
    )));
    assert!(matches!(app.entries[0].state, EntryState::Idle));
}

#[test]
fn mouse_wheel_zooms_at_the_pointer_and_click_selects() {
    use ratatui::crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let mut app = demo_app(120, 40);
    let lanes = app.areas().lanes;
    let ev = |kind, column, row| {
        Msg::Mouse(MouseEvent {
            kind,
            column,
            row,
            modifiers: KeyModifiers::NONE,
        })
    };
    let w = app.vp.t1 - app.vp.t0;
    let col = lanes.x + lanes.width / 4;
    let at = |app: &App| {
        let k = usize::from(col - lanes.x);
        tracetui::index::column_edge(app.vp.t0, app.vp.t1, lanes.width as usize, k)
    };
    let before = at(&app);
    app.update(ev(MouseEventKind::ScrollUp, col, lanes.y));
    assert!(app.vp.t1 - app.vp.t0 < w);
    // The time under the pointer stays within a column of where it was.
    let col_w = (app.vp.t1 - app.vp.t0) / i64::from(lanes.width);
    assert!(
        (at(&app) - before).abs() <= col_w * 2,
        "{} vs {}",
        at(&app),
        before
    );
    app.update(key('0'));
    // Click the first lane of the CPU thread, left quarter.
    let row = to_cpu_thread(&mut app);
    app.update(key('g'));
    app.update(ev(
        MouseEventKind::Down(MouseButton::Left),
        col,
        lanes.y + row as u16,
    ));
    assert_eq!(app.rows.cursor, row);
    let sel = app.selected.expect("click selects");
    let l = app.loaded().unwrap().clone();
    assert!(l.cap.slice_name(sel).starts_with("ProfilerStep#"));
}

#[test]
fn a_broken_capture_shows_its_error_and_the_others_stay_usable() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run1");
    std::fs::create_dir(&run).unwrap();
    std::fs::write(run.join("bad.pt.trace.json"), b"not a trace at all").unwrap();
    std::fs::copy(
        "assets/sample/torch-cnn/worker0.1795311589169457977.pt.trace.json.gz",
        run.join("good.pt.trace.json.gz"),
    )
    .unwrap();
    let caps = catalog::scan(dir.path()).unwrap();
    assert_eq!(caps.len(), 2, "{caps:?}");
    let (mut app, cmds) = App::new(caps, (100, 30), ColorMode::None);
    assert!(cmds.is_empty());
    let bad = app
        .entries
        .iter()
        .position(|e| e.capture.source.path.ends_with("bad.pt.trace.json"))
        .unwrap();
    pick(&mut app, bad);
    let cmds = app.update(code(KeyCode::Enter));
    run_cmds(&mut app, cmds);
    assert!(matches!(app.entries[bad].state, EntryState::Failed(_)));
    assert_eq!(app.screen(), Screen::Picker);
    let s = screen(&app);
    assert!(
        s.contains("error:") && s.contains("bad.pt.trace.json"),
        "{s}"
    );
    // At 80 columns the whole error is readable (wrapped, at most 3 lines) and the selected
    // row stays on screen above it.
    app.state_mut().size = (80, 24);
    let EntryState::Failed(msg) = app.entries[bad].state.clone() else {
        unreachable!()
    };
    let s = screen(&app);
    assert!(s.contains('▶'), "{s}");
    let squash = |t: &str| t.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let flat = squash(&s);
    assert!(
        msg.chars().count() > 80 && msg.chars().count() < 230,
        "{msg}"
    );
    let tail: String = squash(&msg)
        .chars()
        .rev()
        .take(12)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    assert!(flat.contains(&tail), "{tail:?} not in\n{s}");
    let good = 1 - bad;
    pick(&mut app, good);
    let cmds = app.update(code(KeyCode::Enter));
    run_cmds(&mut app, cmds);
    assert!(matches!(app.entries[good].state, EntryState::Ready(_)));
    assert_eq!(app.screen(), Screen::Timeline);
    assert!(!app.rows.is_empty());
}

#[test]
fn skipped_entries_are_listed_in_the_picker_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("plugins/profile/2024_01_01_00_00_00");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("host1.xplane.riegeli"), b"riegeli bytes").unwrap();
    std::fs::copy(
        "assets/sample/torch-cnn/worker0.1795311589169457977.pt.trace.json.gz",
        dir.path()
            .join("worker0.1795311589169457977.pt.trace.json.gz"),
    )
    .unwrap();
    let (caps, problems) = catalog::scan_all(dir.path()).unwrap();
    assert!(!problems.is_empty(), "riegeli should be reported");
    // One capture opens directly: a notice says entries were skipped, Esc shows them.
    let (mut app, cmds) = App::new(caps.clone(), (100, 30), ColorMode::None);
    app.set_problems(problems.clone());
    assert!(app.notice.as_deref().unwrap_or("").contains("skipped"));
    run_cmds(&mut app, cmds);
    assert_eq!(app.screen(), Screen::Timeline);
    app.update(code(KeyCode::Esc));
    assert_eq!(app.screen(), Screen::Picker);
    let s = screen(&app);
    assert!(s.contains("skipped"), "{s}");
    assert!(s.contains("host1.xplane.riegeli"), "{s}");
    // Still within the screen at 80x24 with many problems; the overflow is counted.
    app.state_mut().problems = (0..40)
        .map(|i| {
            (
                std::path::PathBuf::from(format!("f{i}.xplane.riegeli")),
                "unsupported".into(),
            )
        })
        .collect();
    app.state_mut().size = (80, 24);
    let s = screen(&app);
    assert!(s.contains("40 skipped") && s.contains("more"), "{s}");
    assert!(s.contains("worker0·…"), "the captures stay listed: {s}");
}

/// Cells of row `y` in the lanes area: true where something is drawn.
fn drawn_columns(app: &App, y: u16) -> Vec<bool> {
    let mut t = Terminal::new(TestBackend::new(app.size.0, app.size.1)).unwrap();
    t.draw(|f| draw::draw(app, f)).unwrap();
    let buf = t.backend().buffer().clone();
    let lanes = app.areas().lanes;
    (0..lanes.width)
        .map(|k| buf[(lanes.x + k, y)].symbol() != " ")
        .collect()
}

#[test]
fn a_collapsed_process_draws_a_summary_of_all_its_tracks() {
    let mut app = demo_app(120, 40);
    let l = app.loaded().unwrap().clone();
    let procs: Vec<u32> = app
        .rows
        .iter()
        .filter_map(|r| match r {
            Row::Process(p) => Some(*p),
            _ => None,
        })
        .collect();
    assert!(procs.len() >= 2);
    for zoom in 0..4 {
        for &p in &procs {
            app.state_mut().rows.collapsed.clear();
            app.state_mut().rows.collapsed.insert(p);
            app.rebuild_rows();
            app.state_mut().rows.scroll = 0;
            let r = app.rows.iter().position(|r| *r == Row::Process(p)).unwrap();
            let lanes = app.areas().lanes;
            let drawn = drawn_columns(&app, lanes.y + r as u16);
            let cols = lanes.width as usize;
            for (k, d) in drawn.iter().enumerate() {
                let a = tracetui::index::column_edge(app.vp.t0, app.vp.t1, cols, k);
                let b = tracetui::index::column_edge(app.vp.t0, app.vp.t1, cols, k + 1).max(a + 1);
                // Brute force: some slice of the process overlaps the column with some length.
                let s = &l.cap.slices;
                let busy = (0..s.len()).any(|i| {
                    let t = l.cap.track_of(i as u32) as usize;
                    l.cap.tracks[t].process == p && s.start[i].max(a) < s.end(i).min(b)
                });
                assert_eq!(*d, busy, "process {p} zoom {zoom} column {k}");
            }
        }
        app.update(key('w'));
        app.update(key('d'));
    }
    // On the summary row the status line names the busiest track under the cursor: centre
    // the window on the longest slice.
    let s = &l.cap.slices;
    let big = (0..s.len()).max_by_key(|&i| s.dur[i]).unwrap();
    app.state_mut().selected = None;
    app.set_window(s.start[big], s.end(big));
    let mut busy_seen = false;
    for &p in &procs {
        app.state_mut().rows.collapsed.clear();
        app.state_mut().rows.collapsed.insert(p);
        app.rebuild_rows();
        app.state_mut().rows.cursor = app.rows.iter().position(|r| *r == Row::Process(p)).unwrap();
        let s = screen(&app);
        let status = s.lines().last().unwrap();
        assert!(status.contains("collapsed, "), "{status}");
        busy_seen |= status.contains("collapsed, busiest here: ");
    }
    assert!(busy_seen);
}

#[test]
fn at_80x24_the_details_of_a_selection_take_three_lines_without_overlap() {
    let mut app = demo_app(80, 24);
    let before = app.areas();
    assert_eq!(before.details.height, 1);
    // Walk to the last visible lane, then select: the cursor row must stay visible.
    app.update(key('g'));
    for _ in 0..before.lanes.height - 1 {
        app.update(key('j'));
    }
    // (the last rows may be counters: back to the last lane)
    while !matches!(app.rows[app.rows.cursor], Row::Lane { .. }) {
        app.update(key('k'));
    }
    app.update(code(KeyCode::Enter));
    assert!(app.selected.is_some());
    let ar = app.areas();
    assert_eq!(ar.details.height, 3);
    assert!(ar.lanes.height < before.lanes.height);
    assert!(
        app.rows.cursor >= app.rows.scroll
            && app.rows.cursor < app.rows.scroll + ar.lanes.height as usize
    );
    let s = screen(&app);
    let lines: Vec<&str> = s.lines().collect();
    assert!(
        lines[ar.sep.y as usize].trim_start().starts_with('─'),
        "{s}"
    );
    let d1 = lines[ar.details.y as usize];
    assert!(
        d1.contains("dur") && d1.contains("self") && d1.contains("depth"),
        "{s}"
    );
    let d2 = lines[ar.details.y as usize + 1];
    assert!(!d2.trim().is_empty(), "second details line empty:\n{s}");
    let d3 = lines[ar.details.y as usize + 2];
    assert!(
        d3.contains("start +"),
        "third line: category and times:\n{s}"
    );
    assert!(lines[ar.status.y as usize].contains("help"), "{s}");
    // Clearing the selection gives the rows back.
    app.update(code(KeyCode::Esc));
    assert_eq!(app.areas().details.height, 1);
}

fn open_file(path: &str, w: u16, h: u16) -> App {
    let p = std::path::Path::new(path);
    let cap = CaptureRef::from_file(p, p.parent().unwrap());
    let (mut app, cmds) = App::new(vec![cap], (w, h), ColorMode::None);
    run_cmds(&mut app, cmds);
    assert!(app.loaded().is_some(), "{path} did not load");
    app
}

#[test]
fn alexnet_launch_and_kernel_jump_both_ways_and_show_the_partner() {
    let mut app = open_file("tests/fixtures/ui/alexnet.pt.trace.json.gz", 160, 48);
    let l = app.loaded().unwrap().clone();
    let s = &l.cap.slices;
    let launch = (0..s.len() as u32)
        .find(|&i| l.cap.slice_name(i) == "cudaLaunchKernel" && !l.partners_of(i).is_empty())
        .expect("a cudaLaunchKernel with a partner");
    app.state_mut().selected = Some(launch);
    app.state_mut().partner_ix = 0;
    let s0 = screen(&app);
    let kernel = l.partners_of(launch)[0].1;
    let kt = l.cap.track_of(kernel);
    let kname = tracetui::ui::text::fold(l.cap.slice_name(kernel)).into_owned();
    let ktrack = l.cap.track_name(kt);
    assert!(ktrack.contains("stream"), "kernel track {ktrack}");
    assert!(s0.contains('⇄'), "{s0}");
    assert!(
        s0.contains(&ktrack.trim().to_string()),
        "partner stream shown:\n{s0}"
    );
    assert!(
        s0.contains(&kname.chars().take(20).collect::<String>()),
        "partner name shown:\n{s0}"
    );
    app.update(key('p'));
    assert_eq!(app.selected, Some(kernel));
    // The view follows: the cursor is on the kernel's stream and the kernel is in the window.
    assert_eq!(app.rows[app.rows.cursor].track(), Some(kt));
    assert!(s.start[kernel as usize] < app.vp.t1 && s.end(kernel as usize) > app.vp.t0);
    // The kernel is far narrower than a column of the whole capture: the jump zooms so both
    // ends of the flow are visible and the kernel spans at least two columns.
    let cols = i64::from(app.areas().lanes.width);
    assert!(s.dur[kernel as usize] * cols >= 2 * (app.vp.t1 - app.vp.t0));
    assert!(s.start[launch as usize] >= app.vp.t0 && s.end(launch as usize) <= app.vp.t1);
    let s1 = screen(&app);
    assert!(
        s1.contains("cudaLaunchKernel"),
        "partner of the kernel shown:\n{s1}"
    );
    // The long kernel name is folded on the first details line, which keeps dur and stream.
    let d1 = s1.lines().nth(app.areas().details.y as usize).unwrap();
    assert!(d1.contains("dur") && d1.contains(ktrack.trim()), "{s1}");
    assert!(s1.contains("full name: void at::native"), "{s1}");
    assert!(
        s1.contains("· GPU 0 (python3.10)"),
        "process with its label:\n{s1}"
    );
    app.update(key('p'));
    assert_eq!(app.selected, Some(launch));
}

#[test]
fn streams_are_ordered_by_id_and_gpu_processes_lead_with_their_label() {
    use tracetui::model::{ArgsRef, CaptureBuilder, Format, Key, SourceInfo, TrackKind};
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(1));
    let (gpu, label) = (b.intern("/device:GPU:0"), b.intern("GPU 0"));
    b.process_mut(p).name = gpu;
    b.process_mut(p).label = label;
    let names = [
        "Steps",
        "Stream #135(MemcpyH2D)",
        "Stream #63(Compute)",
        "Stream #9",
    ];
    for (i, n) in names.iter().enumerate() {
        let t = b.track(p, Key::Int(i as i64), TrackKind::XLine);
        let id = b.intern(n);
        b.track_mut(t).name = id;
        b.track_mut(t).sort_index = i as i64;
        let k = b.intern("k");
        b.add_slice(t, 0, 1_000_000, k, k, ArgsRef::NONE, 0);
    }
    let cap = b.finish(SourceInfo::default(), Format::XPlane);
    let l = Loaded::new(cap, Instant::now());
    let rows = tracetui::ui::app::build_rows(&l, &Default::default());
    let order: Vec<String> = rows
        .iter()
        .filter_map(|r| r.track())
        .map(|t| l.cap.track_name(t))
        .collect();
    assert_eq!(
        order,
        [
            "Steps",
            "Stream #9",
            "Stream #63(Compute)",
            "Stream #135(MemcpyH2D)"
        ]
    );
    // The gutter titles processes as the CLI does (issue 20 §5): label first, name after.
    assert_eq!(l.cap.process_title(p), "GPU 0 (/device:GPU:0)");
}

#[test]
fn alexnet_header_and_gutter_read_right_at_80x24() {
    let app = open_file("tests/fixtures/ui/alexnet.pt.trace.json.gz", 80, 24);
    let s = screen(&app);
    assert!(s.contains("▾ GPU 0 (pyth"), "{s}");
    assert!(s.contains("▾ CPU (python"), "{s}");
    // A long file name gives way to the counts in the header.
    let n = app
        .rows
        .iter()
        .filter(|r| matches!(r, Row::Process(_)))
        .count();
    assert!(
        s.lines().next().unwrap().contains(&format!("{n} procs")),
        "{s}"
    );
    // Threads and streams lead; the instant-only marker processes come last.
    let l = app.loaded().unwrap().clone();
    let procs: Vec<String> = app
        .rows
        .iter()
        .filter_map(|r| match r {
            Row::Process(p) => Some(l.cap.process_name(*p)),
            _ => None,
        })
        .collect();
    assert_eq!(
        procs.first().map(String::as_str),
        Some("python3.10"),
        "{procs:?}"
    );
    // Kineto's `Record Window End` (global, pid "") is on a named process (issue 20 §5).
    assert_eq!(procs[procs.len() - 2..], ["Traces", "global"], "{procs:?}");
    let app = open_file("tests/fixtures/ui/alexnet.pt.trace.json.gz", 200, 24);
    let s = screen(&app);
    let head = s.lines().next().unwrap();
    // Epoch microseconds: times are relative, the header gives the wall-clock origin.
    assert!(head.contains("0 = 2023-09-27"), "{head}");
    let drawn = app
        .rows
        .iter()
        .filter(|r| matches!(r, Row::Process(_)))
        .count();
    assert!(head.contains(&format!("{drawn} procs")), "{head}");
}

#[test]
fn at_80x24_a_long_kernel_keeps_its_numbers_and_partner_in_the_details() {
    let mut app = open_file("tests/fixtures/ui/alexnet.pt.trace.json.gz", 80, 24);
    let l = app.loaded().unwrap().clone();
    let kernel = (0..l.cap.slices.len() as u32)
        .filter(|&i| !l.partners_of(i).is_empty())
        .max_by_key(|&i| l.cap.slice_name(i).len())
        .unwrap();
    assert!(l.cap.slice_name(kernel).len() > 80);
    app.select(kernel);
    let ar = app.areas();
    assert_eq!(ar.details.height, 3);
    let s = screen(&app);
    let lines: Vec<&str> = s.lines().collect();
    let d1 = lines[ar.details.y as usize];
    assert!(
        d1.contains("dur") && d1.contains("self") && d1.contains("depth"),
        "{s}"
    );
    let d2 = lines[ar.details.y as usize + 1];
    assert!(d2.contains("⇄ p: thread") && d2.contains(" µs"), "{s}");
}

#[test]
fn instants_at_the_very_end_of_the_capture_are_drawn() {
    let app = open_file("tests/fixtures/ui/alexnet.pt.trace.json.gz", 160, 48);
    let l = app.loaded().unwrap().clone();
    let lanes = app.areas().lanes;
    let mut checked = 0;
    for (r, row) in app.rows.iter().enumerate() {
        let Row::Lane { track, lane: 0 } = *row else {
            continue;
        };
        let tr = &l.cap.tracks[track as usize];
        let (lo, hi) = (tr.instants.0 as usize, tr.instants.1 as usize);
        let inside = l.cap.instants.ts[lo..hi]
            .iter()
            .any(|&t| t >= app.vp.t0 && t <= app.vp.t1);
        if !inside || r >= lanes.height as usize {
            continue;
        }
        let drawn = drawn_columns(&app, lanes.y + r as u16);
        assert!(
            drawn.iter().any(|&d| d),
            "track {} row {r}",
            l.cap.track_name(track)
        );
        checked += 1;
    }
    assert!(checked >= 2, "{checked}");
}

#[test]
fn a_long_picker_list_says_where_the_cursor_is() {
    let p = std::path::Path::new("tests/fixtures/ui/alexnet.pt.trace.json.gz");
    let caps = vec![CaptureRef::from_file(p, p.parent().unwrap()); 30];
    let (mut app, _) = App::new(caps, (80, 24), ColorMode::None);
    let s = screen(&app);
    assert!(s.lines().next().unwrap().contains("1/30"), "{s}");
    app.update(key('G'));
    let s = screen(&app);
    assert!(s.lines().next().unwrap().contains("30/30"), "{s}");
    assert!(s.contains('▶'), "{s}");
    // A list that fits shows no position.
    app.state_mut().size = (80, 60);
    assert!(!screen(&app).lines().next().unwrap().contains("/30"));
}

/// A big file's partial preview is drawn (marked PARTIAL) while its load runs, then replaced by
/// the whole capture; a preview of a stale job is dropped.
#[test]
fn partial_preview_is_drawn_until_the_full_load_lands() {
    let cap = CaptureRef {
        source: tracetui::model::SourceInfo {
            path: "big.pt.trace.json".into(),
            run: "run".into(),
            host: "worker0".into(),
            file_bytes: 0,
        },
        format: Some(tracetui::model::Format::Kineto),
        modified: None,
        span: None,
    };
    let (mut app, cmds) = App::new(vec![cap], (100, 20), ColorMode::Ansi256);
    let generation = match cmds.as_slice() {
        [Cmd::Load { generation, .. }] => *generation,
        other => panic!("expected one load, got {other:?}"),
    };
    let render = |app: &App| {
        let mut t = Terminal::new(TestBackend::new(100, 20)).unwrap();
        t.draw(|f| draw::draw(app, f)).unwrap();
        let b = t.backend().buffer().clone();
        (0..b.area.width)
            .map(|x| b[(x, 0)].symbol().to_string())
            .collect::<String>()
    };
    // Stale preview (older generation): ignored.
    let part = Arc::new(Loaded::new(demo::capture(2, 2, false), Instant::now()));
    app.update(Msg::Load(LoadDone::preview(
        generation.wrapping_sub(1),
        0,
        part.clone(),
    )));
    assert!(app.loaded().is_none());
    app.update(Msg::Load(LoadDone::preview(generation, 0, part.clone())));
    assert!(app.loaded().is_some_and(|l| Arc::ptr_eq(l, &part)));
    assert!(render(&app).contains("PARTIAL"), "{}", render(&app));
    let full = Arc::new(Loaded::new(demo::capture(6, 4, true), Instant::now()));
    app.update(Msg::Load(LoadDone::finished(
        generation,
        0,
        Ok(full.clone()),
    )));
    assert!(app.loaded().is_some_and(|l| Arc::ptr_eq(l, &full)));
    assert!(!render(&app).contains("PARTIAL"));
    assert!(
        app.notice
            .as_deref()
            .is_none_or(|n| !n.contains("partial preview"))
    );
}
