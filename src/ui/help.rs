//! The `?` overlay listing every key.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Clear, Widget};

/// Every key and what it does.
pub const KEYS: &[(&str, &str)] = &[
    ("w / + / =", "zoom in (around the selection or the centre)"),
    ("s / -", "zoom out"),
    ("a / ←", "pan left"),
    ("d / →", "pan right"),
    ("j / ↓, k / ↑", "next / previous lane"),
    ("PgDn / PgUp", "page down / up"),
    ("g / G", "first / last track"),
    ("Tab / S-Tab", "next / previous track"),
    ("h / l", "previous / next slice on the lane"),
    (
        "Enter",
        "select the slice under the cursor; again: zoom to it",
    ),
    ("u", "select the parent"),
    ("f", "fit the selection (or the marked range)"),
    ("0 / Home", "show the whole capture"),
    ("Space", "collapse / expand the process"),
    ("p", "jump to the flow / correlation partner"),
    ("> / <", "next / previous partner"),
    ("m", "mark a range (press at both ends)"),
    ("c", "colour by name / by category"),
    (
        "Esc",
        "cancel load, close popup, clear mark/selection, picker",
    ),
    ("?", "this help"),
    ("q / Ctrl-C", "quit"),
];

/// Draws the overlay centred in `area`.
pub fn draw(buf: &mut Buffer, area: Rect) {
    let h = (KEYS.len() as u16 + 2).min(area.height);
    let w = 72.min(area.width);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    Clear.render(r, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" keys — any key closes ");
    let inner = block.inner(r);
    block.render(r, buf);
    for (i, (k, what)) in KEYS.iter().enumerate().take(inner.height as usize) {
        let y = inner.y + i as u16;
        buf.set_stringn(
            inner.x + 1,
            y,
            k,
            14,
            Style::default().add_modifier(Modifier::BOLD),
        );
        buf.set_stringn(
            inner.x + 16,
            y,
            what,
            inner.width.saturating_sub(16) as usize,
            Style::default(),
        );
    }
}
