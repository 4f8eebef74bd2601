//! The flame view's widget and state, from plain data (a [`FlameTree`], the capture's strings
//! and a [`FlameState`]): a left-heavy icicle (root on top, widest child first) drawn with the
//! timeline's rules (labels from 3 columns, C++ names folded, `#N` kept, colours by name,
//! selection in reverse video, search hits bold/underlined and the rest dimmed), the sandwich
//! of the selected name (callers above, callees below), and the same tree as a sortable table
//! (rows and drawing in `flame_table.rs`).
//! Work is proportional to what is on screen: only nodes at least one column wide are laid out.

pub use super::flame_table::SortCol;
use super::flame_table::{TableDraw, sort_diff_nodes, sort_nodes, table_rows};
use crate::analysis::flame::{FlameTree, Metric, ROOT, Sandwich, Shape, TreeDiff, Unit};
use crate::model::Interner;
use crate::ui::action::Action;
use crate::ui::colors::{self, ColorMode, Theme};
use crate::ui::memory::mem_bytes;
use crate::ui::ruler::format_dur;
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

/// What the view shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlameMode {
    /// The icicle of the (zoomed) tree.
    #[default]
    Icicle,
    /// Callers and callees of the selected name.
    Sandwich,
    /// The tree as an indented table.
    Table,
}

/// The view's own state: metric, zoom, cursor, search, mode, table order.
#[derive(Clone, Debug, Default)]
pub struct FlameState {
    /// What widths measure.
    pub metric: Metric,
    /// Zoomed-in node (the icicle's top row); `ROOT` for the whole scope.
    pub focus: u32,
    /// Node under the cursor.
    pub selected: u32,
    /// Case-insensitive substring highlighted in names (empty: no search).
    pub search: String,
    /// Icicle, sandwich or table.
    pub mode: FlameMode,
    /// Table sort column.
    pub sort: SortCol,
    /// Table rows (DFS order, siblings sorted): rebuilt by [`FlameState::refresh_table`].
    pub table: Vec<u32>,
    /// First table row shown.
    pub scroll: usize,
    /// Colour mode and background.
    pub theme: Option<Theme>,
}

impl FlameState {
    /// Table rows that fit on a screen `height` rows tall (header, ruler and footer left out).
    pub fn table_rows(height: u16) -> usize {
        usize::from(height.saturating_sub(3)).max(1)
    }

    /// Table mode, after the table was rebuilt: keeps the selection on a row of it (the first
    /// when it left) and among the `rows` shown.
    pub fn settle_table(&mut self, rows: usize) {
        if !self.table.contains(&self.selected) {
            self.selected = self.table.first().copied().unwrap_or(self.focus);
        }
        let i = self
            .table
            .iter()
            .position(|&n| n == self.selected)
            .unwrap_or(0);
        self.scroll = self.scroll.min(i).max((i + 1).saturating_sub(rows));
    }

    /// Table mode: moves the selection `step` rows (to the first row when it is not in the
    /// table), scrolling so that it stays among the `rows` shown.
    pub fn move_table(&mut self, step: i64, rows: usize) {
        if self.table.is_empty() {
            return;
        }
        let i = match self.table.iter().position(|&n| n == self.selected) {
            Some(i) => (i as i64 + step).clamp(0, self.table.len() as i64 - 1) as usize,
            None => 0,
        };
        self.selected = self.table[i];
        if i < self.scroll {
            self.scroll = i;
        } else if i >= self.scroll + rows {
            self.scroll = i + 1 - rows;
        }
    }

    /// Widest first child of `n` under the current metric.
    pub fn widest_child<T: Shape + ?Sized>(&self, t: &T, n: u32) -> Option<u32> {
        ordered_children(t, n, self.metric).first().copied()
    }

    /// Cursor to the parent (not above the zoomed node).
    pub fn up<T: Shape + ?Sized>(&mut self, t: &T) {
        if self.selected != self.focus && self.selected != ROOT {
            self.selected = t.parent(self.selected);
        }
    }

