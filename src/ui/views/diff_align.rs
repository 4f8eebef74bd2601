//! Aligned timelines of a diff (`a` in the diff table, issue 26 §4): one stream (or thread) of A
//! on top and its partner in B under it, their event-name sequences aligned
//! ([`crate::analysis::diff::align`]). Matched B events are drawn at the start of their A
//! partner, so the sequences line up and the widths show Δ (B coloured warm when slower, cool
//! when faster); events only in A are marked `×` (removed, red), events only in B `+` (added,
//! green). `m` switches to a plain overlay of both lanes from a common zero; `Tab` takes the next
//! track pair (GPU streams first, busiest first); `h` / `l` move the cursor over the aligned
//! pairs, `n` / `N` to the next difference; the details show both durations and Δ.
//! Each frame binary-searches the lanes per screen column (`ui/diff_lanes.rs`).

use super::View;
use super::help::help_for;
use crate::analysis::diff::align::{AlignOptions, NONE};
use crate::analysis::diff::align_tracks::{
    StreamAlignment, TrackPair, align_pair, slice_name, track_pairs,
};
use crate::index::{Cell, column_edge};
use crate::model::{Capture, Ps};
use crate::ui::action::Action;
use crate::ui::colors::{self, ColorMode};
use crate::ui::diff_lanes::{FASTER, Lane, Lanes, ONLY, SAME, SLOWER};
use crate::ui::keymap::ViewKind;
use crate::ui::msg::Msg;
use crate::ui::ruler::{self, format_dur, format_signed_dur};
use crate::ui::state::{CaptureId, Mark, State};
use crate::ui::text;
use crate::ui::viewport::{Bounds, Viewport};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

/// Width of the lane label column (`A │`).
const LABEL_W: u16 = 4;
/// Glyph of an event only in A.
pub const REMOVED: &str = "×";
/// Glyph of an event only in B.
pub const ADDED: &str = "+";
/// Glyph of a matched event.
pub const BODY: &str = "█";

/// The aligned-timeline view of a diff.
#[derive(Debug)]
pub struct DiffAlignView {
    /// The baseline capture (A).
    pub a: CaptureId,
    /// The compared capture (B).
    pub b: CaptureId,
    /// Track pairs to cycle through.
    pub pairs: Vec<TrackPair>,
    /// Index of the shown pair.
    pub pick: usize,
    /// The shown pair aligned.
    pub sa: StreamAlignment,
    /// Its lanes in the current mode.
    pub lanes: Lanes,
    /// Visible window on the lanes' axis.
    pub vp: Viewport,
    /// Cursor: an aligned row.
    pub cursor: usize,
}

fn captures(st: &State, a: CaptureId, b: CaptureId) -> Result<(&Capture, &Capture), String> {
    match (st.capture(a), st.capture(b)) {
        (Some(x), Some(y)) => Ok((&x.cap, &y.cap)),
        _ => Err("aligned timelines: A or B is no longer loaded (open the diff again)".into()),
    }
}

/// Columns of the lanes at terminal width `w`.
fn lane_cols(w: u16) -> i64 {
    i64::from(w.saturating_sub(LABEL_W)).max(1)
}

impl DiffAlignView {
    /// The view of B (`b`) against A (`a`), both loaded, on their first track pair (the
    /// busiest GPU stream, else the busiest thread); `Err` when they share no track.
    pub fn open(st: &State, a: CaptureId, b: CaptureId) -> Result<DiffAlignView, String> {
        let (ca, cb) = captures(st, a, b)?;
        let pairs = track_pairs(ca, cb);
        let Some(first) = pairs.first().cloned() else {
            return Err("aligned timelines: A and B have no stream or thread in common".into());
        };
        let sa = align_pair(ca, cb, first, AlignOptions::default());
        let lanes = Lanes::build(ca, cb, &sa, false);
        let mut v = DiffAlignView {
            a,
            b,
            pairs,
            pick: 0,
            sa,
            lanes,
            vp: Viewport::default(),
            cursor: 0,
        };
        v.fit_all(st);
        Ok(v)
    }

    fn bounds(&self, st: &State) -> Bounds {
        Bounds::new(self.lanes.extent(), lane_cols(st.size.0))
    }

