//! `draw(&App, &mut Frame)`: pure rendering of the view stack — the topmost full view, then
//! the popups above it, in order.

use super::app::App;
use crate::index::Cell;
use ratatui::Frame;
use ratatui::buffer::Buffer;

/// Draws the whole screen for `app`.
pub fn draw(app: &App, f: &mut Frame) {
    let buf = f.buffer_mut();
    let mut cells = Vec::new();
    draw_into(app, buf, &mut cells);
}

/// Draws into a buffer covering the terminal; `cells` is reusable scratch.
pub fn draw_into(app: &App, buf: &mut Buffer, cells: &mut Vec<Cell>) {
    let area = buf.area;
    let views = app.views();
    let base = views.iter().rposition(|v| !v.is_popup()).unwrap_or(0);
    for v in &views[base..] {
        v.draw(app, buf, area, cells);
    }
}
