//! Memory widgets drawn from plain data (no `App`): the allocated / reserved step rows of one
//! memory track with its peak marked, and a sortable table of allocations (live at the cursor,
//! live at end, largest of a marked range). The explorer feeds them from
//! [`crate::model::memory`]; see docs/memory.md.

use crate::model::Ps;
use crate::model::memory::{LIVE_AT_END, MemTrack, NO_STACK};
use crate::text::{clean_fit, width};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

const SPARK: [&str; 8] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];

/// Width of the label column of a memory row.
pub const LABEL_W: u16 = 18;

/// One memory track's series for the rows widget.
#[derive(Clone, Copy, Debug)]
pub struct MemoryRows<'a> {
    /// Device / allocator label.
    pub label: &'a str,
    /// Sample times (sorted).
    pub ts: &'a [Ps],
    /// Allocated bytes after each sample.
    pub allocated: &'a [i64],
    /// Reserved bytes after each sample, when recorded.
    pub reserved: Option<&'a [i64]>,
    /// (time, bytes) of the allocated peak.
    pub peak: Option<(Ps, i64)>,
    /// Visible time range `[t0, t1)`.
    pub t0: Ps,
    /// End of the visible range.
    pub t1: Ps,
    /// Style of the bars.
    pub style: Style,
}

impl<'a> MemoryRows<'a> {
    /// The rows of `tr` over `[t0, t1)`.
    pub fn of(tr: &'a MemTrack, label: &'a str, t0: Ps, t1: Ps, style: Style) -> Self {
        MemoryRows {
            label,
            ts: &tr.ts,
            allocated: &tr.allocated,
            reserved: tr.has_reserved.then_some(tr.reserved.as_slice()),
            peak: tr.peak_allocated(),
            t0,
            t1,
            style,
        }
    }

    /// Rows drawn: allocated, plus reserved when recorded.
    pub fn height(&self) -> u16 {
        if self.reserved.is_some() { 2 } else { 1 }
    }

    /// Draws into `area`: a label column, then one sparkline per series (the largest value in
    /// each column, scaled to the largest reserved-or-allocated value of the whole track, so both
    /// rows share a scale); the column holding the peak is drawn reversed.
    pub fn draw(&self, buf: &mut Buffer, area: Rect) {
        if area.width <= LABEL_W || area.height == 0 {
            return;
        }
        let max = self
            .allocated
            .iter()
            .chain(self.reserved.unwrap_or(&[]))
            .copied()
            .max()
            .unwrap_or(0);
        let cols = usize::from(area.width - LABEL_W);
        let peak_col = self
            .peak
            .filter(|p| p.0 >= self.t0 && p.0 < self.t1)
            .map(|p| column_of(self.t0, self.t1, cols, p.0));
        let series: [(&str, Option<&[i64]>); 2] =
            [("alloc", Some(self.allocated)), ("reserved", self.reserved)];
        for (row, (name, vals)) in series.iter().enumerate() {
            let Some(vals) = vals else { continue };
            let y = area.y + row as u16;
            if y >= area.y + area.height {
                break;
            }
            let label = if row == 0 {
                format!("{} {name}", self.label)
            } else {
                (*name).to_string()
            };
            buf.set_stringn(
                area.x,
                y,
                clean_fit(&label, usize::from(LABEL_W - 1)),
                usize::from(LABEL_W - 1),
                Style::default(),
            );
            for k in 0..cols {
                let a = edge(self.t0, self.t1, cols, k);
                let b = edge(self.t0, self.t1, cols, k + 1).max(a + 1);
                let Some(v) = max_in(self.ts, vals, a, b) else {
                    continue;
                };
                if v <= 0 || max <= 0 {
                    continue;
                }
                let lvl = ((v as f64 / max as f64) * 7.0).round().clamp(0.0, 7.0) as usize;
                let mut style = self.style;
                if row == 0 && peak_col == Some(k) {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                if let Some(c) = buf.cell_mut((area.x + LABEL_W + k as u16, y)) {
                    c.set_symbol(SPARK[lvl]).set_style(style);
                }
            }
        }
    }
}

/// Left time edge of column `k` of `cols` over `[t0, t1)`.
fn edge(t0: Ps, t1: Ps, cols: usize, k: usize) -> Ps {
    let span = i128::from(t1.saturating_sub(t0).max(1));
    t0 + (span * k as i128 / cols.max(1) as i128) as Ps
}

/// Column of time `t` (which lies in `[t0, t1)`).
fn column_of(t0: Ps, t1: Ps, cols: usize, t: Ps) -> usize {
    let span = i128::from(t1.saturating_sub(t0).max(1));
    ((i128::from(t - t0) * cols as i128 / span) as usize).min(cols.saturating_sub(1))
}

/// Largest value of a step series over `[a, b)` (the value holding at `a` and every sample
/// before `b`); `None` before the first sample.
pub fn max_in(ts: &[Ps], vals: &[i64], a: Ps, b: Ps) -> Option<i64> {
    let k = ts.partition_point(|&x| x <= a);
    let mut out = k.checked_sub(1).and_then(|k| vals.get(k).copied());
    for (&t, &v) in ts[k..].iter().zip(vals.get(k..).unwrap_or(&[])) {
        if t >= b {
            break;
        }
        out = Some(out.map_or(v, |o| o.max(v)));
    }
    out
}

/// One allocation in a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocRow {
    /// Index in the track's allocations.
    pub id: u32,
    /// Size.
    pub bytes: i64,
    /// Allocation time.
    pub start: Ps,
    /// Release time ([`LIVE_AT_END`] when never).
    pub end: Ps,
    /// Allocating op's slice id (`Enter` jumps to it), or `NO_SLICE`.
    pub op: u32,
    /// Op name (or call site) shown.
    pub op_name: String,
    /// Shape / dtype when the event says ("" otherwise).
    pub detail: String,
    /// Call stack, innermost first, joined ("" when none).
    pub stack: String,
}

