//! The capture picker: runs / hosts / workers, newest first, with their load state or error.

use super::View;
use super::help::help_for;
use crate::index::Cell;
pub use crate::model::clock::format_clock;
use crate::ui::action::Action;
use crate::ui::keymap::ViewKind;
use crate::ui::loading::EntryState;
use crate::ui::msg::Msg;
use crate::ui::state::State;
use crate::ui::status::{self, bar, bytes, progress_text};
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use std::time::{SystemTime, UNIX_EPOCH};

/// The picker view. Its cursor is [`State::picker`]: the watcher's events move it too, when
/// entries are added or removed above it.
#[derive(Debug, Default)]
pub struct PickerView;

impl View for PickerView {
    fn kind(&self) -> ViewKind {
        ViewKind::Picker
    }

    fn on_key(&mut self, _key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg> {
        let n = st.entries.len();
        match action {
            Some(Action::Quit) => vec![Msg::Quit],
            Some(Action::Help) => vec![help_for(ViewKind::Picker)],
            Some(Action::Down) if n > 0 => vec![Msg::Pick((st.picker + 1).min(n - 1))],
            Some(Action::Up) => vec![Msg::Pick(st.picker.saturating_sub(1))],
            Some(Action::Top) => vec![Msg::Pick(0)],
            Some(Action::Bottom) => vec![Msg::Pick(n.saturating_sub(1))],
            Some(Action::Confirm) => vec![Msg::Open(st.picker)],
            Some(Action::Back) => vec![Msg::ShowTimeline],
            Some(Action::MarkBaseline) if n > 0 => vec![Msg::SetBaseline(st.picker)],
            Some(Action::OpenDiff) if n > 0 => vec![Msg::OpenDiff(st.picker)],
            Some(Action::OpenOverview) if n > 0 => {
                let open = st
                    .entries
                    .id_of(st.picker)
                    .and_then(|id| super::overview_view::OverviewView::open_for(st, id));
                match open {
                    Some((v, req)) if ranks_of_run(st, st.picker) > 1 => {
                        vec![Msg::Push(Box::new(v)), req]
                    }
                    _ => vec![Msg::Notice(
                        "one rank in this run: no run overview (Enter opens it)".into(),
                    )],
                }
            }
            _ => Vec::new(),
        }
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        let mut a = area;
        a.height = a.height.saturating_sub(1);
        draw(st, st.picker, buf, a);
        let mut s = area;
        s.y = area.bottom().saturating_sub(1);
        s.height = area.height.min(1);
        status::draw(st, buf, s);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// `YYYY-MM-DD HH:MM` (UTC) of a file time.
pub fn format_mtime(t: Option<SystemTime>) -> String {
    let Some(secs) = t
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64)
    else {
        return "-".into();
    };
    crate::model::clock::civil(secs)
}

/// When a capture was taken (UTC): `2026-11-22 01:39` (`11-22 01:39` when not `wide`), from
/// the trace itself; `~` in front marks the file's modification time, shown when the trace
/// does not say (a copied file has the copy's time).
pub fn taken_label(taken: Option<i64>, modified: Option<SystemTime>, wide: bool) -> String {
    let (mark, t) = match taken {
        Some(ns) => ("", crate::model::clock::civil(ns.div_euclid(1_000_000_000))),
        None if modified.is_some() => ("~", format_mtime(modified)),
        None => return "-".into(),
    };
    if wide {
        format!("{mark}{t}")
    } else {
        // Drop the year: `MM-DD HH:MM`.
        format!("{mark}{}", t.get(5..).unwrap_or(&t))
    }
}

/// Runs with at least this many ranks offer their run overview before any one rank.
pub const MANY_RANKS: usize = 4;

/// How many captures of entry `i`'s run say their rank (traces only).
pub fn ranks_of_run(st: &State, i: usize) -> usize {
    let Some(run) = st.entries.get(i).map(|e| &e.capture.source.run) else {
        return 0;
    };
    st.entries
        .iter()
        .filter(|e| {
            &e.capture.source.run == run
                && crate::analysis::ranks::is_rank_format(e.capture.format)
                && rank_of(e).is_some()
        })
        .count()
}

/// The rank a capture says (file head, else the loaded capture).
fn rank_of(e: &crate::ui::loading::Entry) -> Option<i64> {
    e.rank.or_else(|| match &e.state {
        EntryState::Ready(l) => l.cap.rank(),
        _ => None,
    })
}

/// The header's offer of the run overview when the cursor's run has many ranks: ` · 64 ranks:
/// R run overview first, or pick one`.
fn overview_offer(st: &State, cursor: usize) -> String {
    let n = ranks_of_run(st, cursor);
    let key = st
        .keymap
        .keys(ViewKind::Picker, Action::OpenOverview)
        .first()
        .map(|k| k.hint());
    match key {
        Some(k) if n >= MANY_RANKS => format!(" · {n} ranks: {k} run overview, or pick one"),
        _ => String::new(),
    }
}

/// ` · 2 loaded, 310.0 MB in memory` for the header, or nothing when none is loaded.
fn loaded_summary(st: &State) -> String {
    let k = st.entries.loaded_count();
    if k == 0 {
        return String::new();
    }
    let held = bytes(st.entries.loaded_bytes());
    format!(" · {k} loaded, {held} in memory")
}

/// Draws the picker list (cursor on entry `cursor`) into `area`.
pub fn draw(st: &State, cursor: usize, buf: &mut Buffer, area: Rect) {
    let w = area.width as usize;
    if area.height < 3 || w < 10 {
        return;
    }
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let n = st.entries.len();
    let offer = overview_offer(st, cursor);
    let title = if offer.is_empty() {
        format!(
            " tracetui  {n} captures, newest first{}",
            loaded_summary(st)
        )
    } else {
        format!(" tracetui  {n} captures{offer}{}", loaded_summary(st))
    };
    buf.set_stringn(area.x, area.y, title, w, bold);
    let wide = w >= 100;
    // Under 100 columns the run is narrower and the file size gives way, so the status
    // (`loading ▓▓░░░░ 40%`, errors) keeps its room beside the capture time.
    let run_w = if wide { w / 4 } else { w / 5 }.max(10);
    let host_w = (w / 6).max(8);
    let size = |s: String| {
        if wide {
            format!("{s:>9}  ")
        } else {
            String::new()
        }
    };
    // The rank column, when a capture says its rank (file head, else the loaded capture).
    let ranks = st.entries.iter().any(|e| rank_of(e).is_some());
    let time_w = if wide { 17 } else { 12 };
    let header = format!(
        "  {:<run_w$} {:<host_w$} {}{:<11} {}{:<time_w$}  status",
        "run",
        "host / worker",
        if ranks { "rank " } else { "" },
        "format",
        size("size".into()),
        "taken (UTC)",
    );
    buf.set_stringn(
        area.x,
        area.y + 1,
        &header,
        w,
        Style::default().add_modifier(Modifier::DIM),
    );
    // Skipped entries get a section at the bottom: at most a third of the rows, one line
    // saying how many did not fit.
    let avail = area.height.saturating_sub(4) as usize;
    let skipped_h = if st.problems.is_empty() {
        0
    } else {
        (st.problems.len() + 1).min((avail / 3).max(2)).min(avail)
    };
    // The selected entry's error, wrapped over up to 3 lines at the bottom.
    let err_lines = match st.entries.get(cursor).map(|e| &e.state) {
        Some(EntryState::Failed(m)) => wrap(&format!(" {}", text::sanitize(m)), w, 3),
        _ => Vec::new(),
    };
    let err_h = err_lines.len().max(2);
    let skipped_h = skipped_h.min(avail.saturating_sub(err_h - 2));
    let list_h = avail - skipped_h - (err_h - 2).min(avail - skipped_h);
    let top = cursor.saturating_sub(list_h.saturating_sub(1));
    if n > list_h {
        // The list scrolls: say where the cursor is.
        let pos = format!("{}/{n} ", cursor + 1);
        let pw = text::width(&pos);
        if pw + 40 < w {
            buf.set_stringn(area.x + (w - pw) as u16, area.y, &pos, pw, Style::default());
        }
    }
    for (row, (i, e)) in st
        .entries
        .iter()
        .enumerate()
        .skip(top)
        .take(list_h)
        .enumerate()
    {
        let src = &e.capture.source;
        let status = match &e.state {
            _ if e.writing => "writing…".to_string(),
            _ if e.gone => "deleted (still open)".to_string(),
            EntryState::Idle => String::new(),
            EntryState::Loading(p) => {
                let (f, _) = progress_text(p);
                format!("loading {} {:.0}%", bar(f, 6), f * 100.0)
            }
            EntryState::Ready(l) => format!(
                "loaded · {} slices · {} in memory",
                l.cap.slices.len(),
                bytes(e.bytes)
            ),
            EntryState::Failed(m) => format!(
                "error: {}",
                text::sanitize(short_error(m, &src.path.display().to_string()))
            ),
        };
        let rank = if ranks {
            format!("{:>4} ", rank_of(e).map_or("-".into(), |r| r.to_string()))
        } else {
            String::new()
        };
        let line = format!(
            "{} {:<run_w$} {:<host_w$} {rank}{:<11} {}{:<time_w$}  {}",
            if st.diff.baseline.as_deref() == Some(src.path.as_path()) {
                "A"
            } else if i == cursor {
                "▶"
            } else {
                " "
            },
            crate::text::fit_middle(&text::sanitize(&src.run), run_w),
            host_label(&text::sanitize(&src.host), e.capture.span, host_w),
            e.capture
                .format
                .map_or("?", |f| crate::formats::pprof::format_label(
                    f,
                    &e.capture.source.path
                )),
            size(bytes(src.file_bytes)),
            taken_label(e.taken, e.capture.modified, wide),
            status
        );
        let mut style = Style::default();
        if i == cursor {
            style = style.add_modifier(Modifier::REVERSED);
        }
        buf.set_stringn(
            area.x,
            area.y + 2 + row as u16,
            text::fit(&line, w),
            w,
            style,
        );
    }
    if st.entries.is_empty() {
        buf.set_stringn(
            area.x + 2,
            area.y + 3,
            "no trace files found (.xplane.pb, .pt.trace.json[.gz], .json[.gz])",
            w.saturating_sub(2),
            Style::default(),
        );
    }
    if skipped_h > 0 {
        draw_problems(st, buf, area, skipped_h, err_h);
    }
    // The selected entry's full error, if any.
    let y0 = area.bottom().saturating_sub(err_h as u16);
    for (k, line) in err_lines.iter().enumerate() {
        buf.set_stringn(area.x, y0 + k as u16, line, w, Style::default());
    }
}

/// A load error without its leading `<path>: ` (the row already names the file).
pub fn short_error<'a>(msg: &'a str, path: &str) -> &'a str {
    msg.strip_prefix(path)
        .and_then(|r| r.strip_prefix(": "))
        .unwrap_or(msg)
}

