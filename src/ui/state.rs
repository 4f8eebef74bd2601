//! What every view draws from: the catalog and its loaded captures (by [`CaptureId`]), the
//! window, the rows, the selection, the mark, the hits, the theme, the key table and the
//! notice. Views and drawing helpers get `&State` (or just the pieces they draw); only
//! [`App::update`](super::app::App::update) writes it — through the `&mut` methods here and in
//! `navigate.rs` (timeline navigation) and `live.rs` (watcher events), which are pieces of that
//! one update and are not reachable from a view.

use super::capture::CaptureState;
use super::colors::Theme;
use super::hits::HitList;
use super::keymap::Keymap;
use super::layout::{self, Areas};
use super::loader::Loaded;
use super::loading::Entries;
use super::rows::Rows;
use super::viewport::{Bounds, Viewport};
use crate::analysis::range::RangeStats;
use crate::model::Ps;
use ratatui::layout::Rect;
use std::path::PathBuf;
use std::sync::Arc;

pub use super::loading::CaptureId;

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

/// Live-watching state: `--follow`, the newest capture, a deferred open.
#[derive(Debug, Default, Clone)]
pub struct Live {
    /// Open each new capture as soon as it is complete (`--follow`).
    pub follow: bool,
    /// The newest capture announced complete (what `open_newest` opens).
    pub newest: Option<PathBuf>,
    /// Asked to open while still being written: opens once complete.
    pub open_when_ready: Option<PathBuf>,
}

/// The picker's diff: the baseline (A) and a diff waiting for its captures to load.
#[derive(Debug, Default, Clone)]
pub struct DiffPick {
    /// The baseline capture (A), by path.
    pub baseline: Option<PathBuf>,
    /// (A, B) to show once both are loaded.
    pub pending: Option<(PathBuf, PathBuf)>,
    /// (A, B) of the diff last opened: B's flame view is coloured by its Δ against A.
    pub active: Option<(PathBuf, PathBuf)>,
}

/// All state the views read. See the module doc for who writes it.
#[derive(Debug)]
pub struct State {
    /// Captures offered, their load states, the open one.
    pub entries: Entries,
    /// The picker's cursor (catalog entry index; kept on its entry when the watcher adds or
    /// removes entries).
    pub picker: usize,
    /// Entries discovery skipped (path, why), listed under the picker.
    pub problems: Vec<(PathBuf, String)>,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// The base screen under any popup (kept by the app as the view stack changes).
    pub screen: Screen,
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
    /// Per-capture step summaries (the run overview), kept for the session.
    pub summaries: super::summaries::Summaries,
    /// A window to show once capture `.0` is loaded and shown (`Enter` in the overview).
    pub pending_window: Option<(CaptureId, Ps, Ps)>,
    /// Capture from the explorer: the form's values, the capture running, where it goes.
    pub capture: CaptureState,
    /// The picker's diff baseline and pending diff.
    pub diff: DiffPick,
}

impl State {
    /// A state over `entries` at terminal size `size`, with `theme` and `keymap`.
    pub fn new(entries: Entries, size: (u16, u16), theme: Theme, keymap: Keymap) -> State {
        State {
            entries,
            picker: 0,
            problems: Vec::new(),
            size,
            screen: Screen::Picker,
            theme,
            by_category: false,
            keymap,
            vp: Viewport::default(),
            rows: Rows::default(),
            selected: None,
            partner_ix: 0,
            mark: Mark::None,
            notice: None,
            hits: None,
            search_history: Vec::new(),
            live: Live::default(),
            summaries: Default::default(),
            pending_window: None,
            capture: CaptureState::default(),
            diff: DiffPick::default(),
        }
    }

    /// The base screen under any popup.
    pub fn screen(&self) -> Screen {
        self.screen
    }

    /// The picker's cursor (entry index).
    pub fn picker_cursor(&self) -> usize {
        self.picker
    }

