//! Many ranks of one training job (docs/steps.md): a small [`RankSummary`] per capture, made
//! while the capture is loaded (the model is dropped after), then grouped into runs
//! ([`group_runs`]) whose collectives are matched across ranks, clock-aligned and ranked for
//! stragglers ([`analyze_run`]).

mod collectives;
mod matrix;
mod runs;
mod straggler;
mod summary;

pub use collectives::{ClockOffset, Instance, match_instances};
pub use matrix::{Metric, matrix};
pub use runs::{RankReport, RunReport, analyze_run, group_runs, is_rank_format};
pub use straggler::{ArrivalStats, HTA_CANDIDATES, arrivals, hta_stragglers};
pub use summary::{RankColl, RankStep, RankSummary, distributed_info, hta_overlap, summarize};
