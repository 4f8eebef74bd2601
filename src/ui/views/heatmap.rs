//! The rank × step heatmap of the overview (issue 23): one cell per (rank, step), coloured by the
//! chosen metric from its minimum (green) to its maximum (red); the slowest cells carry `▲`,
//! straggler ranks a `!` before their label, the cursor cell is drawn reversed. Plain data in,
//! a ratatui widget out: drawing costs the visible cells only (the colour range and the slowest
//! cells are computed once, in [`HeatmapData::new`]).

use crate::ui::text::{fit, sanitize};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

/// How a metric's values are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Picoseconds, shown as a duration.
    Ps,
    /// A fraction, shown in %.
    Ratio,
}

/// What the heatmap shows: rows (ranks) × columns (steps), row-major values.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatmapData {
    /// Row labels (`rank 3`).
    pub rows: Vec<String>,
    /// Column labels: step numbers.
    pub cols: Vec<i64>,
    /// `rows × cols` values; `None` where a rank has no such step.
    pub values: Vec<Option<f64>>,
    /// Rows to mark (straggler ranks).
    pub marked: Vec<bool>,
    /// Metric name (`step time`, `idle %`, …).
    pub metric: String,
    /// How values are shown.
    pub unit: Unit,
    /// Smallest and largest value.
    pub range: Option<(f64, f64)>,
    /// Cells (indices into `values`) among the `slowest` largest values.
    pub slowest: Vec<usize>,
}

impl HeatmapData {
    /// Builds the data, its colour range and its `slowest` largest cells (ties: first).
    pub fn new(
        rows: Vec<String>,
        cols: Vec<i64>,
        values: Vec<Option<f64>>,
        marked: Vec<bool>,
        metric: &str,
        unit: Unit,
        slowest: usize,
    ) -> HeatmapData {
        let mut range: Option<(f64, f64)> = None;
        for v in values.iter().flatten().filter(|v| v.is_finite()) {
            range = Some(range.map_or((*v, *v), |(a, b)| (a.min(*v), b.max(*v))));
        }
        let mut order: Vec<usize> = (0..values.len())
            .filter(|&i| values[i].is_some_and(f64::is_finite))
            .collect();
        order.sort_by(|&a, &b| {
            let (va, vb) = (values[a].unwrap_or(0.0), values[b].unwrap_or(0.0));
            vb.total_cmp(&va).then(a.cmp(&b))
        });
        order.truncate(slowest);
        order.sort_unstable();
        HeatmapData {
            rows,
            cols,
            values,
            marked,
            metric: metric.to_string(),
            unit,
            range,
            slowest: order,
        }
    }

    /// The value at (row, col).
    pub fn get(&self, row: usize, col: usize) -> Option<f64> {
        if col >= self.cols.len() {
            return None;
        }
        self.values
            .get(row * self.cols.len() + col)
            .copied()
            .flatten()
    }

    fn show(&self, v: f64) -> String {
        match self.unit {
            Unit::Ratio => format!("{:.1}%", v * 100.0),
            Unit::Ps => crate::ui::ruler::format_dur(v as i64),
        }
    }
}

/// Width of one cell in columns.
pub const CELL_W: u16 = 3;

/// The first visible index that keeps `cursor` among `visible` items, moving `offset` as little
/// as possible.
pub fn scroll_to(cursor: usize, offset: usize, visible: usize) -> usize {
    let visible = visible.max(1);
    if cursor < offset {
        cursor
    } else if cursor >= offset + visible {
        cursor + 1 - visible
    } else {
        offset
    }
}

/// Green → yellow → red for `t` in 0..=1.
pub fn ramp(t: f64) -> Color {
    let t = t.clamp(0.0, 1.0);
    let (r, g) = if t < 0.5 {
        ((t * 2.0 * 255.0) as u8, 170)
    } else {
        (255, ((1.0 - t) * 2.0 * 170.0) as u8)
    };
    Color::Rgb(r, g, 40)
}

