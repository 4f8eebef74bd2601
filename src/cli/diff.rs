//! `tracetui diff A B`: what changed between two captures (see [`crate::analysis::diff`]).

use super::report::emit;
use super::report::fail;
use super::report::one_capture;

use super::text::{self, Align, clean};
use crate::analysis::diff::{
    Diff, DiffOptions, DiffRow, GroupKey, SortKey, StepRange, join, list_numbers, side,
};
use crate::analysis::stats::EventKind;
use crate::discover::CaptureFile;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::PathBuf;

pub fn cmd_diff(a: &DiffArgs) -> i32 {
    let (ca, cb) = match (one_capture("A", &a.a), one_capture("B", &a.b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    if let Some(stream) = &a.align {
        let j = match super::diff_align::compute(&ca, &cb, stream, a.limit.unwrap_or(20)) {
            Ok(j) => j,
            Err(e) => return fail(&clean(&e)),
        };
        let out = if a.json {
            super::report::to_json(&j)
        } else {
            super::diff_align::render_text(&j)
        };
        return match emit(&out) {
            Ok(()) => 0,
            Err(code) => code,
        };
    }
    let opts = a.options();
    let mut d = match compute(&ca, &cb, &opts) {
        Ok(d) => d,
        Err(e) => return fail(&clean(&e)),
    };
    crate::analysis::diff::sort_rows(&mut d.rows, a.sort.into(), false);
    let limit = a.limit.or(if a.json { None } else { Some(40) });
    let j = to_json(&ca, &cb, &d, &opts, limit);
    let out = if a.json {
        super::report::to_json(&j)
    } else {
        render_text(&j)
    };
    match emit(&out) {
        Ok(()) => 0,
        Err(code) => code,
    }
}

pub(super) const DIFF_AFTER: &str = "\
Examples:
  tracetui diff base.pt.trace.json new.pt.trace.json
  tracetui diff runA/ runB/ --steps 10..20 --group-by short
  tracetui diff runA/ runB/ --steps '#1..=3'    (the first three steps of each side)
  tracetui diff a.json b.json --json | jq '.rows[] | select(.status == \"slower\")'

B is compared with A (the baseline); delta = B - A. One row per name and kind (ProfilerStep#N as
ProfilerStep*, addresses 0x7f… as 0x…; a CPU annotation and its GPU twin are two rows, as in
stats; the profiler's own spans left out unless --profiler), HTA short name, category or
stream: counts, inclusive (total) and self times, avg, median, delta, delta % and a status:
added, removed, slower, faster, or same when |delta| is below --threshold-pct of the larger
total or below --threshold-us. When both captures have
ProfilerStep#N steps, times are per step (so captures of different lengths compare); --steps
keeps the events of those steps (host events starting in a step, device events launched in one,
or starting in one when their launch is not in the capture; --hta leaves those out like HTA),
by step number (10..=12) or by position in each side's steps ('#1..=3'). Column units: COUNT
is events in the scope, TOTAL / SELF / DELTA per step (or for the scope when not normalised),
P50 the median event.
A and B must each name one capture (a file, or a dir holding one). --json gives ns.
--align STREAM aligns the kernel (or top-level op) sequences of one stream of A and B instead
(docs/diff.md, \"Aligned timelines\"): tracetui diff a.json b.json --align busiest";

/// `diff --group-by`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DiffGroupArg {
    /// Event name (ProfilerStep#N as ProfilerStep*)
    #[default]
    Name,
    /// HTA short name: arguments, template parameters and return type stripped
    Short,
    /// Raw category string
    Category,
    /// Stream or thread (process / track)
    Stream,
}

impl From<DiffGroupArg> for GroupKey {
    fn from(g: DiffGroupArg) -> GroupKey {
        match g {
            DiffGroupArg::Name => GroupKey::Name,
            DiffGroupArg::Short => GroupKey::Short,
            DiffGroupArg::Category => GroupKey::Category,
            DiffGroupArg::Stream => GroupKey::Stream,
        }
    }
}

/// `diff --sort`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DiffSortArg {
    /// |delta total|, largest first
    #[default]
    Delta,
    /// |delta %|, largest first (added rows first)
    #[value(name = "delta_pct")]
    DeltaPct,
    /// Total in A
    #[value(name = "total_a")]
    TotalA,
    /// Total in B
    #[value(name = "total_b")]
    TotalB,
    /// Count in A
    #[value(name = "count_a")]
    CountA,
    /// Count in B
    #[value(name = "count_b")]
    CountB,
    /// Name, ascending
    Name,
}

impl From<DiffSortArg> for SortKey {
    fn from(s: DiffSortArg) -> SortKey {
        match s {
            DiffSortArg::Delta => SortKey::Delta,
            DiffSortArg::DeltaPct => SortKey::DeltaPct,
            DiffSortArg::TotalA => SortKey::TotalA,
            DiffSortArg::TotalB => SortKey::TotalB,
            DiffSortArg::CountA => SortKey::CountA,
            DiffSortArg::CountB => SortKey::CountB,
            DiffSortArg::Name => SortKey::Name,
        }
    }
}

pub(super) fn parse_steps(s: &str) -> Result<StepRange, String> {
    StepRange::parse(s)
}

fn parse_nonneg(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("expected a non-negative number, got {s:?}")),
    }
}