    fn fit_all(&mut self, st: &State) {
        let b = self.bounds(st);
        self.vp.fit_all(b);
    }

    /// The cursor row's events: (index in A's events, index in B's), `NONE` where absent.
    pub fn cursor_pair(&self) -> (u32, u32) {
        let r = self.cursor;
        (
            self.sa.al.a.get(r).copied().unwrap_or(NONE),
            self.sa.al.b.get(r).copied().unwrap_or(NONE),
        )
    }

    /// Where the cursor's events lie on the axis.
    fn cursor_span(&self) -> Option<(Ps, Ps)> {
        let (x, y) = self.cursor_pair();
        let span = |l: &Lane, k: u32| {
            let k = k as usize;
            Some((*l.pos.get(k)?, l.pos.get(k)? + l.dur.get(k)?))
        };
        match (span(&self.lanes.a, x), span(&self.lanes.b, y)) {
            (Some(p), Some(q)) => Some((p.0.min(q.0), p.1.max(q.1))),
            (p, q) => p.or(q),
        }
    }

    fn reveal(&mut self, st: &State) {
        if let Some((s, e)) = self.cursor_span() {
            let b = self.bounds(st);
            self.vp.reveal(s, e.max(s + 1), b);
        }
    }

    /// Status of row `r` (the lane status of its A event, else of its B event).
    fn row_status(&self, r: usize) -> u8 {
        let (x, y) = (
            self.sa.al.a.get(r).copied().unwrap_or(NONE),
            self.sa.al.b.get(r).copied().unwrap_or(NONE),
        );
        let s = |l: &Lane, k: u32| l.status.get(k as usize).copied();
        s(&self.lanes.a, x).or(s(&self.lanes.b, y)).unwrap_or(SAME)
    }

    /// Moves the cursor to the next (`fwd`) or previous row that differs.
    fn next_difference(&mut self, fwd: bool) -> bool {
        let n = self.sa.al.len();
        let mut r = self.cursor;
        loop {
            r = match (fwd, r) {
                (true, r) if r + 1 < n => r + 1,
                (false, r) if r > 0 => r - 1,
                _ => return false,
            };
            if self.row_status(r) != SAME {
                self.cursor = r;
                return true;
            }
        }
    }

    /// Aligns pair `pick` (after `Tab`) or re-lays the lanes (after `m`).
    fn relayout(&mut self, st: &State, realign: bool, overlay: bool) -> Result<(), String> {
        let (ca, cb) = captures(st, self.a, self.b)?;
        if realign && let Some(p) = self.pairs.get(self.pick).cloned() {
            self.sa = align_pair(ca, cb, p, AlignOptions::default());
            self.cursor = 0;
        }
        self.lanes = Lanes::build(ca, cb, &self.sa, overlay);
        if realign {
            self.fit_all(st);
        } else {
            self.reveal(st);
        }
        Ok(())
    }
}

/// Style of a lane cell: `status` of the column's events, `change` the relative Δ of a single
/// matched event (B lane), `a_lane` for A's (matched events neutral there).
fn cell_style(mode: crate::ui::colors::Theme, status: u8, change: f64, a_lane: bool) -> Style {
    let none = mode.mode == ColorMode::None;
    match status {
        ONLY if none => Style::default().add_modifier(Modifier::BOLD),
        ONLY if a_lane => Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        ONLY => Style::default()
            .fg(Color::Green)
            .add_modifier(Modifier::BOLD),
        _ if a_lane => colors::delta_styles(mode, 0.0).1,
        _ => colors::delta_styles(mode, change).1,
    }
}

