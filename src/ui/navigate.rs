//! Timeline navigation on the shared state: selection, row cursor, folds, flow partners, the
//! range marker and the mouse. The timeline view turns keys into [`Action`]s; `App::update`
//! runs them here (these are pieces of that one update: views only see `&State`).

use super::action::Action;
use super::rows::Row;
use super::state::{Mark, State};
use crate::analysis::range::range_stats;
use crate::model::Ps;
use ratatui::crossterm::event::{MouseButton, MouseEvent, MouseEventKind};

impl State {
    /// Centres the window on slice `id` (keeping the width) when it is not fully visible.
    fn reveal(&mut self, id: u32) {
        let Some(l) = self.loaded() else { return };
        let s = &l.cap.slices;
        let i = id as usize;
        if i >= s.len() {
            return;
        }
        let (st, en) = (s.start[i], s.end(i));
        let bo = self.bounds();
        self.vp.reveal(st, en, bo);
    }

    fn fit_range(&mut self, st: Ps, en: Ps) {
        let bo = self.bounds();
        self.vp.fit_range(st, en, bo);
    }

    /// Row index of (track, lane), expanding the process when collapsed.
    fn row_of(&mut self, track: u32, lane: u16) -> Option<usize> {
        let p = self.loaded()?.cap.tracks.get(track as usize)?.process;
        if self.rows.collapsed.remove(&p) {
            self.rebuild_rows();
        }
        self.rows.list.iter().position(
            |r| matches!(*r, Row::Lane { track: t, lane: ln } if t == track && ln == lane),
        )
    }

    /// Selects slice `id`, moving the row cursor to its lane and revealing it.
    pub(super) fn select(&mut self, id: u32) {
        let Some(l) = self.loaded().cloned() else {
            return;
        };
        if id as usize >= l.cap.slices.len() {
            return;
        }
        let track = l.cap.track_of(id);
        let lane = l.cap.slices.lane[id as usize];
        if self.selected != Some(id) {
            self.partner_ix = 0;
        }
        self.selected = Some(id);
        if let Some(r) = self.row_of(track, lane) {
            self.rows.cursor = r;
            self.clamp_scroll();
        }
        self.reveal(id);
    }

    fn move_cursor(&mut self, to: usize) {
        if self.rows.is_empty() {
            return;
        }
        self.rows.cursor = to.min(self.rows.list.len() - 1);
        self.clamp_scroll();
        // Keep a selection on the new lane under the same time, flame-graph style.
        if let (Some(sel), Some((track, lane)), Some(l)) = (
            self.selected,
            self.rows.cursor_lane(),
            self.loaded().cloned(),
        ) {
            let s = &l.cap.slices;
            let i = sel as usize;
            let mid = s.start[i] + s.dur[i] / 2;
            let ln = lane as usize;
            let found = l.index.slice_at(&l.cap, track, ln, mid).or_else(|| {
                // Nothing under the middle: the first slice within the old selection's span.
                l.index
                    .first_at_or_after(&l.cap, track, ln, s.start[i])
                    .filter(|&c| s.start[c as usize] < s.end(i))
            });
            if let Some(id) = found {
                self.selected = Some(id);
                self.partner_ix = 0;
            }
        }
    }

    fn step_slice(&mut self, forward: bool) {
        if self.rows.get(self.rows.cursor) == Some(&Row::Steps) {
            return self.step_key(if forward {
                Action::NextStep
            } else {
                Action::PrevStep
            });
        }
        let Some((track, lane)) = self.rows.cursor_lane() else {
            return;
        };
        let Some(l) = self.loaded().cloned() else {
            return;
        };
        let on_lane = self
            .selected
            .filter(|&id| l.cap.track_of(id) == track && l.cap.slices.lane[id as usize] == lane);
        let next = match on_lane {
            Some(id) if forward => l.index.next_on_lane(&l.cap, id),
            Some(id) => l.index.prev_on_lane(&l.cap, id),
            // Nothing selected on the lane: `l` takes the first slice at the window's left
            // edge or after it, `h` the last one before its right edge.
            None if forward => {
                let t0 = self.vp.t0;
                l.index
                    .slice_at(&l.cap, track, lane as usize, t0)
                    .or_else(|| l.index.first_at_or_after(&l.cap, track, lane as usize, t0))
            }
            None => l
                .index
                .last_before(&l.cap, track, lane as usize, self.vp.t1),
        };
        match next {
            Some(id) => self.select(id),
            None => self.notice = Some("no more slices on this lane".into()),
        }
    }

