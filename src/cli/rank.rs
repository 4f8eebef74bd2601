//! `tracetui rank`: torch's optimizable-event ranking per capture (see
//! [`crate::analysis::rank`]).

use super::report::report;
use clap::Args;
use std::path::PathBuf;

use super::text::{self, Align, clean};
use crate::analysis::rank::callstack::call_stack_frame;
use crate::analysis::rank::{Mode, rank};
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::model::Capture;
use serde::Serialize;

pub const RANK_AFTER: &str = "\
Examples:
  tracetui rank run/worker0.123.pt.trace.json.gz          top 10 optimizable CPU events
  tracetui rank logs/ --top 3 --json | jq '.captures[].optimizable[0]'
  tracetui rank trace.pt.trace.json --compat              torch's BasicEvaluation, quirks included

torch's BasicEvaluation heuristic (torch.profiler._utils): CPU events during which the GPU queue
fell from depth >= 4 to 0, scored z(idle fraction) + 0.6 z(self time). Kineto JSON (launches
cudaLaunchKernel*, plus cuLaunchKernel* and hip*LaunchKernel unless --compat) and XPlane GPU
captures (host events linked to /device:GPU:N kernels by correlation_id). START is relative to the
capture's zero (its earliest event); --json gives start_ns from it and the absolute start_epoch_ns.
See docs/analysis.md.";

/// Arguments of `rank`.
#[derive(Args, Debug)]
pub struct RankArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Show the N best events per capture
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Reproduce torch's code exactly, quirks included (see docs/analysis.md)
    #[arg(long)]
    pub compat: bool,
}

pub fn cmd_rank(a: &RankArgs) -> i32 {
    let mode = if a.compat {
        crate::analysis::rank::Mode::Compat
    } else {
        crate::analysis::rank::Mode::Default
    };
    report(
        &a.path,
        a.json,
        |cap, loaded| capture_rank(cap, loaded, mode, a.top),
        render_text,
        |s| (s.path.as_str(), s.error.as_ref()),
    )
}

/// One ranked event of `rank --json`.
#[derive(Serialize, Clone, Debug)]
pub struct RankedJson {
    /// Event name.
    pub name: String,
    /// Start, integer ns from the capture's zero (its earliest event).
    pub start_ns: i64,
    /// Start, absolute wall-clock epoch ns (null when the file gives no epoch).
    pub start_epoch_ns: Option<i64>,
    /// Duration, ns.
    pub dur_ns: i64,
    /// Self time, ns.
    pub self_ns: i64,
    /// Idle time overlapping the event, ns.
    pub idle_ns: i64,
    /// idle / duration.
    pub idle_fraction: f64,
    /// Queue depth at the start.
    pub queue_depth: u32,
    /// Score (null when torch's would be NaN, compat mode only).
    pub score: Option<f64>,
    /// Nearest enclosing `file.py(N): func` event; in default mode, else the innermost user
    /// frame of the `Call stack` arg (`with_stack=True` captures); null when neither.
    pub source: Option<String>,
    /// Stable track name.
    pub track: String,
}

/// One capture of `rank --json`.
#[derive(Serialize, Clone, Debug)]
pub struct CaptureRank {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
    /// Why loading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall-clock epoch ns of the capture's zero (its earliest event), when the file says.
    pub zero_epoch_ns: Option<i64>,
    /// `default` or `compat`.
    pub mode: &'static str,
    /// Kernel launches found.
    pub launches: usize,
    /// Kernels found.
    pub kernels: usize,
    /// Launches linked to a kernel by correlation id.
    pub linked: usize,
    /// Largest queue depth.
    pub queue_depth_max: u32,
    /// CPU events considered.
    pub events: usize,
    /// Falling queue-depth phases.
    pub falling_phases: usize,
    /// Events overlapping a falling phase (all ranked; `optimizable` shows the top N).
    pub candidates: usize,
    /// The top N, best first.
    pub optimizable: Vec<RankedJson>,
}

use super::stats::ns;