/// Table order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AllocSort {
    /// Largest first.
    #[default]
    Bytes,
    /// Oldest first.
    Age,
    /// Op name, then largest.
    Op,
}

impl AllocSort {
    /// The next order (wraps).
    pub fn next(self) -> AllocSort {
        match self {
            AllocSort::Bytes => AllocSort::Age,
            AllocSort::Age => AllocSort::Op,
            AllocSort::Op => AllocSort::Bytes,
        }
    }
}

/// Sorts rows; ties by start then id (stable across redraws).
pub fn sort_allocs(rows: &mut [AllocRow], by: AllocSort) {
    rows.sort_by(|a, b| {
        let o = match by {
            AllocSort::Bytes => b.bytes.cmp(&a.bytes),
            AllocSort::Age => a.start.cmp(&b.start),
            AllocSort::Op => a.op_name.cmp(&b.op_name).then(b.bytes.cmp(&a.bytes)),
        };
        o.then(a.start.cmp(&b.start)).then(a.id.cmp(&b.id))
    });
}

/// Rows for allocations `ids` of `tr`: `name_of(i)` names allocation `i`'s op, `stack_of(id)`
/// renders a stack id, `detail_of(i)` gives shape / dtype.
pub fn alloc_rows(
    tr: &MemTrack,
    ids: &[u32],
    name_of: impl Fn(usize) -> String,
    stack_of: impl Fn(u32) -> String,
    detail_of: impl Fn(usize) -> String,
) -> Vec<AllocRow> {
    let a = &tr.allocs;
    ids.iter()
        .filter(|&&i| (i as usize) < a.len())
        .map(|&i| {
            let k = i as usize;
            AllocRow {
                id: i,
                bytes: a.bytes[k],
                start: a.start[k],
                end: a.end[k],
                op: a.op[k],
                op_name: name_of(k),
                detail: detail_of(k),
                stack: if a.stack[k] == NO_STACK {
                    String::new()
                } else {
                    stack_of(a.stack[k])
                },
            }
        })
        .collect()
}

/// A table of allocations with a title, a selected row and a scroll offset.
#[derive(Clone, Copy, Debug)]
pub struct AllocTable<'a> {
    /// Title line (e.g. `live at 12.3 ms: 15 allocations, 37.1 MiB`).
    pub title: &'a str,
    /// Rows in display order.
    pub rows: &'a [AllocRow],
    /// Selected row.
    pub selected: usize,
    /// First row shown.
    pub offset: usize,
    /// Time the ages are measured at.
    pub now: Ps,
}

fn bytes_text(v: i64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = v.unsigned_abs() as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < U.len() {
        x /= 1024.0;
        u += 1;
    }
    let sign = if v < 0 { "-" } else { "" };
    if u == 0 {
        format!("{sign}{} B", v.unsigned_abs())
    } else {
        format!("{sign}{x:.1} {}", U[u])
    }
}

fn dur_text(ps: Ps) -> String {
    let a = ps.abs() as f64;
    if a < 1e6 {
        format!("{:.1} ns", ps as f64 / 1e3)
    } else if a < 1e9 {
        format!("{:.1} µs", ps as f64 / 1e6)
    } else if a < 1e12 {
        format!("{:.1} ms", ps as f64 / 1e9)
    } else {
        format!("{:.2} s", ps as f64 / 1e12)
    }
}

