//! `outside_graphs`: in a capture that replays CUDA/HIP graphs (serving engines, CUDA-graph
//! training), the kernels still launched one by one outside the graphs. Each costs a launch
//! call on the host that the graph replay would not; in PIECEWISE mode the ops left out of the
//! graphs (attention) and the eager work between iterations are what is left. Saving: those
//! launches' host time, at most the device's idle time in the step.

use super::{Ctx, Finding, Framework, mean, pct, rank_names, short, step_label, tracks_of};
use crate::analysis::graphs::GraphLaunches;
use crate::model::{NO_SLICE, Ps, StrId};
use rustc_hash::FxHashMap;

/// Threshold text with its source.
pub(super) const THRESHOLD: &str = "a capture with CUDA/HIP graph launches and any kernel of a \
step launched outside them, while the device idles (tracetui's own rule: TraceLens's inference \
analysis counts graph-launched work apart; the 1 % cut of `advise` applies)";

pub(super) fn rule(ctx: &Ctx) -> Option<Finding> {
    let c = ctx.c;
    let graphs = GraphLaunches::of(c);
    if graphs.launches.is_empty() {
        return None;
    }
    let mut in_graph: Vec<u32> = graphs.kernels.clone();
    in_graph.sort_unstable();
    let g = &ctx.gpu;
    let a = &g.acts;
    let n = ctx.steps.len();
    let mut launch_ps: Vec<Ps> = vec![0; n];
    let mut device_ps: Vec<Ps> = vec![0; n];
    let mut counts: Vec<u64> = vec![0; n];
    // Per kernel name: (count, Σ launch ps, example kernel id).
    let mut names: FxHashMap<StrId, (u64, Ps, u32)> = FxHashMap::default();
    for i in 0..a.len() {
        let l = a.launch[i];
        let id = a.slice[i];
        // Every launch call (HTA's statistics set has CUDA names only; HIP serving traces
        // launch with hipLaunchKernel / hipModuleLaunchKernel / hipMemcpyAsync).
        if l == NO_SLICE || in_graph.binary_search(&id).is_ok() {
            continue;
        }
        let span = g.host_span(c, l);
        let Some(k) = ctx.step_at(span.0) else {
            continue;
        };
        let host = (span.1 - span.0).max(0);
        launch_ps[k] += host;
        device_ps[k] += (a.end[i] - a.start[i]).max(0);
        counts[k] += 1;
        let slot = names
            .entry(c.slices.name[id as usize])
            .or_insert((0, 0, id));
        slot.0 += 1;
        slot.1 += host;
    }
    let mut fired = Vec::new();
    let mut savings: Vec<Ps> = Vec::new();
    let (mut n_eager, mut dev_eager, mut dev_all) = (0u64, 0 as Ps, 0 as Ps);
    for k in 0..n {
        if counts[k] == 0 {
            continue;
        }
        let busy = ctx.device_busy(k);
        let idle = (ctx.steps[k].dur() - busy).max(0);
        let s = launch_ps[k].min(idle);
        if s <= 0 {
            continue;
        }
        fired.push(ctx.steps[k].number);
        savings.push(s);
        n_eager += counts[k];
        dev_eager += device_ps[k];
        dev_all += busy;
    }
    if fired.is_empty() {
        return None;
    }
    let ranked = rank_names(names);
    let event_ids: Vec<u32> = ranked.iter().take(10).map(|r| r.1.2).collect();
    let tracks = tracks_of(c, &event_ids);
    let f = fired.len() as u64;
    let title = format!(
        "{}: {} kernels per step run outside the {} CUDA/HIP graph launch{} ({} % of device \
         busy time), each launched by its own call; the most launch time: {}",
        step_label(&fired),
        n_eager / f,
        graphs.launches.len(),
        if graphs.launches.len() == 1 { "" } else { "es" },
        pct(dev_eager, dev_all),
        ranked
            .first()
            .map_or(String::new(), |r| short(c.strings.get(r.0), 60)),
    );
    let fix = match ctx.framework {
        Framework::Torch => {
            "capture more of the step in graphs: vLLM FULL or FULL_AND_PIECEWISE cudagraph mode \
            (attention inside the graph) and capture sizes covering the batch sizes served; \
            SGLang --cuda-graph-max-bs above the running batch; torch.compile(mode=\
            \"reduce-overhead\") over the whole step; move sampling and bookkeeping kernels \
            into the captured region"
        }
        Framework::Xla => "keep the step in one jitted program so XLA's command buffers cover it",
        Framework::Other => "capture the remaining kernels in the graph",
    };
    Some(Finding {
        rule: "outside_graphs",
        title,
        saving: mean(savings.into_iter(), n),
        saving_how: "the launch calls' host time of kernels outside graphs, at most the device's \
                     idle time in the step",
        step: ctx.mean_step(),
        steps: fired,
        event_ids,
        tracks,
        analysis: "gpu",
        fix: fix.into(),
        threshold: THRESHOLD,
    })
}
