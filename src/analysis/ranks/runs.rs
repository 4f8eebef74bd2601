//! Runs of ranks: grouping rank summaries, and everything `tracetui ranks` reports per run.
//!
//! A run is the captures of one discovery run (same run dir / trace-handler dir) with the same
//! `distributedInfo.world_size`. A rank is `distributedInfo.rank`; captures without it are
//! numbered by host / worker name order. When a rank number repeats in a run (two profiling
//! spans of one job), its n-th capture goes to the run's n-th span (`<run> (2)`, …).

use super::collectives::{Instance, match_instances};
use super::straggler::{ArrivalStats, arrivals, hta_stragglers};
use super::summary::RankSummary;
use crate::model::Ps;
use std::borrow::Borrow;
use std::collections::BTreeMap;

/// Whether a capture of this format is a rank of its run: an event trace. An allocator
/// snapshot (`memory_snapshot.pickle` beside a capture) is memory data of the run and folded
/// stacks (`*.stacks.txt`, torch's `export_stacks`) are a view of one; neither is a rank. An
/// unknown format counts (it is summarized and fails on its own).
pub fn is_rank_format(format: Option<crate::model::Format>) -> bool {
    use crate::model::Format;
    !matches!(format, Some(Format::Snapshot | Format::Folded))
}

/// Groups summaries into runs: indices into `all`, each run sorted by rank, and each run's
/// name and assigned rank numbers (same order). `all` holds summaries or shared ones (`Arc`).
pub fn group_runs<S: Borrow<RankSummary>>(all: &[S]) -> Vec<(String, Vec<(i64, usize)>)> {
    let all: Vec<&RankSummary> = all.iter().map(Borrow::borrow).collect();
    let mut by_key: BTreeMap<(String, Option<i64>), Vec<usize>> = BTreeMap::new();
    for (i, r) in all.iter().enumerate() {
        if r.error.is_some() {
            continue;
        }
        by_key
            .entry((r.run.clone(), r.world_size))
            .or_default()
            .push(i);
    }
    let mut out = Vec::new();
    for ((run, _), mut idx) in by_key {
        // Captures without a rank: numbered by host name order, after the numbered ones.
        idx.sort_by(|&a, &b| {
            (
                all[a].rank.is_none(),
                all[a].rank,
                &all[a].host,
                all[a].span_ns.0,
            )
                .cmp(&(
                    all[b].rank.is_none(),
                    all[b].rank,
                    &all[b].host,
                    all[b].span_ns.0,
                ))
        });
        let mut next_free = idx
            .iter()
            .filter_map(|&i| all[i].rank)
            .max()
            .map_or(0, |m| m + 1);
        let mut spans: Vec<Vec<(i64, usize)>> = Vec::new();
        for i in idx {
            let rank = all[i].rank.unwrap_or_else(|| {
                next_free += 1;
                next_free - 1
            });
            let span = spans
                .iter()
                .position(|s| !s.iter().any(|&(r, _)| r == rank))
                .unwrap_or(spans.len());
            if span == spans.len() {
                spans.push(Vec::new());
            }
            spans[span].push((rank, i));
        }
        for (k, s) in spans.into_iter().enumerate() {
            let name = if k == 0 {
                run.clone()
            } else {
                format!("{run} ({})", k + 1)
            };
            out.push((name, s));
        }
    }
    out
}

/// One rank of a run report.
#[derive(Clone, Debug, PartialEq)]
pub struct RankReport {
    /// Rank number.
    pub rank: i64,
    /// Index into the summaries.
    pub summary: usize,
    /// Steps.
    pub steps: usize,
    /// Mean / median / max step time, ns (None without steps).
    pub step_mean_ns: Option<f64>,
    /// Median.
    pub step_p50_ns: Option<f64>,
    /// Max.
    pub step_max_ns: Option<f64>,
    /// HTA's straggler score: steps in which it was flagged.
    pub straggler_score: u64,
    /// Clock offset applied, ns.
    pub clock_offset_ns: i64,
    /// Arrival statistics.
    pub arrivals: ArrivalStats,
}

/// Everything about one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunReport {
    /// Run name.
    pub run: String,
    /// `distributedInfo.world_size`, else the number of ranks.
    pub world_size: i64,
    /// Ranks, by rank number.
    pub ranks: Vec<RankReport>,
    /// Rank numbers below the world size with no capture.
    pub missing_ranks: Vec<i64>,
    /// HTA's potential stragglers.
    pub stragglers: Vec<i64>,
    /// Collective instances in aligned start order.
    pub instances: Vec<Instance>,
}

fn ps_to_ns(ps: Ps) -> f64 {
    ps as f64 / 1000.0
}

/// Analyzes one run (`members` from [`group_runs`]) with `candidates` HTA candidates.
pub fn analyze_run<S: Borrow<RankSummary>>(
    all: &[S],
    run: &str,
    members: &[(i64, usize)],
    candidates: usize,
) -> RunReport {
    let all: Vec<&RankSummary> = all.iter().map(Borrow::borrow).collect();
    let refs: Vec<&RankSummary> = members.iter().map(|&(_, i)| all[i]).collect();
    let numbers: Vec<i64> = members.iter().map(|m| m.0).collect();
    let (instances, offsets) = match_instances(&refs);
    let offs: Vec<i64> = offsets.iter().map(|o| o.offset_ns).collect();
    let arr = arrivals(&refs, &instances, &offs);
    let (stragglers, scores) = hta_stragglers(&refs, &numbers, candidates);
    let world_size = refs
        .iter()
        .filter_map(|r| r.world_size)
        .max()
        .unwrap_or(refs.len() as i64);
    let present: Vec<i64> = members.iter().map(|m| m.0).collect();
    let missing_ranks = (0..world_size).filter(|r| !present.contains(r)).collect();
    let ranks = members
        .iter()
        .enumerate()
        .map(|(k, &(rank, i))| {
            let mut d: Vec<Ps> = all[i].steps.iter().map(|s| s.step.dur()).collect();
            d.sort_unstable();
            let n = d.len();
            RankReport {
                rank,
                summary: i,
                steps: n,
                step_mean_ns: (n > 0).then(|| ps_to_ns(d.iter().sum::<Ps>()) / n as f64),
                step_p50_ns: (n > 0).then(|| {
                    if n % 2 == 1 {
                        ps_to_ns(d[n / 2])
                    } else {
                        (ps_to_ns(d[n / 2 - 1]) + ps_to_ns(d[n / 2])) / 2.0
                    }
                }),
                step_max_ns: d.last().map(|&m| ps_to_ns(m)),
                straggler_score: scores.get(&rank).copied().unwrap_or(0),
                clock_offset_ns: offs[k],
                arrivals: arr[k],
            }
        })
        .collect();
    RunReport {
        run: run.to_string(),
        world_size,
        ranks,
        missing_ranks,
        stragglers,
        instances,
    }
}