impl AllocTable<'_> {
    /// Rows that fit under the title and header.
    pub fn visible_rows(area: Rect) -> usize {
        usize::from(area.height.saturating_sub(2))
    }

    /// Draws: title, header (`BYTES  AGE  OP  SHAPE  STACK`), rows with the selected one
    /// reversed; every string sanitized and cut to its column.
    pub fn draw(&self, buf: &mut Buffer, area: Rect) {
        if area.height == 0 || area.width < 20 {
            return;
        }
        let w = usize::from(area.width);
        buf.set_stringn(
            area.x,
            area.y,
            clean_fit(self.title, w),
            w,
            Style::default().add_modifier(Modifier::BOLD),
        );
        if area.height < 2 {
            return;
        }
        let cols = [10usize, 10, 28, 16];
        let header = format!(
            "{:>10} {:>10} {:<28} {:<16} STACK",
            "BYTES", "AGE", "OP", "SHAPE"
        );
        buf.set_stringn(
            area.x,
            area.y + 1,
            &header,
            w,
            Style::default().add_modifier(Modifier::UNDERLINED),
        );
        for (line, r) in self
            .rows
            .iter()
            .enumerate()
            .skip(self.offset)
            .take(Self::visible_rows(area))
        {
            let y = area.y + 2 + (line - self.offset) as u16;
            let age = if r.end != LIVE_AT_END && r.end <= self.now {
                "freed".to_string()
            } else {
                dur_text(self.now.saturating_sub(r.start))
            };
            let cell = |s: &str, n: usize| {
                let t = clean_fit(s, n);
                let pad = n.saturating_sub(width(&t));
                format!("{t}{}", " ".repeat(pad))
            };
            let text = format!(
                "{:>10} {:>10} {} {} {}",
                bytes_text(r.bytes),
                age,
                cell(&r.op_name, cols[2]),
                cell(&r.detail, cols[3]),
                clean_fit(&r.stack, w.saturating_sub(68))
            );
            let style = if line == self.selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            buf.set_stringn(area.x, y, &text, w, style);
        }
        if self.rows.is_empty() {
            buf.set_stringn(area.x, area.y + 2, "  (none)", w, Style::default());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NO_SLICE;

    fn text(buf: &Buffer, y: u16) -> String {
        (0..buf.area.width)
            .map(|x| buf[(x, y)].symbol().to_string())
            .collect::<String>()
    }

    fn track() -> MemTrack {
        let mut t = MemTrack {
            device: "cuda:0".into(),
            has_reserved: true,
            ..MemTrack::default()
        };
        for (ts, a, r) in [(0, 10, 40), (10, 40, 40), (20, 20, 80), (30, 0, 80)] {
            t.ts.push(ts);
            t.allocated.push(a);
            t.reserved.push(r);
        }
        t.allocs.push(0, 10, 1, NO_SLICE, NO_STACK, 0);
        t.allocs.push(10, 30, 2, NO_SLICE, NO_STACK, 1);
        t.allocs.end[1] = 20;
        t
    }

    #[test]
    fn rows_draw_steps_and_mark_the_peak() {
        let tr = track();
        let rows = MemoryRows::of(&tr, "cuda:0", 0, 40, Style::default());
        assert_eq!(rows.height(), 2);
        let area = Rect::new(0, 0, LABEL_W + 4, 2);
        let mut buf = Buffer::empty(area);
        rows.draw(&mut buf, area);
        let l0 = text(&buf, 0);
        let l1 = text(&buf, 1);
        assert!(l0.starts_with("cuda:0 alloc"), "{l0:?}");
        assert!(l1.starts_with("reserved"), "{l1:?}");
        // Four columns of 10 ps: allocated 10, 40, 20, 0 of max 80; reserved 40, 40, 80, 80.
        let plot0: String = l0.chars().skip(usize::from(LABEL_W)).collect();
        let plot1: String = l1.chars().skip(usize::from(LABEL_W)).collect();
        assert_eq!(plot0, "▂▅▃ ");
        assert_eq!(plot1, "▅▅██");
        let peak = &buf[(LABEL_W + 1, 0)];
        assert!(
            peak.modifier.contains(Modifier::REVERSED),
            "peak column marked"
        );
        assert!(!buf[(LABEL_W, 0)].modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn table_lists_sorted_rows_and_cleans_text() {
        let tr = track();
        let mut rows = alloc_rows(
            &tr,
            &[0, 1],
            |i| {
                if i == 0 {
                    "aten::mm".into()
                } else {
                    "evil\x1b[2J".into()
                }
            },
            |_| String::new(),
            |_| "[32, 3]".into(),
        );
        sort_allocs(&mut rows, AllocSort::Bytes);
        assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), vec![1, 0]);
        sort_allocs(&mut rows, AllocSort::Age);
        assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), vec![0, 1]);
        let area = Rect::new(0, 0, 80, 5);
        let mut buf = Buffer::empty(area);
        AllocTable {
            title: "live at 15 ps",
            rows: &rows,
            selected: 1,
            offset: 0,
            now: 15,
        }
        .draw(&mut buf, area);
        assert!(text(&buf, 0).starts_with("live at 15 ps"));
        assert!(text(&buf, 1).contains("BYTES"));
        let r0 = text(&buf, 2);
        let r1 = text(&buf, 3);
        assert!(r0.contains("10 B") && r0.contains("aten::mm"), "{r0:?}");
        assert!(r1.contains("30 B") && !r1.contains('\x1b'), "{r1:?}");
        assert!(
            buf[(0, 3)].modifier.contains(Modifier::REVERSED),
            "selected row"
        );
        assert!(!buf[(0, 2)].modifier.contains(Modifier::REVERSED));
        let mut empty = Buffer::empty(area);
        AllocTable {
            title: "live at end",
            rows: &[],
            selected: 0,
            offset: 0,
            now: 0,
        }
        .draw(&mut empty, area);
        assert!(text(&empty, 2).contains("(none)"));
    }
}
