//! The memory table (`M`): allocations of one device / allocator in a sortable table — live at
//! the cursor time, live at the end of the capture (possible leaks), or the largest started in
//! the marked range — with size, op, shape / dtype (when the event says), age and call stack.
//! `v` changes the scope, `T` the device; `Enter` jumps to the allocating op, or shows the call
//! stack of an allocation no op encloses (allocator snapshots). See docs/memory.md.

use super::View;
use super::table::{Column, Key, Row, Source, TableView, Target};
use crate::analysis::memory::summary::{largest_in, live_at, live_at_end, unlisted_live};
use crate::index::Cell;
use crate::model::memory::{EventSource, LIVE_AT_END, NO_OP, NO_STACK};
use crate::model::{ArgValue, Capture, Ps};
use crate::ui::action::Action;
use crate::ui::keymap::ViewKind;
use crate::ui::loader::Loaded;
use crate::ui::memory::{Memory, mem_bytes};
use crate::ui::msg::Msg;
use crate::ui::rows::Row as TimelineRow;
use crate::ui::ruler::{format_dur, format_time_res};
use crate::ui::state::{Mark, State};
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Clear, Widget};

/// Largest allocations listed for a marked range.
pub const RANGE_TOP: usize = 1000;

/// Which allocations the table lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Live at this time.
    LiveAt(Ps),
    /// Never freed in the capture.
    AtEnd,
    /// The largest started in `[a, b)`.
    Range(Ps, Ps),
    /// An allocator snapshot's segments at snapshot time (`views/segments.rs`).
    Segments,
}

/// Rebuilds the table on `v` (scope) and `T` (device).
#[derive(Debug)]
struct MemorySource {
    track: usize,
    scope: Scope,
    /// The cursor time the table opened at (the live scope comes back to it).
    at: Ps,
}

impl MemorySource {
    fn next_scope(&self, st: &State, has_segments: bool) -> Scope {
        let range = match st.mark {
            Mark::Range(a, b, _) => Some(Scope::Range(a, b)),
            _ => None,
        };
        let segments = has_segments.then_some(Scope::Segments);
        match self.scope {
            Scope::LiveAt(_) => Scope::AtEnd,
            Scope::AtEnd => range.or(segments).unwrap_or(Scope::LiveAt(self.at)),
            Scope::Range(..) => segments.unwrap_or(Scope::LiveAt(self.at)),
            Scope::Segments => Scope::LiveAt(self.at),
        }
    }
}

impl Source for MemorySource {
    fn on_action(&mut self, action: Action, st: &State) -> Option<Result<TableView, String>> {
        let l = st.loaded()?;
        let m = l.memory()?;
        match action {
            Action::GroupNext => self.scope = self.next_scope(st, !m.segments.is_empty()),
            Action::FilterTrack => self.track = (self.track + 1) % m.model.tracks.len().max(1),
            _ => return None,
        }
        Some(Ok(table(l, m, self.track, self.scope, st)))
    }

    fn on_action_msgs(&mut self, action: Action, st: &State) -> Option<Vec<Msg>> {
        if action != Action::OpenFlame {
            return None;
        }
        Some(
            match super::memory_flame::MemoryFlameView::open(st, self.track, self.at) {
                Ok(v) => vec![Msg::Push(Box::new(v))],
                Err(e) => vec![Msg::Notice(e)],
            },
        )
    }

    fn confirm(&self, row: &Row, st: &State) -> Option<Vec<Msg>> {
        if self.scope == Scope::Segments {
            let m = st.loaded()?.memory()?;
            let t = super::segments::blocks(m, row.cells.get(1)?, row.cells.first()?)?;
            return Some(vec![Msg::Push(Box::new(t))]);
        }
        let stack = row.cells.get(4).filter(|s| !s.is_empty())?;
        Some(vec![Msg::Push(Box::new(StackView {
            title: format!("{} · {}", row.cells[1], row.cells[0]),
            frames: stack.split(" ← ").map(str::to_string).collect(),
        }))])
    }
}

