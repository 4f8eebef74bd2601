//! The step types shared by the step finders and the per-step breakdown.

use crate::model::{Capture, ProcessKind, Ps, TrackKind};
use regex::Regex;

/// Default pattern of host annotations that count as input wait: PyTorch's data-loader
/// iteration and TensorFlow's / tf.data's iterator ops.
pub const DEFAULT_INPUT_PATTERN: &str =
    r"^enumerate\(DataLoader\)#|IteratorGetNext|^Iterator::|^DataLoader";

/// How steps are found and measured.
#[derive(Clone, Debug)]
pub struct StepOptions {
    /// Host slices whose name matches are steps (overrides the built-in sources); the first
    /// capture group, when it is a number, is the step number.
    pub regex: Option<Regex>,
    /// Host slices whose name matches are input wait (`None`: input wait is not measured).
    pub input: Option<Regex>,
    /// A device idle gap shorter than this is kernel wait (the `gpu` threshold, 30 µs).
    pub idle_threshold: Ps,
}

impl Default for StepOptions {
    fn default() -> Self {
        StepOptions {
            regex: None,
            input: Regex::new(DEFAULT_INPUT_PATTERN).ok(),
            idle_threshold: 30_000_000,
        }
    }
}

/// Where the step boundaries came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepSource {
    /// `--step-regex`.
    Regex,
    /// Kineto `ProfilerStep#N` annotations.
    ProfilerStep,
    /// XPlane host events with a `step_num` stat (`StepTraceAnnotation`).
    StepNum,
    /// Serving-engine iterations (vLLM / SGLang / ATOM / xDiT annotations, `steps::serving`).
    Serving,
    /// XPlane `Steps` lines (given in the file or derived from `group_id`).
    StepsLine,
    /// No steps found: the whole capture is one step.
    Whole,
}

impl StepSource {
    /// Lower-case name used in output.
    pub fn name(self) -> &'static str {
        match self {
            StepSource::Regex => "regex",
            StepSource::ProfilerStep => "profiler_step",
            StepSource::StepNum => "step_num",
            StepSource::Serving => "serving_iterations",
            StepSource::StepsLine => "steps_line",
            StepSource::Whole => "whole_capture",
        }
    }
}

/// One step: its number and wall-time window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Step number (`ProfilerStep#N`'s N, `step_num`, the Steps line's group id; else the
    /// index in time order).
    pub number: i64,
    /// Start, ps from the capture origin.
    pub start: Ps,
    /// End, ps.
    pub end: Ps,
    /// The last step of a capture whose recording stopped inside it or whose device work runs
    /// past its end: its figures may be incomplete.
    pub partial: bool,
}

impl Step {
    /// Wall time.
    pub fn dur(&self) -> Ps {
        self.end - self.start
    }
}

/// The steps of one capture, in start order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Steps {
    /// Where they came from.
    pub source: StepSource,
    /// The steps.
    pub steps: Vec<Step>,
}

impl Steps {
    /// Index of the step containing `t` (start ≤ t < end), if any.
    pub fn at(&self, t: Ps) -> Option<usize> {
        let i = self.steps.partition_point(|s| s.start <= t);
        let k = i.checked_sub(1)?;
        (t < self.steps[k].end).then_some(k)
    }
}

/// Tracks that hold host annotations: not on a device, not a GPU stream or counter.
pub(crate) fn is_host_track(c: &Capture, t: usize) -> bool {
    let tr = &c.tracks[t];
    let host = matches!(
        c.processes[tr.process as usize].kind,
        ProcessKind::Host | ProcessKind::Other
    );
    host && matches!(
        tr.kind,
        TrackKind::Thread | TrackKind::XLine | TrackKind::Async
    )
}
