//! `tracetui nested`: ejkernel-style nested-event accounting per capture and per-function-id
//! timing across captures (see [`crate::analysis::nested`]).

use super::parse::parse_regex;
use super::parse::parse_time;
use super::report::LOAD_THREADS;
use super::report::Problem;
use super::report::captures;
use super::report::catalog;
use super::report::emit;
use super::report::finish;
use super::report::problems;
use super::report::to_json;
use clap::Args;
use regex::Regex;
use std::path::PathBuf;

use super::text::{self, Align, clean};
use crate::analysis::nested::{FunctionTime, NestedOptions, NestedReport, compute};
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::model::Capture;
use serde::Serialize;

pub const NESTED_AFTER: &str = "\
Examples:
  tracetui nested logs/                                  every jit_* event's own duration
  tracetui nested logs/ --regex '^fusion|^dot' --json    merged time of the contained fusions/dots
  tracetui nested runs/ --id-pattern '^jit_autotune_fn_([0-9]+)' --json | jq .functions
  tracetui nested logs/ --platform cpu                   the host plane instead of the device's

ejkernel's nested-event accounting (docs/analysis.md): one plane is read, the first whose name
contains --platform (default: the first device plane's kind, gpu/tpu; cpu on a CPU-only capture;
every process on non-XPlane captures), its own lines only, the first --max-events kept events.
For each event whose unified name hlo_module(program_id-scope_range_id) starts with --prefix: the
union of the events it fully contains whose unified name matches --regex, else its own duration;
events shorter than --min-dur are ignored. A name's value (LAST) is its last instance's, as
ejkernel keeps it; per function id each capture and name gives one sample, that value, dropping
the min and max when more than two. --json gives ns.";

/// Arguments of `nested`.
#[derive(Args, Debug)]
pub struct NestedArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Parent events: unified names starting with this (empty: all)
    #[arg(long, value_name = "P", default_value = "jit_")]
    pub prefix: String,
    /// Count the merged time of contained events whose unified name matches this regex
    /// [default: the parent's own duration]
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub regex: Option<Regex>,
    /// Ignore events shorter than this (a bare number is ns; 1.5us, 2ms…)
    #[arg(long, value_name = "NS", default_value = "1000", value_parser = parse_time)]
    pub min_dur: i64,
    /// Function id: the first capture group of this regex on a row's name
    #[arg(long, value_name = "RE", default_value = crate::analysis::nested::DEFAULT_ID_PATTERN,
          value_parser = parse_regex)]
    pub id_pattern: Regex,
    /// Read the first plane whose name contains this (case-insensitive), as ejkernel's
    /// `platform` [default: the first device plane's kind, `cpu` on CPU-only captures]
    #[arg(long, value_name = "P")]
    pub platform: Option<String>,
    /// Stop after this many kept events of the plane (ejkernel's `max_events_per_profile`;
    /// 0: no cap)
    #[arg(long, value_name = "N", default_value_t = crate::analysis::nested::DEFAULT_MAX_EVENTS)]
    pub max_events: usize,
}

pub fn cmd_nested(a: &NestedArgs) -> i32 {
    let cat = match catalog(&a.path) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let caps = captures(&cat);
    let opts = crate::analysis::nested::NestedOptions {
        prefix: a.prefix.clone(),
        regex: a.regex.clone(),
        min_dur: a.min_dur,
        id_pattern: a.id_pattern.clone(),
        platform: a.platform.clone(),
        max_events: (a.max_events > 0).then_some(a.max_events),
    };
    let reports = super::load::map_loaded(&caps, LOAD_THREADS, |cap, loaded| {
        capture_nested(cap, loaded, &opts)
    });
    let functions: Vec<FunctionJson> =
        crate::analysis::nested::by_function_id(reports.iter().map(|r| &r.report), &a.id_pattern)
            .iter()
            .map(FunctionJson::from)
            .collect();
    let printed = if a.json {
        #[derive(Serialize)]
        struct Out<'a> {
            captures: &'a [CaptureNested],
            functions: &'a [FunctionJson],
            problems: Vec<Problem>,
        }
        emit(&to_json(&Out {
            captures: &reports,
            functions: &functions,
            problems: problems(&cat),
        }))
    } else {
        let mut s = String::new();
        for r in &reports {
            s.push_str(&render_text(r));
            s.push('\n');
        }
        let trace_json = reports.iter().any(|r| r.trace_json)
            && reports.iter().all(|r| r.trace_json || r.error.is_some());
        s.push_str(&render_functions(&functions, trace_json));
        emit(&s)
    };
    if let Err(code) = printed {
        return code;
    }
    finish(
        reports.iter().map(|s| (s.path.as_str(), s.error.as_ref())),
        reports.len(),
    )
}

