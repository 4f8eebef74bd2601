//! The terminal explorer (ratatui + crossterm), Elm style: [`app::App`] owns the shared state
//! and a stack of [`views`]; keys are mapped to [`action::Action`]s by the one key table
//! ([`keymap`], rebindable in [`config`]) and handled by the top view; [`app::App::update`]
//! turns a [`app::Msg`] into [`app::Cmd`]s, [`draw::draw`] renders the stack.
//!
//! Threads: an input thread blocks on crossterm events, loader threads parse and index captures;
//! both feed one channel. The main loop blocks on it (ticking at 20 Hz only while a load runs),
//! so an idle explorer uses no CPU.

pub mod action;
pub mod app;
pub mod catalog;
pub mod colors;
pub mod config;
pub mod demo;
pub mod details;
pub mod draw;
pub mod gutter;
pub mod hits;
pub mod keymap;
pub mod layout;
pub mod loader;
pub mod loading;
mod navigate;
pub mod rows;
pub mod ruler;
pub mod status;
pub mod terminal;
pub mod text;
pub mod timeline;
pub mod viewport;
pub mod views;

use app::{App, Cmd, Msg};
use colors::ColorMode;
use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{self, Event, KeyEventKind, MouseEventKind};
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// Opens the interactive explorer on a log dir or file with `config`'s keys and theme
/// (`config_errors` are shown as a notice); returns when the user quits.
pub fn run(
    path: &Path,
    config: &config::Config,
    config_errors: &[config::ConfigError],
) -> std::io::Result<()> {
    let (captures, problems) = catalog::scan_all(path)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let mode = ColorMode::from_env();
    let mut terminal = terminal::init()?;
    let notice = config_errors.first().map(|e| {
        let more = config_errors.len() - 1;
        let more = if more > 0 {
            format!(" (+{more} more)")
        } else {
            String::new()
        };
        format!("config: {}{more}", text::sanitize(&e.to_string()))
    });
    let result = event_loop(&mut terminal, captures, problems, mode, config, notice);
    terminal::restore();
    result
}

fn event_loop(
    terminal: &mut DefaultTerminal,
    captures: Vec<catalog::CaptureRef>,
    problems: Vec<(std::path::PathBuf, String)>,
    mode: ColorMode,
    config: &config::Config,
    notice: Option<String>,
) -> std::io::Result<()> {
    let size = terminal.size()?;
    let (tx, rx) = mpsc::channel::<Msg>();
    let input_tx = tx.clone();
    std::thread::Builder::new()
        .name("tracetui-input".into())
        .spawn(move || {
            loop {
                let msg = match event::read() {
                    Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => Msg::Key(k),
                    Ok(Event::Resize(w, h)) => Msg::Resize(w, h),
                    Ok(Event::Mouse(m)) => match m.kind {
                        MouseEventKind::Down(_)
                        | MouseEventKind::ScrollUp
                        | MouseEventKind::ScrollDown => Msg::Mouse(m),
                        _ => continue,
                    },
                    Ok(_) => continue,
                    Err(_) => break,
                };
                if input_tx.send(msg).is_err() {
                    break;
                }
            }
        })?;
    let (mut app, cmds) = App::with_config(captures, (size.width, size.height), mode, config);
    app.set_problems(problems);
    if notice.is_some() {
        app.notice = notice;
    }
    let mut quit = exec(cmds, &tx);
    while !quit {
        terminal.draw(|f| draw::draw(&app, f))?;
        let msg = if app.loading() {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => Msg::Tick,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        } else {
            match rx.recv() {
                Ok(m) => m,
                Err(_) => break,
            }
        };
        quit = exec(app.update(msg), &tx);
        // Coalesce whatever else is queued into one redraw.
        while !quit && let Ok(m) = rx.try_recv() {
            quit = exec(app.update(m), &tx);
        }
    }
    Ok(())
}

/// Performs commands; true when the app should quit.
fn exec(cmds: Vec<Cmd>, tx: &mpsc::Sender<Msg>) -> bool {
    let mut quit = false;
    for c in cmds {
        match c {
            Cmd::Load {
                generation,
                entry,
                capture,
                progress,
            } => loader::spawn(generation, entry, capture, progress, tx.clone(), Msg::Load),
            Cmd::Cancel(p) => p.cancel.store(true, std::sync::atomic::Ordering::Relaxed),
            Cmd::Quit => quit = true,
        }
    }
    quit
}
