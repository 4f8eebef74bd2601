//! Comparing two captures (issue 26 §1–§2): a per-key outer join of counts, inclusive and self
//! times, with a status per row and a headline (step time A vs B, top contributors).
//!
//! B is compared with A (the baseline). Times are normalised per step when both sides have
//! `ProfilerStep#N` steps in scope, so captures of different lengths compare. Δ = B − A.

pub mod align;
pub mod align_tracks;
pub mod group;
pub mod short;
pub mod side;
pub mod steps;

use crate::analysis::stats::EventKind;
use crate::model::{Capture, Ps};
pub use group::GroupKey;
use rustc_hash::FxHashMap;
pub use side::{Side, SideRow, select_steps, side};
pub use steps::{StepRange, list_numbers};

/// How a diff is computed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiffOptions {
    /// Row grouping.
    pub group: GroupKey,
    /// `None`: whole captures; else the events of these steps on both sides.
    pub steps: Option<StepRange>,
    /// A row is `same` when |Δ| is below this percentage of the larger of its two totals …
    pub threshold_pct: f64,
    /// … or below this many ps (per step when normalised).
    pub threshold_ps: f64,
    /// HTA's step scope: device events without a launch in the capture are left out of steps.
    pub hta: bool,
    /// Keep the profiler's own spans (`PyTorch Profiler (0)`), which are left out by default
    /// as `stats` leaves them out ([`side::is_profiler_event`]).
    pub profiler: bool,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            group: GroupKey::Name,
            steps: None,
            threshold_pct: 2.0,
            threshold_ps: 5e6,
            hta: false,
            profiler: false,
        }
    }
}

/// What happened to a key between A and B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Only in B.
    Added,
    /// Only in A.
    Removed,
    /// In both; B takes longer by more than the noise threshold.
    Slower,
    /// In both; B is quicker by more than the noise threshold.
    Faster,
    /// In both; |Δ| within the noise threshold.
    Same,
}

impl Status {
    /// Lower-case name (`added`, …).
    pub fn name(self) -> &'static str {
        match self {
            Status::Added => "added",
            Status::Removed => "removed",
            Status::Slower => "slower",
            Status::Faster => "faster",
            Status::Same => "same",
        }
    }

    /// The status of the same row in diff(B, A).
    pub fn mirrored(self) -> Status {
        match self {
            Status::Added => Status::Removed,
            Status::Removed => Status::Added,
            Status::Slower => Status::Faster,
            Status::Faster => Status::Slower,
            Status::Same => Status::Same,
        }
    }
}

/// One row of a diff. Totals are per step when [`Diff::per_step`], else whole; Δ = B − A.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffRow {
    /// Key (addresses as `0x…`, [`crate::analysis::names::match_name`]).
    pub name: String,
    /// What its events are ([`SideRow::kind`]): rows of one name and different kinds (a CPU
    /// annotation and its GPU twin) are apart. `None` for categories and streams.
    pub kind: Option<EventKind>,
    /// Events in A's scope.
    pub count_a: u64,
    /// Events in B's scope.
    pub count_b: u64,
    /// Σ inclusive duration in A, ps.
    pub total_a: f64,
    /// Σ inclusive duration in B, ps.
    pub total_b: f64,
    /// Σ self time in A, ps.
    pub self_a: f64,
    /// Σ self time in B, ps.
    pub self_b: f64,
    /// Mean event duration in A (not normalised), ps.
    pub avg_a: Option<f64>,
    /// Mean event duration in B, ps.
    pub avg_b: Option<f64>,
    /// Median event duration in A, ps.
    pub p50_a: Option<Ps>,
    /// Median event duration in B, ps.
    pub p50_b: Option<Ps>,
    /// total_b − total_a, ps.
    pub delta: f64,
    /// Δ / total_a × 100 (`None` when A has no time).
    pub delta_pct: Option<f64>,
    /// Added, removed, slower, faster or same.
    pub status: Status,
    /// A step or profiler span on either side ([`SideRow::span`]): never a contributor.
    pub span: bool,
    /// Σ self time on A's step thread ([`SideRow::step_self_ps`]), ps (per step when normalised).
    pub step_self_a: f64,
    /// The same in B.
    pub step_self_b: f64,
}

impl DiffRow {
    /// self_b − self_a, ps.
    pub fn delta_self(&self) -> f64 {
        self.self_b - self.self_a
    }
}

/// A key that explains part of the step-time difference.
#[derive(Clone, Debug, PartialEq)]
pub struct Contributor {
    /// Row key.
    pub name: String,
    /// The row's kind ([`DiffRow::kind`]).
    pub kind: Option<EventKind>,
    /// Δ self time, ps (per step when normalised).
    pub delta_self: f64,
    /// Share of the step-time difference, percent.
    pub share_pct: f64,
}

