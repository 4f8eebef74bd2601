//! `draw(&App, &mut Frame)`: pure rendering of the view stack over the state — the topmost
//! full view, then the popups above it, in order. Nothing here or in a view's `draw` writes.

use super::app::App;
use super::msg::View;
use super::state::State;
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
    draw_views(app, app.views(), buf, cells);
}

/// Draws `views` (bottom first) from `st`: the topmost full view and the popups above it.
pub fn draw_views(st: &State, views: &[Box<dyn View>], buf: &mut Buffer, cells: &mut Vec<Cell>) {
    let area = buf.area;
    let base = views.iter().rposition(|v| !v.is_popup()).unwrap_or(0);
    for v in views.get(base..).unwrap_or_default() {
        v.draw(st, buf, area, cells);
    }
}