/// One row of `nested --json`: a unified name's nested times.
#[derive(Serialize, Clone, Debug)]
pub struct NestedJson {
    /// Unified name `N(P-S)`.
    pub name: String,
    /// Instances.
    pub count: u64,
    /// Mean nested time, ns.
    pub mean_ns: f64,
    /// Population standard deviation, ns.
    pub std_ns: f64,
    /// Shortest, ns.
    pub min_ns: f64,
    /// Longest, ns.
    pub max_ns: f64,
    /// The last instance's, ns: ejkernel's value of the name in this capture.
    pub last_ns: f64,
}

/// One capture of `nested --json`.
#[derive(Serialize, Clone, Debug)]
pub struct CaptureNested {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
    /// Why loading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Slices ignored for being shorter than `--min-dur`.
    pub short_skipped: u64,
    /// The plane read (absent: every process).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plane: Option<String>,
    /// The platform string it was chosen by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// Events kept (long enough, within `--max-events`).
    pub kept: u64,
    /// True when `--max-events` stopped the reading.
    pub capped: bool,
    /// Rows, longest mean first.
    pub nested: Vec<NestedJson>,
    /// The report in ps, for the cross-capture aggregation (not in JSON).
    #[serde(skip)]
    pub report: NestedReport,
    /// A trace-event capture (PyTorch/Kineto, Chrome JSON), whose names are not JAX's
    /// `jit_*` ones: an empty answer then says which options to pass (not in JSON).
    #[serde(skip)]
    pub trace_json: bool,
    /// The `--prefix` in force (for that advice; not in JSON).
    #[serde(skip)]
    pub prefix: String,
}

/// What to pass on a trace-event (PyTorch) capture, whose events are not named `jit_*`.
const TORCH_ADVICE: &str = "this is a trace-event (PyTorch) capture, not JAX's: pass --prefix with the start of the names to time (e.g. --prefix ProfilerStep; --prefix '' for every event) and --regex for the events to count inside them";

/// One function id of `nested --json`.
#[derive(Serialize, Clone, Debug)]
pub struct FunctionJson {
    /// Id captured by `--id-pattern`.
    pub id: String,
    /// Samples (one per capture and matching name), before dropping min and max.
    pub samples: usize,
    /// Mean, ns.
    pub mean_ns: f64,
    /// Population standard deviation, ns.
    pub std_ns: f64,
}

impl From<&FunctionTime> for FunctionJson {
    fn from(f: &FunctionTime) -> Self {
        FunctionJson {
            id: f.id.clone(),
            samples: f.samples,
            mean_ns: f.mean / 1000.0,
            std_ns: f.std / 1000.0,
        }
    }
}

fn ns(ps: i64) -> f64 {
    ps as f64 / 1000.0
}

