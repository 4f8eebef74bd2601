//! `short_kernels`: kernels that run for less time than their launch call (HTA's short-kernel
//! class of `cuda_kernel_launch_stats`). Launching them costs more host time than they give
//! the device; fusing them or capturing them in a graph removes the launches. Saving: their
//! launches' host time, at most the device's idle time in the step.

use super::{Ctx, Finding, Framework, mean, pct, rank_names, short, step_label, tracks_of};
use crate::analysis::gpu::GpuOptions;
use crate::analysis::gpu::launch::{LaunchCutoffs, LaunchRecord};
use crate::model::{NO_SLICE, Ps, StrId};
use rustc_hash::FxHashMap;

/// Threshold text with its source.
pub(super) const THRESHOLD: &str = "kernel duration < its launch call's duration, launch ≤ \
50 µs (HTA cuda_kernel_launch_stats short kernels, runtime_cutoff 50 µs)";

pub(super) fn rule(ctx: &Ctx) -> Option<Finding> {
    let c = ctx.c;
    let g = &ctx.gpu;
    let a = &g.acts;
    let o = GpuOptions::default();
    let cut = LaunchCutoffs {
        runtime: o.runtime_cutoff,
        delay: o.launch_delay_cutoff,
    };
    let n = ctx.steps.len();
    let mut launch_ps: Vec<Ps> = vec![0; n];
    let mut counts: Vec<u64> = vec![0; n];
    let mut total: Vec<u64> = vec![0; n];
    // Per kernel name: (count, Σ launch ps, longest-launch example id).
    let mut names: FxHashMap<StrId, (u64, Ps, u32)> = FxHashMap::default();
    for i in 0..a.len() {
        let l = a.launch[i];
        if l == NO_SLICE || !g.kind_of(c, l).stats {
            continue;
        }
        let span = g.host_span(c, l);
        let Some(k) = ctx.step_at(span.0) else {
            continue;
        };
        total[k] += 1;
        let r = LaunchRecord::new(i as u32, span, (a.start[i], a.end[i]));
        if !r.is_short(cut) {
            continue;
        }
        launch_ps[k] += r.cpu_dur;
        counts[k] += 1;
        let id = a.slice[i];
        let slot = names
            .entry(c.slices.name[id as usize])
            .or_insert((0, 0, id));
        slot.0 += 1;
        slot.1 += r.cpu_dur;
    }
    let mut fired = Vec::new();
    let mut savings: Vec<Ps> = Vec::new();
    let (mut n_short, mut all) = (0u64, 0u64);
    for k in 0..n {
        if counts[k] == 0 {
            continue;
        }
        let idle = (ctx.steps[k].dur() - ctx.device_busy(k)).max(0);
        let s = launch_ps[k].min(idle);
        if s <= 0 {
            continue;
        }
        fired.push(ctx.steps[k].number);
        savings.push(s);
        n_short += counts[k];
        all += total[k];
    }
    if fired.is_empty() {
        return None;
    }
    let ranked = rank_names(names);
    let event_ids: Vec<u32> = ranked.iter().take(10).map(|r| r.1.2).collect();
    let tracks = tracks_of(c, &event_ids);
    let step = ctx.mean_step();
    let saving = mean(savings.into_iter(), n);
    let f = fired.len() as u64;
    let title = format!(
        "{}: {} of {} kernels per step are shorter than their launch ({} % of launches; the \
         most: {} ×{})",
        step_label(&fired),
        n_short / f,
        all / f,
        pct(n_short as Ps, all as Ps),
        ranked
            .first()
            .map_or(String::new(), |r| short(c.strings.get(r.0), 60)),
        ranked.first().map_or(0, |r| r.1.0 / f),
    );
    let fix = match ctx.framework {
        Framework::Torch => {
            "fuse the small kernels (torch.compile), replay the step as a CUDA \
            graph, use fused / foreach variants (optimizer foreach=True or fused=True), batch \
            small tensors together"
        }
        Framework::Xla => {
            "let XLA fuse more (jit whole steps, avoid host callbacks splitting \
            modules)"
        }
        Framework::Other => "fuse small kernels or replay them as a graph",
    };
    Some(Finding {
        rule: "short_kernels",
        title,
        saving,
        saving_how: "the short kernels' launch time, at most the device's idle time in the step",
        step,
        steps: fired,
        event_ids,
        tracks,
        analysis: "gpu",
        fix: fix.into(),
        threshold: THRESHOLD,
    })
}
