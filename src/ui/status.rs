//! The status line (key hints, notices, what is under the cursor, load progress) and the loading
//! panel shown while the timeline is not ready.

use super::action::Action;
use super::keymap::ViewKind;
use super::loading::EntryState;
use super::memory::mem_bytes;
use super::rows::Row;
use super::ruler::format_dur;
use super::ruler::format_time_res;
use super::state::{Screen, State};
use super::text;
use super::timeline::value_at;
use crate::formats::Progress;
use crate::index::{Cell, column_edge};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use std::sync::atomic::Ordering;

/// Human-readable byte count in binary units, as the headless commands write them (`57.9 KiB`).
pub fn bytes(n: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < U.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", U[u])
    }
}

/// Human-readable count: `4.91 M`.
pub fn count(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.2} M", n as f64 / 1e6)
    } else if n >= 10_000 {
        format!("{:.1} k", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

/// Fraction done (0..=1) and a description of a running load.
pub fn progress_text(p: &Progress) -> (f64, String) {
    let done = p.bytes_done.load(Ordering::Relaxed);
    let total = p.bytes_total.load(Ordering::Relaxed);
    let ev = p.events.load(Ordering::Relaxed);
    let f = if total > 0 {
        (done as f64 / total as f64).min(0.99)
    } else {
        0.0
    };
    (f, format!("{} · {} events", bytes(done), count(ev)))
}

/// A bar of `w` cells filled to `f`.
pub fn bar(f: f64, w: usize) -> String {
    let full = ((f * w as f64).round() as usize).min(w);
    format!("{}{}", "█".repeat(full), "░".repeat(w - full))
}

/// Key hints of the screen shown, generated from the key table (`short`: the narrow set).
fn hints(st: &State, short: bool) -> String {
    let view = match st.screen() {
        Screen::Picker => ViewKind::Picker,
        Screen::Timeline => ViewKind::Timeline,
    };
    // `x device` only where there is a device to go to.
    let device = st.loaded().is_some_and(|l| {
        st.rows.iter().any(|r| match r {
            Row::Process(p) => l.cap.processes.get(*p as usize).is_some_and(|p| {
                use crate::model::ProcessKind as K;
                matches!(p.kind, K::Gpu | K::Tpu | K::Device)
            }),
            _ => false,
        })
    });
    let skip: &[Action] = if device { &[] } else { &[Action::JumpDevice] };
    st.keymap.hints_skipping(view, short, skip)
}

/// What is under the cursor: merged slices or the counter value.
fn under_cursor(st: &State) -> Option<String> {
    let l = st.loaded()?;
    let cols = st.areas().lanes.width as usize;
    if cols == 0 {
        return None;
    }
    let t = st.cursor_time();
    let k = (i128::from(t - st.vp.t0) * cols as i128 / i128::from((st.vp.t1 - st.vp.t0).max(1)))
        .clamp(0, cols as i128 - 1) as usize;
    let a = column_edge(st.vp.t0, st.vp.t1, cols, k);
    let b = column_edge(st.vp.t0, st.vp.t1, cols, k + 1).max(a + 1);
    match *st.rows.get(st.rows.cursor)? {
        Row::Lane { track, lane } => {
            let mut c = [Cell::EMPTY];
            l.index.lod(&l.cap, track, lane as usize, a, b, &mut c);
            (c[0].count > 1).then(|| {
                format!(
                    "{} slices merged here (longest {}) — w to zoom",
                    c[0].count,
                    text::fold(l.cap.slice_name(c[0].longest))
                )
            })
        }
        Row::Derived(i) => {
            let d = l.derived.get(i as usize)?;
            let v = value_at(&d.ts, &d.value, t)?;
            let k = d.marks.partition_point(|m| m.0 <= t);
            let idle = k > 0 && d.marks[k - 1].1 > t;
            Some(format!(
                "{} {v}{} · {}",
                d.name,
                if idle { " · GPU idle here" } else { "" },
                d.help
            ))
        }
        Row::Memory { track, reserved } => {
            let m = l.memory()?;
            let tr = m.track(track)?;
            let tv = m.tracks.get(track as usize)?;
            let zero = l.cap.time_zero();
            let res = st.vp.width() / 100;
            if let Some(o) = m.oom_in(track, a, b).and_then(|i| tr.ooms.get(i)) {
                let opt = |what: &str, v: Option<i64>| {
                    v.map_or(String::new(), |v| format!(" · {what} {}", mem_bytes(v)))
                };
                return Some(format!(
                    "OUT OF MEMORY at {}: requested {}{}{}{}",
                    format_time_res(o.ts - zero, res),
                    mem_bytes(o.bytes),
                    opt("allocated", o.allocated),
                    opt("reserved", o.reserved),
                    opt("device free", o.device_free),
                ));
            }
            let (alloc, res_now) = tr.at(t);
            let now = if reserved { res_now } else { alloc };
            let peak = if reserved { tv.peak_reserved } else { tv.peak };
            let kb = &st.keymap;
            let key = |a| {
                kb.keys(ViewKind::Timeline, a)
                    .first()
                    .map_or(String::new(), |k| k.to_string())
            };
            Some(format!(
                "{} {} {}{} · {} peak · {} live allocations",
                text::sanitize(&tr.label()),
                if reserved { "reserved" } else { "allocated" },
                mem_bytes(now),
                peak.map_or(String::new(), |(pt, pb)| format!(
                    " · peak {} at {}",
                    mem_bytes(pb),
                    format_time_res(pt - zero, res)
                )),
                key(Action::JumpPeak),
                key(Action::OpenMemory),
            ))
        }
        Row::Counter(track) => {
            let ci = l.cap.tracks.get(track as usize)?.counter?;
            let s = l.cap.counters.get(ci as usize)?;
            value_at(&s.ts, &s.value, t).map(|v| format!("value {v}"))
        }
        Row::Process(p) if st.rows.collapsed.contains(&p) => {
            // The summary row: which track is busiest in the cursor's column.
            let busiest = l
                .cap
                .tracks
                .iter()
                .enumerate()
                .filter(|(_, tr)| tr.process == p)
                .map(|(t, _)| (l.index.busy_time(&l.cap, t as u32, a, b), t as u32))
                .max();
            Some(match busiest {
                Some((busy, t)) if busy > 0 => format!(
                    "collapsed, busiest here: {} {:.0}% · Space",
                    text::sanitize(&l.cap.track_name(t)),
                    busy as f64 * 100.0 / (b - a) as f64
                ),
                _ => "collapsed, idle here · Space".to_string(),
            })
        }
        Row::Process(_) => None,
        Row::Steps => Some(super::steps_row::under_cursor(&l.steps, t)),
        Row::Graphs(track) => Some(super::graph_row::under_cursor(l.graphs.of_track(track), t)),
    }
}

/// Draws the status line.
pub fn draw(st: &State, buf: &mut Buffer, area: Rect) {
    let w = area.width as usize;
    if w == 0 {
        return;
    }
    let dim = Style::default().add_modifier(Modifier::DIM);
    let mut hints = hints(st, st.size.0 < 100);
    let mut right = String::new();
    for e in st.entries.iter() {
        if let EntryState::Loading(p) = &e.state {
            let (f, _) = progress_text(p);
            right = format!("loading {} {:.0}%", bar(f, 8), f * 100.0);
        }
    }
    if right.is_empty()
        && let Some(r) = &st.capture.running
    {
        right = r.status();
    }
    if right.is_empty()
        && st.screen() == Screen::Timeline
        && let Some(h) = &st.hits
    {
        let k = h.pos.map_or("-".to_string(), |p| (p + 1).to_string());
        right = format!(
            "{} {k}/{}{}",
            text::fit(&h.label, 24),
            count(h.ids.len() as u64),
            if h.within_track { " (track)" } else { "" }
        );
    }
    // The top finding (≥ 5 % of a step) and the load warnings of the shown capture: on the
    // right, whatever else is said there.
    if let Some(m) = super::views::findings::marker(st) {
        right = if right.is_empty() {
            m
        } else {
            format!("{m} · {right}")
        };
    }
    // A file changed under the open capture: what was loaded stays usable, lazily read
    // details (XPlane stats) are not shown.
    let changed = (st.screen() == Screen::Timeline)
        .then(|| st.loaded())
        .flatten()
        .filter(|l| l.cap.source_changed())
        .map(|_| {
            "file changed on disk since loading: lazy args hidden · reopen to reload".to_string()
        });
    // The step under the cursor: first in the middle when nothing else is said there, else on
    // the right where the notice / cursor text leaves room for it.
    let step = (st.screen() == Screen::Timeline)
        .then(|| st.loaded())
        .flatten()
        .and_then(|l| super::steps_row::status(&l.steps, st.cursor_time()));
    let said = st.notice.clone().or(changed).or_else(|| under_cursor(st));
    // The long hints give way to the short ones when they would leave the middle (what is under
    // the cursor, a notice) and the right (load warnings, hits) no room.
    if text::width(&hints) + text::width(&right) + 3 + 24 > w {
        hints = self::hints(st, true);
    }
    buf.set_stringn(area.x, area.y, &hints, w, dim);
    let hw = text::width(&hints).min(w);
    let middle = match (said, &step) {
        (Some(m), Some(s)) => {
            if hw + text::width(&m) + text::width(&right) + text::width(s) + 6 <= w {
                right = if right.is_empty() {
                    s.clone()
                } else {
                    format!("{right} · {s}")
                };
            }
            m
        }
        (Some(m), None) => m,
        (None, step) if st.screen() == Screen::Timeline => {
            let win = format!("window {}", format_dur(st.vp.t1 - st.vp.t0));
            match step {
                Some(s) => format!("{s} · {win}"),
                None => win,
            }
        }
        (None, _) => String::new(),
    };
    let rw = text::width(&right);
    let mid_room = w.saturating_sub(hw + rw + 3);
    if mid_room > 4 {
        let m = text::fit(&middle, mid_room);
        buf.set_stringn(
            area.x + hw as u16 + 2,
            area.y,
            &*m,
            mid_room,
            Style::default(),
        );
    } else if !middle.is_empty() {
        // Small terminal: the notice wins over the hints, but `? help` stays.
        let m = format!("? help  {middle}");
        let m = text::fit(&m, w.saturating_sub(rw + 1));
        buf.set_stringn(area.x, area.y, " ".repeat(w), w, Style::default());
        buf.set_stringn(area.x, area.y, &*m, w, Style::default());
    }
    if rw > 0 {
        put_right(buf, area, &right);
    }
}

/// Draws `text` right-aligned on the first row of `area` when it fits (plain style).
pub fn put_right(buf: &mut Buffer, area: Rect, text: &str) {
    let (w, tw) = (area.width as usize, text::width(text));
    if tw < w {
        buf.set_stringn(area.x + (w - tw) as u16, area.y, text, tw, Style::default());
    }
}

/// Draws the loading (or failed) panel in `area` for the open entry.
pub fn draw_loading(st: &State, buf: &mut Buffer, area: Rect) {
    let Some(e) = st.entries.current.and_then(|i| st.entries.get(i)) else {
        return;
    };
    let w = area.width as usize;
    let name = text::sanitize(&e.capture.source.path.display().to_string()).into_owned();
    let mut lines = Vec::new();
    match &e.state {
        EntryState::Loading(p) => {
            let (f, desc) = progress_text(p);
            lines.push(format!("loading {}", name));
            lines.push(format!(
                "{} {:.0}%",
                bar(f, 30.min(w.saturating_sub(8))),
                f * 100.0
            ));
            lines.push(format!("{desc} of {}", bytes(e.capture.source.file_bytes)));
            lines.push("Esc back · q quit".into());
        }
        EntryState::Failed(msg) => {
            lines.push("could not load this capture:".into());
            // The whole error (file, offset, what), wrapped to the panel's width: never cut.
            lines.extend(super::views::full_details::wrap(
                &text::sanitize(msg),
                w.saturating_sub(2),
            ));
        }
        _ => {}
    }
    let y0 = area.y + area.height.saturating_sub(lines.len() as u16) / 2;
    for (i, l) in lines.iter().enumerate() {
        let y = y0 + i as u16;
        if y >= area.bottom() {
            break;
        }
        let s = text::fit(l, w.saturating_sub(2));
        buf.set_stringn(area.x + 1, y, &*s, w.saturating_sub(2), Style::default());
    }
}
