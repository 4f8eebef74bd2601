//! Text helpers for terminal output: trace strings made safe and cut by the shared rule
//! ([`crate::text`]), durations, column alignment by display width.

use crate::text::width;
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

/// `--wide`: names are never cut.
static WIDE: AtomicBool = AtomicBool::new(false);

/// Sets `--wide` for this run: [`fit`] and [`fit_column`] keep whole names.
pub fn set_wide(w: bool) {
    WIDE.store(w, Ordering::Relaxed);
}

/// Makes a trace string safe for the terminal: the one rule of [`crate::text::sanitize`]
/// (controls, bidi, zero-width and BOM become `�`; tab/newline/CR a space).
pub fn clean(s: &str) -> Cow<'_, str> {
    crate::text::sanitize(s)
}

/// Cuts `s` to at most `max` terminal columns, marking the cut with `…`; long names keep their
/// last columns too (unified names end in `(program-scope)`).
pub fn fit(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max || WIDE.load(Ordering::Relaxed) {
        return Cow::Borrowed(s);
    }
    if max == 0 {
        return Cow::Borrowed("");
    }
    let tail = if max >= 40 { max / 4 } else { 0 };
    let t = crate::text::tail(s, tail);
    let h = crate::text::head(s, max.saturating_sub(1 + width(t)));
    Cow::Owned(format!("{h}…{t}"))
}

/// Cuts the cells of column `col` to `max` columns like [`fit`], but so that different names stay
/// different: names that would read the same (`void at::native::…<float>, float)`) show the part
/// where they differ between the head and the tail instead. With `--wide` nothing is cut.
pub fn fit_column(rows: &mut [Vec<String>], col: usize, max: usize) {
    if WIDE.load(Ordering::Relaxed) {
        return;
    }
    let cut: Vec<String> = rows
        .iter()
        .map(|r| {
            r.get(col)
                .map_or(String::new(), |c| fit(c, max).into_owned())
        })
        .collect();
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| cut[a].cmp(&cut[b]));
    let mut out = cut.clone();
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && cut[order[j]] == cut[order[i]] {
            j += 1;
        }
        let group: Vec<&str> = order[i..j]
            .iter()
            .filter_map(|&k| rows[k].get(col).map(String::as_str))
            .collect();
        if group.len() > 1 && group.iter().any(|g| *g != group[0]) {
            for &k in &order[i..j] {
                let Some(name) = rows[k].get(col) else {
                    continue;
                };
                out[k] = fit_at_difference(name, &group, max);
            }
        }
        i = j;
    }
    for (r, c) in rows.iter_mut().zip(out) {
        if let Some(cell) = r.get_mut(col) {
            *cell = c;
        }
    }
}

/// `name` cut to `max` columns as `head…middle…tail`, the middle starting where `name` stops
/// sharing a prefix with the other names of `group`.
fn fit_at_difference(name: &str, group: &[&str], max: usize) -> String {
    let chars: Vec<char> = name.chars().collect();
    let shared = group
        .iter()
        .filter(|g| **g != name)
        .map(|g| g.chars().zip(&chars).take_while(|(a, b)| a == *b).count())
        .max()
        .unwrap_or(0);
    let head_w = max / 4;
    let tail_w = max / 5;
    let mid_w = max.saturating_sub(head_w + tail_w + 2);
    if mid_w < 4 || shared < head_w {
        return fit(name, max).into_owned();
    }
    let tail = crate::text::tail(name, tail_w);
    let tail_start = chars.len() - tail.chars().count();
    // The window begins a few characters before the difference, after the head.
    let from = shared.saturating_sub(mid_w / 3).max(head_w);
    if from >= tail_start {
        return fit(name, max).into_owned();
    }
    let mid: String = chars[from..tail_start].iter().collect();
    let mid_fit = crate::text::head(&mid, mid_w);
    let head = crate::text::head(name, head_w);
    if mid_fit.len() == mid.len() {
        return format!("{head}…{mid}{tail}");
    }
    format!("{head}…{mid_fit}…{tail}")
}

/// A duration in ps as a short human string (`812 ps`, `1.250 µs`, `12.345 ms`, `3.210 s`).
pub fn dur(ps: f64) -> String {
    let a = ps.abs();
    if ps == 0.0 {
        "0".into()
    } else if a < 1e3 {
        format!("{ps:.0} ps")
    } else if a < 1e6 {
        format!("{:.3} ns", ps / 1e3)
    } else if a < 1e9 {
        format!("{:.3} µs", ps / 1e6)
    } else if a < 1e12 {
        format!("{:.3} ms", ps / 1e9)
    } else {
        format!("{:.3} s", ps / 1e12)
    }
}

/// `part` as a percentage of `whole` with `decimals` digits (`12.5%`), `-` when `whole` ≤ 0.
pub fn pct(part: i64, whole: i64, decimals: usize) -> String {
    if whole > 0 {
        format!("{:.*}%", decimals, 100.0 * part as f64 / whole as f64)
    } else {
        "-".into()
    }
}

/// A byte count with a binary unit.
pub fn bytes(n: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < U.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", U[u])
    }
}

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Pad on the right.
    Left,
    /// Pad on the left (numbers).
    Right,
}

