//! Kernel launchers, TraceLens's rule (`TreePerf.get_kernel_launchers`): the op a device
//! activity belongs to is the first `cpu_op` above the host call that launched it, Python
//! frames skipped (and a pass-through `execute` op); with none — another kind of event comes
//! first, or nothing — the launch call itself is the launcher. An op's *direct kernel time* is
//! the busy time (union of intervals) of the activities it launched this way. Communication
//! kernels (NCCL/RCCL) are left out, as TraceLens does by default.
//!
//! On a graph replay merged with its capture traces (`formats::graph_capture`) the launch of a
//! replayed kernel is its capture-time call, so the launcher is the op that captured it.

use super::launch_link::{launches, track_roles};
use crate::model::{Capture, Category, NO_SLICE, Ps};
use rustc_hash::FxHashMap;

/// One launcher name's totals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LauncherRow {
    /// Launcher name (an op's, or a launch call's when no op is above it).
    pub name: String,
    /// True when the launchers are `cpu_op`s.
    pub cpu_op: bool,
    /// Launcher instances that launched at least one activity.
    pub count: u64,
    /// Σ over instances of the busy time of their activities, ps.
    pub direct_ps: Ps,
    /// Activities launched.
    pub kernels: u64,
}

/// Launchers of a capture and how much device time they account for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Launchers {
    /// One row per launcher name, largest direct time first.
    pub rows: Vec<LauncherRow>,
    /// Σ duration of every device activity (kernels, copies, sets; communication included), ps.
    pub device_ps: Ps,
    /// Of it, activities whose launcher is a `cpu_op`, ps.
    pub op_ps: Ps,
    /// Of it, activities with no host launch (no correlated call), ps.
    pub unlinked_ps: Ps,
}

/// True for NCCL/RCCL-style communication kernel names (TraceLens `is_communication_string`).
fn is_communication(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.contains("nccl") || l.contains("rccl")
}

/// The launcher of host launch call `call`.
pub fn launcher_of(c: &Capture, call: u32) -> u32 {
    for cur in c.ancestors(call) {
        match c.slices.kind(cur as usize) {
            Category::CpuOp if c.slice_name(cur) != "execute" => return cur,
            Category::CpuOp | Category::PythonFunction => {}
            _ => break,
        }
    }
    call
}

/// Busy time of intervals (union length), ps; sorts `iv`.
fn busy(iv: &mut [(Ps, Ps)]) -> Ps {
    iv.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(Ps, Ps)> = None;
    for &(s, e) in iv.iter() {
        match &mut cur {
            Some((_, ce)) if s <= *ce => *ce = (*ce).max(e),
            _ => {
                if let Some((cs, ce)) = cur {
                    total += ce - cs;
                }
                cur = Some((s, e));
            }
        }
    }
    total + cur.map_or(0, |(s, e)| e - s)
}

/// The launchers of `c` (see the module doc).
pub fn launchers(c: &Capture) -> Launchers {
    let (stream, host) = track_roles(c);
    let l = launches(c, &host);
    let mut out = Launchers::default();
    let mut by_launcher: FxHashMap<u32, Vec<(Ps, Ps)>> = FxHashMap::default();
    for (t, tr) in c.tracks.iter().enumerate() {
        if !stream.get(t).copied().unwrap_or(false) {
            continue;
        }
        for i in tr.slices.0..tr.slices.1 {
            let iu = i as usize;
            if !matches!(
                c.slices.kind(iu),
                Category::Kernel | Category::Memcpy | Category::Memset
            ) {
                continue;
            }
            let (s, d) = (c.slices.start[iu], c.slices.dur[iu]);
            out.device_ps += d;
            let call = l.launch_of(c.slices.corr(iu));
            if call == NO_SLICE {
                out.unlinked_ps += d;
                continue;
            }
            let who = launcher_of(c, call);
            if c.slices.kind(who as usize) == Category::CpuOp {
                out.op_ps += d;
            }
            if is_communication(c.slice_name(i)) {
                continue;
            }
            by_launcher.entry(who).or_default().push((s, s + d));
        }
    }
    let mut rows: FxHashMap<(&str, bool), LauncherRow> = FxHashMap::default();
    for (who, mut iv) in by_launcher {
        let cpu_op = c.slices.kind(who as usize) == Category::CpuOp;
        let name = c.slice_name(who);
        let r = rows.entry((name, cpu_op)).or_insert_with(|| LauncherRow {
            name: name.to_string(),
            cpu_op,
            count: 0,
            direct_ps: 0,
            kernels: 0,
        });
        r.count += 1;
        r.kernels += iv.len() as u64;
        r.direct_ps += busy(&mut iv);
    }
    out.rows = rows.into_values().collect();
    out.rows.sort_by(|a, b| {
        b.direct_ps
            .cmp(&a.direct_ps)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::busy;

    #[test]
    fn busy_is_the_union() {
        assert_eq!(busy(&mut [(0, 10), (5, 12), (20, 25)]), 17);
        assert_eq!(busy(&mut []), 0);
        assert_eq!(busy(&mut [(3, 4), (0, 10)]), 10);
    }
}
