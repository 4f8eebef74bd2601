//! The run overview (`R` on the timeline, issue 23): the rank × step heatmap and the sortable
//! rank table of the run the shown capture belongs to. It works from the per-rank step
//! summaries ([`crate::ui::summaries`]), which it asks for when opened: ranks not in memory are
//! loaded on background threads (one per core) and their models dropped once summarized, so a
//! run of many ranks never holds more than a few models at once. It rebuilds itself as
//! summaries land ([`View::refresh`]); `Enter` opens the cell's rank on the timeline zoomed to
//! the step.

use super::View;
use super::aligned::{Align, AlignedRow, AlignedView};
use super::help::help_for;
use super::overview::{Move, Overview, TABLE_COLUMNS};
use crate::analysis::ranks::{
    HTA_CANDIDATES, Metric, RankSummary, analyze_run, group_runs, is_rank_format,
};
use crate::index::Cell;
use crate::ui::action::Action;
use crate::ui::keymap::ViewKind;
use crate::ui::msg::Msg;
use crate::ui::state::{CaptureId, State};
use crate::ui::summaries::SummaryState;
use crate::ui::text;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::Widget;
use std::sync::Arc;

/// The overview of one run.
#[derive(Debug)]
pub struct OverviewView {
    /// The capture the overview was opened from (its run is shown).
    pub focus: CaptureId,
    /// Run name (discovery's run dir).
    pub run: String,
    /// Every capture of the run dir, in picker order.
    pub members: Vec<CaptureId>,
    /// Summaries version the overview was built from.
    built: u64,
    /// Ready summaries of the shown group, in row order, with their capture ids.
    rows: Vec<(CaptureId, Arc<RankSummary>)>,
    /// The heatmap and table state (None until a summary of the group is ready).
    pub overview: Option<Overview>,
    /// Name of the group shown (`run`, or `run (2)` for a second profiling span).
    pub group: String,
    /// HTA's potential stragglers (rank numbers), once every summary is in.
    pub stragglers: Vec<i64>,
    /// Ranks below the world size with no capture.
    pub missing: Vec<i64>,
    /// Captures whose summary failed: (host, error).
    pub failed: Vec<(String, String)>,
    /// The user moved the cursor (until then it follows the open capture's rank).
    moved: bool,
}

/// Screen regions: title, heatmap, table, status line.
fn layout(area: Rect, ranks: usize) -> (Rect, Rect, Rect, Rect) {
    let h = area.height;
    let title = Rect::new(area.x, area.y, area.width, 1.min(h));
    let status = Rect::new(
        area.x,
        area.bottom().saturating_sub(1),
        area.width,
        1.min(h),
    );
    let body = h.saturating_sub(2);
    // The heatmap takes its rows (+ 2 header lines) up to 60 % of the body, at least 3.
    let want = ranks as u16 + 2;
    let heat_h = want.min((body * 3 / 5).max(3)).min(body);
    let heat = Rect::new(area.x, area.y + 1, area.width, heat_h);
    let table = Rect::new(
        area.x,
        heat.bottom(),
        area.width,
        body.saturating_sub(heat_h),
    );
    (title, heat, table, status)
}

impl OverviewView {
    /// The overview of the shown capture's run and the request for its summaries (`None` when
    /// no capture is open).
    pub fn open(st: &State) -> Option<(OverviewView, Msg)> {
        OverviewView::open_for(st, st.shown()?)
    }

    /// The overview of the run of capture `focus` (its rank starts under the cursor), with the
    /// message requesting its summaries; `None` when `focus` is not listed.
    pub fn open_for(st: &State, focus: CaptureId) -> Option<(OverviewView, Msg)> {
        let run = st.entries.entry(focus)?.capture.source.run.clone();
        let members: Vec<CaptureId> = st
            .entries
            .iter()
            .filter(|e| {
                e.capture.source.run == run && !e.writing && is_rank_format(e.capture.format)
            })
            .map(|e| e.id)
            .collect();
        let mut v = OverviewView {
            focus,
            run: run.clone(),
            members: members.clone(),
            built: u64::MAX,
            rows: Vec::new(),
            overview: None,
            group: run,
            stragglers: Vec::new(),
            missing: Vec::new(),
            failed: Vec::new(),
            moved: false,
        };
        v.rebuild(st);
        Some((v, Msg::RequestSummaries(members)))
    }

