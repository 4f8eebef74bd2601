//! The `!` attention view, two tabs (`Tab` switches): `advise`'s findings on the open capture
//! (docs/advise.md), ranked by the time each change would save per step, with the selected
//! one's title, saving, evidence, fix and threshold below them; and the capture's load
//! warnings (file, kind, count, offsets). `j`/`k` select, `Enter` shows the finding's evidence
//! on the timeline (its step as the window, its events the dimmed hit list, `n`/`N` through
//! them), `Esc` closes. The findings are computed on the loader thread
//! ([`Loaded::findings`]); until then the view says so. [`marker`] offers the view in the
//! status line when the top finding is worth ≥ 5 % of a step; [`concerning`] gives the one
//! line the statistics, critical-path and roofline views show under a row a finding is about.

use super::View;
use crate::analysis::advise::{Finding, step_label};
use crate::index::Cell;
use crate::model::Warning;
use crate::ui::action::Action;
use crate::ui::hits::HitList;
use crate::ui::keymap::ViewKind;
use crate::ui::loader::Loaded;
use crate::ui::msg::Msg;
use crate::ui::ruler::format_dur;
use crate::ui::state::{Screen, State};
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Clear, Widget};

/// The share of a step (in %) from which the status line offers the view.
pub const OFFER_PCT: f64 = 5.0;

/// Popup width at most.
const POPUP_W: u16 = 120;

/// The attention view: a cursor over the findings and a scroll offset.
#[derive(Debug, Default)]
pub struct AttentionView {
    /// Selected finding.
    pub cursor: usize,
    /// First line shown.
    pub scroll: usize,
    /// The load-warnings tab is shown.
    pub warnings: bool,
}

/// The message that opens the view (it also shows "computing" and "nothing found").
pub fn open(st: &State) -> Msg {
    match st.loaded() {
        Some(_) => Msg::Push(Box::new(AttentionView::default())),
        None => Msg::Notice("no capture loaded".into()),
    }
}

/// Saving as a percentage of the step.
fn pct(f: &Finding) -> f64 {
    if f.step > 0 {
        100.0 * f.saving as f64 / f.step as f64
    } else {
        0.0
    }
}

/// The status-line marker: the top finding when it is worth ≥ [`OFFER_PCT`] of a step and the
/// load warnings' count, with the key (`⚑ host_bound 96 % · ⚠ 2 load warnings (!)`); on the
/// timeline only.
pub fn marker(st: &State) -> Option<String> {
    if st.screen() != Screen::Timeline {
        return None;
    }
    let l = st.loaded()?;
    let mut parts: Vec<String> = Vec::new();
    if let Some(f) = l.findings_if_ready().and_then(|f| f.first())
        && pct(f) >= OFFER_PCT
    {
        parts.push(format!("⚑ {} {:.0} %", f.rule, pct(f)));
    }
    let n = l.cap.warnings.len();
    if n > 0 {
        let s = if n == 1 { "" } else { "s" };
        parts.push(format!("⚠ {n} load warning{s}"));
    }
    if parts.is_empty() {
        return None;
    }
    let key = st
        .keymap
        .keys(ViewKind::Timeline, Action::OpenWarnings)
        .first()
        .map_or(String::new(), |k| format!(" ({})", k.hint()));
    Some(format!("{}{key}", parts.join(" · ")))
}

/// The one line a table or the roofline shows under a row named `name` (of events `ids`): the
/// top finding whose evidence has one of those events or an event of that name; on a
/// critical-path row of kind `path_kind` (`cpu_op`, `runtime`, `gap`: host work on the path),
/// `host_bound` in the step. `None` before the findings are ready.
pub fn concerning(
    st: &State,
    name: &str,
    ids: &[u32],
    path_kind: Option<&String>,
) -> Option<String> {
    let host_row = path_kind.is_some_and(|k| matches!(k.as_str(), "cpu_op" | "runtime" | "gap"));
    let l = st.loaded()?;
    let fs = l.findings_if_ready()?;
    let c = &l.cap;
    let f = fs.iter().find(|f| {
        f.event_ids.iter().any(|e| ids.contains(e))
            || f.event_ids
                .iter()
                .any(|&e| (e as usize) < c.slices.len() && text::sanitize(c.slice_name(e)) == name)
            || (host_row && f.rule == "host_bound")
    })?;
    Some(format!(
        "⚑ {} (up to {:.1} % of a step · ! for all): {}",
        f.rule,
        pct(f),
        text::sanitize(&f.title)
    ))
}

