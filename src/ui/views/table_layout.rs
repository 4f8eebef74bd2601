//! Column widths of a table popup: the first (name) column takes the space first. When the
//! declared widths leave the names too little room, numbers are written short (`12.345 ms` →
//! `12.3ms`) in columns sized to their longest short value, and when that is still not enough,
//! columns are hidden from the right before a name is cut below [`MIN_NAME`] cells.

use crate::ui::text;

/// The fewest cells a name gets before columns are hidden (or all of its text, when shorter).
pub const MIN_NAME: usize = 24;

/// How each column is drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Width of each column; `None`: hidden.
    pub widths: Vec<Option<u16>>,
    /// Numbers are written short ([`compact`]).
    pub compact: bool,
}

impl Layout {
    /// Columns hidden to make room for the names.
    pub fn hidden(&self) -> usize {
        self.widths.iter().filter(|w| w.is_none()).count()
    }
}

/// Lays out columns of declared widths `declared` (headers `heads`, the sort arrow included) in
/// `width` cells for the cells of `rows`. Column 0 is the name; the others keep their declared
/// width while the names fit. Columns in `keep` are hidden last (after every other one but the
/// first number): the column telling identical names apart ([`telling_apart`]), columns the
/// user just asked for.
pub fn layout<'a>(
    declared: &[u16],
    heads: &[String],
    rows: impl Iterator<Item = &'a [String]> + Clone,
    width: usize,
    keep: &[usize],
) -> Layout {
    let n = declared.len();
    let head_w = |i: usize| heads.get(i).map_or(0, |h| text::width(h));
    let name_need = rows
        .clone()
        .map(|r| r.first().map_or(0, |s| text::width(s)))
        .max()
        .unwrap_or(0)
        .max(head_w(0));
    let min_name = name_need.min(MIN_NAME);
    let full: Vec<usize> = (1..n)
        .map(|i| (declared[i] as usize).max(head_w(i)))
        .collect();
    let all = vec![true; n.saturating_sub(1)];
    let used = |ws: &[usize], shown: &[bool]| -> usize {
        ws.iter()
            .zip(shown)
            .filter(|(_, s)| **s)
            .map(|(w, _)| w + 1)
            .sum()
    };
    // 1. Declared widths, when the names keep their full length (or the floor).
    if width.saturating_sub(used(&full, &all)) >= name_need.min(width / 2).max(min_name) {
        return finish(&full, &all, width, false);
    }
    // 2. Short numbers, each column as wide as its longest short value.
    let short: Vec<usize> = (1..n)
        .map(|i| {
            let cells = rows
                .clone()
                .map(|r| r.get(i).map_or(0, |s| text::width(&compact(s))))
                .max()
                .unwrap_or(0);
            cells.max(head_w(i)).min(full[i - 1])
        })
        .collect();
    // 3. Hide columns from the right until the names get their floor: first those not kept,
    //    then the kept ones; the first number stays.
    let mut shown = all;
    for pass_keep in [false, true] {
        for i in (2..n).rev() {
            if width.saturating_sub(used(&short, &shown)) >= min_name {
                break;
            }
            if keep.contains(&i) == pass_keep {
                shown[i - 1] = false;
            }
        }
    }
    finish(&short, &shown, width, true)
}

/// The first text column (`text_cols`, by index) whose cells differ between two rows of the
/// same name (column 0), e.g. the `kind` of a host and a device `ProfilerStep*`: the column
/// that must stay when columns are hidden. `None` when every name is unique or no text
/// column tells them apart.
pub fn telling_apart<'a>(
    rows: impl Iterator<Item = &'a [String]>,
    text_cols: &[usize],
) -> Option<usize> {
    let mut seen: rustc_hash::FxHashMap<&str, &[String]> = rustc_hash::FxHashMap::default();
    let mut best: Option<usize> = None;
    for r in rows {
        let Some(name) = r.first() else {
            continue;
        };
        match seen.entry(name.as_str()) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(r);
            }
            std::collections::hash_map::Entry::Occupied(o) => {
                let first = *o.get();
                if let Some(&c) = text_cols
                    .iter()
                    .filter(|&&c| c > 0 && best.is_none_or(|b| c < b))
                    .find(|&&c| first.get(c) != r.get(c))
                {
                    best = Some(c);
                }
            }
        }
    }
    best
}

fn finish(ws: &[usize], shown: &[bool], width: usize, compact: bool) -> Layout {
    let rest: usize = ws
        .iter()
        .zip(shown)
        .filter(|(_, s)| **s)
        .map(|(w, _)| w + 1)
        .sum();
    let name = width.saturating_sub(rest).max(1);
    let mut widths = vec![Some(name as u16)];
    widths.extend(ws.iter().zip(shown).map(|(&w, &s)| s.then_some(w as u16)));
    Layout { widths, compact }
}

