//! UI state and the pure `update(Msg) -> Vec<Cmd>` transition function (Elm style).

use super::catalog::CaptureRef;
use super::colors::ColorMode;
use super::layout::{self, Areas};
use super::loader::{LoadDone, Loaded};
use crate::formats::Progress;
use crate::model::{Ps, StrId, TrackKind};
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;
use rustc_hash::FxHashSet;
use std::sync::Arc;

/// Everything that can happen to the app.
#[derive(Debug)]
pub enum Msg {
    /// A key press.
    Key(KeyEvent),
    /// A mouse click or wheel turn (wheel zooms at the pointer, click selects).
    Mouse(MouseEvent),
    /// The terminal was resized to (columns, rows).
    Resize(u16, u16),
    /// Periodic redraw while loading (progress bar).
    Tick,
    /// A load job finished.
    Load(LoadDone),
}

/// Side effects the event loop performs for `update`.
#[derive(Debug)]
pub enum Cmd {
    /// Start loading catalog entry `entry` on a background thread.
    Load {
        /// Generation of the job.
        generation: u64,
        /// Entry index.
        entry: usize,
        /// What to load.
        capture: CaptureRef,
        /// Shared progress (the app reads it to draw the bar).
        progress: Arc<Progress>,
    },
    /// Ask a running job to stop.
    Cancel(Arc<Progress>),
    /// Leave the app.
    Quit,
}

/// Load state of one catalog entry.
#[derive(Debug, Clone)]
pub enum EntryState {
    /// Not loaded.
    Idle,
    /// Being loaded by job `generation`.
    Loading(Arc<Progress>),
    /// Ready to draw.
    Ready(Arc<Loaded>),
    /// Could not be loaded.
    Failed(String),
}

/// One capture in the picker.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The capture.
    pub capture: CaptureRef,
    /// Its load state.
    pub state: EntryState,
}

/// The screen shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screen {
    /// The capture list.
    Picker,
    /// The timeline of the open capture.
    Timeline,
}

/// One drawn row of the timeline body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    /// A process header (fold marker, name).
    Process(u32),
    /// One lane of a slice track.
    Lane {
        /// Track id.
        track: u32,
        /// Lane within the track.
        lane: u16,
    },
    /// A counter track (sparkline).
    Counter(u32),
}

impl Row {
    /// Track of the row, if any.
    pub fn track(self) -> Option<u32> {
        match self {
            Row::Process(_) => None,
            Row::Lane { track, .. } | Row::Counter(track) => Some(track),
        }
    }
}

/// Aggregate of a marked range.
#[derive(Clone, Debug, PartialEq)]
pub struct MarkStats {
    /// Slices overlapping the range on drawn tracks.
    pub slices: u64,
    /// Busy time per track (track, busy ps), busiest first.
    pub busy: Vec<(u32, Ps)>,
}

/// The `m` range marker.
#[derive(Clone, Debug, PartialEq)]
pub enum Mark {
    /// Nothing marked.
    None,
    /// First end chosen.
    Start(Ps),
    /// A full range with its aggregate.
    Range(Ps, Ps, MarkStats),
}

/// All UI state.
#[derive(Debug)]
pub struct App {
    /// Captures offered.
    pub entries: Vec<Entry>,
    /// Picker cursor.
    pub picker: usize,
    /// Screen shown.
    pub screen: Screen,
    /// Entry shown in the timeline.
    pub current: Option<usize>,
    /// Generation of the newest load job.
    pub generation: u64,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// Colour depth.
    pub mode: ColorMode,
    /// Visible window start, ps.
    pub t0: Ps,
    /// Visible window end, ps.
    pub t1: Ps,
    /// Rows of the timeline body.
    pub rows: Vec<Row>,
    /// Row cursor.
    pub cursor: usize,
    /// First row shown.
    pub scroll: usize,
    /// Collapsed processes.
    pub collapsed: FxHashSet<u32>,
    /// Selected slice.
    pub selected: Option<u32>,
    /// Index among the selection's flow partners last jumped to.
    pub partner_ix: usize,
    /// Colour slices by category instead of name.
    pub color_by_cat: bool,
    /// Help overlay open.
    pub help: bool,
    /// Range marker.
    pub mark: Mark,
    /// One-line notice for the status line.
    pub notice: Option<String>,
    /// Search hook: names to emphasize (set by the search feature).
    pub hits: Option<FxHashSet<StrId>>,
    /// Entries discovery skipped (path, why), listed under the picker.
    pub problems: Vec<(std::path::PathBuf, String)>,
}