impl DiffAlignView {
    /// Draws one lane into row `y` of `area` over the window (its events: matched `█`, or
    /// `×` / `+` where most of a column's events are removed / added) and its marks into row
    /// `y + h` (`×` / `+` in every column holding any); the body is `h` rows tall.
    fn draw_lane(
        &self,
        st: &State,
        buf: &mut Buffer,
        area: Rect,
        (y, h): (u16, u16),
        a_lane: bool,
    ) {
        let lane = if a_lane { &self.lanes.a } else { &self.lanes.b };
        let (t0, t1) = (self.vp.t0, self.vp.t1);
        let cols = area.width as usize;
        let other = if a_lane { &self.lanes.b } else { &self.lanes.a };
        for c in 0..cols {
            let c0 = column_edge(t0, t1, cols, c);
            let c1 = column_edge(t0, t1, cols, c + 1).max(c0 + 1);
            let s = lane.column(c0, c1);
            if s.total() == 0 {
                continue;
            }
            let only = s.counts[usize::from(ONLY)];
            if only > 0 {
                // The marks row: every column holding an added / removed event.
                let (glyph, style) = if a_lane {
                    (REMOVED, cell_style(st.theme, ONLY, 0.0, true))
                } else {
                    (ADDED, cell_style(st.theme, ONLY, 0.0, false))
                };
                if let Some(cell) = buf.cell_mut((area.x + c as u16, y + h)) {
                    cell.set_symbol(glyph).set_style(style);
                }
            }
            // The body row: what most of the column's events are.
            let status = if only * 2 >= s.total() {
                ONLY
            } else if s.counts[usize::from(SLOWER)] > s.counts[usize::from(FASTER)] {
                SLOWER
            } else if s.counts[usize::from(FASTER)] > 0 {
                FASTER
            } else {
                SAME
            };
            let change = match (status, s.one) {
                (SLOWER | FASTER, Some(k)) => {
                    // The relative Δ of the single event against its partner.
                    let row = lane.row.get(k).copied().unwrap_or(NONE) as usize;
                    let pk = if a_lane {
                        self.sa.al.b.get(row)
                    } else {
                        self.sa.al.a.get(row)
                    };
                    let mine = lane.dur.get(k).copied().unwrap_or(0) as f64;
                    let theirs = pk
                        .and_then(|&p| other.dur.get(p as usize))
                        .copied()
                        .unwrap_or(0) as f64;
                    let (da, db) = if a_lane {
                        (mine, theirs)
                    } else {
                        (theirs, mine)
                    };
                    (db - da) / da.max(db).max(1.0)
                }
                (SLOWER, None) => 0.5,
                (FASTER, None) => -0.5,
                _ => 0.0,
            };
            let glyph = match status {
                ONLY if a_lane => REMOVED,
                ONLY => ADDED,
                _ => BODY,
            };
            let style = cell_style(st.theme, status, change, a_lane);
            for dy in 0..h {
                if let Some(cell) = buf.cell_mut((area.x + c as u16, y + dy)) {
                    cell.set_symbol(glyph).set_style(style);
                }
            }
        }
        // Names over events at least 6 columns wide, when few enough are visible.
        let (lo, hi) = lane.range(t0, t1);
        if hi - lo <= cols {
            for k in lo..hi {
                self.label(st, buf, area, y, lane, k, a_lane);
            }
        }
        // The cursor's event, reversed.
        let (x, yb) = self.cursor_pair();
        let k = if a_lane { x } else { yb };
        if let (Some(&p), Some(&d)) = (lane.pos.get(k as usize), lane.dur.get(k as usize)) {
            let (ca, cb) = (self.col_of(p, cols), self.col_of(p + d, cols));
            let last = cb.max(ca).min(cols as i64 - 1);
            for c in ca.max(0)..=last {
                for dy in 0..h {
                    if let Some(cell) = buf.cell_mut((area.x + c as u16, y + dy)) {
                        let s = colors::selected(cell.style());
                        if cell.symbol() == " " {
                            cell.set_symbol(if a_lane { "▔" } else { "▁" });
                        }
                        cell.set_style(s);
                    }
                }
            }
        }
    }

    /// Column of time `t` (may be off screen).
    fn col_of(&self, t: Ps, cols: usize) -> i64 {
        let w = i128::from(self.vp.width().max(1));
        ((i128::from(t - self.vp.t0) * cols as i128) / w) as i64
    }

