//! `tracetui stacks`: folded stacks (`frame;frame;…;leaf VALUE`) of the merged call tree, or
//! torch's `export_stacks` reproduced (`--torch`), see [`crate::analysis::flame`].

use super::load;
use super::parse::{parse_regex, parse_time};
use super::report::{LOAD_THREADS, catalog, emit, fail, note, to_json, warn};
use super::text::clean;
use crate::analysis::flame::folded::sum_lines;
use crate::analysis::flame::torch::{TorchMetric, export_stacks};
use crate::analysis::flame::{DeviceLinks, Metric, Scope, TimeUnit, build, fold};
use crate::discover::CaptureFile;
use crate::formats::{LoadError, Progress};
use crate::model::{Capture, Ps, SourceInfo};
use clap::{Args, ValueEnum};
use regex::Regex;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Help epilogue of `stacks`.
pub const STACKS_AFTER: &str = "\
Examples:
  tracetui stacks trace.pt.trace.json > app.folded         self time per stack, µs
  tracetui stacks trace.pt.trace.json --metric device      GPU time, on the stack that launched it
  tracetui stacks logs/ --from 1s --to 2s --track 'thread' -o range.folded
  tracetui stacks trace.pt.trace.json --torch              torch's export_stacks, summed per stack
  inferno-flamegraph < app.folded > app.svg

Frames are the capture's own nesting (python frames, ops, kernels; a slice that only partly
overlaps another is its sibling and counts only the time after it, so no time counts twice), root first; spaces, `;`, tabs
and newlines inside a frame become `_`. One line per distinct stack, sorted; values are whole µs
(--unit ns for ns), stacks below one unit are left out (counted on stderr). Several captures are
summed into one set of stacks. --torch: frames are only the enclosing python_function events (a
capture recorded with with_stack=True and experimental_config=_ExperimentalConfig(verbose=True)).";

/// `--metric`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MetricArg {
    /// Self time (time not in children)
    #[default]
    #[value(name = "self")]
    SelfTime,
    /// Wall time of each stack's frame (inclusive)
    Total,
    /// Device time launched from the stack (correlation links)
    Device,
    /// Number of instances
    Count,
}

/// `--unit`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum UnitArg {
    /// Whole microseconds (truncated)
    #[default]
    Us,
    /// Whole nanoseconds (truncated)
    Ns,
}

/// Arguments of `stacks`.
#[derive(Args, Debug)]
pub struct StacksArgs {
    /// Capture file, log dir, or `-` (folded stacks on stdin)
    pub path: PathBuf,
    /// What each line's value measures
    #[arg(long, value_enum, default_value = "self")]
    pub metric: MetricArg,
    /// Only time at or after TIME, relative to each capture's first event (e.g. 1.5ms, 200us;
    /// a bare number is ns); figures are clipped to the range
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub from: Option<i64>,
    /// Only time before TIME (relative to the first event, like --from)
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub to: Option<i64>,
    /// Only tracks whose name or stable name (`pid 12/thread:tid 7`) matches this regex
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub track: Option<Regex>,
    /// Write to FILE instead of stdout
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Reproduce torch's EventList.export_stacks (metric self or device only)
    #[arg(long)]
    pub torch: bool,
    /// Unit of time values
    #[arg(long, value_enum, default_value = "us")]
    pub unit: UnitArg,
    /// Print JSON (stable shape, see docs/cli.md) instead of folded lines
    #[arg(long)]
    pub json: bool,
    /// Include the profiler's own spans (Kineto `PyTorch Profiler (0)`), left out by default:
    /// they span the whole capture and would count its wall time a second time
    #[arg(long)]
    pub with_profiler: bool,
}

