//! The `/` search prompt: every event name of the capture (all tracks, all time), fuzzy (nucleo)
//! or regex (`Ctrl-R`), with `cat:` / `track:` / `proc:` / `arg:` filters. Results update on
//! every keystroke (narrowing the previous set when the query grows) and show count, total,
//! self time and the tracks, matched characters highlighted; with a range marked, the count in
//! the range too. `Enter` jumps to the first occurrence and makes every occurrence a hit that
//! `n` / `N` step through.

use super::View;
use crate::analysis::search::{Matcher, Mode, Occurrences, Query, Results};
use crate::index::Cell;
use crate::model::Ps;
use crate::ui::action::Action;
use crate::ui::hits::HitList;
use crate::ui::keymap::ViewKind;
use crate::ui::loader::Loaded;
use crate::ui::msg::Msg;
use crate::ui::ruler::format_dur;
use crate::ui::state::{Mark, State};
use crate::ui::status::count;
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Clear, Widget};

/// Results ranked per keystroke (more are ranked when the list scrolls).
const TOP: usize = 200;

/// The search prompt with its results.
pub struct SearchView {
    /// The text typed.
    pub input: String,
    /// Cursor position in `input`, in chars.
    pub cursor: usize,
    /// Fuzzy or regex.
    pub mode: Mode,
    /// Results of the last valid query.
    pub results: Option<Results>,
    matcher: Option<Matcher>,
    /// The error of the current query (invalid regex), shown inline.
    pub error: Option<String>,
    /// Result under the cursor.
    pub selected: usize,
    /// Position in the history while browsing it with ↑ / ↓ in an empty prompt.
    history: Option<usize>,
}

impl std::fmt::Debug for SearchView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchView")
            .field("input", &self.input)
            .field("mode", &self.mode)
            .field("hits", &self.results.as_ref().map(|r| r.hits.len()))
            .field("error", &self.error)
            .finish()
    }
}

impl SearchView {
    /// A prompt over the open capture, showing every name (the empty query).
    pub fn new(st: &State) -> SearchView {
        let mut v = SearchView {
            input: String::new(),
            cursor: 0,
            mode: Mode::Fuzzy,
            results: None,
            matcher: None,
            error: None,
            selected: 0,
            history: None,
        };
        v.run(st);
        v
    }