    #[allow(clippy::too_many_arguments)]
    fn label(
        &self,
        st: &State,
        buf: &mut Buffer,
        area: Rect,
        y: u16,
        lane: &Lane,
        k: usize,
        a_lane: bool,
    ) {
        let cols = area.width as usize;
        let (Some(&p), Some(&d)) = (lane.pos.get(k), lane.dur.get(k)) else {
            return;
        };
        // Not over an overlapping neighbour (an added event drawn over a matched one).
        let prev_end = k.checked_sub(1).and_then(|j| lane.end_max(j));
        let next = lane.pos.get(k + 1).copied();
        if prev_end.is_some_and(|e| e > p) || next.is_some_and(|n| n < p + d) {
            return;
        }
        let c0 = self.col_of(p, cols).max(0);
        let c1 = self.col_of(p + d, cols).min(cols as i64);
        if c1 - c0 < 6 {
            return;
        }
        let name = self.name_of(st, a_lane, k);
        let room = (c1 - c0 - 1) as usize;
        let label = text::fit(&text::sanitize(&name), room).into_owned();
        let status = lane.status.get(k).copied().unwrap_or(SAME);
        let style = if st.theme.mode == ColorMode::None {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            let base = cell_style(st.theme, status, 0.0, a_lane);
            Style::default()
                .fg(Color::Black)
                .bg(base.fg.unwrap_or(Color::Gray))
        };
        let x = area.x + c0 as u16;
        buf.set_stringn(x + 1, y, &label, room, style);
    }

    /// Name of event `k` of A's (`a_side`) or B's events.
    fn name_of(&self, st: &State, a_side: bool, k: usize) -> String {
        let (id, ids) = if a_side {
            (self.a, &self.sa.a_ids)
        } else {
            (self.b, &self.sa.b_ids)
        };
        match (st.capture(id), ids.get(k)) {
            (Some(l), Some(&i)) => slice_name(&l.cap, i).to_string(),
            _ => String::new(),
        }
    }

    /// The details of the cursor row: two lines.
    fn details(&self, st: &State) -> (String, String) {
        let (x, y) = self.cursor_pair();
        let n = self.sa.al.len();
        let dur = |l: &Lane, k: u32| l.dur.get(k as usize).copied();
        let (da, db) = (dur(&self.lanes.a, x), dur(&self.lanes.b, y));
        let name = if x != NONE {
            self.name_of(st, true, x as usize)
        } else {
            self.name_of(st, false, y as usize)
        };
        let what = match (da, db) {
            (Some(_), Some(_)) => match self.row_status(self.cursor) {
                SLOWER => "slower",
                FASTER => "faster",
                _ => "same",
            },
            (Some(_), None) => "removed (A only)",
            (None, Some(_)) => "added (B only)",
            (None, None) => "-",
        };
        let first = format!(
            "pair {} of {n} · {what} · {}",
            (self.cursor + 1).min(n),
            text::sanitize(&name)
        );
        let t = |d: Option<Ps>| d.map_or("-".to_string(), format_dur);
        let mut second = format!("A {} · B {}", t(da), t(db));
        if let (Some(a), Some(b)) = (da, db) {
            second.push_str(&format!(" · Δ {}", format_signed_dur((b - a) as f64)));
            if a > 0 {
                second.push_str(&format!(" ({:+.1}%)", (b - a) as f64 * 100.0 / a as f64));
            }
        }
        (first, second)
    }
}

impl View for DiffAlignView {
    fn kind(&self) -> ViewKind {
        ViewKind::DiffAlign
    }

    fn captures(&self) -> Vec<CaptureId> {
        vec![self.a, self.b]
    }

