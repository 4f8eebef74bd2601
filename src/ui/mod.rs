//! The terminal explorer (ratatui + crossterm), Elm style: [`state::State`] is what every view
//! reads; [`app::App`] owns it with a stack of [`views`] and is its one writer; keys are mapped
//! to [`action::Action`]s by the one key table ([`keymap`], rebindable in [`config`]) and
//! handled by the top view, which answers with [`msg::Msg`]s; [`app::App::update`] turns a
//! `Msg` into [`msg::Cmd`]s, [`draw::draw`] renders the stack from `&State`.
//!
//! Threads: an input thread blocks on crossterm events, loader threads parse and index captures,
//! the watcher thread ([`crate::live`]) reports new, changed and removed captures ([`live`]);
//! all feed one channel. The main loop blocks on it (ticking at 20 Hz only while a load runs),
//! so an idle explorer uses no CPU.

pub mod action;
pub mod app;
pub mod budget;
pub mod capture;
pub mod catalog;
pub mod colors;
pub mod config;
pub mod demo;
pub mod details;
pub mod diff_lanes;
pub mod draw;
pub mod event_info;
pub mod graph_row;
pub mod graph_spans;
pub mod gutter;
pub mod hits;
pub mod keymap;
pub mod layout;
pub mod live;
pub mod loader;
pub mod loading;
pub mod memory;
mod memory_nav;
pub mod msg;
mod navigate;
pub mod rows;
pub mod ruler;
pub mod span_row;
pub mod state;
pub mod status;
mod step_nav;
pub mod steps_row;
pub mod summaries;
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
    run_live(path, config, config_errors, false)
}

/// [`run`], watching `path` for new, changed and removed captures; with `follow` each new
/// capture opens as soon as it is complete. Where watching fails the explorer still opens
/// (with a notice).
pub fn run_live(
    path: &Path,
    config: &config::Config,
    config_errors: &[config::ConfigError],
    follow: bool,
) -> std::io::Result<()> {
    let (tx, rx) = mpsc::channel::<Msg>();
    let watch_tx = tx.clone();
    let watched = crate::live::start(path, &crate::live::WatchOptions::default(), move |e| {
        watch_tx.send(Msg::Watch(e)).is_ok()
    });
    let (watcher, captures, problems, watch_notice) = match watched {
        Ok((w, cat)) => {
            // The watcher's catalog holds the allocator snapshots too.
            let caps = cat.captures().map(live::capture_ref).collect();
            (Some(w), caps, cat.problems, None)
        }
        Err(e) => {
            let (c, p) = catalog::scan_all(path)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            (
                None,
                c,
                p,
                Some(format!("not watching for new captures: {e}")),
            )
        }
    };
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
    let notice = notice.or(watch_notice);
    let chans = (tx, rx);
    let result = event_loop(
        &mut terminal,
        chans,
        captures,
        problems,
        mode,
        config,
        notice,
        follow,
        path,
    );
    terminal::restore();
    drop(watcher);
    result
}

#[allow(clippy::too_many_arguments)]
fn event_loop(
    terminal: &mut DefaultTerminal,
    (tx, rx): (mpsc::Sender<Msg>, mpsc::Receiver<Msg>),
    captures: Vec<catalog::CaptureRef>,
    problems: Vec<(std::path::PathBuf, String)>,
    mode: ColorMode,
    config: &config::Config,
    notice: Option<String>,
    follow: bool,
    logdir: &Path,
) -> std::io::Result<()> {
    let size = terminal.size()?;
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
    app.state_mut().live.follow = follow;
    {
        let c = &mut app.state_mut().capture;
        c.settings = config.capture.clone();
        // Remembered where the config was read, else at the default path.
        c.config_path = config.path.clone().or_else(config::default_path);
        c.logdir = if logdir.is_dir() {
            logdir.to_path_buf()
        } else {
            std::path::PathBuf::from(".")
        };
    }
    if notice.is_some() {
        app.state_mut().notice = notice;
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
            } => loader::spawn(
                generation,
                entry,
                capture,
                progress,
                tx.clone(),
                Msg::Load,
                Msg::Derived,
            ),
            Cmd::Cancel(p) => p.cancel.store(true, std::sync::atomic::Ordering::Relaxed),
            Cmd::Summarize(job) => {
                summaries::spawn(job, tx.clone(), |id, r| Msg::Summary(id, Box::new(r)))
            }
            Cmd::SaveCaptureSettings(path, s) => {
                if let Err(e) = capture::save_settings(&path, &s) {
                    let _ = tx.send(Msg::Notice(format!(
                        "capture settings not saved to {}: {e}",
                        text::sanitize(&path.display().to_string())
                    )));
                }
            }
            Cmd::Capture { settings, logdir } => {
                let done_tx = tx.clone();
                let spawned = capture::spawn(settings, logdir, move |d| {
                    let _ = done_tx.send(Msg::Captured(d));
                });
                if let Err(e) = spawned {
                    let _ = tx.send(Msg::Captured(capture::Done {
                        landed: Vec::new(),
                        errors: vec![format!("cannot start the capture thread: {e}")],
                    }));
                }
            }
            Cmd::Quit => quit = true,
        }
    }
    quit
}