/// Splits `s` into at most `max` lines of `w` columns (by characters; the last one cut with
/// `…`).
pub fn wrap(s: &str, w: usize, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    if w == 0 || max == 0 {
        return out;
    }
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() && out.len() < max {
        let end = (i + w).min(chars.len());
        let line: String = chars[i..end].iter().collect();
        if out.len() + 1 == max && end < chars.len() {
            out.push(text::fit(&format!("{line}…"), w).into_owned());
        } else {
            out.push(line);
        }
        i = end;
    }
    out
}

/// Host / worker, with the span timestamp when there is one (two captures of one worker
/// differ only there): the span's last digits are kept when the column is narrow.
pub fn host_label(host: &str, span: Option<u64>, w: usize) -> String {
    let Some(span) = span else {
        return crate::text::fit_middle(host, w).into_owned();
    };
    let sp = span.to_string();
    let hw = text::width(host);
    if hw + 1 + sp.len() <= w {
        return format!("{host}·{sp}");
    }
    // Room for "·…" and at least 4 digits; the host gets the rest.
    let tail = if hw + 2 + 4 <= w {
        w - hw - 2
    } else {
        w.saturating_sub(hw.min(w / 2) + 2)
    }
    .clamp(1, sp.len());
    let h = text::fit(host, w.saturating_sub(tail + 2));
    let digits = &sp[sp.len() - tail..];
    text::fit(&format!("{h}·…{digits}"), w).into_owned()
}

