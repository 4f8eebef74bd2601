//! A sortable, filterable table popup: the shared body of the statistics (`t`), rankings (`o`)
//! and GPU (`g`) views. Rows are computed once when the view opens; sorting (`s` cycles the
//! column, `S` reverses) and the text filter (`/`, the search matcher over the first column)
//! only reorder an index vector, so 100 k rows re-sort in milliseconds. `Enter` runs the row's
//! target: jump to a slice, hit every occurrence of a name, or go to a track. Keys and drawing
//! (the [`View`](super::View) impl) are in `table_view.rs`.

use crate::model::Ps;
use crate::model::StrId;
use crate::ui::action::Action;
use crate::ui::hits::HitList;
use crate::ui::keymap::ViewKind;
use crate::ui::msg::Msg;
use crate::ui::ruler::format_dur;
use crate::ui::state::{Mark, State};
use crate::ui::text;
use std::cmp::Ordering;

/// The scope of a table: the marked range when one is marked (with a label), else the whole
/// capture.
pub fn scope(st: &State) -> (Option<(Ps, Ps)>, String) {
    match st.mark {
        Mark::Range(a, b, _) => (Some((a, b)), format!("range of {}", format_dur(b - a))),
        _ => (None, "whole capture".into()),
    }
}

/// Sort key of one cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Key {
    /// Numbers sort largest first.
    Num(f64),
    /// Text sorts ascending.
    Text(String),
}

/// A column.
#[derive(Clone, Debug)]
pub struct Column {
    /// Header.
    pub name: &'static str,
    /// Width in cells (0: takes the rest).
    pub width: u16,
    /// Right-aligned (numbers).
    pub right: bool,
}

/// What `Enter` on a row does.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// Nothing.
    None,
    /// Select and show this slice.
    Slice(u32),
    /// Make every slice named so a hit and jump to the first.
    Name(StrId),
    /// Make these slices hits (in this order for `n` / `N`) and jump to the first.
    Slices(Vec<u32>),
    /// Move the cursor to this track.
    Track(u32),
}

/// One row: shown text and sort key per column, and its target.
#[derive(Clone, Debug)]
pub struct Row {
    /// Cell text per column.
    pub cells: Vec<String>,
    /// Sort key per column.
    pub keys: Vec<Key>,
    /// `Enter` target.
    pub target: Target,
    /// A bar (0..=1) drawn under the last column, when set.
    pub bar: Option<f64>,
}

/// Where a table's rows come from when actions of its own recompute them (the statistics
/// table's grouping and filters): the table keeps its sort, filter text and source.
pub trait Source: std::fmt::Debug + Send {
    /// Handles `action` (one the table itself does not use): the rebuilt table, or why it could
    /// not be rebuilt (shown in the status line); `None` when the action is not the source's.
    fn on_action(&mut self, action: Action, st: &State) -> Option<Result<TableView, String>>;

    /// Handles `action` (one the table itself does not use) with messages: opening another
    /// view (the diff table's aligned timelines, the memory table's bytes flame); `None` to
    /// fall back to [`Source::on_action`].
    fn on_action_msgs(&mut self, _action: Action, _st: &State) -> Option<Vec<Msg>> {
        None
    }

    /// For a row without its own target: the slices it stands for (made the hits by `Enter`)
    /// and their label; `None` when it has none.
    fn slices_of(&self, _row: &Row, _st: &State) -> Option<(String, Vec<u32>)> {
        None
    }

    /// For a row without its own target: what `Enter` does instead of making hits (the memory
    /// table shows a call stack); `None` to fall back to [`Source::slices_of`].
    fn confirm(&self, _row: &Row, _st: &State) -> Option<Vec<Msg>> {
        None
    }

    /// When `action` asks for text (the diff table's step range): the prompt's label and its
    /// starting text; `None` when it does not.
    fn prompt(&self, _action: Action) -> Option<(String, String)> {
        None
    }

    /// The text typed at the prompt of `action`, `Enter`ed: the rebuilt table, or why the text
    /// was not taken (shown in the status line; the prompt stays open to fix it).
    fn on_prompt(
        &mut self,
        _action: Action,
        _text: &str,
        _st: &State,
    ) -> Result<TableView, String> {
        Err("this table takes no text".into())
    }
}

/// A text prompt opened by a [`Source`] (typing goes into `text` until `Enter` or `Esc`).
#[derive(Clone, Debug, PartialEq)]
pub struct Prompt {
    /// The action that asked for it.
    pub action: Action,
    /// What to type, shown before the text.
    pub label: String,
    /// Typed so far.
    pub text: String,
    /// Why the last `Enter` was refused (shown until the text changes).
    pub error: Option<String>,
}

