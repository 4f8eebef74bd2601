//! The aligned multi-rank timeline (`t` in the run overview, issue 23): one row per rank showing
//! its busiest device track (GPU stream or XPlane device line, kept with the rank's step summary
//! as busy intervals — no model needed), all on one time axis, aligned by wall clock (the
//! files' clocks), by the start of a chosen step, or by the clocks the matched collectives give
//! (`m` cycles). Each column shows the busy share of the track there (`░▒▓█`, coloured by
//! category), so the rank that starts late or computes long stands out at a glance. `[` / `]`
//! choose the step (its window is fitted); `Enter` opens the cursor's rank at the same window.

use super::View;
use super::help::help_for;
use crate::analysis::ranks::RankSummary;
use crate::index::{Cell, column_edge};
use crate::model::Ps;
use crate::ui::action::Action;
use crate::ui::colors;
use crate::ui::keymap::ViewKind;
use crate::ui::msg::Msg;
use crate::ui::ruler;
use crate::ui::state::{CaptureId, Mark, State};
use crate::ui::summaries::{KEPT_TRACKS, RankTracks, StreamTrack};
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use std::sync::Arc;

/// How the ranks' times are lined up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Each file's own clock (Kineto's epoch µs; hosts' clocks may differ).
    WallClock,
    /// The chosen step starts at 0 on every rank.
    StepStart,
    /// File clocks corrected by the offsets the matched collectives give (`analysis::ranks`).
    Collectives,
}

impl Align {
    fn name(self) -> &'static str {
        match self {
            Align::WallClock => "wall clock",
            Align::StepStart => "step start",
            Align::Collectives => "collectives",
        }
    }
}

/// One rank's row.
#[derive(Debug, Clone)]
pub struct AlignedRow {
    /// Its capture.
    pub capture: CaptureId,
    /// Rank number.
    pub rank: i64,
    /// HTA straggler.
    pub straggler: bool,
    /// Clock offset from the collectives, ns.
    pub offset_ns: i64,
    /// Its step summary.
    pub summary: Arc<RankSummary>,
    /// Its busiest device tracks (busiest first).
    pub tracks: Arc<RankTracks>,
}

/// The aligned timeline of a run's ranks.
#[derive(Debug)]
pub struct AlignedView {
    /// Rows, in rank order.
    pub rows: Vec<AlignedRow>,
    /// Alignment.
    pub align: Align,
    /// Step number the window and the step-start alignment refer to.
    pub step: i64,
    /// Step numbers present in any rank, sorted.
    steps: Vec<i64>,
    /// Window in aligned time, ps.
    pub window: (Ps, Ps),
    /// Which of each rank's kept tracks is shown: 0 the busiest, 1 the second busiest, …
    pub pick: usize,
    /// Cursor row and first row shown.
    pub cursor: usize,
    scroll: usize,
}

/// Width of the rank label column.
const LABEL_W: u16 = 9;

impl AlignedView {
    /// The view over `rows` at step `step`, aligned by `align`, the window fitted to the step.
    pub fn new(rows: Vec<AlignedRow>, step: i64, align: Align) -> AlignedView {
        let mut steps: Vec<i64> = rows
            .iter()
            .flat_map(|r| r.summary.steps.iter().map(|s| s.step.number))
            .collect();
        steps.sort_unstable();
        steps.dedup();
        let mut v = AlignedView {
            rows,
            align,
            step,
            steps,
            window: (0, 1),
            pick: 0,
            cursor: 0,
            scroll: 0,
        };
        v.fit_step();
        v
    }

    /// Base of the file-clock alignments, ns: the earliest aligned capture start.
    fn base_ns(&self, corrected: bool) -> i64 {
        self.rows
            .iter()
            .map(|r| r.summary.span_ns.0 - if corrected { r.offset_ns } else { 0 })
            .min()
            .unwrap_or(0)
    }

