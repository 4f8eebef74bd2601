//! The statistics table (`t`): per group count, total, self, avg, min, max and `% wall` (total
//! as a share of the scope's wall-clock time) —
//! the marked range when one is marked, else the whole capture — computed with
//! `analysis::stats` (torch's `key_averages` rules). Range rule: an event counts when it
//! *starts* inside the range; durations are not clipped and self times are those of the whole
//! capture (the same rule as `tracetui stats --from/--to`).
//!
//! Rows group by name, category, or the XPlane `hlo_op` / `tf_op` stat (`v` cycles); `c`, `T`
//! and `P` narrow to one category, track or process. The tables come from per-slice self times
//! ([`SelfTimes`]) computed once per capture and category filter and kept for the next table, so
//! a new range or grouping is one pass over the slices that start in the scope.

use super::table::{Column, Key, Row, Source, TableView, Target, scope};
use crate::analysis::stats::{
    EventKind, GroupBy, NO_GROUP, StatRow, StatsOptions, categories, is_profiler_track,
};
use crate::analysis::stats_index::{SelfTimes, compute_with, slices_of_row};
use crate::model::Category;
use crate::model::{Capture, Ps, TrackKind};
use crate::text::sanitize;
use crate::ui::action::Action;
use crate::ui::keymap::ViewKind;
use crate::ui::loader::Loaded;
use crate::ui::ruler::format_dur;
use crate::ui::state::State;
use std::collections::HashMap;
use std::sync::Arc;

/// Self times of `l` for `opts` (kept by the capture for the next table with that filter).
fn self_times(l: &Arc<Loaded>, opts: &StatsOptions) -> Arc<SelfTimes> {
    l.self_times(opts)
}

/// Grouping and filters of the statistics table; rebuilds it on its keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatsScope {
    /// Row grouping.
    pub group: GroupBy,
    /// Only this raw category.
    pub cat: Option<String>,
    /// Only this track.
    pub track: Option<u32>,
    /// Only this process.
    pub process: Option<u32>,
    /// Achieved FLOP/s, bytes/s and % of peak columns (the roofline's, per op name).
    pub achieved: bool,
}

/// Tracks with slices, in track order (counters have none).
fn slice_tracks(cap: &Capture) -> impl Iterator<Item = u32> + '_ {
    cap.tracks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.slices.0 < t.slices.1 && t.kind != TrackKind::Counter)
        .map(|(i, _)| i as u32)
}

/// The element after `cur` in `list` (the first when `cur` is `None`, `None` after the last).
fn next_of<T: PartialEq + Copy>(list: &[T], cur: Option<T>, first: Option<T>) -> Option<T> {
    match cur {
        None => first.filter(|f| list.contains(f)).or(list.first().copied()),
        Some(c) => list
            .iter()
            .position(|&x| x == c)
            .and_then(|i| list.get(i + 1).copied()),
    }
}

impl StatsScope {
    /// Moves to the next state for `action`; false when the action is not one of ours.
    fn step(&mut self, action: Action, st: &State, cap: &Capture) -> bool {
        let cursor = st.rows.cursor_lane().map(|(t, _)| t);
        match action {
            Action::GroupNext => self.group = self.group.next(),
            Action::ToggleAchieved => self.achieved = !self.achieved,
            Action::FilterCategory => {
                // The categories that have events, most events first: the first press never
                // gives an empty table.
                let cats: Vec<String> = categories(cap).into_iter().map(|(c, _)| c).collect();
                self.cat = match &self.cat {
                    None => cats.first().cloned(),
                    Some(c) => cats
                        .iter()
                        .position(|x| x == c)
                        .and_then(|i| cats.get(i + 1).cloned()),
                };
            }
            Action::FilterTrack => {
                let tracks: Vec<u32> = slice_tracks(cap)
                    .filter(|&t| {
                        self.process
                            .is_none_or(|p| cap.tracks[t as usize].process == p)
                    })
                    .collect();
                self.track = next_of(&tracks, self.track, cursor);
            }
            Action::FilterProcess => {
                let mut procs: Vec<u32> = Vec::new();
                for t in slice_tracks(cap) {
                    let p = cap.tracks[t as usize].process;
                    if !procs.contains(&p) {
                        procs.push(p);
                    }
                }
                let here = cursor
                    .and_then(|t| cap.tracks.get(t as usize))
                    .map(|t| t.process);
                self.process = next_of(&procs, self.process, here);
                self.track = None;
            }
            _ => return false,
        }
        true
    }

    /// The options of this grouping and these filters over `range`.
    fn options(&self, range: Option<(Ps, Ps)>) -> StatsOptions {
        StatsOptions {
            range,
            cats: self.cat.clone().map(|c| vec![c]),
            group: self.group,
            track: self.track,
            process: self.process,
            ..StatsOptions::default()
        }
    }