/// A number with a unit written short, about three significant digits and no space:
/// `12.345 ms` → `12.3ms`, `1.250 µs` → `1.25µs`, `45.1%` stays, `0` stays. Other text is
/// returned as it is.
pub fn compact(s: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let t = s.trim();
    let (num, unit) = match t.split_once(' ') {
        Some((a, b)) if !b.contains(' ') => (a, b),
        _ => return Cow::Borrowed(s),
    };
    // Signs: `+`, ASCII `-`, and the `−` (U+2212) of signed durations.
    let (sign, digits) = match num.chars().next() {
        Some('+') => ("+", &num[1..]),
        Some('−') => ("−", &num['−'.len_utf8()..]),
        _ => ("", num),
    };
    let Ok(v) = digits.parse::<f64>() else {
        return Cow::Borrowed(s);
    };
    if !unit.chars().all(|c| c.is_alphabetic() || c == '%') {
        return Cow::Borrowed(s);
    }
    let a = v.abs();
    let dec = if a >= 100.0 || a == a.trunc() && a < 1e15 && !digits.contains('.') {
        0
    } else if a >= 10.0 {
        1
    } else {
        2
    };
    Cow::Owned(format!("{sign}{v:.dec$}{unit}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(ws: &[u16]) -> Vec<u16> {
        ws.to_vec()
    }

    fn rows(names: &[&str], cells: &[&str]) -> Vec<Vec<String>> {
        names
            .iter()
            .map(|n| {
                let mut r = vec![n.to_string()];
                r.extend(cells.iter().map(|c| c.to_string()));
                r
            })
            .collect()
    }

    #[test]
    fn short_numbers() {
        assert_eq!(compact("12.345 ms"), "12.3ms");
        assert_eq!(compact("1.250 µs"), "1.25µs");
        assert_eq!(compact("412.3 µs"), "412µs");
        assert_eq!(compact("45.1%"), "45.1%");
        assert_eq!(compact("0"), "0");
        assert_eq!(compact("812 ps"), "812ps");
        assert_eq!(compact("+1.20 ms"), "+1.20ms");
        assert_eq!(compact("−7.294 ms"), "−7.29ms");
        assert_eq!(compact("-350.0 µs"), "-350µs");
        assert_eq!(compact("aten::mm"), "aten::mm");
        assert_eq!(compact("cpu op"), "cpu op");
    }

    #[test]
    fn wide_terminals_keep_declared_widths() {
        let c = cols(&[0, 9, 9]);
        let heads = vec!["name".to_string(), "total".into(), "self".into()];
        let r = rows(&["aten::empty_strided"], &["12.345 ms", "1.000 ms"]);
        let l = layout(&c, &heads, r.iter().map(Vec::as_slice), 120, &[]);
        assert!(!l.compact);
        assert_eq!(l.widths[1..], [Some(9), Some(9)]);
        assert_eq!(l.widths[0], Some(120 - 20));
    }

    #[test]
    fn narrow_terminals_shrink_numbers_then_hide_columns() {
        // The 80x24 statistics table: nine columns.
        let c = cols(&[0, 9, 9, 9, 9, 9, 9, 8, 10]);
        let heads: Vec<String> = [
            "name", "count", "total", "self", "avg", "min", "max", "% wall", "kind",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let r = rows(
            &["aten::empty", "aten::empty_strided", "cudaLaunchKernel"],
            &[
                "12",
                "12.345 ms",
                "1.250 ms",
                "2.000 µs",
                "1.000 µs",
                "3.000 µs",
                "4.1%",
                "cpu_op",
            ],
        );
        let l = layout(&c, &heads, r.iter().map(Vec::as_slice), 78, &[]);
        assert!(l.compact);
        let name = l.widths[0].expect("name shown") as usize;
        assert!(name >= "aten::empty_strided".len(), "{l:?}");
        // Every shown column fits in the width.
        let used: usize = l.widths.iter().flatten().map(|&w| w as usize + 1).sum();
        assert!(used <= 79, "{l:?}");
        // Very narrow: columns go before the name falls under its floor.
        let l = layout(&c, &heads, r.iter().map(Vec::as_slice), 40, &[]);
        assert!(l.hidden() > 0);
        assert!(l.widths[0].expect("name") as usize >= "aten::empty_strided".len().min(MIN_NAME));
        assert!(l.widths[1].is_some(), "the first number stays");
    }

    #[test]
    fn the_column_telling_identical_names_apart_stays() {
        // The 80x24 statistics table with a host and a device `ProfilerStep*`: only `kind`
        // tells them apart, and it is the rightmost column.
        let c = cols(&[0, 9, 9, 9, 9, 9, 9, 8, 10]);
        let heads: Vec<String> = [
            "name", "count", "total", "self", "avg", "min", "max", "% wall", "kind",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut r = rows(
            &[
                "ProfilerStep*",
                "ProfilerStep*",
                "aten::empty_strided_long_name",
            ],
            &[
                "1",
                "12.345 ms",
                "1.250 ms",
                "2.000 µs",
                "1.000 µs",
                "3.000 µs",
                "4.1%",
                "x",
            ],
        );
        r[0][8] = "user_annotation".into();
        r[1][8] = "gpu_user_annotation".into();
        let apart = telling_apart(r.iter().map(Vec::as_slice), &[0, 8]);
        assert_eq!(apart, Some(8));
        let l = layout(&c, &heads, r.iter().map(Vec::as_slice), 50, &[8]);
        assert!(l.hidden() > 0, "{l:?}");
        assert!(l.widths[8].is_some(), "kind stays: {l:?}");
        assert!(l.widths[1].is_some(), "the first number stays: {l:?}");
        let used: usize = l.widths.iter().flatten().map(|&w| w as usize + 1).sum();
        assert!(used <= 51, "{l:?}");
        // Unique names: nothing to keep.
        assert_eq!(
            telling_apart(r[1..].iter().map(Vec::as_slice), &[0, 8]),
            None
        );
    }
}
