//! The app: shared state (captures, window, rows, selection, mark), the view stack, and the
//! one transition function `update(Msg) -> Vec<Cmd>` (Elm style). Keys go to the top view
//! through the key table; views answer with messages that `update` applies here.

use super::action::Action;
use super::catalog::CaptureRef;
use super::colors::{ColorMode, Theme};
use super::config::Config;
use super::hits::HitList;
use super::keymap::{Keymap, ViewKind};
use super::layout::{self, Areas};
use super::live::Live;
use super::loader::{LoadDone, Loaded};
use super::loading::{Entries, EntryState};
use super::rows::Rows;
use super::viewport::{Bounds, Viewport};
use super::views::{View, help::HelpView, picker::PickerView, timeline::TimelineView};
use crate::analysis::range::RangeStats;
use crate::formats::Progress;
use crate::model::Ps;
use ratatui::crossterm::event::{KeyEvent, KeyEventKind, MouseEvent};
use ratatui::layout::Rect;
use std::sync::Arc;

pub use super::loading::Entry;
pub use super::rows::{Row, build_rows, stream_id};

/// Everything that can happen to the app: input, load results, and what views ask for.
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
    /// The derived rows of load job `generation` are ready (rows are rebuilt).
    Derived(u64),
    /// Leave the app.
    Quit,
    /// Push a view (popups are drawn over the view below).
    Push(Box<dyn View>),
    /// Pop the top view.
    Pop,
    /// Open catalog entry `i` in the timeline.
    Open(usize),
    /// Show the timeline of the open capture again (from the picker).
    ShowTimeline,
    /// A timeline action on the shared state (window, rows, selection, mark).
    Nav(Action),
    /// A mouse event on the timeline body.
    NavMouse(MouseEvent),
    /// Select slice `id` (moves the row cursor to it and reveals it).
    Select(u32),
    /// Set the visible window.
    SetWindow(Ps, Ps),
    /// Show a one-line notice in the status line.
    Notice(String),
    /// Replace the hit list (`n` / `N` step through it).
    SetHits(HitList),
    /// Select slice `id` and zoom so it is visible (at least a few columns wide).
    JumpTo(u32),
    /// Add a query to the search history.
    RememberSearch(String),
    /// Move the row cursor to the first lane of track `t` (expanding its process).
    FocusTrack(u32),
    /// A capture event or notice from the log-dir watcher (handled in `live.rs`).
    Watch(crate::live::WatchEvent),
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

/// The base screen shown (what is under any popup).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screen {
    /// The capture list.
    Picker,
    /// The timeline of the open capture.
    Timeline,
}

/// The `m` range marker.
#[derive(Clone, Debug, PartialEq)]
pub enum Mark {
    /// Nothing marked.
    None,
    /// First end chosen.
    Start(Ps),
    /// A full range with its aggregate.
    Range(Ps, Ps, RangeStats),
}

/// All UI state: shared state read by every view, and the view stack.
#[derive(Debug)]
pub struct App {
    /// Captures offered, their load states, the open one.
    pub entries: Entries,
    /// Entries discovery skipped (path, why), listed under the picker.
    pub problems: Vec<(std::path::PathBuf, String)>,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// Colour depth and background.
    pub theme: Theme,
    /// Colour slices by category instead of name.
    pub by_category: bool,
    /// The key table in force.
    pub keymap: Keymap,
    /// Visible window.
    pub vp: Viewport,
    /// Rows of the timeline body with cursor, scroll and folds.
    pub rows: Rows,
    /// Selected slice.
    pub selected: Option<u32>,
    /// Index among the selection's flow partners last jumped to.
    pub partner_ix: usize,
    /// Range marker.
    pub mark: Mark,
    /// One-line notice for the status line.
    pub notice: Option<String>,
    /// Slices highlighted and stepped through with `n` / `N` (search occurrences, rankings).
    pub hits: Option<HitList>,
    /// Earlier search queries, oldest first.
    pub search_history: Vec<String>,
    /// Live watching: `--follow`, the newest capture.
    pub live: Live,
    /// Views, bottom first: the picker, the timeline when a capture is open, popups.
    stack: Vec<Box<dyn View>>,
}

