//! State of the run overview (issue 23), from plain data: the rank × step heatmap with its metric
//! switch and cell cursor, and the sortable rank table. No `App` here: the view that wires it
//! into the view stack (after the UI architecture refactor) turns keys into [`Move`]s, draws
//! [`Overview::heatmap`] and [`Overview::table_rows`], and opens the timeline of
//! [`Overview::target`] on `Enter`.

use super::heatmap::{Heatmap, HeatmapData, Unit, scroll_to};
use crate::analysis::ranks::{Metric, RankSummary, matrix};
use crate::model::Ps;

/// A cursor move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    /// One rank up.
    Up,
    /// One rank down.
    Down,
    /// One step left.
    Left,
    /// One step right.
    Right,
    /// First step.
    Home,
    /// Last step.
    End,
}

/// Rank table columns, in order.
pub const TABLE_COLUMNS: [&str; 9] = [
    "RANK",
    "HOST",
    "STEPS",
    "MEAN",
    "P50",
    "MAX",
    "IDLE %",
    "EXP.COMM",
    "STRAGGLER",
];

/// One rank table row: display cells and numeric sort keys (same order as [`TABLE_COLUMNS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TableRow {
    /// Index of the rank in the overview.
    pub rank_index: usize,
    /// Display cells.
    pub cells: Vec<String>,
    /// Sort keys (text columns sort by their row index).
    pub keys: Vec<f64>,
}

/// The overview of one run.
#[derive(Clone, Debug)]
pub struct Overview {
    /// Rank numbers, in row order.
    pub ranks: Vec<i64>,
    /// Host of each rank.
    pub hosts: Vec<String>,
    /// Straggler flags, per row.
    pub stragglers: Vec<bool>,
    /// Clock offsets, ns, per row.
    pub offsets_ns: Vec<i64>,
    /// HTA straggler score per row.
    pub scores: Vec<u64>,
    /// Current metric.
    pub metric: Metric,
    /// Heatmap data of the current metric.
    pub data: HeatmapData,
    /// Step windows per row: (step number, start ns in the file clock, dur ps).
    pub windows: Vec<Vec<(i64, i64, Ps)>>,
    /// Per-row step statistics: (mean, p50, max) ps and idle / exposed-communication shares.
    stats: Vec<[f64; 5]>,
    /// Cursor (row, col) and scroll offset.
    pub cursor: (usize, usize),
    /// First visible (row, col).
    pub offset: (usize, usize),
    /// Table sort: column and descending.
    pub sort: (usize, bool),
}

fn data_of(
    ranks: &[&RankSummary],
    labels: &[String],
    marks: &[bool],
    offs: &[i64],
    m: Metric,
) -> HeatmapData {
    let (cols, values) = matrix(ranks, offs, m);
    HeatmapData::new(
        labels.to_vec(),
        cols,
        values,
        marks.to_vec(),
        m.name(),
        if m.is_ratio() { Unit::Ratio } else { Unit::Ps },
        10,
    )
}

impl Overview {
    /// Builds the overview of `ranks` (run order) with their numbers, straggler flags, clock
    /// offsets and HTA scores.
    pub fn new(
        ranks: &[&RankSummary],
        numbers: &[i64],
        stragglers: &[bool],
        offsets_ns: &[i64],
        scores: &[u64],
    ) -> Overview {
        let labels: Vec<String> = numbers.iter().map(|r| format!("rank {r}")).collect();
        let metric = Metric::StepTime;
        let stats = ranks
            .iter()
            .map(|r| {
                let mut d: Vec<Ps> = r.steps.iter().map(|s| s.step.dur()).collect();
                d.sort_unstable();
                let n = d.len().max(1) as f64;
                let total: Ps = d.iter().sum();
                // Device shares over the steps with device data only (a step before the
                // device's trace started is not 100 % idle: nothing was recorded).
                let with_data = || {
                    r.steps
                        .iter()
                        .map(|s| (s.step.dur(), s.device(r.primary_device)))
                        .filter(|(_, d)| d.has_data())
                };
                let idle: Ps = with_data().map(|(_, d)| d.idle).sum();
                let comm: Ps = with_data().map(|(_, d)| d.exposed_communication).sum();
                let covered: Ps = with_data().map(|(dur, _)| dur).sum();
                let share = |x: Ps| {
                    if covered > 0 {
                        x as f64 / covered as f64
                    } else {
                        0.0
                    }
                };
                [
                    total as f64 / n,
                    d.get(d.len() / 2).copied().unwrap_or(0) as f64,
                    d.last().copied().unwrap_or(0) as f64,
                    share(idle),
                    share(comm),
                ]
            })
            .collect();
        Overview {
            ranks: numbers.to_vec(),
            hosts: ranks.iter().map(|r| r.host.clone()).collect(),
            stragglers: stragglers.to_vec(),
            offsets_ns: offsets_ns.to_vec(),
            scores: scores.to_vec(),
            metric,
            data: data_of(ranks, &labels, stragglers, offsets_ns, metric),
            windows: ranks
                .iter()
                .map(|r| {
                    r.steps
                        .iter()
                        .map(|s| (s.step.number, s.start_ns, s.step.dur()))
                        .collect()
                })
                .collect(),
            stats,
            cursor: (0, 0),
            offset: (0, 0),
            sort: (0, false),
        }
    }

    /// Switches to the next metric (recomputes the heatmap data).
    pub fn next_metric(&mut self, ranks: &[&RankSummary]) {
        let k = Metric::ALL
            .iter()
            .position(|&m| m == self.metric)
            .unwrap_or(0);
        self.set_metric(ranks, Metric::ALL[(k + 1) % Metric::ALL.len()]);
    }

