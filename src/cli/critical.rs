//! `tracetui critical`: the critical path of each step through host threads, launches, syncs
//! and the device (see [`crate::analysis::critical`] and docs/critical-path.md).

use super::report::report;
use super::stats::ns;
use super::text::{self, Align};
use crate::analysis::critical::{self, Kind, Mode, Options, StepPath, bounds_sentence};
use crate::analysis::steps::{self as step_finder, StepOptions};
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::model::{Capture, NO_SLICE};
use clap::Args;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

pub const CRITICAL_AFTER: &str = "\
Examples:
  tracetui critical run/worker0.123.pt.trace.json.gz
  tracetui critical run/ --step 3 --json | jq '.captures[].steps[] | {step, path_ns, by_kind}'
  tracetui critical run/worker0.123.pt.trace.json.gz --hta --json

Per step (ProfilerStep#N, XPlane steps, else the whole capture): the longest path through a
graph of host operators, launches, device activities and the waits between them. Default rules
go beyond HTA: a thread waiting in run_backward continues on the autograd threads, a blocking
call (synchronize, device-to-host copy) waits for the device work that ends inside it, and time
between operators counts as `gap`. --hta applies HTA's CriticalPathAnalysis rules instead.
Rules and differences: docs/critical-path.md.";

/// Arguments of `critical`.
#[derive(Args, Debug)]
pub struct CriticalArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Only this step number
    #[arg(long, value_name = "N")]
    pub step: Option<i64>,
    /// HTA's rules (CriticalPathAnalysis), to compare with HTA
    #[arg(long)]
    pub hta: bool,
    /// Host events whose name matches are the steps (first capture group = step number)
    #[arg(long, value_name = "REGEX", value_parser = super::parse::parse_regex)]
    pub step_regex: Option<regex::Regex>,
    /// Events listed per step
    #[arg(long, value_name = "N", default_value = "10")]
    pub top: usize,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_critical(a: &CriticalArgs) -> i32 {
    let opts = Options {
        mode: if a.hta { Mode::Hta } else { Mode::Full },
        zero_weight_launch_edges: false,
        top: a.top,
    };
    let only = a.step;
    let steps = StepOptions {
        regex: a.step_regex.clone(),
        ..StepOptions::default()
    };
    report(
        &a.path,
        a.json,
        |cap, loaded| capture_critical(cap, loaded, &opts, &steps, only),
        render_text,
        |s| (s.path.as_str(), s.error.as_ref()),
    )
}

/// One track's time on the path.
#[derive(Serialize, Clone, Debug)]
pub struct TrackJson {
    /// Process / track title.
    pub track: String,
    /// Time on the path, ns.
    pub ns: i64,
}

/// One event's time on the path.
#[derive(Serialize, Clone, Debug)]
pub struct EventJson {
    /// Event name (`(between ops)` for time attributed to no event).
    pub name: String,
    /// The kind its time counted as.
    pub kind: &'static str,
    /// Track title.
    pub track: String,
    /// Start from the capture's zero, ns: a gap's own (the end of the operator before it),
    /// else the event's (null for no event).
    pub start_ns: Option<i64>,
    /// End from the capture's zero, ns: a gap's own (the start of the operator after it), else
    /// the event's (null for no event).
    pub end_ns: Option<i64>,
    /// Time on the path, ns.
    pub ns: i64,
}

/// One step of `critical --json`.
#[derive(Serialize, Clone, Debug)]
pub struct StepJson {
    /// Step number.
    pub step: i64,
    /// Start from the capture's zero, ns.
    pub start_ns: i64,
    /// Step wall time, ns.
    pub step_ns: i64,
    /// Critical path length, ns.
    pub path_ns: i64,
    /// Path time by kind, ns (every kind, zeros included).
    pub by_kind: BTreeMap<&'static str, i64>,
    /// Path time by HTA's `bound_by` class, ns.
    pub hta_bound: BTreeMap<&'static str, i64>,
    /// Tracks the path passes, by time on the path.
    pub tracks: Vec<TrackJson>,
    /// Events by time on the path.
    pub top: Vec<EventJson>,
    /// Edges on the path.
    pub edges: usize,
    /// What bounds the step, in one sentence.
    pub bounds: String,
    /// What the graph could not join (counts).
    pub skipped: critical::Skipped,
    /// The last step, possibly cut off by the end of recording.
    pub partial: bool,
}

/// One capture of `critical --json`.
#[derive(Serialize, Clone, Debug)]
pub struct CaptureCritical {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
    /// Why loading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `full` or `hta`.
    pub mode: &'static str,
    /// Where the steps came from.
    pub source: String,
    /// The steps in time order.
    pub steps: Vec<StepJson>,
}

fn event_name(c: &Capture, id: u32) -> String {
    if id == NO_SLICE {
        "(between ops)".into()
    } else {
        text::clean(c.slice_name(id)).into_owned()
    }
}

fn track_title(c: &Capture, t: u32) -> String {
    let p = c.tracks[t as usize].process;
    text::clean(&format!("{} / {}", c.process_title(p), c.track_name(t))).into_owned()
}

/// The JSON shape of one step's path.
pub fn step_json(c: &Capture, p: &StepPath) -> StepJson {
    let zero = c.time_zero();
    let mut by_kind = BTreeMap::new();
    let mut hta_bound = BTreeMap::new();
    for &(k, ps) in &p.by_kind {
        if k == Kind::Dependency {
            continue;
        }
        by_kind.insert(k.name(), ns(ps));
        *hta_bound.entry(k.hta_bound()).or_insert(0) += ns(ps);
    }
    let site = p.wait_site.map(|id| event_name(c, id));
    StepJson {
        step: p.step.number,
        start_ns: (p.step.start - zero).div_euclid(1000),
        step_ns: ns(p.step.dur()),
        path_ns: ns(p.path),
        by_kind,
        hta_bound,
        tracks: p
            .tracks
            .iter()
            .map(|&(t, ps)| TrackJson {
                track: track_title(c, t),
                ns: ns(ps),
            })
            .collect(),
        top: p
            .top
            .iter()
            .map(|e| EventJson {
                name: match p.graph(e.event) {
                    Some(g) => format!(
                        "{} via {}",
                        crate::analysis::graphs::graph_node_name(g.kernels as usize),
                        event_name(c, g.launch)
                    ),
                    None => event_name(c, e.event),
                },
                kind: e.kind.name(),
                track: if e.event == NO_SLICE {
                    String::new()
                } else {
                    track_title(c, c.track_of(e.event))
                },
                start_ns: (e.event != NO_SLICE || e.is_gap())
                    .then(|| (e.start - zero).div_euclid(1000)),
                end_ns: (e.event != NO_SLICE || e.is_gap())
                    .then(|| (e.end - zero).div_euclid(1000)),
                ns: ns(e.ps),
            })
            .collect(),
        edges: p.edges.len(),
        bounds: bounds_sentence(p, site.as_deref()),
        skipped: p.skipped,
        partial: p.step.partial,
    }
}

/// Loads → steps → critical paths → JSON shape for one capture.
pub fn capture_critical(
    cap: &CaptureFile,
    loaded: Result<std::sync::Arc<Capture>, LoadError>,
    opts: &Options,
    steps: &StepOptions,
    only: Option<i64>,
) -> CaptureCritical {
    let mut out = CaptureCritical {
        path: cap.path.display().to_string(),
        run: cap.run.clone(),
        host: cap.host.clone(),
        error: None,
        mode: if opts.mode == Mode::Hta {
            "hta"
        } else {
            "full"
        },
        source: String::new(),
        steps: Vec::new(),
    };
    match loaded {
        Ok(c) => {
            let found = step_finder::find(&c, steps);
            out.source = found.source.name().to_string();
            out.steps = critical::analyze(&c, &found, opts, only)
                .iter()
                .map(|p| step_json(&c, p))
                .collect();
        }
        Err(e) => out.error = Some(e.to_string()),
    }
    out
}

/// Renders one capture for people.
pub fn render_text(s: &CaptureCritical) -> String {
    let extra = format!("  steps from {}  {} rules", s.source, s.mode);
    let mut o = match text::capture_head(&s.path, &s.run, &s.host, &extra, s.error.as_ref()) {
        Ok(o) => o,
        Err(failed) => return failed,
    };
    if s.steps.is_empty() {
        o.push_str("   no such step\n");
        return o;
    }
    let d = |v: i64| text::dur(v as f64 * 1000.0);
    let kinds = [
        "cpu_op",
        "runtime",
        "gap",
        "launch_delay",
        "kernel",
        "memcpy",
        "kernel_gap",
        "sync_wait",
    ];
    let rows: Vec<Vec<String>> = s
        .steps
        .iter()
        .map(|r| {
            let mut row = vec![
                format!("{}{}", r.step, if r.partial { "*" } else { "" }),
                d(r.step_ns),
                d(r.path_ns),
            ];
            for k in kinds {
                row.push(text::pct(
                    r.by_kind.get(k).copied().unwrap_or(0),
                    r.path_ns,
                    0,
                ));
            }
            row
        })
        .collect();
    let mut header = vec![
        ("STEP", Align::Right),
        ("TIME", Align::Right),
        ("PATH", Align::Right),
    ];
    for h in [
        "CPU OP", "RUNTIME", "GAP", "LAUNCH", "KERNEL", "MEMCPY", "K.GAP", "SYNC",
    ] {
        header.push((h, Align::Right));
    }
    o.push_str(&text::table("   ", &header, &rows));
    if let Some(last) = s.steps.last() {
        o.push_str(&format!("\n   step {}: top of the path\n", last.step));
        let mut rows: Vec<Vec<String>> = last
            .top
            .iter()
            .map(|e| {
                vec![
                    d(e.ns),
                    e.start_ns.map_or("-".into(), d),
                    e.kind.to_string(),
                    e.name.clone(),
                    e.track.clone(),
                ]
            })
            .collect();
        text::fit_column(&mut rows, 3, 60);
        text::fit_column(&mut rows, 4, 40);
        o.push_str(&text::table(
            "   ",
            &[
                ("ON PATH", Align::Right),
                ("START", Align::Right),
                ("KIND", Align::Left),
                ("EVENT", Align::Left),
                ("TRACK", Align::Left),
            ],
            &rows,
        ));
    }
    for r in &s.steps {
        o.push_str(&format!("   step {}: {}\n", r.step, r.bounds));
    }
    o
}