    fn all_done(&self, st: &State) -> bool {
        let (done, total) = st.summaries.progress(&self.members);
        done == total
    }

    /// Rebuilds the rows, the run analysis and the heatmap from the ready summaries, keeping
    /// the metric, the cursor (on the same rank and step when still there) and the sort.
    fn rebuild(&mut self, st: &State) {
        if self.built == st.summaries.version {
            return;
        }
        self.built = st.summaries.version;
        let mut ids = Vec::new();
        let mut sums: Vec<Arc<RankSummary>> = Vec::new();
        self.failed.clear();
        for &id in &self.members {
            match st.summaries.get(id) {
                Some(SummaryState::Ready(s)) => {
                    ids.push(id);
                    sums.push(s.clone());
                }
                Some(SummaryState::Failed(e)) => {
                    let host = st
                        .entries
                        .entry(id)
                        .map_or(String::new(), |e| e.capture.source.host.clone());
                    self.failed.push((host, e.clone()));
                }
                _ => {}
            }
        }
        let groups = group_runs(&sums);
        let Some((name, members)) = groups
            .iter()
            .find(|(_, m)| m.iter().any(|&(_, i)| ids[i] == self.focus))
            .or(groups.first())
        else {
            return;
        };
        // The analysis (clock offsets, stragglers) once every summary is in; until then the
        // heatmap fills in with unaligned clocks.
        let complete = self.all_done(st);
        let report = complete.then(|| analyze_run(&sums, name, members, HTA_CANDIDATES));
        let refs: Vec<&RankSummary> = members.iter().map(|&(_, i)| &*sums[i]).collect();
        let numbers: Vec<i64> = members.iter().map(|m| m.0).collect();
        let (flags, offsets, scores): (Vec<bool>, Vec<i64>, Vec<u64>) = match &report {
            Some(r) => (
                numbers.iter().map(|n| r.stragglers.contains(n)).collect(),
                r.ranks.iter().map(|x| x.clock_offset_ns).collect(),
                r.ranks.iter().map(|x| x.straggler_score).collect(),
            ),
            None => (
                vec![false; refs.len()],
                vec![0; refs.len()],
                vec![0; refs.len()],
            ),
        };
        let mut ov = Overview::new(&refs, &numbers, &flags, &offsets, &scores);
        let focus_row = members.iter().position(|&(_, i)| ids[i] == self.focus);
        if let Some(old) = &self.overview {
            ov.set_metric(&refs, old.metric);
            ov.sort = old.sort;
            // The cursor stays on its rank and step.
            let rank = old.ranks.get(old.cursor.0).copied();
            let step = old.data.cols.get(old.cursor.1).copied();
            let r = rank.and_then(|r| ov.ranks.iter().position(|&x| x == r));
            let c = step.and_then(|s| ov.data.cols.iter().position(|&x| x == s));
            ov.cursor = (r.unwrap_or(0), c.unwrap_or(0));
            ov.offset = old.offset;
        }
        if !self.moved
            && let Some(r) = focus_row
        {
            ov.cursor.0 = r;
        }
        self.group = name.clone();
        self.stragglers = report.as_ref().map_or(Vec::new(), |r| r.stragglers.clone());
        self.missing = report.map_or(Vec::new(), |r| r.missing_ranks);
        self.rows = members
            .iter()
            .map(|&(_, i)| (ids[i], sums[i].clone()))
            .collect();
        self.overview = Some(ov);
    }

    /// The aligned multi-rank timeline of the shown ranks at the cursor's step (aligned by the
    /// collectives once the analysis is in, else by wall clock).
    pub fn aligned(&self, st: &State) -> Option<AlignedView> {
        let ov = self.overview.as_ref()?;
        let step = *ov.data.cols.get(ov.cursor.1)?;
        let rows = self
            .rows
            .iter()
            .enumerate()
            .filter_map(|(k, (id, s))| {
                Some(AlignedRow {
                    capture: *id,
                    rank: *ov.ranks.get(k)?,
                    straggler: ov.stragglers.get(k).copied().unwrap_or(false),
                    offset_ns: ov.offsets_ns.get(k).copied().unwrap_or(0),
                    summary: s.clone(),
                    tracks: st.summaries.track(*id)?.clone(),
                })
            })
            .collect();
        let align = if self.all_done(st) {
            Align::Collectives
        } else {
            Align::WallClock
        };
        let mut v = AlignedView::new(rows, step, align);
        v.cursor = ov.cursor.0;
        Some(v)
    }

