//! The capture set: several captures stay loaded, reopening a loaded one is instant, and a
//! small memory budget drops the least recently used one (which reloads when opened).

use ratatui::crossterm::event::KeyCode;
use std::sync::Arc;
use std::time::Instant;
use tracetui::model::{Format, SourceInfo};
use tracetui::ui::app::{App, Cmd, Msg, Screen};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::loader::{LoadDone, Loaded};
use tracetui::ui::loading::EntryState;
use tracetui::ui::{demo, state::CaptureId};

mod common;
use common::{code, key, screen};

fn cref(run: &str) -> CaptureRef {
    CaptureRef {
        source: SourceInfo {
            path: format!("{run}.pt.trace.json").into(),
            run: run.into(),
            host: "worker0".into(),
            file_bytes: 0,
        },
        format: Some(Format::Kineto),
        modified: None,
        span: None,
    }
}

fn two_captures() -> App {
    let (app, cmds) = App::new(
        vec![cref("first"), cref("second")],
        (160, 40),
        ColorMode::None,
    );
    assert!(cmds.is_empty());
    app
}

/// Opens entry `i` from the picker; when a load starts, completes it with a demo capture of
/// `steps` steps. Returns true when a load was started.
fn open(app: &mut App, i: usize, steps: u64) -> bool {
    let cmds = app.update(Msg::Open(i));
    let job = cmds.iter().find_map(|c| match c {
        Cmd::Load {
            generation, entry, ..
        } => Some((*generation, *entry)),
        _ => None,
    });
    let Some((generation, entry)) = job else {
        return false;
    };
    let l = Loaded::new(demo::capture(steps, 4, false), Instant::now());
    app.update(Msg::Load(LoadDone::finished(
        generation,
        entry,
        Ok(Arc::new(l)),
    )));
    true
}

fn back_to_picker(app: &mut App) {
    app.update(code(KeyCode::Esc));
    assert_eq!(app.screen(), Screen::Picker);
}

fn is_loaded(app: &App, i: usize) -> bool {
    matches!(app.entries[i].state, EntryState::Ready(_))
}

#[test]
fn a_loaded_capture_reopens_without_reloading() {
    let mut app = two_captures();
    assert!(open(&mut app, 0, 6));
    let first: CaptureId = app.shown().unwrap();
    let model = Arc::as_ptr(app.capture(first).unwrap());
    back_to_picker(&mut app);
    assert!(open(&mut app, 1, 3));
    // Both stay loaded, and the picker says so with their memory.
    assert!(is_loaded(&app, 0) && is_loaded(&app, 1));
    back_to_picker(&mut app);
    let s = screen(&app);
    assert!(s.contains("2 loaded"), "{s}");
    assert_eq!(s.matches(" in memory").count(), 3, "{s}");
    assert!(app.entries[0].bytes > 0 && app.entries[1].bytes > app.entries[0].bytes / 100);
    assert_eq!(
        app.entries.loaded_bytes(),
        app.entries[0].bytes + app.entries[1].bytes
    );
    // Coming back: no load command, the same model, shown at once.
    assert!(
        !open(&mut app, 0, 6),
        "reopening a loaded capture reloaded it"
    );
    assert_eq!(app.screen(), Screen::Timeline);
    assert_eq!(app.shown(), Some(first));
    assert_eq!(Arc::as_ptr(app.loaded().unwrap()), model);
    assert_eq!(app.entries[0].loads, 1);
    // A view can draw either capture by id while both are loaded.
    let second = app.entries.id_of(1).unwrap();
    assert!(app.capture(second).is_some());
    let s = screen(&app);
    assert!(s.contains("python3"), "{s}");
}

#[test]
fn a_small_budget_drops_the_least_recently_used_capture_which_reloads() {
    let mut app = two_captures();
    assert!(open(&mut app, 0, 6));
    let one = app.entries[0].bytes;
    // Room for one capture of this size, not two.
    app.state_mut().entries.budget = one + one / 2;
    back_to_picker(&mut app);
    assert!(open(&mut app, 1, 6));
    // The first (least recently used, not on screen) is dropped; the shown one stays.
    assert!(
        !is_loaded(&app, 0),
        "the least recently used capture stayed"
    );
    assert!(is_loaded(&app, 1));
    assert_eq!(app.entries[0].bytes, 0);
    assert!(app.entries.loaded_bytes() <= app.entries.budget);
    let notice = app.notice.clone().unwrap_or_default();
    assert!(notice.contains("dropped first"), "{notice}");
    // Opening it again reloads it, and now the second is the least recently used.
    back_to_picker(&mut app);
    assert!(open(&mut app, 0, 6), "a dropped capture must reload");
    assert_eq!(app.entries[0].loads, 2);
    assert!(is_loaded(&app, 0) && !is_loaded(&app, 1));
    assert_eq!(app.screen(), Screen::Timeline);
}

#[test]
fn the_shown_capture_is_pinned_even_over_budget() {
    let mut app = two_captures();
    app.state_mut().entries.budget = 1;
    assert!(open(&mut app, 0, 6));
    assert!(is_loaded(&app, 0), "the capture on screen was dropped");
    app.update(key('j'));
    assert!(is_loaded(&app, 0));
}