    /// The loaded capture `id` (or its partial preview while it loads), when in memory.
    pub fn capture(&self, id: CaptureId) -> Option<&Arc<Loaded>> {
        self.entries.capture(id)
    }

    /// Id of the capture shown in the timeline.
    pub fn shown(&self) -> Option<CaptureId> {
        self.entries.current.and_then(|i| self.entries.id_of(i))
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

    /// True while any job is running (the loop then ticks for the progress bar and the
    /// capture countdown).
    pub fn loading(&self) -> bool {
        self.entries.any_loading() || self.capture.running.is_some()
    }

    /// Rows of the timeline body.
    pub fn body_height(&self) -> usize {
        self.areas().lanes.height as usize
    }

    /// Window bounds for the open capture at the current width.
    pub fn bounds(&self) -> Bounds {
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

    /// The zero of the times shown for `l` (ps): its entry's kept zero (the earliest event of
    /// the file, kept across reloads, see [`super::loading::Entry::zero`]), else its earliest
    /// event. Never after any event of `l`, so no time shown is negative.
    pub fn time_zero(&self, l: &Loaded) -> Ps {
        let z = l.cap.time_zero();
        self.entries
            .iter()
            .find(|e| e.loaded().is_some_and(|x| std::ptr::eq(Arc::as_ptr(x), l)))
            .and_then(|e| e.zero)
            .map_or(z, |k| k.min(z))
    }

    /// Wall-clock epoch ns of [`State::time_zero`], when the file gives an absolute origin.
    pub fn zero_epoch_ns(&self, l: &Loaded) -> Option<i64> {
        l.cap
            .origin_epoch_ns
            .map(|o| o.saturating_add(self.time_zero(l).div_euclid(1000)))
    }

    /// Rebuilds the row list from the capture and the collapsed set.
    pub(super) fn rebuild_rows(&mut self) {
        let l = self.loaded().cloned();
        let h = self.body_height();
        self.rows.rebuild(l.as_deref(), h);
    }

    /// Sets the window, clamped to sane widths and positions.
    pub(super) fn set_window(&mut self, t0: Ps, t1: Ps) {
        let b = self.bounds();
        self.vp.set(t0, t1, b);
    }

    /// Shows the whole capture.
    pub(super) fn fit_all(&mut self) {
        let b = self.bounds();
        self.vp.fit_all(b);
    }

    /// Forgets what referred to the previous capture (hits, selection, mark, folds), rebuilds
    /// the rows and shows the whole capture.
    pub(super) fn reset_view(&mut self) {
        self.hits = None;
        self.selected = None;
        self.mark = Mark::None;
        self.rows.cursor = 0;
        self.rows.scroll = 0;
        self.rows.collapsed.clear();
        self.rebuild_rows();
        // The cursor starts on the first lane that has slices (not on a process header).
        if let Some(l) = self.loaded().cloned() {
            self.rows.cursor = self.rows.first_busy_lane(&l);
            self.clamp_scroll();
        }
        self.fit_all();
        self.apply_pending_window();
    }

    /// Shows the window asked for by [`Msg::OpenWindow`](super::msg::Msg) once its capture is
    /// the one shown and loaded (not a partial preview).
    pub(super) fn apply_pending_window(&mut self) {
        let Some((id, t0, t1)) = self.pending_window else {
            return;
        };
        if self.shown() == Some(id) && self.loaded().is_some() && !self.entries.is_preview() {
            self.pending_window = None;
            let b = self.bounds();
            self.vp.fit_range(t0, t1.max(t0 + 1), b);
        }
    }

    /// Keeps the row cursor visible.
    pub(super) fn clamp_scroll(&mut self) {
        let h = self.body_height();
        self.rows.clamp_scroll(h);
    }

    /// Adds a query to the search history (most recent last, at most 100).
    pub(super) fn remember_search(&mut self, q: String) {
        self.search_history.retain(|h| *h != q);
        self.search_history.push(q);
        if self.search_history.len() > 100 {
            self.search_history.remove(0);
        }
    }
}