    /// The table for this grouping and these filters (`None` when nothing is loaded).
    pub fn build(&self, st: &State) -> Option<TableView> {
        let l = st.loaded()?;
        let cap = &l.cap;
        let (range, scope) = scope(st);
        let opts = self.options(range);
        let table = compute_with(cap, &self_times(l, &opts), &opts);
        let width: Ps = range.map_or(cap.span.1 - cap.span.0, |(a, b)| b - a).max(1);
        let by_name = self.group == GroupBy::Name;
        // Device time columns (torch's Self CUDA / CUDA total) when the scope has any.
        let with_dev = table
            .rows
            .iter()
            .any(|r| r.self_dev_ps != 0 || r.dev_total_ps != 0);
        let achieved = (self.achieved && by_name).then(|| achieved_by_name(cap));
        let rows = table
            .rows
            .iter()
            .map(|r| {
                let avg = r.avg_ps();
                let pct = r.total_ps as f64 * 100.0 / width as f64;
                // Instant events: counted, no duration.
                let d = |v: Ps| if r.timed() { format_dur(v) } else { "-".into() };
                // Enter makes a name's events the hits; other groups' slices come from
                // `slices_of` when Enter is pressed.
                let target = match by_name {
                    true => cap
                        .strings
                        .lookup(&r.name)
                        .map_or(Target::None, Target::Name),
                    false => Target::None,
                };
                let mut cells = vec![
                    r.name.clone(),
                    r.count.to_string(),
                    d(r.total_ps),
                    d(r.self_ps),
                    d(avg as Ps),
                    r.min_ps.map_or("-".into(), format_dur),
                    r.max_ps.map_or("-".into(), format_dur),
                    format!("{pct:.1}%"),
                    r.kind.name().to_string(),
                ];
                let mut keys = vec![
                    Key::Text(r.name.clone()),
                    Key::Num(r.count as f64),
                    Key::Num(r.total_ps as f64),
                    Key::Num(r.self_ps as f64),
                    Key::Num(avg),
                    Key::Num(r.min_ps.unwrap_or(0) as f64),
                    Key::Num(r.max_ps.unwrap_or(0) as f64),
                    Key::Num(pct),
                    Key::Num(-(r.kind as u8 as f64)),
                ];
                if with_dev {
                    cells.extend([format_dur(r.self_dev_ps), format_dur(r.dev_total_ps)]);
                    keys.extend([
                        Key::Num(r.self_dev_ps as f64),
                        Key::Num(r.dev_total_ps as f64),
                    ]);
                }
                if let Some(a) = &achieved {
                    let x = a.get(r.name.as_str());
                    let f = |v: Option<f64>, p: usize| v.map_or("-".into(), |v| format!("{v:.p$}"));
                    let (tf, tb, pct) = (
                        x.and_then(|x| x.0),
                        x.and_then(|x| x.1),
                        x.and_then(|x| x.2),
                    );
                    cells.extend([
                        f(tf, 2),
                        f(tb, 3),
                        pct.map_or("-".into(), |p| format!("{p:.1}%")),
                    ]);
                    keys.extend([tf, tb, pct].map(|v| Key::Num(v.unwrap_or(-1.0))));
                }
                Row {
                    cells,
                    keys,
                    target,
                    bar: None,
                }
            })
            .collect();
        let col = |name, width, right| Column { name, width, right };
        let mut title = format!(
            "statistics · {scope} · {} {}",
            table.rows.len(),
            match self.group {
                GroupBy::Name => "names".to_string(),
                GroupBy::Category => "categories".to_string(),
                g => format!("{} groups", g.name()),
            }
        );
        if let Some(c) = &self.cat {
            let c = if c.is_empty() { NO_GROUP } else { c };
            title.push_str(&format!(" · category {c}"));
        } else if crate::analysis::stats::resolve(cap, &opts).is_some() {
            // A PyTorch capture's default: torch's key_averages() event set (docs/stats.md).
            title.push_str(" · torch key_averages()");
        }
        if let Some(p) = self.process {
            title.push_str(&format!(" · process {}", cap.process_name(p)));
        }
        if let Some(t) = self.track {
            title.push_str(&format!(" · track {}", cap.track_name(t)));
        }
        let mut columns = vec![
            col(self.group.name(), 0, false),
            col("count", 9, true),
            col("total", 9, true),
            col("self", 9, true),
            col("avg", 9, true),
            col("min", 9, true),
            col("max", 9, true),
            col("% wall", 8, true),
            col("kind", 10, false),
        ];
        if with_dev {
            columns.extend([col("self dev", 9, true), col("dev total", 9, true)]);
        }
        // The columns `A` asks for are hidden last on a narrow terminal.
        let mut keep = Vec::new();
        if achieved.is_some() {
            keep.extend(columns.len()..columns.len() + 3);
            columns.extend([
                col("TFLOP/s", 9, true),
                col("TB/s", 8, true),
                col("% peak", 7, true),
            ]);
            title.push_str(" · achieved: whole capture, modelled ops");
        }
        let mut t = TableView::new(ViewKind::Table, title, columns, rows);
        t.keep = keep;
        let key = |a| {
            st.keymap
                .keys(ViewKind::Table, a)
                .first()
                .map_or(String::new(), |k| k.to_string())
        };
        // Say what is left out by default and what a total adds up (kinds apart).
        let profiler = cap.slices.classes.iter().any(|c| c.1 == Category::Trace)
            || (0..cap.tracks.len() as u32).any(|t| is_profiler_track(cap, t));
        let kinds: Vec<String> = table
            .kinds
            .iter()
            .filter(|k| k.kind != EventKind::Instant)
            .map(|k| format!("{} over {}", k.kind.name(), k.over()))
            .collect();
        t.note = format!(
            "{}totals: Σ per thread/stream ({}) · events starting in the scope · {} group · {} \
             category · {} track · {} process · {} achieved",
            if profiler {
                "profiler's own spans left out · "
            } else {
                ""
            },
            kinds.join(", "),
            key(Action::GroupNext),
            key(Action::FilterCategory),
            key(Action::FilterTrack),
            key(Action::FilterProcess),
            key(Action::ToggleAchieved)
        );
        t.note.push_str(&over_wall_note(&table.rows, width));
        Some(t)
    }
}