/// Arguments of `diff`.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// Baseline capture (file, or a dir holding one capture)
    pub a: PathBuf,
    /// Capture compared with the baseline
    pub b: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Compare only these steps on both sides: step numbers N, A..B (B excluded), A..=B, A..;
    /// or positions in each side's steps after `#`: '#1..=3' = the first three of each
    #[arg(long, value_name = "RANGE", value_parser = parse_steps, allow_hyphen_values = true)]
    pub steps: Option<StepRange>,
    /// What a row groups
    #[arg(long, value_enum, default_value = "name")]
    pub group_by: DiffGroupArg,
    /// Rows whose |delta| is below this percentage of the larger total are `same`
    #[arg(long, value_name = "P", default_value = "2", value_parser = parse_nonneg)]
    pub threshold_pct: f64,
    /// Rows whose |delta| is below this many µs (per step when normalised) are `same`
    #[arg(long, value_name = "US", default_value = "5", value_parser = parse_nonneg)]
    pub threshold_us: f64,
    /// With --steps, leave out device events whose launch is not in the capture, like HTA's
    /// TraceDiff (for parity checks)
    #[arg(long)]
    pub hta: bool,
    /// Row order
    #[arg(long, value_enum, default_value = "delta")]
    pub sort: DiffSortArg,
    /// Keep the profiler's own spans (`PyTorch Profiler (0)`), left out by default as in `stats`
    #[arg(long)]
    pub profiler: bool,
    /// Show at most N rows [default: 40 for text, all for --json; with --align: 20 pairs]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Instead of the table: align the event sequences of this stream or thread of A and B
    /// (`busiest`, or a part of its `process / track` title such as `stream 7`) and print the
    /// matched / added / removed counts and the matched pairs with the largest delta
    #[arg(long, value_name = "STREAM")]
    pub align: Option<String>,
}

impl DiffArgs {
    /// The analysis options these arguments ask for.
    pub fn options(&self) -> DiffOptions {
        DiffOptions {
            group: self.group_by.into(),
            steps: self.steps,
            threshold_pct: self.threshold_pct,
            threshold_ps: self.threshold_us * 1e6,
            hta: self.hta,
            profiler: self.profiler,
        }
    }
}

/// One capture of `diff --json`.
#[derive(Serialize, Clone, Debug)]
pub struct SideJson {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
}

impl From<&CaptureFile> for SideJson {
    fn from(c: &CaptureFile) -> SideJson {
        SideJson {
            path: c.path.display().to_string(),
            run: c.run.clone(),
            host: c.host.clone(),
        }
    }
}

/// One row of `diff --json`.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct RowJson {
    /// Key (memory addresses as `0x…`).
    pub name: String,
    /// What its events are (`stats`' kinds: `annotation`, `gpu_annotation`, `kernel`, …), so a
    /// name's host and device rows are apart; null for `category` and `stream` rows.
    pub kind: Option<&'static str>,
    /// Events in A's scope.
    pub count_a: u64,
    /// Events in B's scope.
    pub count_b: u64,
    /// Σ inclusive duration in A, ns (per step when `per_step`).
    pub total_a_ns: f64,
    /// Σ inclusive duration in B, ns.
    pub total_b_ns: f64,
    /// Σ self time in A, ns.
    pub self_a_ns: f64,
    /// Σ self time in B, ns.
    pub self_b_ns: f64,
    /// Mean event duration in A, ns.
    pub avg_a_ns: Option<f64>,
    /// Mean event duration in B, ns.
    pub avg_b_ns: Option<f64>,
    /// Median event duration in A, ns.
    pub p50_a_ns: Option<f64>,
    /// Median event duration in B, ns.
    pub p50_b_ns: Option<f64>,
    /// total_b − total_a, ns.
    pub delta_ns: f64,
    /// Δ / total_a × 100 (null when A has no time).
    pub delta_pct: Option<f64>,
    /// `added`, `removed`, `slower`, `faster` or `same`.
    pub status: &'static str,
}

