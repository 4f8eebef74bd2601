//! The diff table (`b` on a capture in the picker marks it as the baseline A, `d` on another
//! opens this for it as B): one row per name with counts, totals and self time of A and B, Δ and
//! Δ %, and a status (added, removed, slower, faster, same under the noise threshold), from
//! [`crate::analysis::diff`] — the numbers of `tracetui diff`. Sorted by |Δ total|; every
//! column sorts, `/` filters, `Enter` makes the name's occurrences in B the hits on B's timeline;
//! `r` prompts for the steps to compare (the syntax of `tracetui diff --steps`).
//! The note above the table is the headline: step time A vs B and the names that explain most
//! of the difference.

use super::diff_align::DiffAlignView;
use super::table::{Column, Key, Row, Source, TableView, Target};
use crate::analysis::diff::{Diff, DiffOptions, GroupKey, Status, StepRange, diff, list_numbers};
use crate::analysis::names::{ADDRESS, match_name};
use crate::analysis::stats::{EventKind, group_name};
use crate::model::{Capture, Ps};
use crate::ui::action::Action;
use crate::ui::keymap::ViewKind;
use crate::ui::msg::Msg;
use crate::ui::ruler::{format_dur, format_signed_dur as signed};
use crate::ui::state::{CaptureId, State};
use crate::ui::text;
use rustc_hash::FxHashMap;

/// A time cell: blank for a side without events.
fn time(count: u64, ps: f64) -> String {
    if count == 0 {
        "-".into()
    } else {
        format_dur(ps.round() as Ps)
    }
}

/// The diff table of B (`b`, shown) against the baseline A (`a`); `a_name` / `b_name` label
/// them in the title; `width` is the terminal's (narrow ones get fewer columns).
pub fn open(
    a: &Capture,
    b: &Capture,
    a_name: &str,
    b_name: &str,
    width: u16,
) -> Result<TableView, String> {
    let opts = DiffOptions::default();
    let d = diff(a, b, &opts)?;
    Ok(table(&d, &opts, b, a_name, b_name, width))
}

/// The noise thresholds `%` cycles through: (percent, ps per step); the first is the default of
/// [`DiffOptions`] and of `tracetui diff`.
pub const THRESHOLDS: [(f64, f64); 3] = [(2.0, 5e6), (10.0, 5e7), (0.0, 0.0)];

/// The diff table's own actions, on captures A (`a`) and B (`b`): `a` opens their aligned
/// timelines, `v` regroups the rows (name, short name, category, stream), `%` changes the noise
/// threshold, `r` prompts for a step range; the table is recomputed from the loaded captures
/// (on the UI thread, as `tracetui diff` computes it: one pass over each capture).
#[derive(Debug)]
pub struct DiffSource {
    /// The baseline A.
    pub a: CaptureId,
    /// The capture compared, B.
    pub b: CaptureId,
    /// Labels of A and B in the title.
    pub names: (String, String),
    /// How the rows are computed.
    pub opts: DiffOptions,
}

impl DiffSource {
    /// The source of a table opened with the default options.
    pub fn new(a: CaptureId, b: CaptureId, a_name: &str, b_name: &str) -> Self {
        DiffSource {
            a,
            b,
            names: (a_name.to_string(), b_name.to_string()),
            opts: DiffOptions::default(),
        }
    }

    /// The table of A and B under `opts` (an error when a capture is gone or a side has no
    /// step in the range).
    fn recompute(&self, opts: &DiffOptions, st: &State) -> Result<TableView, String> {
        let (Some(a), Some(b)) = (st.entries.capture(self.a), st.entries.capture(self.b)) else {
            return Err("diff: a capture is no longer loaded".into());
        };
        let d = diff(&a.cap, &b.cap, opts).map_err(|m| format!("diff: {}", text::sanitize(&m)))?;
        Ok(table(
            &d,
            opts,
            &b.cap,
            &self.names.0,
            &self.names.1,
            st.size.0,
        ))
    }

