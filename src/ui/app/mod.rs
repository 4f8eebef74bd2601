//! The app: the [`State`] every view reads, the view stack, and the one transition function
//! `update(Msg) -> Vec<Cmd>` (Elm style) — the only writer of both. Keys go to the top view
//! through the key table; views answer with messages that `update` applies here. `App` derefs
//! to its `State` for reading.

use super::action::Action;
use super::catalog::CaptureRef;
use super::colors::ColorMode;
use super::config::Config;
use super::keymap::ViewKind;
use super::loader::LoadDone;
use super::loading::{Entries, EntryState};
use super::state::State;
use super::views::{capture_form::CaptureForm, picker::PickerView, timeline::TimelineView};
use ratatui::crossterm::event::KeyEventKind;

pub use super::loading::Entry;
pub use super::msg::{Cmd, Msg, View};

mod capture;
mod diff;
pub use super::rows::{Row, build_rows, stream_id};
pub use super::state::{CaptureId, Mark, Screen};

/// The state and the view stack.
#[derive(Debug)]
pub struct App {
    /// What views read.
    state: State,
    /// Views, bottom first: the picker, the timeline when a capture is open, popups.
    stack: Vec<Box<dyn View>>,
}

impl std::ops::Deref for App {
    type Target = State;
    fn deref(&self) -> &State {
        &self.state
    }
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
        let mut state = State::new(
            Entries::new(captures),
            size,
            config.theme(mode),
            config.keymap.clone(),
        );
        state.by_category = config.by_category;
        state.entries.budget = super::budget::resolve(config.memory_mb);
        let mut app = App {
            state,
            stack: vec![Box::new(PickerView)],
        };
        let cmds = if app.state.entries.len() == 1 {
            app.open(0)
        } else {
            Vec::new()
        };
        app.sync_screen();
        (app, cmds)
    }

    /// The state, to change directly: for tests and for setting up the app before the event
    /// loop starts (the explorer itself changes it only in [`App::update`]).
    pub fn state_mut(&mut self) -> &mut State {
        &mut self.state
    }

    /// Sets the entries discovery skipped; when a capture opened directly, a notice points to
    /// the picker (Esc) where they are listed.
    pub fn set_problems(&mut self, problems: Vec<(std::path::PathBuf, String)>) {
        if !problems.is_empty() && self.state.screen == Screen::Timeline {
            self.state.notice = Some(format!(
                "{} entries skipped (unsupported / unreadable): Esc lists them",
                problems.len()
            ));
        }
        self.state.problems = problems;
    }

    /// The views, bottom first.
    pub fn views(&self) -> &[Box<dyn View>] {
        &self.stack
    }

    /// Kind of the top view.
    pub fn top(&self) -> ViewKind {
        self.stack.last().map_or(ViewKind::Picker, |v| v.kind())
    }

    /// Keeps [`State::screen`] in step with the stack.
    fn sync_screen(&mut self) {
        let base = self.stack.iter().rev().find(|v| !v.is_popup());
        self.state.screen = match base.map(|v| v.kind()) {
            Some(ViewKind::Timeline) => Screen::Timeline,
            _ => Screen::Picker,
        };
    }

    /// Handles one message; returns the side effects to perform.
    pub fn update(&mut self, msg: Msg) -> Vec<Cmd> {
        let mut cmds = Vec::new();
        let mut queue = std::collections::VecDeque::from([msg]);
        while let Some(m) = queue.pop_front() {
            let more = self.apply(m, &mut cmds);
            self.sync_screen();
            queue.extend(more);
        }
        // A selection may have resized the details panel: keep the cursor row visible.
        self.state.clamp_scroll();
        cmds
    }

    /// Applies one message; returns follow-up messages.
    fn apply(&mut self, msg: Msg, cmds: &mut Vec<Cmd>) -> Vec<Msg> {
        let st = &mut self.state;
        match msg {
            Msg::Resize(w, h) => st.size = (w, h),
            Msg::Tick => {
                if let Some(r) = &mut st.capture.running {
                    r.elapsed = r.started.elapsed();
                }
            }
            Msg::Load(done) => {
                self.on_load(done);
                cmds.extend(self.advance_diff());
                // The step summary of a capture is computed (in the background, from its
                // model) as soon as it is loaded and kept for the run overview, so the
                // overview needs no reload of a capture the budget dropped meanwhile.
                let st = &self.state;
                let fresh: Vec<CaptureId> = st
                    .entries
                    .iter()
                    .filter(|e| matches!(e.state, EntryState::Ready(_)))
                    .filter(|e| st.summaries.get(e.id).is_none())
                    .map(|e| e.id)
                    .collect();
                if !fresh.is_empty() {
                    return vec![Msg::RequestSummaries(fresh)];
                }
            }
            Msg::Derived(_) => {
                // The derived rows count against the budget too.
                st.entries.remeasure();
                self.enforce_budget();
                let st = &mut self.state;
                // The new rows sit under process headers: keep the cursor on its row.
                let cur = st.rows.list.get(st.rows.cursor).copied();
                st.rebuild_rows();
                if let Some(p) = cur.and_then(|r| st.rows.list.iter().position(|&x| x == r)) {
                    st.rows.cursor = p;
                }
            }
            Msg::Key(k) if k.kind == KeyEventKind::Release => {}
            Msg::Key(k) => {
                st.notice = None;
                let kind = self.top();
                let action = self.state.keymap.action(kind, &k);
                let opener = action.filter(|&a| kind.takes(a));
                if opener == Some(Action::OpenNewest) {
                    cmds.extend(self.open_newest());
                    return Vec::new();
                }
                if opener == Some(Action::OpenCapture) {
                    let form = CaptureForm::new(&self.state.capture.settings);
                    self.stack.push(Box::new(form));
                    return Vec::new();
                }
                return self.with_top(|v, st| v.on_key(&k, action, st));
            }
            Msg::Mouse(m) => return self.with_top(|v, st| v.on_mouse(m, st)),
            Msg::Quit => cmds.push(Cmd::Quit),
            Msg::Push(v) => self.stack.push(v),
            Msg::Pop => {
                if self.stack.len() > 1 {
                    self.stack.pop();
                }
            }
            Msg::Open(i) => cmds.extend(self.open(i)),
            Msg::Pick(i) => st.picker = i.min(st.entries.len().saturating_sub(1)),
            Msg::ShowTimeline => {
                if let Some(id) = st.shown()
                    && self.top() != ViewKind::Timeline
                {
                    self.stack.push(Box::new(TimelineView::new(id)));
                }
            }
            Msg::Nav(Action::Quit) => cmds.push(Cmd::Quit),
            Msg::Nav(Action::Back) => cmds.extend(self.back()),
            Msg::Nav(a) => st.navigate(a),
            Msg::NavMouse(m) => st.mouse(m),
            Msg::Select(id) => st.select(id),
            Msg::SetWindow(a, b) => st.set_window(a, b),
            Msg::Notice(s) => st.notice = Some(s),
            Msg::SetHits(h) => st.hits = Some(h),
            Msg::JumpTo(id) => st.jump_to(id),
            Msg::FocusTrack(t) => st.focus_track(t),
            Msg::RememberSearch(q) => st.remember_search(q),
            Msg::RequestSummaries(ids) => {
                let wanted = ids
                    .into_iter()
                    .filter_map(|id| {
                        let e = st.entries.entry(id)?;
                        let l = match &e.state {
                            EntryState::Ready(l) => Some(l.clone()),
                            _ => None,
                        };
                        Some((id, e.capture.clone(), l))
                    })
                    .collect();
                let max = st.entries.max_jobs;
                let jobs = st.summaries.request(wanted, max);
                cmds.extend(jobs.into_iter().map(Cmd::Summarize));
            }
            Msg::Summary(id, result) => {
                let max = st.entries.max_jobs;
                let jobs = st.summaries.finish(id, *result, max);
                cmds.extend(jobs.into_iter().map(Cmd::Summarize));
                let st = &self.state;
                for v in &mut self.stack {
                    v.refresh(st);
                }
            }
            Msg::OpenWindow(id, t0, t1) => {
                let Some(i) = st.entries.index_of(id) else {
                    st.notice = Some("that capture is no longer listed".into());
                    return Vec::new();
                };
                st.pending_window = Some((id, t0, t1));
                cmds.extend(self.open(i));
                self.state.apply_pending_window();
            }
            Msg::SetBaseline(i) => self.set_baseline(i),
            Msg::OpenDiff(i) => {
                let Some((a, b)) = self.diff_pair(i) else {
                    return Vec::new();
                };
                self.state.diff.pending = Some((a, b));
                cmds.extend(self.advance_diff());
            }
            Msg::StartCapture(s) => return self.start_capture(s, cmds),
            Msg::Captured(done) => return self.on_captured(done),
            Msg::Watch(e) => {
                let out = st.on_watch(e);
                cmds.extend(out.cmds);
                if let Some(i) = out.open {
                    cmds.extend(self.open(i));
                }
            }
        }
        Vec::new()
    }

    /// Runs `f` on the top view with read access to the state (the view is taken off the
    /// stack meanwhile, so it can be changed while the state is borrowed).
    fn with_top(&mut self, f: impl FnOnce(&mut dyn View, &State) -> Vec<Msg>) -> Vec<Msg> {
        let Some(mut v) = self.stack.pop() else {
            return Vec::new();
        };
        let out = f(v.as_mut(), &self.state);
        self.stack.push(v);
        out
    }

    /// `Back` on the timeline: cancels a running load, else clears the mark, else the
    /// selection, else returns to the full view below it (a folded capture's flame view) or to
    /// the picker (when there is more than one thing to pick).
    fn back(&mut self) -> Option<Cmd> {
        if let Some(c) = self.cancel_load() {
            // A later Enter starts it again.
            return Some(c);
        }
        if self.state.clear_mark_or_selection() {
            return None;
        }
        if self.stack.len() > 2 && self.top() == ViewKind::Timeline {
            self.stack.pop();
        } else if self.state.entries.len() > 1 || !self.state.problems.is_empty() {
            self.show_picker();
        }
        None
    }

    fn on_load(&mut self, done: LoadDone) {
        if done.partial {
            return self.on_preview(done);
        }
        if self.state.entries.is_reload(done.generation) {
            if self.state.on_reload(done) {
                // Popups (search results, tables) referred to the previous version.
                self.close_popups();
            }
            return;
        }
        let st = &mut self.state;
        let (ok, state) = match done.result {
            Ok(l) => (true, EntryState::Ready(l)),
            Err(msg) => (false, EntryState::Failed(msg)),
        };
        let was_preview = st.entries.is_preview();
        if !st.entries.finish(done.generation, done.entry, state) {
            return;
        }
        if ok {
            self.enforce_budget();
        }
        let st = &mut self.state;
        // The preview's notice no longer applies once the whole capture (or its error) is in.
        if was_preview && !st.entries.is_preview() {
            st.notice = None;
        }
        if st.entries.current != Some(done.entry) {
            return;
        }
        if ok {
            self.reset_view();
            self.open_folded_as_flame();
        } else if st.entries.len() > 1 {
            self.show_picker();
            self.state.notice = Some("load failed: the error is shown above".into());
        }
    }

    /// A partial capture of a big file arrived: draw it until the full load lands (which then
    /// replaces it and resets the view).
    fn on_preview(&mut self, done: LoadDone) {
        let Ok(l) = done.result else { return };
        let events = l.cap.slices.len() as u64 + l.cap.instants.ts.len() as u64;
        let st = &mut self.state;
        if !st
            .entries
            .set_preview(done.generation, done.entry, l.clone())
        {
            return;
        }
        if st.entries.current != Some(done.entry) {
            return;
        }
        self.reset_view();
        self.state.notice = Some(format!(
            "partial preview: the first {} events; the whole capture replaces it when loaded",
            super::status::count(events)
        ));
    }

    /// Drops the least recently used captures beyond the memory budget (the shown one, those
    /// the views on the stack draw and the two sides of a pending diff are pinned) and says so
    /// in the status line.
    fn enforce_budget(&mut self) {
        let mut pinned: Vec<CaptureId> = self.stack.iter().flat_map(|v| v.captures()).collect();
        if let Some((a, b)) = &self.state.diff.pending {
            for p in [a, b] {
                let e = &self.state.entries;
                if let Some(id) = e.position(p).and_then(|i| e.id_of(i)) {
                    pinned.push(id);
                }
            }
        }
        let st = &mut self.state;
        st.entries.set_pinned(pinned);
        let dropped = st.entries.enforce_budget();
        if let Some(&id) = dropped.first() {
            let name = st.entries.entry(id).map_or(String::new(), |e| e.label());
            let more = match dropped.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            st.notice = Some(format!(
                "memory budget {}: dropped {name}{more} (least recently used; reloads when opened)",
                super::status::bytes(st.entries.budget)
            ));
        }
    }

    /// A folded-stacks file has no timeline worth reading (its slices only lay the stacks out):
    /// its one view is the merged tree, in place of the timeline.
    fn open_folded_as_flame(&mut self) {
        let folded = self
            .state
            .loaded()
            .is_some_and(|l| l.cap.format == Some(crate::model::Format::Folded));
        if !folded || self.top() != ViewKind::Timeline {
            return;
        }
        if let Some(v) = super::views::flame_view::FlameView::open(&self.state) {
            self.stack.pop();
            self.stack.push(Box::new(v));
        }
    }

    /// Pops everything above the picker.
    fn show_picker(&mut self) {
        self.stack.truncate(1);
    }

    /// Opens entry `i`: shows it, starting a load when needed.
    pub fn open(&mut self, i: usize) -> Vec<Cmd> {
        let st = &mut self.state;
        if st.defer_open(i) {
            return Vec::new();
        }
        let already = st.entries.current == Some(i)
            && st
                .entries
                .get(i)
                .is_some_and(|e| !matches!(e.state, EntryState::Failed(_)));
        let Some((cancel, job)) = st.entries.open(i) else {
            return Vec::new();
        };
        st.picker = i;
        let Some(id) = st.entries.id_of(i) else {
            return Vec::new();
        };
        self.stack.truncate(1);
        self.stack.push(Box::new(TimelineView::new(id)));
        let mut cmds: Vec<Cmd> = cancel.into_iter().map(Cmd::Cancel).collect();
        match job {
            Some(j) => cmds.push(Cmd::Load {
                generation: j.generation,
                entry: j.entry,
                capture: j.capture,
                progress: j.progress,
            }),
            None if !already && self.state.loaded().is_some() => self.reset_view(),
            None => {}
        }
        self.sync_screen();
        cmds
    }

    /// Cancels the open capture's load and returns to the picker.
    fn cancel_load(&mut self) -> Option<Cmd> {
        let p = self.state.entries.cancel_current()?;
        self.show_picker();
        self.state.notice = Some("load cancelled".into());
        Some(Cmd::Cancel(p))
    }

    /// Closes the popups (they refer to the capture being replaced), rebuilds rows and shows
    /// the whole capture.
    fn reset_view(&mut self) {
        self.close_popups();
        self.state.reset_view();
    }

    /// Closes the popups above the topmost full view: their contents (search results, tables)
    /// refer to the capture being replaced.
    fn close_popups(&mut self) {
        let base = self.stack.iter().rposition(|v| !v.is_popup()).unwrap_or(0);
        self.stack.truncate(base + 1);
    }

    /// Rebuilds the row list from the capture and the collapsed set.
    pub fn rebuild_rows(&mut self) {
        self.state.rebuild_rows();
    }

    /// Sets the window, clamped to sane widths and positions.
    pub fn set_window(&mut self, t0: crate::model::Ps, t1: crate::model::Ps) {
        self.state.set_window(t0, t1);
    }

    /// Shows the whole capture.
    pub fn fit_all(&mut self) {
        self.state.fit_all();
    }

    /// Selects slice `id`, moving the row cursor to its lane and revealing it.
    pub fn select(&mut self, id: u32) {
        self.state.select(id);
    }

    /// Opens the newest capture announced complete (else the first entry, the newest run).
    pub fn open_newest(&mut self) -> Vec<Cmd> {
        let i = self.state.newest_entry();
        match self.state.entries.get(i) {
            Some(_) => self.open(i),
            None => Vec::new(),
        }
    }
}
