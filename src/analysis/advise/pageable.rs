//! `pageable_copy`: host↔device copies from or to pageable (unpinned) host memory. The driver
//! stages them through a pinned buffer and the host call blocks, so they neither overlap
//! compute nor run at the link's speed. Saving: the copies' device time.

use super::{Ctx, Finding, Framework, mean, pct, slices_by_step, step_label, tracks_of};
use crate::model::{Category, Ps};

/// Threshold text with its source.
pub(super) const THRESHOLD: &str = "any host↔device copy with pageable host memory inside a \
step (nsys analyze cuda_memcpy_async rule: async memcpy with pageable memory)";

pub(super) fn rule(ctx: &Ctx) -> Option<Finding> {
    let c = ctx.c;
    let by_step = slices_by_step(ctx, &[Category::Memcpy], |n| n.contains("Pageable"));
    let mut fired = Vec::new();
    let mut savings: Vec<Ps> = Vec::new();
    let mut all: Vec<u32> = Vec::new();
    for (k, ids) in by_step.iter().enumerate() {
        let t: Ps = ids.iter().map(|&id| c.slices.dur[id as usize]).sum();
        if ids.is_empty() || t <= 0 {
            continue;
        }
        fired.push(ctx.steps[k].number);
        savings.push(t);
        all.extend(ids);
    }
    if fired.is_empty() {
        return None;
    }
    let count = all.len();
    let bytes_dir = |id: &u32| c.slice_name(*id).contains("HtoD");
    let h2d = all.iter().filter(|id| bytes_dir(id)).count();
    all.sort_unstable_by(|a, b| {
        c.slices.dur[*b as usize]
            .cmp(&c.slices.dur[*a as usize])
            .then(a.cmp(b))
    });
    let event_ids: Vec<u32> = all.iter().take(10).copied().collect();
    let tracks = tracks_of(c, &event_ids);
    let step = ctx.mean_step();
    let saving = mean(savings.into_iter(), ctx.steps.len());
    let title = format!(
        "{}: {} copies with pageable host memory ({} host→device, {} device→host) take {} % \
         of the step on the device",
        step_label(&fired),
        count,
        h2d,
        count - h2d,
        pct(saving, step)
    );
    let fix = match ctx.framework {
        Framework::Torch => {
            "pin host tensors (DataLoader(pin_memory=True), tensor.pin_memory()) \
            and copy with .to(device, non_blocking=True); for device→host, copy into a pinned \
            buffer (torch.empty(..., pin_memory=True).copy_(x, non_blocking=True))"
        }
        Framework::Xla => {
            "let the framework stage transfers (jax.device_put ahead of use, \
            tf.data prefetch_to_device)"
        }
        Framework::Other => "use pinned (page-locked) host buffers for device copies",
    };
    Some(Finding {
        rule: "pageable_copy",
        title,
        saving,
        saving_how: "the pageable copies' device time (an upper bound: pinned copies run faster \
            and overlap compute)",
        step,
        steps: fired,
        event_ids,
        tracks,
        analysis: "gpu",
        fix: fix.into(),
        threshold: THRESHOLD,
    })
}
