//! Text that goes to the terminal: sanitizing trace strings (no control character ever reaches the
//! terminal), C++ template / argument-list folding for display, and width-aware truncation.

use ratatui::text::Span;
use std::borrow::Cow;

/// True for characters that must never be written to the terminal: C0/C1 controls, DEL, and
/// bidirectional / zero-width format characters that could reorder or hide text (the shared
/// rule, [`crate::text::is_unsafe`]).
pub fn is_unsafe(c: char) -> bool {
    crate::text::is_unsafe(c)
}

/// Replaces unsafe characters: tab/newline/CR become a space, everything else `�` (the shared
/// rule, [`crate::text::sanitize`]).
pub fn sanitize(s: &str) -> Cow<'_, str> {
    crate::text::sanitize(s)
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '>'
}

/// Shortens long C++ names for display: template arguments `Foo<…>` and argument lists `f(…)` are
/// folded, and a leading `void ` return type is dropped. Names like `<module>` or
/// `(anonymous namespace)` are left alone. The result is sanitized.
pub fn fold(name: &str) -> Cow<'_, str> {
    let s = sanitize(name);
    if !s.contains('<') && !s.contains('(') {
        return s;
    }
    let src = s.strip_prefix("void ").unwrap_or(&s);
    let mut out = String::with_capacity(src.len());
    let mut depth = 0usize;
    let mut closer = ' ';
    let mut prev = ' ';
    // Text inside the outermost fold: restored when it is only digits (`file.py(12)`).
    let mut inner = String::new();
    for c in src.chars() {
        if depth > 0 {
            if c == opener(closer) {
                depth += 1;
            } else if c == closer {
                depth -= 1;
            }
            if depth == 0 {
                if !inner.is_empty() && inner.chars().all(|d| d.is_ascii_digit()) {
                    out.push_str(&inner);
                } else {
                    out.push('…');
                }
                out.push(c);
            } else {
                inner.push(c);
            }
        } else if (c == '<' || c == '(') && is_ident(prev) && !(c == '<' && prev == '>') {
            depth = 1;
            inner.clear();
            closer = if c == '<' { '>' } else { ')' };
            out.push(c);
        } else {
            out.push(c);
        }
        prev = c;
    }
    if depth > 0 {
        // Unbalanced: keep what was folded and mark the cut.
        out.push('…');
    }
    Cow::Owned(out)
}

fn opener(closer: char) -> char {
    if closer == '>' { '<' } else { '(' }
}

/// Display width of a string in terminal columns.
pub fn width(s: &str) -> usize {
    Span::raw(s).width()
}

fn char_width(c: char) -> usize {
    let mut b = [0u8; 4];
    width(c.encode_utf8(&mut b))
}

