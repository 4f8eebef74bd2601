//! The flame widget: one row per lane, drawn straight into the `Buffer` from level-of-detail
//! cells. Work is O(columns × visible lanes × log n): the index answers one query per column.

use super::colors::{self, ColorMode, Theme};
use super::loader::Loaded;
use super::rows::Row;
use super::state::State;
use super::text;
use crate::index::{Cell, column_edge};
use crate::model::{NO_SLICE, Ps};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

/// Left-aligned eighth blocks, index = eighths covered.
const LEFT: [&str; 9] = [" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉", "█"];
/// Busy-fraction shades for merged cells.
const SHADES: [&str; 4] = ["░", "▒", "▓", "█"];
/// Sparkline levels.
const SPARK: [&str; 8] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];

/// What one column of a lane shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    /// Nothing.
    Empty,
    /// One slice covers the whole column (label candidate).
    Solid(u32),
    /// One slice covers part of the column.
    Partial(u32, &'static str),
    /// One slice ends and the next starts in the column.
    Boundary(u32, u32, &'static str),
    /// Several slices: shaded by busy fraction, coloured by the longest.
    Merged(u32, u32, &'static str),
}

/// Classifies column `[a, b)` of a lane from its LOD cell.
pub fn classify(l: &Loaded, track: u32, lane: usize, a: Ps, b: Ps, c: &Cell) -> ColumnKind {
    let s = &l.cap.slices;
    let w = (b - a).max(1);
    match c.count {
        0 => ColumnKind::Empty,
        1 if c.longest != NO_SLICE => {
            let id = c.longest;
            let i = id as usize;
            let (st, en) = (s.start[i], s.end(i));
            match (st <= a, en >= b) {
                (true, true) => ColumnKind::Solid(id),
                (false, true) => {
                    let f8 = (i128::from(b - st) * 8 / i128::from(w)) as usize;
                    let sym = if f8 >= 6 {
                        "█"
                    } else if f8 >= 3 {
                        "▐"
                    } else {
                        "▕"
                    };
                    ColumnKind::Partial(id, sym)
                }
                (true, false) => {
                    let f8 = ((i128::from(en - a) * 8 + i128::from(w) / 2) / i128::from(w))
                        .clamp(1, 8) as usize;
                    ColumnKind::Partial(id, LEFT[f8])
                }
                (false, false) => {
                    let sym = if (en - st) * 4 >= 3 * w {
                        "█"
                    } else if st + (en - st) / 2 < a + w / 2 {
                        "▌"
                    } else {
                        "▐"
                    };
                    ColumnKind::Partial(id, sym)
                }
            }
        }
        2 => {
            let ids = l.index.window(&l.cap, track, lane, a, b);
            if let [x, y] = ids {
                let (xi, yi) = (*x as usize, *y as usize);
                if s.start[xi] <= a && s.end(yi) >= b && s.end(xi) <= s.start[yi] {
                    let f8 = ((i128::from(s.end(xi) - a) * 8 + i128::from(w) / 2) / i128::from(w))
                        .clamp(1, 7) as usize;
                    return ColumnKind::Boundary(*x, *y, LEFT[f8]);
                }
            }
            merged(c, w)
        }
        _ => merged(c, w),
    }
}

fn merged(c: &Cell, w: Ps) -> ColumnKind {
    let f = (i128::from(c.busy) * 4 / i128::from(w)).clamp(0, 3) as usize;
    ColumnKind::Merged(c.longest, c.count, SHADES[f])
}

/// Borrowed view of what the timeline draws.
pub struct Timeline<'a> {
    /// What to draw: window, rows, selection, hits, theme.
    pub state: &'a State,
    /// The capture.
    pub l: &'a Loaded,
}

impl Timeline<'_> {
    fn slot(&self, id: u32) -> usize {
        let cap = &self.l.cap;
        if self.state.by_category {
            colors::category_slot(cap.slices.kind(id as usize))
        } else {
            colors::name_slot(cap.slice_name(id))
        }
    }

    fn decorate(&self, id: u32, style: Style) -> Style {
        let mut st = style;
        if let Some(h) = &self.state.hits {
            if h.contains(id) {
                st = colors::hit(st);
            } else if h.dim {
                st = st.add_modifier(ratatui::style::Modifier::DIM);
            }
        }
        if self.state.selected == Some(id) {
            st = colors::selected(st);
        }
        st
    }

    /// Draws the lanes of the visible rows into `area`; `cells` is per-frame scratch.
    pub fn draw(&self, buf: &mut Buffer, area: Rect, cells: &mut Vec<Cell>) {
        let st = self.state;
        let cols = area.width as usize;
        if cols == 0 {
            return;
        }
        cells.clear();
        cells.resize(cols, Cell::EMPTY);
        // Per-column (busiest fraction, its slice) of collapsed processes; empty unless needed.
        let mut summary: Vec<(Ps, Ps, u32)> = Vec::new();
        for (dy, row) in st
            .rows
            .iter()
            .skip(st.rows.scroll)
            .take(area.height as usize)
            .enumerate()
        {
            let y = area.y + dy as u16;
            match *row {
                Row::Process(p) if st.rows.collapsed.contains(&p) => {
                    self.draw_summary(buf, area.x, y, p, cells, &mut summary);
                }
                Row::Process(_) => {}
                Row::Lane { track, lane } => {
                    self.l
                        .index
                        .lod(&self.l.cap, track, lane as usize, st.vp.t0, st.vp.t1, cells);
                    self.draw_lane(buf, area.x, y, track, lane as usize, cells);
                    if lane == 0 {
                        self.draw_instants(buf, area.x, y, cols, track);
                    }
                }
                Row::Counter(track) => self.draw_counter(buf, area.x, y, cols, track),
                Row::Derived(i) => self.draw_derived(buf, area.x, y, cols, i),
                Row::Steps => super::steps_row::draw(
                    buf,
                    area.x,
                    y,
                    cols,
                    &self.l.steps,
                    (st.vp.t0, st.vp.t1),
                    st.theme,
                ),
                Row::Memory { track, reserved } => {
                    self.draw_memory(buf, area.x, y, cols, track, reserved)
                }
                Row::Graphs(track) => super::graph_row::draw(
                    buf,
                    area.x,
                    y,
                    cols,
                    self.l.graphs.of_track(track),
                    (st.vp.t0, st.vp.t1),
                    st.theme,
                ),
            }
        }
    }

    fn draw_lane(
        &self,
        buf: &mut Buffer,
        x0: u16,
        y: u16,
        track: u32,
        lane: usize,
        cells: &[Cell],
    ) {
        let st = self.state;
        let mode = st.theme;
        let cols = cells.len();
        let sel = st.selected.filter(|&id| {
            (id as usize) < self.l.cap.slices.len()
                && self.l.cap.slices.lane[id as usize] as usize == lane
                && self.l.cap.track_of(id) == track
        });
        let mut run_start = 0usize;
        let mut run_id = NO_SLICE;
        for k in 0..=cols {
            let kind = if k < cols {
                let a = column_edge(st.vp.t0, st.vp.t1, cols, k);
                let b = column_edge(st.vp.t0, st.vp.t1, cols, k + 1).max(a + 1);
                let cell = cells.get(k).copied().unwrap_or(Cell::EMPTY);
                let kind = classify(self.l, track, lane, a, b, &cell);
                self.paint(buf, x0 + k as u16, y, kind, sel, (a, b));
                if matches!(kind, ColumnKind::Merged(..))
                    && let Some(h) = &st.hits
                    && h.any_in(track, lane as u16, a, b)
                    && let Some(c) = buf.cell_mut((x0 + k as u16, y))
                {
                    // A hit inside a merged cell.
                    c.modifier.insert(
                        ratatui::style::Modifier::BOLD | ratatui::style::Modifier::UNDERLINED,
                    );
                }
                kind
            } else {
                ColumnKind::Empty
            };
            let id = match kind {
                ColumnKind::Solid(id) => id,
                _ => NO_SLICE,
            };
            if id != run_id {
                if run_id != NO_SLICE && k - run_start >= 3 {
                    self.label(buf, x0 + run_start as u16, y, k - run_start, run_id, mode);
                }
                run_id = id;
                run_start = k;
            }
        }
    }

    fn paint(
        &self,
        buf: &mut Buffer,
        x: u16,
        y: u16,
        kind: ColumnKind,
        sel: Option<u32>,
        (a, b): (Ps, Ps),
    ) {
        let mode = self.state.theme;
        let (sym, style) = match kind {
            ColumnKind::Empty => return,
            ColumnKind::Solid(id) => (
                "█",
                self.decorate(id, colors::body_style(mode, self.slot(id))),
            ),
            ColumnKind::Partial(id, sym) => (
                sym,
                self.decorate(id, colors::edge_style(mode, self.slot(id))),
            ),
            ColumnKind::Boundary(p, q, sym) => {
                let (sp, sq) = (self.slot(p), self.slot(q));
                let mut st = colors::edge_style(mode, sp);
                if sp != sq && mode.mode != ColorMode::None {
                    st = st.bg(colors::slot_colors(mode, sq).0);
                }
                if sel == Some(p) || sel == Some(q) {
                    st = colors::selected(st);
                }
                (sym, st)
            }
            ColumnKind::Merged(longest, _, sym) => {
                let mut st = colors::edge_style(mode, self.slot(longest));
                if let Some(s) = sel {
                    let sl = &self.l.cap.slices;
                    let i = s as usize;
                    if sl.start[i] < b && sl.end(i) >= a {
                        st = colors::selected(st);
                    }
                }
                (sym, st)
            }
        };
        if let Some(c) = buf.cell_mut((x, y)) {
            c.set_symbol(sym).set_style(style);
        }
    }

    fn label(&self, buf: &mut Buffer, x: u16, y: u16, len: usize, id: u32, mode: Theme) {
        let name = text::fold(self.l.cap.slice_name(id));
        if name.is_empty() {
            return;
        }
        let (x, room) = if len >= 5 { (x + 1, len - 2) } else { (x, len) };
        let shown = text::fit_keep_number(&name, room);
        let style = self.decorate(id, colors::label_style(mode, self.slot(id)));
        buf.set_stringn(x, y, &*shown, room, style);
    }

    /// The summary row of a collapsed process: per column, the busiest of its slice tracks
    /// (`busy_time`, all lanes) as a shade `░▒▓█`, coloured by the longest top-lane slice of that
    /// track there; every column where some track is busy draws something.
    fn draw_summary(
        &self,
        buf: &mut Buffer,
        x0: u16,
        y: u16,
        p: u32,
        cells: &mut [Cell],
        acc: &mut Vec<(Ps, Ps, u32)>,
    ) {
        let st = self.state;
        let cap = &self.l.cap;
        let cols = cells.len();
        acc.clear();
        acc.resize(cols, (0, 1, NO_SLICE));
        for (t, tr) in cap.tracks.iter().enumerate() {
            if tr.process != p || tr.kind == crate::model::TrackKind::Counter {
                continue;
            }
            let t = t as u32;
            if self.l.index.lane_count(t) == 0 {
                continue;
            }
            self.l.index.lod(cap, t, 0, st.vp.t0, st.vp.t1, cells);
            for (k, slot) in acc.iter_mut().enumerate() {
                let a = column_edge(st.vp.t0, st.vp.t1, cols, k);
                let b = column_edge(st.vp.t0, st.vp.t1, cols, k + 1).max(a + 1);
                let busy = self.l.index.busy_time(cap, t, a, b);
                // Compare busy / width across tracks of the same column: width is shared.
                if busy > slot.0 {
                    let longest = cells.get(k).map_or(NO_SLICE, |c| c.longest);
                    *slot = (busy, b - a, longest);
                }
            }
        }
        let fallback = colors::name_slot(&cap.process_name(p));
        for (k, &(busy, w, longest)) in acc.iter().enumerate() {
            if busy <= 0 {
                continue;
            }
            let f = (i128::from(busy) * 4 / i128::from(w.max(1))).clamp(0, 3) as usize;
            let slot = if longest == NO_SLICE {
                fallback
            } else {
                self.slot(longest)
            };
            if let Some(c) = buf.cell_mut((x0 + k as u16, y)) {
                c.set_symbol(SHADES[f])
                    .set_style(colors::edge_style(st.theme, slot));
            }
        }
    }

    /// Instant events of a track as `╻` marks in otherwise empty cells of its first lane.
    fn draw_instants(&self, buf: &mut Buffer, x0: u16, y: u16, cols: usize, track: u32) {
        let st = self.state;
        let cap = &self.l.cap;
        let Some(tr) = cap.tracks.get(track as usize) else {
            return;
        };
        let (lo, hi) = (tr.instants.0 as usize, tr.instants.1 as usize);
        let Some(ts) = cap.instants.ts.get(lo..hi) else {
            return;
        };
        if ts.is_empty() {
            return;
        }
        for k in 0..cols {
            let a = column_edge(st.vp.t0, st.vp.t1, cols, k);
            let mut b = column_edge(st.vp.t0, st.vp.t1, cols, k + 1).max(a + 1);
            if k + 1 == cols {
                // An instant exactly at the window end (Kineto's "Record Window End" at the end
                // of the span, which "fit all" puts there) belongs to the last column.
                b = b.saturating_add(1);
            }
            let i = ts.partition_point(|&t| t < a);
            if i < ts.len() && ts[i] < b {
                let Some(c) = buf.cell_mut((x0 + k as u16, y)) else {
                    continue;
                };
                if c.symbol() == " " {
                    let name = cap.strings.get(cap.instants.name[lo + i]);
                    c.set_symbol("╻")
                        .set_style(colors::edge_style(st.theme, colors::name_slot(name)));
                }
            }
        }
    }

    /// A derived counter (GPU queue depth, stream queue length): sparkline of the largest value in
    /// each column, scaled to the series maximum, with its marked intervals (GPU idle) drawn as
    /// `▁` in reverse video.
    fn draw_derived(&self, buf: &mut Buffer, x0: u16, y: u16, cols: usize, i: u32) {
        let st = self.state;
        let Some(d) = self.l.derived.get(i as usize) else {
            return;
        };
        let style = colors::edge_style(st.theme, colors::name_slot(&d.name));
        let steps = StepSeries {
            window: (st.vp.t0, st.vp.t1),
            max: d.max,
            style,
        };
        steps.draw(
            buf,
            (x0, y, cols),
            |a, b| max_in(&d.ts, &d.value, a, b),
            |a, b| {
                // Idle overlaps this column?
                let m = d.marks.partition_point(|iv| iv.0 < b);
                m > 0 && d.marks[m - 1].1 > a
            },
        );
    }

    /// A memory row: allocated (or reserved) bytes of one device / allocator with the counter
    /// renderer (largest value per column, both series of the track on one scale); the column of
    /// the series' peak reversed, out-of-memory events as a bold reversed `!`.
    fn draw_memory(&self, buf: &mut Buffer, x0: u16, y: u16, cols: usize, i: u32, reserved: bool) {
        let st = self.state;
        let (Some(m), Some(tv)) = (
            self.l.memory(),
            self.l.memory().and_then(|m| m.tracks.get(i as usize)),
        ) else {
            return;
        };
        let Some(tr) = m.track(i) else { return };
        let style = colors::edge_style(st.theme, colors::name_slot(&tr.device));
        let steps = StepSeries {
            window: (st.vp.t0, st.vp.t1),
            max: tv.scale as f64,
            style,
        };
        steps.draw(
            buf,
            (x0, y, cols),
            |a, b| m.max_in(i, reserved, a, b).map(|v| v as f64),
            |_, _| false,
        );
        let peak = if reserved { tv.peak_reserved } else { tv.peak };
        let edge = |k: usize| column_edge(st.vp.t0, st.vp.t1, cols, k);
        if let Some((t, bytes)) = peak
            && bytes > 0
            && t >= st.vp.t0
            && t < st.vp.t1
        {
            let k = column_at(st.vp.t0, st.vp.t1, cols, t);
            if let Some(c) = buf.cell_mut((x0 + k as u16, y)) {
                if c.symbol() == " " {
                    c.set_symbol(SPARK[7]).set_style(style);
                }
                c.modifier.insert(ratatui::style::Modifier::REVERSED);
            }
        }
        if !reserved && !tr.ooms.is_empty() {
            for k in 0..cols {
                let (a, b) = (edge(k), edge(k + 1).max(edge(k) + 1));
                if m.oom_in(i, a, b).is_some()
                    && let Some(c) = buf.cell_mut((x0 + k as u16, y))
                {
                    c.set_symbol("!").set_style(style.add_modifier(
                        ratatui::style::Modifier::REVERSED | ratatui::style::Modifier::BOLD,
                    ));
                }
            }
        }
    }

    fn draw_counter(&self, buf: &mut Buffer, x0: u16, y: u16, cols: usize, track: u32) {
        let st = self.state;
        let cap = &self.l.cap;
        let Some(ci) = cap.tracks.get(track as usize).and_then(|t| t.counter) else {
            return;
        };
        let Some(series) = cap.counters.get(ci as usize) else {
            return;
        };
        let (lo, hi) = self
            .l
            .counter_range
            .get(ci as usize)
            .copied()
            .unwrap_or((0.0, 0.0));
        let style = colors::edge_style(st.theme, colors::name_slot(cap.strings.get(series.name)));
        for k in 0..cols {
            let a = column_edge(st.vp.t0, st.vp.t1, cols, k);
            let b = column_edge(st.vp.t0, st.vp.t1, cols, k + 1).max(a + 1);
            let Some(v) = value_at(&series.ts, &series.value, a + (b - a) / 2) else {
                continue;
            };
            if !v.is_finite() {
                continue;
            }
            let lvl = if hi > lo {
                (((v - lo) / (hi - lo)) * 7.0).round().clamp(0.0, 7.0) as usize
            } else {
                3
            };
            if let Some(c) = buf.cell_mut((x0 + k as u16, y)) {
                c.set_symbol(SPARK[lvl]).set_style(style);
            }
        }
    }
}

