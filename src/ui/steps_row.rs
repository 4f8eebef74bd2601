//! The `Steps` row at the top of a capture's timeline: one block per training step
//! (`analysis::steps`: Kineto `ProfilerStep#N`, XPlane `step_num` stats or the `Steps` line),
//! alternating two colours, a `▏` at each step start and `step N` inside when it fits; columns
//! holding several step starts are shaded `▒`. Work is proportional to the steps in the window
//! (binary search to the first), capped at one step per column.

use super::colors::{self, Theme};
use super::ruler::format_dur;
use super::span_row;
use crate::analysis::steps::{StepSource, Steps};
use crate::model::Ps;
use ratatui::buffer::Buffer;

/// Palette slots of even and odd steps.
const SLOTS: [usize; 2] = [0, 10];

/// Draws the steps of `steps` overlapping the window `(t0, t1)` into row `y`, columns
/// `x0 .. x0 + cols`.
pub fn draw(
    buf: &mut Buffer,
    x0: u16,
    y: u16,
    cols: usize,
    steps: &Steps,
    win: (Ps, Ps),
    theme: Theme,
) {
    span_row::draw(
        buf,
        x0,
        y,
        cols,
        &steps.steps,
        win,
        |s| (s.start, s.end),
        |i| colors::label_style(theme, SLOTS[i % 2]),
        |_, s, room| step_label(s.number, s.partial, room),
    );
}

/// `step N` (`N` when only that fits; ` (cut off)` for a partial last step when room).
fn step_label(n: i64, partial: bool, room: usize) -> String {
    let long = format!("step {n}{}", if partial { " (cut off)" } else { "" });
    let mid = format!("step {n}");
    let short = n.to_string();
    [long, mid, short]
        .into_iter()
        .find(|l| l.len() <= room)
        .unwrap_or_default()
}

/// Index of the step containing `t`, else of the last step starting before it.
pub fn at_or_before(steps: &Steps, t: Ps) -> Option<usize> {
    steps
        .at(t)
        .or_else(|| steps.steps.partition_point(|s| s.start <= t).checked_sub(1))
}

/// Status text of the step at `t`: `step 12 (3/40)`, empty without steps.
pub fn status(steps: &Steps, t: Ps) -> Option<String> {
    if steps.source == StepSource::Whole {
        return None;
    }
    let k = steps.at(t)?;
    Some(format!(
        "step {} ({}/{})",
        steps.steps[k].number,
        k + 1,
        steps.steps.len()
    ))
}

/// What the status line says with the cursor on the `Steps` row.
pub fn under_cursor(steps: &Steps, t: Ps) -> String {
    let src = match steps.source {
        StepSource::ProfilerStep => "ProfilerStep#N",
        StepSource::StepNum => "step_num stats",
        StepSource::Serving => "serving iterations",
        StepSource::StepsLine => "the Steps line",
        StepSource::Regex => "--step-regex",
        StepSource::Whole => "no steps",
    };
    match steps.at(t) {
        Some(k) => {
            let s = &steps.steps[k];
            format!(
                "step {} · {}{} · from {src}",
                s.number,
                format_dur(s.dur()),
                if s.partial { " · cut off" } else { "" }
            )
        }
        None => format!("{} steps from {src}", steps.steps.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::steps::Step;
    use ratatui::layout::Rect;

    fn steps(w: &[(i64, Ps, Ps)]) -> Steps {
        Steps {
            source: StepSource::ProfilerStep,
            steps: w
                .iter()
                .map(|&(number, start, end)| Step {
                    number,
                    start,
                    end,
                    partial: false,
                })
                .collect(),
        }
    }

    fn line(buf: &Buffer, w: u16) -> String {
        (0..w).map(|x| buf[(x, 0)].symbol().to_string()).collect()
    }

    #[test]
    fn blocks_labels_and_merged_columns() {
        let s = steps(&[(7, 0, 100), (8, 100, 300), (9, 300, 301), (10, 301, 302)]);
        let area = Rect::new(0, 0, 40, 1);
        let mut buf = Buffer::empty(area);
        draw(
            &mut buf,
            0,
            0,
            40,
            &s,
            (0, 400),
            Theme::from(colors::ColorMode::None),
        );
        // 10 ps per column: step 7 on 0..10, step 8 on 10..30, 9 and 10 share column 30.
        assert_eq!(line(&buf, 40), "▏step 7   ▏step 8             ▒         ");
        // Zoomed into step 8: it fills the row, no start marker (it starts left of the window).
        let mut buf = Buffer::empty(area);
        draw(
            &mut buf,
            0,
            0,
            40,
            &s,
            (150, 250),
            Theme::from(colors::ColorMode::None),
        );
        assert_eq!(line(&buf, 40).trim_end(), " step 8");
        assert_eq!(status(&s, 150).as_deref(), Some("step 8 (2/4)"));
        assert_eq!(status(&s, 500), None);
        assert_eq!(at_or_before(&s, 500), Some(3));
        assert_eq!(at_or_before(&s, -1), None);
    }
}