/// What `Enter` on finding `f` does: closes the view, makes its events the dimmed hit list in
/// the finding's order and shows the first one inside its step (the window = that step); a
/// finding without events shows its first step and track.
pub fn evidence(l: &Loaded, f: &Finding) -> Vec<Msg> {
    let c = &l.cap;
    let ids: Vec<u32> = f
        .event_ids
        .iter()
        .copied()
        .filter(|&id| (id as usize) < c.slices.len())
        .collect();
    let step_at = |t| {
        l.steps
            .steps
            .iter()
            .find(|s| s.start <= t && t < s.end)
            .copied()
    };
    let mut out = vec![Msg::Pop];
    let Some(&first) = ids.first() else {
        // No single event (the idle breakdown): the first fired step and the first track.
        if let Some(s) = l
            .steps
            .steps
            .iter()
            .find(|s| f.steps.first() == Some(&s.number))
        {
            out.push(Msg::SetWindow(s.start, s.end));
        }
        if let Some(&t) = f.tracks.first() {
            out.push(Msg::FocusTrack(t));
        }
        out.push(Msg::Notice(format!(
            "{}: {} — no single event; the step and its first track",
            f.rule,
            step_label(&f.steps)
        )));
        return out;
    };
    let mut hits = HitList::in_order(c, format!("{} evidence", f.rule), ids);
    hits.dim = true;
    hits.pos = Some(0);
    out.push(Msg::SetHits(hits));
    match step_at(c.slices.start[first as usize]) {
        Some(s) => {
            out.push(Msg::SetWindow(s.start, s.end));
            out.push(Msg::Select(first));
        }
        None => out.push(Msg::JumpTo(first)),
    }
    out
}

/// One line of the view: text, style, and the finding it is the row of.
type Line = (String, Style, Option<usize>);

/// The view's lines for an inner width `w`: the findings with finding `cursor` selected, or
/// the load warnings.
fn lines(st: &State, w: usize, cursor: usize, warnings: bool) -> Vec<Line> {
    let Some(l) = st.loaded() else {
        return Vec::new();
    };
    let plain = Style::default();
    let bold = plain.add_modifier(Modifier::BOLD);
    let dim = plain.add_modifier(Modifier::DIM);
    let mut out: Vec<Line> = Vec::new();
    let wrap = |out: &mut Vec<Line>, s: &str, style: Style| {
        for part in super::full_details::wrap(&text::sanitize(s), w) {
            out.push((part, style, None));
        }
    };
    if warnings {
        warning_lines(l, &mut out, w);
        return out;
    }
    let nw = l.cap.warnings.len();
    if nw > 0 {
        out.push((
            format!(
                "⚠ {nw} load warning{} (Tab): the capture was not read whole",
                if nw == 1 { "" } else { "s" }
            ),
            bold,
            None,
        ));
    }
    match l.findings_if_ready() {
        None => wrap(
            &mut out,
            "findings: computing (on the loader thread; this view fills in when ready)",
            dim,
        ),
        Some([]) => wrap(
            &mut out,
            "findings: nothing to change found (no rule fired; docs/advise.md lists them)",
            dim,
        ),
        Some(fs) => {
            out.push((
                text::fit(
                    &format!(
                        "{} finding{} · saving per step (upper bound) · Enter: its evidence, \
                         n/N through it",
                        fs.len(),
                        if fs.len() == 1 { "" } else { "s" }
                    ),
                    w,
                )
                .into_owned(),
                dim,
                None,
            ));
            for (i, f) in fs.iter().enumerate() {
                let row = format!(
                    "{:>9} {:>5.1} %  {:<17} {}",
                    format_dur(f.saving),
                    pct(f),
                    f.rule,
                    text::sanitize(&f.title)
                );
                let style = if i == cursor {
                    plain.add_modifier(Modifier::REVERSED)
                } else {
                    plain
                };
                out.push((text::fit(&row, w).into_owned(), style, Some(i)));
            }
            if let Some(f) = fs.get(cursor) {
                out.push((String::new(), plain, None));
                wrap(&mut out, &format!("{}: {}", f.rule, f.title), bold);
                wrap(
                    &mut out,
                    &format!(
                        "saves up to {} per step ({:.1} % of {}): {}",
                        format_dur(f.saving),
                        pct(f),
                        format_dur(f.step),
                        f.saving_how
                    ),
                    plain,
                );
                wrap(
                    &mut out,
                    &format!(
                        "evidence: {} event{} on {} track{}, measured by `{}`",
                        f.event_ids.len(),
                        if f.event_ids.len() == 1 { "" } else { "s" },
                        f.tracks.len(),
                        if f.tracks.len() == 1 { "" } else { "s" },
                        f.analysis
                    ),
                    plain,
                );
                wrap(&mut out, &format!("try: {}", f.fix), plain);
                wrap(&mut out, &format!("fired: {}", f.threshold), dim);
            }
        }
    }
    out
}

/// The load-warnings tab: the file, then each warning's kind and count, its message below.
fn warning_lines(l: &Loaded, out: &mut Vec<Line>, w: usize) {
    let (plain, dim) = (
        Style::default(),
        Style::default().add_modifier(Modifier::DIM),
    );
    let bold = plain.add_modifier(Modifier::BOLD);
    let wrap = |out: &mut Vec<Line>, s: &str, style: Style| {
        for part in super::full_details::wrap(&text::sanitize(s), w) {
            out.push((part, style, None));
        }
    };
    let ws = &l.cap.warnings;
    if ws.is_empty() {
        out.push((
            "load warnings: none, the capture was read whole".into(),
            dim,
            None,
        ));
        return;
    }
    out.push((format!("load warnings ({})", ws.len()), bold, None));
    let src = &l.cap.source;
    wrap(
        out,
        &format!(
            "{} ({} bytes); byte offsets are of this file, or of its decompressed text for a .gz",
            src.path.display(),
            src.file_bytes
        ),
        dim,
    );
    for Warning {
        kind,
        count,
        message,
    } in ws
    {
        out.push((format!("{kind} ×{count}"), bold, None));
        wrap(out, &format!("  {message}"), plain);
    }
}