    /// Aligned time = model time + shift, per row (`None`: the row lacks the chosen step in
    /// step-start alignment).
    pub fn shift(&self, k: usize) -> Option<Ps> {
        let r = self.rows.get(k)?;
        let s = &r.summary;
        match self.align {
            Align::WallClock => Some((s.clock0_ns - self.base_ns(false)) * 1000),
            Align::Collectives => Some((s.clock0_ns - r.offset_ns - self.base_ns(true)) * 1000),
            Align::StepStart => s
                .steps
                .iter()
                .find(|x| x.step.number == self.step)
                .map(|x| -x.step.start),
        }
    }

    /// Aligned window of the chosen step over every rank that has it.
    fn step_span(&self) -> Option<(Ps, Ps)> {
        let mut out: Option<(Ps, Ps)> = None;
        for (k, r) in self.rows.iter().enumerate() {
            let (Some(sh), Some(st)) = (
                self.shift(k),
                r.summary.steps.iter().find(|x| x.step.number == self.step),
            ) else {
                continue;
            };
            let (a, b) = (st.step.start + sh, st.step.end + sh);
            out = Some(out.map_or((a, b), |(x, y)| (x.min(a), y.max(b))));
        }
        out
    }

    fn fit_step(&mut self) {
        if let Some((a, b)) = self.step_span() {
            let m = (b - a).max(1) / 20;
            self.window = (a - m, b + m);
        }
    }

    fn zoom(&mut self, num: i64, den: i64) {
        let (a, b) = self.window;
        let w = ((b - a) as i128 * num as i128 / den as i128).max(1000) as Ps;
        let mid = a + (b - a) / 2;
        self.window = (mid - w / 2, mid - w / 2 + w);
    }

    fn pan(&mut self, quarters: i64) {
        let d = (self.window.1 - self.window.0) / 4 * quarters;
        self.window = (self.window.0 + d, self.window.1 + d);
    }

    /// The track shown for row `k`.
    pub fn track(&self, k: usize) -> Option<&StreamTrack> {
        self.rows.get(k)?.tracks.tracks.get(self.pick)
    }

    fn body_rows(st: &State) -> usize {
        usize::from(st.size.1.saturating_sub(4)).max(1)
    }
}

impl View for AlignedView {
    fn kind(&self) -> ViewKind {
        ViewKind::Aligned
    }

