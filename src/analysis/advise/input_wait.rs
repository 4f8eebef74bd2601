//! `input_wait`: the host spends a share of each step loading input (PyTorch's
//! `enumerate(DataLoader)#…`, tf.data's `IteratorGetNext` / `Iterator::…`), measured by the
//! per-step parts (`steps`: the union of input annotations clipped to the step). Saving: the
//! input time, at most the device's idle time in the step (loading the device does not wait
//! for costs nothing).

use super::{Ctx, Finding, Framework, mean, pct, slices_by_step, step_label};
use crate::analysis::steps::DEFAULT_INPUT_PATTERN;
use crate::model::{Category, Ps};

/// Threshold text with its source.
pub(super) const THRESHOLD: &str = "input annotations ≥ 5 % of the step while the device \
idles (PyTorch TensorBoard plugin's DataLoader recommendation, 5 %; XProf's input-bound \
classification)";

pub(super) fn rule(ctx: &Ctx) -> Option<Finding> {
    let n = ctx.steps.len();
    let mut fired = Vec::new();
    let mut savings: Vec<Ps> = Vec::new();
    let mut input: Ps = 0;
    for k in 0..n {
        let d = ctx.steps[k].dur();
        let busy = ctx.device_busy(k);
        let inp = ctx.parts[k].input;
        if busy <= 0 || d <= 0 || inp * 20 < d {
            continue;
        }
        let s = inp.min(d - busy);
        if s <= 0 {
            continue;
        }
        fired.push(ctx.steps[k].number);
        savings.push(s);
        input += inp;
    }
    if fired.is_empty() {
        return None;
    }
    let c = ctx.c;
    let re = regex::Regex::new(DEFAULT_INPUT_PATTERN).ok()?;
    let by_step = slices_by_step(
        ctx,
        &[Category::UserAnnotation, Category::CpuOp, Category::Other],
        |name| re.is_match(name),
    );
    let mut ids: Vec<u32> = by_step
        .iter()
        .enumerate()
        .filter(|(k, _)| fired.contains(&ctx.steps[*k].number))
        .flat_map(|(_, v)| v.iter().copied())
        .collect();
    ids.sort_unstable_by(|a, b| {
        c.slices.dur[*b as usize]
            .cmp(&c.slices.dur[*a as usize])
            .then(a.cmp(b))
    });
    ids.truncate(10);
    let mut tracks: Vec<u32> = ids.iter().map(|&id| c.track_of(id)).collect();
    tracks.sort_unstable();
    tracks.dedup();
    let step = ctx.mean_step();
    let saving = mean(savings.into_iter(), n);
    let title = format!(
        "{}: loading input takes {} % of each step on the host while the device idles",
        step_label(&fired),
        pct(input / fired.len() as Ps, ctx.mean_step_of(&fired)),
    );
    let fix = match ctx.framework {
        Framework::Torch => {
            "DataLoader(num_workers=N>0, pin_memory=True, persistent_workers=True, \
            prefetch_factor=2+); move decoding/augmentation to the workers or the GPU"
        }
        Framework::Xla => {
            "tf.data: .prefetch(tf.data.AUTOTUNE), parallel map \
            (num_parallel_calls=AUTOTUNE), cache; JAX: prefetch batches to the device ahead of \
            the step"
        }
        Framework::Other => "load input in parallel with the step and prefetch it",
    };
    Some(Finding {
        rule: "input_wait",
        title,
        saving,
        saving_how: "the input annotations' time in the step, at most the device's idle time",
        step,
        steps: fired,
        event_ids: ids,
        tracks,
        analysis: "steps",
        fix: fix.into(),
        threshold: THRESHOLD,
    })
}