/// Renders rows as aligned columns separated by two spaces, each line prefixed with `indent`.
pub fn table(indent: &str, header: &[(&str, Align)], rows: &[Vec<String>]) -> String {
    let n = header.len();
    let mut w: Vec<usize> = header.iter().map(|h| width(h.0)).collect();
    for r in rows {
        for (k, cell) in r.iter().enumerate().take(n) {
            w[k] = w[k].max(width(cell));
        }
    }
    let mut out = String::new();
    let line = |cells: &mut dyn Iterator<Item = &str>, out: &mut String| {
        let mut s = String::from(indent);
        for (k, cell) in cells.enumerate().take(n) {
            if k > 0 {
                s.push_str("  ");
            }
            let pad = w[k].saturating_sub(width(cell));
            match header[k].1 {
                Align::Left => {
                    s.push_str(cell);
                    if k + 1 < n {
                        s.extend(std::iter::repeat_n(' ', pad));
                    }
                }
                Align::Right => {
                    s.extend(std::iter::repeat_n(' ', pad));
                    s.push_str(cell);
                }
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(&mut header.iter().map(|h| h.0), &mut out);
    for r in rows {
        line(&mut r.iter().map(|c| c.as_str()), &mut out);
    }
    out
}

/// `  run R  host H` for a capture header, each part left out when blank (an allocator
/// snapshot or a pprof profile has neither).
pub fn run_host(run: &str, host: &str) -> String {
    let mut o = String::new();
    for (what, v) in [("run", run), ("host", host)] {
        if !v.trim().is_empty() {
            o.push_str(&format!("  {what} {}", clean(v)));
        }
    }
    o
}

/// The first line of a capture's text report (`== PATH  run RUN  host HOST{extra}`, blank
/// parts left out), followed by `   error: …` when the capture failed. `Err` holds the finished report of a failed capture.
pub fn capture_head(
    path: &str,
    run: &str,
    host: &str,
    extra: &str,
    error: Option<&String>,
) -> Result<String, String> {
    let mut o = format!("== {}{}{extra}\n", clean(path), run_host(run, host));
    match error {
        Some(e) => {
            o.push_str(&format!("   error: {}\n", clean(e)));
            Err(o)
        }
        None => Ok(o),
    }
}

/// Integer ns of a ps time (rounded to nearest).
pub fn ns(ps: i64) -> i64 {
    ps.saturating_add(500).div_euclid(1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_run_and_host_are_left_out() {
        assert_eq!(run_host("r1", "w0"), "  run r1  host w0");
        assert_eq!(run_host("", "w0"), "  host w0");
        assert_eq!(run_host("", ""), "");
        let head = capture_head("snap.pickle", "", "", "", None).unwrap_or_default();
        assert_eq!(head, "== snap.pickle\n");
    }

    #[test]
    fn cut_names_stay_distinct() {
        let names = [
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float>(float, float)",
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<TensorListMetadata<3>, ZeroFunctor<float>, float, float>(float, float)",
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<TensorListMetadata<2>, ScaleFunctor<float>, float, float>(float, float)",
            "aten::mm",
        ];
        let mut rows: Vec<Vec<String>> = names.iter().map(|n| vec![n.to_string()]).collect();
        fit_column(&mut rows, 0, 60);
        let cells: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        for (k, c) in cells.iter().enumerate() {
            assert!(width(c) <= 60, "{c}");
            for o in &cells[k + 1..] {
                assert_ne!(c, o, "rows read the same");
            }
        }
        assert_eq!(cells[3], "aten::mm");
        assert!(cells[0].contains("Adam"), "{}", cells[0]);
        assert!(cells[0].starts_with("void at::native"), "{}", cells[0]);
        // Rows that already differ keep the plain cut.
        let mut one = vec![vec![names[0].to_string()]];
        fit_column(&mut one, 0, 60);
        assert_eq!(one[0][0], fit(names[0], 60));
    }

    #[test]
    fn scrubs_and_formats() {
        assert_eq!(clean("aten::mm"), "aten::mm");
        assert_eq!(clean("a\x1b[2Jb\n"), "a\u{FFFD}[2Jb ");
        assert_eq!(clean("x\u{202e}y"), "x\u{FFFD}y");
        assert_eq!(clean("x\u{200b}\u{feff}y"), "x\u{FFFD}\u{FFFD}y");
        assert_eq!(fit("日本語テキスト", 5), "日本…");
        let wide: String = "漢".repeat(100);
        assert_eq!(width(&fit(&wide, 41)), 41);
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
        let long: String = ('a'..='z').cycle().take(100).collect();
        let f = fit(&long, 40);
        assert_eq!(width(&f), 40);
        assert!(f.starts_with("abcdefghijklmnopqrstuvwxyzabc") && f.ends_with("opqrstuv"));
        assert_eq!(dur(1.5e9), "1.500 ms");
        assert_eq!(dur(999.0), "999 ps");
        assert_eq!(bytes(2048), "2.0 KiB");
        let t = table(
            "",
            &[("NAME", Align::Left), ("N", Align::Right)],
            &[
                vec!["a".into(), "10".into()],
                vec!["bbb".into(), "2".into()],
                vec!["日本".into(), "3".into()],
            ],
        );
        assert_eq!(t, "NAME   N\na     10\nbbb    2\n日本   3\n");
    }
}
