//! Launch ↔ kernel linking and the queue depth of torch's `compute_queue_depth` (analysis.md §b,
//! step 2), in one merge of the start-sorted launches and kernels.

use crate::model::Ps;

/// "No kernel" in [`link`]'s output.
pub const NO_KERNEL: u32 = u32::MAX;

/// One queue-depth point: a launch or a kernel, with the depth seen at its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuePoint {
    /// Start, ps.
    pub start: Ps,
    /// End, ps.
    pub end: Ps,
    /// Queue depth at `start`.
    pub depth: u32,
    /// True for a launch, false for a kernel.
    pub launch: bool,
}

/// For each launch (in start order), the index of its kernel among the start-sorted kernels, or
/// [`NO_KERNEL`]. torch's search: the first kernel at or after the last mapped one with the same
/// correlation id, so a launch whose kernel starts before the previously mapped kernel (another
/// stream) stays unlinked. Since the spawned index only grows in practice, this equals linking by
/// id and keeping the latest kernel. Correlation 0 (none) links nothing. O((L + K) log K).
pub fn link(launch_corr: &[u64], kernel_corr: &[u64]) -> Vec<u32> {
    let max = kernel_corr.iter().copied().max().unwrap_or(0);
    // Dense ids (the usual case): kernels per id in a flat CSR table instead of a sorted list.
    if max <= 4 * kernel_corr.len() as u64 + 1024 {
        return link_dense(launch_corr, kernel_corr, max as usize);
    }
    let mut by_corr: Vec<(u64, u32)> = kernel_corr
        .iter()
        .enumerate()
        .filter(|e| *e.1 != 0)
        .map(|(k, &c)| (c, k as u32))
        .collect();
    by_corr.sort_unstable();
    let mut last = 0u32;
    launch_corr
        .iter()
        .map(|&c| {
            if c == 0 {
                return NO_KERNEL;
            }
            let lo = by_corr.partition_point(|e| e.0 < c);
            let hi = by_corr.partition_point(|e| e.0 <= c);
            let run = &by_corr[lo..hi];
            match run.get(run.partition_point(|e| e.1 < last)) {
                Some(&(_, k)) => {
                    last = k;
                    k
                }
                None => NO_KERNEL,
            }
        })
        .collect()
}

/// [`link`] with every kernel id ≤ `max`: kernels grouped by id in a CSR table (ascending index
/// within an id), O(L + K + max).
fn link_dense(launch_corr: &[u64], kernel_corr: &[u64], max: usize) -> Vec<u32> {
    let mut first = vec![0u32; max + 2];
    for &c in kernel_corr {
        if c != 0 {
            first[c as usize + 1] += 1;
        }
    }
    for i in 0..=max {
        first[i + 1] += first[i];
    }
    let mut fill = first.clone();
    let mut ks = vec![0u32; first[max + 1] as usize];
    for (k, &c) in kernel_corr.iter().enumerate() {
        if c != 0 {
            ks[fill[c as usize] as usize] = k as u32;
            fill[c as usize] += 1;
        }
    }
    drop(fill);
    let mut last = 0u32;
    launch_corr
        .iter()
        .map(|&c| {
            if c == 0 || c > max as u64 {
                return NO_KERNEL;
            }
            let run = &ks[first[c as usize] as usize..first[c as usize + 1] as usize];
            match run.get(run.partition_point(|&k| k < last)) {
                Some(&k) => {
                    last = k;
                    k
                }
                None => NO_KERNEL,
            }
        })
        .collect()
}

