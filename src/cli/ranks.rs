//! `tracetui ranks`: runs of many ranks — per-rank step times, collectives matched across ranks
//! with skew and bandwidth, clock offsets and stragglers (see [`crate::analysis::ranks`] and
//! docs/steps.md). Each capture is summarized while it is loaded and its model dropped, so
//! memory stays at the loading threads' captures plus the small summaries.

use super::report::Problem;
use super::report::captures;
use super::report::catalog;
use super::report::emit;
use super::report::finish;
use super::report::problems;
use clap::Args;

use super::text::{self, Align, clean};
use crate::analysis::ranks::{self, RankSummary, RunReport};
use crate::analysis::steps::StepOptions;
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::model::Capture;
use serde::Serialize;

pub const RANKS_AFTER: &str = "\
Examples:
  tracetui ranks logs/                      every run below logs/: ranks, stragglers, skewed collectives
  tracetui ranks logs/ --json | jq '.runs[].stragglers'
  tracetui ranks logs/ --candidates 4 --top 20

Runs: captures of one run dir with the same distributedInfo.world_size; ranks: distributedInfo.rank,
else by host/worker name. Collectives are matched across ranks by process group and Seq, else by
kernel name and order per stream; host clocks are aligned on collective ends. Stragglers: HTA's
get_potential_stragglers definition over every NCCL/RCCL kernel. Definitions: docs/steps.md.";

/// Arguments of `ranks`.
#[derive(Args, Debug)]
pub struct RanksArgs {
    #[command(flatten)]
    pub steps: super::steps::StepsArgs,
    /// HTA's number of straggler candidates
    #[arg(long, value_name = "N", default_value_t = crate::analysis::ranks::HTA_CANDIDATES)]
    pub candidates: usize,
    /// Collectives listed per run in the text output (largest start skew first)
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
}

pub fn cmd_ranks(a: &RanksArgs) -> i32 {
    let cat = match catalog(&a.steps.path) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let caps = captures(&cat);
    let opts = a.steps.options();
    // One capture per core at a time; each is summarized and dropped before the next.
    let threads = crate::threads::from_env("TRACETUI_RANKS_THREADS");
    let all = super::load::map_loaded(&caps, threads, |cap, loaded| summarize(cap, loaded, &opts));
    let runs = runs(&all, a.candidates);
    let printed = if a.steps.json {
        #[derive(Serialize)]
        struct Out<'a> {
            runs: &'a [RunJson],
            errors: Vec<Problem>,
            problems: Vec<Problem>,
        }
        emit(&super::report::to_json(&Out {
            runs: &runs,
            errors: all
                .iter()
                .filter_map(|s| {
                    s.error.as_ref().map(|e| Problem {
                        path: s.path.clone(),
                        message: e.clone(),
                    })
                })
                .collect(),
            problems: problems(&cat),
        }))
    } else {
        let texts: Vec<String> = runs.iter().map(|r| render_text(r, a.top)).collect();
        emit(&texts.join("\n"))
    };
    if let Err(code) = printed {
        return code;
    }
    finish(
        all.iter().map(|s| (s.path.as_str(), s.error.as_ref())),
        all.len(),
    )
}

/// One rank of `ranks --json` (`runs[].ranks[]`).
#[derive(Serialize, Clone, Debug)]
pub struct RankJson {
    /// Rank number (`distributedInfo.rank`, else by host name order).
    pub rank: i64,
    /// Host / worker name.
    pub host: String,
    /// File read.
    pub path: String,
    /// Number of steps.
    pub steps: usize,
    /// Mean step time, ns.
    pub step_mean_ns: Option<i64>,
    /// Median step time, ns.
    pub step_p50_ns: Option<i64>,
    /// Longest step, ns.
    pub step_max_ns: Option<i64>,
    /// HTA's comm/comp overlap, whole capture: |∪ comp ∩ ∪ comm| / |∪ comm| (0–1).
    pub comm_comp_overlap: Option<f64>,
    /// HTA's straggler score: steps in which the rank was a candidate.
    pub straggler_score: u64,
    /// Clock offset subtracted to align this rank, ns.
    pub clock_offset_ns: i64,
    /// Complete collective instances at which this rank started last.
    pub arrived_last: u64,
    /// Time this rank waited for the last arrival, summed over complete instances, ns.
    pub wait_ns: i64,
}

