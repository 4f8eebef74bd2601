//! `alloc_in_step`: device allocator calls inside steps (`cudaMalloc`, `cudaFree`,
//! `cudaMallocHost`, `cudaHostAlloc`, `hipMalloc`, `hipFree`, …). `cudaFree` synchronises the
//! device and `cudaMalloc` takes milliseconds; PyTorch's caching allocator calls them when its
//! cache misses (a new peak, fragmentation, `empty_cache()`). Saving: the calls' host time.

use super::{Ctx, Finding, Framework, mean, short, slices_by_step, step_label, tracks_of};
use crate::model::{Category, Ps};

/// Threshold text with its source.
pub(super) const THRESHOLD: &str = "any cudaMalloc / cudaFree / cudaMallocHost / cudaHostAlloc \
/ cudaFreeHost / hipMalloc / hipFree call inside a step (PyTorch CUDA semantics docs: the \
caching allocator avoids them in steady state; nsys analyze cuda_api_sync counts cudaFree as \
synchronising)";

/// True for an allocator runtime call.
fn is_alloc(name: &str) -> bool {
    matches!(
        name,
        "cudaMalloc"
            | "cudaFree"
            | "cudaMallocHost"
            | "cudaHostAlloc"
            | "cudaFreeHost"
            | "cudaMallocManaged"
            | "cudaMallocPitch"
            | "cuMemAlloc"
            | "cuMemAlloc_v2"
            | "cuMemFree"
            | "cuMemFree_v2"
            | "hipMalloc"
            | "hipFree"
            | "hipHostMalloc"
            | "hipHostFree"
    )
}

pub(super) fn rule(ctx: &Ctx) -> Option<Finding> {
    let c = ctx.c;
    let by_step = slices_by_step(ctx, &[Category::Runtime, Category::Driver], is_alloc);
    let mut fired = Vec::new();
    let mut savings: Vec<Ps> = Vec::new();
    let mut ev: Vec<(Ps, u32)> = Vec::new();
    let mut count = 0usize;
    for (k, ids) in by_step.iter().enumerate() {
        if ids.is_empty() {
            continue;
        }
        let s: Ps = ids.iter().map(|&id| c.slices.dur[id as usize]).sum();
        fired.push(ctx.steps[k].number);
        savings.push(s);
        count += ids.len();
        ev.extend(ids.iter().map(|&id| (c.slices.dur[id as usize], id)));
    }
    if fired.is_empty() {
        return None;
    }
    ev.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let event_ids: Vec<u32> = ev.iter().take(10).map(|e| e.1).collect();
    let tracks = tracks_of(c, &event_ids);
    let total: Ps = ev.iter().map(|e| e.0).sum();
    let n = fired.len() as Ps;
    let top = event_ids.first().map_or(String::new(), |&id| {
        format!(
            "; the longest: {} ({})",
            short(c.slice_name(id), 40),
            crate::analysis::advise::fmt_ms(c.slices.dur[id as usize])
        )
    });
    let title = format!(
        "{}: {} device allocator calls (cudaMalloc / cudaFree …) take {} per step{}",
        step_label(&fired),
        count / fired.len(),
        crate::analysis::advise::fmt_ms(total / n),
        top
    );
    let fix = match ctx.framework {
        Framework::Torch => {
            "keep the caching allocator warm: no torch.cuda.empty_cache() in the \
            loop, allocate fixed-size buffers once, try \
            PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation, profile \
            after the first steps (warm-up allocates)"
        }
        Framework::Xla => "preallocate device memory (XLA_PYTHON_CLIENT_PREALLOCATE)",
        Framework::Other => "allocate device memory once, outside the steps",
    };
    Some(Finding {
        rule: "alloc_in_step",
        title,
        saving: mean(savings.into_iter(), ctx.steps.len()),
        saving_how: "the allocator calls' host time (cudaFree also waits for the device)",
        step: ctx.mean_step(),
        steps: fired,
        event_ids,
        tracks,
        analysis: "search",
        fix: fix.into(),
        threshold: THRESHOLD,
    })
}
