//! The serving part of `tracetui steps`: each iteration's label (prefill / decode / mixed,
//! batch, requests, tokens) and TraceLens's steady-state window with the averages over it and
//! what it leaves out (docs/steps.md, "Serving iterations").

pub use super::steps_rows::IterationJson;
use super::steps_rows::{PartsJson, StepJson};
use super::text;
use crate::analysis::serving::steady::{self, Detail, Reason};
use crate::analysis::steps::serving::Iterations;
use crate::model::Capture;
use serde::Serialize;

/// A run of iterations left out of the steady-state window.
#[derive(Serialize, Clone, Debug)]
pub struct ExcludedJson {
    /// First step number.
    pub first: i64,
    /// Last step number.
    pub last: i64,
    /// `ramp_up`, `ramp_down`, `below_peak`, `smaller_region`, `outside_window`, `trimmed`.
    pub reason: Reason,
    /// The reason in words.
    pub why: String,
}

/// Averages over the steady-state window, primary device, steps with device data.
#[derive(Serialize, Clone, Debug, Default)]
pub struct MeansJson {
    /// Steps averaged.
    pub steps: usize,
    /// Mean wall time.
    pub dur_ns: i64,
    /// Mean compute.
    pub compute_ns: i64,
    /// Mean exposed communication.
    pub exposed_communication_ns: i64,
    /// Mean memory.
    pub memory_ns: i64,
    /// Mean idle.
    pub idle_ns: i64,
    /// Mean host wait.
    pub host_wait_ns: i64,
}

/// `captures[].serving`: the iterations' steady-state window.
#[derive(Serialize, Clone, Debug)]
pub struct ServingJson {
    /// Iterations found.
    pub iterations: usize,
    /// First step number in the window.
    pub window_first: i64,
    /// Last step number in the window.
    pub window_last: i64,
    /// Steady-state regions as [first, last] step numbers.
    pub regions: Vec<[i64; 2]>,
    /// No region was found: TraceLens's fallback kept the middle.
    pub fallback: bool,
    /// Peak concurrency (context + generation requests).
    pub peak_requests: u64,
    /// An iteration within this many requests of the peak is near it.
    pub tolerance: f64,
    /// Share of prefill-bearing iterations over all regions (the window's target).
    pub reference_prefill_share: f64,
    /// That share in the window.
    pub window_prefill_share: f64,
    /// Prefill / decode / mixed / other iterations in the window.
    pub window_phases: [usize; 4],
    /// What the window leaves out.
    pub excluded: Vec<ExcludedJson>,
    /// Averages over the window.
    pub mean: MeansJson,
    /// Matching annotations inside an earlier one (ignored).
    pub nested_ignored: usize,
    /// Native-format annotations ignored because detailed ones exist.
    pub secondary_ignored: usize,
}

fn mean(v: &[&PartsJson], f: impl Fn(&PartsJson) -> i64) -> i64 {
    if v.is_empty() {
        return 0;
    }
    v.iter().map(|p| f(p)).sum::<i64>() / v.len() as i64
}

