//! Details that show everything (issue 22 §4), over plain data so the details panel and a
//! full-screen view can share them: lines wrapped to the width instead of cut
//! ([`wrap_lines`]), a breadcrumb that keeps the nearest parents and shortens the far ones
//! ([`breadcrumb_text`]), and [`FullDetails`], a scrollable view of every arg, the whole
//! `Call stack` (one frame per line) and the full breadcrumb.

use crate::text::{head, sanitize, width};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

/// Wraps `line` to `w` columns: breaks at the last space when there is one in the second half
/// of the row, else anywhere; continuation rows are indented by two columns.
pub fn wrap(line: &str, w: usize) -> Vec<String> {
    let w = w.max(4);
    let mut out = Vec::new();
    let mut rest: &str = line;
    let mut first = true;
    while !rest.is_empty() {
        let room = if first { w } else { w - 2 };
        let pad = if first { "" } else { "  " };
        if width(rest) <= room {
            out.push(format!("{pad}{rest}"));
            break;
        }
        let mut cut = head(rest, room);
        if let Some(sp) = cut.rfind(' ')
            && width(&cut[..sp]) >= room / 2
        {
            cut = &cut[..sp];
        }
        if cut.is_empty() {
            // A character wider than the row: take it alone.
            cut = rest.char_indices().nth(1).map_or(rest, |(i, _)| &rest[..i]);
        }
        out.push(format!("{pad}{cut}"));
        rest = rest[cut.len()..].trim_start_matches(' ');
        first = false;
    }
    if out.is_empty() {
        out.push(String::new());
    }
    out
}

/// Wraps every (text, style) line to `w` columns (see [`wrap`]), keeping each line's style.
pub fn wrap_lines(lines: &[(String, Style)], w: usize) -> Vec<(String, Style)> {
    lines
        .iter()
        .flat_map(|(t, st)| wrap(t, w).into_iter().map(move |l| (l, *st)))
        .collect()
}

/// `root › … › parent › leaf` in at most `w` columns: the leaf and the nearest parents stay
/// whole as long as they fit; farther parents are cut to 12 columns, then dropped from the
/// root side (one `…` says so).
pub fn breadcrumb_text(chain: &[String], leaf: &str, w: usize) -> String {
    let sep = " › ";
    let full = chain
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(leaf))
        .collect::<Vec<_>>()
        .join(sep);
    if width(&full) <= w {
        return full;
    }
    // From the leaf outwards: whole names while they fit, then short ones.
    let mut parts: Vec<String> = vec![crate::text::fit(leaf, w).into_owned()];
    let mut used = width(&parts[0]);
    let mut dropped = false;
    for name in chain.iter().rev() {
        let whole = width(name) + width(sep);
        let short = crate::text::fit(name, 12).into_owned();
        let reserve = width(sep) + 1; // room for "… › " if later names must go
        if used + whole + reserve <= w {
            used += whole;
            parts.push(name.clone());
        } else if used + width(&short) + width(sep) + reserve <= w {
            used += width(&short) + width(sep);
            parts.push(short);
        } else {
            dropped = true;
            break;
        }
    }
    if dropped {
        parts.push("…".into());
    }
    parts.reverse();
    parts.join(sep)
}

/// A scrollable view of a selection's full details.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FullDetails {
    /// The event's name (the title).
    pub title: String,
    /// The full breadcrumb, root first.
    pub chain: Vec<String>,
    /// Facts (`dur`, `self`, `track`, ...) as (label, value).
    pub facts: Vec<(String, String)>,
    /// Every arg as (key, value); a `Call stack` value is shown one frame per line.
    pub args: Vec<(String, String)>,
    /// First shown row.
    pub scroll: usize,
}

impl FullDetails {
    /// Every row at width `w`: title, breadcrumb (one parent per row, indented by depth),
    /// facts, args (wrapped), call stack frames.
    pub fn rows(&self, w: usize) -> Vec<(String, Style)> {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let plain = Style::default();
        let mut out: Vec<(String, Style)> = Vec::new();
        let clean = |s: &str| sanitize(s).into_owned();
        out.extend(wrap(&clean(&self.title), w).into_iter().map(|l| (l, bold)));
        if !self.chain.is_empty() {
            out.push(("parents (root first):".into(), bold));
            for (d, p) in self.chain.iter().enumerate() {
                let indent = " ".repeat((2 * (d + 1)).min(w / 2));
                for l in wrap(&clean(p), w.saturating_sub(indent.len())) {
                    out.push((format!("{indent}{l}"), plain));
                }
            }
        }
        for (k, v) in &self.facts {
            out.extend(
                wrap(&format!("{}: {}", clean(k), clean(v)), w)
                    .into_iter()
                    .map(|l| (l, plain)),
            );
        }
        if !self.args.is_empty() {
            out.push((format!("args ({}):", self.args.len()), bold));
        }
        for (k, v) in &self.args {
            if k == "Call stack" && v.contains(';') {
                out.push(("  Call stack:".into(), plain));
                for f in v.split(';').filter(|f| !f.trim().is_empty()) {
                    for l in wrap(&clean(f.trim()), w.saturating_sub(4)) {
                        out.push((format!("    {l}"), plain));
                    }
                }
                continue;
            }
            for l in wrap(&format!("{} = {}", clean(k), clean(v)), w.saturating_sub(2)) {
                out.push((format!("  {l}"), plain));
            }
        }
        out
    }

