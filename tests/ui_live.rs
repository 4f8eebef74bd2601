//! The explorer while its log dir is watched: a real watcher on a temp dir feeds `Msg::Watch`
//! into the app; the picker (rendered with `TestBackend`) gains and loses entries, a new capture
//! is announced and opened with its key, a rewritten open capture is reloaded keeping the window
//! and the cursor's track, a deleted open capture stays open. Every wait is bounded.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};
use tracetui::live::{self, WatchEvent, WatchOptions};
use tracetui::ui::app::{App, Msg, Screen};
use tracetui::ui::colors::ColorMode;
use tracetui::ui::live as ui_live;
use tracetui::ui::loading::EntryState;

mod common;
use common::{run_cmds, screen};

const ALEXNET: &str = "tests/fixtures/ui/alexnet.pt.trace.json.gz";
const CNN: &str = "tests/fixtures/chrome/worker0.torch-cpu-cnn.pt.trace.json.gz";

/// Feeds watcher events to the app (running its loads) until `done` holds; panics after 8 s.
fn pump(app: &mut App, rx: &Receiver<WatchEvent>, done: impl Fn(&App) -> bool) {
    let end = Instant::now() + Duration::from_secs(8);
    while !done(app) {
        let left = end.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(e) => {
                let cmds = app.update(Msg::Watch(e));
                run_cmds(app, cmds);
            }
            Err(_) => panic!("timed out; picker:\n{}", screen(app)),
        }
    }
}

/// Watches `dir` with the default options: the watcher (stops when dropped), the catalog it
/// found, and its events.
fn watch(
    dir: &Path,
) -> (
    live::Watcher,
    tracetui::discover::Catalog,
    Receiver<WatchEvent>,
) {
    let (tx, rx) = mpsc::channel();
    let (w, cat) =
        live::start(dir, &WatchOptions::default(), move |e| tx.send(e).is_ok()).expect("watch");
    (w, cat, rx)
}

fn rename_in(dir: &Path, src: &str, name: &str) {
    let tmp = dir.join(format!("{name}.tmp"));
    fs::copy(src, &tmp).expect("copy");
    fs::rename(&tmp, dir.join(name)).expect("rename");
}

#[test]
fn picker_follows_the_log_dir_and_the_open_capture_reloads() {
    let dir = tempfile::tempdir().expect("tempdir");
    rename_in(dir.path(), ALEXNET, "a.pt.trace.json.gz");
    let (_w, cat, rx) = watch(dir.path());
    let caps = cat.captures().map(ui_live::capture_ref).collect();
    let (mut app, cmds) = App::new(caps, (100, 20), ColorMode::Ansi256);
    run_cmds(&mut app, cmds);
    assert_eq!(app.screen(), Screen::Timeline);

    // A new capture appears in the picker with a notice naming it and its key.
    rename_in(dir.path(), CNN, "b.3.pt.trace.json.gz");
    pump(&mut app, &rx, |a| {
        a.entries.len() == 2 && !a.entries[1].writing
    });
    let notice = app.notice.clone().unwrap_or_default();
    assert!(
        notice.starts_with("new capture ") && notice.ends_with("/ b — O opens it"),
        "{notice}"
    );
    app.update(Msg::Key(KeyEvent::from(KeyCode::Esc)));
    assert_eq!(app.screen(), Screen::Picker);
    let s = screen(&app);
    assert!(s.contains(" 2 captures"), "{s}");
    assert!(
        s.lines()
            .any(|l| l.contains(" b·3 ") && l.contains("kineto")),
        "{s}"
    );

    // Its key opens it.
    let cmds = app.update(Msg::Key(KeyEvent::from(KeyCode::Char('O'))));
    run_cmds(&mut app, cmds);
    assert_eq!(app.screen(), Screen::Timeline);
    let open = app.entries.current.expect("open");
    assert_eq!(app.entries[open].capture.source.host, "b");
    assert!(matches!(app.entries[open].state, EntryState::Ready(_)));

    // Rewritten in place (same content): reloaded in the background, window and track kept.
    for _ in 0..3 {
        app.update(Msg::Key(KeyEvent::from(KeyCode::Char('j'))));
    }
    app.update(Msg::Key(KeyEvent::from(KeyCode::Char('w'))));
    let (t0, t1, cursor) = (app.vp.t0, app.vp.t1, app.rows.cursor);
    let before = app.loaded().cloned().expect("loaded");
    let data = fs::read(CNN).expect("fixture");
    {
        let mut f = fs::File::create(dir.path().join("b.3.pt.trace.json.gz")).expect("open");
        for c in data.chunks(data.len() / 3 + 1) {
            f.write_all(c).expect("write");
            f.flush().expect("flush");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    pump(&mut app, &rx, |a| {
        a.loaded().is_some_and(|l| !Arc::ptr_eq(l, &before))
    });
    assert!(
        app.notice
            .as_deref()
            .is_some_and(|n| n.starts_with("reloaded")),
        "{:?}",
        app.notice
    );
    assert_eq!((app.vp.t0, app.vp.t1, app.rows.cursor), (t0, t1, cursor));

    // The other capture deleted: it leaves the picker; the open one deleted: stays open.
    fs::remove_file(dir.path().join("a.pt.trace.json.gz")).expect("rm a");
    pump(&mut app, &rx, |a| a.entries.len() == 1);
    fs::remove_file(dir.path().join("b.3.pt.trace.json.gz")).expect("rm b");
    pump(&mut app, &rx, |a| a.entries[0].gone);
    assert_eq!(app.screen(), Screen::Timeline);
    assert!(app.loaded().is_some());
    assert!(
        app.notice
            .as_deref()
            .is_some_and(|n| n.contains("was deleted")),
        "{:?}",
        app.notice
    );
}

#[test]
fn follow_opens_each_new_capture_when_complete() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_w, cat, rx) = watch(dir.path());
    assert!(cat.is_empty());
    let (mut app, cmds) = App::new(Vec::new(), (100, 20), ColorMode::Ansi256);
    assert!(cmds.is_empty());
    app.state_mut().live.follow = true;
    // Written in chunks: listed as writing, opened only once complete.
    let data = fs::read(ALEXNET).expect("fixture");
    let path = dir.path().join("w.pt.trace.json.gz");
    {
        let mut f = fs::File::create(&path).expect("create");
        f.write_all(&data[..data.len() / 2]).expect("write");
        f.flush().expect("flush");
        pump(&mut app, &rx, |a| a.entries.len() == 1);
        assert!(app.entries[0].writing);
        assert_eq!(app.screen(), Screen::Picker);
        assert!(screen(&app).contains("writing…"), "{}", screen(&app));
        f.write_all(&data[data.len() / 2..]).expect("write");
    }
    pump(&mut app, &rx, |a| a.screen() == Screen::Timeline);
    assert!(
        app.loaded()
            .is_some_and(|l| l.cap.source.file_bytes == data.len() as u64)
    );
}