/// The "skipped" section: entries discovery could not offer, with the reason.
fn draw_problems(st: &State, buf: &mut Buffer, area: Rect, h: usize, err_h: usize) {
    let w = area.width as usize;
    // Below the list, above the selected entry's error lines.
    let y0 = area.bottom().saturating_sub((err_h + h) as u16);
    let dim = Style::default().add_modifier(Modifier::DIM);
    let n = st.problems.len();
    buf.set_stringn(area.x, y0, format!(" {n} skipped (not offered):"), w, dim);
    let room = h - 1;
    let shown = if n > room { room.saturating_sub(1) } else { n };
    for (k, (path, why)) in st.problems.iter().take(shown).enumerate() {
        let line = format!(
            "  ! {} — {}",
            text::sanitize(&path.display().to_string()),
            text::sanitize(why)
        );
        buf.set_stringn(area.x, y0 + 1 + k as u16, text::fit(&line, w), w, dim);
    }
    if n > shown {
        buf.set_stringn(
            area.x,
            y0 + 1 + shown as u16,
            format!("  … {} more", n - shown),
            w,
            dim,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates() {
        let t = UNIX_EPOCH + Duration::from_secs(1_795_311_589);
        assert_eq!(format_mtime(Some(t)), "2026-11-22 01:39");
        assert_eq!(format_mtime(Some(UNIX_EPOCH)), "1970-01-01 00:00");
        assert_eq!(format_mtime(None), "-");
    }

    #[test]
    fn taken_times_come_from_the_trace_else_marked_as_file_times() {
        let t = UNIX_EPOCH + Duration::from_secs(1_000);
        let ns = 1_795_311_589_169_457_977;
        assert_eq!(taken_label(Some(ns), Some(t), true), "2026-11-22 01:39");
        assert_eq!(taken_label(Some(ns), None, false), "11-22 01:39");
        assert_eq!(taken_label(None, Some(t), true), "~1970-01-01 00:16");
        assert_eq!(taken_label(None, Some(t), false), "~01-01 00:16");
        assert_eq!(taken_label(None, None, true), "-");
    }

    #[test]
    fn long_run_and_host_names_lose_their_middle() {
        let h = host_label("ip-10-0-12-34.ec2.internal-worker-7", None, 16);
        assert!(h.starts_with("ip-10") && h.ends_with("orker-7"), "{h}");
        assert_eq!(text::width(&h), 16);
    }

    #[test]
    fn errors_wrap_and_drop_the_path() {
        let m = "/a/b.xplane.pb: at byte 1: length 285 runs past the end";
        assert_eq!(
            short_error(m, "/a/b.xplane.pb"),
            "at byte 1: length 285 runs past the end"
        );
        assert_eq!(short_error(m, "/other"), m);
        let l = wrap(m, 15, 3);
        assert_eq!(l.len(), 3);
        assert_eq!(l[0], "/a/b.xplane.pb:");
        assert!(l[2].ends_with('…') && text::width(&l[2]) <= 15, "{l:?}");
        assert_eq!(wrap("abc", 20, 3), vec!["abc".to_string()]);
        assert!(wrap("abc", 0, 3).is_empty());
    }

    #[test]
    fn host_labels_keep_the_span_digits() {
        assert_eq!(host_label("worker0", None, 20), "worker0");
        assert_eq!(
            host_label("worker0", Some(1623143089861), 30),
            "worker0·1623143089861"
        );
        let a = host_label("worker0", Some(1623143089861), 13);
        let b = host_label("worker0", Some(1623143566756), 13);
        assert_ne!(a, b);
        assert!(text::width(&a) <= 13, "{a}");
        assert!(a.ends_with("89861") || a.ends_with("9861"), "{a}");
        for w in 0..30 {
            assert!(text::width(&host_label("a-very-long-host-name", Some(42), w)) <= w);
        }
    }
}