/// Labels `rows` (one per iteration, in order) and computes the window; `None` when the
/// rows are not the iterations.
pub fn label(c: &Capture, its: &Iterations, rows: &mut [StepJson]) -> Option<ServingJson> {
    if its.list.len() != rows.len() || rows.is_empty() {
        return None;
    }
    let details: Vec<Detail> = its
        .list
        .iter()
        .map(|s| Detail {
            requests: s.it.requests(),
            has_context: s.it.context_requests > 0,
        })
        .collect();
    let w = steady::window(&details, steady::NUM_STEPS)?;
    let numbers: Vec<i64> = rows.iter().map(|r| r.step).collect();
    let num = |i: usize| numbers.get(i).copied().unwrap_or(i as i64);
    let mut phases = [0usize; 4];
    for (k, (s, r)) in its.list.iter().zip(rows.iter_mut()).enumerate() {
        let in_window = k >= w.start && k < w.end;
        if in_window {
            phases[s.it.phase() as usize] += 1;
        }
        r.iteration = Some(IterationJson {
            phase: s.it.phase(),
            format: s.it.format,
            context_requests: s.it.context_requests,
            generation_requests: s.it.generation_requests,
            context_tokens: s.it.context_tokens,
            generation_tokens: s.it.generation_tokens,
            batch_size: s.it.batch_size,
            aggregates: s.it.has_sqsk.then_some(s.it.agg),
            in_window,
            annotation: c.strings.get(s.name).to_string(),
        });
    }
    let win: Vec<&StepJson> = rows
        .iter()
        .filter(|r| r.iteration.as_ref().is_some_and(|i| i.in_window))
        .collect();
    let parts: Vec<&PartsJson> = win
        .iter()
        .filter(|r| r.parts.device_data)
        .map(|r| &r.parts)
        .collect();
    let durs: Vec<i64> = win.iter().map(|r| r.dur_ns).collect();
    let means = MeansJson {
        steps: win.len(),
        dur_ns: if durs.is_empty() {
            0
        } else {
            durs.iter().sum::<i64>() / durs.len() as i64
        },
        compute_ns: mean(&parts, |p| p.compute_ns),
        exposed_communication_ns: mean(&parts, |p| p.exposed_communication_ns),
        memory_ns: mean(&parts, |p| p.memory_ns),
        idle_ns: mean(&parts, |p| p.idle_ns),
        host_wait_ns: mean(&parts, |p| p.host_wait_ns),
    };
    Some(ServingJson {
        iterations: its.list.len(),
        window_first: num(w.start),
        window_last: num(w.end.saturating_sub(1)),
        regions: w
            .regions
            .iter()
            .map(|&(a, b)| [num(a), num(b.saturating_sub(1).max(a))])
            .collect(),
        fallback: w.fallback,
        peak_requests: w.peak_requests,
        tolerance: w.tolerance,
        reference_prefill_share: w.reference_ratio,
        window_prefill_share: w.window_ratio,
        window_phases: phases,
        excluded: w
            .excluded
            .iter()
            .map(|x| ExcludedJson {
                first: num(x.first),
                last: num(x.last),
                reason: x.reason,
                why: x.reason.describe().to_string(),
            })
            .collect(),
        mean: means,
        nested_ignored: its.nested,
        secondary_ignored: its.secondary_ignored,
    })
}

/// The label columns of one step for people: phase, requests (context + generation), tokens.
pub fn columns(r: &StepJson) -> [String; 3] {
    match &r.iteration {
        Some(i) => [
            format!("{}{}", i.phase.name(), if i.in_window { "" } else { " ·" }),
            format!("{}+{}", i.context_requests, i.generation_requests),
            format!("{}+{}", i.context_tokens, i.generation_tokens),
        ],
        None => Default::default(),
    }
}

/// The steady-state lines for people.
pub fn render(s: &ServingJson) -> String {
    let d = |v: i64| text::dur(v as f64 * 1000.0);
    let m = &s.mean;
    let mut o = format!(
        "   steady state (TraceLens): iterations {}–{} ({} of {}; {} prefill, {} decode, {} mixed), \
         peak {} requests ±{:.0}, prefill share {:.2} (target {:.2})\n",
        s.window_first,
        s.window_last,
        m.steps,
        s.iterations,
        s.window_phases[0],
        s.window_phases[1],
        s.window_phases[2],
        s.peak_requests,
        s.tolerance,
        s.window_prefill_share,
        s.reference_prefill_share,
    );
    o.push_str(&format!(
        "   mean over the window: {}  compute {}  exp.comm {}  memory {}  idle {}  host wait {}\n",
        d(m.dur_ns),
        d(m.compute_ns),
        d(m.exposed_communication_ns),
        d(m.memory_ns),
        d(m.idle_ns),
        d(m.host_wait_ns),
    ));
    for x in &s.excluded {
        let which = if x.first == x.last {
            format!("iteration {}", x.first)
        } else {
            format!("iterations {}–{}", x.first, x.last)
        };
        o.push_str(&format!("   left out: {which}: {} (·)\n", x.why));
    }
    if s.nested_ignored + s.secondary_ignored > 0 {
        o.push_str(&format!(
            "   ignored: {} iteration annotations inside another, {} of a native format beside detailed ones\n",
            s.nested_ignored, s.secondary_ignored
        ));
    }
    o
}
