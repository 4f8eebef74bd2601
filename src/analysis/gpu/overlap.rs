//! Per-device figures over all its streams: the activities of every stream visited in one start
//! order (a k-way merge of the already sorted streams, O(n log k)), giving the device's temporal
//! breakdown and HTA's communication/computation overlap.

use super::streams::Activities;
use super::temporal::{Breakdown, BreakdownAcc};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Breakdown of the activity rows `ranges` (each sorted by start) merged in start order.
pub fn merged_breakdown(acts: &Activities, ranges: &[(usize, usize)]) -> Breakdown {
    let mut heap: BinaryHeap<Reverse<(i64, usize, usize)>> = ranges
        .iter()
        .filter(|r| r.0 < r.1)
        .map(|&(a, b)| Reverse((acts.start[a], a, b)))
        .collect();
    let mut acc = BreakdownAcc::default();
    while let Some(Reverse((_, i, end))) = heap.pop() {
        acc.push(acts.start[i], acts.end[i], acts.class[i]);
        if i + 1 < end {
            heap.push(Reverse((acts.start[i + 1], i + 1, end)));
        }
    }
    acc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::gpu::classify::KernelClass::{self, *};

    fn acts(rows: &[(i64, i64, KernelClass)]) -> Activities {
        let mut a = Activities::default();
        for &(s, e, k) in rows {
            a.slice.push(0);
            a.start.push(s);
            a.end.push(e);
            a.class.push(k);
            a.idle_set.push(true);
            a.launch.push(crate::model::NO_SLICE);
        }
        a
    }

    #[test]
    fn two_streams_overlap() {
        // stream A: compute [0,10) [20,30); stream B: comm [5,25)
        let a = acts(&[(0, 10, Compute), (20, 30, Compute), (5, 25, Communication)]);
        let b = merged_breakdown(&a, &[(0, 2), (2, 3)]);
        assert_eq!(b.window, (0, 30));
        assert_eq!(b.busy, 30);
        assert_eq!(b.compute, 20);
        assert_eq!(b.communication, 10);
        assert_eq!(b.communication_total, 20);
        assert_eq!(b.comm_compute_overlap, 10);
        assert_eq!(b.comm_overlap_ratio(), Some(0.5));
        assert_eq!(merged_breakdown(&a, &[]), Breakdown::default());
    }
}