/// A step-series row drawn as a sparkline: per column the largest value over it, scaled to
/// `max` (any value above 0 draws at least `▁`); columns with no value above 0 that are marked
/// (GPU idle) draw `▁` in reverse video. The renderer of derived and memory rows.
pub struct StepSeries {
    /// The window `[t0, t1)` the columns split.
    pub window: (Ps, Ps),
    /// The value drawn as a full block.
    pub max: f64,
    /// Style of the bars.
    pub style: Style,
}

impl StepSeries {
    /// Draws `cols` columns at `(x0, y)`: `max_of(a, b)` is the largest value over `[a, b)`,
    /// `marked(a, b)` whether the column is marked.
    pub fn draw(
        &self,
        buf: &mut Buffer,
        (x0, y, cols): (u16, u16, usize),
        max_of: impl Fn(Ps, Ps) -> Option<f64>,
        marked: impl Fn(Ps, Ps) -> bool,
    ) {
        let (t0, t1) = self.window;
        for k in 0..cols {
            let a = column_edge(t0, t1, cols, k);
            let b = column_edge(t0, t1, cols, k + 1).max(a + 1);
            let v = max_of(a, b);
            let Some(c) = buf.cell_mut((x0 + k as u16, y)) else {
                continue;
            };
            match v {
                Some(v) if v > 0.0 => {
                    let lvl = if self.max > 0.0 {
                        ((v / self.max) * 7.0).round().clamp(1.0, 7.0) as usize
                    } else {
                        0
                    };
                    c.set_symbol(SPARK[lvl]).set_style(self.style);
                }
                _ if marked(a, b) => {
                    c.set_symbol("▁")
                        .set_style(self.style.add_modifier(ratatui::style::Modifier::REVERSED));
                }
                _ => {}
            }
        }
    }
}