    /// Scrolls by `delta` rows, kept within the rows at width `w` and height `h`.
    pub fn scroll_by(&mut self, delta: isize, w: usize, h: usize) {
        let max = self.rows(w).len().saturating_sub(h);
        self.scroll = self.scroll.saturating_add_signed(delta).min(max);
    }

    /// Draws the visible rows into `area` (a last row says how many more there are).
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let (w, h) = (area.width as usize, area.height as usize);
        if w == 0 || h == 0 {
            return;
        }
        let rows = self.rows(w);
        let start = self.scroll.min(rows.len().saturating_sub(1));
        let more = rows.len().saturating_sub(start + h);
        let take = if more > 0 { h.saturating_sub(1) } else { h };
        for (dy, (line, style)) in rows.iter().skip(start).take(take).enumerate() {
            buf.set_stringn(area.x, area.y + dy as u16, line, w, *style);
        }
        if more > 0 {
            let rest = rows.len() - start - take;
            let note = format!("↓ {rest} more rows (j/k, PgDn/PgUp scroll · Esc close)");
            buf.set_stringn(
                area.x,
                area.y + (h - 1) as u16,
                &note,
                w,
                Style::default().add_modifier(Modifier::DIM),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(buf: &Buffer) -> Vec<String> {
        let a = buf.area;
        (0..a.height)
            .map(|y| {
                (0..a.width)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn wraps_without_losing_text() {
        let long = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >";
        let rows = wrap(long, 30);
        assert!(rows.len() > 3);
        assert!(rows.iter().all(|r| width(r) <= 30), "{rows:?}");
        let joined: String = rows
            .iter()
            .map(|r| r.trim_start())
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(joined.replace(' ', ""), long.replace(' ', ""));
    }

    #[test]
    fn breadcrumb_keeps_the_nearest_parents() {
        let chain: Vec<String> = [
            "ProfilerStep#12",
            "nn.Module: ResNet_0",
            "nn.Module: Sequential_3",
            "nn.Module: Bottleneck_1",
            "aten::conv2d",
        ]
        .map(String::from)
        .to_vec();
        let b = breadcrumb_text(&chain, "aten::convolution", 60);
        assert!(width(&b) <= 60, "{b}");
        assert!(b.ends_with("aten::conv2d › aten::convolution"), "{b}");
        assert!(b.contains('…'), "{b}");
        let short = breadcrumb_text(&chain[3..], "x", 80);
        assert_eq!(short, "nn.Module: Bottleneck_1 › aten::conv2d › x");
    }

    #[test]
    fn full_view_shows_every_arg_and_frame_and_scrolls() {
        let mut d = FullDetails {
            title: "aten::mm".into(),
            chain: vec!["ProfilerStep#1".into(), "forward".into()],
            facts: vec![("dur".into(), "1.000 ms".into())],
            args: (0..12)
                .map(|k| (format!("arg{k}"), format!("value {k}")))
                .chain(std::iter::once((
                    "Call stack".to_string(),
                    "train.py(88): step;train.py(120): main".to_string(),
                )))
                .collect(),
            scroll: 0,
        };
        let rows = d.rows(40);
        let text: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert!(text.contains(&"    train.py(88): step"), "{text:?}");
        assert!(text.contains(&"  arg11 = value 11"), "{text:?}");
        let area = Rect::new(0, 0, 40, 8);
        let mut buf = Buffer::empty(area);
        d.render(area, &mut buf);
        let s = screen(&buf);
        assert_eq!(s[0], "aten::mm");
        assert!(s[7].starts_with("↓ "), "{s:?}");
        d.scroll_by(100, 40, 8);
        let mut buf = Buffer::empty(area);
        d.render(area, &mut buf);
        let s = screen(&buf);
        assert_eq!(s[7], "    train.py(120): main", "{s:?}");
        assert_eq!(d.scroll, rows.len() - 8);
    }
}
