//! `unfused_optimizer`: optimizer steps (`Optimizer.step#…` annotations) whose update runs as
//! many kernels — a for-loop or foreach (multi-tensor) implementation — rather than a fused
//! one. Saving: the annotation's wall time minus the device time of the kernels it launched
//! (the launch and framework overhead a fused step removes), per step.

use super::{Ctx, Finding, Framework, mean, pct, slices_by_step, step_label};
use crate::analysis::gpu::temporal::UnionLen;
use crate::model::{Category, NO_SLICE, Ps};

/// Threshold text with its source.
pub(super) const THRESHOLD: &str = "an Optimizer.step annotation launching more than one \
kernel, no kernel named fused and no Fused optimizer in its name (PyTorch torch.optim docs: fused > foreach > for-loop)";

pub(super) fn rule(ctx: &Ctx) -> Option<Finding> {
    let c = ctx.c;
    let g = &ctx.gpu;
    let a = &g.acts;
    let by_step = slices_by_step(ctx, &[Category::UserAnnotation, Category::CpuOp], |n| {
        n.starts_with("Optimizer.step#")
    });
    // (track, start, end, step index, optimizer slice) of every optimizer step.
    let mut opts: Vec<(u32, Ps, Ps, usize, u32)> = Vec::new();
    for (k, ids) in by_step.iter().enumerate() {
        for &id in ids {
            let i = id as usize;
            opts.push((c.track_of(id), c.slices.start[i], c.slices.end(i), k, id));
        }
    }
    // Outermost only: an annotation inside another on the same thread is the same step.
    opts.sort_unstable_by_key(|o| (o.0, o.1, std::cmp::Reverse(o.2)));
    let mut outer: Vec<(u32, Ps, Ps, usize, u32)> = Vec::with_capacity(opts.len());
    for o in opts {
        if outer
            .last()
            .is_some_and(|p| p.0 == o.0 && p.1 <= o.1 && o.2 <= p.2)
        {
            continue;
        }
        outer.push(o);
    }
    let opts = outer;
    if opts.is_empty() {
        return None;
    }
    // Device intervals and kernel counts per optimizer step.
    let mut spans: Vec<Vec<(Ps, Ps)>> = vec![Vec::new(); opts.len()];
    let mut fused = vec![false; opts.len()];
    for i in 0..a.len() {
        let l = a.launch[i];
        if l == NO_SLICE {
            continue;
        }
        let (ls, lt) = (c.slices.start[l as usize], c.track_of(l));
        if let Some(j) = opts.iter().position(|o| o.0 == lt && o.1 <= ls && ls < o.2) {
            spans[j].push((a.start[i], a.end[i]));
            if c.slice_name(a.slice[i])
                .to_ascii_lowercase()
                .contains("fused")
            {
                fused[j] = true;
            }
        }
    }
    let n = ctx.steps.len();
    let mut per_step: Vec<Ps> = vec![0; n];
    let mut kernels = 0usize;
    let mut counted = 0usize;
    let mut wall: Ps = 0;
    let mut ids: Vec<(Ps, u32)> = Vec::new();
    for (j, o) in opts.iter().enumerate() {
        // apex's FusedAdam names its step `Optimizer.step#FusedAdam.step`.
        if fused[j] || spans[j].len() < 2 || c.slice_name(o.4).contains("Fused") {
            continue;
        }
        let s = &mut spans[j];
        s.sort_unstable();
        let mut u = UnionLen::default();
        for &(x, y) in s.iter() {
            u.push(x, y);
        }
        let over = (o.2 - o.1) - u.len();
        if over <= 0 {
            continue;
        }
        per_step[o.3] += over;
        kernels += s.len();
        counted += 1;
        wall += o.2 - o.1;
        ids.push((over, o.4));
    }
    let fired: Vec<i64> = (0..n)
        .filter(|&k| per_step[k] > 0)
        .map(|k| ctx.steps[k].number)
        .collect();
    if fired.is_empty() {
        return None;
    }
    ids.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    let event_ids: Vec<u32> = ids.iter().take(10).map(|x| x.1).collect();
    let tracks: Vec<u32> = {
        let mut t: Vec<u32> = event_ids.iter().map(|&id| c.track_of(id)).collect();
        t.dedup();
        t
    };
    let step = ctx.mean_step();
    let saving = mean(per_step.into_iter(), n);
    let name = event_ids.first().map_or("", |&id| c.slice_name(id));
    let title = format!(
        "{}: {} takes {} % of the step and launches {} kernels, none fused; {} % of its wall time \
         has no kernel of its own running",
        step_label(&fired),
        name,
        pct(wall / fired.len() as Ps, ctx.mean_step_of(&fired)),
        kernels / counted.max(1),
        pct(saving * n as Ps, wall),
    );
    let fix = match ctx.framework {
        Framework::Torch => {
            "construct the optimizer with fused=True (Adam, AdamW, SGD on CUDA) \
            or foreach=True where fused is not available; or torch.compile the optimizer step"
        }
        Framework::Xla => {
            "jit the optimizer update with the train step (optax inside the jitted \
            step)"
        }
        Framework::Other => "use a fused optimizer",
    };
    Some(Finding {
        rule: "unfused_optimizer",
        title,
        saving,
        saving_how: "the optimizer step's wall time minus the device time of its own kernels",
        step,
        steps: fired,
        event_ids,
        tracks,
        analysis: "gpu",
        fix: fix.into(),
        threshold: THRESHOLD,
    })
}
