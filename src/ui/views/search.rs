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
        let scattered = self.mode == Mode::Fuzzy
            && !self.input.trim().is_empty()
            && self.results.as_ref().is_some_and(Results::only_scattered);
        let status = match (&self.error, &self.results) {
            (Some(e), _) => format!(
                "error: {} (showing the last valid results)",
                text::sanitize(e)
            ),
            // Say so above the list when no name holds the text as typed.
            (None, Some(res)) if scattered => format!(
                "no name contains “{}” · {} fuzzy matches (its letters in order, apart; of {})",
                text::sanitize(self.input.trim()),
                count(res.hits.len() as u64),
                count(l.built_search_engine().map_or(0, |e| e.len()) as u64),
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
        } else if scattered {
            bold
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
        let body = inner.height.saturating_sub(3) as usize;
        let top = self.selected.saturating_sub(body.saturating_sub(1));
        let ranked = res.ranked();
        let shown: Vec<usize> = (top..res.hits.len().min(top + body).min(ranked)).collect();
        // Columns: name, count, [in range], total, self, tracks. Names take the space first,
        // the tracks keep at least a few columns.
        let nums = if range.is_some() { 44 } else { 34 };
        let longest = shown
            .iter()
            .map(|&i| text::width(&text::sanitize(l.cap.strings.get(res.hits[i].name))))
            .max()
            .unwrap_or(0);
        let rest = w.saturating_sub(nums);
        let name_w = longest
            .max(4)
            .min(rest.saturating_sub(14))
            .max(rest * 3 / 5)
            .max(10);
        let head = format!(
            "{:<name_w$} {:>8}{} {:>9} {:>9}  tracks",
            "name",
            "count",
            if range.is_some() { "  in range" } else { "" },
            "total",
            "self"
        );
        buf.set_stringn(inner.x, inner.y + 2, text::fit(&head, w), w, bold);
        let names = shown_names(self, l, res, &shown, name_w);
        for (row, (&i, name)) in shown.iter().zip(&names).enumerate() {
            let h = res.hits[i];
            let y = inner.y + 3 + row as u16;
            let style = if i == self.selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            draw_row(l, res, h, name, range, (inner.x, y, w, name_w), style, buf);
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// A name as drawn: its characters, each with whether it is a matched one (`…` never is).
type Shown = Vec<(char, bool)>;

/// The names of the rows shown, cut to `max` columns: each keeps its matched characters in view
/// ([`cut_around`]); names whose cuts would read the same are cut as the tables cut them
/// ([`text::fit_column`]: what tells them apart stays; highlighted only in a plain cut).
fn shown_names(
    v: &SearchView,
    l: &Loaded,
    res: &Results,
    shown: &[usize],
    max: usize,
) -> Vec<Shown> {
    let names: Vec<(String, Vec<usize>)> = shown
        .iter()
        .map(|&i| {
            let raw = l.cap.strings.get(res.hits[i].name);
            let name = text::sanitize(raw);
            // Matched positions are in the raw name: only when sanitizing changed nothing.
            let ix = match &v.matcher {
                Some(m) if name.as_ref() == raw => m.indices(raw),
                _ => Vec::new(),
            };
            (name.into_owned(), ix)
        })
        .collect();
    let mut out: Vec<Shown> = names.iter().map(|(n, ix)| cut_around(n, ix, max)).collect();
    let plain: Vec<String> = out
        .iter()
        .map(|s| s.iter().map(|c| c.0).collect())
        .collect();
    let mut groups: rustc_hash::FxHashMap<&str, Vec<usize>> = rustc_hash::FxHashMap::default();
    for (k, p) in plain.iter().enumerate() {
        groups.entry(p.as_str()).or_default().push(k);
    }
    for ks in groups.into_values().filter(|ks| ks.len() > 1) {
        // Cut as the tables cut (the plain cut, else the word where they differ); a name
        // left with its plain cut keeps the highlight of its head.
        let group: Vec<String> = ks.iter().map(|&k| names[k].0.clone()).collect();
        for (&k, cut) in ks.iter().zip(text::fit_column(&group, max)) {
            let (name, ix) = &names[k];
            out[k] = if cut == text::fit(name, max) {
                let head = cut.chars().count().saturating_sub(1);
                let ix: Vec<usize> = ix.iter().copied().filter(|&i| i < head).collect();
                cut_around(name, &ix, max)
            } else {
                cut.chars().map(|c| (c, false)).collect()
            };
        }
    }
    out
}

/// `name` cut to `max` columns so that its matched characters (`ix`, char positions) stay in
/// view: the plain cut when they are all in its head, else a short head, `…`, and the part of
/// the name from a little before the first match the head does not show (`…` again when cut).
fn cut_around(name: &str, ix: &[usize], max: usize) -> Shown {
    let cw = |c: char| text::width(c.encode_utf8(&mut [0; 4]));
    let chars: Vec<(char, bool)> = name
        .chars()
        .enumerate()
        .map(|(i, c)| (c, ix.binary_search(&i).is_ok()))
        .collect();
    let total: usize = chars.iter().map(|c| cw(c.0)).sum();
    if total <= max {
        return chars;
    }
    if max == 0 {
        return Vec::new();
    }
    // The chars of `from..` that fit in `room` columns.
    let fit_from = |from: usize, room: usize| {
        let mut w = 0;
        let mut n = 0;
        for &(c, _) in &chars[from..] {
            if w + cw(c) > room {
                break;
            }
            w += cw(c);
            n += 1;
        }
        n
    };
    let ell = ('…', false);
    let plain = fit_from(0, max - 1);
    let first_out = ix.iter().copied().find(|&i| i >= plain);
    let head_n = fit_from(0, max / 3);
    let Some(first) = first_out.filter(|_| head_n > 0 && max >= 12) else {
        let mut v = chars[..plain].to_vec();
        v.push(ell);
        return v;
    };
    let head_w: usize = chars[..head_n].iter().map(|c| cw(c.0)).sum();
    let room = max - head_w - 1;
    let mut start = first.saturating_sub(3).max(head_n);
    let tail_w: usize = chars[start..].iter().map(|c| cw(c.0)).sum();
    let mut v = chars[..head_n].to_vec();
    v.push(ell);
    if tail_w <= room {
        // The rest fits: start earlier to fill the room, end at the name's end.
        let mut w = tail_w;
        while start > head_n && w + cw(chars[start - 1].0) <= room {
            start -= 1;
            w += cw(chars[start].0);
        }
        v.extend_from_slice(&chars[start..]);
    } else {
        let n = fit_from(start, room - 1);
        v.extend_from_slice(&chars[start..start + n]);
        v.push(ell);
    }
    v
}

/// One result row: highlighted name, numbers, tracks.
#[allow(clippy::too_many_arguments)]
fn draw_row(
    l: &Loaded,
    res: &Results,
    h: crate::analysis::search::Hit,
    name: &Shown,
    range: Option<(Ps, Ps)>,
    (x, y, w, name_w): (u16, u16, usize, usize),
    style: Style,
    buf: &mut Buffer,
) {
    let cap = &l.cap;
    buf.set_stringn(x, y, " ".repeat(w), w, style);
    // Matched characters bold and underlined: runs of the same style (a combining mark goes
    // with its base character).
    let mut runs: Vec<(String, bool)> = Vec::new();
    for &(ch, hit) in name {
        let zero = text::width(ch.encode_utf8(&mut [0; 4])) == 0;
        match runs.last_mut() {
            Some((s, h)) if *h == hit || zero => s.push(ch),
            _ => runs.push((ch.to_string(), hit)),
        }
    }
    let mut col = 0usize;
    for (s, hit) in runs {
        let st = if hit {
            style.add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        } else {
            style
        };
        let room = name_w.saturating_sub(col);
        buf.set_stringn(x + col as u16, y, &s, room, st);
        col += text::width(&s).min(room);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &Shown) -> String {
        s.iter().map(|c| c.0).collect()
    }

    fn lit(s: &Shown) -> String {
        s.iter().filter(|c| c.1).map(|c| c.0).collect()
    }

    #[test]
    fn cut_names_keep_their_matches_in_view() {
        let name = "void at::native::vectorized_elementwise_kernel<4, GemmFunctor<float>>";
        let at = name.find("Gemm").expect("in the name");
        let ix: Vec<usize> = (at..at + 4).collect();
        let s = cut_around(name, &ix, 40);
        assert_eq!(text::width(&plain(&s)), 40, "{}", plain(&s));
        assert_eq!(lit(&s), "Gemm", "{}", plain(&s));
        assert!(plain(&s).starts_with("void at::nat"), "{}", plain(&s));
        // Matches in the head: the plain cut.
        let s = cut_around(name, &[0, 1], 20);
        assert_eq!(plain(&s), "void at::native::ve…");
        assert_eq!(lit(&s), "vo");
        // Whole names stay whole.
        assert_eq!(plain(&cut_around("aten::mm", &[6, 7], 20)), "aten::mm");
        // Never wider than asked, whatever the positions.
        for max in 0..45 {
            let s = cut_around(name, &[3, 30, 60], max);
            assert!(text::width(&plain(&s)) <= max, "{max}: {}", plain(&s));
        }
    }
}