impl App {
    /// A new app over `captures` at terminal size `size`; returns the commands to start with
    /// (a load when there is exactly one capture).
    pub fn new(captures: Vec<CaptureRef>, size: (u16, u16), mode: ColorMode) -> (App, Vec<Cmd>) {
        let entries: Vec<Entry> = captures
            .into_iter()
            .map(|capture| Entry {
                capture,
                state: EntryState::Idle,
            })
            .collect();
        let mut app = App {
            entries,
            picker: 0,
            screen: Screen::Picker,
            current: None,
            generation: 0,
            size,
            mode,
            t0: 0,
            t1: 1,
            rows: Vec::new(),
            cursor: 0,
            scroll: 0,
            collapsed: FxHashSet::default(),
            selected: None,
            partner_ix: 0,
            color_by_cat: false,
            help: false,
            mark: Mark::None,
            notice: None,
            hits: None,
            problems: Vec::new(),
        };
        let cmds = if app.entries.len() == 1 {
            app.open(0)
        } else {
            Vec::new()
        };
        (app, cmds)
    }

    /// Sets the entries discovery skipped; when a capture opened directly, a notice points to
    /// the picker (Esc) where they are listed.
    pub fn set_problems(&mut self, problems: Vec<(std::path::PathBuf, String)>) {
        if !problems.is_empty() && self.screen == Screen::Timeline {
            self.notice = Some(format!(
                "{} entries skipped (unsupported / unreadable): Esc lists them",
                problems.len()
            ));
        }
        self.problems = problems;
    }

    /// The capture shown in the timeline, when loaded.
    pub fn loaded(&self) -> Option<&Arc<Loaded>> {
        match &self.entries.get(self.current?)?.state {
            EntryState::Ready(l) => Some(l),
            _ => None,
        }
    }

    /// Screen regions for the current size.
    pub fn areas(&self) -> Areas {
        self.areas_in(Rect::new(0, 0, self.size.0, self.size.1))
    }

    /// Screen regions within `area`: the details panel grows on small terminals while a slice
    /// is selected or a range marked.
    pub fn areas_in(&self, area: Rect) -> Areas {
        layout::areas_with(area, self.selected.is_some() || self.mark != Mark::None)
    }

    /// True while any job is running (the loop then ticks for the progress bar).
    pub fn loading(&self) -> bool {
        self.entries
            .iter()
            .any(|e| matches!(e.state, EntryState::Loading(_)))
    }

    /// The time the cursor is at: the selection's middle when visible, else the window centre.
    pub fn cursor_time(&self) -> Ps {
        if let (Some(id), Some(l)) = (self.selected, self.loaded()) {
            let s = &l.cap.slices;
            let i = id as usize;
            if i < s.len() {
                let mid = s.start[i] + s.dur[i] / 2;
                if mid >= self.t0 && mid < self.t1 {
                    return mid;
                }
            }
        }
        self.t0 + (self.t1 - self.t0) / 2
    }

    /// Handles one message; returns the side effects to perform.
    pub fn update(&mut self, msg: Msg) -> Vec<Cmd> {
        match msg {
            Msg::Resize(w, h) => {
                self.size = (w, h);
                self.clamp_scroll();
                Vec::new()
            }
            Msg::Tick => Vec::new(),
            Msg::Mouse(m) => {
                if self.screen == Screen::Timeline && !self.help {
                    self.mouse(m);
                    self.clamp_scroll();
                }
                Vec::new()
            }
            Msg::Load(done) => self.on_load(done),
            Msg::Key(k) if k.kind == KeyEventKind::Release => Vec::new(),
            Msg::Key(k) => {
                let cmds = self.key(k);
                // A selection may have resized the details panel: keep the cursor row visible.
                self.clamp_scroll();
                cmds
            }
        }
    }

