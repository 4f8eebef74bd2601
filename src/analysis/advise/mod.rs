//! `advise`: what to change, ranked by the time each change would save per step
//! (docs/advise.md).
//!
//! Every rule reads an existing analysis — the critical path ([`crate::analysis::critical`]),
//! the per-step device parts ([`crate::analysis::steps::parts`], HTA's idle breakdown), the
//! launch records ([`crate::analysis::gpu`]) — and turns what it measured into a [`Finding`]:
//! the saving is an upper bound computed from the trace (idle time a change could remove,
//! the time a sync waited), never a guess. One file per rule.

mod alloc;
mod device_idle;
mod exposed_comm;
mod fp32_matmul;
mod host_bound;
mod input_wait;
mod optimizer;
mod outside_graphs;
mod pageable;
mod short_kernels;
mod sync;
mod xla;

use crate::analysis::critical::{self, Options as CriticalOptions, StepPath};
use crate::analysis::gpu::GpuOptions;
use crate::analysis::gpu::streams::{self, GpuStreams};
use crate::analysis::rank::par2;
use crate::analysis::steps::{self as step_parts, Step, StepOptions, StepParts, Steps};
use crate::model::{Capture, Category, Format, Ps, StrId};
use rustc_hash::FxHashMap;

/// The framework a capture came from, for the `fix` text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framework {
    /// PyTorch (Kineto JSON).
    Torch,
    /// JAX / TensorFlow (XPlane).
    Xla,
    /// Anything else (Chrome JSON).
    Other,
}

/// One finding: a rule that fired, with its evidence and estimated saving.
#[derive(Clone, Debug)]
pub struct Finding {
    /// Rule id (`host_bound`, `device_idle`, …).
    pub rule: &'static str,
    /// One sentence with the numbers.
    pub title: String,
    /// Estimated saving per step (mean over the analysed steps), ps: an upper bound.
    pub saving: Ps,
    /// How the saving was estimated.
    pub saving_how: &'static str,
    /// Mean step wall time of the analysed steps, ps.
    pub step: Ps,
    /// Step numbers where the rule fired.
    pub steps: Vec<i64>,
    /// Slice ids of the top events that prove it (the ids the explorer and `search` use).
    pub event_ids: Vec<u32>,
    /// Tracks involved (track indices).
    pub tracks: Vec<u32>,
    /// Which analysis measured it (`critical`, `steps`, `gpu`, …).
    pub analysis: &'static str,
    /// What to try, in the capture's framework.
    pub fix: String,
    /// The threshold that made the rule fire, with its source.
    pub threshold: &'static str,
}

/// What the rules share for one capture: the steps, their critical paths, device parts and
/// GPU streams, each computed once.
pub struct Ctx<'a> {
    /// The capture.
    pub c: &'a Capture,
    /// The analysed steps (complete ones; the partial last step only when it is the only one).
    pub steps: Vec<Step>,
    /// Critical path per analysed step (same order).
    pub paths: Vec<StepPath>,
    /// Device parts per analysed step (same order).
    pub parts: Vec<StepParts>,
    /// GPU streams with activities and launches.
    pub gpu: GpuStreams,
    /// The framework, for the fix text.
    pub framework: Framework,
}