    /// Cursor to the widest child.
    pub fn down<T: Shape + ?Sized>(&mut self, t: &T) {
        if let Some(c) = self.widest_child(t, self.selected) {
            self.selected = c;
        }
    }

    /// Cursor to the next (`+1`) or previous (`-1`) sibling in left-heavy order.
    pub fn sideways<T: Shape + ?Sized>(&mut self, t: &T, step: i32) {
        if self.selected == self.focus {
            return;
        }
        let sib = ordered_children(t, t.parent(self.selected), self.metric);
        if let Some(i) = sib.iter().position(|&s| s == self.selected) {
            let j = (i as i64 + i64::from(step)).clamp(0, sib.len() as i64 - 1) as usize;
            self.selected = sib[j];
        }
    }

    /// Makes the selected node the top of the icicle.
    pub fn zoom_in(&mut self) {
        self.focus = self.selected;
    }

    /// Zooms out one level (to the focus's parent).
    pub fn zoom_out<T: Shape + ?Sized>(&mut self, t: &T) {
        if self.focus != ROOT {
            self.focus = t.parent(self.focus);
        }
    }

    /// Cycles the metric.
    pub fn cycle_metric(&mut self) {
        self.metric = self.metric.next();
    }

    /// Cycles the metric among those that apply to trees of `unit`.
    pub fn cycle_metric_for(&mut self, unit: Unit) {
        self.metric = self.metric.next_for(unit);
    }

    /// Edits the search while `typing` (characters, Backspace; Enter or Esc ends it): true when
    /// `key` was taken, false when the key is not for the search (Ctrl keys pass through).
    pub fn type_search(&mut self, typing: &mut bool, key: &KeyEvent) -> bool {
        if !*typing || key.modifiers.contains(KeyModifiers::CONTROL) {
            return false;
        }
        match key.code {
            KeyCode::Char(c) if !c.is_control() => self.search.push(c),
            KeyCode::Backspace => {
                self.search.pop();
            }
            KeyCode::Enter | KeyCode::Esc => *typing = false,
            _ => {}
        }
        true
    }

    /// The keys every flame view shares on tree `t` (a merged tree, or a diff tree with the
    /// paths gone in B): move, zoom, metric, sort and the icicle / sandwich / table modes.
    /// False for any other action (the view's own).
    pub fn on_action<T: Shape + ?Sized>(&mut self, action: Action, t: &T) -> bool {
        let table = self.mode == FlameMode::Table;
        match action {
            Action::Down => self.down(t),
            Action::Up => self.up(t),
            Action::PrevSlice => self.sideways(t, -1),
            Action::NextSlice => self.sideways(t, 1),
            Action::ZoomIn => {
                self.zoom_in();
                self.scroll = 0;
            }
            Action::ZoomOut => {
                self.zoom_out(t);
                self.scroll = 0;
            }
            Action::CycleMetric => self.cycle_metric_for(t.unit()),
            Action::SortNext if table => self.sort = self.sort.next(),
            Action::ToggleSandwich => {
                self.mode = if self.mode == FlameMode::Sandwich {
                    FlameMode::Icicle
                } else {
                    FlameMode::Sandwich
                };
            }
            Action::ToggleTable => {
                self.mode = if table {
                    FlameMode::Icicle
                } else {
                    FlameMode::Table
                };
                self.scroll = 0;
            }
            _ => return false,
        }
        true
    }

    /// Rebuilds the table rows: DFS from the focus, siblings sorted by [`FlameState::sort`].
    pub fn refresh_table(&mut self, t: &FlameTree, strings: &Interner) {
        let col = self.sort;
        table_rows(t, self.focus, &mut self.table, |v| {
            sort_nodes(t, strings, v, col)
        });
    }

