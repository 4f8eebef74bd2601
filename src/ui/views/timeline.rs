//! The timeline view: header, ruler, gutter, lanes, details panel and status line of one
//! capture (or its loading panel), which it names by id. Its keys act on the shared state
//! (window, rows, selection), which other views (search, rankings) drive too, so it forwards
//! them to `App::update` as [`Msg::Nav`].

use super::View;
use super::details_view::DetailsView;
use super::flame_view::FlameView;
use super::gpu::gpu_view;
use super::help::help_for;
use super::memory::{memory_row_at_cursor, memory_view};
use super::memory_flame::MemoryFlameView;
use super::overview_view::OverviewView;
use super::rank::rank_view;
use super::search::SearchView;
use super::stats::stats_view;
use crate::index::Cell;
use crate::ui::action::Action;
use crate::ui::keymap::ViewKind;
use crate::ui::loader::Loaded;
use crate::ui::loading::Entry;
use crate::ui::msg::Msg;
use crate::ui::ruler::{format_dur, format_time_res};
use crate::ui::state::{CaptureId, State};
use crate::ui::status::{self, count};
use crate::ui::timeline::Timeline;
use crate::ui::{details, gutter, ruler, text};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyEvent, MouseEvent};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

/// The timeline of capture `capture`.
#[derive(Debug)]
pub struct TimelineView {
    /// The capture drawn.
    pub capture: CaptureId,
}

impl TimelineView {
    /// The timeline of capture `capture`.
    pub fn new(capture: CaptureId) -> TimelineView {
        TimelineView { capture }
    }
}

impl View for TimelineView {
    fn kind(&self) -> ViewKind {
        ViewKind::Timeline
    }

    fn captures(&self) -> Vec<CaptureId> {
        vec![self.capture]
    }

    fn on_key(&mut self, _key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg> {
        match action {
            Some(Action::Help) => vec![help_for(ViewKind::Timeline)],
            Some(Action::Search) if st.loaded().is_some() => {
                vec![Msg::Push(Box::new(SearchView::new(st)))]
            }
            Some(Action::OpenDetails) => match DetailsView::open(st) {
                Some(v) => vec![Msg::Push(Box::new(v))],
                None => vec![Msg::Notice("select a slice first (h/l or Enter)".into())],
            },
            Some(Action::OpenWarnings) => vec![super::findings::open(st)],
            Some(Action::OpenOverview) => match OverviewView::open(st) {
                Some((v, req)) => vec![Msg::Push(Box::new(v)), req],
                None => Vec::new(),
            },
            // On a memory row: that device's live bytes by call stack; else the time flame.
            Some(Action::OpenFlame) => match memory_row_at_cursor(st) {
                Some(track) => vec![match MemoryFlameView::open(st, track, st.cursor_time()) {
                    Ok(v) => Msg::Push(Box::new(v)),
                    Err(why) => Msg::Notice(why),
                }],
                None => FlameView::open(st)
                    .map(|v| Msg::Push(Box::new(v)))
                    .into_iter()
                    .collect(),
            },
            Some(Action::OpenRoofline) => vec![match super::roofline::RooflineView::open(st) {
                Ok(v) => Msg::Push(Box::new(v)),
                Err(why) => Msg::Notice(why),
            }],
            Some(Action::OpenMemory) => vec![match memory_view(st) {
                Ok(t) => Msg::Push(Box::new(t)),
                Err(why) => Msg::Notice(why),
            }],
            Some(Action::OpenCritical) => vec![match super::critical::critical_view(st) {
                Ok(t) => Msg::Push(Box::new(t)),
                Err(why) => Msg::Notice(why),
            }],
            Some(a @ (Action::OpenGpu | Action::OpenRank | Action::OpenStats)) => {
                let build = match a {
                    Action::OpenGpu => gpu_view,
                    Action::OpenRank => rank_view,
                    _ => stats_view,
                };
                build(st)
                    .map(|t| Msg::Push(Box::new(t)))
                    .into_iter()
                    .collect()
            }
            Some(a) => vec![Msg::Nav(a)],
            None => Vec::new(),
        }
    }

    fn on_mouse(&mut self, m: MouseEvent, _st: &State) -> Vec<Msg> {
        vec![Msg::NavMouse(m)]
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, cells: &mut Vec<Cell>) {
        let ar = st.areas_in(area);
        match st.capture(self.capture) {
            Some(l) => {
                header(st, self.capture, l, buf, ar.header);
                buf.set_stringn(
                    ar.corner.x,
                    ar.corner.y,
                    format!(" {}", format_dur(st.vp.width())),
                    ar.corner.width as usize,
                    Style::default().add_modifier(Modifier::DIM),
                );
                ruler::draw(
                    buf,
                    ar.ruler,
                    (st.vp.t0, st.vp.t1),
                    st.time_zero(l),
                    &st.mark,
                );
                gutter::draw(st, l, buf, ar.gutter);
                Timeline { state: st, l }.draw(buf, ar.lanes, cells);
                buf.set_stringn(
                    ar.sep.x,
                    ar.sep.y,
                    "─".repeat(ar.sep.width as usize),
                    ar.sep.width as usize,
                    Style::default().add_modifier(Modifier::DIM),
                );
                details::draw(st, l, buf, ar.details);
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
                status::draw_loading(st, buf, body);
            }
        }
        status::draw(st, buf, ar.status);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

fn header(st: &State, id: CaptureId, l: &Loaded, buf: &mut Buffer, area: Rect) {
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
    let entry = st.entries.entry(id);
    let span = entry
        .and_then(|e| e.capture.span)
        .map_or(String::new(), |s| format!(" · file id {s}"));
    // Times are shown relative to the first event; when the file gives an absolute origin, the
    // wall-clock time of that zero.
    let started = st
        .zero_epoch_ns(l)
        .filter(|&ns| ns > 0)
        .map_or(String::new(), |ns| {
            format!(" · 0 = {} UTC", super::picker::format_clock(ns))
        });
    let partial = if entry.is_some_and(Entry::is_preview) {
        " · PARTIAL (loading)"
    } else {
        ""
    };
    // An allocator snapshot has no events: say what it holds instead.
    let counts = match l
        .memory()
        .filter(|_| cap.format == Some(crate::model::Format::Snapshot))
    {
        Some(m) => format!(
            "allocator snapshot · {} devices · {} allocations",
            m.model.tracks.len(),
            count(m.model.tracks.iter().map(|t| t.allocs.len() as u64).sum())
        ),
        None => format!(
            "{} procs · {} tracks · {} events",
            procs,
            cap.tracks.len(),
            count(cap.event_count())
        ),
    };
    let left = format!(
        " tracetui  {} / {} · {counts}{partial}{span}{started}",
        // Long run / file names give way to the counts on narrow terminals.
        text::fit(&text::sanitize(&src.run), (area.width as usize / 4).max(12)),
        text::fit(
            &text::sanitize(&src.host),
            (area.width as usize / 4).max(12)
        ),
    );
    let right = format!(
        "{} @ {}  ?",
        format_dur(st.vp.width()),
        format_time_res(st.vp.t0 - st.time_zero(l), st.vp.width() / 100)
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
