//! `tracetui steps`: the steps of each capture and what their time went to (see
//! [`crate::analysis::steps`] and docs/steps.md).

use super::parse::parse_regex;
use super::parse::parse_us;
use super::report::report;
use clap::Args;
use regex::Regex;
use std::path::PathBuf;

use super::text::{self, Align};
use crate::analysis::gpu::{GpuOptions, streams};
use crate::analysis::steps::{self, StepOptions, primary_device};
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::model::Capture;
use serde::Serialize;

use super::text::ns;

pub const STEPS_AFTER: &str = "\
Examples:
  tracetui steps run/worker0.123.pt.trace.json.gz
  tracetui steps logs/ --json | jq '.captures[].steps[] | {step, dur_ns, idle_ns}'
  tracetui steps vm.xplane.pb --step-regex '^train_step_(\\d+)$'

Steps: Kineto ProfilerStep#N, serving-engine iterations (vLLM / SGLang / ATOM / xDiT annotations:
labelled prefill / decode / mixed, averaged over TraceLens's steady-state window), XPlane host
events with a step_num stat (StepTraceAnnotation) or the Steps line, else --step-regex; a capture
without any is one step. Per step and GPU device:
compute + exposed communication + memory + other busy + idle = step time, and idle = host wait +
kernel wait + other idle (the gpu rules); input = host time in data-loading annotations. The flat
fields are the busiest device's; --json has every device. Definitions: docs/steps.md.";

/// Arguments of `steps`.
#[derive(Args, Debug)]
pub struct StepsArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Host events whose name matches are the steps (first capture group = step number)
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub step_regex: Option<Regex>,
    /// Host events whose name matches count as input wait
    #[arg(long, value_name = "REGEX", value_parser = parse_regex,
          default_value = crate::analysis::steps::DEFAULT_INPUT_PATTERN)]
    pub input_regex: Regex,
    /// A device idle gap shorter than this is kernel wait (µs)
    #[arg(long, value_name = "US", default_value = "30", value_parser = parse_us)]
    pub idle_threshold_us: f64,
}

impl StepsArgs {
    pub(super) fn options(&self) -> crate::analysis::steps::StepOptions {
        crate::analysis::steps::StepOptions {
            regex: self.step_regex.clone(),
            input: Some(self.input_regex.clone()),
            idle_threshold: (self.idle_threshold_us * 1e6).round() as i64,
        }
    }
}

pub fn cmd_steps(a: &StepsArgs) -> i32 {
    let opts = a.options();
    report(
        &a.path,
        a.json,
        |cap, loaded| capture_steps(cap, loaded, &opts),
        render_text,
        |s| (s.path.as_str(), s.error.as_ref()),
    )
}

pub use super::steps_rows::{DeviceJson, PartsJson, StepJson};

/// One capture of `steps --json`.
#[derive(Serialize, Clone, Debug)]
pub struct CaptureSteps {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
    /// Why loading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Where the steps came from (`profiler_step`, `step_num`, `steps_line`, `regex`,
    /// `whole_capture`).
    pub source: String,
    /// Device whose figures the flat step fields give (most busy time); null without GPU.
    pub device: Option<i64>,
    /// The steps in time order.
    pub steps: Vec<StepJson>,
    /// Serving traces: TraceLens's steady-state window over the iterations, the averages over
    /// it and what it leaves out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serving: Option<super::steps_serving::ServingJson>,
}

/// What [`of_capture`] gives: (step source, primary device, steps, serving window).
pub type OfCapture = (
    String,
    Option<i64>,
    Vec<StepJson>,
    Option<super::steps_serving::ServingJson>,
);

/// Steps of one loaded capture in the JSON shape.
pub fn of_capture(c: &Capture, opts: &StepOptions) -> OfCapture {
    let g = streams::collect(c, &GpuOptions::default());
    let found = steps::find(c, opts);
    let parts = steps::breakdown(c, &found, opts, Some(&g));
    let primary = primary_device(&parts);
    // From the capture's zero, like every other time (`docs/cli.md`).
    let zero = c.time_zero();
    let mut rows: Vec<StepJson> = found
        .steps
        .iter()
        .zip(&parts)
        .map(|(s, p)| {
            let d = primary
                .and_then(|k| p.devices.iter().find(|x| x.device == k))
                .cloned()
                .unwrap_or_default();
            StepJson {
                step: s.number,
                start_ns: (s.start - zero).div_euclid(1000),
                dur_ns: ns(s.dur()),
                parts: PartsJson::new(&d),
                input_ns: ns(p.input),
                partial: s.partial,
                devices: p
                    .devices
                    .iter()
                    .map(|x| DeviceJson {
                        device: x.device,
                        parts: PartsJson::new(x),
                    })
                    .collect(),
                iteration: None,
            }
        })
        .collect();
    let serving = (found.source == steps::StepSource::Serving)
        .then(|| {
            let its = steps::serving::iterations(c);
            super::steps_serving::label(c, &its, &mut rows)
        })
        .flatten();
    (found.source.name().to_string(), primary, rows, serving)
}

