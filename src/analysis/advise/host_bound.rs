//! `host_bound`: the host (CPU ops, runtime calls, Python between ops) holds the step's
//! critical path while the device idles. Measured by the critical path; the saving is the
//! host time on the path, at most the device's idle time in the step.

use super::{Ctx, Finding, Framework, mean, pct, step_label};
use crate::analysis::critical::Kind;
use crate::model::{NO_SLICE, Ps};

/// HTA's `bound_by`: the host class is the largest on the path.
pub(super) const THRESHOLD: &str = "host time (CPU ops + runtime + between ops) on the critical \
path ≥ device time and ≥ launch delay, with the device idle part of the step (HTA \
CriticalPathAnalysis bound_by = cpu_bound)";

pub(super) fn rule(ctx: &Ctx) -> Option<Finding> {
    let mut fired = Vec::new();
    let mut savings: Vec<Ps> = Vec::new();
    let (mut ops, mut gap, mut path, mut idle) = (0, 0, 0, 0);
    let mut threads = 0;
    let mut events: Vec<(Ps, u32)> = Vec::new();
    let mut tracks: Vec<u32> = Vec::new();
    for (i, p) in ctx.paths.iter().enumerate() {
        let k = |x: Kind| p.kind_ps(x);
        let host = k(Kind::CpuOp) + k(Kind::Runtime) + k(Kind::Gap);
        let device =
            k(Kind::Kernel) + k(Kind::Memcpy) + k(Kind::Communication) + k(Kind::KernelGap);
        let busy = ctx.device_busy(i);
        let step_idle = (ctx.steps[i].dur() - busy).max(0);
        // A capture without device work has nothing to idle: not this rule.
        if busy <= 0 || host < device.max(k(Kind::LaunchDelay)) || step_idle <= 0 {
            continue;
        }
        fired.push(p.step.number);
        savings.push(host.min(step_idle));
        ops += k(Kind::CpuOp) + k(Kind::Runtime);
        gap += k(Kind::Gap);
        path += p.path;
        idle += step_idle;
        threads = threads.max(p.threads);
        for e in &p.top {
            if e.event != NO_SLICE && matches!(e.kind, Kind::CpuOp | Kind::Runtime | Kind::Gap) {
                events.push((e.ps, e.event));
            }
        }
        for &(t, _) in p.tracks.iter().take(4) {
            if !tracks.contains(&t) {
                tracks.push(t);
            }
        }
    }
    if fired.is_empty() {
        return None;
    }
    let n = ctx.steps.len();
    let saving = mean(savings.into_iter(), n);
    let step = ctx.mean_step();
    let fired_steps: Ps = fired.len() as Ps;
    let idle_pct = pct(idle / fired_steps, ctx.mean_step_of(&fired));
    events.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut ids: Vec<u32> = Vec::new();
    for (_, e) in events {
        if !ids.contains(&e) {
            ids.push(e);
        }
        if ids.len() == 10 {
            break;
        }
    }
    let title = format!(
        "{}: host-bound, the device is idle {} % of each step; {} % of the critical path is CPU \
         ops and {} % Python/framework between ops on {} thread{}",
        step_label(&fired),
        idle_pct,
        pct(ops, path),
        pct(gap, path),
        threads,
        if threads == 1 { "" } else { "s" }
    );
    let fix = match ctx.framework {
        Framework::Torch => {
            "capture the step as a CUDA graph (torch.cuda.graphs / \
            torch.compile(mode=\"reduce-overhead\")), fuse small ops with torch.compile, raise the \
            batch size so each kernel does more work, move Python work out of the step"
        }
        Framework::Xla => {
            "jit larger functions (one XLA module per step), avoid host work and \
            Python between dispatches, raise the batch size"
        }
        Framework::Other => {
            "launch fewer, larger device operations per step; take host work \
            off the step's path"
        }
    };
    Some(Finding {
        rule: "host_bound",
        title,
        saving,
        saving_how: "host time on the critical path, at most the device's idle time in the step",
        step,
        steps: fired,
        event_ids: ids,
        tracks,
        analysis: "critical",
        fix: fix.into(),
        threshold: THRESHOLD,
    })
}
