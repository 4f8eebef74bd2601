//! Helpers shared by the explorer's test binaries (`mod common;`): key messages, running the
//! app's load commands through the real loader, and the screen as text.
#![allow(dead_code)] // each test binary uses its own subset

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use std::sync::Arc;
use tracetui::ui::app::{App, Cmd, Msg};
use tracetui::ui::draw;
use tracetui::ui::loader::{self, LoadDone};

/// A printable key press.
pub fn key(c: char) -> Msg {
    Msg::Key(KeyEvent::from(KeyCode::Char(c)))
}

/// Any other key press.
pub fn code(k: KeyCode) -> Msg {
    Msg::Key(KeyEvent::from(k))
}

/// Runs the app's commands synchronously (loads through the real loader code, step summaries
/// through the same function the background job runs).
pub fn run_cmds(app: &mut App, cmds: Vec<Cmd>) {
    for c in cmds {
        match c {
            Cmd::Load {
                generation,
                entry,
                capture,
                progress,
            } => {
                let result = loader::load_sync(&capture, &progress).map(Arc::new);
                let more = app.update(Msg::Load(LoadDone::finished(generation, entry, result)));
                run_cmds(app, more);
            }
            Cmd::Summarize(job) => {
                let result = tracetui::ui::summaries::compute(&job);
                let more = app.update(Msg::Summary(job.id, Box::new(result)));
                run_cmds(app, more);
            }
            // The capture job runs on its thread as in the explorer; this waits for it.
            Cmd::Capture { settings, logdir } => {
                let (tx, rx) = std::sync::mpsc::channel();
                tracetui::ui::capture::spawn(settings, logdir, move |d| {
                    let _ = tx.send(d);
                })
                .expect("capture thread");
                let done = rx.recv().expect("capture result");
                let more = app.update(Msg::Captured(done));
                run_cmds(app, more);
            }
            Cmd::SaveCaptureSettings(path, s) => {
                tracetui::ui::capture::save_settings(&path, &s).expect("settings saved");
            }
            _ => {}
        }
    }
}

/// The app opened on one capture file at `size`, its load run through the real loader.
pub fn open_file(path: &str, size: (u16, u16)) -> App {
    let p = std::path::Path::new(path);
    let cap = tracetui::ui::catalog::CaptureRef::from_file(p, p.parent().expect("a file path"));
    let (mut app, cmds) = App::new(vec![cap], size, tracetui::ui::colors::ColorMode::None);
    run_cmds(&mut app, cmds);
    app
}

/// The table view on top of the view stack.
pub fn top_table(app: &App) -> &tracetui::ui::views::table::TableView {
    app.views()
        .last()
        .and_then(|v| {
            v.as_any()
                .downcast_ref::<tracetui::ui::views::table::TableView>()
        })
        .expect("table on top")
}

/// Σ of a table column's numeric sort keys over every row (text keys count 0).
pub fn column_sum(t: &tracetui::ui::views::table::TableView, c: usize) -> f64 {
    t.rows.iter().map(|r| num(r.keys.get(c))).sum()
}

/// A numeric sort key's value (0 for a text key or none).
pub fn num(k: Option<&tracetui::ui::views::table::Key>) -> f64 {
    match k {
        Some(tracetui::ui::views::table::Key::Num(x)) => *x,
        _ => 0.0,
    }
}

/// The app drawn at its size, one line of text per row.
pub fn screen(app: &App) -> String {
    let mut t = Terminal::new(TestBackend::new(app.size.0, app.size.1)).expect("terminal");
    t.draw(|f| draw::draw(app, f)).expect("draw");
    let buf = t.backend().buffer().clone();
    let mut s = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            s.push_str(buf[(x, y)].symbol());
        }
        s.push('\n');
    }
    s
}

#[cfg(unix)]
pub mod pty;
pub mod run;

/// Runs the real `tracetui` binary with `args`: (exit code, stdout, stderr).
pub fn run_cli(args: &[&str]) -> (i32, String, String) {
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .args(args)
        .output()
        .expect("run tracetui");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