/// The table view.
#[derive(Debug)]
pub struct TableView {
    pub(super) kind: ViewKind,
    /// Title (with scope).
    pub title: String,
    /// A line under the title (totals, notes).
    pub note: String,
    /// What the figures mean, wrapped over up to 3 lines above the column heads (empty: none).
    pub legend: String,
    /// Columns.
    pub columns: Vec<Column>,
    /// Rows, in computation order.
    pub rows: Vec<Row>,
    /// Visible rows (indices into `rows`) in display order.
    pub order: Vec<usize>,
    /// Sort column and direction (`None`: computation order).
    pub sort: Option<(usize, bool)>,
    /// Filter text over the first column.
    pub filter: String,
    /// Typing into the filter.
    pub typing: bool,
    /// Cursor in `order`.
    pub selected: usize,
    /// Label of the hit list made from `Target::Slices` (or from the rows).
    pub hits_label: String,
    /// `Enter` on a `Target::Slice` row makes every row's slice a hit, in display order.
    pub hits_from_rows: bool,
    /// Per text column: each row's rank in ascending order, computed on the first sort by it.
    text_ranks: Vec<Option<Vec<u32>>>,
    /// Recomputes the rows on actions the table does not handle itself.
    pub source: Option<Box<dyn Source>>,
    /// The source's text prompt while it is open.
    pub prompt: Option<Prompt>,
    /// Columns hidden last on a narrow terminal (those the user just asked for, `A`).
    pub keep: Vec<usize>,
    /// The last column layout and what it was computed for: it reads every row's cells, so it
    /// is redone only when the width, the sort (the head's arrow) or the rows change.
    pub(super) layout: std::cell::RefCell<Option<(LayoutKey, super::table_layout::Layout)>>,
}

/// What a cached column layout depends on: width, sort, and the rows (their buffer and count;
/// `replace` and every source install a new `Vec`).
pub(super) type LayoutKey = (usize, Option<(usize, bool)>, usize, usize);

impl TableView {
    /// A table of `kind` (its key bindings) in computation order.
    pub fn new(kind: ViewKind, title: String, columns: Vec<Column>, rows: Vec<Row>) -> TableView {
        let order = (0..rows.len()).collect();
        TableView {
            kind,
            title,
            note: String::new(),
            legend: String::new(),
            columns,
            rows,
            order,
            sort: None,
            filter: String::new(),
            typing: false,
            selected: 0,
            hits_label: String::new(),
            hits_from_rows: false,
            text_ranks: Vec::new(),
            source: None,
            prompt: None,
            keep: Vec::new(),
            layout: std::cell::RefCell::new(None),
        }
    }

    /// Takes the title, note, columns and rows of `new`, keeping the sort, filter, cursor
    /// position and source.
    pub fn replace(&mut self, new: TableView) {
        self.title = new.title;
        self.note = new.note;
        self.columns = new.columns;
        self.rows = new.rows;
        self.hits_label = new.hits_label;
        self.hits_from_rows = new.hits_from_rows;
        self.keep = new.keep;
        self.text_ranks.clear();
        self.refresh();
    }