/// Why a `% wall` (Σ duration ÷ the scope's wall time) can pass 100 %: the row's instances
/// overlap — nested in one another (`PjitFunction` inside `PjitFunction`) or on several threads
/// or streams at once. Empty when no row passes it; else names the largest.
pub fn over_wall_note(rows: &[StatRow], width: Ps) -> String {
    let pct = |r: &StatRow| r.total_ps as f64 * 100.0 / width.max(1) as f64;
    let over: Vec<_> = rows.iter().filter(|r| pct(r) > 100.0).collect();
    let Some(top) = over.iter().max_by(|a, b| pct(a).total_cmp(&pct(b))) else {
        return String::new();
    };
    format!(
        " · % wall = Σ duration ÷ scope: {} row{} over 100 % ({} {:.1}%) — instances overlap \
         (nested in one another, or on several threads / streams at once)",
        over.len(),
        if over.len() == 1 { "" } else { "s" },
        sanitize(&top.name),
        pct(top)
    )
}

/// Achieved TFLOP/s, TB/s and % of peak of one name.
type Achieved = (Option<f64>, Option<f64>, Option<f64>);

/// Per op name, the roofline's (TFLOP/s, TB/s, % of peak) over all its rows: Σ FLOPs and
/// bytes over Σ device time; % = Σ time at the roof / Σ device time.
fn achieved_by_name(cap: &Capture) -> HashMap<String, Achieved> {
    let roof = crate::analysis::roofline::compute(cap);
    // Σ FLOPs, Σ bytes, Σ device ps, Σ time at the roof.
    type Sums = (f64, Option<f64>, Ps, Option<f64>);
    let mut sums: HashMap<&str, Sums> = HashMap::new();
    for r in &roof.rows {
        let n = r.count as f64;
        let e = sums
            .entry(r.name.as_str())
            .or_insert((0.0, Some(0.0), 0, Some(0.0)));
        e.0 += r.cost.flops * n;
        e.1 = e.1.zip(r.cost.bytes).map(|(a, b)| a + b * n);
        e.2 += r.device_ps;
        e.3 = e.3.zip(r.time_at_peak_ps()).map(|(a, b)| a + b);
    }
    sums.into_iter()
        .filter(|(_, v)| v.2 > 0)
        .map(|(k, (f, b, d, t))| {
            let secs = d as f64 * 1e-12;
            (
                k.to_string(),
                (
                    Some(f / secs / 1e12),
                    b.map(|b| b / secs / 1e12),
                    t.map(|t| 100.0 * t / d as f64),
                ),
            )
        })
        .collect()
}

impl Source for StatsScope {
    fn on_action(&mut self, action: Action, st: &State) -> Option<Result<TableView, String>> {
        let l = st.loaded()?;
        if !self.step(action, st, &l.cap) {
            return None;
        }
        self.build(st).map(Ok)
    }

    fn slices_of(&self, row: &Row, st: &State) -> Option<(String, Vec<u32>)> {
        let l = st.loaded()?;
        let name = row.cells.first()?;
        let ids = slices_of_row(&l.cap, &self.options(scope(st).0), name);
        let label = crate::ui::text::fit(&crate::ui::text::sanitize(name), 30).into_owned();
        Some((format!("{} “{label}”", self.group.name()), ids))
    }
}

/// Builds the statistics table of the open capture, grouped by name over every track (`None`
/// when nothing is loaded).
pub fn stats_view(st: &State) -> Option<TableView> {
    let scope = StatsScope::default();
    let mut t = scope.build(st)?;
    // By self time, like key_averages.
    t.sort_by(3, false);
    t.source = Some(Box::new(scope));
    Some(t)
}