/// The heatmap widget: data, the cursor cell and the scroll offsets.
#[derive(Clone, Copy, Debug)]
pub struct Heatmap<'a> {
    /// What to draw.
    pub data: &'a HeatmapData,
    /// Cursor (row, col).
    pub cursor: (usize, usize),
    /// First visible (row, col).
    pub offset: (usize, usize),
}

impl Heatmap<'_> {
    /// Width of the row-label column.
    pub fn label_width(&self) -> u16 {
        let w = self
            .data
            .rows
            .iter()
            .map(|l| crate::ui::text::width(l))
            .max()
            .unwrap_or(0);
        (w.min(14) + 2) as u16
    }

    /// Visible (rows, cols) in an area.
    pub fn visible(&self, area: Rect) -> (usize, usize) {
        let rows = area.height.saturating_sub(2) as usize;
        let cols = (area.width.saturating_sub(self.label_width()) / CELL_W) as usize;
        (rows, cols)
    }
}

impl Widget for Heatmap<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width < 4 || area.height < 3 {
            return;
        }
        let d = self.data;
        let (cr, cc) = self.cursor;
        // Title: metric, range, the cursor cell.
        let range = d.range.map_or("no values".to_string(), |(a, b)| {
            format!("{} … {}", d.show(a), d.show(b))
        });
        let at = match (d.rows.get(cr), d.cols.get(cc)) {
            (Some(r), Some(s)) => format!(
                "   {} step {s}: {}",
                sanitize(r),
                d.get(cr, cc).map_or("-".into(), |v| d.show(v))
            ),
            _ => String::new(),
        };
        let title = format!("{}  {range}{at}", sanitize(&d.metric));
        buf.set_stringn(
            area.x,
            area.y,
            fit(&title, area.width as usize),
            area.width as usize,
            Style::default().add_modifier(Modifier::BOLD),
        );
        let lw = self.label_width();
        let (vis_r, vis_c) = self.visible(area);
        let (r0, c0) = self.offset;
        // Column header: step numbers where they fit.
        let mut next_free = area.x + lw;
        for k in 0..vis_c {
            let Some(step) = d.cols.get(c0 + k) else {
                break;
            };
            let x = area.x + lw + k as u16 * CELL_W;
            if x < next_free {
                continue;
            }
            let s = step.to_string();
            let room = (area.x + area.width).saturating_sub(x) as usize;
            buf.set_stringn(x, area.y + 1, &s, room, Style::default().fg(Color::Gray));
            next_free = x + s.len() as u16 + 1;
        }
        let (lo, hi) = d.range.unwrap_or((0.0, 0.0));
        let span = hi - lo;
        for k in 0..vis_r {
            let row = r0 + k;
            let Some(label) = d.rows.get(row) else { break };
            let y = area.y + 2 + k as u16;
            let marked = d.marked.get(row).copied().unwrap_or(false);
            let style = if marked {
                Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
            } else {
                Style::default()
            };
            let text = format!("{}{}", if marked { "!" } else { " " }, sanitize(label));
            buf.set_stringn(
                area.x,
                y,
                fit(&text, (lw - 1) as usize),
                (lw - 1) as usize,
                style,
            );
            for j in 0..vis_c {
                let col = c0 + j;
                if col >= d.cols.len() {
                    break;
                }
                let x = area.x + lw + j as u16 * CELL_W;
                let cell = row * d.cols.len() + col;
                let (sym, mut st) = match d.get(row, col) {
                    Some(v) if v.is_finite() => {
                        let t = if span > 0.0 { (v - lo) / span } else { 0.0 };
                        let slow = d.slowest.binary_search(&cell).is_ok();
                        (
                            if slow { " ▲ " } else { "   " },
                            Style::default().bg(ramp(t)).fg(Color::Black),
                        )
                    }
                    _ => (" · ", Style::default().fg(Color::DarkGray)),
                };
                if (row, col) == (cr, cc) {
                    st = st.add_modifier(Modifier::REVERSED | Modifier::BOLD);
                }
                let room = (area.x + area.width).saturating_sub(x).min(CELL_W) as usize;
                let sym = if (row, col) == (cr, cc) { "[ ]" } else { sym };
                buf.set_stringn(x, y, sym, room, st);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> HeatmapData {
        // 3 ranks × 4 steps; rank 1 lacks step 13; rank 2 is a straggler.
        let v = |x: f64| Some(x);
        HeatmapData::new(
            vec!["rank 0".into(), "rank 1".into(), "rank 2".into()],
            vec![10, 11, 12, 13],
            vec![
                v(1.0),
                v(2.0),
                v(3.0),
                v(4.0),
                v(1.0),
                v(1.0),
                v(1.0),
                None,
                v(9.0),
                v(5.0),
                v(1.0),
                v(1.0),
            ],
            vec![false, false, true],
            "step time",
            Unit::Ps,
            2,
        )
    }

    #[test]
    fn range_and_slowest() {
        let d = data();
        assert_eq!(d.range, Some((1.0, 9.0)));
        assert_eq!(d.slowest, vec![8, 9]);
        assert_eq!(d.get(1, 3), None);
        assert_eq!(d.get(2, 0), Some(9.0));
        assert_eq!(d.get(0, 9), None);
    }

    #[test]
    fn draws_into_a_buffer() {
        let d = data();
        let area = Rect::new(0, 0, 50, 6);
        let mut buf = Buffer::empty(area);
        Heatmap {
            data: &d,
            cursor: (1, 2),
            offset: (0, 0),
        }
        .render(area, &mut buf);
        let line = |y: u16| -> String {
            (0..area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        };
        assert_eq!(
            line(0).trim_end(),
            "step time  1 ps … 9 ps   rank 1 step 12: 1 ps"
        );
        // Label column: widest label 6 + 2 = 8.
        assert_eq!(line(1).trim_end(), "        10 11 12 13");
        assert_eq!(line(2).trim_end(), " rank 0");
        // Cells of 3 columns from x = 8: the cursor on step 12, no step 13 for rank 1.
        assert_eq!(line(3).trim_end(), " rank 1       [ ] ·");
        assert_eq!(line(4).trim_end(), "!rank 2  ▲  ▲");
        // Colours: min green, max red; the straggler label red; cursor reversed.
        assert_eq!(buf[(8, 2)].bg, ramp(0.0));
        assert_eq!(buf[(8, 4)].bg, ramp(1.0));
        assert_eq!(buf[(0, 4)].fg, Color::Red);
        assert!(buf[(14, 3)].modifier.contains(Modifier::REVERSED));
        assert_eq!(ramp(0.0), Color::Rgb(0, 170, 40));
        assert_eq!(ramp(1.0), Color::Rgb(255, 0, 40));
    }

    #[test]
    fn scrolls_and_tiny_areas() {
        assert_eq!(scroll_to(5, 0, 3), 3);
        assert_eq!(scroll_to(1, 3, 3), 1);
        assert_eq!(scroll_to(4, 3, 3), 3);
        let d = data();
        let area = Rect::new(0, 0, 3, 2);
        let mut buf = Buffer::empty(area);
        Heatmap {
            data: &d,
            cursor: (0, 0),
            offset: (0, 0),
        }
        .render(area, &mut buf);
        // Nothing drawn, nothing panics; an offset past the end draws only the header.
        let area = Rect::new(0, 0, 30, 5);
        let mut buf = Buffer::empty(area);
        Heatmap {
            data: &d,
            cursor: (9, 9),
            offset: (7, 7),
        }
        .render(area, &mut buf);
        assert!(buf[(0, 0)].symbol() == "s");
    }
}