    /// The table under `opts`, which become the source's options only when it exists (a
    /// refused step range or a capture gone leaves the shown table's options in place).
    fn apply(&mut self, opts: DiffOptions, st: &State) -> Result<TableView, String> {
        let t = self.recompute(&opts, st)?;
        self.opts = opts;
        Ok(t)
    }
}

/// The step range typed at the diff table's prompt: empty for all steps, else `--steps`'s
/// syntax.
pub fn parse_steps(text: &str) -> Result<Option<StepRange>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    StepRange::parse(t)
        .map(Some)
        .map_err(|m| format!("steps: {}", text::sanitize(&m)))
}

impl Source for DiffSource {
    fn on_action(&mut self, action: Action, st: &State) -> Option<Result<TableView, String>> {
        let mut opts = self.opts;
        match action {
            Action::GroupNext => {
                let all = &GroupKey::ALL;
                let i = all.iter().position(|&g| g == opts.group).unwrap_or(0);
                opts.group = all[(i + 1) % all.len()];
            }
            Action::DiffThreshold => {
                let cur = (opts.threshold_pct, opts.threshold_ps);
                let i = THRESHOLDS.iter().position(|&t| t == cur).unwrap_or(0);
                (opts.threshold_pct, opts.threshold_ps) = THRESHOLDS[(i + 1) % THRESHOLDS.len()];
            }
            _ => return None,
        }
        Some(self.apply(opts, st))
    }

    fn prompt(&self, action: Action) -> Option<(String, String)> {
        (action == Action::DiffSteps).then(|| {
            (
                "steps (N, A..=B, A..; #N: by position; empty: all)".to_string(),
                self.opts.steps.map_or(String::new(), |r| r.to_string()),
            )
        })
    }

    fn on_prompt(&mut self, action: Action, text: &str, st: &State) -> Result<TableView, String> {
        if action != Action::DiffSteps {
            return Err("this table takes no text for that key".into());
        }
        let steps = parse_steps(text)?;
        self.apply(DiffOptions { steps, ..self.opts }, st)
    }

    fn on_action_msgs(&mut self, action: Action, st: &State) -> Option<Vec<Msg>> {
        if action != Action::OpenDiffAlign {
            return None;
        }
        Some(match DiffAlignView::open(st, self.a, self.b) {
            Ok(v) => vec![Msg::Push(Box::new(v))],
            Err(m) => vec![Msg::Notice(m)],
        })
    }
}

/// Columns shown below 120 terminal columns: name, status, count B, total B, Δ total, Δ %.
const NARROW: [usize; 6] = [0, 1, 3, 5, 6, 7];

