//! `tracetui advise`: what to change, ranked by the time each change would save per step (see
//! [`crate::analysis::advise`] and docs/advise.md).

use super::report::report;
use super::stats::ns;
use super::text;
use crate::analysis::advise::{self, Ctx, Finding};
use crate::analysis::diff::StepRange;
use crate::analysis::steps::{self as step_finder, StepOptions, Steps};
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::model::Capture;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

pub const ADVISE_AFTER: &str = "\
Examples:
  tracetui advise run/worker0.123.pt.trace.json.gz
  tracetui advise logs/ --json | jq '.captures[].findings[] | {rule, saving_ns, title}'
  tracetui advise run/ --step 3..=5 --all

Per capture: findings ranked by the time each change would save per step (an upper bound
measured from the trace: idle time a change could fill, the time a sync waited), each with the
steps, tracks and events that prove it (event ids as the explorer numbers slices), the analysis
that measured it, what to try and the threshold that made it fire. Findings below 1 % of the
step are left out and counted unless --all. Rules and thresholds: docs/advise.md.";

/// Arguments of `advise`.
#[derive(Args, Debug)]
pub struct AdviseArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Only these steps (`10`, `10..20`, `10..=19`, `#1..=3` for the first three)
    #[arg(long, value_name = "RANGE", value_parser = StepRange::parse)]
    pub step: Option<StepRange>,
    /// Also the findings below 1 % of the step
    #[arg(long)]
    pub all: bool,
    /// Host events whose name matches are the steps (first capture group = step number)
    #[arg(long, value_name = "REGEX", value_parser = super::parse::parse_regex)]
    pub step_regex: Option<regex::Regex>,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_advise(a: &AdviseArgs) -> i32 {
    let opts = StepOptions {
        regex: a.step_regex.clone(),
        ..StepOptions::default()
    };
    let (range, all) = (a.step, a.all);
    report(
        &a.path,
        a.json,
        |cap, loaded| capture_advise(cap, loaded, &opts, range, all),
        render_text,
        |s| (s.path.as_str(), s.error.as_ref()),
    )
}

/// One evidence event: its slice id (the explorer's and `search`'s event) and where it is.
#[derive(Serialize, Clone, Debug)]
pub struct EventJson {
    /// Slice id.
    pub id: u32,
    /// Event name.
    pub name: String,
    /// Track, `process / track` as `search` prints it.
    pub track: String,
    /// Start from the capture's zero, ns.
    pub start_ns: i64,
    /// Duration, ns.
    pub dur_ns: i64,
}

/// What proves a finding.
#[derive(Serialize, Clone, Debug)]
pub struct EvidenceJson {
    /// Slice ids of the top events.
    pub event_ids: Vec<u32>,
    /// The same events, named and placed.
    pub events: Vec<EventJson>,
    /// Tracks involved, `process / track`.
    pub tracks: Vec<String>,
    /// The analysis that measured it (`critical`, `steps`, `gpu`, `search`).
    pub analysis: &'static str,
}

/// One finding of `advise --json`.
#[derive(Serialize, Clone, Debug)]
pub struct FindingJson {
    /// Rule id.
    pub rule: &'static str,
    /// One sentence with the numbers.
    pub title: String,
    /// Estimated saving per step, ns (mean over the analysed steps; an upper bound).
    pub saving_ns: i64,
    /// Mean step wall time, ns.
    pub step_ns: i64,
    /// Saving as a percentage of the step.
    pub saving_pct: f64,
    /// How the saving was estimated.
    pub saving_how: &'static str,
    /// Step numbers where the rule fired.
    pub steps: Vec<i64>,
    /// What proves it.
    pub evidence: EvidenceJson,
    /// What to try.
    pub fix: String,
    /// The threshold that made it fire, with its source.
    pub threshold: &'static str,
}

/// One capture of `advise --json`.
#[derive(Serialize, Clone, Debug)]
pub struct CaptureAdvise {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
    /// Why loading failed (or the step range matched nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Where the steps came from.
    pub source: String,
    /// The analysed step numbers.
    pub analysed_steps: Vec<i64>,
    /// Findings, largest saving first.
    pub findings: Vec<FindingJson>,
    /// Findings below 1 % of the step left out (0 with `--all`).
    pub below_threshold: usize,
}

fn track_title(c: &Capture, t: u32) -> String {
    let p = c.tracks[t as usize].process;
    text::clean(&format!("{} / {}", c.process_title(p), c.track_name(t))).into_owned()
}