impl From<&DiffRow> for RowJson {
    fn from(r: &DiffRow) -> RowJson {
        RowJson {
            name: r.name.clone(),
            kind: r.kind.map(EventKind::name),
            count_a: r.count_a,
            count_b: r.count_b,
            total_a_ns: r.total_a / 1e3,
            total_b_ns: r.total_b / 1e3,
            self_a_ns: r.self_a / 1e3,
            self_b_ns: r.self_b / 1e3,
            avg_a_ns: r.avg_a.map(|v| v / 1e3),
            avg_b_ns: r.avg_b.map(|v| v / 1e3),
            p50_a_ns: r.p50_a.map(|v| v as f64 / 1e3),
            p50_b_ns: r.p50_b.map(|v| v as f64 / 1e3),
            delta_ns: r.delta / 1e3,
            delta_pct: r.delta_pct,
            status: r.status.name(),
        }
    }
}

/// A step range in `diff --json`.
#[derive(Serialize, Clone, Debug)]
pub struct RangeJson {
    /// First step number (position from 1 when `by` is `position`).
    pub first: u64,
    /// Last step number (inclusive; null when open).
    pub last: Option<u64>,
    /// `number` or `position` (`--steps '#1..=3'`).
    pub by: &'static str,
}

/// One contributor of `diff --json`.
#[derive(Serialize, Clone, Debug)]
pub struct ContributorJson {
    /// Row key.
    pub name: String,
    /// The row's kind (null for `category` and `stream` rows).
    pub kind: Option<&'static str>,
    /// Δ self time, ns.
    pub delta_self_ns: f64,
    /// Share of the step-time difference, percent.
    pub share_pct: f64,
}

/// The whole `diff --json` answer.
#[derive(Serialize, Clone, Debug)]
pub struct DiffJson {
    /// Baseline.
    pub a: SideJson,
    /// Compared capture.
    pub b: SideJson,
    /// `whole` or `steps`.
    pub scope: &'static str,
    /// The steps compared (`--steps`), null for whole captures.
    pub step_range: Option<RangeJson>,
    /// `name`, `short`, `category` or `stream`.
    pub group_by: &'static str,
    /// True when times are per step (both captures have steps in scope).
    pub per_step: bool,
    /// Steps in A's scope.
    pub steps_a: usize,
    /// Steps in B's scope.
    pub steps_b: usize,
    /// Numbers of A's steps in scope, in time order.
    pub step_numbers_a: Vec<i64>,
    /// Numbers of B's steps in scope.
    pub step_numbers_b: Vec<i64>,
    /// Mean step time of A (its span when it has no steps), ns.
    pub step_time_a_ns: f64,
    /// Mean step time of B, ns.
    pub step_time_b_ns: f64,
    /// Noise threshold, percent.
    pub threshold_pct: f64,
    /// Noise threshold, µs.
    pub threshold_us: f64,
    /// Keys explaining ≥ 80 % of the step-time difference (by Δ self time).
    pub contributors: Vec<ContributorJson>,
    /// Share the contributors explain, percent.
    pub explained_pct: f64,
    /// The step-time change less the contributors, ns, when they are taken from the step
    /// threads (so that contributors + rest = the change); null otherwise.
    pub rest_ns: Option<f64>,
    /// Rows before `--limit`.
    pub names: usize,
    /// Rows per status.
    pub added: usize,
    /// Rows only in A.
    pub removed: usize,
    /// Rows slower in B.
    pub slower: usize,
    /// Rows faster in B.
    pub faster: usize,
    /// Rows within the noise threshold.
    pub same: usize,
    /// Rows, sorted and limited.
    pub rows: Vec<RowJson>,
}