/// Queue-depth points of launches and kernels (both start-sorted) in torch's order: by start,
/// launches before kernels at equal starts. At each point the spawned index becomes the launch's
/// kernel (when linked), the kernel cursor moves past every kernel started so far, and
/// `depth = max(spawned − cursor + 1, 0)`.
pub fn points(launch: &[(Ps, Ps)], kernel_of: &[u32], kernel: &[(Ps, Ps)]) -> Vec<QueuePoint> {
    let mut out = Vec::with_capacity(launch.len() + kernel.len());
    let (mut il, mut ig) = (0usize, 0usize);
    let mut spawned: i64 = -1;
    let mut cur = 0usize;
    while il < launch.len() || ig < kernel.len() {
        let take_launch = match (launch.get(il), kernel.get(ig)) {
            (Some(l), Some(k)) => l.0 <= k.0,
            (Some(_), None) => true,
            _ => false,
        };
        let (s, e) = if take_launch {
            let k = kernel_of.get(il).copied().unwrap_or(NO_KERNEL);
            if k != NO_KERNEL {
                spawned = i64::from(k);
            }
            il += 1;
            launch[il - 1]
        } else {
            ig += 1;
            kernel[ig - 1]
        };
        while cur < kernel.len() && kernel[cur].0 <= s {
            cur += 1;
        }
        let depth = (spawned - cur as i64 + 1).max(0);
        out.push(QueuePoint {
            start: s,
            end: e,
            depth: u32::try_from(depth).unwrap_or(u32::MAX),
            launch: take_launch,
        });
    }
    out
}

/// Queue depth seen by a CPU event starting at `t`: that of the last point starting at or before
/// `t` (points come first at equal starts), 0 before the first point.
pub fn depth_at(points: &[QueuePoint], t: Ps) -> u32 {
    let k = points.partition_point(|p| p.start <= t);
    k.checked_sub(1).map_or(0, |k| points[k].depth)
}

/// The queue depth as a step series `(time, depth)`: one entry per change, from the first point.
pub fn steps(points: &[QueuePoint]) -> Vec<(Ps, u32)> {
    let mut out: Vec<(Ps, u32)> = Vec::new();
    for p in points {
        match out.last_mut() {
            Some(last) if last.0 == p.start => last.1 = p.depth,
            Some(last) if last.1 == p.depth => {}
            _ => out.push((p.start, p.depth)),
        }
    }
    // Same-time updates can leave equal neighbours; fold them.
    out.dedup_by(|b, a| a.1 == b.1);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_follows_torch_forward_search() {
        // Kernels in start order with corr 3, 1, 2; launches in start order with corr 1, 2, 3.
        // 1 → kernel 1, 2 → kernel 2, 3 → kernel 0 is before the last mapped one → unlinked.
        assert_eq!(link(&[1, 2, 3], &[3, 1, 2]), vec![1, 2, NO_KERNEL]);
        assert_eq!(link(&[0, 9], &[0, 5]), vec![NO_KERNEL, NO_KERNEL]);
    }

    proptest::proptest! {
        #[test]
        fn dense_link_matches_sorted(
            l in proptest::collection::vec(0u64..12, 0..20),
            k in proptest::collection::vec(0u64..12, 0..20),
        ) {
            // Sparse reference: the same ids shifted far apart take the sorted path.
            let far = |v: &[u64]| -> Vec<u64> {
                v.iter().map(|&c| if c == 0 { 0 } else { c << 40 }).collect()
            };
            let dense = link(&l, &k);
            proptest::prop_assert_eq!(&dense, &link(&far(&l), &far(&k)));
        }
    }

    #[test]
    fn depth_hand_computed() {
        // Launches at 0, 1, 2 (dur 1) for kernels 0, 1, 2 starting at 10, 12, 14 (dur 2).
        let l = [(0, 1), (1, 2), (2, 3)];
        let k = [(10, 12), (12, 14), (14, 16)];
        let p = points(&l, &[0, 1, 2], &k);
        let d: Vec<u32> = p.iter().map(|p| p.depth).collect();
        // spawned 0,1,2 with no kernel started → 1,2,3; at 10 cursor 1 → 2-1+1 = 2; 12 → 1; 14 → 0.
        assert_eq!(d, vec![1, 2, 3, 2, 1, 0]);
        assert_eq!(depth_at(&p, -5), 0);
        assert_eq!(depth_at(&p, 2), 3);
        assert_eq!(depth_at(&p, 11), 2);
        assert_eq!(
            steps(&p),
            vec![(0, 1), (1, 2), (2, 3), (10, 2), (12, 1), (14, 0)]
        );
    }
}