/// The memory track of the timeline row under the cursor, when it is a memory row.
pub fn memory_row_at_cursor(st: &State) -> Option<usize> {
    match st.rows.list.get(st.rows.cursor) {
        Some(TimelineRow::Memory { track, .. }) => Some(*track as usize),
        _ => None,
    }
}

/// The memory table of the open capture at the cursor time: the track of the memory row under
/// the cursor, else the one with the most bytes live then. `Err` says why there is none.
pub fn memory_view(st: &State) -> Result<TableView, String> {
    let l = st.loaded().ok_or("no capture loaded")?;
    let m = l.memory().ok_or("memory rows not computed yet")?;
    if m.is_empty() {
        return Err("no memory events (record with profile_memory=True)".into());
    }
    let at = st.cursor_time();
    let track = match memory_row_at_cursor(st) {
        Some(track) => track,
        None => (0..m.model.tracks.len())
            .max_by_key(|&i| (m.model.tracks[i].at(at).0, std::cmp::Reverse(i)))
            .unwrap_or(0),
    };
    let scope = Scope::LiveAt(at);
    let mut t = table(l, m, track, scope, st);
    t.source = Some(Box::new(MemorySource { track, scope, at }));
    Ok(t)
}

/// The table of allocations of `track` in `scope`, largest first.
pub fn table(l: &Loaded, m: &Memory, track: usize, scope: Scope, st: &State) -> TableView {
    if scope == Scope::Segments {
        return super::segments::table(m);
    }
    let cap = &l.cap;
    let zero = cap.time_zero();
    let res = st.vp.width() / 100;
    let Some(tr) = m.model.tracks.get(track) else {
        return TableView::new(ViewKind::Table, "memory".into(), Vec::new(), Vec::new());
    };
    let (ids, what, age_name) = match scope {
        Scope::LiveAt(t) => {
            let live = m
                .tracks
                .get(track)
                .map_or_else(Vec::new, |v| live_at(tr, &v.live, t));
            (
                live,
                format!("live at {}", format_time_res(t - zero, res)),
                "age",
            )
        }
        Scope::AtEnd => (
            live_at_end(tr),
            "live at end (never freed)".into(),
            "age at end",
        ),
        Scope::Range(a, b) => (
            largest_in(tr, a, b, RANGE_TOP),
            format!(
                "largest allocated in {} … {}",
                format_time_res(a - zero, res),
                format_time_res(b - zero, res)
            ),
            "lived",
        ),
        // Drawn by `segments::table` above.
        Scope::Segments => (Vec::new(), String::new(), "age"),
    };
    let total: i64 = ids.iter().map(|&i| tr.allocs.bytes[i as usize]).sum();
    let end = cap.span.1;
    let a = &tr.allocs;
    let (mut from_event, mut from_op) = (false, false);
    let rows: Vec<Row> = ids
        .iter()
        .map(|&id| {
            let i = id as usize;
            let age = match scope {
                Scope::LiveAt(t) => Some(t - a.start[i]),
                Scope::AtEnd => Some(end.max(a.start[i]) - a.start[i]),
                Scope::Range(..) => (a.end[i] != LIVE_AT_END).then(|| a.end[i] - a.start[i]),
                Scope::Segments => None,
            };
            let stack = m.stack_text(a.stack[i]);
            let op = a.op[i];
            let name = if op != NO_OP && (op as usize) < cap.slices.len() {
                text::fold(cap.slice_name(op)).into_owned()
            } else if a.stack[i] != NO_STACK {
                crate::formats::snapshot::user_frame(&m.model.stacks, a.stack[i])
                    .unwrap_or_default()
            } else {
                "(no enclosing op)".into()
            };
            let mut detail = detail(cap, m.model.source, a.event[i]);
            if detail.is_empty() && op != NO_OP {
                detail = op_inputs(cap, op);
                from_op |= !detail.is_empty();
            } else {
                from_event |= !detail.is_empty();
            }
            Row {
                cells: vec![
                    name.clone(),
                    mem_bytes(a.bytes[i]),
                    age.map_or_else(|| "to end".into(), format_dur),
                    detail.clone(),
                    stack.clone(),
                ],
                keys: vec![
                    Key::Text(name),
                    Key::Num(a.bytes[i] as f64),
                    Key::Num(age.map_or(f64::MAX, |x| x as f64)),
                    Key::Text(detail),
                    Key::Text(stack),
                ],
                target: if op != NO_OP {
                    Target::Slice(op)
                } else {
                    Target::None
                },
                bar: None,
            }
        })
        .collect();
    let col = |name, width, right| Column { name, width, right };
    let n = rows.len();
    // Live at a time: the allocator's counter also holds memory allocated before the capture
    // began, which no event of the capture lists.
    let gap = match scope {
        Scope::LiveAt(t) => unlisted_live(tr, t, total),
        _ => 0,
    };
    let gap_text = if gap > 0 {
        format!(
            " of {} allocated; {} allocated before the capture began (not listed)",
            mem_bytes(total + gap),
            mem_bytes(gap)
        )
    } else {
        String::new()
    };
    let detail_name = match (from_event, from_op) {
        (false, true) => "op inputs · dtype",
        (true, true) => "shape · dtype / op inputs",
        _ => "shape · dtype",
    };
    let mut t = TableView::new(
        ViewKind::Table,
        format!(
            "memory · {} · {what}: {n} allocations, {}{gap_text}",
            tr.label(),
            mem_bytes(total)
        ),
        vec![
            col("op (allocating)", 0, false),
            col("bytes", 10, true),
            col(age_name, 10, true),
            col(detail_name, 14, false),
            col("call stack", (st.size.0 / 3).clamp(22, 70), false),
        ],
        rows,
    );
    let kb = &st.keymap;
    let key = |a| {
        kb.keys(ViewKind::Table, a)
            .first()
            .map_or(String::new(), |k| k.to_string())
    };
    t.note = format!(
        "{} scope · {} device ({}/{})",
        key(Action::GroupNext),
        key(Action::FilterTrack),
        track + 1,
        m.model.tracks.len()
    );
    if matches!(scope, Scope::Range(..)) && n == RANGE_TOP {
        t.note = format!("the {RANGE_TOP} largest · {}", t.note);
    }
    t
}