/// Ranks one capture and keeps its top `top` events.
pub fn capture_rank(
    cap: &CaptureFile,
    loaded: Result<std::sync::Arc<Capture>, LoadError>,
    mode: Mode,
    top: usize,
) -> CaptureRank {
    let mut out = CaptureRank {
        path: cap.path.display().to_string(),
        run: cap.run.clone(),
        host: cap.host.clone(),
        error: None,
        zero_epoch_ns: None,
        mode: match mode {
            Mode::Default => "default",
            Mode::Compat => "compat",
        },
        launches: 0,
        kernels: 0,
        linked: 0,
        queue_depth_max: 0,
        events: 0,
        falling_phases: 0,
        candidates: 0,
        optimizable: Vec::new(),
    };
    let c = match loaded {
        Ok(c) => c,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    let r = rank(&c, mode);
    out.launches = r.launches;
    out.kernels = r.kernels;
    out.linked = r.eval.linked;
    out.queue_depth_max = r.eval.queue_depth_max();
    out.events = r.events.len();
    out.falling_phases = r.eval.falling.len();
    out.candidates = r.eval.ranked.len();
    out.zero_epoch_ns = c.zero_epoch_ns();
    let epoch = c.origin_epoch_ns;
    let first = c.time_zero();
    let s = &c.slices;
    out.optimizable = r
        .ranked()
        .take(top)
        .map(|(id, i, score)| {
            let k = id as usize;
            let e = &r.eval;
            RankedJson {
                name: c.slice_name(id).to_string(),
                start_ns: ns(s.start[k] - first),
                start_epoch_ns: epoch.map(|e| e.saturating_add(s.start[k].div_euclid(1000))),
                dur_ns: ns(s.dur[k]),
                self_ns: ns(e.self_ps[i]),
                idle_ns: ns(e.idle_ps[i]),
                idle_fraction: e.idle_fraction(i, s.dur[k]),
                queue_depth: e.queue_depth[i],
                score: score.is_finite().then_some(score),
                // The enclosing python frame; in default mode, else the `Call stack` arg.
                source: r
                    .source(&c, i)
                    .map(|src| c.slice_name(src).to_string())
                    .or_else(|| match mode {
                        Mode::Default => call_stack_frame(&c, id),
                        Mode::Compat => None,
                    }),
                track: c.track_stable_name(c.track_of(id)),
            }
        })
        .collect();
    out
}

/// Renders one capture's ranking for people; times relative to the capture's first event.
pub fn render_text(r: &CaptureRank) -> String {
    let mode = format!("  ({} mode)", r.mode);
    let mut o = match text::capture_head(&r.path, &r.run, &r.host, &mode, r.error.as_ref()) {
        Ok(o) => o,
        Err(failed) => return failed,
    };
    o.push_str(&format!(
        "   {} launches, {} kernels, {} linked; max queue depth {}; {} CPU events, {} falling \
         phases, {} candidates\n",
        r.launches,
        r.kernels,
        r.linked,
        r.queue_depth_max,
        r.events,
        r.falling_phases,
        r.candidates
    ));
    if r.kernels == 0 {
        o.push_str("   no GPU work (no kernels): nothing to rank\n");
        return o;
    }
    if r.optimizable.is_empty() {
        o.push_str("   no events to optimize (the queue never fell from depth 4 to 0)\n");
        return o;
    }
    o.push_str(&format!(
        "   {}\n   IDLE: share of the event's duration the GPU was idle; QD: GPU queue depth at \
         its start\n",
        crate::analysis::rank::explain::SCORE_MEANING
    ));
    let d = |v: i64| text::dur(v as f64 * 1000.0);
    let rows: Vec<Vec<String>> = r
        .optimizable
        .iter()
        .enumerate()
        .map(|(k, e)| {
            vec![
                (k + 1).to_string(),
                e.score.map_or("nan".into(), |s| format!("{s:.3}")),
                format!("{:.2}%", e.idle_fraction * 100.0),
                d(e.self_ns),
                d(e.dur_ns),
                e.queue_depth.to_string(),
                d(e.start_ns),
                text::fit(&clean(&e.name), 48).into_owned(),
                e.source
                    .as_deref()
                    .map_or("-".into(), |s| text::fit(&clean(s), 48).into_owned()),
            ]
        })
        .collect();
    o.push_str(&text::table(
        "   ",
        &[
            ("RANK", Align::Right),
            ("SCORE", Align::Right),
            ("IDLE", Align::Right),
            ("SELF", Align::Right),
            ("DUR", Align::Right),
            ("QD", Align::Right),
            ("START", Align::Right),
            ("NAME", Align::Left),
            ("SOURCE", Align::Left),
        ],
        &rows,
    ));
    if r.candidates > r.optimizable.len() {
        o.push_str(&format!(
            "   showing {} of {} candidates (--top to change); START is from the capture's zero \
             (its earliest event)\n",
            r.optimizable.len(),
            r.candidates
        ));
    } else {
        o.push_str("   START is from the capture's zero (its earliest event)\n");
    }
    o
}