/// Builds the answer from a computed diff.
pub fn to_json(
    a: &CaptureFile,
    b: &CaptureFile,
    d: &Diff,
    opts: &DiffOptions,
    limit: Option<usize>,
) -> DiffJson {
    let n = |s: crate::analysis::diff::Status| d.rows.iter().filter(|r| r.status == s).count();
    use crate::analysis::diff::Status;
    DiffJson {
        a: a.into(),
        b: b.into(),
        scope: if d.scope.is_some() { "steps" } else { "whole" },
        step_range: d.scope.map(|r| RangeJson {
            first: r.lo,
            last: (r.hi != u64::MAX).then_some(r.hi),
            by: if r.by_position { "position" } else { "number" },
        }),
        group_by: d.group.name(),
        per_step: d.per_step,
        steps_a: d.steps_a,
        steps_b: d.steps_b,
        step_numbers_a: d.step_numbers_a.clone(),
        step_numbers_b: d.step_numbers_b.clone(),
        step_time_a_ns: d.step_time_a as f64 / 1e3,
        step_time_b_ns: d.step_time_b as f64 / 1e3,
        threshold_pct: opts.threshold_pct,
        threshold_us: opts.threshold_ps / 1e6,
        contributors: d
            .contributors
            .iter()
            .map(|c| ContributorJson {
                name: c.name.clone(),
                kind: c.kind.map(EventKind::name),
                delta_self_ns: c.delta_self / 1e3,
                share_pct: c.share_pct,
            })
            .collect(),
        explained_pct: d.explained_pct,
        rest_ns: d.rest.map(|r| r / 1e3),
        names: d.rows.len(),
        added: n(Status::Added),
        removed: n(Status::Removed),
        slower: n(Status::Slower),
        faster: n(Status::Faster),
        same: n(Status::Same),
        rows: d
            .rows
            .iter()
            .take(limit.unwrap_or(usize::MAX))
            .map(RowJson::from)
            .collect(),
    }
}

fn signed(ps: f64) -> String {
    if ps > 0.0 {
        format!("+{}", text::dur(ps))
    } else if ps < 0.0 {
        format!("-{}", text::dur(-ps))
    } else {
        "0".into()
    }
}