impl<'a> Ctx<'a> {
    /// Computes the shared analyses over `steps` (already restricted to the wanted range).
    pub fn new(c: &'a Capture, steps: &Steps, step_opts: &StepOptions) -> Ctx<'a> {
        let complete: Vec<Step> = steps.steps.iter().filter(|s| !s.partial).copied().collect();
        let chosen = if complete.is_empty() {
            steps.steps.clone()
        } else {
            complete
        };
        let sel = Steps {
            source: steps.source,
            steps: chosen.clone(),
        };
        let copts = CriticalOptions {
            top: 20,
            ..CriticalOptions::default()
        };
        // The critical paths (the most work: a graph per step) beside the streams and device
        // parts; the paths of the two halves of the steps on two threads.
        let (paths, (gpu, parts)) = par2(
            || {
                let half = sel.steps.len() / 2;
                if half == 0 {
                    return critical::analyze(c, &sel, &copts, None);
                }
                let part = |v: &[Step]| Steps {
                    source: sel.source,
                    steps: v.to_vec(),
                };
                let (a, b) = (part(&sel.steps[..half]), part(&sel.steps[half..]));
                let (mut pa, pb) = par2(
                    || critical::analyze(c, &a, &copts, None),
                    || critical::analyze(c, &b, &copts, None),
                );
                pa.extend(pb);
                pa
            },
            || {
                let gpu = streams::collect(c, &GpuOptions::default());
                let parts = step_parts::breakdown(c, &sel, step_opts, Some(&gpu));
                (gpu, parts)
            },
        );
        let framework = match c.format {
            Some(Format::XPlane) => Framework::Xla,
            Some(Format::Kineto) => Framework::Torch,
            _ => Framework::Other,
        };
        Ctx {
            c,
            steps: chosen,
            paths,
            parts,
            gpu,
            framework,
        }
    }

    /// The analysed step holding time `t` (steps are sorted and disjoint), if any.
    pub fn step_at(&self, t: Ps) -> Option<usize> {
        let k = self
            .steps
            .partition_point(|s| s.start <= t)
            .checked_sub(1)?;
        (t < self.steps[k].end).then_some(k)
    }

    /// Mean step wall time, ps.
    pub fn mean_step(&self) -> Ps {
        mean(self.steps.iter().map(|s| s.dur()), self.steps.len())
    }

    /// Mean wall time of the analysed steps numbered `fired`, ps (the denominator of a title's
    /// per-step shares).
    pub fn mean_step_of(&self, fired: &[i64]) -> Ps {
        let d: Vec<Ps> = self
            .steps
            .iter()
            .filter(|s| fired.contains(&s.number))
            .map(|s| s.dur())
            .collect();
        mean(d.iter().copied(), d.len())
    }

    /// Device busy time in step `i` (the device with the least idle), ps; 0 without devices.
    pub fn device_busy(&self, i: usize) -> Ps {
        let d = self.steps[i].dur();
        self.parts[i]
            .devices
            .iter()
            .map(|p| d - p.idle)
            .max()
            .unwrap_or(0)
    }
}

/// The tracks of `ids`, each once, in the order of first appearance.
pub(crate) fn tracks_of(c: &Capture, ids: &[u32]) -> Vec<u32> {
    let mut tracks: Vec<u32> = Vec::new();
    for &id in ids {
        let t = c.track_of(id);
        if !tracks.contains(&t) {
            tracks.push(t);
        }
    }
    tracks
}

/// Per-name tallies (count, Σ time, example event id) ranked by Σ time (ties: lower id first).
pub(crate) fn rank_names(names: FxHashMap<StrId, (u64, Ps, u32)>) -> Vec<(StrId, (u64, Ps, u32))> {
    let mut ranked: Vec<(StrId, (u64, Ps, u32))> = names.into_iter().collect();
    ranked.sort_unstable_by(|x, y| y.1.1.cmp(&x.1.1).then(x.1.2.cmp(&y.1.2)));
    ranked
}

/// Σ / n (0 for n = 0).
pub(crate) fn mean(v: impl Iterator<Item = Ps>, n: usize) -> Ps {
    if n == 0 { 0 } else { v.sum::<Ps>() / n as Ps }
}

/// The innermost Python frame around slice `id` outside torch itself (the user's line), if
/// the capture recorded stacks.
pub(crate) fn python_site(c: &Capture, id: u32) -> Option<u32> {
    c.ancestors(id).find(|&p| {
        c.slices.kind(p as usize) == Category::PythonFunction && {
            let n = c.slice_name(p);
            n.contains(".py(") && !n.contains("torch/") && !n.contains("site-packages")
        }
    })
}

/// "3", "3–5" or "3, 5, 9" for a list of step numbers.
pub fn step_label(steps: &[i64]) -> String {
    match steps {
        [] => String::new(),
        [a] => format!("step {a}"),
        _ => {
            let contiguous = steps.windows(2).all(|w| w[1] == w[0] + 1);
            let (first, last) = (steps[0], steps[steps.len() - 1]);
            if contiguous {
                format!("steps {first}–{last}")
            } else {
                let s: Vec<String> = steps.iter().map(|n| n.to_string()).collect();
                format!("steps {}", s.join(", "))
            }
        }
    }
}

/// `name` cut to `max` characters (with `…`), for titles: kernel names run to kilobytes.
pub(crate) fn short(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// A duration for titles: `6.009 s`, `1.234 ms`, `38.0 µs`.
pub(crate) fn fmt_ms(ps: Ps) -> String {
    let v = ps as f64;
    if v >= 1e12 {
        format!("{:.3} s", v / 1e12)
    } else if v >= 1e9 {
        format!("{:.3} ms", v / 1e9)
    } else {
        format!("{:.1} µs", v / 1e6)
    }
}

/// Percentage `part / whole` rounded to an integer.
pub(crate) fn pct(part: Ps, whole: Ps) -> i64 {
    if whole > 0 {
        (100.0 * part as f64 / whole as f64).round() as i64
    } else {
        0
    }
}

/// Every rule's findings over `ctx`, ranked by saving (largest first; ties by rule id).
pub fn advise(ctx: &Ctx) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    if ctx.steps.is_empty() {
        return out;
    }
    // The roofline (fp32_matmul) beside the other rules.
    let (rest, roof) = par2(
        || {
            [
                host_bound::rule(ctx),
                device_idle::rule(ctx),
                input_wait::rule(ctx),
                sync::rule(ctx),
                pageable::rule(ctx),
                short_kernels::rule(ctx),
                optimizer::rule(ctx),
                exposed_comm::rule(ctx),
                alloc::rule(ctx),
                xla::compile(ctx),
                xla::host_offload(ctx),
                outside_graphs::rule(ctx),
            ]
        },
        || fp32_matmul::rule(ctx),
    );
    out.extend(rest.into_iter().flatten());
    out.extend(roof);
    out.retain(|f| f.saving > 0);
    out.sort_by(|a, b| b.saving.cmp(&a.saving).then(a.rule.cmp(b.rule)));
    out
}

/// Slices whose category is in `cats` and whose name satisfies `pred` (asked once per
/// name), grouped by the analysed step they start in: `out[k]` holds step `k`'s ids.
pub(crate) fn slices_by_step(
    ctx: &Ctx,
    cats: &[Category],
    mut pred: impl FnMut(&str) -> bool,
) -> Vec<Vec<u32>> {
    let c = ctx.c;
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); ctx.steps.len()];
    let mut memo: FxHashMap<StrId, bool> = FxHashMap::default();
    let n = c.slices.start.len().min(c.slices.name.len());
    for i in 0..n {
        if !cats.contains(&c.slices.kind(i)) {
            continue;
        }
        let name = c.slices.name[i];
        let ok = *memo
            .entry(name)
            .or_insert_with(|| pred(c.strings.get(name)));
        if !ok {
            continue;
        }
        if let Some(k) = ctx.step_at(c.slices.start[i]) {
            out[k].push(i as u32);
        }
    }
    out
}
