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
                let n = st.keymap.help_rows(self.of).len();
                self.scroll = (self.scroll + 1).min(n.saturating_sub(1));
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
        let h = (rows.len() as u16 + 2).min(area.height);
        let w = 76.min(area.width);
        let r = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        );
        Clear.render(r, buf);
        let inner_h = h.saturating_sub(2) as usize;
        let title = if rows.len() > inner_h {
            " keys — any key closes (j/k scroll) "
        } else {
            " keys — any key closes "
        };
        let block = Block::default().borders(Borders::ALL).title(title);
        let inner = block.inner(r);
        block.render(r, buf);
        let kw = rows
            .iter()
            .map(|(k, _)| text::width(k))
            .max()
            .unwrap_or(0)
            .clamp(8, 22);
        let scroll = self.scroll.min(rows.len().saturating_sub(inner_h));
        for (i, (k, what)) in rows.iter().skip(scroll).take(inner_h).enumerate() {
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