    fn on_key(&mut self, _key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg> {
        let n = self.rows.len();
        match action {
            Some(Action::Help) => return vec![help_for(ViewKind::Aligned)],
            Some(Action::Back) => return vec![Msg::Pop],
            Some(Action::Quit) => return vec![Msg::Quit],
            Some(Action::ZoomIn) => self.zoom(1, 2),
            Some(Action::ZoomOut) => self.zoom(2, 1),
            Some(Action::PanLeft) => self.pan(-1),
            Some(Action::PanRight) => self.pan(1),
            Some(Action::Down) => self.cursor = (self.cursor + 1).min(n.saturating_sub(1)),
            Some(Action::Up) => self.cursor = self.cursor.saturating_sub(1),
            Some(Action::FitAll) => self.fit_step(),
            Some(a @ (Action::NextTrack | Action::PrevTrack)) => {
                let n = KEPT_TRACKS;
                self.pick = if a == Action::NextTrack {
                    (self.pick + 1) % n
                } else {
                    (self.pick + n - 1) % n
                };
            }
            Some(a @ (Action::PrevStep | Action::NextStep)) => {
                let i = self.steps.partition_point(|&s| s < self.step);
                let j = if a == Action::NextStep {
                    (i + 1).min(self.steps.len().saturating_sub(1))
                } else {
                    i.saturating_sub(1)
                };
                if let Some(&s) = self.steps.get(j) {
                    self.step = s;
                    self.fit_step();
                }
            }
            Some(Action::CycleMetric) => {
                self.align = match self.align {
                    Align::WallClock => Align::StepStart,
                    Align::StepStart => Align::Collectives,
                    Align::Collectives => Align::WallClock,
                };
                self.fit_step();
            }
            Some(Action::Confirm) => {
                let Some(r) = self.rows.get(self.cursor) else {
                    return Vec::new();
                };
                let Some(sh) = self.shift(self.cursor) else {
                    return vec![Msg::Notice(format!(
                        "rank {} has no step {}",
                        r.rank, self.step
                    ))];
                };
                return vec![Msg::OpenWindow(
                    r.capture,
                    self.window.0 - sh,
                    self.window.1 - sh,
                )];
            }
            _ => {}
        }
        let h = Self::body_rows(st);
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + h {
            self.scroll = self.cursor + 1 - h;
        }
        Vec::new()
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        if area.height < 4 || area.width <= LABEL_W + 2 {
            return;
        }
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let (t0, t1) = self.window;
        let title = format!(
            " aligned ranks · {} device track · by {} · step {} · {} ranks",
            ["busiest", "2nd busiest", "3rd busiest"]
                .get(self.pick)
                .copied()
                .unwrap_or("kept"),
            self.align.name(),
            self.step,
            self.rows.len()
        );
        let w = area.width as usize;
        buf.set_stringn(area.x, area.y, text::fit(&title, w), w, bold);
        let lanes = Rect::new(
            area.x + LABEL_W,
            area.y + 2,
            area.width - LABEL_W,
            area.height - 3,
        );
        buf.set_stringn(
            area.x,
            area.y + 1,
            format!(" {}", ruler::format_dur(t1 - t0)),
            LABEL_W as usize,
            Style::default().add_modifier(Modifier::DIM),
        );
        ruler::draw(
            buf,
            Rect::new(lanes.x, area.y + 1, lanes.width, 1),
            (t0, t1),
            0,
            &Mark::None,
        );
        let cols = lanes.width as usize;
        // The cursor row stays visible (also before the first key moved the scroll).
        let h = lanes.height as usize;
        let scroll = if self.cursor >= self.scroll + h {
            self.cursor + 1 - h
        } else {
            self.scroll.min(self.cursor)
        };
        const SHADES: [&str; 4] = ["░", "▒", "▓", "█"];
        for (dy, k) in (scroll..self.rows.len())
            .take(lanes.height as usize)
            .enumerate()
        {
            let r = &self.rows[k];
            let y = lanes.y + dy as u16;
            let mut style = if r.straggler {
                bold.fg(ratatui::style::Color::Red)
            } else {
                Style::default()
            };
            if k == self.cursor {
                style = style.add_modifier(Modifier::REVERSED);
            }
            let label = format!("{}rank {}", if r.straggler { "!" } else { " " }, r.rank);
            buf.set_stringn(
                area.x,
                y,
                format!(
                    "{:<w$}",
                    text::fit(&label, LABEL_W as usize - 1),
                    w = LABEL_W as usize
                ),
                LABEL_W as usize,
                style,
            );
            let missing = match self.shift(k) {
                None => Some(format!("no step {}", self.step)),
                Some(_) if r.tracks.tracks.get(self.pick).is_none() => {
                    Some(format!("only {} device tracks", r.tracks.candidates))
                }
                Some(_) => None,
            };
            let (Some(sh), None) = (self.shift(k), &missing) else {
                buf.set_stringn(
                    lanes.x + 1,
                    y,
                    missing.unwrap_or_default(),
                    cols.saturating_sub(1),
                    Style::default().add_modifier(Modifier::DIM),
                );
                continue;
            };
            for c in 0..cols {
                let a = column_edge(t0, t1, cols, c);
                let b = column_edge(t0, t1, cols, c + 1).max(a + 1);
                let Some(tr) = r.tracks.tracks.get(self.pick) else {
                    break;
                };
                let (busy, slot) = tr.busy(a - sh, b - sh);
                if busy <= 0 {
                    continue;
                }
                let f = (i128::from(busy) * 4 / i128::from(b - a)).clamp(0, 3) as usize;
                let style = colors::edge_style(st.theme, usize::from(slot.unwrap_or(0)));
                if let Some(cell) = buf.cell_mut((lanes.x + c as u16, y)) {
                    cell.set_symbol(SHADES[f]).set_style(style);
                }
            }
        }
        // Status: hints and the cursor rank's track and step start.
        let mut status = st.keymap.hints(ViewKind::Aligned, st.size.0 < 100);
        if let Some(r) = self.rows.get(self.cursor) {
            let start = self.shift(self.cursor).and_then(|sh| {
                let s = r
                    .summary
                    .steps
                    .iter()
                    .find(|x| x.step.number == self.step)?;
                let first = self.step_span()?.0;
                Some(s.step.start + sh - first)
            });
            let name = self.track(self.cursor).map_or("-", |t| t.name.as_str());
            status.push_str(&format!(
                "  rank {}: {} ({} of {})",
                r.rank,
                text::sanitize(name),
                ["busiest", "2nd busiest", "3rd busiest"]
                    .get(self.pick)
                    .copied()
                    .unwrap_or("kept"),
                r.tracks.candidates
            ));
            if let Some(d) = start {
                status.push_str(&format!(
                    " · step {} starts +{}",
                    self.step,
                    ruler::format_dur(d)
                ));
            }
        }
        buf.set_stringn(
            area.x,
            area.bottom() - 1,
            text::fit(&status, w),
            w,
            Style::default().add_modifier(Modifier::DIM),
        );
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ranks::RankStep;
    use crate::analysis::steps::Step;
    use crate::ui::keymap::Keymap;
    use crate::ui::loading::Entries;

    /// A rank whose file clock starts at `clock0_ns`, with steps 0 and 1 of 100 µs and a
    /// device busy for the first 40 µs of each step.
    fn row(rank: i64, clock0_ns: i64, offset_ns: i64) -> AlignedRow {
        let us = 1_000_000;
        let steps = (0..2)
            .map(|n| RankStep {
                step: Step {
                    number: n,
                    start: n * 100 * us,
                    end: (n + 1) * 100 * us,
                    partial: false,
                },
                start_ns: clock0_ns + n * 100_000,
                input: 0,
                devices: Vec::new(),
            })
            .collect();
        let track = StreamTrack {
            name: "stream 7".into(),
            start: vec![0, 100 * us],
            end: vec![40 * us, 140 * us],
            slot: vec![0, 0],
            busy_before: vec![0, 40 * us, 80 * us],
        };
        AlignedRow {
            capture: CaptureId(rank as u32),
            rank,
            straggler: false,
            offset_ns,
            summary: Arc::new(RankSummary {
                steps,
                clock0_ns,
                span_ns: (clock0_ns, clock0_ns + 200_000),
                ..RankSummary::default()
            }),
            tracks: Arc::new(RankTracks {
                tracks: vec![track],
                candidates: 1,
            }),
        }
    }

    /// First busy column of each rank row.
    fn first_busy(v: &AlignedView) -> Vec<Option<usize>> {
        let st = State::new(
            Entries::default(),
            (109, 8),
            crate::ui::colors::ColorMode::None.into(),
            Keymap::default(),
        );
        let area = Rect::new(0, 0, 109, 8);
        let mut buf = Buffer::empty(area);
        v.draw(&st, &mut buf, area, &mut Vec::new());
        (0..v.rows.len())
            .map(|k| (LABEL_W..area.width).position(|x| buf[(x, 2 + k as u16)].symbol() == "█"))
            .collect()
    }

    #[test]
    fn alignments_shift_the_rows_as_the_clocks_say() {
        // Rank 1's file clock reads 10 µs later; the collectives say it runs 10 µs ahead.
        let rows = vec![row(0, 1_000_000, 0), row(1, 1_010_000, 10_000)];
        let mut v = AlignedView::new(rows, 0, Align::WallClock);
        // Step 0 over both ranks: 0 .. 110 µs (+ 5 % margins), 100 columns.
        v.window = (0, 100_000_000);
        assert_eq!(v.shift(1), Some(10_000_000));
        assert_eq!(first_busy(&v), vec![Some(0), Some(10)]);
        v.align = Align::Collectives;
        assert_eq!(first_busy(&v), vec![Some(0), Some(0)]);
        v.align = Align::StepStart;
        v.step = 1;
        v.window = (0, 100_000_000);
        assert_eq!(v.shift(0), Some(-100_000_000));
        assert_eq!(first_busy(&v), vec![Some(0), Some(0)]);
    }
}
