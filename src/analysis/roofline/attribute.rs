//! Device time per op: the kernels, copies and sets launched by the op or below it, with
//! torch's event-tree rules ([`crate::analysis::stats::tree`]: launch → op around it, same-name
//! merge), and the device activities that no modelled op covers.

use crate::analysis::nesting::ContainmentStack;
use crate::analysis::stats::{is_device_process, tree};
use crate::model::{Capture, NO_SLICE, Ps};
use rustc_hash::FxHashMap;

/// Total device time of each wanted host slice (`wanted` sorted ascending), ps, in `wanted`'s
/// order, over the device activities `keep` accepts (slice ids).
pub fn device_totals(c: &Capture, wanted: &[u32], keep: impl Fn(usize) -> bool) -> Vec<Ps> {
    let mut out = vec![0; wanted.len()];
    if wanted.is_empty() {
        return out;
    }
    let s = &c.slices;
    let launches = tree::launched_device_time_of(c, keep);
    let mut stack: ContainmentStack<tree::Open> = ContainmentStack::new();
    let mut put = |d: tree::Done| {
        if let Ok(k) = wanted.binary_search(&d.id) {
            out[k] = d.total_dev;
        }
    };
    for (t, tr) in c.tracks.iter().enumerate() {
        let t = t as u32;
        let (lo, hi) = (tr.slices.0 as usize, (tr.slices.1 as usize).min(s.len()));
        if lo >= hi || is_device_process(c, t) {
            continue;
        }
        let same_name = |a: u32, b: u32| tree::same_name(c, a, b);
        let same = tree::merges(c, t).then_some(&same_name);
        let mut dev = tree::LaunchCursor::new(&launches, lo as u32);
        for i in lo..hi {
            let (start, dur) = (s.start[i], s.dur[i]);
            let launched = dev.get(i as u32);
            stack.close_before(start, start + dur, |o, p| tree::close(o, p, same, &mut put));
            let o = tree::Open::new(i as u32, 0, true, dur);
            tree::enter(
                &mut stack,
                o,
                start + dur,
                tree::launch_goes_up(s.kind(i)),
                launched,
            );
        }
        stack.drain_linked(|o, p| tree::close(o, p, same, &mut put));
    }
    out
}

/// Device time not covered by a selected op, per activity name: (name id, ps, count), most
/// time first; and the total device time of all activities, ps. `selected` is sorted; the
/// activities `apart` accepts (counted elsewhere) are in the total only.
pub fn uncovered(
    c: &Capture,
    selected: &[u32],
    apart: impl Fn(usize) -> bool,
) -> (Vec<(u32, Ps, u64)>, Ps) {
    let s = &c.slices;
    let by_corr = tree::launch_by_corr(c);
    // Memo per launch slice: covered or not.
    let mut memo: FxHashMap<u32, bool> = FxHashMap::default();
    let mut per: FxHashMap<u32, (Ps, u64)> = FxHashMap::default();
    let mut total: Ps = 0;
    for i in 0..s.len() {
        if !s.kind(i).is_activity() {
            continue;
        }
        total += s.dur[i];
        if apart(i) {
            continue;
        }
        let launch = by_corr.get(&s.corr(i)).copied();
        let covered = launch.is_some_and(|l| {
            *memo.entry(l).or_insert_with(|| {
                let mut p = l;
                while p != NO_SLICE {
                    if selected.binary_search(&p).is_ok() {
                        return true;
                    }
                    p = s.parent[p as usize];
                }
                false
            })
        });
        if !covered {
            let e = per.entry(s.name[i].0).or_default();
            e.0 += s.dur[i];
            e.1 += 1;
        }
    }
    let mut v: Vec<(u32, Ps, u64)> = per.into_iter().map(|(k, (d, n))| (k, d, n)).collect();
    v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    (v, total)
}

/// The device activities launched by the calls `calls` (sorted) or below them, in id order.
pub fn activities_of(c: &Capture, calls: &[u32]) -> Vec<u32> {
    let s = &c.slices;
    let by_corr = tree::launch_by_corr(c);
    (0..s.len())
        .filter(|&i| s.kind(i).is_activity())
        .filter(|&i| {
            let Some(&l) = by_corr.get(&s.corr(i)) else {
                return false;
            };
            let mut p = l;
            while p != NO_SLICE {
                if calls.binary_search(&p).is_ok() {
                    return true;
                }
                p = s.parent[p as usize];
            }
            false
        })
        .map(|i| i as u32)
        .collect()
}