/// A comparison of two captures.
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    /// Rows, sorted by |Δ total| (largest first), ties by name.
    pub rows: Vec<DiffRow>,
    /// Grouping used.
    pub group: GroupKey,
    /// Step range compared (`None`: whole captures).
    pub scope: Option<StepRange>,
    /// Steps in A's scope.
    pub steps_a: usize,
    /// Steps in B's scope.
    pub steps_b: usize,
    /// Numbers of A's steps in scope, in time order.
    pub step_numbers_a: Vec<i64>,
    /// Numbers of B's steps in scope.
    pub step_numbers_b: Vec<i64>,
    /// True when times are per step (both sides have steps).
    pub per_step: bool,
    /// Mean step time of A (span when no steps), ps.
    pub step_time_a: Ps,
    /// Mean step time of B, ps.
    pub step_time_b: Ps,
    /// Keys of work (no step or profiler span) with the largest Δ self time (on the step
    /// threads when [`Diff::rest`] is set) in the direction of the step-time change, until they
    /// explain ≥ 80 % of it (at most 10).
    pub contributors: Vec<Contributor>,
    /// Share of the step-time difference the contributors explain, percent.
    pub explained_pct: f64,
    /// When the contributors are taken from the step threads (both sides' steps are host spans,
    /// times per step): the step-time change less what they list, ps — the other keys of the
    /// step threads, the time in the steps outside any op included — so that they add up.
    pub rest: Option<f64>,
}

/// Compares captures `a` (baseline) and `b`.
pub fn diff(a: &Capture, b: &Capture, opts: &DiffOptions) -> Result<Diff, String> {
    let sa =
        side(a, opts.group, opts.steps, opts.hta, opts.profiler).map_err(|e| format!("A: {e}"))?;
    let sb =
        side(b, opts.group, opts.steps, opts.hta, opts.profiler).map_err(|e| format!("B: {e}"))?;
    Ok(join(&sa, &sb, opts))
}

/// Joins two sides (computed with the same grouping and scope).
pub fn join(a: &Side, b: &Side, opts: &DiffOptions) -> Diff {
    let per_step = !a.steps.is_empty() && !b.steps.is_empty();
    let (na, nb) = if per_step {
        (a.steps.len() as f64, b.steps.len() as f64)
    } else {
        (1.0, 1.0)
    };
    type Pair<'s> = (Option<&'s SideRow>, Option<&'s SideRow>);
    let mut index: FxHashMap<(Option<EventKind>, &str), Pair<'_>> = FxHashMap::default();
    for r in &a.rows {
        index.entry((r.kind, r.name.as_str())).or_default().0 = Some(r);
    }
    for r in &b.rows {
        index.entry((r.kind, r.name.as_str())).or_default().1 = Some(r);
    }
    let mut rows: Vec<DiffRow> = index
        .into_iter()
        .map(|((kind, name), (ra, rb))| row(name, kind, ra, rb, na, nb, opts))
        .collect();
    sort_rows(&mut rows, SortKey::Delta, false);
    let on_steps = per_step && a.step_tracks && b.step_tracks;
    let (contributors, explained_pct) =
        contributors(&rows, a.step_time_ps, b.step_time_ps, on_steps);
    let d_step = (b.step_time_ps - a.step_time_ps) as f64;
    let rest = on_steps.then(|| d_step - contributors.iter().map(|c| c.delta_self).sum::<f64>());
    Diff {
        rows,
        group: opts.group,
        scope: opts.steps,
        steps_a: a.steps.len(),
        steps_b: b.steps.len(),
        step_numbers_a: a.steps.iter().map(|s| s.number).collect(),
        step_numbers_b: b.steps.iter().map(|s| s.number).collect(),
        per_step,
        step_time_a: a.step_time_ps,
        step_time_b: b.step_time_ps,
        contributors,
        explained_pct,
        rest,
    }
}

fn row(
    name: &str,
    kind: Option<EventKind>,
    a: Option<&SideRow>,
    b: Option<&SideRow>,
    na: f64,
    nb: f64,
    opts: &DiffOptions,
) -> DiffRow {
    let count = |r: Option<&SideRow>| r.map_or(0, |r| r.count);
    let total = |r: Option<&SideRow>, n: f64| r.map_or(0.0, |r| r.total_ps as f64 / n);
    let selft = |r: Option<&SideRow>, n: f64| r.map_or(0.0, |r| r.self_ps as f64 / n);
    let avg = |r: Option<&SideRow>| {
        r.filter(|r| r.count > 0)
            .map(|r| r.total_ps as f64 / r.count as f64)
    };
    let (total_a, total_b) = (total(a, na), total(b, nb));
    let delta = total_b - total_a;
    let (count_a, count_b) = (count(a), count(b));
    let status = if count_a == 0 && count_b > 0 {
        Status::Added
    } else if count_b == 0 && count_a > 0 {
        Status::Removed
    } else if delta.abs() < opts.threshold_ps
        || delta.abs() * 100.0 < opts.threshold_pct * total_a.max(total_b)
        || delta == 0.0
    {
        Status::Same
    } else if delta > 0.0 {
        Status::Slower
    } else {
        Status::Faster
    };
    DiffRow {
        name: name.to_string(),
        kind,
        count_a,
        count_b,
        total_a,
        total_b,
        self_a: selft(a, na),
        self_b: selft(b, nb),
        avg_a: avg(a),
        avg_b: avg(b),
        p50_a: a.and_then(SideRow::p50_ps),
        p50_b: b.and_then(SideRow::p50_ps),
        delta,
        delta_pct: (total_a > 0.0).then(|| delta * 100.0 / total_a),
        status,
        span: a.is_some_and(|r| r.span) || b.is_some_and(|r| r.span),
        step_self_a: a.map_or(0.0, |r| r.step_self_ps as f64 / na),
        step_self_b: b.map_or(0.0, |r| r.step_self_ps as f64 / nb),
    }
}