/// Computes one capture's nested accounting.
pub fn capture_nested(
    cap: &CaptureFile,
    loaded: Result<std::sync::Arc<Capture>, LoadError>,
    opts: &NestedOptions,
) -> CaptureNested {
    let mut out = CaptureNested {
        path: cap.path.display().to_string(),
        run: cap.run.clone(),
        host: cap.host.clone(),
        error: None,
        short_skipped: 0,
        plane: None,
        platform: None,
        kept: 0,
        capped: false,
        nested: Vec::new(),
        report: NestedReport::default(),
        trace_json: false,
        prefix: opts.prefix.clone(),
    };
    let c = match loaded {
        Ok(c) => c,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    let r = match compute(&c, opts) {
        Ok(r) => r,
        Err(e) => {
            out.error = Some(format!("{}: {e}", cap.path.display()));
            return out;
        }
    };
    // Unified names come from lazily read stats: a file changed since loading reads as empty.
    if c.source_changed() {
        out.error = Some(format!(
            "{}: {}",
            cap.path.display(),
            crate::formats::mapped::CHANGED_SINCE_LOADING
        ));
        return out;
    }
    out.trace_json = matches!(
        c.format,
        Some(crate::model::Format::Kineto | crate::model::Format::Chrome)
    );
    out.short_skipped = r.short_skipped;
    out.plane = r.plane.clone();
    out.platform = r.platform.clone();
    out.kept = r.kept;
    out.capped = r.capped;
    out.nested = r
        .rows
        .iter()
        .map(|r| NestedJson {
            name: r.name.clone(),
            count: r.count,
            mean_ns: r.mean / 1000.0,
            std_ns: r.std / 1000.0,
            min_ns: ns(r.min),
            max_ns: ns(r.max),
            last_ns: ns(r.last),
        })
        .collect();
    out.report = r;
    out
}

/// Renders one capture's rows for people.
pub fn render_text(s: &CaptureNested) -> String {
    let mut o = match text::capture_head(&s.path, &s.run, &s.host, "", s.error.as_ref()) {
        Ok(o) => o,
        Err(failed) => return failed,
    };
    if let Some(p) = &s.plane {
        o.push_str(&format!(
            "   plane {} (first containing '{}'): {} events kept{}\n",
            clean(p),
            clean(s.platform.as_deref().unwrap_or("")),
            s.kept,
            if s.capped {
                ", stopped at --max-events"
            } else {
                ""
            }
        ));
    }
    if s.nested.is_empty() && s.trace_json {
        o.push_str(&format!(
            "   no event name starts with '{}': {TORCH_ADVICE}\n",
            clean(&s.prefix)
        ));
    } else if s.nested.is_empty() {
        o.push_str("   no event matches the prefix\n");
    } else {
        let d = |v: f64| text::dur(v * 1000.0);
        let rows: Vec<Vec<String>> = s
            .nested
            .iter()
            .map(|r| {
                vec![
                    text::fit(&clean(&r.name), 60).into_owned(),
                    r.count.to_string(),
                    d(r.mean_ns),
                    d(r.std_ns),
                    d(r.min_ns),
                    d(r.max_ns),
                    d(r.last_ns),
                ]
            })
            .collect();
        o.push_str(&text::table(
            "   ",
            &[
                ("NAME", Align::Left),
                ("COUNT", Align::Right),
                ("MEAN", Align::Right),
                ("STD", Align::Right),
                ("MIN", Align::Right),
                ("MAX", Align::Right),
                ("LAST", Align::Right),
            ],
            &rows,
        ));
    }
    o.push_str(&format!(
        "   {} slices shorter than --min-dur ignored\n",
        s.short_skipped
    ));
    o
}

/// Renders the per-function-id table; `trace_json` when every capture read was a trace-event
/// (PyTorch) one, where the default `--id-pattern` (JAX's autotune ids) cannot match.
pub fn render_functions(f: &[FunctionJson], trace_json: bool) -> String {
    if f.is_empty() && trace_json {
        return "== functions: no name matches --id-pattern (by default JAX's jit_autotune_fn_N): on a PyTorch capture give it a capture group over your names, e.g. --id-pattern 'ProfilerStep#([0-9]+)'\n".into();
    }
    if f.is_empty() {
        return "== functions: no name matches --id-pattern\n".into();
    }
    let d = |v: f64| text::dur(v * 1000.0);
    let rows: Vec<Vec<String>> = f
        .iter()
        .map(|r| {
            vec![
                text::fit(&clean(&r.id), 40).into_owned(),
                r.samples.to_string(),
                d(r.mean_ns),
                d(r.std_ns),
            ]
        })
        .collect();
    let mut o = String::from(
        "== functions (samples: each capture's LAST per name; min and max dropped when more than 2)\n",
    );
    o.push_str(&text::table(
        "   ",
        &[
            ("ID", Align::Left),
            ("SAMPLES", Align::Right),
            ("MEAN", Align::Right),
            ("STD", Align::Right),
        ],
        &rows,
    ));
    o
}