    /// Re-filters and re-sorts `order`.
    pub fn refresh(&mut self) {
        // The filter keeps rows whose first column contains the filter's characters in order
        // (fuzzy, smart case: case-sensitive only with an upper-case letter) — the same rows
        // the search matcher accepts, without scoring them.
        let pat: Vec<char> = self.filter.trim().chars().collect();
        let smart = pat.iter().any(|c| c.is_uppercase());
        self.order.clear();
        for (i, r) in self.rows.iter().enumerate() {
            if pat.is_empty() || r.cells.first().is_some_and(|c| subsequence(c, &pat, smart)) {
                self.order.push(i);
            }
        }
        if let Some((c, rev)) = self.sort {
            // Text columns sort by a rank computed once per column (rows never change), so
            // every sort is of numbers: (key, row) pairs in a flat array, ties in row order.
            if self.text_ranks.len() < self.columns.len() {
                self.text_ranks.resize(self.columns.len(), None);
            }
            let rows = &self.rows;
            let text = rows
                .iter()
                .any(|r| matches!(r.keys.get(c), Some(Key::Text(_))));
            if text && self.text_ranks[c].is_none() {
                let mut idx: Vec<u32> = (0..rows.len() as u32).collect();
                idx.sort_by(|&a, &b| {
                    cmp_key(rows[a as usize].keys.get(c), rows[b as usize].keys.get(c))
                });
                let mut rank = vec![0u32; rows.len()];
                for (k, &i) in idx.iter().enumerate() {
                    rank[i as usize] = k as u32;
                }
                self.text_ranks[c] = Some(rank);
            }
            let ranks = self.text_ranks[c].as_deref();
            let mut v: Vec<(f64, u32)> = self
                .order
                .iter()
                .map(|&i| {
                    let k = match (rows[i].keys.get(c), ranks) {
                        (Some(Key::Num(x)), _) => *x,
                        // Ascending text = descending negated rank.
                        (_, Some(r)) => -f64::from(r[i]),
                        _ => 0.0,
                    };
                    (k, i as u32)
                })
                .collect();
            v.sort_unstable_by(|a, b| {
                let o = b.0.total_cmp(&a.0);
                let o = if rev { o.reverse() } else { o };
                o.then(a.1.cmp(&b.1))
            });
            self.order.clear();
            self.order.extend(v.into_iter().map(|(_, i)| i as usize));
        }
        // With a filter: the best matches first ("Profiler" lists `ProfilerStep*` before a
        // long kernel name that happens to hold the letters), the chosen sort among equals.
        if !pat.is_empty() {
            let rows = &self.rows;
            crate::analysis::search::table_filter::order_by_match(
                &self.filter,
                &mut self.order,
                |i| rows[i].cells.first().map_or("", String::as_str),
            );
        }
        self.selected = self.selected.min(self.order.len().saturating_sub(1));
    }

    /// Sorts by column `c` (`rev` reverses its natural order).
    pub fn sort_by(&mut self, c: usize, rev: bool) {
        self.sort = Some((c, rev));
        self.refresh();
    }

    pub(super) fn page(st: &State) -> usize {
        usize::from(st.size.1.saturating_sub(10)).max(1)
    }

    pub(super) fn confirm(&self, st: &State) -> Vec<Msg> {
        let Some(row) = self
            .order
            .get(self.selected)
            .and_then(|&i| self.rows.get(i))
        else {
            return Vec::new();
        };
        let Some(l) = st.loaded() else {
            return vec![Msg::Pop];
        };
        match &row.target {
            Target::None => {
                if let Some(msgs) = self.source.as_ref().and_then(|s| s.confirm(row, st)) {
                    return msgs;
                }
                let Some((label, ids)) = self.source.as_ref().and_then(|s| s.slices_of(row, st))
                else {
                    return Vec::new();
                };
                let hits = HitList::new(&l.cap, label, ids);
                match hits.ids.first() {
                    Some(&first) => vec![Msg::Pop, Msg::SetHits(hits), Msg::JumpTo(first)],
                    None => vec![Msg::Notice("no timed event in that row".into())],
                }
            }
            Target::Slice(id) if self.hits_from_rows => {
                let ids: Vec<u32> = self
                    .order
                    .iter()
                    .filter_map(|&i| match self.rows[i].target {
                        Target::Slice(s) => Some(s),
                        _ => None,
                    })
                    .collect();
                vec![
                    Msg::Pop,
                    Msg::SetHits(HitList::in_order(&l.cap, self.hits_label.clone(), ids)),
                    Msg::JumpTo(*id),
                ]
            }
            Target::Slice(id) => vec![Msg::Pop, Msg::JumpTo(*id)],
            Target::Slices(ids) => match ids.first() {
                Some(&first) => vec![
                    Msg::Pop,
                    Msg::SetHits(HitList::in_order(
                        &l.cap,
                        self.hits_label.clone(),
                        ids.clone(),
                    )),
                    Msg::JumpTo(first),
                ],
                None => Vec::new(),
            },
            Target::Name(name) => {
                let ids = l.index.occurrences(*name).to_vec();
                let Some(&first) = ids.first() else {
                    return vec![Msg::Notice("no timed event of that name".into())];
                };
                let label = text::fit(&text::sanitize(l.cap.strings.get(*name)), 30).into_owned();
                vec![
                    Msg::Pop,
                    Msg::SetHits(HitList::new(&l.cap, format!("“{label}”"), ids)),
                    Msg::JumpTo(first),
                ]
            }
            Target::Track(t) => vec![Msg::Pop, Msg::FocusTrack(*t)],
        }
    }
}