/// The JSON shape of one finding.
pub fn finding_json(c: &Capture, f: &Finding) -> FindingJson {
    let zero = c.time_zero();
    let n = c.slices.start.len();
    let events = f
        .event_ids
        .iter()
        .filter(|&&id| (id as usize) < n)
        .map(|&id| EventJson {
            id,
            name: text::clean(c.slice_name(id)).into_owned(),
            track: track_title(c, c.track_of(id)),
            start_ns: ns(c.slices.start[id as usize] - zero),
            dur_ns: ns(c.slices.dur[id as usize]),
        })
        .collect();
    FindingJson {
        rule: f.rule,
        title: text::clean(&f.title).into_owned(),
        saving_ns: ns(f.saving),
        step_ns: ns(f.step),
        saving_pct: if f.step > 0 {
            (1000.0 * f.saving as f64 / f.step as f64).round() / 10.0
        } else {
            0.0
        },
        saving_how: f.saving_how,
        steps: f.steps.clone(),
        evidence: EvidenceJson {
            event_ids: f.event_ids.clone(),
            events,
            tracks: f
                .tracks
                .iter()
                .filter(|&&t| (t as usize) < c.tracks.len())
                .map(|&t| track_title(c, t))
                .collect(),
            analysis: f.analysis,
        },
        fix: f.fix.clone(),
        threshold: f.threshold,
    }
}

/// The steps of `all` that `range` selects (by number, or by position with `#`).
pub fn select(all: &Steps, range: Option<StepRange>) -> Steps {
    let Some(r) = range else {
        return all.clone();
    };
    let steps = all
        .steps
        .iter()
        .enumerate()
        .filter(|(i, s)| {
            let key = if r.by_position {
                *i as u64 + 1
            } else {
                s.number.max(0) as u64
            };
            (r.by_position || s.number >= 0) && key >= r.lo && key <= r.hi
        })
        .map(|(_, s)| *s)
        .collect();
    Steps {
        source: all.source,
        steps,
    }
}

/// Loads → steps → findings → JSON shape for one capture.
pub fn capture_advise(
    cap: &CaptureFile,
    loaded: Result<std::sync::Arc<Capture>, LoadError>,
    opts: &StepOptions,
    range: Option<StepRange>,
    all: bool,
) -> CaptureAdvise {
    let mut out = CaptureAdvise {
        path: cap.path.display().to_string(),
        run: cap.run.clone(),
        host: cap.host.clone(),
        error: None,
        source: String::new(),
        analysed_steps: Vec::new(),
        findings: Vec::new(),
        below_threshold: 0,
    };
    let c = match loaded {
        Ok(c) => c,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    let found = step_finder::find(&c, opts);
    out.source = found.source.name().to_string();
    let sel = select(&found, range);
    if sel.steps.is_empty() {
        let have: Vec<String> = found.steps.iter().map(|s| s.number.to_string()).collect();
        out.error = Some(format!(
            "no step in the range (steps: {})",
            if have.is_empty() {
                "none".into()
            } else {
                have.join(", ")
            }
        ));
        return out;
    }
    let ctx = Ctx::new(&c, &sel, opts);
    out.analysed_steps = ctx.steps.iter().map(|s| s.number).collect();
    for f in advise::advise(&ctx) {
        // Below 1 % of the step: left out and counted unless --all.
        if !all && f.saving * 100 < f.step {
            out.below_threshold += 1;
            continue;
        }
        out.findings.push(finding_json(&c, &f));
    }
    out
}

/// Renders one capture for people.
pub fn render_text(s: &CaptureAdvise) -> String {
    let extra = format!(
        "  steps from {} ({} analysed)",
        s.source,
        s.analysed_steps.len()
    );
    let mut o = match text::capture_head(&s.path, &s.run, &s.host, &extra, s.error.as_ref()) {
        Ok(o) => o,
        Err(failed) => return failed,
    };
    if s.findings.is_empty() {
        o.push_str("   nothing to change found\n");
    }
    let d = |v: i64| text::dur(v as f64 * 1000.0);
    for (i, f) in s.findings.iter().enumerate() {
        o.push_str(&format!(
            "\n {}. [{}] saves up to {} per step ({} % of {})\n    {}\n",
            i + 1,
            f.rule,
            d(f.saving_ns),
            f.saving_pct,
            d(f.step_ns),
            text::clean(&f.title)
        ));
        o.push_str(&format!("    how: {}\n", f.saving_how));
        if let Some(e) = f.evidence.events.first() {
            o.push_str(&format!(
                "    evidence ({}): {} events, first #{} {} on {}\n",
                f.evidence.analysis,
                f.evidence.events.len(),
                e.id,
                text::fit(&text::clean(&e.name), 96),
                text::clean(&e.track)
            ));
        } else {
            o.push_str(&format!(
                "    evidence ({}): {}\n",
                f.evidence.analysis,
                text::clean(&f.evidence.tracks.join(", "))
            ));
        }
        o.push_str(&format!("    try: {}\n", f.fix));
        o.push_str(&format!("    fired: {}\n", f.threshold));
    }
    if s.below_threshold > 0 {
        o.push_str(&format!(
            "\n   {} finding{} below 1 % of the step left out (--all shows them)\n",
            s.below_threshold,
            if s.below_threshold == 1 { "" } else { "s" }
        ));
    }
    o
}