    fn enter(&mut self) {
        match self.rows.list.get(self.rows.cursor).copied() {
            Some(Row::Process(p)) => self.toggle_collapse(p),
            Some(Row::Steps) => self.step_key(Action::ZoomStep),
            Some(Row::Lane { track, lane }) => {
                let Some(l) = self.loaded().cloned() else {
                    return;
                };
                if let Some(id) = self.selected
                    && l.cap.track_of(id) == track
                    && l.cap.slices.lane[id as usize] == lane
                {
                    let i = id as usize;
                    self.fit_range(l.cap.slices.start[i], l.cap.slices.end(i));
                    return;
                }
                let c = self.cursor_time();
                let ln = lane as usize;
                let id = l
                    .index
                    .slice_at(&l.cap, track, ln, c)
                    .or_else(|| l.index.first_at_or_after(&l.cap, track, ln, c))
                    .or_else(|| l.index.last_before(&l.cap, track, ln, c));
                match id {
                    Some(id) => self.select(id),
                    None => self.notice = Some("this lane is empty".into()),
                }
            }
            _ => {}
        }
    }

    fn toggle_collapse(&mut self, p: u32) {
        if !self.rows.collapsed.remove(&p) {
            self.rows.collapsed.insert(p);
        }
        self.rebuild_rows();
        if let Some(r) = self.rows.list.iter().position(|r| *r == Row::Process(p)) {
            self.rows.cursor = r;
            self.clamp_scroll();
        }
    }

    fn jump_partner(&mut self, step: i64) {
        let Some(l) = self.loaded().cloned() else {
            return;
        };
        let Some(sel) = self.selected else {
            self.notice = Some("select a slice first (Enter)".into());
            return;
        };
        let ps = l.partners_of(sel);
        if ps.is_empty() {
            self.notice = Some("no flow or correlation partner".into());
            return;
        }
        let n = ps.len() as i64;
        let ix = (self.partner_ix as i64 + step).rem_euclid(n) as usize;
        let target = ps[ix].1;
        self.select(target);
        // A partner narrower than two columns would be lost in a merged cell: zoom so both
        // ends of the flow are in view and the target is wide enough to see.
        let sl = &l.cap.slices;
        let (a, b) = (sel as usize, target as usize);
        if sl.dur[b].saturating_mul(i64::from(self.areas().lanes.width.max(1)))
            < 2 * (self.vp.t1 - self.vp.t0)
        {
            let st = sl.start[a].min(sl.start[b]);
            let en = sl.end(a).max(sl.end(b));
            let d = (en - st).max(1);
            self.set_window(st - d, en + d);
        }
        // Jumping back should land on the slice we came from.
        if let Some(back) = l.partners_of(target).iter().position(|p| p.1 == sel) {
            self.partner_ix = back;
        }
    }

    fn mark_key(&mut self) {
        let t = match (self.selected, self.loaded()) {
            (Some(id), Some(l)) => {
                let i = id as usize;
                match &self.mark {
                    Mark::Start(_) => l.cap.slices.end(i),
                    _ => l.cap.slices.start[i],
                }
            }
            _ => self.cursor_time(),
        };
        self.mark = match self.mark {
            Mark::Start(a) => {
                let (a, b) = (a.min(t), a.max(t).max(a.min(t) + 1));
                let stats = self
                    .loaded()
                    .map(|l| range_stats(&l.cap, &l.index, a, b))
                    .unwrap_or_default();
                Mark::Range(a, b, stats)
            }
            _ => Mark::Start(t),
        };
    }