/// The table of a computed diff, sorted by |Δ total|; names resolve against B for `Enter`.
pub fn table(
    d: &Diff,
    opts: &DiffOptions,
    b: &Capture,
    a_name: &str,
    b_name: &str,
    width: u16,
) -> TableView {
    let by_name = opts.group == GroupKey::Name;
    let matched = if by_name {
        matched_slices(b, d)
    } else {
        FxHashMap::default()
    };
    let col = |name, width, right| Column { name, width, right };
    let mut rows: Vec<Row> = d
        .rows
        .iter()
        .map(|r| {
            let pct = r
                .delta_pct
                .map_or("new".to_string(), |p| format!("{p:+.1}%"));
            Row {
                cells: vec![
                    text::sanitize(&r.name).into_owned(),
                    r.status.name().to_string(),
                    r.count_a.to_string(),
                    r.count_b.to_string(),
                    time(r.count_a, r.total_a),
                    time(r.count_b, r.total_b),
                    signed(r.delta),
                    if r.status == Status::Removed {
                        "gone".into()
                    } else {
                        pct
                    },
                    signed(r.delta_self()),
                    r.kind.map_or("-", EventKind::name).to_string(),
                ],
                keys: vec![
                    Key::Text(r.name.clone()),
                    Key::Text(r.status.name().to_string()),
                    Key::Num(r.count_a as f64),
                    Key::Num(r.count_b as f64),
                    Key::Num(r.total_a),
                    Key::Num(r.total_b),
                    Key::Num(r.delta.abs()),
                    Key::Num(r.delta_pct.map_or(f64::INFINITY, f64::abs)),
                    Key::Num(r.delta_self().abs()),
                    Key::Text(r.kind.map_or("-", EventKind::name).to_string()),
                ],
                // Occurrences exist only on B's side for names B has (rows of names only);
                // a name matched across addresses (`0x…`) makes B's slices of it the hits.
                target: match (b.strings.lookup(&r.name), matched.get(r.name.as_str())) {
                    _ if !by_name || r.count_b == 0 => Target::None,
                    (_, Some(ids)) => Target::Slices(ids.clone()),
                    (Some(id), None) => Target::Name(id),
                    (None, None) => Target::None,
                },
                bar: None,
            }
        })
        .collect();
    let unit = if d.per_step { " per step" } else { "" };
    let listed = |n: usize, numbers: &[i64]| match n {
        0 => "no steps".to_string(),
        _ => list_numbers(numbers),
    };
    let scope = match (&d.scope, d.per_step) {
        // Positions: which step numbers each side compared.
        (Some(s), _) if s.by_position => format!(
            "steps {s} (A {} · B {})",
            listed(d.steps_a, &d.step_numbers_a),
            listed(d.steps_b, &d.step_numbers_b)
        ),
        (Some(s), _) => format!("steps {s} ({} vs {})", d.steps_a, d.steps_b),
        (None, true) => format!("all steps ({} vs {})", d.steps_a, d.steps_b),
        (None, false) => "whole captures".to_string(),
    };
    let same = if opts.threshold_pct > 0.0 || opts.threshold_ps > 0.0 {
        format!(
            "same: |Δ| < {}% or < {}",
            opts.threshold_pct,
            format_dur(opts.threshold_ps as Ps)
        )
    } else {
        "same: Δ = 0".to_string()
    };
    let title = format!(
        "diff · B {} vs A {} · {scope} · times{unit} · {same}",
        text::fit(&text::sanitize(b_name), 40),
        text::fit(&text::sanitize(a_name), 40),
    );
    // Units in the heads: counts over the scope (`/all`), times per step (`/step`; `/all`
    // when not normalised).
    let (total_a, total_b, delta_total, delta_self) = if d.per_step {
        (
            "total A/step",
            "total B/step",
            "Δ total/step",
            "Δ self/step",
        )
    } else {
        ("total A/all", "total B/all", "Δ total/all", "Δ self/all")
    };
    let mut columns = vec![
        col(opts.group.name(), 0, false),
        col("status", 8, false),
        col("count A/all", 11, true),
        col("count B/all", 11, true),
        col(total_a, 12, true),
        col(total_b, 12, true),
        col(delta_total, 13, true),
        col("Δ %", 8, true),
        col(delta_self, 11, true),
        col("kind", 14, false),
    ];
    if width < 120 {
        // The kind column stays when two rows share a name (a host `ProfilerStep*` and its
        // device twin): the table then hides other columns before it (issue 53 §2).
        let mut names: Vec<&str> = rows
            .iter()
            .filter_map(|r| r.cells.first())
            .map(String::as_str)
            .collect();
        names.sort_unstable();
        let twins = names.windows(2).any(|w| w[0] == w[1]);
        keep_narrow(&mut columns, twins);
        for r in &mut rows {
            keep_narrow(&mut r.cells, twins);
            keep_narrow(&mut r.keys, twins);
        }
    }
    let delta_col = columns.iter().position(|c| c.name == delta_total);
    let mut t = TableView::new(ViewKind::Table, title, columns, rows);
    t.note = headline(d);
    t.hits_label = "diff".into();
    // Largest |Δ total| first (the rows' own order; the header says so).
    t.sort = delta_col.map(|c| (c, false));
    t.refresh();
    t
}