/// One collective instance of `ranks --json` (`runs[].collectives[]`).
#[derive(Serialize, Clone, Debug)]
pub struct CollectiveJson {
    /// Collective kind (`all_reduce`, …) or kernel name.
    pub name: String,
    /// Process group name, if known.
    pub group: Option<String>,
    /// `Seq`, else the occurrence index in its group / stream.
    pub index: i64,
    /// Ranks that took part.
    pub ranks: usize,
    /// Latest minus earliest aligned start, ns.
    pub skew_start_ns: i64,
    /// Latest minus earliest aligned end, ns.
    pub skew_end_ns: i64,
    /// Shortest duration, ns.
    pub dur_min_ns: i64,
    /// Longest duration, ns.
    pub dur_max_ns: i64,
    /// nccl-tests' S, bytes.
    pub bytes: Option<u64>,
    /// S / dur_min, 10⁹ B/s.
    pub algbw_gbps: Option<f64>,
    /// algbw × nccl-tests' bus factor.
    pub busbw_gbps: Option<f64>,
    /// Rank that started last.
    pub last_rank: i64,
    /// Kernel name.
    pub kernel: String,
    /// Usable for arrival statistics (all members recording, full membership).
    pub complete: bool,
}

/// One run of `ranks --json`.
#[derive(Serialize, Clone, Debug)]
pub struct RunJson {
    /// Run name.
    pub run: String,
    /// `distributedInfo.world_size`, else the number of ranks.
    pub world_size: i64,
    /// Ranks by number.
    pub ranks: Vec<RankJson>,
    /// Ranks below the world size without a capture.
    pub missing_ranks: Vec<i64>,
    /// HTA's potential stragglers (rank numbers).
    pub stragglers: Vec<i64>,
    /// Collective instances, in aligned start order.
    pub collectives: Vec<CollectiveJson>,
}

/// Loads and summarizes one capture (the model is dropped on return).
pub fn summarize(
    cap: &CaptureFile,
    loaded: Result<std::sync::Arc<Capture>, LoadError>,
    opts: &StepOptions,
) -> RankSummary {
    match loaded {
        Ok(c) => ranks::summarize(&c, opts),
        Err(e) => RankSummary {
            path: cap.path.display().to_string(),
            run: cap.run.clone(),
            host: cap.host.clone(),
            error: Some(e.to_string()),
            ..RankSummary::default()
        },
    }
}

/// The JSON shape of a run.
pub fn to_json(all: &[RankSummary], r: &RunReport) -> RunJson {
    let rank_of = |k: usize| r.ranks.get(k).map_or(-1, |x| x.rank);
    RunJson {
        run: r.run.clone(),
        world_size: r.world_size,
        ranks: r
            .ranks
            .iter()
            .map(|k| {
                let s = &all[k.summary];
                RankJson {
                    rank: k.rank,
                    host: s.host.clone(),
                    path: s.path.clone(),
                    steps: k.steps,
                    step_mean_ns: k.step_mean_ns.map(|v| v.round() as i64),
                    step_p50_ns: k.step_p50_ns.map(|v| v.round() as i64),
                    step_max_ns: k.step_max_ns.map(|v| v.round() as i64),
                    comm_comp_overlap: s.comm_comp_overlap,
                    straggler_score: k.straggler_score,
                    clock_offset_ns: k.clock_offset_ns,
                    arrived_last: k.arrivals.last,
                    wait_ns: k.arrivals.wait_ns,
                }
            })
            .collect(),
        missing_ranks: r.missing_ranks.clone(),
        stragglers: r.stragglers.clone(),
        collectives: r
            .instances
            .iter()
            .map(|i| CollectiveJson {
                name: i.name.clone(),
                group: i.group.clone(),
                index: i.index,
                ranks: i.members.len(),
                skew_start_ns: i.skew_start_ns,
                skew_end_ns: i.skew_end_ns,
                dur_min_ns: i.dur_min_ns,
                dur_max_ns: i.dur_max_ns,
                bytes: i.bytes,
                algbw_gbps: i.algbw_gbps,
                busbw_gbps: i.busbw_gbps,
                last_rank: rank_of(i.last),
                kernel: i.kernel.clone(),
                complete: i.complete,
            })
            .collect(),
    }
}