/// Cuts `s` to at most `max` columns, ending with `…` when cut.
pub fn fit(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    if max == 0 {
        return Cow::Borrowed("");
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = char_width(c);
        if w + cw + 1 > max {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    Cow::Owned(out)
}

/// Like [`fit`], but a trailing `#N` (`ProfilerStep#1013`) survives the cut when
/// there is room for a few leading characters too: `Profile…#1013`. Numbers tell apart
/// neighbouring slices that share a prefix.
pub fn fit_keep_number(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return fit(s, max);
    }
    let mut cut = s.len() - digits;
    if !s[..cut].ends_with('#') {
        // Only `#N` counters (steps, iterations): a bare trailing digit is often noise.
        return fit(s, max);
    }
    cut -= 1;
    let tail = &s[cut..];
    let tw = width(tail);
    // At least 2 columns of the head plus `…`, else the plain cut.
    if tw + 3 > max || tw > 12 {
        return fit(s, max);
    }
    let head = fit(&s[..cut], max - tw);
    Cow::Owned(format!("{head}{tail}"))
}

/// Cuts names shown together (the rows of a table on screen) to `max` columns so that different
/// names stay different. A cut name that shares a prefix with another keeps the word where they
/// start to differ and its end, when those fit (`GPU 0 (python3) …stream 13` beside
/// `GPU 0 (python3) · stream 7`, where a plain cut read `…stream 1…`); others get the plain
/// [`fit`]. Names whose cuts still read the same are cut by [`crate::text::fit_apart`].
pub fn fit_column(names: &[String], max: usize) -> Vec<String> {
    let all: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut out: Vec<String> = names
        .iter()
        .map(|n| match fit(n, max) {
            Cow::Borrowed(_) => n.clone(),
            Cow::Owned(plain) => cut_at_difference(n, &all, max).unwrap_or(plain),
        })
        .collect();
    let mut groups: rustc_hash::FxHashMap<&str, Vec<usize>> = rustc_hash::FxHashMap::default();
    for (i, c) in out.iter().enumerate() {
        if c.as_str() != names[i] {
            groups.entry(c.as_str()).or_default().push(i);
        }
    }
    // Only cut names can collide (a whole name never reads like a cut one, which has a `…`).
    let mut fixes: Vec<(usize, String)> = Vec::new();
    for ix in groups.into_values() {
        if ix.len() < 2 || ix.iter().all(|&i| names[i] == names[ix[0]]) {
            continue;
        }
        let group: Vec<&str> = ix.iter().map(|&i| names[i].as_str()).collect();
        fixes.extend(ix.iter().copied().zip(crate::text::fit_apart(&group, max)));
    }
    for (i, s) in fixes {
        out[i] = s;
    }
    out
}

/// `name` cut to `max` columns around where it stops sharing a prefix with the other names of
/// `group`, when its plain cut would not show the word it differs in (whole or six columns): `head…rest` with
/// `rest` from the start of that word (or of the word before it: `stream 13`) to the end, or,
/// when the rest is too long, a third of the width of head, `…`, and the rest cut with `…`.
/// `None` when the plain cut shows the difference, or nothing better fits.
fn cut_at_difference(name: &str, group: &[&str], max: usize) -> Option<String> {
    let lcp = |a: &str, b: &str| {
        a.char_indices()
            .zip(b.chars())
            .take_while(|((_, x), y)| x == y)
            .last()
            .map_or(0, |((i, c), _)| i + c.len_utf8())
    };
    let common = group
        .iter()
        .filter(|g| **g != name)
        .map(|g| lcp(name, g))
        .max()
        .filter(|&c| c > 0 && c < name.len())?;
    let word = |ch: char| ch.is_alphanumeric() || ch == '_';
    // The end of the word the difference is in: shown by the plain cut, nothing to do.
    let after = &name[common..];
    let diff_end = common
        + after
            .find(|c: char| !word(c))
            .filter(|&e| e > 0)
            .unwrap_or_else(|| after.chars().next().map_or(0, char::len_utf8));
    // The plain cut tells it apart when it shows that word whole or six columns of it (a
    // number cut to `1…` does not).
    if width(&name[..diff_end]) < max || width(&name[..common]) + 6 < max {
        return None;
    }
    // Back to the start of the word the difference is in, or of the word just before it
    // (`stream 7` / `stream 13`), at most 12 characters back.
    let mut cut = common;
    let before = |c: usize| name[..c].chars().next_back();
    if before(cut).is_some_and(|c| c == ' ')
        && name[..cut].trim_end().chars().next_back().is_some_and(word)
    {
        cut = name[..cut].trim_end().len();
    }
    let mut back = 0;
    while back < 12
        && let Some(ch) = before(cut).filter(|&c| word(c))
    {
        cut -= ch.len_utf8();
        back += 1;
    }
    let (pre, rest) = name.split_at(cut);
    if pre.is_empty() {
        return None;
    }
    // The whole rest, with a head of at least a third of the width (or all of `pre`).
    if let Some(room) = max.checked_sub(width(rest) + 1)
        && room >= width(pre).min(max / 3).max(4.min(width(pre)))
    {
        return Some(format!("{}…{rest}", crate::text::head(pre, room)));
    }
    // The rest is too long: a third of the width of head, the rest cut at the end.
    let head_w = max / 3;
    if max < 16 || width(pre) <= head_w {
        return None;
    }
    let shown = crate::text::head(rest, max - head_w - 2);
    Some(format!("{}…{shown}…", crate::text::head(pre, head_w)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_names_keep_their_number() {
        assert_eq!(fit_keep_number("ProfilerStep#1013", 12), "Profil…#1013");
        assert_eq!(
            fit_keep_number("ProfilerStep#1013", 40),
            "ProfilerStep#1013"
        );
        assert_eq!(fit_keep_number("ProfilerStep#1013", 6), "Profi…");
        assert_eq!(fit_keep_number("ProfilerStep#3", 5), "Pr…#3");
        assert_eq!(fit_keep_number("aten::conv2d", 8), "aten::c…");
        assert_eq!(fit_keep_number("stream 22 compute", 8), "stream …");
        assert_eq!(fit_keep_number("nn.Module: Linear_0", 8), "nn.Modu…");
        for w in 0..20 {
            assert!(width(&fit_keep_number("ProfilerStep#1013", w)) <= w);
            assert!(width(&fit_keep_number("é#99999999999999999", w)) <= w);
        }
    }

    #[test]
    fn sanitize_removes_every_control() {
        for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
            let s = format!("a{c}b");
            let out = sanitize(&s);
            assert!(!out.chars().any(|c| c.is_control()), "{c:?} leaked");
            assert_eq!(out.chars().count(), 3);
        }
        assert_eq!(sanitize("\x1b[2Jboom"), "\u{FFFD}[2Jboom");
        assert_eq!(sanitize("a\u{202E}b"), "a\u{FFFD}b");
        assert_eq!(sanitize("a\tb\nc"), "a b c");
        assert!(matches!(sanitize("aten::mm"), Cow::Borrowed(_)));
    }

    #[test]
    fn fold_templates_and_args() {
        assert_eq!(
            fold(
                "void at::native::CatArrayBatchedCopy<float, unsigned int, 4, 64, 64>(float*, int)"
            ),
            "at::native::CatArrayBatchedCopy<…>(…)"
        );
        assert_eq!(fold("<module>"), "<module>");
        assert_eq!(
            fold("a::(anonymous namespace)::f<int>"),
            "a::(anonymous namespace)::f<…>"
        );
        assert_eq!(fold("f<a<b>, c>(x)"), "f<…>(…)");
        assert_eq!(fold("broken<a"), "broken<…");
        assert_eq!(fold("aten::mm"), "aten::mm");
        assert_eq!(
            fold("gen_torch.py(12): <module>"),
            "gen_torch.py(12): <module>"
        );
        assert_eq!(fold("x\x07<y>"), "x\u{FFFD}<y>");
    }

    #[test]
    fn cut_names_shown_together_stay_apart() {
        let names: Vec<String> = [
            "GPU 0 (python3) · stream 7",
            "GPU 0 (python3) · stream 13",
            "CPU (python3) · thread 1",
            "aten::mm",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let out = fit_column(&names, 22);
        assert!(out.iter().all(|s| width(s) <= 22), "{out:?}");
        assert_eq!(out[0], "GPU 0 (python…stream 7");
        assert_eq!(out[1], "GPU 0 (pytho…stream 13");
        // A cut that collides with nothing is the plain one; short names stay whole.
        assert_eq!(out[2], fit(&names[2], 22));
        assert_eq!(out[3], "aten::mm");
        // Identical names stay identical (another column tells them apart).
        let same = vec!["ProfilerStep*".to_string(); 2];
        assert_eq!(fit_column(&same, 8), vec!["Profile…".to_string(); 2]);
        // Long names that differ deep inside keep their head and the part where they differ.
        let k = |n: u32| {
            format!(
                "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_warp_per_row_1<float, float, float, {n}ul>(at::GenericPackedTensorAccessor<float, 2ul>)"
            )
        };
        let long = vec![k(5), k(2), "aten::mm".to_string()];
        let cut = fit_column(&long, 60);
        assert_ne!(cut[0], cut[1], "{cut:?}");
        for c in &cut[..2] {
            assert_eq!(width(c), 60, "{c}");
            assert!(c.starts_with("void split_embedding"), "{c}");
        }
        assert!(cut[0].contains("5ul>"), "{cut:?}");
        // Names whose plain cuts show where they differ keep the plain cut.
        let apart = vec![
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"
                .to_string(),
            "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<float>>"
                .to_string(),
        ];
        let cut = fit_column(&apart, 40);
        assert_eq!(cut[0], fit(&apart[0], 40));
        assert_eq!(cut[1], fit(&apart[1], 40));
        // One name cut, its sibling whole: the cut one keeps its number.
        let two = vec![names[0].clone(), names[1].clone()];
        let two_cut = fit_column(&two, 26);
        assert_eq!(
            two_cut,
            ["GPU 0 (python3) · stream 7", "GPU 0 (python3) …stream 13"]
        );
    }

    #[test]
    fn fit_cuts_with_ellipsis() {
        assert_eq!(fit("abcdef", 6), "abcdef");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abcdef", 1), "…");
        assert_eq!(fit("abcdef", 0), "");
        assert_eq!(width(&fit("日本語テキスト", 5)), 5);
    }
}