/// One capture's part of `stacks --json`.
#[derive(Serialize, Clone, Debug, Default)]
pub struct CaptureStacks {
    /// File read.
    pub path: String,
    /// Why loading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `python_function` events in the capture.
    pub python_events: u64,
    /// Device activities attributed to a launching stack.
    pub device_linked: u64,
    /// Device activities without a launch (under `(unlinked)`).
    pub device_unlinked: u64,
    /// Stacks whose value is below one unit, left out.
    pub below_unit: u64,
    /// Load warnings (`kind: message (×count)`).
    pub warnings: Vec<String>,
    /// The capture's lines (folded into the summed output).
    #[serde(skip)]
    pub lines: Vec<(String, u64)>,
}

/// One line of `stacks --json`.
#[derive(Serialize, Clone, Debug)]
pub struct StackJson {
    /// Frames, root first (sanitized).
    pub frames: Vec<String>,
    /// Value (µs, ns or count).
    pub value: u64,
}

fn metric_of(m: MetricArg) -> Metric {
    match m {
        MetricArg::SelfTime => Metric::SelfTime,
        MetricArg::Total => Metric::Total,
        MetricArg::Device => Metric::Device,
        MetricArg::Count => Metric::Count,
    }
}

/// The scope of one capture for the arguments.
pub fn scope_of(c: &Capture, a: &StacksArgs) -> Scope {
    let z = c.time_zero();
    let range = (a.from.is_some() || a.to.is_some()).then(|| {
        (
            a.from.map_or(Ps::MIN, |f| z.saturating_add(f)),
            a.to.map_or(Ps::MAX, |t| z.saturating_add(t)),
        )
    });
    let tracks = a.track.as_ref().map(|re| {
        (0..c.tracks.len() as u32)
            .filter(|&t| re.is_match(&c.track_name(t)) || re.is_match(&c.track_stable_name(t)))
            .collect::<Vec<u32>>()
    });
    let mut s = match tracks {
        Some(t) => Scope::tracks(t),
        None => Scope::all(),
    };
    s.range = range;
    s.profiler = a.with_profiler;
    s
}

/// Folded lines of one loaded capture.
pub fn capture_stacks(path: &str, c: &Capture, a: &StacksArgs) -> CaptureStacks {
    let mut out = CaptureStacks {
        path: path.to_string(),
        warnings: c
            .warnings
            .iter()
            .map(|w| format!("{} ({})", w.message, w.kind))
            .collect(),
        ..CaptureStacks::default()
    };
    if a.torch {
        let m = if a.metric == MetricArg::Device {
            TorchMetric::SelfDevice
        } else {
            TorchMetric::SelfCpu
        };
        let t = export_stacks(c, m);
        out.python_events = t.python_events;
        out.lines = t.lines;
        return out;
    }
    out.python_events = c
        .slices
        .class
        .iter()
        .filter(|&&k| {
            c.slices
                .classes
                .get(usize::from(k))
                .is_some_and(|x| x.1 == crate::model::Category::PythonFunction)
        })
        .count() as u64;
    let metric = metric_of(a.metric);
    let links = (metric == Metric::Device).then(|| DeviceLinks::of(c));
    let tree = build(c, &scope_of(c, a), links.as_ref());
    out.device_linked = tree.linked;
    out.device_unlinked = tree.unlinked;
    let unit = match a.unit {
        UnitArg::Us => TimeUnit::Us,
        UnitArg::Ns => TimeUnit::Ns,
    };
    let f = fold(&tree, &c.strings, metric, unit);
    out.below_unit = f.below_unit;
    out.lines = f.lines;
    out
}

/// Copies folded stacks from stdin into `$TMPDIR/tracetui-stdin-<pid>.folded` (for the explorer,
/// which opens files) and returns its path.
pub fn stdin_to_file() -> std::io::Result<PathBuf> {
    let mut v = Vec::new();
    std::io::Read::read_to_end(&mut std::io::stdin(), &mut v)?;
    let p = std::env::temp_dir().join(format!("tracetui-stdin-{}.folded", std::process::id()));
    std::fs::write(&p, v)?;
    Ok(p)
}