#[test]
fn opening_a_capture_being_written_waits_for_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_w, _, rx) = watch(dir.path());
    let (mut app, _) = App::new(Vec::new(), (100, 20), ColorMode::Ansi256);
    let data = fs::read(CNN).expect("fixture");
    let mut f = fs::File::create(dir.path().join("x.pt.trace.json.gz")).expect("create");
    f.write_all(&data[..1000]).expect("write");
    f.flush().expect("flush");
    pump(&mut app, &rx, |a| a.entries.len() == 1);
    // Enter on it: nothing is parsed yet, a notice says it opens when complete.
    let cmds = app.update(Msg::Key(KeyEvent::from(KeyCode::Enter)));
    assert!(cmds.is_empty(), "{cmds:?}");
    assert_eq!(app.screen(), Screen::Picker);
    assert!(
        app.notice
            .as_deref()
            .is_some_and(|n| n.contains("opens when complete"))
    );
    f.write_all(&data[1000..]).expect("write");
    drop(f);
    pump(&mut app, &rx, |a| a.loaded().is_some());
    assert_eq!(app.screen(), Screen::Timeline);
}

#[test]
fn a_snapshot_dropped_into_the_log_dir_appears_and_opens_with_its_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    rename_in(dir.path(), ALEXNET, "a.pt.trace.json.gz");
    let (_w, cat, rx) = watch(dir.path());
    let caps = cat.captures().map(ui_live::capture_ref).collect();
    let (mut app, cmds) = App::new(caps, (100, 20), ColorMode::None);
    run_cmds(&mut app, cmds);
    rename_in(
        dir.path(),
        "tests/fixtures/memory/snap_multi.pickle",
        "oom.pickle",
    );
    pump(&mut app, &rx, |a| {
        a.entries.len() == 2 && !a.entries[1].writing
    });
    let notice = app.notice.clone().unwrap_or_default();
    assert!(
        notice.starts_with("new capture ") && notice.contains("/ oom"),
        "{notice}"
    );
    assert_eq!(
        app.entries[1].capture.format,
        Some(tracetui::model::Format::Snapshot)
    );
    // Its key opens it, memory rows included.
    let cmds = app.update(Msg::Key(KeyEvent::from(KeyCode::Char('O'))));
    run_cmds(&mut app, cmds);
    assert_eq!(app.screen(), Screen::Timeline);
    let l = app.loaded().expect("loaded").clone();
    assert_eq!(l.cap.source.path, dir.path().join("oom.pickle"));
    assert_eq!(l.memory().expect("memory").model.tracks.len(), 3);
}