    pub(super) fn mouse(&mut self, m: MouseEvent) {
        let Some(l) = self.loaded().cloned() else {
            return;
        };
        let lanes = self.areas().lanes;
        if m.column < lanes.x || m.column >= lanes.right() || lanes.width == 0 {
            return;
        }
        let k = usize::from(m.column - lanes.x);
        let cols = lanes.width as usize;
        let a = crate::index::column_edge(self.vp.t0, self.vp.t1, cols, k);
        let b = crate::index::column_edge(self.vp.t0, self.vp.t1, cols, k + 1).max(a + 1);
        let t = a + (b - a) / 2;
        match m.kind {
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                // Zoom keeping the time under the pointer in place.
                let (num, den) = if m.kind == MouseEventKind::ScrollUp {
                    (1, 2)
                } else {
                    (2, 1)
                };
                let bo = self.bounds();
                self.vp.zoom(t, num, den, bo);
            }
            MouseEventKind::Down(MouseButton::Left) => {
                if m.row < lanes.y || m.row >= lanes.bottom() {
                    return;
                }
                let r = self.rows.scroll + usize::from(m.row - lanes.y);
                if r >= self.rows.list.len() {
                    return;
                }
                self.rows.cursor = r;
                if let Row::Lane { track, lane } = self.rows.list[r] {
                    // The slice under the pointer, else the longest in that column.
                    let ln = lane as usize;
                    let hit = l.index.slice_at(&l.cap, track, ln, t).or_else(|| {
                        let mut c = [crate::index::Cell::EMPTY];
                        l.index.lod(&l.cap, track, ln, a, b, &mut c);
                        (c[0].count > 0).then_some(c[0].longest)
                    });
                    match hit {
                        Some(id) => {
                            self.selected = Some(id);
                            self.partner_ix = 0;
                        }
                        None => self.selected = None,
                    }
                }
            }
            _ => {}
        }
    }

    /// `Back` on the state: clears the range mark, else the selection; false when there was
    /// neither (the app then shows the picker).
    pub(super) fn clear_mark_or_selection(&mut self) -> bool {
        if self.mark != Mark::None {
            self.mark = Mark::None;
        } else if self.selected.is_some() {
            self.selected = None;
        } else {
            return false;
        }
        true
    }

    /// Performs a timeline action on the shared state (`Quit` and `Back`, which reach the
    /// view stack and the loads, are the app's).
    pub(super) fn navigate(&mut self, a: Action) {
        match a {
            Action::Quit | Action::Back => {}
            _ if self.loaded().is_none() => {}
            Action::ZoomIn => self.zoom(1, 2),
            Action::ZoomOut => self.zoom(2, 1),
            Action::PanLeft => self.pan(-1),
            Action::PanRight => self.pan(1),
            Action::Down => self.move_cursor(self.rows.cursor + 1),
            Action::Up => self.move_cursor(self.rows.cursor.saturating_sub(1)),
            Action::PageDown => self.page(true),
            Action::PageUp => self.page(false),
            Action::Top => self.move_cursor(0),
            Action::Bottom => self.move_cursor(usize::MAX),
            Action::PrevSlice => self.step_slice(false),
            Action::NextSlice => self.step_slice(true),
            Action::Parent => {
                let p = self
                    .selected
                    .zip(self.loaded().cloned())
                    .and_then(|(id, l)| l.index.parent(&l.cap, id));
                match p {
                    Some(p) => self.select(p),
                    None => self.notice = Some("no parent".into()),
                }
            }
            Action::Confirm => self.enter(),
            Action::PrevStep | Action::NextStep | Action::ZoomStep => self.step_key(a),
            Action::Fit => {
                if let Mark::Range(a, b, _) = self.mark {
                    self.fit_range(a, b);
                } else if let (Some(id), Some(l)) = (self.selected, self.loaded().cloned()) {
                    let i = id as usize;
                    self.fit_range(l.cap.slices.start[i], l.cap.slices.end(i));
                }
            }
            Action::FitAll => self.fit_all(),
            Action::NextTrack | Action::PrevTrack => self.step_track(a == Action::NextTrack),
            Action::NextProcess | Action::PrevProcess => {
                self.step_process(a == Action::NextProcess, false)
            }
            Action::JumpDevice => self.step_process(true, true),
            Action::Collapse => {
                let p = match self.rows.list.get(self.rows.cursor).copied() {
                    Some(Row::Process(p)) => Some(p),
                    Some(r) => r
                        .track()
                        .zip(self.loaded())
                        .and_then(|(t, l)| l.cap.tracks.get(t as usize).map(|t| t.process)),
                    None => None,
                };
                if let Some(p) = p {
                    self.toggle_collapse(p);
                }
            }
            Action::ToggleColor => self.by_category = !self.by_category,
            Action::Mark => self.mark_key(),
            Action::Partner => self.jump_partner(0),
            Action::NextPartner => self.jump_partner(1),
            Action::PrevPartner => self.jump_partner(-1),
            Action::NextHit | Action::PrevHit => self.step_hit(a == Action::NextHit),
            Action::HitsInTrack => {
                if let Some(h) = &mut self.hits {
                    h.within_track = !h.within_track;
                    self.notice = Some(if h.within_track {
                        "n / N: this track only".into()
                    } else {
                        "n / N: all tracks".into()
                    });
                }
            }
            Action::DimOthers => {
                if let Some(h) = &mut self.hits {
                    h.dim = !h.dim;
                }
            }
            Action::Help
            | Action::Search
            | Action::ToggleRegex
            | Action::SortNext
            | Action::SortReverse
            | Action::GroupNext
            | Action::FilterCategory
            | Action::FilterTrack
            | Action::FilterProcess
            | Action::OpenStats
            | Action::OpenRank
            | Action::OpenCritical
            | Action::OpenGpu
            | Action::OpenRoofline
            | Action::ToggleAchieved
            | Action::OpenNewest
            | Action::OpenFlame
            | Action::OpenDetails
            | Action::OpenOverview
            | Action::OpenAligned
            | Action::CycleMetric
            | Action::CycleScope
            | Action::OpenCapture
            | Action::MarkBaseline
            | Action::OpenDiff
            | Action::ToggleSandwich
            | Action::ToggleTable
            | Action::OpenMemory
            | Action::OpenWarnings
            | Action::OpenDiffAlign
            | Action::DiffThreshold
            | Action::DiffSteps => {}
            Action::JumpPeak => self.jump_peak(),
        }
    }

    /// Selects slice `id` and zooms so it is visible: a slice under two columns wide gets a
    /// window about twenty times its width around it.
    pub(super) fn jump_to(&mut self, id: u32) {
        let Some(l) = self.loaded().cloned() else {
            return;
        };
        let i = id as usize;
        if i >= l.cap.slices.len() {
            return;
        }
        self.select(id);
        if let Some(h) = &mut self.hits {
            h.pos = h.index_of(&l.cap, id).or(h.pos);
        }
        let s = &l.cap.slices;
        let cols = i64::from(self.areas().lanes.width.max(1));
        if s.dur[i].saturating_mul(cols) < 2 * self.vp.width() {
            let d = s.dur[i].max(1);
            let bo = self.bounds();
            self.vp.set(s.start[i] - 10 * d, s.end(i) + 10 * d, bo);
            // Never zoom out from a window that already showed it well.
        }
        let bo = self.bounds();
        self.vp.reveal(s.start[i], s.end(i), bo);
    }

    /// Moves the cursor to the first row of track `t`, expanding its process.
    pub(super) fn focus_track(&mut self, t: u32) {
        let row = self
            .row_of(t, 0)
            .or_else(|| self.rows.list.iter().position(|r| *r == Row::Counter(t)));
        match row {
            Some(r) => {
                self.rows.cursor = r;
                self.clamp_scroll();
            }
            None => self.notice = Some("track not shown".into()),
        }
    }

    fn step_hit(&mut self, forward: bool) {
        let Some(l) = self.loaded().cloned() else {
            return;
        };
        let Some(h) = &self.hits else {
            self.notice = Some("no hits: search with / (or rank with o) first".into());
            return;
        };
        let track = if h.within_track {
            self.rows.list.get(self.rows.cursor).and_then(|r| r.track())
        } else {
            None
        };
        let from = self.selected.filter(|&id| h.contains(id));
        let t = self.cursor_time();
        match h.step(&l.cap, from.or(self.selected), t, forward, track) {
            Some((_, id)) => self.jump_to(id),
            None => {
                self.notice = Some(if forward {
                    "no later hit".into()
                } else {
                    "no earlier hit".into()
                })
            }
        }
    }

    fn zoom(&mut self, num: i64, den: i64) {
        let anchor = self.cursor_time();
        let bo = self.bounds();
        self.vp.zoom(anchor, num, den, bo);
    }

    fn pan(&mut self, quarters: i64) {
        let bo = self.bounds();
        self.vp.pan(quarters, bo);
    }

    /// Moves the cursor to the header of the next (`fwd`) or previous process — the first
    /// memory row counts as one — (`device`: the next GPU / accelerator process), wrapping, and
    /// scrolls so that header is the top row: its rows come into view below it.
    fn step_process(&mut self, fwd: bool, device: bool) {
        let Some(l) = self.loaded().cloned() else {
            return;
        };
        let list = &self.rows.list;
        let n = list.len();
        let starts = |i: usize| match list[i] {
            Row::Process(p) if device => l.cap.processes.get(p as usize).is_some_and(|pr| {
                matches!(
                    pr.kind,
                    crate::model::ProcessKind::Gpu
                        | crate::model::ProcessKind::Tpu
                        | crate::model::ProcessKind::Device
                )
            }),
            Row::Process(_) => true,
            Row::Memory { .. } => !device && i > 0 && !matches!(list[i - 1], Row::Memory { .. }),
            _ => false,
        };
        let mut found = None;
        let mut i = self.rows.cursor.min(n.saturating_sub(1));
        for _ in 0..n {
            i = if fwd { (i + 1) % n } else { (i + n - 1) % n };
            if starts(i) {
                found = Some(i);
                break;
            }
        }
        match found {
            Some(i) => {
                self.move_cursor(i);
                let h = self.body_height().max(1);
                self.rows.scroll = i.min(self.rows.list.len().saturating_sub(h));
                self.clamp_scroll();
            }
            None => {
                self.notice = Some(if device {
                    "no GPU or accelerator rows in this capture".into()
                } else {
                    "no other process".into()
                })
            }
        }
    }

    /// `PgDn` / `PgUp`: the rows move by a page (the body's height less one row kept for
    /// context), and the cursor with them; at either end the cursor goes to the first / last
    /// row.
    fn page(&mut self, down: bool) {
        let n = self.rows.list.len();
        if n == 0 {
            return;
        }
        let h = self.body_height().max(1);
        let step = h.saturating_sub(1).max(1);
        let max_scroll = n.saturating_sub(h);
        let (scroll, cursor) = (self.rows.scroll, self.rows.cursor);
        let new_scroll = if down {
            (scroll + step).min(max_scroll)
        } else {
            scroll.saturating_sub(step)
        };
        let moved = new_scroll.abs_diff(scroll);
        let to = match (down, moved) {
            (true, 0) => n - 1,
            (false, 0) => 0,
            (true, m) => cursor + m,
            (false, m) => cursor.saturating_sub(m),
        };
        self.rows.scroll = new_scroll;
        self.move_cursor(to);
    }

    fn step_track(&mut self, fwd: bool) {
        let cur = self.rows.list.get(self.rows.cursor).and_then(|r| r.track());
        let n = self.rows.list.len();
        if n == 0 {
            return;
        }
        let mut i = self.rows.cursor;
        for _ in 0..n {
            i = if fwd { (i + 1) % n } else { (i + n - 1) % n };
            let r = self.rows.list[i];
            let first = matches!(r, Row::Lane { lane: 0, .. } | Row::Counter(_));
            if first && r.track() != cur {
                break;
            }
        }
        self.move_cursor(i);
    }
}