/// Groups and analyzes every run of `all`.
pub fn runs(all: &[RankSummary], candidates: usize) -> Vec<RunJson> {
    ranks::group_runs(all)
        .into_iter()
        .map(|(name, members)| to_json(all, &ranks::analyze_run(all, &name, &members, candidates)))
        .collect()
}

fn opt_dur(v: Option<i64>) -> String {
    v.map_or("-".into(), |n| text::dur(n as f64 * 1000.0))
}

/// Renders one run for people: ranks, stragglers and the most skewed collectives.
pub fn render_text(r: &RunJson, top: usize) -> String {
    let mut o = format!(
        "== run {}  world size {}  ranks {}\n",
        clean(&r.run),
        r.world_size,
        r.ranks.len()
    );
    if !r.missing_ranks.is_empty() {
        let m: Vec<String> = r.missing_ranks.iter().map(i64::to_string).collect();
        o.push_str(&format!("   missing ranks: {}\n", m.join(", ")));
    }
    let rows: Vec<Vec<String>> = r
        .ranks
        .iter()
        .map(|k| {
            vec![
                k.rank.to_string(),
                text::fit(&clean(&k.host), 24).into_owned(),
                k.steps.to_string(),
                opt_dur(k.step_mean_ns),
                opt_dur(k.step_p50_ns),
                opt_dur(k.step_max_ns),
                k.comm_comp_overlap
                    .map_or("-".into(), |v| format!("{:.1}%", v * 100.0)),
                k.straggler_score.to_string(),
                k.arrived_last.to_string(),
                text::dur(k.wait_ns as f64 * 1000.0),
                text::dur(k.clock_offset_ns as f64 * 1000.0),
            ]
        })
        .collect();
    o.push_str(&text::table(
        "   ",
        &[
            ("RANK", Align::Right),
            ("HOST", Align::Left),
            ("STEPS", Align::Right),
            ("MEAN", Align::Right),
            ("P50", Align::Right),
            ("MAX", Align::Right),
            ("OVERLAP", Align::Right),
            ("STRAGGLER", Align::Right),
            ("LAST", Align::Right),
            ("WAITED", Align::Right),
            ("CLOCK OFFSET", Align::Right),
        ],
        &rows,
    ));
    let s: Vec<String> = r.stragglers.iter().map(i64::to_string).collect();
    o.push_str(&format!(
        "   potential stragglers (HTA): {}\n",
        if s.is_empty() {
            "none".into()
        } else {
            s.join(", ")
        }
    ));
    if r.collectives.is_empty() {
        o.push_str("   no collectives matched across ranks\n");
        return o;
    }
    let mut by_skew: Vec<&CollectiveJson> = r.collectives.iter().collect();
    by_skew.sort_by_key(|c| std::cmp::Reverse(c.skew_start_ns));
    o.push_str(&format!(
        "   {} collective instances; the {} with the largest start skew:\n",
        r.collectives.len(),
        top.min(by_skew.len())
    ));
    let rows: Vec<Vec<String>> = by_skew
        .iter()
        .take(top)
        .map(|c| {
            vec![
                text::fit(&clean(&c.name), 24).into_owned(),
                clean(c.group.as_deref().unwrap_or("-")).into_owned(),
                c.index.to_string(),
                c.ranks.to_string(),
                text::dur(c.skew_start_ns as f64 * 1000.0),
                text::dur(c.skew_end_ns as f64 * 1000.0),
                text::dur(c.dur_min_ns as f64 * 1000.0),
                text::dur(c.dur_max_ns as f64 * 1000.0),
                c.bytes.map_or("-".into(), text::bytes),
                c.busbw_gbps.map_or("-".into(), |b| format!("{b:.2}")),
                c.last_rank.to_string(),
            ]
        })
        .collect();
    o.push_str(&text::table(
        "   ",
        &[
            ("COLLECTIVE", Align::Left),
            ("GROUP", Align::Left),
            ("INDEX", Align::Right),
            ("RANKS", Align::Right),
            ("START SKEW", Align::Right),
            ("END SKEW", Align::Right),
            ("MIN DUR", Align::Right),
            ("MAX DUR", Align::Right),
            ("BYTES", Align::Right),
            ("BUSBW GB/s", Align::Right),
            ("LAST", Align::Right),
        ],
        &rows,
    ));
    o
}
