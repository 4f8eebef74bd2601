//! One timeline row of sorted, disjoint-start spans (steps, graph launches): each span a
//! coloured block with a label when it fits, columns holding several spans shaded `▒`. Work is
//! proportional to the spans in the window (binary search to the first, then at most one span
//! per column: a run of spans ending in a painted column is skipped by another search).

use crate::index::column_edge;
use crate::model::Ps;
use ratatui::buffer::Buffer;
use ratatui::style::{Modifier, Style};

/// Column of time `t` in a window of `cols` columns (may lie outside `0..cols`).
pub fn col_of(t: Ps, (t0, t1): (Ps, Ps), cols: usize) -> i128 {
    let w = i128::from((t1 - t0).max(1));
    (i128::from(t - t0) * cols as i128).div_euclid(w)
}

/// Draws the items of `items` (sorted by start, ends ascending) overlapping the window `win`
/// into row `y`, columns `x0 .. x0 + cols`: `span` gives an item's (start, end) with end > start,
/// `style` the block style of item `i`, `label` its label in at most `room` columns (empty when
/// nothing fits).
#[allow(clippy::too_many_arguments)]
pub fn draw<T>(
    buf: &mut Buffer,
    x0: u16,
    y: u16,
    cols: usize,
    items: &[T],
    win: (Ps, Ps),
    span: impl Fn(&T) -> (Ps, Ps),
    style: impl Fn(usize) -> Style,
    label: impl Fn(usize, &T, usize) -> String,
) {
    if cols == 0 {
        return;
    }
    let mut i = items.partition_point(|s| span(s).1 <= win.0);
    // First column not painted yet.
    let mut free: i128 = 0;
    while let Some(item) = items.get(i) {
        let (start, end) = span(item);
        if start >= win.1 || free >= cols as i128 {
            break;
        }
        let a = col_of(start, win, cols).max(0);
        // The last column the item reaches (an end on a column edge stays left of it).
        let b = (col_of(end - 1, win, cols) + 1).min(cols as i128);
        if b <= free {
            // It ends in an already painted column: that column holds several items. Skip to
            // the first item starting right of it.
            if let Some(c) = buf.cell_mut((x0 + (free - 1).max(0) as u16, y)) {
                c.set_symbol("▒");
            }
            let edge = column_edge(win.0, win.1, cols, free as usize);
            i = (i + 1).max(
                items
                    .partition_point(|s| span(s).0 < edge)
                    .saturating_sub(1),
            );
            continue;
        }
        let a = a.max(free);
        let st = style(i);
        for k in a..b {
            if let Some(c) = buf.cell_mut((x0 + k as u16, y)) {
                c.set_symbol(" ").set_style(st);
            }
        }
        if col_of(start, win, cols) >= a
            && let Some(c) = buf.cell_mut((x0 + a as u16, y))
        {
            c.set_symbol("▏");
        }
        let room = ((b - a) as usize).saturating_sub(1);
        let text = label(i, item, room);
        if !text.is_empty() {
            buf.set_stringn(
                x0 + a as u16 + 1,
                y,
                &text,
                room,
                st.add_modifier(Modifier::BOLD),
            );
        }
        free = b;
        i += 1;
    }
}
