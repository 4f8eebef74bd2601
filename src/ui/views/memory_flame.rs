//! The bytes flame (`F` in the memory table): the allocations of one device live at its peak
//! grouped by call stack as a merged tree, drawn by the flame view's widget in bytes — outermost
//! frame at the root, frames as memory_viz writes them; allocations without a stack under their
//! enclosing op chain. `c` changes what is live: at the peak, at the cursor time the table opened
//! at, or (allocator snapshots) the blocks at snapshot time, the tree of
//! `_memory_viz memory`'s folded lines. The flame keys move, zoom, search, switch to the table
//! or sandwich; `Enter` makes the allocating ops under the selected node the hits on the
//! timeline; `Esc` returns to the memory table. See docs/memory.md.

use super::View;
use super::flame::{FlameMode, FlameState, FlameWidget};
use super::help::help_for;
use crate::analysis::flame::{ROOT, Sandwich, sandwich};
use crate::analysis::memory::stack_tree::{BytesTree, folded_tree, live_tree};
use crate::analysis::memory::summary::{live_at, unlisted_live};
use crate::formats::snapshot::{folded_memory, frame_kept};
use crate::index::Cell;
use crate::model::Ps;
use crate::model::memory::NO_OP;
use crate::ui::action::Action;
use crate::ui::hits::HitList;
use crate::ui::keymap::ViewKind;
use crate::ui::loader::Loaded;
use crate::ui::memory::mem_bytes;
use crate::ui::msg::Msg;
use crate::ui::ruler::format_time_res;
use crate::ui::state::{CaptureId, State};
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;

/// What the tree holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Live {
    /// The allocations live at the device's allocated peak.
    Peak,
    /// The allocations live at this time.
    At(Ps),
    /// An allocator snapshot's blocks at snapshot time (every device, as memory_viz draws).
    Blocks,
}

/// The bytes flame of one memory track.
#[derive(Debug)]
pub struct MemoryFlameView {
    /// The capture (or snapshot) shown.
    pub capture: CaptureId,
    /// Memory track (device / allocator).
    pub track: usize,
    /// What is live in the tree.
    pub live: Live,
    /// The cursor time it opened at (`c` comes back to it).
    pub at: Ps,
    /// Time resolution of the labels (the timeline's at opening).
    res: Ps,
    /// The tree and its names.
    pub tree: BytesTree,
    /// Cursor, zoom, metric, mode.
    pub state: FlameState,
    /// Sandwich of the selected name (sandwich mode).
    pub sandwich: Option<Sandwich>,
    /// Header label.
    pub scope: String,
    /// Typing the search text.
    pub typing: bool,
}

/// The tree of `live` on `track` of the loaded capture, and its header label (`None` when it
/// does not apply: no peak, no snapshot blocks).
fn build(l: &Loaded, track: usize, live: Live, res: Ps) -> Option<(BytesTree, String)> {
    let m = l.memory()?;
    let tr = m.model.tracks.get(track)?;
    let v = m.tracks.get(track)?;
    let zero = l.cap.time_zero();
    let at = |t: Ps| format_time_res(t - zero, res);
    let (t, what) = match live {
        Live::Peak => {
            let (t, _) = v.peak?;
            (t, format!("live at the peak, {}", at(t)))
        }
        Live::At(t) => (t, format!("live at {}", at(t))),
        Live::Blocks => {
            if m.segments.is_empty() {
                return None;
            }
            let tree = folded_tree(&folded_memory(&m.segments, &m.model.stacks));
            return Some((tree, "blocks at snapshot time, every device".into()));
        }
    };
    let ids = live_at(tr, &v.live, t);
    let tree = live_tree(&l.cap, &m.model, track, &ids, &|f| {
        frame_kept(&f.name, &f.file)
    });
    let gap = unlisted_live(tr, t, tree.bytes);
    let label = if gap > 0 {
        format!(
            "{} · {what} · {} listed of {} allocated; {} allocated before the capture began",
            text::sanitize(&tr.label()),
            mem_bytes(tree.bytes),
            mem_bytes(tree.bytes + gap),
            mem_bytes(gap)
        )
    } else {
        format!("{} · {what}", text::sanitize(&tr.label()))
    };
    Some((tree, label))
}