    fn key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        {
            {
                self.notice = None;
                if self.help {
                    self.help = false;
                    return match k.code {
                        KeyCode::Char('q') => vec![Cmd::Quit],
                        _ => Vec::new(),
                    };
                }
                if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
                    return vec![Cmd::Quit];
                }
                match self.screen {
                    Screen::Picker => self.picker_key(k),
                    Screen::Timeline => self.timeline_key(k),
                }
            }
        }
    }

    fn on_load(&mut self, done: LoadDone) -> Vec<Cmd> {
        if done.generation != self.generation {
            return Vec::new();
        }
        let Some(e) = self.entries.get_mut(done.entry) else {
            return Vec::new();
        };
        match done.result {
            Ok(l) => {
                e.state = EntryState::Ready(l);
                if self.current == Some(done.entry) {
                    self.reset_view();
                }
            }
            Err(msg) => {
                e.state = EntryState::Failed(msg.clone());
                if self.current == Some(done.entry) && self.entries.len() > 1 {
                    self.screen = Screen::Picker;
                    self.notice = Some("load failed: the error is shown above".into());
                }
            }
        }
        Vec::new()
    }

    /// Opens entry `i`: shows it, starting a load when needed.
    pub fn open(&mut self, i: usize) -> Vec<Cmd> {
        let mut cmds = Vec::new();
        if i >= self.entries.len() {
            return cmds;
        }
        self.screen = Screen::Timeline;
        self.picker = i;
        if self.current == Some(i) && !matches!(self.entries[i].state, EntryState::Failed(_)) {
            return cmds;
        }
        self.current = Some(i);
        // Free other captures and stop other jobs: one capture in memory at a time.
        for (j, e) in self.entries.iter_mut().enumerate() {
            if j == i {
                continue;
            }
            match &e.state {
                EntryState::Loading(p) => {
                    cmds.push(Cmd::Cancel(p.clone()));
                    e.state = EntryState::Idle;
                }
                EntryState::Ready(_) => e.state = EntryState::Idle,
                _ => {}
            }
        }
        match &self.entries[i].state {
            EntryState::Ready(_) => self.reset_view(),
            EntryState::Loading(_) => {}
            EntryState::Idle | EntryState::Failed(_) => {
                self.generation += 1;
                let progress = Arc::new(Progress::default());
                progress.bytes_total.store(
                    self.entries[i].capture.source.file_bytes,
                    std::sync::atomic::Ordering::Relaxed,
                );
                self.entries[i].state = EntryState::Loading(progress.clone());
                cmds.push(Cmd::Load {
                    generation: self.generation,
                    entry: i,
                    capture: self.entries[i].capture.clone(),
                    progress,
                });
            }
        }
        cmds
    }

    fn picker_key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        let n = self.entries.len();
        match k.code {
            KeyCode::Char('q') => return vec![Cmd::Quit],
            KeyCode::Char('?') => self.help = true,
            KeyCode::Down | KeyCode::Char('j') if n > 0 => {
                self.picker = (self.picker + 1).min(n - 1)
            }
            KeyCode::Up | KeyCode::Char('k') => self.picker = self.picker.saturating_sub(1),
            KeyCode::Char('g') | KeyCode::Home => self.picker = 0,
            KeyCode::Char('G') | KeyCode::End => self.picker = n.saturating_sub(1),
            KeyCode::Enter => return self.open(self.picker),
            KeyCode::Esc if self.current.is_some() => self.screen = Screen::Timeline,
            _ => {}
        }
        Vec::new()
    }

    /// Rebuilds rows and shows the whole capture.
    fn reset_view(&mut self) {
        self.selected = None;
        self.mark = Mark::None;
        self.cursor = 0;
        self.scroll = 0;
        self.collapsed.clear();
        self.rebuild_rows();
        self.fit_all();
    }

    /// Rebuilds the row list from the capture and the collapsed set.
    pub fn rebuild_rows(&mut self) {
        let Some(l) = self.loaded().cloned() else {
            self.rows.clear();
            return;
        };
        self.rows = build_rows(&l, &self.collapsed);
        self.cursor = self.cursor.min(self.rows.len().saturating_sub(1));
        self.clamp_scroll();
    }

    fn body_height(&self) -> usize {
        self.areas().lanes.height as usize
    }

    fn cols(&self) -> i64 {
        i64::from(self.areas().lanes.width.max(1))
    }

    fn clamp_scroll(&mut self) {
        let h = self.body_height().max(1);
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + h {
            self.scroll = self.cursor + 1 - h;
        }
        let max = self.rows.len().saturating_sub(h);
        self.scroll = self.scroll.min(max.max(self.cursor.saturating_sub(h - 1)));
    }

    fn span(&self) -> (Ps, Ps) {
        match self.loaded() {
            Some(l) if l.cap.span.1 > l.cap.span.0 => l.cap.span,
            Some(l) => (l.cap.span.0, l.cap.span.0 + 1_000_000),
            None => (0, 1_000_000),
        }
    }

    /// Shows the whole capture.
    pub fn fit_all(&mut self) {
        let (a, b) = self.span();
        self.set_window(a, b);
    }

    /// Sets the window, clamped to sane widths and positions.
    pub fn set_window(&mut self, t0: Ps, t1: Ps) {
        let (a, b) = self.span();
        let min_w = self.cols() * 10;
        let max_w = ((b - a).saturating_mul(4)).max(min_w);
        let mut w = (t1 - t0).clamp(min_w, max_w);
        let mid = t0 + (t1 - t0) / 2;
        let mut s = mid - w / 2;
        let lo = a.saturating_sub(w / 2);
        let hi = b.saturating_add(w / 2);
        if s < lo {
            s = lo;
        }
        if s + w > hi {
            s = (hi - w).max(lo);
            w = w.min(hi - s);
        }
        self.t0 = s;
        self.t1 = s + w.max(1);
    }

    fn zoom(&mut self, factor_num: i64, factor_den: i64) {
        let anchor = self.cursor_time();
        let w = self.t1 - self.t0;
        let nw = (i128::from(w) * i128::from(factor_num) / i128::from(factor_den)) as Ps;
        let left =
            (i128::from(anchor - self.t0) * i128::from(factor_num) / i128::from(factor_den)) as Ps;
        let t0 = anchor - left;
        self.set_window(t0, t0 + nw.max(1));
    }

    fn pan(&mut self, quarters: i64) {
        let w = self.t1 - self.t0;
        let d = w / 4 * quarters;
        self.set_window(self.t0 + d, self.t1 + d);
    }

    /// Centres the window on slice `id` (keeping the width) when it is not fully visible.
    fn reveal(&mut self, id: u32) {
        let Some(l) = self.loaded() else { return };
        let s = &l.cap.slices;
        let i = id as usize;
        if i >= s.len() {
            return;
        }
        let (st, en) = (s.start[i], s.end(i));
        if st >= self.t0 && en <= self.t1 {
            return;
        }
        if en > self.t0 && st < self.t1 && en - st > self.t1 - self.t0 {
            return;
        }
        let w = self.t1 - self.t0;
        let mid = st + (en - st) / 2;
        self.set_window(mid - w / 2, mid - w / 2 + w);
    }

    fn fit_range(&mut self, st: Ps, en: Ps) {
        let d = (en - st).max(1);
        let w = d + d / 10;
        self.set_window(st - (w - d) / 2, st - (w - d) / 2 + w);
    }

    /// Row index of (track, lane), expanding the process when collapsed.
    fn row_of(&mut self, track: u32, lane: u16) -> Option<usize> {
        let p = self.loaded()?.cap.tracks.get(track as usize)?.process;
        if self.collapsed.remove(&p) {
            self.rebuild_rows();
        }
        self.rows.iter().position(
            |r| matches!(*r, Row::Lane { track: t, lane: ln } if t == track && ln == lane),
        )
    }

    /// Selects slice `id`, moving the row cursor to its lane and revealing it.
    pub fn select(&mut self, id: u32) {
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
            self.cursor = r;
            self.clamp_scroll();
        }
        self.reveal(id);
    }

    fn cursor_lane(&self) -> Option<(u32, u16)> {
        match self.rows.get(self.cursor)? {
            Row::Lane { track, lane } => Some((*track, *lane)),
            _ => None,
        }
    }

    fn move_cursor(&mut self, to: usize) {
        if self.rows.is_empty() {
            return;
        }
        self.cursor = to.min(self.rows.len() - 1);
        self.clamp_scroll();
        // Keep a selection on the new lane under the same time, flame-graph style.
        if let (Some(sel), Some((track, lane)), Some(l)) =
            (self.selected, self.cursor_lane(), self.loaded().cloned())
        {
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
        let Some((track, lane)) = self.cursor_lane() else {
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
            None => {
                let c = self.cursor_time();
                if forward {
                    l.index.first_at_or_after(&l.cap, track, lane as usize, c)
                } else {
                    l.index.last_before(&l.cap, track, lane as usize, c)
                }
            }
        };
        match next {
            Some(id) => self.select(id),
            None => self.notice = Some("no more slices on this lane".into()),
        }
    }

    fn enter(&mut self) {
        match self.rows.get(self.cursor).copied() {
            Some(Row::Process(p)) => self.toggle_collapse(p),
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
        if !self.collapsed.remove(&p) {
            self.collapsed.insert(p);
        }
        self.rebuild_rows();
        if let Some(r) = self.rows.iter().position(|r| *r == Row::Process(p)) {
            self.cursor = r;
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
        if sl.dur[b].saturating_mul(self.cols()) < 2 * (self.t1 - self.t0) {
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
                let stats = self.mark_stats(a, b);
                Mark::Range(a, b, stats)
            }
            _ => Mark::Start(t),
        };
    }

    fn mark_stats(&self, a: Ps, b: Ps) -> MarkStats {
        let Some(l) = self.loaded() else {
            return MarkStats {
                slices: 0,
                busy: Vec::new(),
            };
        };
        let mut slices = 0u64;
        let mut busy = Vec::new();
        for (t, tr) in l.cap.tracks.iter().enumerate() {
            if l.cap
                .processes
                .get(tr.process as usize)
                .is_some_and(|p| p.hidden)
                || tr.kind == TrackKind::Counter
            {
                continue;
            }
            let t = t as u32;
            let mut n = 0;
            for lane in 0..l.index.lane_count(t) {
                n += l.index.window(&l.cap, t, lane, a, b).len() as u64;
            }
            if n > 0 {
                slices += n;
                busy.push((t, l.index.busy_time(&l.cap, t, a, b)));
            }
        }
        busy.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        MarkStats { slices, busy }
    }

    fn mouse(&mut self, m: MouseEvent) {
        let Some(l) = self.loaded().cloned() else {
            return;
        };
        let lanes = self.areas().lanes;
        if m.column < lanes.x || m.column >= lanes.right() || lanes.width == 0 {
            return;
        }
        let k = usize::from(m.column - lanes.x);
        let cols = lanes.width as usize;
        let a = crate::index::column_edge(self.t0, self.t1, cols, k);
        let b = crate::index::column_edge(self.t0, self.t1, cols, k + 1).max(a + 1);
        let t = a + (b - a) / 2;
        match m.kind {
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                // Zoom keeping the time under the pointer in place.
                let (num, den) = if m.kind == MouseEventKind::ScrollUp {
                    (1, 2)
                } else {
                    (2, 1)
                };
                let w = i128::from(self.t1 - self.t0);
                let left = (i128::from(t - self.t0) * num / den) as Ps;
                let nw = (w * num / den) as Ps;
                self.set_window(t - left, t - left + nw.max(1));
            }
            MouseEventKind::Down(MouseButton::Left) => {
                if m.row < lanes.y || m.row >= lanes.bottom() {
                    return;
                }
                let r = self.scroll + usize::from(m.row - lanes.y);
                if r >= self.rows.len() {
                    return;
                }
                self.cursor = r;
                if let Row::Lane { track, lane } = self.rows[r] {
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

    fn timeline_key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        match k.code {
            KeyCode::Char('q') => return vec![Cmd::Quit],
            KeyCode::Char('?') => self.help = true,
            KeyCode::Esc => {
                let loading = self.current.and_then(|i| match &self.entries[i].state {
                    EntryState::Loading(p) => Some((i, p.clone())),
                    _ => None,
                });
                if let Some((i, p)) = loading {
                    // Cancel the running load; a later Enter starts it again.
                    self.entries[i].state = EntryState::Idle;
                    self.generation += 1;
                    self.current = None;
                    self.screen = Screen::Picker;
                    self.notice = Some("load cancelled".into());
                    return vec![Cmd::Cancel(p)];
                }
                if self.mark != Mark::None {
                    self.mark = Mark::None;
                } else if self.selected.is_some() {
                    self.selected = None;
                } else if self.entries.len() > 1 || !self.problems.is_empty() {
                    self.screen = Screen::Picker;
                }
            }
            _ if self.loaded().is_none() => {}
            KeyCode::Char('w') | KeyCode::Char('+') | KeyCode::Char('=') => self.zoom(1, 2),
            KeyCode::Char('s') | KeyCode::Char('-') => self.zoom(2, 1),
            KeyCode::Char('a') | KeyCode::Left => self.pan(-1),
            KeyCode::Char('d') | KeyCode::Right => self.pan(1),
            KeyCode::Char('j') | KeyCode::Down => self.move_cursor(self.cursor + 1),
            KeyCode::Char('k') | KeyCode::Up => self.move_cursor(self.cursor.saturating_sub(1)),
            KeyCode::PageDown => self.move_cursor(self.cursor + self.body_height().max(1)),
            KeyCode::PageUp => {
                self.move_cursor(self.cursor.saturating_sub(self.body_height().max(1)))
            }
            KeyCode::Char('g') => self.move_cursor(0),
            KeyCode::Char('G') => self.move_cursor(usize::MAX),
            KeyCode::Char('h') => self.step_slice(false),
            KeyCode::Char('l') => self.step_slice(true),
            KeyCode::Char('u') => {
                let p = self
                    .selected
                    .zip(self.loaded().cloned())
                    .and_then(|(id, l)| l.index.parent(&l.cap, id));
                match p {
                    Some(p) => self.select(p),
                    None => self.notice = Some("no parent".into()),
                }
            }
            KeyCode::Enter => self.enter(),
            KeyCode::Char('f') => {
                if let Mark::Range(a, b, _) = self.mark {
                    self.fit_range(a, b);
                } else if let (Some(id), Some(l)) = (self.selected, self.loaded().cloned()) {
                    let i = id as usize;
                    self.fit_range(l.cap.slices.start[i], l.cap.slices.end(i));
                }
            }
            KeyCode::Char('0') | KeyCode::Home => self.fit_all(),
            KeyCode::Tab | KeyCode::BackTab => {
                let fwd = k.code == KeyCode::Tab;
                let cur = self.rows.get(self.cursor).and_then(|r| r.track());
                let n = self.rows.len();
                if n == 0 {
                    return Vec::new();
                }
                let mut i = self.cursor;
                for _ in 0..n {
                    i = if fwd { (i + 1) % n } else { (i + n - 1) % n };
                    let r = self.rows[i];
                    let first = matches!(r, Row::Lane { lane: 0, .. } | Row::Counter(_));
                    if first && r.track() != cur {
                        break;
                    }
                }
                self.move_cursor(i);
            }
            KeyCode::Char(' ') => {
                let p = match self.rows.get(self.cursor).copied() {
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
            KeyCode::Char('c') => self.color_by_cat = !self.color_by_cat,
            KeyCode::Char('m') => self.mark_key(),
            KeyCode::Char('p') | KeyCode::Char('>') => {
                self.jump_partner(if k.code == KeyCode::Char('p') { 0 } else { 1 })
            }
            KeyCode::Char('<') => self.jump_partner(-1),
            _ => {}
        }
        Vec::new()
    }
}

/// The stream id of a GPU stream track: the key of a Kineto stream, or `N` of an XPlane line
/// named `Stream #N(...)` / `stream N`.
pub fn stream_id(cap: &crate::model::Capture, t: u32) -> Option<i64> {
    let tr = cap.tracks.get(t as usize)?;
    if tr.kind == TrackKind::GpuStream
        && let crate::model::Key::Int(id) = tr.key
    {
        return Some(id);
    }
    let name = cap.strings.get(tr.name);
    let rest = name
        .strip_prefix("Stream #")
        .or_else(|| name.strip_prefix("stream "))?;
    let digits: &str = &rest[..rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len())];
    digits.parse().ok()
}

/// Rows of a capture: visible processes by (instant-only last, sort index, name), each followed
/// by its tracks (sort index, then GPU streams by id, then counters) unless collapsed; one row
/// per lane, one per counter.
pub fn build_rows(l: &Loaded, collapsed: &FxHashSet<u32>) -> Vec<Row> {
    let cap = &l.cap;
    let mut procs: Vec<u32> = (0..cap.processes.len() as u32)
        .filter(|&p| !cap.processes[p as usize].hidden)
        .collect();
    let mut by_proc: Vec<Vec<u32>> = vec![Vec::new(); cap.processes.len()];
    // Processes with slices or counters; the others hold only instant marks.
    let mut substantial = vec![false; cap.processes.len()];
    for (t, tr) in cap.tracks.iter().enumerate() {
        if let Some(v) = by_proc.get_mut(tr.process as usize) {
            v.push(t as u32);
        }
        if (tr.slices.1 > tr.slices.0 || tr.counter.is_some())
            && let Some(s) = substantial.get_mut(tr.process as usize)
        {
            *s = true;
        }
    }
    // Instant-only processes (Kineto's "Traces" markers) go last so the threads and streams
    // lead; otherwise by sort index, then name.
    procs.sort_by_cached_key(|&p| {
        (
            !substantial[p as usize],
            cap.processes[p as usize].sort_index,
            cap.process_name(p),
            p,
        )
    });
    let mut rows = Vec::new();
    for p in procs {
        if by_proc[p as usize].is_empty() {
            // Metadata-only processes have nothing to draw.
            continue;
        }
        rows.push(Row::Process(p));
        if collapsed.contains(&p) {
            continue;
        }
        let mut ts = std::mem::take(&mut by_proc[p as usize]);
        // Other tracks by sort index, then GPU streams by stream id, then counters.
        ts.sort_by_cached_key(|&t| {
            let tr = &cap.tracks[t as usize];
            let order = match stream_id(cap, t) {
                Some(id) => (1, id),
                None => (0, tr.sort_index),
            };
            (tr.kind == TrackKind::Counter, order, t)
        });
        for t in ts {
            let tr = &cap.tracks[t as usize];
            if tr.kind == TrackKind::Counter {
                rows.push(Row::Counter(t));
                continue;
            }
            let lanes = l.index.lane_count(t).max(tr.lanes as usize).max(1);
            for lane in 0..lanes.min(u16::MAX as usize) {
                rows.push(Row::Lane {
                    track: t,
                    lane: lane as u16,
                });
            }
        }
    }
    rows
}
