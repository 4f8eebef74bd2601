//! JAX / XLA rules. `xla_compile`: compilation inside the profiled steps (a shape or a static
//! argument changed, or the step was not warmed up) — its host time per step. `host_offload`:
//! XPlane's "Host Offload Ops" copies on a device not overlapped by its "XLA Ops" — the device
//! time they could hide behind compute.

use super::{Ctx, Finding, Framework, fmt_ms, mean, pct, short, step_label, tracks_of};
use crate::model::{NO_SLICE, Ps};

/// Threshold text of `xla_compile`, with its source.
pub(super) const COMPILE_THRESHOLD: &str = "any XLA compilation (backend_compile_and_load, \
PjRt*Client::Compile, XlaCompile) inside a step (XProf's overview: compilation in the profile \
means the trace is not of steady-state steps; JAX docs on jit recompilation)";

/// Threshold text of `host_offload`, with its source.
pub(super) const OFFLOAD_THRESHOLD: &str = "host-offload copies (XPlane \"Host Offload Ops\" \
lines) not overlapped by the device's XLA Ops ≥ 1 % of the step (XProf's smart suggestions \
on host offload; 1 % is the report's own cut)";

/// True for the outermost compile events of JAX (Python level) and XLA clients.
fn is_compile(name: &str) -> bool {
    name == "backend_compile_and_load"
        || name == "XlaCompile"
        || (name.starts_with("PjRt") && name.ends_with("::Compile"))
        || (name.starts_with("Tfrt") && name.ends_with("::Compile"))
}

/// Σ of the union of `[a, b)` intervals.
fn union(mut v: Vec<(Ps, Ps)>) -> Ps {
    v.sort_unstable();
    let (mut total, mut end) = (0, Ps::MIN);
    for (a, b) in v {
        let a = a.max(end);
        if b > a {
            total += b - a;
            end = b;
        }
    }
    total
}

/// |A \ B| for two sets of intervals.
fn minus(a: &[(Ps, Ps)], b: &[(Ps, Ps)]) -> Ps {
    let mut all = a.to_vec();
    all.extend_from_slice(b);
    union(all) - union(b.to_vec())
}

pub(super) fn compile(ctx: &Ctx) -> Option<Finding> {
    let c = ctx.c;
    let n = ctx.steps.len();
    let mut per: Vec<Vec<(Ps, Ps)>> = vec![Vec::new(); n];
    let mut ev: Vec<(Ps, u32)> = Vec::new();
    let by_step = super::slices_by_step(
        ctx,
        &[
            crate::model::Category::Other,
            crate::model::Category::CpuOp,
            crate::model::Category::UserAnnotation,
            crate::model::Category::PythonFunction,
        ],
        is_compile,
    );
    for (k, ids) in by_step.iter().enumerate() {
        let (s0, s1) = (ctx.steps[k].start, ctx.steps[k].end);
        for &id in ids {
            let i = id as usize;
            let (a, b) = (c.slices.start[i], c.slices.end(i).min(s1));
            per[k].push((a.max(s0), b));
            ev.push((c.slices.dur[i], id));
        }
    }
    let mut fired = Vec::new();
    let mut savings = Vec::new();
    let mut count = 0;
    for (k, v) in per.into_iter().enumerate() {
        if v.is_empty() {
            continue;
        }
        // Counted once: JAX's Python-level compile when present, else the client's.
        let ids = &by_step[k];
        let jax = ids
            .iter()
            .filter(|&&id| c.slice_name(id) == "backend_compile_and_load")
            .count();
        count += if jax > 0 { jax } else { ids.len() };
        fired.push(ctx.steps[k].number);
        savings.push(union(v));
    }
    if fired.is_empty() {
        return None;
    }
    ev.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let event_ids: Vec<u32> = ev.iter().take(10).map(|e| e.1).collect();
    let tracks = tracks_of(ctx.c, &event_ids);
    let total: Ps = savings.iter().sum();
    let title = format!(
        "{}: {} XLA compilation{} inside the profiled steps take {} ({} % of the steps' time)",
        step_label(&fired),
        count,
        if count == 1 { "" } else { "s" },
        fmt_ms(total),
        pct(total, ctx.mean_step_of(&fired) * fired.len() as Ps),
    );
    let fix = match ctx.framework {
        Framework::Torch | Framework::Xla => {
            "warm up before profiling (run the step once, then start the trace); keep shapes \
            and static arguments fixed (pad or bucket the batch), mark changing Python values \
            as traced arguments, use the persistent compilation cache \
            (jax_compilation_cache_dir)"
        }
        Framework::Other => "compile before the profiled steps; keep shapes fixed",
    };
    Some(Finding {
        rule: "xla_compile",
        title,
        saving: mean(savings.into_iter(), n),
        saving_how: "the compilations' wall time (their union) inside the step",
        step: ctx.mean_step(),
        steps: fired,
        event_ids,
        tracks,
        analysis: "search",
        fix: fix.into(),
        threshold: COMPILE_THRESHOLD,
    })
}