/// B's slices of each diff row whose name was matched across addresses (`0x…`, so B has no
/// string of that text): one pass over B's slices, only when there are such rows.
fn matched_slices<'d>(b: &Capture, d: &'d Diff) -> FxHashMap<&'d str, Vec<u32>> {
    let mut out: FxHashMap<&'d str, Vec<u32>> = FxHashMap::default();
    let wanted: FxHashMap<&str, &'d str> = d
        .rows
        .iter()
        .filter(|r| r.count_b > 0 && r.name.contains(ADDRESS))
        .map(|r| (r.name.as_str(), r.name.as_str()))
        .collect();
    if wanted.is_empty() {
        return out;
    }
    // Name id → the row it matches.
    let mut of_id: FxHashMap<u32, &'d str> = FxHashMap::default();
    for (id, text) in b.strings.iter() {
        let key = match_name(group_name(text));
        if let Some(&row) = wanted.get(key.as_ref()) {
            of_id.insert(id.0, row);
        }
    }
    for (i, n) in b.slices.name.iter().enumerate() {
        if let Some(&row) = of_id.get(&n.0) {
            out.entry(row).or_default().push(i as u32);
        }
    }
    out
}

/// Keeps the [`NARROW`] columns of `v`, and the kind column (the last) with `kind`.
fn keep_narrow<T>(v: &mut Vec<T>, kind: bool) {
    let last = v.len().saturating_sub(1);
    let mut i = 0;
    v.retain(|_| {
        i += 1;
        NARROW.contains(&(i - 1)) || (kind && i - 1 == last)
    });
}

/// `step A 12.3 ms → B 14.1 ms (+14.6%) · step thread Δ self: aten::mm +1.1 ms (61%), …, rest
/// +0.2 ms (11%)` (the three largest and the rest add up to the change), or, when the steps are
/// not host spans, `· 83% explained by …` (Δ self time over every track).
pub fn headline(d: &Diff) -> String {
    let (a, b) = (d.step_time_a as f64, d.step_time_b as f64);
    let what = if d.per_step { "step" } else { "span" };
    let pct = if a > 0.0 {
        format!(" ({:+.1}%)", (b - a) / a * 100.0)
    } else {
        String::new()
    };
    let mut s = format!(
        "{what} A {} → B {}{pct}",
        format_dur(d.step_time_a),
        format_dur(d.step_time_b)
    );
    if !d.contributors.is_empty() {
        let top: Vec<String> = d
            .contributors
            .iter()
            .take(3)
            .map(|c| {
                format!(
                    "{} {} ({:.0}%)",
                    text::fit(&text::sanitize(&c.name), 28),
                    signed(c.delta_self),
                    c.share_pct
                )
            })
            .collect();
        let more = d.contributors.len().saturating_sub(3);
        let more = if more > 0 {
            format!(" +{more} more")
        } else {
            String::new()
        };
        match d.rest {
            // From the step threads: the listed keys and the rest add up to the change.
            Some(_) => {
                let shown: f64 = d.contributors.iter().take(3).map(|c| c.delta_self).sum();
                let change = b - a;
                let rest = change - shown;
                s.push_str(&format!(
                    " · step thread Δ self: {}, rest {} ({:.0}%)",
                    top.join(", "),
                    signed(rest),
                    rest * 100.0 / change
                ));
            }
            None => s.push_str(&format!(
                " · {:.0}% explained by {}{more}",
                d.explained_pct,
                top.join(", ")
            )),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_ranges_parse_as_on_the_command_line() {
        assert_eq!(parse_steps("  "), Ok(None));
        assert_eq!(parse_steps("10..20"), Ok(Some(StepRange::numbers(10, 19))));
        assert_eq!(parse_steps("7"), Ok(Some(StepRange::numbers(7, 7))));
        assert_eq!(
            parse_steps("#1..=3").map(|r| r.map(|r| (r.lo, r.hi, r.by_position))),
            Ok(Some((1, 3, true)))
        );
        let e = parse_steps("ten").unwrap_err();
        assert!(e.starts_with("steps: invalid step range `ten`"), "{e}");
        assert!(
            parse_steps("5..5")
                .unwrap_err()
                .contains("empty step range")
        );
    }

    #[test]
    fn signed_durations() {
        assert_eq!(signed(0.0), "0");
        assert!(signed(1.5e9).starts_with('+'));
        assert!(signed(-2e6).starts_with('−'));
    }
}
