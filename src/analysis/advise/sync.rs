//! `sync_in_step`: host calls inside a step that block until the device catches up —
//! `cuda*Synchronize`, synchronous `cudaMemcpy`/`cudaMemset` (`.item()`, `.cpu()`,
//! `nonzero` reach these) — with the outermost operator and Python line around each, and the
//! time waited (the calls' durations).

use super::{
    Ctx, Finding, Framework, mean, pct, python_site, short, slices_by_step, step_label, tracks_of,
};
use crate::analysis::critical::classify::outermost_op;
use crate::model::{Category, Ps};
use rustc_hash::FxHashMap;

/// Threshold text with its source.
pub(super) const THRESHOLD: &str = "any synchronising runtime call inside a step \
(nsys analyze cuda_api_sync and cuda_memcpy_sync / cuda_memset_sync rules)";

/// True for a runtime/driver call that blocks the host until the device is done.
pub(crate) fn is_sync_call(name: &str) -> bool {
    let n = name.strip_prefix("cu").unwrap_or(name);
    let n = n.strip_prefix("da").unwrap_or(n);
    matches!(
        n,
        "DeviceSynchronize" | "StreamSynchronize" | "EventSynchronize" | "CtxSynchronize"
    ) || matches!(
        name,
        "cudaMemcpy"
            | "cudaMemset"
            | "cuMemcpyDtoH_v2"
            | "cuMemcpyHtoD_v2"
            | "cuMemcpy"
            | "hipDeviceSynchronize"
            | "hipStreamSynchronize"
            | "hipEventSynchronize"
            | "hipMemcpy"
    )
}

/// (operator name, Python site name) → (waited ps, longest operator id, calls).
type Sites = FxHashMap<(u32, Option<u32>), (Ps, u32, u64)>;

pub(super) fn rule(ctx: &Ctx) -> Option<Finding> {
    let c = ctx.c;
    let by_step = slices_by_step(ctx, &[Category::Runtime, Category::Driver], is_sync_call);
    let mut fired = Vec::new();
    let mut savings: Vec<Ps> = Vec::new();
    // Waited time per (outermost op, Python site).
    let mut sites: Sites = FxHashMap::default();
    let mut calls = 0u64;
    for (k, ids) in by_step.iter().enumerate() {
        if ids.is_empty() {
            continue;
        }
        let waited: Ps = ids.iter().map(|&id| c.slices.dur[id as usize]).sum();
        if waited <= 0 {
            continue;
        }
        fired.push(ctx.steps[k].number);
        savings.push(waited);
        calls += ids.len() as u64;
        for &id in ids {
            let op = outermost_op(c, id);
            let site = python_site(c, id);
            let op_name = c.slices.name[op as usize];
            // Group by the operator's name and site, keep the longest instance as evidence.
            let key = (op_name.0, site.map(|s| c.slices.name[s as usize].0));
            let slot = sites.entry(key).or_insert((0, op, 0));
            slot.0 += c.slices.dur[id as usize];
            slot.2 += 1;
            if c.slices.dur[op as usize] > c.slices.dur[slot.1 as usize] {
                slot.1 = op;
            }
        }
    }
    if fired.is_empty() {
        return None;
    }
    let mut ranked: Vec<_> = sites.into_iter().collect();
    ranked.sort_unstable_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
    let step = ctx.mean_step();
    let saving = mean(savings.into_iter(), ctx.steps.len());
    let top = &ranked[0];
    let top_op = c.slice_name(top.1.1);
    let site_text = python_site(c, top.1.1)
        .map(|s| format!(" at {}", short(c.slice_name(s), 80)))
        .unwrap_or_default();
    let title = format!(
        "{}: {} synchronising call{} wait {} % of the step; the most under {}{} ({} % of the \
         waited time)",
        step_label(&fired),
        calls,
        if calls == 1 { "" } else { "s" },
        pct(saving, step),
        short(top_op, 60),
        site_text,
        pct(top.1.0, ranked.iter().map(|r| r.1.0).sum()),
    );
    let event_ids: Vec<u32> = ranked.iter().take(10).map(|r| r.1.1).collect();
    let tracks = tracks_of(c, &event_ids);
    let fix = match ctx.framework {
        Framework::Torch => {
            "keep values on the device: avoid .item(), .cpu(), .tolist(), \
            print(tensor), torch.nonzero / boolean-mask indexing and torch.cuda.synchronize() \
            inside the step; log metrics every N steps; use non_blocking copies to pinned memory"
        }
        Framework::Xla => {
            "avoid block_until_ready, device_get and printing device arrays \
            inside the step; fetch metrics every N steps"
        }
        Framework::Other => "take synchronising calls out of the step",
    };
    Some(Finding {
        rule: "sync_in_step",
        title,
        saving,
        saving_how: "the synchronising calls' durations (the time the host waited)",
        step,
        steps: fired,
        event_ids,
        tracks,
        analysis: "search",
        fix: fix.into(),
        threshold: THRESHOLD,
    })
}