/// Top contributors to the step-time difference (see [`Diff::contributors`]): rows of work (not
/// step or profiler spans) whose Δ self time has the sign of the change, largest first, until
/// they explain ≥ 80 % of it (at most 10). `on_steps`: Δ self time on the step threads
/// ([`DiffRow::step_self_a`]), which with [`Diff::rest`] adds up to the change; else Δ self time
/// over every track (parallel streams can then explain more than 100 %).
fn contributors(
    rows: &[DiffRow],
    step_a: Ps,
    step_b: Ps,
    on_steps: bool,
) -> (Vec<Contributor>, f64) {
    let d = (step_b - step_a) as f64;
    if d == 0.0 {
        return (Vec::new(), 0.0);
    }
    let delta = |r: &DiffRow| {
        if on_steps {
            r.step_self_b - r.step_self_a
        } else {
            r.delta_self()
        }
    };
    let mut same_sign: Vec<&DiffRow> = rows
        .iter()
        .filter(|r| !r.span && delta(r) * d.signum() > 0.0)
        .collect();
    same_sign.sort_by(|x, y| {
        delta(y)
            .abs()
            .total_cmp(&delta(x).abs())
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.kind.cmp(&y.kind))
    });
    let mut out = Vec::new();
    let mut explained = 0.0;
    for r in same_sign.into_iter().take(10) {
        let share = delta(r) * 100.0 / d;
        explained += share;
        out.push(Contributor {
            name: r.name.clone(),
            kind: r.kind,
            delta_self: delta(r),
            share_pct: share,
        });
        if explained >= 80.0 {
            break;
        }
    }
    (out, explained)
}

/// Column a diff table is sorted by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortKey {
    /// |Δ total|.
    #[default]
    Delta,
    /// |Δ %| (added rows first).
    DeltaPct,
    /// Total in A.
    TotalA,
    /// Total in B.
    TotalB,
    /// Self time in A.
    SelfA,
    /// Self time in B.
    SelfB,
    /// Count in A.
    CountA,
    /// Count in B.
    CountB,
    /// Name.
    Name,
}

impl SortKey {
    /// Every key, in the order the view cycles through them.
    pub const ALL: [SortKey; 9] = [
        SortKey::Delta,
        SortKey::DeltaPct,
        SortKey::TotalA,
        SortKey::TotalB,
        SortKey::SelfA,
        SortKey::SelfB,
        SortKey::CountA,
        SortKey::CountB,
        SortKey::Name,
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            SortKey::Delta => "delta",
            SortKey::DeltaPct => "delta_pct",
            SortKey::TotalA => "total_a",
            SortKey::TotalB => "total_b",
            SortKey::SelfA => "self_a",
            SortKey::SelfB => "self_b",
            SortKey::CountA => "count_a",
            SortKey::CountB => "count_b",
            SortKey::Name => "name",
        }
    }
}

/// Sorts rows by `key`: numbers largest first (|Δ| and |Δ %| by magnitude), names ascending;
/// `reverse` flips that. Ties by name, then kind, so the order is total.
pub fn sort_rows(rows: &mut [DiffRow], key: SortKey, reverse: bool) {
    let pct = |r: &DiffRow| r.delta_pct.map_or(f64::INFINITY, f64::abs);
    rows.sort_by(|x, y| {
        let o = match key {
            SortKey::Delta => y.delta.abs().total_cmp(&x.delta.abs()),
            SortKey::DeltaPct => pct(y).total_cmp(&pct(x)),
            SortKey::TotalA => y.total_a.total_cmp(&x.total_a),
            SortKey::TotalB => y.total_b.total_cmp(&x.total_b),
            SortKey::SelfA => y.self_a.total_cmp(&x.self_a),
            SortKey::SelfB => y.self_b.total_cmp(&x.self_b),
            SortKey::CountA => y.count_a.cmp(&x.count_a),
            SortKey::CountB => y.count_b.cmp(&x.count_b),
            SortKey::Name => std::cmp::Ordering::Equal,
        };
        let o = if reverse { o.reverse() } else { o };
        o.then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.kind.cmp(&y.kind))
    });
}
