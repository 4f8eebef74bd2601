//! The `?` popup: the keys of the view below it, generated from the key table (so rebinding a
//! key in `config.toml` changes the help too). `j`/`k` scroll; any other key closes it.

use super::View;
use crate::index::Cell;
use crate::ui::action::Action;
use crate::ui::keymap::ViewKind;
use crate::ui::msg::Msg;
use crate::ui::state::State;
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Clear, Widget};

/// The help popup for the bindings of `of`.
#[derive(Debug)]
pub struct HelpView {
    /// The view whose keys are listed (with the global ones after).
    pub of: ViewKind,
    /// First row shown.
    pub scroll: usize,
}

impl HelpView {
    /// Help for the view `of`.
    pub fn new(of: ViewKind) -> HelpView {
        HelpView { of, scroll: 0 }
    }
}

/// The message that opens the key help for the view `kind` (drawn over it).
pub fn help_for(kind: ViewKind) -> Msg {
    Msg::Push(Box::new(HelpView::new(kind)))
}

impl View for HelpView {
    fn kind(&self) -> ViewKind {
        ViewKind::Help
    }

    fn is_popup(&self) -> bool {
        true
    }

    fn on_key(&mut self, _key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg> {
        match action {
            Some(Action::Down) => {
                let rows = st.keymap.help_rows(self.of);
                let n = lines(&rows, st.size.0).len();
                let inner_h = st.size.1.saturating_sub(2) as usize;
                self.scroll = (self.scroll + 1).min(n.saturating_sub(inner_h));
                Vec::new()
            }
            Some(Action::Up) => {
                self.scroll = self.scroll.saturating_sub(1);
                Vec::new()
            }
            Some(Action::Quit) => vec![Msg::Pop, Msg::Quit],
            _ => vec![Msg::Pop],
        }
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        let rows = st.keymap.help_rows(self.of);
        let lines = lines(&rows, area.width);
        let inner = scroll_popup(buf, area, POPUP_W, lines.len(), "keys");
        let inner_h = inner.height as usize;
        let kw = key_width(&rows);
        let scroll = self.scroll.min(lines.len().saturating_sub(inner_h));
        for (i, (k, what)) in lines.iter().skip(scroll).take(inner_h).enumerate() {
            let y = inner.y + i as u16;
            buf.set_stringn(
                inner.x + 1,
                y,
                text::fit(k, kw),
                kw,
                Style::default().add_modifier(Modifier::BOLD),
            );
            let x = inner.x + 2 + kw as u16;
            buf.set_stringn(
                x,
                y,
                what,
                inner.right().saturating_sub(x) as usize,
                Style::default(),
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

/// The popup's width at most (it is narrower on a narrower terminal).
const POPUP_W: u16 = 76;

/// Draws a popup `w` cells wide (at most the area), centred in `area`, high enough for `n`
/// lines, titled `<name> — any key closes` (and `(j/k scroll)` when the lines do not fit);
/// returns its inner area, where the caller draws the lines.
pub(super) fn scroll_popup(buf: &mut Buffer, area: Rect, w: u16, n: usize, name: &str) -> Rect {
    let h = (n as u16).saturating_add(2).min(area.height);
    let w = w.min(area.width);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    Clear.render(r, buf);
    let scroll = if n > h.saturating_sub(2) as usize {
        " (j/k scroll)"
    } else {
        ""
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" {name} — any key closes{scroll} "));
    let inner = block.inner(r);
    block.render(r, buf);
    inner
}

/// Width of the key column.
fn key_width(rows: &[(String, &str)]) -> usize {
    rows.iter()
        .map(|(k, _)| text::width(k))
        .max()
        .unwrap_or(0)
        .clamp(8, 22)
}

/// The popup's lines on a terminal `term_w` columns wide: each description wrapped to the room
/// beside the key column (continuation lines have no key), so no line is cut.
fn lines(rows: &[(String, &str)], term_w: u16) -> Vec<(String, String)> {
    let inner = POPUP_W.min(term_w).saturating_sub(2) as usize;
    let room = inner.saturating_sub(key_width(rows) + 2);
    let mut out = Vec::new();
    for (k, what) in rows {
        for (j, part) in super::full_details::wrap(what, room)
            .into_iter()
            .enumerate()
        {
            let key = if j == 0 { k.clone() } else { String::new() };
            out.push((key, part));
        }
    }
    out
}