    fn on_key(&mut self, _key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg> {
        let b = self.bounds(st);
        let anchor = self
            .cursor_span()
            .map_or(self.vp.t0 + self.vp.width() / 2, |s| s.0)
            .clamp(self.vp.t0, self.vp.t1);
        let n = self.sa.al.len();
        let result = match action {
            Some(Action::Help) => return vec![help_for(ViewKind::DiffAlign)],
            Some(Action::Back) => return vec![Msg::Pop],
            Some(Action::Quit) => return vec![Msg::Quit],
            Some(Action::ZoomIn) => {
                self.vp.zoom(anchor, 1, 2, b);
                Ok(())
            }
            Some(Action::ZoomOut) => {
                self.vp.zoom(anchor, 2, 1, b);
                Ok(())
            }
            Some(Action::PanLeft) => {
                self.vp.pan(-1, b);
                Ok(())
            }
            Some(Action::PanRight) => {
                self.vp.pan(1, b);
                Ok(())
            }
            Some(Action::FitAll) => {
                self.vp.fit_all(b);
                Ok(())
            }
            Some(Action::Fit) => {
                if let Some((s, e)) = self.cursor_span() {
                    self.vp.fit_range(s, e.max(s + 1), b);
                }
                Ok(())
            }
            Some(Action::NextSlice) => {
                self.cursor = (self.cursor + 1).min(n.saturating_sub(1));
                self.reveal(st);
                Ok(())
            }
            Some(Action::PrevSlice) => {
                self.cursor = self.cursor.saturating_sub(1);
                self.reveal(st);
                Ok(())
            }
            Some(a @ (Action::NextHit | Action::PrevHit)) => {
                if !self.next_difference(a == Action::NextHit) {
                    return vec![Msg::Notice("no further difference".into())];
                }
                self.reveal(st);
                Ok(())
            }
            Some(Action::CycleMetric) => {
                let overlay = !self.lanes.overlay;
                self.relayout(st, false, overlay)
            }
            Some(a @ (Action::NextTrack | Action::PrevTrack)) => {
                let k = self.pairs.len().max(1);
                self.pick = if a == Action::NextTrack {
                    (self.pick + 1) % k
                } else {
                    (self.pick + k - 1) % k
                };
                let overlay = self.lanes.overlay;
                self.relayout(st, true, overlay)
            }
            _ => Ok(()),
        };
        match result {
            Ok(()) => Vec::new(),
            Err(m) => vec![Msg::Notice(m)],
        }
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        if area.height < 12 || area.width <= LABEL_W + 4 {
            return;
        }
        let w = area.width as usize;
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let dim = Style::default().add_modifier(Modifier::DIM);
        let al = &self.sa.al;
        let tb = self.lanes.b.totals();
        let title = format!(
            " aligned · {} ({}/{}) · {} · {} matched ({} slower, {} faster) · {} {ADDED}added · {} {REMOVED}removed",
            text::sanitize(&self.sa.pair.title),
            self.pick + 1,
            self.pairs.len(),
            if self.lanes.overlay {
                "overlay from a common zero"
            } else {
                "by sequence"
            },
            al.matched,
            tb[usize::from(SLOWER)],
            tb[usize::from(FASTER)],
            al.inserted,
            al.deleted,
        );
        buf.set_stringn(area.x, area.y, text::fit(&title, w), w, bold);
        let mut y = area.y + 1;
        if al.fallback_windows > 0 {
            let note = format!(
                " {} of {} windows needed more than {} edits: {} events there aligned greedily (valid, maybe not minimal)",
                al.fallback_windows,
                al.windows,
                AlignOptions::default().max_d,
                al.fallback_events
            );
            buf.set_stringn(area.x, y, text::fit(&note, w), w, dim);
            y += 1;
        }
        let lanes = Rect::new(area.x + LABEL_W, y, area.width - LABEL_W, 1);
        ruler::draw(buf, lanes, (self.vp.t0, self.vp.t1), 0, &Mark::None);
        // Lane bodies grow with the terminal (1 to 6 rows), each with its marks row under it.
        let h = ((area.height.saturating_sub(12)) / 4).clamp(1, 6);
        for (dy, a_lane) in [(1u16, true), (2 + h, false)] {
            for k in 0..=h {
                let label = match (k, a_lane) {
                    (0, true) => " A │",
                    (0, false) => " B │",
                    _ => "   │",
                };
                buf.set_stringn(area.x, y + dy + k, label, 4, bold);
            }
            self.draw_lane(st, buf, Rect { y: y + dy, ..lanes }, (y + dy, h), a_lane);
        }
        // Legend, details and hints at the bottom.
        let (d1, d2) = self.details(st);
        let legend = format!(
            "window {} · {BODY} matched (B's width: B's duration{}) · {ADDED} added in B · {REMOVED} removed from A · row under each lane: every added / removed",
            format_dur(self.vp.width()),
            if self.lanes.overlay {
                ""
            } else {
                ", at A's start"
            }
        );
        let bottom = area.bottom();
        buf.set_stringn(area.x, y + 4 + 2 * h, text::fit(&legend, w), w, dim);
        buf.set_stringn(area.x, bottom - 3, text::fit(&d1, w), w, bold);
        buf.set_stringn(area.x, bottom - 2, text::fit(&d2, w), w, Style::default());
        let hints = st.keymap.hints(ViewKind::DiffAlign, st.size.0 < 100);
        buf.set_stringn(area.x, bottom - 1, text::fit(&hints, w), w, dim);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