/// Shape and dtype of an allocation from its event's args (XPlane `shape`, `data_type`), or "".
fn detail(cap: &Capture, source: EventSource, event: u32) -> String {
    let args = match source {
        EventSource::Slices => cap.slices.args.get(event as usize),
        EventSource::Instants => cap.instants.args.get(event as usize),
        EventSource::SnapshotTrace => None,
    };
    let Some(&args) = args else {
        return String::new();
    };
    let s = &cap.strings;
    let (mut shape, mut dtype) = (String::new(), String::new());
    for (k, v) in cap.args.iter(args, s) {
        let text = || match v {
            ArgValue::Str(id) | ArgValue::Json(id) => s.get(id).to_string(),
            ArgValue::I64(x) => x.to_string(),
            ArgValue::U64(x) => x.to_string(),
            _ => String::new(),
        };
        match s.get(k) {
            "shape" => shape = text(),
            "data_type" | "dtype" => dtype = text(),
            _ => {}
        }
    }
    match (shape.is_empty(), dtype.is_empty()) {
        (false, false) => format!("{shape} · {dtype}"),
        (false, true) => shape,
        _ => dtype,
    }
}

/// The tensor inputs of the allocating op `op` as the trace records them (`record_shapes`:
/// Kineto `Input Dims` and `Input type`), `[16, 10] float, [16] long int`; "" without them.
/// Scalars and non-tensor arguments are left out.
pub fn op_inputs(cap: &Capture, op: u32) -> String {
    let Some(&args) = cap.slices.args.get(op as usize) else {
        return String::new();
    };
    let s = &cap.strings;
    let (mut dims, mut types) = (None, None);
    for (k, v) in cap.args.iter(args, s) {
        if let ArgValue::Json(id) = v {
            match s.get(k) {
                "Input Dims" => {
                    dims = serde_json::from_str::<Vec<serde_json::Value>>(s.get(id)).ok()
                }
                "Input type" => types = serde_json::from_str::<Vec<String>>(s.get(id)).ok(),
                _ => {}
            }
        }
    }
    let (Some(dims), Some(types)) = (dims, types) else {
        return String::new();
    };
    let parts: Vec<String> = dims
        .iter()
        .zip(&types)
        .filter_map(|(d, ty)| {
            let shape = d.as_array()?;
            let tensor = !shape.is_empty() || !(ty.is_empty() || ty.starts_with("Scalar"));
            if !tensor || ty.is_empty() {
                return None;
            }
            let sizes: Vec<String> = shape.iter().map(ToString::to_string).collect();
            Some(format!("[{}] {ty}", sizes.join(", ")))
        })
        .collect();
    parts.join(", ")
}

