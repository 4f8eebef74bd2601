//! `device_idle`: the device is idle for a large share of the step; the idle time split by
//! cause (HTA's idle breakdown: host wait, kernel wait, other) and the input pipeline's share
//! (data-loader / iterator annotations). Measured by the per-step device parts (`steps`).

use super::{Ctx, Finding, Framework, mean, pct, step_label};
use crate::model::Ps;

/// Below this device utilisation the rule fires.
pub(super) const MAX_BUSY: f64 = 0.5;
/// Threshold text with its source.
pub(super) const THRESHOLD: &str = "device busy < 50 % of the step (PyTorch TensorBoard \
plugin's low-GPU-utilisation recommendation; nsys analyze gpu_time_util, 50 %); input wait \
shown when ≥ 5 % of the step (TensorBoard plugin's DataLoader recommendation)";

pub(super) fn rule(ctx: &Ctx) -> Option<Finding> {
    let mut fired = Vec::new();
    let (mut idle, mut host, mut kernel, mut other, mut input) = (0, 0, 0, 0, 0);
    let mut savings: Vec<Ps> = Vec::new();
    for (i, parts) in ctx.parts.iter().enumerate() {
        let d = ctx.steps[i].dur();
        // The busiest device of the step.
        let Some(dev) = parts.devices.iter().min_by_key(|p| p.idle) else {
            continue;
        };
        let busy = d - dev.idle;
        if d <= 0 || busy <= 0 || (busy as f64) >= MAX_BUSY * d as f64 {
            continue;
        }
        fired.push(ctx.steps[i].number);
        savings.push(dev.idle);
        idle += dev.idle;
        host += dev.host_wait;
        kernel += dev.kernel_wait;
        other += dev.idle_other;
        input += parts.input;
    }
    if fired.is_empty() {
        return None;
    }
    let n = fired.len() as Ps;
    let step = ctx.mean_step();
    let fstep = ctx.mean_step_of(&fired);
    let mut title = format!(
        "{}: the device is idle {} % of each step: {} % waiting for the host to launch, {} % \
         between back-to-back kernels, {} % other (syncs, other streams)",
        step_label(&fired),
        pct(idle / n, fstep),
        pct(host / n, fstep),
        pct(kernel / n, fstep),
        pct(other / n, fstep),
    );
    let input_pct = pct(input / n, fstep);
    if input_pct >= 5 {
        title.push_str(&format!("; input loading takes {input_pct} % of the step"));
    }
    let fix = match ctx.framework {
        Framework::Torch => {
            let mut f = String::from(
                "host wait: see host_bound (CUDA graphs, torch.compile, larger batches); other: \
                 remove synchronisations (see sync_in_step); ",
            );
            if input_pct >= 5 {
                f.push_str("input: DataLoader(num_workers>0, pin_memory=True, prefetch_factor)");
            } else {
                f.push_str("kernel wait: fuse kernels (torch.compile)");
            }
            f
        }
        Framework::Xla => "host wait: jit larger steps, prefetch input (tf.data prefetch, \
            jax device_put ahead of the step); other: avoid blocking on results \
            (block_until_ready, printing device values) inside the step"
            .into(),
        Framework::Other => "keep the device's queue full: fewer host round trips, \
            prefetch input"
            .into(),
    };
    let tracks: Vec<u32> = ctx.gpu.streams.iter().map(|s| s.track).collect();
    let event_ids = longest_gaps(ctx, &fired, 10);
    Some(Finding {
        rule: "device_idle",
        title,
        saving: mean(savings.into_iter(), ctx.steps.len()),
        saving_how: "the device's idle time in the step (the most any change could fill)",
        step,
        steps: fired,
        event_ids,
        tracks,
        analysis: "steps",
        fix,
        threshold: THRESHOLD,
    })
}

/// The activities that end the `k` longest idle gaps of a stream inside the fired steps
/// (longest first): where the device waited.
fn longest_gaps(ctx: &Ctx, fired: &[i64], k: usize) -> Vec<u32> {
    let a = &ctx.gpu.acts;
    let mut gaps: Vec<(Ps, u32)> = Vec::new();
    for st in ctx.steps.iter().filter(|s| fired.contains(&s.number)) {
        for info in &ctx.gpu.streams {
            let mut prev_end: Option<Ps> = None;
            for i in info.rows.0..info.rows.1 {
                if a.end[i] <= st.start || a.start[i] >= st.end {
                    continue;
                }
                let from = prev_end.unwrap_or(st.start).max(st.start);
                if a.start[i] > from {
                    gaps.push((a.start[i] - from, a.slice[i]));
                }
                prev_end = Some(prev_end.map_or(a.end[i], |p| p.max(a.end[i])));
            }
        }
    }
    gaps.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    gaps.into_iter().take(k).map(|g| g.1).collect()
}