pub(super) fn host_offload(ctx: &Ctx) -> Option<Finding> {
    let c = ctx.c;
    // Per process: its offload tracks and its XLA Ops tracks.
    let mut procs: Vec<(u32, Vec<u32>, Vec<u32>)> = Vec::new();
    for (t, tr) in c.tracks.iter().enumerate() {
        let name = c.track_name(t as u32);
        let off = name.starts_with("Host Offload Ops");
        let ops = name == "XLA Ops";
        if !off && !ops {
            continue;
        }
        let slot = match procs.iter().position(|p| p.0 == tr.process) {
            Some(k) => k,
            None => {
                procs.push((tr.process, Vec::new(), Vec::new()));
                procs.len() - 1
            }
        };
        if off {
            procs[slot].1.push(t as u32);
        } else {
            procs[slot].2.push(t as u32);
        }
    }
    procs.retain(|p| !p.1.is_empty());
    if procs.is_empty() {
        return None;
    }
    let s = &c.slices;
    let within = |t: u32, a: Ps, b: Ps| -> Vec<(Ps, Ps)> {
        let (lo, hi) = c.tracks[t as usize].slices;
        (lo as usize..hi as usize)
            .filter(|&i| s.parent[i] == NO_SLICE)
            .map(|i| (s.start[i].max(a), s.end(i).min(b)))
            .filter(|&(x, y)| y > x)
            .collect()
    };
    let mut fired = Vec::new();
    let mut savings = Vec::new();
    let (mut off_sum, mut exp_sum) = (0, 0);
    let mut worst: Option<(Ps, u32)> = None;
    for st in &ctx.steps {
        let d = st.dur();
        let mut best: (Ps, Ps, u32) = (0, 0, 0);
        for (p, off, ops) in &procs {
            let o: Vec<(Ps, Ps)> = off
                .iter()
                .flat_map(|&t| within(t, st.start, st.end))
                .collect();
            let x: Vec<(Ps, Ps)> = ops
                .iter()
                .flat_map(|&t| within(t, st.start, st.end))
                .collect();
            let exposed = minus(&o, &x);

            if exposed > best.0 {
                best = (exposed, union(o), *p);
            }
        }
        if d <= 0 || best.0 * 100 < d {
            continue;
        }
        fired.push(st.number);
        savings.push(best.0);
        exp_sum += best.0;
        off_sum += best.1;
        if worst.is_none_or(|w| best.0 > w.0) {
            worst = Some((best.0, best.2));
        }
    }
    if fired.is_empty() {
        return None;
    }
    // Evidence: the longest offload copies of the worst device.
    let p = worst.map_or(0, |w| w.1);
    let mut ev: Vec<(Ps, u32)> = Vec::new();
    for (q, off, _) in &procs {
        if *q != p {
            continue;
        }
        for &t in off {
            let (lo, hi) = c.tracks[t as usize].slices;
            ev.extend((lo..hi).map(|i| (s.dur[i as usize], i)));
        }
    }
    ev.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let event_ids: Vec<u32> = ev.iter().take(10).map(|e| e.1).collect();
    let tracks = tracks_of(ctx.c, &event_ids);
    let n = fired.len() as Ps;
    let fstep = ctx.mean_step_of(&fired);
    let title = format!(
        "{}: host-offload copies busy {} % of the step on {}, {} % with no XLA op running \
         beside them{}",
        step_label(&fired),
        pct(off_sum / n, fstep),
        short(&c.process_title(p), 30),
        pct(exp_sum / n, fstep),
        event_ids.first().map_or(String::new(), |&id| format!(
            "; the longest: {} ({})",
            short(c.slice_name(id), 40),
            fmt_ms(s.dur[id as usize])
        )),
    );
    Some(Finding {
        rule: "host_offload",
        title,
        saving: mean(savings.into_iter(), ctx.steps.len()),
        saving_how: "offload copy time on the device not overlapped by its XLA ops (what \
                     overlapping the copies with compute would hide)",
        step: ctx.mean_step(),
        steps: fired,
        event_ids,
        tracks,
        analysis: "tracks",
        fix: "offload less (keep hot tensors on device; jax.checkpoint policies that offload \
              only large, rarely used activations), overlap the copies with compute (schedule \
              them early, larger layers between offload and use), check the host memory \
              bandwidth"
            .into(),
        threshold: OFFLOAD_THRESHOLD,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_and_difference_of_intervals() {
        assert_eq!(union(vec![(0, 10), (5, 15), (20, 30), (21, 22)]), 25);
        // Offload [0, 10) and [20, 30) under ops [5, 25): 5 + 5 exposed.
        assert_eq!(minus(&[(0, 10), (20, 30)], &[(5, 25)]), 10);
        assert_eq!(minus(&[(0, 10)], &[]), 10);
        assert_eq!(minus(&[], &[(0, 10)]), 0);
    }
}
