//! The left gutter: process rows with fold markers, track names, lane numbers; the row cursor.

use super::loader::Loaded;
use super::rows::Row;
use super::state::State;
use super::text;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

/// Draws the gutter for the visible rows.
pub fn draw(st: &State, l: &Loaded, buf: &mut Buffer, area: Rect) {
    let w = area.width as usize;
    if w == 0 {
        return;
    }
    let cap = &l.cap;
    for (dy, (i, row)) in st
        .rows
        .iter()
        .enumerate()
        .skip(st.rows.scroll)
        .take(area.height as usize)
        .enumerate()
    {
        let y = area.y + dy as u16;
        let mut style = Style::default();
        let line = match *row {
            Row::Process(p) => {
                style = style.add_modifier(Modifier::BOLD);
                let mut name = cap.process_name(p);
                if name.trim().is_empty() {
                    name = cap.process_stable_name(p);
                }
                if name.trim().is_empty() {
                    name = "(unnamed process)".into();
                }
                name = process_label(&name, cap.strings.get(cap.processes[p as usize].label));
                let folded = st.rows.collapsed.contains(&p);
                let n = cap.tracks.iter().filter(|t| t.process == p).count();
                if folded {
                    format!("▸ {} ({n})", text::sanitize(&name))
                } else {
                    format!("▾ {}", text::sanitize(&name))
                }
            }
            Row::Lane { track, lane } => {
                let lanes = l.index.lane_count(track);
                let num = if lanes > 1 {
                    lane.to_string()
                } else {
                    String::new()
                };
                let name = if lane == 0 {
                    let n = cap.track_name(track);
                    if n.trim().is_empty() {
                        "(unnamed track)".to_string()
                    } else {
                        text::sanitize(&n).into_owned()
                    }
                } else {
                    String::new()
                };
                let room = w.saturating_sub(num.len() + 2);
                let shown = text::fit(&name, room);
                let pad = w.saturating_sub(1 + text::width(&shown) + num.len());
                format!(" {shown}{}{num}", " ".repeat(pad))
            }
            Row::Counter(track) => {
                format!(" {} ~", text::sanitize(&cap.track_name(track)))
            }
            Row::Derived(i) => l
                .derived
                .get(i as usize)
                .map_or(String::new(), |d| format!(" {} ~", d.name)),
            Row::Memory { track, reserved } => {
                l.memory()
                    .and_then(|m| m.track(track))
                    .map_or(String::new(), |t| {
                        let what = if reserved { "reserved" } else { "alloc" };
                        // The device alone: the allocator is in the status line.
                        format!(" {} {what} ~", text::sanitize(&t.device))
                    })
            }
        };
        if i == st.rows.cursor {
            style = style.add_modifier(Modifier::REVERSED);
            buf.set_stringn(area.x, y, " ".repeat(w), w, style);
        }
        let shown = text::fit(&line, w);
        buf.set_stringn(area.x, y, &*shown, w, style);
    }
}

/// A process row's name with its label (`process_labels`, device): the label leads, since
/// Kineto gives every GPU the host process name (`GPU 0 · python3.10`, `CPU · python3.10`) and a
/// narrow gutter must still tell them apart.
pub fn process_label(name: &str, label: &str) -> String {
    let label = label.trim();
    if label.is_empty() || label == name.trim() {
        name.to_string()
    } else {
        format!("{label} · {name}")
    }
}