/// The column of `[t0, t1)` split in `cols` (at [`column_edge`]s) holding time `t`, clamped to
/// the row.
pub fn column_at(t0: Ps, t1: Ps, cols: usize, t: Ps) -> usize {
    let span = i128::from((t1 - t0).max(1));
    let last = cols.saturating_sub(1);
    let mut k = (i128::from(t - t0) * cols as i128 / span).clamp(0, last as i128) as usize;
    while k < last && column_edge(t0, t1, cols, k + 1) <= t {
        k += 1;
    }
    while k > 0 && column_edge(t0, t1, cols, k) > t {
        k -= 1;
    }
    k
}

/// Largest value of a step series over `[a, b)`: the value holding at `a` and every sample
/// before `b` (`None` when the series starts at or after `b`).
pub fn max_in(ts: &[Ps], vals: &[f64], a: Ps, b: Ps) -> Option<f64> {
    let k = ts.partition_point(|&x| x <= a);
    let mut out = k.checked_sub(1).and_then(|k| vals.get(k).copied());
    for (&t, &v) in ts[k..].iter().zip(vals.get(k..).unwrap_or(&[])) {
        if t >= b {
            break;
        }
        out = Some(out.map_or(v, |o: f64| o.max(v)));
    }
    out
}

/// Value of a step series at `t` (`None` before its first sample).
pub fn value_at(ts: &[Ps], vals: &[f64], t: Ps) -> Option<f64> {
    let k = ts.partition_point(|&x| x <= t);
    if k == 0 || k > ts.len() + 1 {
        return None;
    }
    vals.get(k - 1).copied()
}