    /// The table rows of the diff tree of `b` (B's nodes and the paths gone in B, these by
    /// A's figures), as [`FlameState::refresh_table`].
    pub fn refresh_diff_table(&mut self, b: &FlameTree, d: &TreeDiff, strings: &Interner) {
        let col = self.sort;
        table_rows(&d.over(b), self.focus, &mut self.table, |v| {
            sort_diff_nodes(b, d, strings, v, col)
        });
    }
}

/// Children of `n`, widest first (ties by id: creation order).
pub fn ordered_children<T: Shape + ?Sized>(t: &T, n: u32, m: Metric) -> Vec<u32> {
    let (mut ids, mut out) = (Vec::new(), Vec::new());
    widest_first(t, n, m, &mut ids, &mut out);
    out.into_iter().map(|(_, c)| c).collect()
}

/// The children of `n` with a width, as (width, node), widest first, into `out` (`ids` and
/// `out` are scratch buffers, reused across calls).
fn widest_first<T: Shape + ?Sized>(
    t: &T,
    n: u32,
    m: Metric,
    ids: &mut Vec<u32>,
    out: &mut Vec<(f64, u32)>,
) {
    ids.clear();
    out.clear();
    t.children_into(n, ids);
    out.extend(
        ids.iter()
            .map(|&c| (t.span(c, m), c))
            .filter(|&(w, _)| w > 0.0),
    );
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
}

/// One laid-out block of the icicle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Node.
    pub node: u32,
    /// Row (0 = the top node).
    pub row: u16,
    /// First column.
    pub x: u16,
    /// Columns.
    pub w: u16,
}

/// Lays out the icicle of `top` in `cols` × `rows` cells: a child spans the columns between the
/// rounded cumulative widths of the siblings before it and through it, so siblings tile their
/// parent exactly; nodes narrower than a column are not visited.
pub fn layout<T: Shape + ?Sized>(t: &T, top: u32, m: Metric, cols: u16, rows: u16) -> Vec<Block> {
    let mut out = Vec::new();
    if cols == 0 || rows == 0 || t.span(top, m) <= 0.0 {
        return out;
    }
    let mut stack = vec![Block {
        node: top,
        row: 0,
        x: 0,
        w: cols,
    }];
    let (mut ids, mut kids) = (Vec::new(), Vec::new());
    while let Some(b) = stack.pop() {
        out.push(b);
        if b.row + 1 >= rows {
            continue;
        }
        let total = t.span(b.node, m);
        if total <= 0.0 {
            continue;
        }
        let scale = f64::from(b.w) / total;
        let mut cum = 0.0;
        widest_first(t, b.node, m, &mut ids, &mut kids);
        for &(w, c) in &kids {
            let x0 = (cum * scale).round() as u16;
            cum += w;
            let x1 = ((cum * scale).round() as u16).min(b.w);
            if x1 > x0 {
                stack.push(Block {
                    node: c,
                    row: b.row + 1,
                    x: b.x + x0,
                    w: x1 - x0,
                });
            }
        }
    }
    out
}

/// Formats a metric value: a duration, or a count.
pub fn format_value(v: i64, m: Metric) -> String {
    format_in(v, m, Unit::Time)
}

/// Formats a metric value of a tree of `unit`: a duration or bytes (`1.2 GiB`), or a count.
pub fn format_in(v: i64, m: Metric, unit: Unit) -> String {
    match (m.is_time(), unit) {
        (false, _) => v.to_string(),
        (true, Unit::Time) => format_dur(v),
        (true, Unit::Bytes) => mem_bytes(v),
    }
}

/// Borrowed view of what the flame view draws.
pub struct FlameWidget<'a> {
    /// The merged tree.
    pub tree: &'a FlameTree,
    /// Its names.
    pub strings: &'a Interner,
    /// View state.
    pub state: &'a FlameState,
    /// The sandwich of the selected name (sandwich mode).
    pub sandwich: Option<&'a Sandwich>,
    /// What the tree covers (`whole capture`, `range +1.2 ms … +3.4 ms`, a file name).
    pub scope: &'a str,
    /// A diff against a baseline: nodes coloured by signed Δ (slower warm, faster cool), the
    /// paths gone in B drawn hatched at A's width among B's nodes (the diff tree).
    pub diff: Option<&'a TreeDiff>,
}

