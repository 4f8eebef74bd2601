//! The flame view's table mode: the tree indented as rows (DFS from the zoomed node, siblings
//! ordered by the chosen column), and its drawing — name, total, self, device, count and % of
//! the scope. With a diff, the rows are the diff tree's: the paths gone in B are listed among
//! B's nodes, marked `╱`, with A's figures.

use crate::analysis::flame::{FlameTree, Metric, ROOT, Shape, TreeDiff, Unit};
use crate::model::Interner;
use crate::ui::colors;
use crate::ui::memory::mem_bytes;
use crate::ui::ruler::format_dur;
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

/// Table column a table is sorted by (siblings are ordered by it, largest first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortCol {
    /// Name, ascending.
    Name,
    /// Inclusive wall time.
    #[default]
    Total,
    /// Self time.
    SelfTime,
    /// Device time.
    Device,
    /// Instances.
    Count,
}

impl SortCol {
    /// The next column (the table's sort key cycles through them).
    pub fn next(self) -> SortCol {
        match self {
            SortCol::Name => SortCol::Total,
            SortCol::Total => SortCol::SelfTime,
            SortCol::SelfTime => SortCol::Device,
            SortCol::Device => SortCol::Count,
            SortCol::Count => SortCol::Name,
        }
    }
}

/// The rows of the table of `t` from `focus` (excluded when it is the root) into `out`: DFS,
/// each node's children ordered by `order`.
pub fn table_rows<T: Shape + ?Sized>(
    t: &T,
    focus: u32,
    out: &mut Vec<u32>,
    order: impl Fn(&mut [u32]),
) {
    out.clear();
    let mut stack = vec![focus];
    let mut kids = Vec::new();
    while let Some(n) = stack.pop() {
        if n != ROOT {
            out.push(n);
        }
        kids.clear();
        t.children_into(n, &mut kids);
        order(&mut kids);
        stack.extend(kids.iter().rev());
    }
}

/// A node's figure for column `col` (0 for the name).
pub fn sort_key(t: &FlameTree, n: u32, col: SortCol) -> i64 {
    match col {
        SortCol::Name => 0,
        SortCol::Total => t.total(n),
        SortCol::SelfTime => t.self_time(n),
        SortCol::Device => t.device(n),
        SortCol::Count => t.value(n, Metric::Count),
    }
}

/// Orders sibling nodes `v` of `t` by `col` (names ascending, figures largest first).
pub fn sort_nodes(t: &FlameTree, strings: &Interner, v: &mut [u32], col: SortCol) {
    if col == SortCol::Name {
        v.sort_by(|&a, &b| t.name_str(a, strings).cmp(t.name_str(b, strings)));
    } else {
        v.sort_by_key(|&n| std::cmp::Reverse(sort_key(t, n, col)));
    }
}

/// Orders sibling nodes `v` of the diff tree of `b` by `col`: gone nodes by A's figures.
pub fn sort_diff_nodes(
    b: &FlameTree,
    d: &TreeDiff,
    strings: &Interner,
    v: &mut [u32],
    col: SortCol,
) {
    if col == SortCol::Name {
        v.sort_by(|&x, &y| d.name_str(b, x, strings).cmp(d.name_str(b, y, strings)));
    } else {
        let key = |n: u32| match d.a_node(n) {
            Some(k) if d.is_gone(n) => sort_key(&d.a, k, col),
            _ => sort_key(b, n, col),
        };
        v.sort_by_key(|&n| std::cmp::Reverse(key(n)));
    }
}

/// What the table draws: the tree (and its diff), the rows and the view's cursor.
pub struct TableDraw<'a> {
    /// The merged tree (B's with a diff).
    pub tree: &'a FlameTree,
    /// Its names.
    pub strings: &'a Interner,
    /// The diff against A, when shown.
    pub diff: Option<&'a TreeDiff>,
    /// Rows (from [`table_rows`]).
    pub rows: &'a [u32],
    /// First row shown.
    pub scroll: usize,
    /// Selected node.
    pub selected: u32,
    /// Zoomed node (indentation is relative to it).
    pub focus: u32,
    /// Sort column (marked in the header).
    pub sort: SortCol,
    /// Metric of the % column.
    pub metric: Metric,
}

impl TableDraw<'_> {
    /// Draws the header and the visible rows into `area`; `style(name, node)` gives a row's
    /// style before selection (search hits, dimming).
    pub fn draw(&self, buf: &mut Buffer, area: Rect, style: impl Fn(&str, u32) -> Style) {
        let (t, st) = (self.tree, self);
        let w = usize::from(area.width);
        let num = 11;
        // Name, then 3 times of `num`, count 8 and % 6, with their gaps: 56 columns.
        let name_w = w.saturating_sub(num * 3 + 23).max(8);
        let arrow = |c: SortCol| if st.sort == c { "▼" } else { " " };
        let bytes = t.unit() == Unit::Bytes;
        let fmt = |v: i64| match t.unit() {
            Unit::Time => format_dur(v),
            Unit::Bytes => mem_bytes(v),
        };
        let header = format!(
            "{:<name_w$} {:>num$}{} {:>num$}{} {:>num$}{} {:>8}{} {:>6}",
            format!("name{}", if st.sort == SortCol::Name { " ▲" } else { "" }),
            if bytes { "live" } else { "total" },
            arrow(SortCol::Total),
            "self",
            arrow(SortCol::SelfTime),
            if bytes { "" } else { "device" },
            arrow(SortCol::Device),
            "count",
            arrow(SortCol::Count),
            "%",
        );
        buf.set_stringn(
            area.x,
            area.y,
            text::fit(&header, w),
            w,
            Style::default().add_modifier(Modifier::BOLD),
        );
        let scope = t.width(ROOT, st.metric).max(1) as f64;
        let rows = usize::from(area.height.saturating_sub(1));
        let depth = |n: u32| self.diff.map_or(t.depth(n), |d| d.depth(t, n));
        let base = depth(st.focus);
        for (k, &n) in st.rows.iter().skip(st.scroll).take(rows).enumerate() {
            let indent = usize::from(depth(n).saturating_sub(base + 1)).min(name_w / 2);
            let name = match self.diff {
                Some(d) => d.name_str(t, n, self.strings),
                None => t.name_str(n, self.strings),
            };
            // A path gone in B: A's (whole) figures, marked `╱`, `gone` for its share of B.
            let gone = self
                .diff
                .filter(|d| d.is_gone(n))
                .and_then(|d| Some((&d.a, d.a_node(n)?)));
            let (ft, fk) = gone.unwrap_or((t, n));
            let label = format!(
                "{}{}{}",
                " ".repeat(indent),
                if gone.is_some() { "╱ " } else { "" },
                text::fold(name)
            );
            let share = if gone.is_some() {
                format!("{:>6}", "gone")
            } else {
                format!("{:>5.1}%", t.width(n, st.metric) as f64 * 100.0 / scope)
            };
            let line = format!(
                "{:<name_w$} {:>num$}  {:>num$}  {:>num$}  {:>8}  {share}",
                text::fit(&label, name_w),
                fmt(ft.total(fk)),
                fmt(ft.self_time(fk)),
                if bytes {
                    String::new()
                } else {
                    fmt(ft.device(fk))
                },
                ft.count(fk),
            );
            let mut style = style(name, n);
            if n == st.selected {
                style = colors::selected(style);
            }
            buf.set_stringn(area.x, area.y + 1 + k as u16, text::fit(&line, w), w, style);
        }
    }
}
