//! Straggler ranks: HTA's potential-stragglers ranking (`hta/analyzers/straggler.py`,
//! `find_stragglers_with_late_start_comm_kernels`) over every NCCL/RCCL kernel name, and our
//! "arrived last" counts from matched instances.
//!
//! HTA, exactly (docs/steps.md): over the steps of all ranks, `t_min` = earliest event of a step,
//! `mean_iter` = (latest end of an event of a step − `t_min`) / number of steps. Communication
//! kernels on streams > 0, in steps > 0, lasting ≥ 1 % of `mean_iter`; per (rank, stream, step,
//! name) the last one. Per (stream, step, name) the sample standard deviation over ranks of
//! duration / `mean_iter`; its mean over steps per (stream, name); the (stream, name) with the
//! largest mean is the metric kernel. Per step, the ranks whose normalised start
//! ((start − `t_min`) / `mean_iter`) is at least the k-th largest are flagged; a rank's score is
//! how many steps flagged it; the stragglers are the k ranks with the highest scores. Times are
//! each file's own clock, as in HTA (no alignment).

use super::collectives::Instance;
use super::summary::RankSummary;
use std::collections::{BTreeMap, BTreeSet};

/// HTA's default number of candidates.
pub const HTA_CANDIDATES: usize = 2;

/// HTA's ranking of `ranks` (rank numbers `numbers`, same order): (stragglers, score of every
/// rank that has metric kernels, by rank number).
pub fn hta_stragglers(
    ranks: &[&RankSummary],
    numbers: &[i64],
    k: usize,
) -> (Vec<i64>, BTreeMap<i64, u64>) {
    let k = k.max(1);
    let steps: BTreeSet<i64> = ranks
        .iter()
        .filter(|r| r.step_source != Some(crate::analysis::steps::StepSource::Whole))
        .flat_map(|r| r.steps.iter().map(|s| s.step.number))
        .collect();
    let n_iters = steps.len();
    let t_min = ranks
        .iter()
        .flat_map(|r| r.steps.iter().map(|s| s.start_ns))
        .min();
    let t_max = ranks.iter().filter_map(|r| r.iter_events_end_ns).max();
    let (Some(t_min), Some(t_max)) = (t_min, t_max) else {
        return (Vec::new(), BTreeMap::new());
    };
    if n_iters == 0 || t_max <= t_min {
        return (Vec::new(), BTreeMap::new());
    }
    let mean_iter = (t_max - t_min) as f64 / n_iters as f64;
    let min_dur = mean_iter * 0.01;
    // Last long kernel per (rank, stream, step, name): (start, dur).
    let mut last: BTreeMap<(i64, String, i64, i64), (i64, i64)> = BTreeMap::new();
    for (r, &rank) in ranks.iter().zip(numbers) {
        for c in &r.colls {
            let Some(step) = c.step else { continue };
            let dur = c.end_ns - c.start_ns;
            if c.stream <= 0 || step <= 0 || !steps.contains(&step) || (dur as f64) < min_dur {
                continue;
            }
            let name = r.names.get(c.kernel as usize).cloned().unwrap_or_default();
            let e = last
                .entry((c.stream, name, step, rank))
                .or_insert((c.start_ns, dur));
            if c.start_ns >= e.0 {
                *e = (c.start_ns, dur);
            }
        }
    }
    // Sample std over ranks per (stream, name, step), then the mean over steps.
    let mut by_step: BTreeMap<(i64, &str, i64), Vec<f64>> = BTreeMap::new();
    for ((stream, name, step, _), (_, dur)) in &last {
        by_step
            .entry((*stream, name.as_str(), *step))
            .or_default()
            .push(*dur as f64 / mean_iter);
    }
    let mut mean_std: BTreeMap<(i64, &str), (f64, usize)> = BTreeMap::new();
    for ((stream, name, _), v) in &by_step {
        if v.len() < 2 {
            continue; // pandas' std of one value is NaN, skipped by mean()
        }
        let m = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64;
        let e = mean_std.entry((*stream, *name)).or_insert((0.0, 0));
        e.0 += var.sqrt();
        e.1 += 1;
    }
    let mut best: Option<((i64, &str), f64)> = None;
    for (key, (sum, n)) in &mean_std {
        let m = sum / *n as f64;
        if best.is_none_or(|(_, b)| m > b) {
            best = Some((*key, m));
        }
    }
    let Some(((stream, name), _)) = best else {
        return (Vec::new(), BTreeMap::new());
    };
    // Normalised start of the metric kernel per (step, rank).
    let mut metric: BTreeMap<i64, Vec<(i64, f64)>> = BTreeMap::new();
    for ((s, n, step, rank), (start, _)) in &last {
        if *s == stream && n == name {
            metric
                .entry(*step)
                .or_default()
                .push((*rank, (start - t_min) as f64 / mean_iter));
        }
    }
    let mut score: BTreeMap<i64, u64> = BTreeMap::new();
    for rows in metric.values() {
        let mut vals: Vec<f64> = rows.iter().map(|r| r.1).collect();
        vals.sort_by(|a, b| b.total_cmp(a));
        // HTA raises an IndexError when a step has fewer than k rows; we flag them all.
        let threshold = vals[(k - 1).min(vals.len() - 1)];
        for &(rank, v) in rows {
            *score.entry(rank).or_default() += u64::from(v >= threshold);
        }
    }
    let mut order: Vec<(i64, u64)> = score.iter().map(|(r, s)| (*r, *s)).collect();
    order.sort_by_key(|&(r, s)| (std::cmp::Reverse(s), r));
    (order.into_iter().take(k).map(|(r, _)| r).collect(), score)
}

/// Per rank: how often it arrived last at a complete instance, and its total wait.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArrivalStats {
    /// Complete instances it took part in.
    pub instances: u64,
    /// Of those, how many it started last.
    pub last: u64,
    /// Σ (latest start − its start) over them, ns: time it waited for the others.
    pub wait_ns: i64,
}

/// Arrival statistics of every rank (index into the run's ranks) from complete instances,
/// start times aligned by `offsets_ns`.
pub fn arrivals(
    ranks: &[&RankSummary],
    instances: &[Instance],
    offsets_ns: &[i64],
) -> Vec<ArrivalStats> {
    let mut out = vec![ArrivalStats::default(); ranks.len()];
    for inst in instances.iter().filter(|i| i.complete) {
        let start = |r: usize, c: usize| ranks[r].colls[c].start_ns - offsets_ns[r];
        let Some(latest) = inst.members.iter().map(|&(r, c)| start(r, c)).max() else {
            continue;
        };
        for &(r, c) in &inst.members {
            out[r].instances += 1;
            out[r].wait_ns += latest - start(r, c);
        }
        out[inst.last].last += 1;
    }
    out
}
