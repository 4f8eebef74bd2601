//! `draw(&App, &mut Frame)`: pure rendering of the whole screen.

use super::app::{App, Screen};
use super::loader::Loaded;
use super::ruler::{format_dur, format_time_res};
use super::status::count;
use super::timeline::Timeline;
use super::{details, gutter, help, picker, ruler, status, text};
use crate::index::Cell;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::style::{Modifier, Style};

/// Draws the whole screen for `app`.
pub fn draw(app: &App, f: &mut Frame) {
    let area = f.area();
    let buf = f.buffer_mut();
    let mut cells = Vec::new();
    draw_into(app, buf, &mut cells);
    if app.help {
        help::draw(buf, area);
    }
}

/// Draws into a buffer covering the terminal; `cells` is reusable scratch.
pub fn draw_into(app: &App, buf: &mut Buffer, cells: &mut Vec<Cell>) {
    let area = buf.area;
    match app.screen {
        Screen::Picker => {
            let mut a = area;
            a.height = a.height.saturating_sub(1);
            picker::draw(app, buf, a);
            let mut s = area;
            s.y = area.bottom().saturating_sub(1);
            s.height = area.height.min(1);
            status::draw(app, buf, s);
        }
        Screen::Timeline => {
            let ar = app.areas_in(area);
            match app.loaded() {
                Some(l) => {
                    header(app, l, buf, ar.header);
                    buf.set_stringn(
                        ar.corner.x,
                        ar.corner.y,
                        format!(" {}", format_dur(app.t1 - app.t0)),
                        ar.corner.width as usize,
                        Style::default().add_modifier(Modifier::DIM),
                    );
                    ruler::draw(buf, ar.ruler, app.t0, app.t1, &app.mark);
                    gutter::draw(app, l, buf, ar.gutter);
                    Timeline { app, l }.draw(buf, ar.lanes, cells);
                    buf.set_stringn(
                        ar.sep.x,
                        ar.sep.y,
                        "─".repeat(ar.sep.width as usize),
                        ar.sep.width as usize,
                        Style::default().add_modifier(Modifier::DIM),
                    );
                    details::draw(app, l, buf, ar.details);
                }
                None => {
                    buf.set_stringn(
                        ar.header.x,
                        ar.header.y,
                        " tracetui",
                        ar.header.width as usize,
                        Style::default().add_modifier(Modifier::BOLD),
                    );
                    let mut body = ar.lanes;
                    body.x = area.x;
                    body.width = area.width;
                    status::draw_loading(app, buf, body);
                }
            }
            status::draw(app, buf, ar.status);
        }
    }
}

fn header(app: &App, l: &Loaded, buf: &mut Buffer, area: ratatui::layout::Rect) {
    let cap = &l.cap;
    let src = &cap.source;
    // Processes drawn: visible ones with at least one track (metadata-only ones are skipped).
    let mut has_track = vec![false; cap.processes.len()];
    for t in &cap.tracks {
        if let Some(h) = has_track.get_mut(t.process as usize) {
            *h = true;
        }
    }
    let procs = cap
        .processes
        .iter()
        .zip(&has_track)
        .filter(|(p, h)| !p.hidden && **h)
        .count();
    let span = app
        .current
        .and_then(|i| app.entries.get(i))
        .and_then(|e| e.capture.span)
        .map_or(String::new(), |s| format!(" · span {s}"));
    // Absolute-epoch captures: the wall-clock time of the origin (times are relative to it).
    let started = cap
        .origin_epoch_ns
        .filter(|&ns| ns > 0)
        .map_or(String::new(), |ns| {
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns as u64);
            format!(" · t0 {} UTC", super::picker::format_mtime(Some(t)))
        });
    let left = format!(
        " tracetui  {} / {} · {} procs · {} tracks · {} events{span}{started}",
        // Long run / file names give way to the counts on narrow terminals.
        text::fit(&text::sanitize(&src.run), (area.width as usize / 4).max(12)),
        text::fit(
            &text::sanitize(&src.host),
            (area.width as usize / 4).max(12)
        ),
        procs,
        cap.tracks.len(),
        count(cap.event_count()),
    );
    let right = format!(
        "{} @ {}  ?",
        format_dur(app.t1 - app.t0),
        format_time_res(app.t0, (app.t1 - app.t0) / 100)
    );
    let w = area.width as usize;
    let rw = text::width(&right);
    let lw = w.saturating_sub(rw + 1);
    buf.set_stringn(
        area.x,
        area.y,
        text::fit(&left, lw),
        lw,
        Style::default().add_modifier(Modifier::BOLD),
    );
    status::put_right(buf, area, &right);
}