impl AttentionView {
    fn inner(size: (u16, u16)) -> (usize, usize) {
        let w = POPUP_W.min(size.0).saturating_sub(4) as usize;
        // The body: the terminal less the status line and the popup's borders.
        let h = size.1.saturating_sub(3) as usize;
        (w, h)
    }

    /// Keeps the selected finding's row on screen.
    fn follow(&mut self, st: &State) {
        let (w, h) = Self::inner(st.size);
        let ls = lines(st, w, self.cursor, self.warnings);
        if let Some(y) = ls.iter().position(|x| x.2 == Some(self.cursor)) {
            if y < self.scroll {
                self.scroll = y.saturating_sub(1);
            } else if y >= self.scroll + h {
                self.scroll = y + 1 - h;
            }
        }
    }
}

impl View for AttentionView {
    fn kind(&self) -> ViewKind {
        // The tables' keys: j/k, Enter, Esc, PgDn/PgUp, g/G.
        ViewKind::Table
    }

    fn is_popup(&self) -> bool {
        true
    }

    fn on_key(&mut self, key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg> {
        let Some(l) = st.loaded() else {
            return vec![Msg::Pop];
        };
        if matches!(key.code, KeyCode::Tab | KeyCode::BackTab) {
            self.warnings = !self.warnings;
            self.scroll = 0;
            return Vec::new();
        }
        let n = if self.warnings {
            0
        } else {
            l.findings_if_ready().map_or(0, <[Finding]>::len)
        };
        let (w, h) = Self::inner(st.size);
        let total = lines(st, w, self.cursor, self.warnings).len();
        let max_scroll = total.saturating_sub(h);
        match action {
            Some(Action::Down) if self.cursor + 1 < n => {
                self.cursor += 1;
                self.follow(st);
            }
            // Past the last finding: scroll on (its details, the load warnings).
            Some(Action::Down) => self.scroll = (self.scroll + 1).min(max_scroll),
            Some(Action::Up) if self.scroll > 0 && self.cursor == 0 => self.scroll -= 1,
            Some(Action::Up) => {
                self.cursor = self.cursor.saturating_sub(1);
                self.follow(st);
            }
            Some(Action::PageDown) => self.scroll = (self.scroll + h).min(max_scroll),
            Some(Action::PageUp) => self.scroll = self.scroll.saturating_sub(h),
            Some(Action::Top) => {
                self.cursor = 0;
                self.scroll = 0;
            }
            Some(Action::Bottom) => self.scroll = max_scroll,
            Some(Action::Confirm) if !self.warnings => {
                return match l.findings_if_ready().and_then(|f| f.get(self.cursor)) {
                    Some(f) => evidence(l, f),
                    None => vec![Msg::Notice("no finding selected".into())],
                };
            }
            Some(Action::Back) => return vec![Msg::Pop],
            Some(Action::Quit) => return vec![Msg::Pop, Msg::Quit],
            _ => {}
        }
        Vec::new()
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        let w = POPUP_W.min(area.width);
        let iw = w.saturating_sub(4) as usize;
        let ls = lines(st, iw, self.cursor, self.warnings);
        let h = (ls.len() as u16).saturating_add(2).min(area.height);
        let r = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        );
        Clear.render(r, buf);
        let more = if ls.len() > h.saturating_sub(2) as usize && w >= 100 {
            " · j/k, PgDn for more"
        } else {
            ""
        };
        let l = st.loaded();
        let nf = l
            .and_then(|l| l.findings_if_ready())
            .map_or("…".to_string(), |f| f.len().to_string());
        let nw = l.map_or(0, |l| l.cap.warnings.len());
        let (a, b) = if self.warnings {
            (" ", "▸")
        } else {
            ("▸", " ")
        };
        let block = Block::default().borders(Borders::ALL).title(format!(
            " attention: {a}findings {nf}  {b}load warnings {nw} · Tab switches · Esc closes{more} "
        ));
        let inner = block.inner(r);
        block.render(r, buf);
        let ih = inner.height as usize;
        let scroll = self.scroll.min(ls.len().saturating_sub(ih));
        for (i, (line, style, _)) in ls.iter().skip(scroll).take(ih).enumerate() {
            let y = inner.y + i as u16;
            if style.add_modifier.contains(Modifier::REVERSED) {
                buf.set_stringn(inner.x, y, " ".repeat(inner.width as usize), iw + 2, *style);
            }
            buf.set_stringn(inner.x + 1, y, line, iw, *style);
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
