//! The left gutter: process rows with fold markers, track names, lane numbers; the row cursor.

use super::loader::Loaded;
use super::rows::Row;
use super::state::State;
use super::text;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

/// Draws the gutter for the visible rows. Labels that do not fit are shortened in the middle
/// keeping what tells the rows apart ([`crate::text::fit_apart`] over the names of all the
/// tracks of the processes on screen); a process row leads with what tells
/// devices apart ([`crate::model::Capture::process_title`]: `GPU 0 (python3)`).
pub fn draw(st: &State, l: &Loaded, buf: &mut Buffer, area: Rect) {
    let w = area.width as usize;
    if w == 0 {
        return;
    }
    let cap = &l.cap;
    let visible = || {
        st.rows
            .iter()
            .enumerate()
            .skip(st.rows.scroll)
            .take(area.height as usize)
    };
    // Track labels of the processes on screen, fitted together per process.
    let mut procs: Vec<u32> = visible()
        .filter_map(|(_, r)| match *r {
            Row::Lane { track, .. } | Row::Counter(track) => {
                cap.tracks.get(track as usize).map(|t| t.process)
            }
            _ => None,
        })
        .collect();
    procs.sort_unstable();
    procs.dedup();
    let labels = track_labels(l, &procs, w);
    // Derived rows (GPU queue depth, `queue stream 7`) likewise, all together (a few per GPU).
    let dnames: Vec<String> = l
        .derived
        .iter()
        .map(|d| text::sanitize(d.name.trim()).into_owned())
        .collect();
    let drefs: Vec<&str> = dnames.iter().map(String::as_str).collect();
    let mut dlabels: Vec<(u32, String)> = (0..l.derived.len() as u32)
        .zip(crate::text::fit_apart(&drefs, w.saturating_sub(3)))
        .collect();
    dlabels.sort_unstable_by_key(|(i, _)| *i);
    let label_of = |t: u32| {
        labels
            .binary_search_by_key(&t, |(tt, _)| *tt)
            .ok()
            .map_or("", |i| labels[i].1.as_str())
    };
    for (dy, (i, row)) in visible().enumerate() {
        let y = area.y + dy as u16;
        let mut style = Style::default();
        let line = match *row {
            Row::Process(p) => {
                style = style.add_modifier(Modifier::BOLD);
                let mut name = cap.process_title(p);
                if name.trim().is_empty() {
                    name = "(unnamed process)".into();
                }
                let name = text::sanitize(&name);
                let folded = st.rows.collapsed.contains(&p);
                let n = cap.tracks.iter().filter(|t| t.process == p).count();
                let (mark, tail) = if folded {
                    ("▸", format!(" ({n})"))
                } else {
                    ("▾", String::new())
                };
                let room = w.saturating_sub(2 + text::width(&tail));
                let label = cap
                    .processes
                    .get(p as usize)
                    .map_or("", |pr| cap.strings.get(pr.label).trim());
                format!("{mark} {}{tail}", fit_title(&name, label, room))
            }
            Row::Lane { track, lane } => {
                let lanes = l.index.lane_count(track);
                let num = if lanes > 1 {
                    lane.to_string()
                } else {
                    String::new()
                };
                let shown = if lane == 0 { label_of(track) } else { "" };
                let pad = w.saturating_sub(1 + text::width(shown) + num.len());
                format!(" {shown}{}{num}", " ".repeat(pad))
            }
            Row::Counter(track) => format!(" {} ~", label_of(track)),
            Row::Steps => {
                style = style.add_modifier(Modifier::BOLD);
                " Steps".to_string()
            }
            Row::Graphs(_) => " graphs".to_string(),
            Row::Derived(i) => dlabels
                .binary_search_by_key(&i, |(d, _)| *d)
                .map_or(String::new(), |k| format!(" {} ~", dlabels[k].1)),
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

/// The gutter labels of every track of `procs` (sorted process ids), by track id, each fitted
/// to the room its row leaves in a gutter `w` wide: names shortened together so they stay
/// apart (also from the same stream of another GPU).
fn track_labels(l: &Loaded, procs: &[u32], w: usize) -> Vec<(u32, String)> {
    let cap = &l.cap;
    let tracks: Vec<u32> = (0..cap.tracks.len() as u32)
        .filter(|&t| procs.binary_search(&cap.tracks[t as usize].process).is_ok())
        .collect();
    let names: Vec<String> = tracks
        .iter()
        .map(|&t| {
            let n = cap.track_name(t);
            if n.trim().is_empty() {
                "(unnamed track)".to_string()
            } else {
                text::sanitize(&n).into_owned()
            }
        })
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    // Room: one leading space, then a lane number (multi-lane tracks) or ` ~` (counters).
    let narrow = crate::text::fit_apart(&refs, w.saturating_sub(3));
    let wide = crate::text::fit_apart(&refs, w.saturating_sub(2));
    let mut out = Vec::with_capacity(tracks.len());
    for (k, &t) in tracks.iter().enumerate() {
        let tight = cap.tracks[t as usize].kind == crate::model::TrackKind::Counter
            || l.index.lane_count(t) > 1;
        let pick = if tight { &narrow } else { &wide };
        out.push((t, pick.get(k).cloned().unwrap_or_default()));
    }
    out.sort_unstable_by_key(|(t, _)| *t);
    out
}

/// A process title in `room` columns: when its label (`GPU 0`) fits, the end is cut (the
/// label is what tells devices apart), else the middle.
fn fit_title(title: &str, label: &str, room: usize) -> String {
    if !label.is_empty() && title.starts_with(label) && text::width(label) + 2 <= room {
        text::fit(title, room).into_owned()
    } else {
        crate::text::fit_middle(title, room).into_owned()
    }
}
