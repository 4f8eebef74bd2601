//! `exposed_comm`: collectives the device waits on — communication kernels not overlapped by
//! compute (HTA's comm/compute overlap, `steps`' exposed communication part). Saving: the
//! exposed communication time of the step's busiest-communicating device (what full overlap
//! with compute would hide).

use super::{Ctx, Finding, Framework, mean, pct, short, slices_by_step, step_label, tracks_of};
use crate::analysis::gpu::classify::{KernelClass, classify};
use crate::model::{Category, Ps};

/// Share of the step from which exposed communication fires.
pub(super) const MIN_SHARE: f64 = 0.05;
/// Threshold text with its source.
pub(super) const THRESHOLD: &str = "communication kernels (HTA's names: nccl*, *ncclKernel*, \
hccl*, hip*) not overlapped by compute ≥ 5 % of the step (HTA get_comm_comp_overlap measures \
the overlap without a cut-off; 5 % is tracetui's, the band of the input-wait hint)";

pub(super) fn rule(ctx: &Ctx) -> Option<Finding> {
    let mut fired = Vec::new();
    let mut savings: Vec<Ps> = Vec::new();
    let (mut comm, mut exposed) = (0, 0);
    for (i, parts) in ctx.parts.iter().enumerate() {
        let d = ctx.steps[i].dur();
        let Some(dev) = parts
            .devices
            .iter()
            .filter(|p| p.has_data())
            .max_by_key(|p| p.exposed_communication)
        else {
            continue;
        };
        if d <= 0 || (dev.exposed_communication as f64) < MIN_SHARE * d as f64 {
            continue;
        }
        fired.push(ctx.steps[i].number);
        savings.push(dev.exposed_communication);
        comm += dev.communication;
        exposed += dev.exposed_communication;
    }
    if fired.is_empty() {
        return None;
    }
    let c = ctx.c;
    // The longest communication kernels of the fired steps.
    let by_step = slices_by_step(ctx, &[Category::Kernel, Category::Collective], |n| {
        classify(n) == KernelClass::Communication
    });
    let mut ev: Vec<(Ps, u32)> = Vec::new();
    for (k, ids) in by_step.iter().enumerate() {
        if !fired.contains(&ctx.steps[k].number) {
            continue;
        }
        ev.extend(ids.iter().map(|&id| (c.slices.dur[id as usize], id)));
    }
    ev.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let event_ids: Vec<u32> = ev.iter().take(10).map(|e| e.1).collect();
    let tracks = tracks_of(c, &event_ids);
    let n = fired.len() as Ps;
    let fstep = ctx.mean_step_of(&fired);
    let overlap = if comm > 0 {
        pct(comm - exposed, comm)
    } else {
        0
    };
    let title = format!(
        "{}: collectives take {} % of each step and {} % is exposed (the device does nothing \
         else meanwhile; {} % of communication overlaps compute){}",
        step_label(&fired),
        pct(comm / n, fstep),
        pct(exposed / n, fstep),
        overlap,
        event_ids.first().map_or(String::new(), |&id| format!(
            "; the longest: {}",
            short(c.slice_name(id), 60)
        )),
    );
    let fix = match ctx.framework {
        Framework::Torch => {
            "overlap communication with compute: DDP buckets (bucket_cap_mb, \
            gradient_as_bucket_view=True) so all-reduce starts during backward, FSDP \
            backward_prefetch / forward_prefetch, fewer and larger collectives; raise the \
            per-GPU batch so compute covers the transfer"
        }
        Framework::Xla => {
            "let XLA overlap collectives (latency-hiding scheduler, async \
            collectives), reshard to move less data, raise the per-device batch"
        }
        Framework::Other => "overlap collectives with compute; move less data per step",
    };
    Some(Finding {
        rule: "exposed_comm",
        title,
        saving: mean(savings.into_iter(), ctx.steps.len()),
        saving_how: "communication time not overlapped by compute on the device (what full \
                     overlap would hide)",
        step: ctx.mean_step(),
        steps: fired,
        event_ids,
        tracks,
        analysis: "steps",
        fix: fix.into(),
        threshold: THRESHOLD,
    })
}