    /// Runs the current query, narrowing the previous results when it extends them.
    fn run(&mut self, st: &State) {
        let Some(l) = st.loaded() else {
            return;
        };
        let q = Query::parse(&self.input, self.mode);
        let engine = l.search_engine();
        match engine.search(&l.cap, &l.index, &q, self.results.as_ref(), TOP) {
            Ok(r) => {
                self.matcher = Matcher::new(&q).ok();
                self.results = Some(r);
                self.error = None;
                self.selected = 0;
            }
            // Keep the last good results; show why this query is not one.
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    fn edit(&mut self, k: &KeyEvent) -> bool {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        let chars: Vec<char> = self.input.chars().collect();
        let mut c = self.cursor.min(chars.len());
        let mut out = chars.clone();
        match k.code {
            KeyCode::Char('u') if ctrl => {
                out.drain(..c);
                c = 0;
            }
            KeyCode::Char('w') if ctrl => {
                let mut s = c;
                while s > 0 && out[s - 1] == ' ' {
                    s -= 1;
                }
                while s > 0 && out[s - 1] != ' ' {
                    s -= 1;
                }
                out.drain(s..c);
                c = s;
            }
            KeyCode::Char('a') if ctrl => c = 0,
            KeyCode::Char('e') if ctrl => c = out.len(),
            KeyCode::Char(ch) if !ctrl && !k.modifiers.contains(KeyModifiers::ALT) => {
                out.insert(c, ch);
                c += 1;
            }
            KeyCode::Backspace if c > 0 => {
                out.remove(c - 1);
                c -= 1;
            }
            KeyCode::Delete if c < out.len() => {
                out.remove(c);
            }
            KeyCode::Left => c = c.saturating_sub(1),
            KeyCode::Right => c = (c + 1).min(out.len()),
            KeyCode::Home => c = 0,
            KeyCode::End => c = out.len(),
            _ => return false,
        }
        self.cursor = c;
        if out != chars {
            self.input = out.into_iter().collect();
            self.history = None;
            return true;
        }
        // Cursor moves only.
        self.cursor = c;
        false
    }

    fn rows_shown(&self, st: &State) -> usize {
        popup(Rect::new(0, 0, st.size.0, st.size.1))
            .height
            .saturating_sub(5) as usize
    }

    fn recall(&mut self, st: &State, older: bool) {
        let h = &st.search_history;
        if h.is_empty() {
            return;
        }
        let next = match (self.history, older) {
            (None, true) => Some(h.len() - 1),
            (None, false) => None,
            (Some(i), true) => Some(i.saturating_sub(1)),
            (Some(i), false) if i + 1 < h.len() => Some(i + 1),
            (Some(_), false) => None,
        };
        self.history = next;
        self.input = next.map(|i| h[i].clone()).unwrap_or_default();
        self.cursor = self.input.chars().count();
        // History entries need not extend the current results.
        self.results = None;
        self.run(st);
        self.history = next;
    }

    /// Jumps to the first occurrence of the selected result.
    fn confirm(&mut self, st: &State) -> Vec<Msg> {
        let (Some(l), Some(r)) = (st.loaded(), self.results.as_mut()) else {
            return vec![Msg::Pop];
        };
        r.rank_top(&l.cap, self.selected + 1);
        let Some(hit) = r.hits.get(self.selected).copied() else {
            return vec![Msg::Notice("no match".into())];
        };
        let occ = Occurrences::of_names(&l.cap, &l.index, &[hit.name], &r.filter);
        let ids = occ.ids().to_vec();
        let name = text::fit(&text::sanitize(l.cap.strings.get(hit.name)), 40).into_owned();
        let Some(&first) = ids.first() else {
            return vec![Msg::Notice(format!(
                "{name}: only aggregated (untimed) events"
            ))];
        };
        let mut msgs = vec![Msg::Pop];
        if !self.input.trim().is_empty() {
            msgs.push(Msg::RememberSearch(self.input.clone()));
        }
        let hits = HitList::new(&l.cap, format!("“{name}”"), ids);
        msgs.push(Msg::SetHits(hits));
        msgs.push(Msg::JumpTo(first));
        msgs
    }
}

impl View for SearchView {
    fn kind(&self) -> ViewKind {
        ViewKind::Search
    }

    fn is_popup(&self) -> bool {
        true
    }

    fn on_key(&mut self, key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg> {
        let n = self.results.as_ref().map_or(0, |r| r.hits.len());
        match action {
            Some(Action::Back) => return vec![Msg::Pop],
            Some(Action::Quit) if key.modifiers.contains(KeyModifiers::CONTROL) => {
                return vec![Msg::Quit];
            }
            Some(Action::Confirm) => return self.confirm(st),
            Some(Action::ToggleRegex) => {
                self.mode = match self.mode {
                    Mode::Fuzzy => Mode::Regex,
                    Mode::Regex => Mode::Fuzzy,
                };
                self.results = None;
                self.run(st);
                return Vec::new();
            }
            Some(Action::Up) if self.input.is_empty() || self.history.is_some() => {
                self.recall(st, true);
                return Vec::new();
            }
            Some(Action::Down) if self.history.is_some() => {
                self.recall(st, false);
                return Vec::new();
            }
            Some(Action::Down) => self.selected = (self.selected + 1).min(n.saturating_sub(1)),
            Some(Action::Up) => self.selected = self.selected.saturating_sub(1),
            Some(Action::PageDown) => {
                self.selected = (self.selected + self.rows_shown(st)).min(n.saturating_sub(1))
            }
            Some(Action::PageUp) => {
                self.selected = self.selected.saturating_sub(self.rows_shown(st))
            }
            _ => {
                if self.edit(key) {
                    self.run(st);
                }
                return Vec::new();
            }
        }
        // Rank enough for the rows the cursor reached.
        let want = self.selected + self.rows_shown(st) + 1;
        if let (Some(l), Some(r)) = (st.loaded(), self.results.as_mut()) {
            r.rank_top(&l.cap, want);
        }
        Vec::new()
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        let r = popup(area);
        if r.height < 5 || r.width < 20 {
            return;
        }
        Clear.render(r, buf);
        let mode = match self.mode {
            Mode::Fuzzy => "fuzzy",
            Mode::Regex => "regex",
        };
        let title = format!(" search every event · {mode} (Ctrl-R) · Enter jumps · Esc closes ");
        let block = Block::default().borders(Borders::ALL).title(title);
        let inner = block.inner(r);
        block.render(r, buf);
        let w = inner.width as usize;
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let dim = Style::default().add_modifier(Modifier::DIM);
        // Prompt with a block cursor.
        let shown = text::sanitize(&self.input);
        let before: String = shown.chars().take(self.cursor).collect();
        let prompt = format!("/ {before}");
        buf.set_stringn(inner.x, inner.y, &prompt, w, bold);
        let cx = inner.x + text::width(&prompt).min(w.saturating_sub(1)) as u16;
        let after: String = shown.chars().skip(self.cursor).collect();
        buf.set_stringn(
            cx,
            inner.y,
            &after,
            w.saturating_sub((cx - inner.x) as usize),
            bold,
        );
        if let Some(c) = buf.cell_mut((cx, inner.y)) {
            c.modifier.insert(Modifier::REVERSED);
        }
        // Status: counts or the error.
        let Some(l) = st.loaded() else {
            return;
        };
        let status = match (&self.error, &self.results) {
            (Some(e), _) => format!(
                "error: {} (showing the last valid results)",
                text::sanitize(e)
            ),
            (None, Some(res)) => format!(
                "{} names match (of {}) · filters: cat: track: proc: arg:KEY=VALUE",
                count(res.hits.len() as u64),
                count(l.built_search_engine().map_or(0, |e| e.len()) as u64),
            ),
            (None, None) => String::new(),
        };
        let status_style = if self.error.is_some() {
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        } else {
            dim
        };
        buf.set_stringn(inner.x, inner.y + 1, text::fit(&status, w), w, status_style);
        let Some(res) = &self.results else {
            return;
        };
        let range = match st.mark {
            Mark::Range(a, b, _) => Some((a, b)),
            _ => None,
        };
        // Columns: count, [in range], total, self, then name and tracks share the rest.
        let nums = if range.is_some() { 44 } else { 34 };
        let name_w = (w.saturating_sub(nums) * 3 / 5).max(10);
        let head = format!(
            "{:<name_w$} {:>8}{} {:>9} {:>9}  tracks",
            "name",
            "count",
            if range.is_some() { "  in range" } else { "" },
            "total",
            "self"
        );
        buf.set_stringn(inner.x, inner.y + 2, text::fit(&head, w), w, bold);
        let body = inner.height.saturating_sub(3) as usize;
        let top = self.selected.saturating_sub(body.saturating_sub(1));
        let ranked = res.ranked();
        for (row, i) in (top..res.hits.len().min(top + body)).enumerate() {
            if i >= ranked {
                break;
            }
            let h = res.hits[i];
            let y = inner.y + 3 + row as u16;
            let style = if i == self.selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            draw_row(self, l, res, h, range, (inner.x, y, w, name_w), style, buf);
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// One result row: highlighted name, numbers, tracks.
#[allow(clippy::too_many_arguments)]
fn draw_row(
    v: &SearchView,
    l: &Loaded,
    res: &Results,
    h: crate::analysis::search::Hit,
    range: Option<(Ps, Ps)>,
    (x, y, w, name_w): (u16, u16, usize, usize),
    style: Style,
    buf: &mut Buffer,
) {
    let cap = &l.cap;
    let raw = cap.strings.get(h.name);
    let name = text::sanitize(raw);
    let fitted = text::fit(&name, name_w);
    buf.set_stringn(x, y, " ".repeat(w), w, style);
    buf.set_stringn(x, y, &fitted, name_w, style);
    // Highlight matched characters (positions in the raw name; sanitizing keeps printable
    // names unchanged, so only highlight when it did).
    if let Some(m) = &v.matcher
        && name.as_ref() == raw
    {
        let ix = m.indices(raw);
        let mut col = 0usize;
        for (ci, ch) in raw.chars().enumerate() {
            let cw = text::width(ch.encode_utf8(&mut [0; 4]));
            if col + cw > name_w.saturating_sub(1) {
                break;
            }
            if ix.binary_search(&ci).is_ok()
                && let Some(c) = buf.cell_mut((x + col as u16, y))
            {
                c.modifier.insert(Modifier::BOLD | Modifier::UNDERLINED);
            }
            col += cw;
        }
    }
    let in_range = range.map(|(a, b)| {
        let occ = Occurrences::of_names(cap, &l.index, &[h.name], &res.filter);
        format!("  {:>8}", count(occ.count_in(cap, a, b) as u64))
    });
    let tracks = l
        .built_search_engine()
        .map(|e| e.tracks(h.entry, &res.filter))
        .unwrap_or_default();
    let mut tnames: Vec<String> = tracks
        .iter()
        .take(3)
        .map(|&t| text::sanitize(&cap.track_name(t)).into_owned())
        .collect();
    if tracks.len() > 3 {
        tnames.push(format!("+{}", tracks.len() - 3));
    }
    let nums = format!(
        " {:>8}{} {:>9} {:>9}  {}",
        count(h.count),
        in_range.unwrap_or_default(),
        format_dur(h.total),
        format_dur(h.self_ps),
        tnames.join(", ")
    );
    let nx = x + name_w as u16;
    buf.set_stringn(
        nx,
        y,
        text::fit(&nums, w.saturating_sub(name_w)),
        w.saturating_sub(name_w),
        style,
    );
}

/// The popup's rectangle: most of the screen, centred.
fn popup(area: Rect) -> Rect {
    let w = area.width.saturating_sub(4).min(140);
    let h = area.height.saturating_sub(4).min(30);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}