    /// Shows `metric` (recomputes the heatmap data).
    pub fn set_metric(&mut self, ranks: &[&RankSummary], metric: Metric) {
        self.metric = metric;
        self.data = data_of(
            ranks,
            &self.data.rows,
            &self.stragglers,
            &self.offsets_ns,
            self.metric,
        );
    }

    /// Moves the cursor and scrolls so it stays within `visible` (rows, cols).
    pub fn move_cursor(&mut self, m: Move, visible: (usize, usize)) {
        let (rows, cols) = (self.data.rows.len(), self.data.cols.len());
        let (mut r, mut c) = self.cursor;
        match m {
            Move::Up => r = r.saturating_sub(1),
            Move::Down => r = (r + 1).min(rows.saturating_sub(1)),
            Move::Left => c = c.saturating_sub(1),
            Move::Right => c = (c + 1).min(cols.saturating_sub(1)),
            Move::Home => c = 0,
            Move::End => c = cols.saturating_sub(1),
        }
        self.cursor = (r, c);
        self.offset = (
            scroll_to(r, self.offset.0, visible.0),
            scroll_to(c, self.offset.1, visible.1),
        );
    }

    /// The heatmap widget for the current state.
    pub fn heatmap(&self) -> Heatmap<'_> {
        Heatmap {
            data: &self.data,
            cursor: self.cursor,
            offset: self.offset,
        }
    }

    /// What `Enter` opens: (row, step number, step start ns in the rank's file clock, dur ps),
    /// when the cursor rank has that step.
    pub fn target(&self) -> Option<(usize, i64, i64, Ps)> {
        let (r, c) = self.cursor;
        let step = *self.data.cols.get(c)?;
        let &(n, start, dur) = self.windows.get(r)?.iter().find(|w| w.0 == step)?;
        Some((r, n, start, dur))
    }

    /// Sorts the table by `col` (same column again flips the order).
    pub fn sort_by(&mut self, col: usize) {
        self.sort = if self.sort.0 == col {
            (col, !self.sort.1)
        } else {
            (col.min(TABLE_COLUMNS.len() - 1), col >= 2)
        };
    }

    /// Rank table rows in the current sort order.
    pub fn table_rows(&self) -> Vec<TableRow> {
        let dur = |v: f64| crate::ui::ruler::format_dur(v as Ps);
        let mut rows: Vec<TableRow> = (0..self.ranks.len())
            .map(|i| {
                let s = self.stats[i];
                let steps = self.windows[i].len();
                TableRow {
                    rank_index: i,
                    cells: vec![
                        self.ranks[i].to_string(),
                        crate::ui::text::sanitize(&self.hosts[i]).into_owned(),
                        steps.to_string(),
                        dur(s[0]),
                        dur(s[1]),
                        dur(s[2]),
                        format!("{:.1}%", s[3] * 100.0),
                        format!("{:.1}%", s[4] * 100.0),
                        format!(
                            "{}{}",
                            self.scores[i],
                            if self.stragglers[i] { " !" } else { "" }
                        ),
                    ],
                    keys: vec![
                        self.ranks[i] as f64,
                        i as f64,
                        steps as f64,
                        s[0],
                        s[1],
                        s[2],
                        s[3],
                        s[4],
                        self.scores[i] as f64,
                    ],
                }
            })
            .collect();
        let (col, desc) = self.sort;
        rows.sort_by(|a, b| {
            let o = a.keys[col]
                .total_cmp(&b.keys[col])
                .then(a.rank_index.cmp(&b.rank_index));
            if desc { o.reverse() } else { o }
        });
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ranks::RankStep;
    use crate::analysis::steps::{DeviceParts, Step};

    fn rank(host: &str, durs: &[Ps]) -> RankSummary {
        let mut t = 0;
        RankSummary {
            host: host.into(),
            primary_device: Some(0),
            steps: durs
                .iter()
                .enumerate()
                .map(|(n, &d)| {
                    let s = RankStep {
                        step: Step {
                            number: n as i64 + 1,
                            start: t,
                            end: t + d,
                            partial: false,
                        },
                        start_ns: t / 1000,
                        input: 0,
                        devices: vec![DeviceParts {
                            device: 0,
                            idle: d / 2,
                            ..DeviceParts::default()
                        }],
                    };
                    t += d;
                    s
                })
                .collect(),
            ..RankSummary::default()
        }
    }

    #[test]
    fn cursor_metric_target_and_sort() {
        let a = rank("a", &[10, 20, 30]);
        let b = rank("b", &[40, 50]);
        let refs = [&a, &b];
        let mut o = Overview::new(&refs, &[0, 1], &[false, true], &[0, 0], &[0, 2]);
        assert_eq!(o.data.cols, vec![1, 2, 3]);
        assert_eq!(o.data.get(1, 2), None, "rank 1 has no step 3");
        o.move_cursor(Move::Down, (1, 2));
        o.move_cursor(Move::End, (1, 2));
        assert_eq!((o.cursor, o.offset), ((1, 2), (1, 1)));
        assert_eq!(o.target(), None);
        o.move_cursor(Move::Left, (1, 2));
        assert_eq!(o.target(), Some((1, 2, 0, 50)));
        o.next_metric(&refs);
        assert_eq!(o.metric, Metric::IdleRatio);
        assert_eq!(o.data.get(0, 0), Some(0.5));
        // Sort by max step time, descending first, then flip.
        o.sort_by(5);
        assert_eq!(o.table_rows()[0].cells[0], "1");
        o.sort_by(5);
        assert_eq!(o.table_rows()[0].cells[0], "0");
        assert_eq!(o.table_rows()[1].cells[8], "2 !");
    }
}
