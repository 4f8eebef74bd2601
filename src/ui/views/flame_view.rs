//! The flame view (`F` on the timeline): the merged call tree of the shown capture's scope — the
//! marked range when one is marked, else the whole capture; `c` cycles through the step, process
//! and track at the cursor and the hits' ancestors — with device time attributed to the
//! launching stack. A folded-stacks file opens straight into it. It owns its tree and the widget state of [`super::flame`] (cursor, zoom,
//! metric, sandwich / table) and draws from `&State` plus that. `Enter` makes the selected node's
//! instances the hit list and returns to the timeline at the first, so `n` / `N` walk them.

use super::View;
use super::flame::{FlameMode, FlameState, FlameWidget};
use super::help::help_for;
use super::table::scope;
use crate::analysis::diff::steps::find_steps;
use crate::analysis::flame::{
    DeviceLinks, FlameTree, ROOT, Sandwich, Scope, TreeDiff, build, build_ancestors, sandwich,
};
use crate::analysis::stats::is_profiler_track;
use crate::analysis::steps::StepSource;
use crate::index::Cell;
use crate::model::Capture;
use crate::ui::action::Action;
use crate::ui::hits::HitList;
use crate::ui::keymap::ViewKind;
use crate::ui::loader::Loaded;
use crate::ui::msg::Msg;
use crate::ui::ruler::format_dur;
use crate::ui::state::{CaptureId, State};
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;

/// The flame view of one capture's scope.
#[derive(Debug)]
pub struct FlameView {
    /// The capture the tree was built from.
    pub capture: CaptureId,
    /// The merged tree of the scope.
    pub tree: FlameTree,
    /// Cursor, zoom, metric, mode, table order.
    pub state: FlameState,
    /// Sandwich of the selected name (kept while in sandwich mode).
    pub sandwich: Option<Sandwich>,
    /// What the tree covers, for the header.
    pub scope: String,
    /// Which kind of scope that is (`c` moves to the next one that applies).
    pub scope_kind: ScopeKind,
    /// Typing the search text (`/` until Enter / Esc).
    pub typing: bool,
    /// The diff against the baseline A when this capture is the B of the last diff opened
    /// (whole-capture scope only).
    pub diff: Option<TreeDiff>,
}

/// The kinds of scope the view cycles through, in `c` order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeKind {
    /// Every slice of the capture.
    Whole,
    /// The marked range.
    Range,
    /// The step at the cursor time.
    Step,
    /// The process of the cursor row.
    Process,
    /// The track of the cursor row.
    Track,
    /// The hits and their ancestors.
    Hits,
}

impl ScopeKind {
    const ORDER: [ScopeKind; 6] = [
        ScopeKind::Whole,
        ScopeKind::Range,
        ScopeKind::Step,
        ScopeKind::Process,
        ScopeKind::Track,
        ScopeKind::Hits,
    ];
}

/// A scope resolved against the state: what to build and its header label.
enum Resolved {
    Scope(Scope, String),
    Hits(Vec<u32>, String),
}

/// `kind` for the shown capture and the state's mark, cursor and hits (`None`: it does not
/// apply now, e.g. no mark, no steps, a cursor on no track, no hits).
fn resolve(kind: ScopeKind, l: &Loaded, st: &State) -> Option<Resolved> {
    let c = &l.cap;
    let row = st.rows.list.get(st.rows.cursor).copied();
    let track_name = |t: u32| crate::ui::text::sanitize(&c.track_name(t)).into_owned();
    match kind {
        ScopeKind::Whole => {
            let (sc, left_out) = whole_scope(c);
            let label = if left_out {
                "whole capture (profiler spans left out)"
            } else {
                "whole capture"
            };
            Some(Resolved::Scope(sc, label.into()))
        }
        ScopeKind::Range => {
            let (r, label) = scope(st);
            let (a, b) = r?;
            Some(Resolved::Scope(Scope::range(a, b), label))
        }
        ScopeKind::Step => {
            // The steps the loader found (the Steps row's).
            let steps = &l.steps;
            if steps.source == StepSource::Whole {
                return None;
            }
            let s = steps.steps.get(steps.at(st.cursor_time())?)?;
            Some(Resolved::Scope(
                Scope::range(s.start, s.end),
                format!("step {} ({})", s.number, format_dur(s.dur())),
            ))
        }
        ScopeKind::Process => {
            let p = match row? {
                crate::ui::rows::Row::Process(p) => p,
                r => c.tracks.get(r.track()? as usize)?.process,
            };
            let name = crate::ui::text::sanitize(&c.process_title(p)).into_owned();
            Some(Resolved::Scope(
                Scope::process(c, p),
                format!("process {name}"),
            ))
        }
        ScopeKind::Track => {
            let t = row?.track()?;
            Some(Resolved::Scope(
                Scope::tracks(vec![t]),
                format!("track {}", track_name(t)),
            ))
        }
        ScopeKind::Hits => {
            let h = st.hits.as_ref().filter(|h| !h.ids.is_empty())?;
            Some(Resolved::Hits(
                h.ids.clone(),
                format!("{} hits of {} and their callers", h.ids.len(), h.label),
            ))
        }
    }
}

