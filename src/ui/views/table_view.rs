//! The table popup's keys and drawing: the [`View`] impl of [`TableView`] (its data, sorting,
//! filtering and `Enter` targets are in `table.rs`).

use super::View;
use super::table::{Prompt, TableView, Target};
use crate::index::Cell;
use crate::ui::action::Action;
use crate::ui::keymap::ViewKind;
use crate::ui::msg::Msg;
use crate::ui::state::State;
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Clear, Widget};

impl View for TableView {
    fn kind(&self) -> ViewKind {
        self.kind
    }

    fn is_popup(&self) -> bool {
        true
    }

    fn on_key(&mut self, key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg> {
        if self.prompt.is_some() {
            return self.prompt_key(key, st);
        }
        if self.typing {
            if matches!(key.code, KeyCode::Esc | KeyCode::Enter) {
                self.typing = false;
            } else if edit_line(&mut self.filter, key) {
                self.refresh();
            }
            return Vec::new();
        }
        let n = self.order.len();
        match action {
            Some(Action::Back) => return vec![Msg::Pop],
            Some(Action::Quit) => return vec![Msg::Quit],
            Some(Action::Help) => return vec![super::help::help_for(self.kind)],
            Some(Action::Confirm) => return self.confirm(st),
            Some(Action::Down) => self.selected = (self.selected + 1).min(n.saturating_sub(1)),
            Some(Action::Up) => self.selected = self.selected.saturating_sub(1),
            Some(Action::PageDown) => {
                self.selected = (self.selected + Self::page(st)).min(n.saturating_sub(1))
            }
            Some(Action::PageUp) => self.selected = self.selected.saturating_sub(Self::page(st)),
            Some(Action::Top) => self.selected = 0,
            Some(Action::Bottom) => self.selected = n.saturating_sub(1),
            Some(Action::SortNext) => {
                let c = match self.sort {
                    None => 0,
                    Some((c, _)) => (c + 1) % self.columns.len().max(1),
                };
                self.sort_by(c, false);
            }
            Some(Action::SortReverse) => {
                let (c, rev) = self.sort.unwrap_or((0, false));
                self.sort_by(c, !rev);
            }
            Some(Action::Search) => self.typing = true,
            Some(a) => {
                if let Some((label, text)) = self.source.as_ref().and_then(|s| s.prompt(a)) {
                    self.prompt = Some(Prompt {
                        action: a,
                        label,
                        text,
                        error: None,
                    });
                    return Vec::new();
                }
                if let Some(msgs) = self.source.as_mut().and_then(|s| s.on_action_msgs(a, st)) {
                    return msgs;
                }
                match self.source.as_mut().and_then(|s| s.on_action(a, st)) {
                    Some(Ok(new)) => self.replace(new),
                    Some(Err(m)) => return vec![Msg::Notice(m)],
                    None => {}
                }
            }
            None => {}
        }
        Vec::new()
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        let w = area.width.saturating_sub(4).min(160);
        let h = area.height.saturating_sub(4);
        let r = Rect::new(area.x + (area.width - w) / 2, area.y + 2, w, h);
        if r.height < 5 || r.width < 20 {
            return;
        }
        Clear.render(r, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .title(format!(" {} ", text::sanitize(&self.title)));
        let inner = block.inner(r);
        block.render(r, buf);
        let iw = inner.width as usize;
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let dim = Style::default().add_modifier(Modifier::DIM);
        let sort = match self.sort {
            Some((c, rev)) => format!(
                "sorted by {}{}",
                self.columns.get(c).map_or("", |c| c.name),
                if rev { " (reversed)" } else { "" }
            ),
            None => "unsorted".into(),
        };
        if let Some(p) = &self.prompt {
            // The prompt replaces the info line while it is open.
            // A refused range says why right there (the status line may be too narrow).
            let line = format!(
                "{}: {}▏ · {}",
                text::sanitize(&p.label),
                text::sanitize(&p.text),
                p.error
                    .as_deref()
                    .map_or("Enter apply · Esc cancel".into(), text::sanitize)
            );
            buf.set_stringn(inner.x, inner.y, text::fit(&line, iw), iw, bold);
        }
        let filter = if self.typing || !self.filter.is_empty() {
            format!(
                " · filter: {}{}",
                text::sanitize(&self.filter),
                if self.typing { "▏" } else { "" }
            )
        } else {
            String::new()
        };
        let kb = &st.keymap;
        let hint = |a| {
            kb.keys(self.kind, a)
                .first()
                .map_or(String::new(), |k| k.to_string())
        };
        let line = format!(
            "{} rows · {sort}{filter} · {}/{} sort · {} filter · Enter go · Esc close{}",
            self.order.len(),
            hint(Action::SortNext),
            hint(Action::SortReverse),
            hint(Action::Search),
            String::new()
        );
        // The note follows on the same line when it fits, else it is wrapped above the legend.
        let note_apart =
            !self.note.is_empty() && text::width(&line) + 3 + text::width(&self.note) > iw;
        let line = if self.note.is_empty() || note_apart {
            line
        } else {
            format!("{line} · {}", self.note)
        };
        let heads: Vec<String> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| match self.sort {
                Some((s, rev)) if s == i => format!("{}{}", c.name, if rev { "▲" } else { "▼" }),
                _ => c.name.to_string(),
            })
            .collect();
        // Column widths: names take the space first; numbers shrink, then columns hide.
        let key = (iw, self.sort, self.rows.len(), self.rows.as_ptr() as usize);
        let lay = {
            let mut cache = self.layout.borrow_mut();
            match cache.as_ref() {
                Some((k, l)) if *k == key => l.clone(),
                _ => {
                    let declared: Vec<u16> = self.columns.iter().map(|c| c.width).collect();
                    // Never hide the column that tells two rows of the same name apart.
                    let text_cols: Vec<usize> = (0..self.columns.len())
                        .filter(|&i| !self.columns[i].right)
                        .collect();
                    let mut keep = self.keep.clone();
                    keep.extend(super::table_layout::telling_apart(
                        self.rows.iter().map(|r| r.cells.as_slice()),
                        &text_cols,
                    ));
                    let l = super::table_layout::layout(
                        &declared,
                        &heads,
                        self.rows.iter().map(|r| r.cells.as_slice()),
                        iw,
                        &keep,
                    );
                    *cache = Some((key, l.clone()));
                    l
                }
            }
        };
        let widths: Vec<u16> = lay.widths.iter().map(|w| w.unwrap_or(0)).collect();
        if self.prompt.is_none() {
            // Hidden columns are said first: the rest of the line may be cut.
            let line = match lay.hidden() {
                0 => line,
                1 => format!("1 column hidden (narrow terminal) · {line}"),
                h => format!("{h} columns hidden (narrow terminal) · {line}"),
            };
            buf.set_stringn(inner.x, inner.y, text::fit(&line, iw), iw, dim);
        }
        let put_row = |buf: &mut Buffer,
                       y: u16,
                       cells: &[String],
                       name: Option<&str>,
                       style: Style,
                       head: bool| {
            let mut x = inner.x;
            for (i, c) in self.columns.iter().enumerate() {
                if lay.widths[i].is_none() {
                    continue;
                }
                let cw = widths[i] as usize;
                if x >= inner.right() {
                    break;
                }
                let room = (inner.right() - x) as usize;
                let s = cells.get(i).map_or("", String::as_str);
                let s = if lay.compact && i > 0 && !head {
                    super::table_layout::compact(s)
                } else {
                    std::borrow::Cow::Borrowed(s)
                };
                let t = match name {
                    Some(n) if i == 0 => n.to_string(),
                    _ => text::fit(&text::sanitize(&s), cw).into_owned(),
                };
                let pad = if c.right {
                    format!("{t:>cw$}")
                } else {
                    format!("{t:<cw$}")
                };
                buf.set_stringn(x, y, &pad, room.min(cw), style);
                x += widths[i] + 1;
            }
        };
        // The legend (wrapped), then the column heads.
        let mut legend = if note_apart {
            super::full_details::wrap(&text::sanitize(&self.note), iw)
        } else {
            Vec::new()
        };
        let max_legend = if note_apart { 5 } else { 3 };
        if !self.legend.is_empty() {
            legend.extend(super::full_details::wrap(&text::sanitize(&self.legend), iw));
        }
        legend.truncate(max_legend.min(inner.height.saturating_sub(3) as usize));
        for (k, l) in legend.iter().enumerate() {
            buf.set_stringn(inner.x, inner.y + 1 + k as u16, l, iw, Style::default());
        }
        let inner = Rect {
            y: inner.y + legend.len() as u16,
            height: inner.height.saturating_sub(legend.len() as u16),
            ..inner
        };
        put_row(buf, inner.y + 1, &heads, None, bold, true);
        // The finding about the selected row, if any, on the last line (the `!` view's).
        let concern = self
            .order
            .get(self.selected)
            .and_then(|&ri| self.rows.get(ri))
            .and_then(|r| {
                let ids: &[u32] = match &r.target {
                    Target::Slice(id) => std::slice::from_ref(id),
                    Target::Slices(v) => v,
                    _ => &[],
                };
                // A critical-path row: its kind (host work of a host-bound path).
                let kind = self
                    .title
                    .starts_with("critical path")
                    .then(|| r.cells.get(4));
                super::findings::concerning(st, r.cells.first()?, ids, kind.flatten())
            });
        if let Some(c) = &concern
            && inner.height > 3
        {
            let y = inner.y + inner.height - 1;
            buf.set_stringn(inner.x, y, text::fit(c, iw), iw, Style::default());
        }
        let body = inner
            .height
            .saturating_sub(2 + u16::from(concern.is_some())) as usize;
        let top = self.selected.saturating_sub(body.saturating_sub(1));
        // Names cut so the rows shown stay apart (`…stream 7` / `…stream 13`).
        let shown: Vec<String> = self
            .order
            .iter()
            .skip(top)
            .take(body)
            .map(|&ri| {
                let c = self.rows[ri].cells.first().map_or("", String::as_str);
                text::sanitize(c).into_owned()
            })
            .collect();
        let names = text::fit_column(&shown, widths.first().map_or(0, |&w| w as usize));
        for (k, &ri) in self.order.iter().skip(top).take(body).enumerate() {
            let row = &self.rows[ri];
            let y = inner.y + 2 + k as u16;
            let sel = top + k == self.selected;
            let style = if sel {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            if sel {
                buf.set_stringn(inner.x, y, " ".repeat(iw), iw, style);
            }
            put_row(
                buf,
                y,
                &row.cells,
                names.get(k).map(String::as_str),
                style,
                false,
            );
            if let (Some(f), Some(Some(lw))) = (row.bar, lay.widths.last()) {
                // An inline bar in the last column, beside its text (`███▌  57%`), drawn where
                // the column is (it may be cut at the right edge).
                let x0 = inner.x
                    + lay.widths[..lay.widths.len() - 1]
                        .iter()
                        .flatten()
                        .map(|w| w + 1)
                        .sum::<u16>();
                let label = row.cells.last().map_or("", String::as_str);
                let (bar, label) = bar_cell(f, &text::sanitize(label), *lw as usize);
                if x0 < inner.right() {
                    let room = (inner.right() - x0) as usize;
                    let bw = text::width(&bar);
                    buf.set_stringn(x0, y, &bar, room, style.add_modifier(Modifier::DIM));
                    if bw < room {
                        buf.set_stringn(x0 + bw as u16, y, &label, room - bw, style);
                    }
                }
            }
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

impl TableView {
    /// A key while the source's prompt is open: text, `Backspace`, `Ctrl-U` (clear), `Esc`
    /// (close), `Enter` (apply: the rebuilt table, or the reason in the status line).
    fn prompt_key(&mut self, key: &KeyEvent, st: &State) -> Vec<Msg> {
        let Some(p) = self.prompt.as_mut() else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Esc => self.prompt = None,
            KeyCode::Enter => {
                let (action, text) = (p.action, p.text.clone());
                let Some(src) = self.source.as_mut() else {
                    self.prompt = None;
                    return Vec::new();
                };
                match src.on_prompt(action, &text, st) {
                    Ok(new) => {
                        self.prompt = None;
                        self.replace(new);
                    }
                    Err(m) => {
                        if let Some(p) = self.prompt.as_mut() {
                            p.error = Some(m.clone());
                        }
                        return vec![Msg::Notice(m)];
                    }
                }
            }
            _ => {
                if edit_line(&mut p.text, key) {
                    p.error = None;
                }
            }
        }
        Vec::new()
    }
}

/// The inline bar of a fraction `f` (0..=1) beside its `label`, in `width` cells: the bar in
/// eighths of a cell (`███▌`), padded, then a space and the label right-aligned. Returns (bar
/// with its padding, label with its leading space); the label alone when there is no room.
pub fn bar_cell(f: f64, label: &str, width: usize) -> (String, String) {
    let lw = text::width(label);
    let room = width.saturating_sub(lw + 1);
    if room == 0 {
        return (String::new(), format!("{label:>width$}"));
    }
    let eighths = (f.clamp(0.0, 1.0) * room as f64 * 8.0).round() as usize;
    let mut bar = "█".repeat(eighths / 8);
    if let Some(part) = (eighths % 8).checked_sub(1) {
        bar.push(['▏', '▎', '▍', '▌', '▋', '▊', '▉'][part]);
    }
    let pad = room.saturating_sub(text::width(&bar));
    (format!("{bar}{}", " ".repeat(pad)), format!(" {label}"))
}

/// A key typed into one line of text (the filter, a prompt): `Backspace`, `Ctrl-U` (clear) and
/// printable characters edit `text`. True when the key was one of those.
fn edit_line(text: &mut String, key: &KeyEvent) -> bool {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char('u') if ctrl => text.clear(),
        KeyCode::Char(c) if !ctrl && !c.is_control() => text.push(c),
        _ => return false,
    }
    true
}