/// True when the chars of `pat` occur in `s` in order (case-insensitive unless `exact`).
fn subsequence(s: &str, pat: &[char], exact: bool) -> bool {
    if s.is_ascii() && pat.iter().all(char::is_ascii) {
        let mut k = 0;
        for &b in s.as_bytes() {
            if k == pat.len() {
                break;
            }
            let w = pat[k] as u8;
            if b == w || (!exact && b.eq_ignore_ascii_case(&w)) {
                k += 1;
            }
        }
        return k == pat.len();
    }
    let mut p = pat.iter().peekable();
    for c in s.chars() {
        let Some(&&want) = p.peek() else {
            return true;
        };
        let hit = if exact {
            c == want
        } else {
            c.to_lowercase().eq(want.to_lowercase())
        };
        if hit {
            p.next();
        }
    }
    p.peek().is_none()
}

fn cmp_key(a: Option<&Key>, b: Option<&Key>) -> Ordering {
    match (a, b) {
        (Some(Key::Num(x)), Some(Key::Num(y))) => y.partial_cmp(x).unwrap_or(Ordering::Equal),
        (Some(Key::Text(x)), Some(Key::Text(y))) => x.cmp(y),
        (Some(Key::Num(_)), _) => Ordering::Less,
        (_, Some(Key::Num(_))) => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(n: usize) -> TableView {
        let rows = (0..n)
            .map(|i| Row {
                cells: vec![format!("name{i}"), i.to_string()],
                keys: vec![
                    Key::Text(format!("name{i:06}")),
                    Key::Num((i * 7 % 13) as f64),
                ],
                target: Target::None,
                bar: None,
            })
            .collect();
        TableView::new(
            ViewKind::Table,
            "t".into(),
            vec![
                Column {
                    name: "name",
                    width: 0,
                    right: false,
                },
                Column {
                    name: "n",
                    width: 6,
                    right: true,
                },
            ],
            rows,
        )
    }

    #[test]
    fn filter_orders_by_match_quality_first() {
        let mut t = table(3);
        let names = [
            "void at::native::vectorized_kernel<Pro_fi_ler>",
            "aten::mm",
            "ProfilerStep*",
        ];
        for (r, n) in t.rows.iter_mut().zip(names) {
            r.cells[0] = n.to_string();
            r.keys[0] = Key::Text(n.to_string());
        }
        // By the number column the kernel would come first; the filter puts the strong match
        // first.
        t.sort_by(1, true);
        t.filter = "Profiler".into();
        t.refresh();
        assert_eq!(t.rows[t.order[0]].cells[0], "ProfilerStep*");
        assert!(!t.order.iter().any(|&i| t.rows[i].cells[0] == "aten::mm"));
    }

    #[test]
    fn filter_is_a_smart_case_subsequence() {
        let p = |s: &str| s.chars().collect::<Vec<_>>();
        assert!(subsequence("aten::conv2d", &p("cv2"), false));
        assert!(subsequence("ATEN::Conv2d", &p("conv"), false));
        assert!(!subsequence("aten::conv2d", &p("Conv"), true));
        assert!(subsequence("café_kernel", &p("éker"), false));
        assert!(subsequence("ÉCOLE", &p("éc"), false));
        assert!(!subsequence("abc", &p("abcd"), false));
        assert!(!subsequence("abc", &p("ca"), false));
    }

    #[test]
    fn text_columns_sort_ascending_and_reverse() {
        let mut t = table(30);
        t.sort_by(0, false);
        let names: Vec<&str> = t
            .order
            .iter()
            .map(|&i| t.rows[i].cells[0].as_str())
            .collect();
        let mut sorted = names.clone();
        sorted.sort_by_key(|n| format!("name{:06}", &n[4..].parse::<u32>().unwrap()));
        assert_eq!(names, sorted);
        t.sort_by(0, true);
        assert_eq!(t.rows[t.order[0]].cells[0], "name29");
    }

    #[test]
    fn sorts_by_number_desc_then_reversed_and_filters() {
        let mut t = table(50);
        t.sort_by(1, false);
        let keys: Vec<f64> = t
            .order
            .iter()
            .map(|&i| match t.rows[i].keys[1] {
                Key::Num(x) => x,
                _ => unreachable!(),
            })
            .collect();
        assert!(keys.windows(2).all(|w| w[0] >= w[1]));
        t.sort_by(1, true);
        let first = t.order[0];
        assert_eq!(t.rows[first].keys[1], Key::Num(0.0));
        t.filter = "name4".into();
        t.refresh();
        assert!(t.order.iter().all(|&i| t.rows[i].cells[0].contains('4')));
        assert!(t.order.len() >= 5);
    }
}
