//! The one rule for trace strings on the terminal, shared by the CLI's text output
//! (`cli::text`) and the explorer (`ui::text`): [`sanitize`] lets no control, bidi or invisible
//! character through, [`width`] measures columns with `unicode-width` (wide CJK 2, combining
//! marks 0) and [`fit`] cuts to a width with an ellipsis. JSON output needs none of this: serde
//! escapes per the JSON spec.

use std::borrow::Cow;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// True for characters that must never be written to the terminal: C0/C1 controls and DEL;
/// bidi marks, embeddings, overrides and isolates that reorder text (U+061C, U+200E/F,
/// U+202A–E, U+2066–9); zero-width and invisible characters that hide text (U+200B–D,
/// U+2060–4, U+FEFF byte order mark, tag characters U+E0000–E007F); line and paragraph
/// separators (U+2028/9) and interlinear annotations (U+FFF9–B).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{E0000}'..='\u{E007F}'
        )
}

/// Replaces unsafe characters ([`is_unsafe`]): tab, newline and CR become a space, everything
/// else `�` (U+FFFD), so the text keeps its length and shows where something was. Borrows when
/// there is nothing to replace.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| match c {
                '\t' | '\n' | '\r' => ' ',
                c if is_unsafe(c) => '\u{FFFD}',
                c => c,
            })
            .collect(),
    )
}

/// Display width of (sanitized) text in terminal columns.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Display width of one character (0 for combining marks and controls).
pub fn char_width(c: char) -> usize {
    UnicodeWidthChar::width(c).unwrap_or(0)
}

/// Cuts `s` to at most `max` columns, ending with `…` when cut; a combining mark stays with
/// its base character and a wide character is never split.
pub fn fit(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    Cow::Owned(head(s, max.saturating_sub(1)).to_string() + if max > 0 { "…" } else { "" })
}

/// The longest prefix of `s` at most `max` columns wide (with the combining marks of its last
/// character).
pub fn head(s: &str, max: usize) -> &str {
    let mut w = 0;
    for (i, c) in s.char_indices() {
        let cw = char_width(c);
        if w + cw > max {
            return &s[..i];
        }
        w += cw;
    }
    s
}

/// The longest suffix of `s` at most `max` columns wide that does not start with a combining
/// mark.
pub fn tail(s: &str, max: usize) -> &str {
    let mut w = 0;
    let mut start = s.len();
    for (i, c) in s.char_indices().rev() {
        let cw = char_width(c);
        if w + cw > max {
            break;
        }
        w += cw;
        if cw > 0 {
            start = i;
        }
    }
    &s[start..]
}

/// [`sanitize`] then [`fit`]: a trace string ready for a terminal cell of `max` columns.
pub fn clean_fit(s: &str, max: usize) -> String {
    fit(&sanitize(s), max).into_owned()
}

/// Cuts `s` to at most `max` columns by dropping its middle (`…` in its place): the head and
/// the tail stay, so `tf_XLAEigen/-5930892742011` keeps its distinguishing end.
pub fn fit_middle(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    if max < 2 {
        return fit(s, max);
    }
    let keep = max - 1;
    let t = tail(s, keep / 2);
    let h = head(s, keep - width(t));
    Cow::Owned(format!("{h}…{t}"))
}

/// Cuts each of `labels` (rows shown together, e.g. the threads of a process) to `max`
/// columns keeping what tells them apart: the prefix a label shares with its closest
/// neighbour is shortened first (its
/// first columns kept, and the last few characters of a number or word it cuts through given
/// back to the rest, so `#1|23` shows `…123`); a rest still too wide keeps its head, where the
/// labels start to differ. A label with nothing shared loses its middle ([`fit_middle`]).
pub fn fit_apart(labels: &[&str], max: usize) -> Vec<String> {
    // What label i shares with its closest neighbour (the longest common prefix with any other
    // label: one of its neighbours in sorted order) is what does not tell it apart.
    let lcp = |a: &str, b: &str| {
        a.char_indices()
            .zip(b.chars())
            .take_while(|((_, x), y)| x == y)
            .last()
            .map_or(0, |((i, c), _)| i + c.len_utf8())
    };
    let mut order: Vec<usize> = (0..labels.len()).collect();
    order.sort_unstable_by_key(|&i| labels[i]);
    let mut shared = vec![0usize; labels.len()];
    for w in order.windows(2) {
        let n = lcp(labels[w[0]], labels[w[1]]);
        shared[w[0]] = shared[w[0]].max(n);
        shared[w[1]] = shared[w[1]].max(n);
    }
    labels
        .iter()
        .zip(shared)
        .map(|(&l, common)| {
            if width(l) <= max {
                return l.to_string();
            }
            // Identical to a neighbour: nothing tells them apart, keep both ends.
            if common >= l.len() {
                return fit_middle(l, max).into_owned();
            }
            let mut cut = common.min(l.len());
            while !l.is_char_boundary(cut) {
                cut -= 1;
            }
            // Give back up to 4 characters of a word or number the shared prefix cuts through,
            // while the rest still fits beside `…` and a few columns of the prefix (wide
            // characters given back must not push the distinguishing end out).
            let first_diff = cut;
            let diff_w = l[first_diff..].chars().next().map_or(0, char_width);
            for _ in 0..4 {
                match l[..cut].chars().next_back() {
                    Some(c) if c.is_alphanumeric() => {
                        let at = cut - c.len_utf8();
                        // Keep some prefix: without one the label would lose its middle,
                        // where it differs.
                        if at == 0 {
                            break;
                        }
                        // Prefix head, `…`, what is given back, the first differing character
                        // and a closing `…` must fit.
                        let need =
                            4.min(width(&l[..at])) + 1 + width(&l[at..first_diff]) + diff_w + 1;
                        if need > max {
                            break;
                        }
                        cut = at;
                    }
                    _ => break,
                }
            }
            let (pre, rest) = l.split_at(cut);
            if pre.is_empty() {
                return fit_middle(l, max).into_owned();
            }
            // Room for the distinguishing rest first; the shared prefix gets what is left (at
            // least 4 columns of it, so the label still says what it is).
            let room = max.saturating_sub(width(rest) + 1).max(4.min(width(pre)));
            let short = if width(pre) <= room {
                l.to_string()
            } else {
                format!("{}…{rest}", head(pre, room))
            };
            fit(&short, max).into_owned()
        })
        .collect()
}

#[cfg(test)]
mod tests;