impl App {
    /// A new app over `captures` at terminal size `size` with the default config.
    pub fn new(captures: Vec<CaptureRef>, size: (u16, u16), mode: ColorMode) -> (App, Vec<Cmd>) {
        App::with_config(captures, size, mode, &Config::default())
    }

    /// A new app with `config`'s keys and theme; returns the commands to start with (a load
    /// when there is exactly one capture).
    pub fn with_config(
        captures: Vec<CaptureRef>,
        size: (u16, u16),
        mode: ColorMode,
        config: &Config,
    ) -> (App, Vec<Cmd>) {
        let mut app = App {
            entries: Entries::new(captures),
            problems: Vec::new(),
            size,
            theme: config.theme(mode),
            by_category: config.by_category,
            keymap: config.keymap.clone(),
            vp: Viewport::default(),
            rows: Rows::default(),
            selected: None,
            partner_ix: 0,
            mark: Mark::None,
            notice: None,
            hits: None,
            search_history: Vec::new(),
            live: Live::default(),
            stack: vec![Box::new(PickerView::default())],
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
        if !problems.is_empty() && self.screen() == Screen::Timeline {
            self.notice = Some(format!(
                "{} entries skipped (unsupported / unreadable): Esc lists them",
                problems.len()
            ));
        }
        self.problems = problems;
    }

    /// The base screen under any popup.
    pub fn screen(&self) -> Screen {
        match self
            .stack
            .iter()
            .rev()
            .find(|v| !v.is_popup())
            .map(|v| v.kind())
        {
            Some(ViewKind::Timeline) => Screen::Timeline,
            _ => Screen::Picker,
        }
    }

    /// The views, bottom first.
    pub fn views(&self) -> &[Box<dyn View>] {
        &self.stack
    }

    /// Kind of the top view.
    pub fn top(&self) -> ViewKind {
        self.stack.last().map_or(ViewKind::Picker, |v| v.kind())
    }

    /// The picker's cursor (entry index).
    pub fn picker_cursor(&self) -> usize {
        self.stack
            .iter()
            .find_map(|v| v.as_any().downcast_ref::<PickerView>())
            .map_or(0, |p| p.cursor)
    }

    /// Moves the picker's cursor to entry `i`.
    pub(super) fn set_picker_cursor(&mut self, i: usize) {
        if let Some(p) = self.stack[0].as_any_mut().downcast_mut::<PickerView>() {
            p.cursor = i;
        }
    }

    /// The capture shown in the timeline, when loaded.
    pub fn loaded(&self) -> Option<&Arc<Loaded>> {
        self.entries.loaded()
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
        self.entries.any_loading()
    }

    /// Rows of the timeline body.
    pub(super) fn body_height(&self) -> usize {
        self.areas().lanes.height as usize
    }

    /// Window bounds for the open capture at the current width.
    pub(super) fn bounds(&self) -> Bounds {
        let span = self.loaded().map_or((0, 1_000_000), |l| l.cap.span);
        Bounds::new(span, i64::from(self.areas().lanes.width.max(1)))
    }

    /// The time the cursor is at: the selection's middle when visible, else the window centre.
    pub fn cursor_time(&self) -> Ps {
        if let (Some(id), Some(l)) = (self.selected, self.loaded()) {
            let s = &l.cap.slices;
            let i = id as usize;
            if i < s.len() {
                let mid = s.start[i] + s.dur[i] / 2;
                if mid >= self.vp.t0 && mid < self.vp.t1 {
                    return mid;
                }
            }
        }
        self.vp.t0 + self.vp.width() / 2
    }

    /// Handles one message; returns the side effects to perform.
    pub fn update(&mut self, msg: Msg) -> Vec<Cmd> {
        let mut cmds = Vec::new();
        let mut queue = std::collections::VecDeque::from([msg]);
        while let Some(m) = queue.pop_front() {
            let more = self.apply(m, &mut cmds);
            queue.extend(more);
        }
        // A selection may have resized the details panel: keep the cursor row visible.
        self.rows.clamp_scroll(self.body_height());
        cmds
    }

    /// Applies one message; returns follow-up messages.
    fn apply(&mut self, msg: Msg, cmds: &mut Vec<Cmd>) -> Vec<Msg> {
        match msg {
            Msg::Resize(w, h) => self.size = (w, h),
            Msg::Tick => {}
            Msg::Load(done) => self.on_load(done),
            Msg::Derived(_) => {
                // The new rows sit under process headers: keep the cursor on its row.
                let cur = self.rows.list.get(self.rows.cursor).copied();
                self.rebuild_rows();
                if let Some(p) = cur.and_then(|r| self.rows.list.iter().position(|&x| x == r)) {
                    self.rows.cursor = p;
                }
            }
            Msg::Key(k) if k.kind == KeyEventKind::Release => {}
            Msg::Key(k) => {
                self.notice = None;
                let kind = self.top();
                let action = self.keymap.action(kind, &k);
                if action == Some(Action::OpenNewest)
                    && matches!(kind, ViewKind::Picker | ViewKind::Timeline)
                {
                    cmds.extend(self.open_newest());
                    return Vec::new();
                }
                return self.with_top(|v, app| v.on_key(&k, action, app));
            }
            Msg::Mouse(m) => return self.with_top(|v, app| v.on_mouse(m, app)),
            Msg::Quit => cmds.push(Cmd::Quit),
            Msg::Push(v) => self.stack.push(v),
            Msg::Pop => {
                if self.stack.len() > 1 {
                    self.stack.pop();
                }
            }
            Msg::Open(i) => cmds.extend(self.open(i)),
            Msg::ShowTimeline => {
                if self.entries.current.is_some() && self.top() != ViewKind::Timeline {
                    self.stack.push(Box::new(TimelineView));
                }
            }
            Msg::Nav(a) => {
                if let Some(c) = self.navigate(a) {
                    cmds.push(c);
                }
            }
            Msg::NavMouse(m) => self.mouse(m),
            Msg::Select(id) => self.select(id),
            Msg::SetWindow(a, b) => {
                let bo = self.bounds();
                self.vp.set(a, b, bo);
            }
            Msg::Notice(s) => self.notice = Some(s),
            Msg::SetHits(h) => self.hits = Some(h),
            Msg::JumpTo(id) => self.jump_to(id),
            Msg::FocusTrack(t) => self.focus_track(t),
            Msg::RememberSearch(q) => {
                self.search_history.retain(|h| *h != q);
                self.search_history.push(q);
                if self.search_history.len() > 100 {
                    self.search_history.remove(0);
                }
            }
            Msg::Watch(e) => cmds.extend(self.on_watch(e)),
        }
        Vec::new()
    }

    /// Runs `f` on the top view with read access to the app (the view is taken off the stack
    /// meanwhile, so it can borrow the rest of the state).
    fn with_top(&mut self, f: impl FnOnce(&mut dyn View, &App) -> Vec<Msg>) -> Vec<Msg> {
        let Some(mut v) = self.stack.pop() else {
            return Vec::new();
        };
        let out = f(v.as_mut(), self);
        self.stack.push(v);
        out
    }

    fn on_load(&mut self, done: LoadDone) {
        if done.partial {
            return self.on_preview(done);
        }
        if self.entries.is_reload(done.generation) {
            return self.on_reload(done);
        }
        let (ok, state) = match done.result {
            Ok(l) => (true, EntryState::Ready(l)),
            Err(msg) => (false, EntryState::Failed(msg)),
        };
        let was_preview = self.entries.is_preview();
        if !self.entries.finish(done.generation, done.entry, state) {
            return;
        }
        // The preview's notice no longer applies once the whole capture (or its error) is in.
        if was_preview && !self.entries.is_preview() {
            self.notice = None;
        }
        if self.entries.current != Some(done.entry) {
            return;
        }
        if ok {
            self.reset_view();
        } else if self.entries.len() > 1 {
            self.show_picker();
            self.notice = Some("load failed: the error is shown above".into());
        }
    }

    /// A partial capture of a big file arrived: draw it until the full load lands (which then
    /// replaces it and resets the view).
    fn on_preview(&mut self, done: LoadDone) {
        let Ok(l) = done.result else { return };
        let events = l.cap.slices.len() as u64 + l.cap.instants.ts.len() as u64;
        if !self
            .entries
            .set_preview(done.generation, done.entry, l.clone())
        {
            return;
        }
        if self.entries.current != Some(done.entry) {
            return;
        }
        self.reset_view();
        self.notice = Some(format!(
            "partial preview: the first {} events; the whole capture replaces it when loaded",
            crate::ui::status::count(events)
        ));
    }

    /// Pops everything above the picker.
    pub(super) fn show_picker(&mut self) {
        self.stack.truncate(1);
    }

    /// Opens entry `i`: shows it, starting a load when needed.
    pub fn open(&mut self, i: usize) -> Vec<Cmd> {
        if self.defer_open(i) {
            return Vec::new();
        }
        let already = self.entries.current == Some(i)
            && self
                .entries
                .get(i)
                .is_some_and(|e| !matches!(e.state, EntryState::Failed(_)));
        let Some((cancel, job)) = self.entries.open(i) else {
            return Vec::new();
        };
        self.stack.truncate(1);
        if let Some(p) = self.stack[0].as_any_mut().downcast_mut::<PickerView>() {
            p.cursor = i;
        }
        self.stack.push(Box::new(TimelineView));
        let mut cmds: Vec<Cmd> = cancel.into_iter().map(Cmd::Cancel).collect();
        match job {
            Some(j) => cmds.push(Cmd::Load {
                generation: j.generation,
                entry: j.entry,
                capture: j.capture,
                progress: j.progress,
            }),
            None if !already && self.loaded().is_some() => self.reset_view(),
            None => {}
        }
        cmds
    }

    /// Cancels the open capture's load and returns to the picker.
    pub(super) fn cancel_load(&mut self) -> Option<Cmd> {
        let p = self.entries.cancel_current()?;
        self.show_picker();
        self.notice = Some("load cancelled".into());
        Some(Cmd::Cancel(p))
    }

    /// Rebuilds rows and shows the whole capture.
    fn reset_view(&mut self) {
        self.close_popups();
        self.hits = None;
        self.selected = None;
        self.mark = Mark::None;
        self.rows.cursor = 0;
        self.rows.scroll = 0;
        self.rows.collapsed.clear();
        self.rebuild_rows();
        let b = self.bounds();
        self.vp.fit_all(b);
    }

    /// Closes the popups above the topmost full view: their contents (search results, tables)
    /// refer to the capture being replaced.
    pub(super) fn close_popups(&mut self) {
        let base = self.stack.iter().rposition(|v| !v.is_popup()).unwrap_or(0);
        self.stack.truncate(base + 1);
    }

    /// Rebuilds the row list from the capture and the collapsed set.
    pub fn rebuild_rows(&mut self) {
        let l = self.loaded().cloned();
        let h = self.body_height();
        self.rows.rebuild(l.as_deref(), h);
    }

    /// Sets the window, clamped to sane widths and positions.
    pub fn set_window(&mut self, t0: Ps, t1: Ps) {
        let b = self.bounds();
        self.vp.set(t0, t1, b);
    }

    /// Shows the whole capture.
    pub fn fit_all(&mut self) {
        let b = self.bounds();
        self.vp.fit_all(b);
    }
}

/// Opens the key help for the view under it.
pub(super) fn help_for(kind: ViewKind) -> Msg {
    Msg::Push(Box::new(HelpView::new(kind)))
}