/// Removes the file it holds when dropped (the stdin copy of [`stdin_to_file`]).
pub struct RemoveOnDrop(pub Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn load_stdin() -> Result<Capture, LoadError> {
    crate::formats::folded::load(Path::new("-"), SourceInfo::default(), &Progress::default())
}

/// Runs `stacks`.
pub fn cmd_stacks(a: &StacksArgs) -> i32 {
    if a.torch && matches!(a.metric, MetricArg::Total | MetricArg::Count) {
        eprintln!("tracetui: error: --torch supports --metric self or device (torch's metrics)");
        return 2;
    }
    let reports: Vec<CaptureStacks> = if a.path == Path::new("-") {
        vec![match load_stdin() {
            Ok(c) => capture_stacks("-", &c, a),
            Err(e) => CaptureStacks {
                path: "-".into(),
                error: Some(e.to_string()),
                ..CaptureStacks::default()
            },
        }]
    } else {
        let cat = match catalog(&a.path) {
            Ok(c) => c,
            Err(code) => return code,
        };
        let caps: Vec<&CaptureFile> = cat.captures().collect();
        load::map_loaded(&caps, LOAD_THREADS, |cap, loaded| {
            let p = cap.path.display().to_string();
            match loaded {
                Ok(c) => capture_stacks(&p, &c, a),
                Err(e) => CaptureStacks {
                    path: p,
                    error: Some(e.to_string()),
                    ..CaptureStacks::default()
                },
            }
        })
    };
    let mut failed = 0;
    for r in &reports {
        let p = clean(&r.path);
        if let Some(e) = &r.error {
            failed += 1;
            eprintln!("tracetui: error: {}", clean(e));
            continue;
        }
        for w in &r.warnings {
            warn(&format!("{p}: {}", clean(w)));
        }
        if a.torch && r.python_events == 0 {
            note(&format!(
                "{p}: no python_function events: torch keeps Python stacks only \
                 with with_stack=True and experimental_config=_ExperimentalConfig(verbose=True) \
                 (pytorch#100253), so there are no stacks to write"
            ));
        }
        if r.below_unit > 0 {
            note(&format!(
                "{p}: {} stacks below one {} left out",
                r.below_unit,
                if a.unit == UnitArg::Ns { "ns" } else { "µs" }
            ));
        }
        if r.device_unlinked > 0 {
            note(&format!(
                "{p}: {} device activities have no launch; they are under (unlinked)",
                r.device_unlinked
            ));
        }
    }
    if failed == reports.len() {
        return 1;
    }
    let summed = sum_lines(
        reports
            .iter()
            .flat_map(|r| r.lines.iter().map(|(s, v)| (s.as_str(), *v))),
    );
    let text = if a.json {
        #[derive(Serialize)]
        struct Out<'a> {
            metric: &'static str,
            unit: &'static str,
            torch: bool,
            captures: &'a [CaptureStacks],
            stacks: Vec<StackJson>,
        }
        to_json(&Out {
            metric: metric_of(a.metric).name(),
            unit: match (a.metric, a.unit) {
                (MetricArg::Count, _) => "count",
                (_, UnitArg::Us) => "us",
                (_, UnitArg::Ns) => "ns",
            },
            torch: a.torch,
            captures: &reports,
            stacks: summed
                .iter()
                .map(|(s, v)| StackJson {
                    frames: s.split(';').map(str::to_string).collect(),
                    value: *v,
                })
                .collect(),
        })
    } else {
        let mut t = String::new();
        for (s, v) in &summed {
            t.push_str(&clean(s));
            t.push(' ');
            t.push_str(&v.to_string());
            t.push('\n');
        }
        t
    };
    match &a.output {
        Some(f) => {
            if let Err(e) = std::fs::write(f, text) {
                return fail(&format!(
                    "{}: cannot write: {e}",
                    clean(&f.display().to_string())
                ));
            }
        }
        None => {
            if let Err(code) = emit(&text) {
                return code;
            }
        }
    }
    if failed > 0 {
        eprintln!(
            "tracetui: {failed} of {} captures could not be loaded",
            reports.len()
        );
    }
    0
}