/// Renders the answer for people.
pub fn render_text(j: &DiffJson) -> String {
    let mut o = String::new();
    for (label, s) in [("A", &j.a), ("B", &j.b)] {
        o.push_str(&format!(
            "{label}: {}{}\n",
            clean(&s.path),
            super::text::run_host(&s.run, &s.host)
        ));
    }
    let scope = match &j.step_range {
        None => "whole captures".to_string(),
        Some(r) => {
            let (what, mark) = match r.by {
                "position" => ("step positions", "#"),
                _ => ("steps", ""),
            };
            match r.last {
                Some(l) if l == r.first => format!("{} {mark}{}", &what[..what.len() - 1], r.first),
                Some(l) => format!("{what} {mark}{}..={l}", r.first),
                None => format!("{what} {mark}{}..", r.first),
            }
        }
    };
    let norm = if j.per_step {
        "times per step".to_string()
    } else if j.steps_a == 0 || j.steps_b == 0 {
        "times not normalised (a capture has no steps)".to_string()
    } else {
        "times not normalised".to_string()
    };
    let listed = |n: usize, numbers: &[i64]| {
        if n == 0 {
            "0 steps".to_string()
        } else {
            format!("{n} steps: {}", list_numbers(numbers))
        }
    };
    o.push_str(&format!(
        "scope: {scope} (A {}; B {}); {norm}; grouped by {}\n",
        listed(j.steps_a, &j.step_numbers_a),
        listed(j.steps_b, &j.step_numbers_b),
        j.group_by
    ));
    let (sa, sb) = (j.step_time_a_ns * 1e3, j.step_time_b_ns * 1e3);
    let what = if j.steps_a > 0 && j.steps_b > 0 {
        "step time"
    } else {
        "span"
    };
    o.push_str(&format!(
        "{what}: A {}  B {}  delta {}{}\n",
        text::dur(sa),
        text::dur(sb),
        signed(sb - sa),
        if sa > 0.0 {
            format!(" ({:+.1}%)", (sb - sa) * 100.0 / sa)
        } else {
            String::new()
        }
    ));
    if !j.contributors.is_empty() {
        let list: Vec<String> = j
            .contributors
            .iter()
            .map(|c| {
                format!(
                    "{} {} ({:.0}%)",
                    text::fit(&clean(&c.name), 40),
                    signed(c.delta_self_ns * 1e3),
                    c.share_pct
                )
            })
            .collect();
        let sum: f64 = j.contributors.iter().map(|c| c.delta_self_ns * 1e3).sum();
        let per = if j.per_step { " per step" } else { "" };
        match j.rest_ns {
            // Taken from the step threads: with the rest they add up to the change.
            Some(rest) => {
                o.push_str(&format!(
                    "top contributors (Δ self time{per} on the step thread; + rest = the {what} change {}): {}, rest {} ({:.0}%)\n",
                    signed(sb - sa),
                    list.join(", "),
                    signed(rest * 1e3),
                    rest * 1e3 * 100.0 / (sb - sa)
                ));
            }
            None => o.push_str(&format!(
                "top contributors (Δ self time{per}, every track; sum {} = {:.0}% of the {what} change): {}\n",
                signed(sum),
                j.explained_pct,
                list.join(", ")
            )),
        }
    }
    o.push_str(&format!(
        "{} rows: {} added, {} removed, {} slower, {} faster, {} same (threshold {}% or {} µs)\n",
        j.names, j.added, j.removed, j.slower, j.faster, j.same, j.threshold_pct, j.threshold_us
    ));
    if j.rows.is_empty() {
        return o;
    }
    let d = |v: f64| text::dur(v * 1e3);
    let od = |v: Option<f64>| v.map_or("-".to_string(), d);
    // Rows of names have a kind (host and device rows of one name apart).
    let with_kind = j.rows.iter().any(|r| r.kind.is_some());
    let rows: Vec<Vec<String>> = j
        .rows
        .iter()
        .map(|r| {
            let mut row = vec![text::fit(&clean(&r.name), 50).into_owned()];
            if with_kind {
                row.push(r.kind.unwrap_or("-").to_string());
            }
            row.extend([
                r.count_a.to_string(),
                r.count_b.to_string(),
                d(r.total_a_ns),
                d(r.total_b_ns),
                d(r.self_a_ns),
                d(r.self_b_ns),
                od(r.p50_a_ns),
                od(r.p50_b_ns),
                signed(r.delta_ns * 1e3),
                r.delta_pct.map_or("-".into(), |p| format!("{p:+.1}%")),
                r.status.to_string(),
            ]);
            row
        })
        .collect();
    let head = j.group_by.to_uppercase();
    // Units in the heads: counts over the scope, times per step (or over the scope), P50 of one
    // event.
    let per = if j.per_step { "/STEP" } else { "/ALL" };
    let h = |s: &str, unit: &str| format!("{s}{unit}");
    let mut heads = vec![(head.clone(), Align::Left)];
    if with_kind {
        heads.push(("KIND".to_string(), Align::Left));
    }
    heads.extend([
        (h("COUNT A", "/ALL"), Align::Right),
        (h("COUNT B", "/ALL"), Align::Right),
        (h("TOTAL A", per), Align::Right),
        (h("TOTAL B", per), Align::Right),
        (h("SELF A", per), Align::Right),
        (h("SELF B", per), Align::Right),
        (h("P50 A", "/EVENT"), Align::Right),
        (h("P50 B", "/EVENT"), Align::Right),
        (h("DELTA", per), Align::Right),
        ("DELTA %".to_string(), Align::Right),
        ("STATUS".to_string(), Align::Left),
    ]);
    let heads: Vec<(&str, Align)> = heads.iter().map(|(s, a)| (s.as_str(), *a)).collect();
    o.push_str(&text::table("   ", &heads, &rows));
    if j.names > j.rows.len() {
        o.push_str(&format!(
            "   showing {} of {} rows; --limit to change\n",
            j.rows.len(),
            j.names
        ));
    }
    o
}

/// Computes the diff of two resolved captures (loaded two at a time). `Err` names the side.
pub fn compute(a: &CaptureFile, b: &CaptureFile, opts: &DiffOptions) -> Result<Diff, String> {
    let caps = [a, b];
    let mut sides = super::load::map_loaded(&caps, 2, |cap, loaded| {
        let c = loaded.map_err(|e| e.to_string())?;
        side(&c, opts.group, opts.steps, opts.hta, opts.profiler)
            .map_err(|e| format!("{}: {e}", cap.path.display()))
    });
    let sb = sides.pop().ok_or("B was not loaded")?;
    let sa = sides.pop().ok_or("A was not loaded")?;
    match (sa, sb) {
        (Ok(sa), Ok(sb)) => Ok(join(&sa, &sb, opts)),
        // Both sides' reasons (each lists its steps), so one run fixes the range.
        (Err(ea), Err(eb)) => Err(format!("{ea}\n{eb}")),
        (Err(e), _) | (_, Err(e)) => Err(e),
    }
}