/// The whole capture without the profiler's own spans (Kineto's `Spans` / `Traces` processes,
/// left out as the statistics leave them out: one `PyTorch Profiler (0)` span would otherwise
/// be the widest root); true when some were left out.
fn whole_scope(c: &Capture) -> (Scope, bool) {
    let n = c.tracks.len() as u32;
    let keep: Vec<u32> = (0..n).filter(|&t| !is_profiler_track(c, t)).collect();
    if keep.len() as u32 == n {
        (Scope::all(), false)
    } else {
        (Scope::tracks(keep), true)
    }
}

/// The diff of `tree` (B's whole-capture tree) against the baseline A of the last diff opened,
/// when `capture` is its B and A is loaded.
fn diff_against_baseline(st: &State, capture: CaptureId, tree: &FlameTree) -> Option<TreeDiff> {
    let (pa, pb) = st.diff.active.as_ref()?;
    let e = &st.entries;
    let b = st.capture(capture)?;
    if b.cap.source.path != *pb {
        return None;
    }
    let a = e
        .position(pa)
        .and_then(|i| e.id_of(i))
        .and_then(|id| st.capture(id))?;
    let links = DeviceLinks::of(&a.cap);
    let at = build(
        &a.cap,
        &whole_scope(&a.cap).0,
        (!links.is_empty()).then_some(&links),
    );
    let steps = (find_steps(&a.cap).len(), find_steps(&b.cap).len());
    Some(TreeDiff::new(
        at,
        &a.cap.strings,
        tree,
        &b.cap.strings,
        steps,
    ))
}

/// The tree of a resolved scope.
fn build_resolved(c: &Capture, r: Resolved) -> (FlameTree, String) {
    let links = DeviceLinks::of(c);
    let links = (!links.is_empty()).then_some(&links);
    match r {
        Resolved::Scope(sc, label) => (build(c, &sc, links), label),
        Resolved::Hits(ids, label) => (build_ancestors(c, &ids, links), label),
    }
}

impl FlameView {
    /// The flame view of the shown capture's scope (`None` when nothing is loaded): the marked
    /// range when there is one, else the whole capture.
    pub fn open(st: &State) -> Option<FlameView> {
        let capture = st.shown()?;
        let l = st.capture(capture)?;
        let (kind, r) = [ScopeKind::Range, ScopeKind::Whole]
            .into_iter()
            .find_map(|k| resolve(k, l, st).map(|r| (k, r)))?;
        let (tree, label) = build_resolved(&l.cap, r);
        let mut state = FlameState {
            theme: Some(st.theme),
            ..FlameState::default()
        };
        // Start on the widest root child, so Enter / zoom act at once.
        state.selected = state.widest_child(&tree, ROOT).unwrap_or(ROOT);
        let diff = (kind == ScopeKind::Whole)
            .then(|| diff_against_baseline(st, capture, &tree))
            .flatten();
        Some(FlameView {
            capture,
            tree,
            state,
            sandwich: None,
            scope: label,
            scope_kind: kind,
            typing: false,
            diff,
        })
    }

    /// `c`: the next scope kind after the current one that applies now; the tree is rebuilt and
    /// zoom and cursor start over (metric and mode stay).
    fn next_scope(&mut self, st: &State) -> Vec<Msg> {
        let Some(l) = st.capture(self.capture) else {
            return Vec::new();
        };
        let at = ScopeKind::ORDER
            .iter()
            .position(|&k| k == self.scope_kind)
            .unwrap_or(0);
        let n = ScopeKind::ORDER.len();
        let next = (1..=n)
            .map(|i| ScopeKind::ORDER[(at + i) % n])
            .find_map(|k| resolve(k, l, st).map(|r| (k, r)));
        let Some((kind, r)) = next else {
            return Vec::new();
        };
        let (tree, label) = build_resolved(&l.cap, r);
        self.diff = (kind == ScopeKind::Whole)
            .then(|| diff_against_baseline(st, self.capture, &tree))
            .flatten();
        self.tree = tree;
        self.scope = label;
        self.scope_kind = kind;
        self.state.focus = ROOT;
        self.state.scroll = 0;
        self.state.selected = self.state.widest_child(&self.tree, ROOT).unwrap_or(ROOT);
        self.refresh(st);
        Vec::new()
    }