/// A popup with one allocation's call stack, one frame per line (innermost first); any key
/// closes it.
#[derive(Debug)]
pub struct StackView {
    /// Size and op (or call site).
    pub title: String,
    /// Frames, innermost first.
    pub frames: Vec<String>,
}

impl View for StackView {
    fn kind(&self) -> ViewKind {
        ViewKind::Help
    }

    fn is_popup(&self) -> bool {
        true
    }

    fn on_key(&mut self, _key: &KeyEvent, action: Option<Action>, _st: &State) -> Vec<Msg> {
        match action {
            Some(Action::Quit) => vec![Msg::Pop, Msg::Quit],
            _ => vec![Msg::Pop],
        }
    }

    fn draw(&self, _st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        let h = (self.frames.len() as u16 + 2).min(area.height);
        let w = 76.min(area.width);
        if h < 3 || w < 10 {
            return;
        }
        let r = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        );
        Clear.render(r, buf);
        let title = format!(" call stack · {} ", text::sanitize(&self.title));
        let block = Block::default()
            .borders(Borders::ALL)
            .title(text::fit(&title, usize::from(w - 2)).into_owned());
        let inner = block.inner(r);
        block.render(r, buf);
        let iw = usize::from(inner.width);
        let room = usize::from(inner.height);
        let more = self.frames.len() > room;
        for (i, f) in self.frames.iter().take(room).enumerate() {
            let line = if more && i + 1 == room {
                format!("… {} more frames", self.frames.len() - i)
            } else {
                text::sanitize(f).into_owned()
            };
            let style = if i == 0 {
                Style::default().add_modifier(Modifier::BOLD)
            } else {
                Style::default()
            };
            buf.set_stringn(
                inner.x + 1,
                inner.y + i as u16,
                text::fit(&line, iw - 1),
                iw - 1,
                style,
            );
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The H200 capture cut (tests/fixtures/gpu/PROVENANCE.md): `record_shapes` wrote each op's
    /// `Input Dims` and `Input type`.
    #[test]
    fn op_inputs_from_record_shapes() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/gpu/h200_torch_cut.pt.trace.json.gz");
        let c = crate::formats::load(
            &p,
            crate::model::SourceInfo::default(),
            &crate::formats::Progress::default(),
        )
        .expect("load fixture");
        let find = |name: &str| {
            (0..c.slices.len() as u32)
                .find(|&i| c.slice_name(i) == name)
                .expect("op in the capture")
        };
        // Input Dims [[], [16, 10], [16], [], [], [], []], Input type [float, float, long int, "",
        // Scalar, Scalar, float]: the two Scalars and the untyped argument are left out.
        assert_eq!(
            op_inputs(&c, find("aten::nll_loss_backward")),
            "[] float, [16, 10] float, [16] long int, [] float"
        );
        // A step annotation has no inputs.
        assert_eq!(op_inputs(&c, find("ProfilerStep#3")), "");
    }
}