impl MemoryFlameView {
    /// The bytes flame of `track` live at its peak (`at`: the cursor time, for `c`); `Err` says
    /// why there is none.
    pub fn open(st: &State, track: usize, at: Ps) -> Result<MemoryFlameView, String> {
        let capture = st.shown().ok_or("no capture loaded")?;
        let l = st.capture(capture).ok_or("no capture loaded")?;
        let res = st.vp.width() / 100;
        let (live, (tree, scope)) = [Live::Peak, Live::At(at), Live::Blocks]
            .into_iter()
            .find_map(|k| build(l, track, k, res).map(|r| (k, r)))
            .ok_or("no allocations on this device")?;
        let mut state = FlameState {
            theme: Some(st.theme),
            ..FlameState::default()
        };
        state.selected = state.widest_child(&tree.tree, ROOT).unwrap_or(ROOT);
        Ok(MemoryFlameView {
            capture,
            track,
            live,
            at,
            res,
            tree,
            state,
            sandwich: None,
            scope,
            typing: false,
        })
    }

    /// `c`: the next of peak → cursor time → snapshot blocks that applies.
    fn next_live(&mut self, st: &State) {
        let Some(l) = st.capture(self.capture) else {
            return;
        };
        let order = [Live::Peak, Live::At(self.at), Live::Blocks];
        let i = order.iter().position(|&k| k == self.live).unwrap_or(0);
        let next = (1..=order.len())
            .map(|d| order[(i + d) % order.len()])
            .find_map(|k| build(l, self.track, k, self.res).map(|r| (k, r)));
        if let Some((live, (tree, scope))) = next {
            self.live = live;
            self.tree = tree;
            self.scope = scope;
            self.state.focus = ROOT;
            self.state.scroll = 0;
            self.state.selected = self
                .state
                .widest_child(&self.tree.tree, ROOT)
                .unwrap_or(ROOT);
        }
    }

    /// Rebuilds what depends on the cursor, zoom, metric or mode; `rows` table rows are shown.
    fn refresh(&mut self, rows: usize) {
        let t = &self.tree.tree;
        match self.state.mode {
            FlameMode::Table => {
                self.state.refresh_table(t, &self.tree.names);
                self.state.settle_table(rows);
                self.sandwich = None;
            }
            FlameMode::Sandwich => {
                self.sandwich = Some(sandwich(t, t.name(self.state.selected)));
            }
            FlameMode::Icicle => self.sandwich = None,
        }
    }

    /// Allocation ids under node `n` (its subtree's instances).
    fn allocations_under(&self, n: u32) -> Vec<u32> {
        let t = &self.tree.tree;
        let mut out = Vec::new();
        let mut stack = vec![n];
        while let Some(k) = stack.pop() {
            out.extend_from_slice(t.instances(k));
            stack.extend_from_slice(t.children(k));
        }
        out
    }

    /// `Enter`: the ops that allocated what is under the selected node become the hits, back on
    /// the timeline at the first.
    fn confirm(&self, st: &State) -> Vec<Msg> {
        let n = self.state.selected;
        if n == ROOT {
            return vec![Msg::Notice("select a node first".into())];
        }
        let Some(l) = st.capture(self.capture) else {
            return vec![Msg::Pop];
        };
        let Some(tr) = l.memory().and_then(|m| m.model.tracks.get(self.track)) else {
            return vec![Msg::Pop];
        };
        let ops: Vec<u32> = self
            .allocations_under(n)
            .into_iter()
            .filter_map(|i| tr.allocs.op.get(i as usize).copied())
            .filter(|&op| op != NO_OP)
            .collect();
        let name = text::fit(
            &text::fold(self.tree.tree.name_str(n, &self.tree.names)),
            40,
        )
        .into_owned();
        let hits = HitList::new(&l.cap, format!("allocating ops of “{name}”"), ops);
        match hits.ids.first() {
            Some(&first) => vec![Msg::Pop, Msg::Pop, Msg::SetHits(hits), Msg::JumpTo(first)],
            None => vec![Msg::Notice(format!(
                "{name}: no allocating op in the capture (allocator snapshots have none)"
            ))],
        }
    }
}

impl View for MemoryFlameView {
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
        let t = &self.tree.tree;
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
            Some(Action::CycleScope) => self.next_live(st),
            Some(Action::Search) => {
                self.typing = true;
                self.state.search.clear();
            }
            Some(a) if self.state.on_action(a, t) => {}
            _ => return Vec::new(),
        }
        self.refresh(FlameState::table_rows(st.size.1));
        Vec::new()
    }

    fn draw(&self, _st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        FlameWidget {
            tree: &self.tree.tree,
            strings: &self.tree.names,
            state: &self.state,
            sandwich: self.sandwich.as_ref(),
            scope: &self.scope,
            diff: None,
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