    /// The keys every flame view shares, on the diff tree when a diff is shown.
    fn on_shared(&mut self, a: Action) -> bool {
        match &self.diff {
            Some(d) => self.state.on_action(a, &d.over(&self.tree)),
            None => self.state.on_action(a, &self.tree),
        }
    }

    /// Rebuilds what depends on the cursor, zoom, metric or mode.
    fn refresh(&mut self, st: &State) {
        let Some(l) = st.capture(self.capture) else {
            return;
        };
        match self.state.mode {
            FlameMode::Table => {
                match &self.diff {
                    Some(d) => self.state.refresh_diff_table(&self.tree, d, &l.cap.strings),
                    None => self.state.refresh_table(&self.tree, &l.cap.strings),
                }
                self.state.settle_table(FlameState::table_rows(st.size.1));
                self.sandwich = None;
            }
            FlameMode::Sandwich => {
                let n = self.state.selected;
                // A path gone in B: its name's occurrences in B, if B has the name at all.
                let name = match &self.diff {
                    Some(d) if d.is_gone(n) => {
                        l.cap
                            .strings
                            .lookup(d.name_str(&self.tree, n, &l.cap.strings))
                    }
                    _ => Some(self.tree.name(n)),
                };
                self.sandwich = name.map(|name| sandwich(&self.tree, name));
            }
            FlameMode::Icicle => self.sandwich = None,
        }
    }

    /// `Enter`: the selected node's instances become the hits, back to the timeline.
    fn confirm(&self, st: &State) -> Vec<Msg> {
        let Some(l) = st.capture(self.capture) else {
            return vec![Msg::Pop];
        };
        let n = self.state.selected;
        if n == ROOT {
            return vec![Msg::Notice("select a node first".into())];
        }
        if let Some(d) = self.diff.as_ref().filter(|d| d.is_gone(n)) {
            let name =
                text::fit(&text::fold(d.name_str(&self.tree, n, &l.cap.strings)), 40).into_owned();
            return vec![Msg::Notice(format!(
                "“{name}” is gone in B: its instances are in A, not on B's timeline"
            ))];
        }
        let name = text::fit(&text::fold(self.tree.name_str(n, &l.cap.strings)), 40).into_owned();
        let hits = HitList::new(
            &l.cap,
            format!("flame “{name}”"),
            self.tree.instances(n).to_vec(),
        );
        // A folded-stacks capture opens in this view (no timeline below): the timeline of its
        // laid-out stacks goes on top instead, and Esc there comes back here.
        let back = if l.cap.format == Some(crate::model::Format::Folded) {
            Msg::ShowTimeline
        } else {
            Msg::Pop
        };
        match hits.ids.first() {
            Some(&first) => vec![back, Msg::SetHits(hits), Msg::JumpTo(first)],
            None => vec![Msg::Notice(format!("{name}: no timed instance"))],
        }
    }
}

impl View for FlameView {
    fn kind(&self) -> ViewKind {
        ViewKind::Flame
    }

    fn captures(&self) -> Vec<CaptureId> {
        vec![self.capture]
    }

    fn on_key(&mut self, key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg> {
        if self.state.type_search(&mut self.typing, key) {
            return Vec::new();
        }
        let table = self.state.mode == FlameMode::Table;
        match action {
            Some(Action::Help) => return vec![help_for(ViewKind::Flame)],
            Some(Action::Quit) => return vec![Msg::Quit],
            Some(Action::Back) => return vec![Msg::Pop],
            Some(Action::Confirm) => return self.confirm(st),
            Some(Action::Down) if table => {
                self.state.move_table(1, FlameState::table_rows(st.size.1))
            }
            Some(Action::Up) if table => {
                self.state.move_table(-1, FlameState::table_rows(st.size.1))
            }
            Some(Action::CycleScope) => return self.next_scope(st),
            Some(Action::Search) => {
                self.typing = true;
                self.state.search.clear();
            }
            // With a diff, moves and zoom walk the diff tree (the paths gone in B included).
            Some(a) if self.on_shared(a) => {}
            _ => return Vec::new(),
        }
        self.refresh(st);
        Vec::new()
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        let Some(l) = st.capture(self.capture) else {
            return;
        };
        FlameWidget {
            tree: &self.tree,
            strings: &l.cap.strings,
            state: &self.state,
            sandwich: self.sandwich.as_ref(),
            scope: &self.scope,
            diff: self.diff.as_ref(),
        }
        .draw(buf, area);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
