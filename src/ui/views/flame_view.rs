//! The flame view (`F` on the timeline): the merged call tree of the shown capture's scope — the
//! marked range when one is marked, else the whole capture — with device time attributed to the
//! launching stack. It owns its tree and the widget state of [`super::flame`] (cursor, zoom,
//! metric, sandwich / table) and draws from `&State` plus that. `Enter` makes the selected node's
//! instances the hit list and returns to the timeline at the first, so `n` / `N` walk them.

use super::View;
use super::flame::{FlameMode, FlameState, FlameWidget};
use super::help::help_for;
use super::table::scope;
use crate::analysis::flame::{DeviceLinks, FlameTree, ROOT, Sandwich, Scope, build, sandwich};
use crate::index::Cell;
use crate::ui::action::Action;
use crate::ui::hits::HitList;
use crate::ui::keymap::ViewKind;
use crate::ui::msg::Msg;
use crate::ui::state::{CaptureId, State};
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
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
    /// Typing the search text (`/` until Enter / Esc).
    pub typing: bool,
}

impl FlameView {
    /// The flame view of the shown capture's scope (`None` when nothing is loaded).
    pub fn open(st: &State) -> Option<FlameView> {
        let capture = st.shown()?;
        let l = st.capture(capture)?;
        let (range, label) = scope(st);
        let sc = match range {
            Some((a, b)) => Scope::range(a, b),
            None => Scope::all(),
        };
        let links = DeviceLinks::of(&l.cap);
        let tree = build(&l.cap, &sc, (!links.is_empty()).then_some(&links));
        let mut state = FlameState {
            theme: Some(st.theme),
            ..FlameState::default()
        };
        // Start on the widest root child, so Enter / zoom act at once.
        state.selected = state.widest_child(&tree, ROOT).unwrap_or(ROOT);
        Some(FlameView {
            capture,
            tree,
            state,
            sandwich: None,
            scope: label,
            typing: false,
        })
    }

    /// Table rows that fit on screen.
    fn table_rows(st: &State) -> usize {
        usize::from(st.size.1.saturating_sub(3)).max(1)
    }

    fn move_table(&mut self, step: i64, st: &State) {
        let fs = &mut self.state;
        if fs.table.is_empty() {
            return;
        }
        let cur = fs.table.iter().position(|&n| n == fs.selected);
        let i = match cur {
            Some(i) => (i as i64 + step).clamp(0, fs.table.len() as i64 - 1) as usize,
            None => 0,
        };
        fs.selected = fs.table[i];
        let rows = Self::table_rows(st);
        if i < fs.scroll {
            fs.scroll = i;
        } else if i >= fs.scroll + rows {
            fs.scroll = i + 1 - rows;
        }
    }

    /// Rebuilds what depends on the cursor, zoom, metric or mode.
    fn refresh(&mut self, st: &State) {
        let Some(l) = st.capture(self.capture) else {
            return;
        };
        match self.state.mode {
            FlameMode::Table => {
                self.state.refresh_table(&self.tree, &l.cap.strings);
                let fs = &mut self.state;
                if !fs.table.contains(&fs.selected) {
                    fs.selected = fs.table.first().copied().unwrap_or(fs.focus);
                }
                let i = fs.table.iter().position(|&n| n == fs.selected).unwrap_or(0);
                let rows = Self::table_rows(st);
                fs.scroll = fs.scroll.min(i).max((i + 1).saturating_sub(rows));
                self.sandwich = None;
            }
            FlameMode::Sandwich => {
                let name = self.tree.name(self.state.selected);
                self.sandwich = Some(sandwich(&self.tree, name));
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
        let name = text::fit(&text::fold(self.tree.name_str(n, &l.cap.strings)), 40).into_owned();
        let hits = HitList::new(
            &l.cap,
            format!("flame “{name}”"),
            self.tree.instances(n).to_vec(),
        );
        match hits.ids.first() {
            Some(&first) => vec![Msg::Pop, Msg::SetHits(hits), Msg::JumpTo(first)],
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
        if self.typing && !key.modifiers.contains(KeyModifiers::CONTROL) {
            match key.code {
                KeyCode::Char(c) if !c.is_control() => self.state.search.push(c),
                KeyCode::Backspace => {
                    self.state.search.pop();
                }
                KeyCode::Enter | KeyCode::Esc => self.typing = false,
                _ => {}
            }
            return Vec::new();
        }
        let table = self.state.mode == FlameMode::Table;
        let t = &self.tree;
        match action {
            Some(Action::Help) => return vec![help_for(ViewKind::Flame)],
            Some(Action::Quit) => return vec![Msg::Quit],
            Some(Action::Back) => return vec![Msg::Pop],
            Some(Action::Confirm) => return self.confirm(st),
            Some(Action::Down) if table => self.move_table(1, st),
            Some(Action::Up) if table => self.move_table(-1, st),
            Some(Action::Down) => self.state.down(t),
            Some(Action::Up) => self.state.up(t),
            Some(Action::PrevSlice) => self.state.sideways(t, -1),
            Some(Action::NextSlice) => self.state.sideways(t, 1),
            Some(Action::ZoomIn) => {
                self.state.zoom_in();
                self.state.scroll = 0;
            }
            Some(Action::ZoomOut) => {
                self.state.zoom_out(t);
                self.state.scroll = 0;
            }
            Some(Action::CycleMetric) => self.state.cycle_metric(),
            Some(Action::Search) => {
                self.typing = true;
                self.state.search.clear();
            }
            Some(Action::SortNext) if table => self.state.sort = self.state.sort.next(),
            Some(Action::ToggleSandwich) => {
                self.state.mode = if self.state.mode == FlameMode::Sandwich {
                    FlameMode::Icicle
                } else {
                    FlameMode::Sandwich
                };
            }
            Some(Action::ToggleTable) => {
                self.state.mode = if table {
                    FlameMode::Icicle
                } else {
                    FlameMode::Table
                };
                self.state.scroll = 0;
            }
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