/// Loads → steps → JSON shape for one capture.
pub fn capture_steps(
    cap: &CaptureFile,
    loaded: Result<std::sync::Arc<Capture>, LoadError>,
    opts: &StepOptions,
) -> CaptureSteps {
    let mut out = CaptureSteps {
        path: cap.path.display().to_string(),
        run: cap.run.clone(),
        host: cap.host.clone(),
        error: None,
        source: String::new(),
        device: None,
        steps: Vec::new(),
        serving: None,
    };
    match loaded {
        Ok(c) => {
            let (source, device, steps, serving) = of_capture(&c, opts);
            out.serving = serving;
            out.source = source;
            out.device = device;
            out.steps = steps;
        }
        Err(e) => out.error = Some(e.to_string()),
    }
    out
}

/// Renders one capture for people.
pub fn render_text(s: &CaptureSteps) -> String {
    let extra = match s.device {
        Some(d) => format!("  steps from {}  device {d}", s.source),
        None => format!("  steps from {}  no GPU", s.source),
    };
    let mut o = match text::capture_head(&s.path, &s.run, &s.host, &extra, s.error.as_ref()) {
        Ok(o) => o,
        Err(failed) => return failed,
    };
    if s.source == "whole_capture" {
        o.push_str(
            "   no step annotations found: the whole capture is one step (see --step-regex)\n",
        );
    }
    let d = |v: i64| text::dur(v as f64 * 1000.0);
    let input = |v: i64| if v > 0 { d(v) } else { "-".into() };
    if s.device.is_none() {
        let rows: Vec<Vec<String>> = s
            .steps
            .iter()
            .map(|r| {
                vec![
                    format!("{}{}", r.step, if r.partial { "*" } else { "" }),
                    d(r.dur_ns),
                    input(r.input_ns),
                ]
            })
            .collect();
        o.push_str(&text::table(
            "   ",
            &[
                ("STEP", Align::Right),
                ("TIME", Align::Right),
                ("INPUT", Align::Right),
            ],
            &rows,
        ));
        o.push_str(&partial_note(s));
        if let Some(sv) = &s.serving {
            o.push_str(&super::steps_serving::render(sv));
        }
        return o;
    }
    let rows: Vec<Vec<String>> = s
        .steps
        .iter()
        .map(|r| {
            let step = format!("{}{}", r.step, if r.partial { "*" } else { "" });
            if !r.parts.device_data {
                let mut row = vec![step, d(r.dur_ns), "no device data".into()];
                row.extend(std::iter::repeat_n(String::new(), 6));
                row.push(input(r.input_ns));
                if s.serving.is_some() {
                    row.extend(super::steps_serving::columns(r));
                }
                return row;
            }
            let mut row = vec![
                step,
                d(r.dur_ns),
                text::pct(r.parts.compute_ns, r.dur_ns, 1),
                text::pct(r.parts.exposed_communication_ns, r.dur_ns, 1),
                text::pct(r.parts.memory_ns, r.dur_ns, 1),
                text::pct(r.parts.other_ns, r.dur_ns, 1),
                text::pct(r.parts.idle_ns, r.dur_ns, 1),
                text::pct(r.parts.host_wait_ns, r.dur_ns, 1),
                text::pct(r.parts.kernel_wait_ns, r.dur_ns, 1),
                input(r.input_ns),
            ];
            if s.serving.is_some() {
                row.extend(super::steps_serving::columns(r));
            }
            row
        })
        .collect();
    let mut head = vec![
        ("STEP", Align::Right),
        ("TIME", Align::Right),
        ("COMPUTE", Align::Right),
        ("EXP.COMM", Align::Right),
        ("MEMORY", Align::Right),
        ("OTHER", Align::Right),
        ("IDLE", Align::Right),
        ("HOST WAIT", Align::Right),
        ("KERN WAIT", Align::Right),
        ("INPUT", Align::Right),
    ];
    if s.serving.is_some() {
        head.extend([
            ("PHASE", Align::Left),
            ("REQ C+G", Align::Right),
            ("TOKENS C+G", Align::Right),
        ]);
    }
    o.push_str(&text::table("   ", &head, &rows));
    o.push_str(&partial_note(s));
    o.push_str(&no_data_note(s));
    if let Some(sv) = &s.serving {
        o.push_str(&super::steps_serving::render(sv));
    }
    o
}

/// Says which steps have no device data and why they show no parts.
fn no_data_note(s: &CaptureSteps) -> String {
    let none: Vec<String> = s
        .steps
        .iter()
        .filter(|r| !r.parts.device_data)
        .map(|r| r.step.to_string())
        .collect();
    if none.is_empty() {
        return String::new();
    }
    format!(
        "   no device data in step{} {}: the device recorded nothing then (its trace starts \
         after or ends before), so idle time is not known there; left out of device averages\n",
        if none.len() == 1 { "" } else { "s" },
        none.join(", ")
    )
}

fn partial_note(s: &CaptureSteps) -> String {
    if s.steps.iter().any(|r| r.partial) {
        "   * may be cut off by the end of recording\n".into()
    } else {
        String::new()
    }
}
