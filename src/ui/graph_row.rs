//! The `graphs` row above a GPU stream that replayed CUDA/HIP graphs: one block per graph
//! launch over its span on the stream (first kernel start → last kernel end,
//! [`crate::analysis::graphs`]), labelled `graph (N kernels)` when it fits; columns holding
//! several launches are shaded `▒`. Work is proportional to the launches in the window (binary
//! search to the first), capped at one launch per column.

use super::colors::{self, Theme};
use super::ruler::format_dur;
use super::span_row;
use crate::analysis::graphs::graph_node_name;
use crate::model::Ps;
use ratatui::buffer::Buffer;

pub use super::graph_spans::{GraphSpans, Span};

/// Draws the spans overlapping the window `(t0, t1)` into row `y`, columns `x0 .. x0 + cols`.
pub fn draw(
    buf: &mut Buffer,
    x0: u16,
    y: u16,
    cols: usize,
    spans: &[Span],
    win: (Ps, Ps),
    theme: Theme,
) {
    let style = colors::label_style(theme, 6);
    span_row::draw(
        buf,
        x0,
        y,
        cols,
        spans,
        win,
        |s| (s.start, s.end.max(s.start + 1)),
        |_| style,
        |_, s, room| {
            [
                graph_node_name(s.kernels as usize),
                format!("graph {}", s.kernels),
                s.kernels.to_string(),
            ]
            .into_iter()
            .find(|l| l.len() <= room)
            .unwrap_or_default()
        },
    );
}

/// What the status line says with the cursor on a `graphs` row at time `t`.
pub fn under_cursor(spans: &[Span], t: Ps) -> String {
    let k = spans.partition_point(|s| s.start <= t);
    match k.checked_sub(1).and_then(|k| spans.get(k).map(|s| (k, s))) {
        Some((k, s)) if t < s.end => format!(
            "{} · {} on the stream · launch {}/{}",
            graph_node_name(s.kernels as usize),
            format_dur(s.end - s.start),
            k + 1,
            spans.len()
        ),
        _ => format!(
            "{} CUDA/HIP graph launch{} on this stream",
            spans.len(),
            if spans.len() == 1 { "" } else { "es" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;

    fn line(buf: &Buffer, w: u16) -> String {
        (0..w).map(|x| buf[(x, 0)].symbol().to_string()).collect()
    }

    #[test]
    fn blocks_labels_and_merged_columns() {
        let sp = |start, end, kernels| Span {
            start,
            end,
            kernels,
        };
        let s = [
            sp(0, 200, 421),
            sp(200, 300, 3),
            sp(300, 301, 1),
            sp(301, 302, 1),
        ];
        let mut buf = Buffer::empty(Rect::new(0, 0, 40, 1));
        draw(
            &mut buf,
            0,
            0,
            40,
            &s,
            (0, 400),
            Theme::from(colors::ColorMode::None),
        );
        assert_eq!(line(&buf, 40), "▏graph (421 kernels)▏graph 3  ▒         ");
        assert_eq!(
            under_cursor(&s, 250),
            "graph (3 kernels) · 100 ps on the stream · launch 2/4"
        );
        assert_eq!(
            under_cursor(&s, 500),
            "4 CUDA/HIP graph launches on this stream"
        );
    }

    #[test]
    fn spans_of_the_vllm_decode_replay() {
        let c = crate::analysis::graphs::tests::load(crate::analysis::graphs::tests::VLLM);
        let g = GraphSpans::of(&c);
        assert_eq!(g.0.len(), 1);
        let (t, spans) = &g.0[0];
        assert_eq!(spans.len(), 1);
        assert_eq!(spans[0].kernels, 421);
        assert_eq!(g.of_track(*t).len(), 1);
        assert!(g.of_track(t + 1).is_empty());
    }
}