    /// Ranks shown (rows of the heatmap).
    pub fn rows_len(&self) -> usize {
        self.rows.len()
    }

    /// What `Enter` opens: the cursor cell's capture and its step window (model time).
    pub fn target(&self) -> Option<(CaptureId, i64, i64, i64)> {
        let ov = self.overview.as_ref()?;
        let (row, number, _, _) = ov.target()?;
        let (id, s) = self.rows.get(row)?;
        let step = s.steps.iter().find(|x| x.step.number == number)?;
        Some((*id, number, step.step.start, step.step.end))
    }
}

impl View for OverviewView {
    fn kind(&self) -> ViewKind {
        ViewKind::Overview
    }

    fn refresh(&mut self, st: &State) {
        self.rebuild(st);
    }

    fn on_key(&mut self, _key: &KeyEvent, action: Option<Action>, st: &State) -> Vec<Msg> {
        let area = Rect::new(0, 0, st.size.0, st.size.1);
        let visible = match &self.overview {
            Some(ov) => {
                let (_, heat, _, _) = layout(area, ov.ranks.len());
                ov.heatmap().visible(heat)
            }
            None => (1, 1),
        };
        let mv = |ov: &mut Overview, m: Move| ov.move_cursor(m, visible);
        match action {
            Some(Action::Help) => return vec![help_for(ViewKind::Overview)],
            Some(Action::Back) => return vec![Msg::Pop],
            Some(Action::Quit) => return vec![Msg::Quit],
            Some(Action::OpenAligned) => {
                return self
                    .aligned(st)
                    .map(|v| Msg::Push(Box::new(v)))
                    .into_iter()
                    .collect();
            }
            Some(Action::Confirm) => {
                return match self.target() {
                    Some((id, _, t0, t1)) => vec![Msg::OpenWindow(id, t0, t1)],
                    None => vec![Msg::Notice("this rank has no such step".into())],
                };
            }
            _ => {}
        }
        let refs: Vec<&RankSummary> = self.rows.iter().map(|r| &*r.1).collect();
        let Some(ov) = self.overview.as_mut() else {
            return Vec::new();
        };
        self.moved |= matches!(
            action,
            Some(Action::Down | Action::Up | Action::PageDown | Action::PageUp)
        );
        match action {
            Some(Action::Down) => mv(ov, Move::Down),
            Some(Action::Up) => mv(ov, Move::Up),
            Some(Action::PrevSlice) => mv(ov, Move::Left),
            Some(Action::NextSlice) => mv(ov, Move::Right),
            Some(Action::Top) => mv(ov, Move::Home),
            Some(Action::Bottom) => mv(ov, Move::End),
            Some(a @ (Action::PageDown | Action::PageUp)) => {
                for _ in 0..visible.0.max(1) {
                    mv(
                        ov,
                        if a == Action::PageDown {
                            Move::Down
                        } else {
                            Move::Up
                        },
                    );
                }
            }
            Some(Action::CycleMetric) => ov.next_metric(&refs),
            Some(Action::SortNext) => {
                let next = (ov.sort.0 + 1) % TABLE_COLUMNS.len();
                ov.sort_by(next);
            }
            Some(Action::SortReverse) => ov.sort.1 = !ov.sort.1,
            _ => {}
        }
        Vec::new()
    }

