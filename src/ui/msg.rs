//! The protocol between views and the app: [`Msg`] (everything that can happen: input, load
//! results, what views ask for), [`Cmd`] (side effects the event loop performs) and the
//! [`View`] trait. Views read [`State`] and answer with messages; only
//! [`App::update`](super::app::App::update) writes. `Msg::Push` carries a view and views return
//! messages, so the three live in one file that imports neither the app nor any view.

use super::action::Action;
use super::capture::{CaptureSettings, Done};
use super::catalog::CaptureRef;
use super::hits::HitList;
use super::keymap::ViewKind;
use super::loader::LoadDone;
use super::state::State;
use crate::formats::Progress;
use crate::index::Cell;
use crate::model::Ps;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyEvent, MouseEvent};
use ratatui::layout::Rect;
use std::any::Any;
use std::sync::Arc;

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
    /// Move the picker's cursor to catalog entry `i`.
    Pick(usize),
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
    /// Compute the step summaries of these captures (the run overview), those not known yet.
    RequestSummaries(Vec<super::state::CaptureId>),
    /// A step summary finished (or failed) on its background thread.
    Summary(
        super::state::CaptureId,
        Box<super::summaries::SummaryResult>,
    ),
    /// Open capture `id` on the timeline showing the window `[t0, t1)` (once loaded).
    OpenWindow(super::state::CaptureId, Ps, Ps),
    /// Mark picker entry `i` as the diff baseline (again: unmark).
    SetBaseline(usize),
    /// Diff picker entry `i` (B) against the baseline (loading both first).
    OpenDiff(usize),
    /// Start a capture with these settings (the capture form's `Enter`).
    StartCapture(CaptureSettings),
    /// The capture finished: where it landed, what failed.
    Captured(Done),
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
    /// Compute a step summary on a background thread.
    Summarize(super::summaries::SummaryJob),
    /// Run a capture on a background thread (answers with [`Msg::Captured`]).
    Capture {
        /// What to capture.
        settings: CaptureSettings,
        /// The log dir it goes under.
        logdir: std::path::PathBuf,
    },
    /// Remember the capture form's values in the config file.
    SaveCaptureSettings(std::path::PathBuf, CaptureSettings),
    /// Leave the app.
    Quit,
}

/// One screen or popup on the view stack. A view owns only its own state (a table its rows
/// and sort, the search its query and results); everything shared it reads from `&State` and
/// changes by returning [`Msg`]s.
pub trait View: std::fmt::Debug + Send {
    /// Which bindings of the key table apply.
    fn kind(&self) -> ViewKind;

    /// Popups are drawn over the view below them; full views hide what is below.
    fn is_popup(&self) -> bool {
        false
    }

    /// A key press: `action` is its binding in this view (or a global one), `None` when the
    /// key is unbound (text prompts read `key` itself).
    fn on_key(&mut self, key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg>;

    /// The captures this view draws (pinned in memory while it is on the stack).
    fn captures(&self) -> Vec<super::state::CaptureId> {
        Vec::new()
    }

    /// Shared data the view mirrors changed (a step summary landed): rebuild from `st`.
    fn refresh(&mut self, _st: &State) {}

    /// A mouse event (ignored by default).
    fn on_mouse(&mut self, _m: MouseEvent, _st: &State) -> Vec<Msg> {
        Vec::new()
    }

    /// Draws the view into `area` of `buf`; `cells` is reusable scratch for the timeline.
    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, cells: &mut Vec<Cell>);

    /// For tests and the app to reach a concrete view.
    fn as_any(&self) -> &dyn Any;

    /// Mutable [`View::as_any`].
    fn as_any_mut(&mut self) -> &mut dyn Any;
}