/// Signed Δ of a normalised figure, in the metric's unit.
fn format_delta(v: f64, m: Metric) -> String {
    let sign = if v < 0.0 { "−" } else { "+" };
    format!("{sign}{}", format_value(v.abs().round() as i64, m))
}

impl FlameWidget<'_> {
    fn theme(&self) -> Theme {
        self.state.theme.unwrap_or(Theme {
            mode: ColorMode::None,
            light: false,
        })
    }

    /// True when `name` contains the search text, case-insensitively (per drawn block: ASCII
    /// text, the usual case, is compared in place without lower-cased copies).
    fn matches(&self, name: &str) -> bool {
        let q = &self.state.search;
        if q.is_empty() {
            return false;
        }
        if q.is_ascii() && name.is_ascii() {
            let n = q.as_bytes();
            return name
                .as_bytes()
                .windows(n.len())
                .any(|w| w.eq_ignore_ascii_case(n));
        }
        name.to_lowercase().contains(&q.to_lowercase())
    }

    /// Name text of node `n` of `t`: of the diff tree (gone nodes included) when `t` is the
    /// view's tree and a diff is shown.
    fn name_of<'s>(&'s self, t: &'s FlameTree, n: u32) -> &'s str {
        match self.diff {
            Some(d) if std::ptr::eq(t, self.tree) => d.name_str(t, n, self.strings),
            _ => t.name_str(n, self.strings),
        }
    }

    /// True when `n` is a path gone in B (the view's tree, with a diff).
    fn gone(&self, n: u32) -> bool {
        self.diff.is_some_and(|d| d.is_gone(n))
    }

    /// Draws the view into `area`.
    pub fn draw(&self, buf: &mut Buffer, area: Rect) {
        if area.width == 0 || area.height < 3 {
            return;
        }
        let st = self.state;
        let t = self.tree;
        let head = Rect { height: 1, ..area };
        let foot = Rect {
            y: area.y + area.height - 1,
            height: 1,
            ..area
        };
        let body = Rect {
            y: area.y + 1,
            height: area.height - 2,
            ..area
        };
        let mode = match st.mode {
            FlameMode::Icicle => "flame",
            FlameMode::Sandwich => "sandwich",
            FlameMode::Table => "table",
        };
        // With a diff the widths are B's (the header says so), the gone paths A's.
        let whose = if self.diff.is_some() { "B " } else { "" };
        let mut h = format!(
            " {mode} · {} · {whose}{} {} · {} nodes",
            text::sanitize(self.scope),
            st.metric.name_for(t.unit()),
            format_in(
                t.value(ROOT, st.metric).max(t.width(ROOT, st.metric)),
                st.metric,
                t.unit()
            ),
            t.len().saturating_sub(1)
        );
        if st.focus != ROOT {
            h.push_str(" · zoom: ");
            h.push_str(&text::fold(self.name_of(t, st.focus)));
        }
        if let Some(d) = self.diff {
            let m = st.metric;
            h.push_str(&format!(
                " · diff vs A{}: Δ {}",
                if d.per_step() { " per step" } else { "" },
                format_delta(d.delta(t, ROOT, m), m)
            ));
            let n = d.removed.len();
            if n > 0 {
                h.push_str(&format!(
                    " · {n} path{} gone in B ({}) drawn ╱ at A's width",
                    if n == 1 { "" } else { "s" },
                    format_delta(-d.gone_width(m), m)
                ));
            }
            h.push_str(" · warm slower, cool faster");
        }
        if t.unlinked > 0 {
            h.push_str(&format!(" · {} unlinked device activities", t.unlinked));
        }
        if !st.search.is_empty() {
            h.push_str(" · search: ");
            h.push_str(&text::sanitize(&st.search));
        }
        let hw = usize::from(head.width);
        buf.set_stringn(
            head.x,
            head.y,
            text::fit(&h, hw),
            hw,
            Style::default().add_modifier(Modifier::BOLD),
        );
        match st.mode {
            FlameMode::Icicle => self.icicle(buf, body, t, st.focus, false),
            FlameMode::Table => TableDraw {
                tree: self.tree,
                strings: self.strings,
                diff: self.diff,
                rows: &st.table,
                scroll: st.scroll,
                selected: st.selected,
                focus: st.focus,
                sort: st.sort,
                metric: st.metric,
            }
            .draw(buf, body, |name, n| {
                self.decorate(name, n, Style::default(), false)
            }),
            FlameMode::Sandwich => match self.sandwich {
                Some(s) if s.occurrences > 0 => {
                    let top = Rect {
                        height: body.height / 2,
                        ..body
                    };
                    let bottom = Rect {
                        y: body.y + top.height,
                        height: body.height - top.height,
                        ..body
                    };
                    // Both trees hold one root child: the function itself.
                    let f = |t: &FlameTree| t.children(ROOT).first().copied().unwrap_or(ROOT);
                    self.icicle(buf, top, &s.callers, f(&s.callers), true);
                    self.icicle(buf, bottom, &s.callees, f(&s.callees), false);
                }
                _ => {
                    let line = if self.gone(st.selected) {
                        format!(
                            " “{}” is gone in B: no occurrence in B to sandwich",
                            text::fold(self.name_of(t, st.selected))
                        )
                    } else {
                        " no occurrence of the selected name".to_string()
                    };
                    let w = usize::from(body.width);
                    buf.set_stringn(body.x, body.y, text::fit(&line, w), w, Style::default());
                }
            },
        }
        self.footer(buf, foot);
    }

    fn footer(&self, buf: &mut Buffer, foot: Rect) {
        let (t, st) = (self.tree, self.state);
        let n = st.selected;
        let scope = t.width(ROOT, st.metric).max(1) as f64;
        let line = if let Some(d) = self.diff.filter(|d| d.is_gone(n)) {
            // A path only in A: A's figures (normalised as the rest), B's are 0.
            let m = st.metric;
            let k = d.a_node(n).unwrap_or(ROOT);
            let per = |v: i64| format_dur((v as f64 / d.div_a).round() as i64);
            let wa = d.a_width(n, m);
            let ps = if d.per_step() { " per step" } else { "" };
            format!(
                " {} · gone in B · {} A {} → B 0{ps} · Δ {} (−100%) · A{ps}: total {} · self {} · device {} · {}× in A",
                text::fold(self.name_of(t, n)),
                m.name(),
                format_value(wa.round() as i64, m),
                format_delta(-wa, m),
                per(d.a.total(k)),
                per(d.a.self_time(k)),
                per(d.a.device(k)),
                d.a.count(k),
            )
        } else if let Some(d) = self.diff.filter(|_| n != ROOT) {
            let m = st.metric;
            let (wa, wb) = (d.a_width(n, m), d.b_width(t, n, m));
            let pct = if wa > 0.0 {
                format!(" ({:+.1}%)", (wb - wa) / wa * 100.0)
            } else {
                " (new in B)".to_string()
            };
            format!(
                " {} · {} A {} → B {}{} · Δ {}",
                text::fold(t.name_str(n, self.strings)),
                m.name(),
                format_value(wa.round() as i64, m),
                format_value(wb.round() as i64, m),
                if d.per_step() { " per step" } else { "" },
                format_delta(wb - wa, m) + &pct
            )
        } else if n == ROOT {
            " (whole scope) · select a node with the arrow keys".to_string()
        } else if t.unit() == Unit::Bytes {
            let allocs = t.width(n, Metric::Count);
            format!(
                " {} · live {} · self {} · {allocs} allocation{} · {:.1}% of scope",
                text::fold(t.name_str(n, self.strings)),
                mem_bytes(t.total(n)),
                mem_bytes(t.self_time(n)),
                if allocs == 1 { "" } else { "s" },
                t.width(n, st.metric) as f64 * 100.0 / scope
            )
        } else {
            format!(
                " {} · total {} · self {} · device {} · count {} · {:.1}% of scope",
                text::fold(t.name_str(n, self.strings)),
                format_dur(t.total(n)),
                format_dur(t.self_time(n)),
                format_dur(t.device(n)),
                t.count(n),
                t.width(n, st.metric) as f64 * 100.0 / scope
            )
        };
        let w = usize::from(foot.width);
        buf.set_stringn(foot.x, foot.y, text::fit(&line, w), w, Style::default());
    }

    fn decorate(&self, name: &str, n: u32, style: Style, same_tree: bool) -> Style {
        let mut s = style;
        if !self.state.search.is_empty() {
            if self.matches(name) {
                s = colors::hit(s);
            } else {
                s = s.add_modifier(Modifier::DIM);
            }
        }
        if same_tree && n == self.state.selected {
            s = colors::selected(s);
        }
        s
    }

    /// The icicle of `top` in `area` (`upward`: rows from the bottom, for callers).
    fn icicle(&self, buf: &mut Buffer, area: Rect, t: &FlameTree, top: u32, upward: bool) {
        let theme = self.theme();
        let same = std::ptr::eq(t, self.tree);
        // With a diff, the view's tree is the diff tree: B's nodes and the paths gone in B.
        let blocks = match self.diff.filter(|_| same) {
            Some(d) => layout(&d.over(t), top, self.state.metric, area.width, area.height),
            None => layout(t, top, self.state.metric, area.width, area.height),
        };
        for b in blocks {
            let y = if upward {
                area.y + area.height - 1 - b.row
            } else {
                area.y + b.row
            };
            let name = self.name_of(t, b.node);
            let slot = colors::name_slot(name);
            let gone = same && self.gone(b.node);
            // A diff colours by signed change instead of by name.
            let change = self
                .diff
                .filter(|_| same)
                .map(|d| d.change(t, b.node, self.state.metric));
            let (body_style, edge_style, label_style) = match change {
                // Gone in B: the coolest colour, hatched, its label struck through.
                Some(c) if gone => {
                    let (b, e, l) = colors::delta_styles(theme, c);
                    (b, e, l.add_modifier(Modifier::CROSSED_OUT))
                }
                Some(c) => colors::delta_styles(theme, c),
                None => (
                    colors::body_style(theme, slot),
                    colors::edge_style(theme, slot),
                    colors::label_style(theme, slot),
                ),
            };
            // Without colours the fill says it: ▓ slower, ░ faster (beyond 2 %).
            let fill = match change {
                _ if gone => "╱",
                Some(c) if theme.mode == ColorMode::None && c > 0.02 => "▓",
                Some(c) if theme.mode == ColorMode::None && c < -0.02 => "░",
                _ => "█",
            };
            let body = self.decorate(name, b.node, body_style, same);
            for k in 0..b.w {
                let last = b.w >= 2 && k + 1 == b.w;
                if let Some(c) = buf.cell_mut((area.x + b.x + k, y)) {
                    if last {
                        c.set_symbol("▌")
                            .set_style(self.decorate(name, b.node, edge_style, same));
                    } else {
                        c.set_symbol(fill).set_style(body);
                    }
                }
            }
            let len = usize::from(b.w.saturating_sub(1)).max(1);
            if len >= 3 {
                let shown_name = if b.node == ROOT {
                    std::borrow::Cow::Borrowed("all")
                } else {
                    text::fold(name)
                };
                let (x, room) = if len >= 5 {
                    (b.x + 1, len - 2)
                } else {
                    (b.x, len)
                };
                let shown = text::fit_keep_number(&shown_name, room);
                let style = self.decorate(name, b.node, label_style, same);
                buf.set_stringn(area.x + x, y, &*shown, room, style);
            }
        }
    }
}