    fn draw(&self, st: &State, buf: &mut Buffer, area: Rect, _cells: &mut Vec<Cell>) {
        let ranks = self.overview.as_ref().map_or(1, |o| o.ranks.len());
        let (title, heat, table, status) = layout(area, ranks);
        let (done, total) = st.summaries.progress(&self.members);
        let steps = self.overview.as_ref().map_or(0, |o| o.data.cols.len());
        let mut head = format!(
            " run overview  {} · {} ranks · {steps} steps",
            text::sanitize(&self.group),
            self.rows.len()
        );
        if done < total {
            head.push_str(&format!(" · summarizing {done}/{total} captures…"));
        } else {
            if !self.stragglers.is_empty() {
                let s: Vec<String> = self.stragglers.iter().map(|r| r.to_string()).collect();
                head.push_str(&format!(" · stragglers (HTA): rank {}", s.join(", ")));
            }
            if !self.missing.is_empty() {
                head.push_str(&format!(" · {} ranks missing", self.missing.len()));
            }
            if !self.failed.is_empty() {
                head.push_str(&format!(" · {} failed", self.failed.len()));
            }
        }
        buf.set_stringn(
            title.x,
            title.y,
            text::fit(&head, title.width as usize),
            title.width as usize,
            Style::default().add_modifier(Modifier::BOLD),
        );
        match &self.overview {
            Some(ov) => {
                ov.heatmap().render(heat, buf);
                draw_table(ov, buf, table);
            }
            None => {
                let msg = match self.failed.first() {
                    Some((h, e)) if done == total => format!("could not summarize {h}: {e}"),
                    _ => "summarizing the run's captures…".to_string(),
                };
                buf.set_stringn(
                    heat.x + 1,
                    heat.y,
                    text::fit(&text::sanitize(&msg), heat.width as usize),
                    heat.width.saturating_sub(1) as usize,
                    Style::default(),
                );
            }
        }
        let metric = self
            .overview
            .as_ref()
            .map_or(Metric::StepTime, |o| o.metric);
        let skew = if metric == Metric::StartSkew && done == total {
            " (clocks aligned by collectives)"
        } else {
            ""
        };
        let hints = st.keymap.hints(ViewKind::Overview, st.size.0 < 100);
        let line = format!("{hints}  ▲ slowest · ! straggler{skew}");
        buf.set_stringn(
            status.x,
            status.y,
            text::fit(&line, status.width as usize),
            status.width as usize,
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

/// Column widths of the rank table (the host column takes what is left, 8 to 24).
const WIDTHS: [usize; 9] = [5, 0, 5, 9, 9, 9, 6, 8, 9];

/// The rank table: header with the sort marker, rows in sort order, the cursor's rank in
/// reverse video and scrolled into view.
fn draw_table(ov: &Overview, buf: &mut Buffer, area: Rect) {
    if area.height < 2 || area.width == 0 {
        return;
    }
    let w = area.width as usize;
    let fixed: usize = WIDTHS.iter().sum::<usize>() + WIDTHS.len() + 1;
    let mut widths = WIDTHS;
    widths[1] = w.saturating_sub(fixed).clamp(8, 24);
    let cell = |s: &str, k: usize, right: bool| -> String {
        let s = text::fit(s, widths[k]);
        if right {
            format!("{s:>width$} ", width = widths[k])
        } else {
            format!("{s:<width$} ", width = widths[k])
        }
    };
    let mut head = String::from(" ");
    for (k, c) in TABLE_COLUMNS.iter().enumerate() {
        let mark = if ov.sort.0 == k {
            if ov.sort.1 { "▼" } else { "▲" }
        } else {
            ""
        };
        head.push_str(&cell(&format!("{c}{mark}"), k, k != 1));
    }
    buf.set_stringn(
        area.x,
        area.y,
        text::fit(&head, w),
        w,
        Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
    );
    let rows = ov.table_rows();
    let cur = ov.cursor.0;
    let body = area.height as usize - 1;
    let at = rows.iter().position(|r| r.rank_index == cur).unwrap_or(0);
    let first = at.saturating_sub(body.saturating_sub(1));
    for (dy, r) in rows.iter().skip(first).take(body).enumerate() {
        let mut line = String::from(" ");
        for (k, c) in r.cells.iter().enumerate() {
            line.push_str(&cell(c, k, k != 1));
        }
        let mut style = Style::default();
        if r.rank_index == cur {
            style = style.add_modifier(Modifier::REVERSED);
        }
        if ov.stragglers.get(r.rank_index).copied().unwrap_or(false) {
            style = style.add_modifier(Modifier::BOLD);
        }
        buf.set_stringn(
            area.x,
            area.y + 1 + dy as u16,
            text::fit(&line, w),
            w,
            style,
        );
    }
}
