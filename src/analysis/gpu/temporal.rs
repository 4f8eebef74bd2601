//! HTA's temporal breakdown: busy time split into compute / communication / memory / other, and
//! idle time, over activities visited in start order. All figures are lengths of merged unions
//! (touching intervals merge), so one pass per class set with no interval lists kept.

use super::classify::KernelClass;
use crate::model::Ps;

/// Length of the merged union of intervals pushed in start order (HTA's
/// `merge_kernel_intervals`: a new group starts when `start > max end so far`; lengths are signed,
/// so an inverted interval from µs rounding counts negative, as in HTA).
#[derive(Clone, Copy, Debug, Default)]
pub struct UnionLen {
    open: bool,
    start: Ps,
    end: Ps,
    total: Ps,
}

impl UnionLen {
    /// Adds an interval; starts must not decrease.
    #[inline]
    pub fn push(&mut self, s: Ps, e: Ps) {
        if !self.open || s > self.end {
            if self.open {
                self.total += self.end - self.start;
            }
            self.open = true;
            self.start = s;
            self.end = e;
        } else if e > self.end {
            self.end = e;
        }
    }
    /// The union's length so far.
    pub fn len(&self) -> Ps {
        self.total + if self.open { self.end - self.start } else { 0 }
    }
    /// True when nothing was pushed.
    pub fn is_empty(&self) -> bool {
        !self.open
    }
}

/// Temporal breakdown of a set of activities (one stream or a whole device).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    /// First start .. last end (HTA's `kernel_time` window), ps; `(0, 0)` when empty.
    pub window: (Ps, Ps),
    /// |∪ all|.
    pub busy: Ps,
    /// |∪ compute|.
    pub compute: Ps,
    /// Communication time not overlapped by compute.
    pub communication: Ps,
    /// Memory time not overlapped by compute or communication.
    pub memory: Ps,
    /// Busy time that is none of the above.
    pub other: Ps,
    /// |∪ communication| (overlapped or not).
    pub communication_total: Ps,
    /// |∪ compute ∩ ∪ communication|.
    pub comm_compute_overlap: Ps,
}

impl Breakdown {
    /// Window length minus busy time.
    pub fn idle(&self) -> Ps {
        self.window.1 - self.window.0 - self.busy
    }
    /// HTA's non-compute time: window − compute − idle.
    pub fn non_compute(&self) -> Ps {
        self.busy - self.compute
    }
    /// HTA's communication/computation overlap: overlap / |∪ communication| (None without
    /// communication).
    pub fn comm_overlap_ratio(&self) -> Option<f64> {
        (self.communication_total > 0)
            .then(|| self.comm_compute_overlap as f64 / self.communication_total as f64)
    }
}

/// Accumulates a [`Breakdown`] over activities pushed in start order.
#[derive(Clone, Copy, Debug, Default)]
pub struct BreakdownAcc {
    all: UnionLen,
    comp: UnionLen,
    comp_comm: UnionLen,
    comp_comm_mem: UnionLen,
    comm: UnionLen,
    first: Option<Ps>,
    last_end: Ps,
}

impl BreakdownAcc {
    /// Adds one activity; starts must not decrease. An interval inverted by µs rounding
    /// (`e < s`, `--hta`) counts as empty in every union: counted negative (as HTA's merge
    /// does) it could make |∪ all| smaller than |∪ compute|, i.e. a negative memory or other
    /// part (HTA's own `non_compute_time >= 0` assertion then fails). The window still ends
    /// at the latest raw end, as HTA's `kernel_time`.
    #[inline]
    pub fn push(&mut self, s: Ps, e: Ps, class: KernelClass) {
        if self.first.is_none() {
            self.first = Some(s);
            self.last_end = e;
        }
        self.last_end = self.last_end.max(e);
        let e = e.max(s);
        self.all.push(s, e);
        match class {
            KernelClass::Compute => {
                self.comp.push(s, e);
                self.comp_comm.push(s, e);
                self.comp_comm_mem.push(s, e);
            }
            KernelClass::Communication => {
                self.comm.push(s, e);
                self.comp_comm.push(s, e);
                self.comp_comm_mem.push(s, e);
            }
            KernelClass::Memory => self.comp_comm_mem.push(s, e),
            KernelClass::Other => {}
        }
    }

    /// The breakdown of everything pushed.
    pub fn finish(&self) -> Breakdown {
        let Some(first) = self.first else {
            return Breakdown::default();
        };
        let (c, cc, ccm, all, comm) = (
            self.comp.len(),
            self.comp_comm.len(),
            self.comp_comm_mem.len(),
            self.all.len(),
            self.comm.len(),
        );
        Breakdown {
            // Never shorter than empty (every interval inverted by rounding).
            window: (first, self.last_end.max(first)),
            busy: all,
            compute: c,
            communication: cc - c,
            memory: ccm - cc,
            other: all - ccm,
            communication_total: comm,
            comm_compute_overlap: c + comm - cc,
        }
    }
}

/// Breakdown of `(start, end, class)` activities given in start order.
pub fn breakdown(acts: impl IntoIterator<Item = (Ps, Ps, KernelClass)>) -> Breakdown {
    let mut acc = BreakdownAcc::default();
    for (s, e, k) in acts {
        acc.push(s, e, k);
    }
    acc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use KernelClass::*;
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    #[test]
    fn hand_computed() {
        // compute [0,10) [5,12); comm [8,20); memory [18,25) [30,31); other [40,50)
        let b = breakdown([
            (0, 10, Compute),
            (5, 12, Compute),
            (8, 20, Communication),
            (18, 25, Memory),
            (30, 31, Memory),
            (40, 50, Other),
        ]);
        assert_eq!(b.window, (0, 50));
        assert_eq!(b.busy, 25 + 1 + 10);
        assert_eq!(b.compute, 12);
        assert_eq!(b.communication, 8);
        assert_eq!(b.memory, 5 + 1);
        assert_eq!(b.other, 10);
        assert_eq!(b.idle(), 50 - 36);
        assert_eq!(b.communication_total, 12);
        assert_eq!(b.comm_compute_overlap, 4);
        assert_eq!(b.comm_overlap_ratio(), Some(4.0 / 12.0));
    }

    #[test]
    fn touching_and_empty() {
        let b = breakdown([(0, 10, Compute), (10, 20, Compute)]);
        assert_eq!((b.busy, b.compute, b.idle()), (20, 20, 0));
        assert_eq!(breakdown([]), Breakdown::default());
        assert_eq!(Breakdown::default().comm_overlap_ratio(), None);
    }

    #[test]
    fn inverted_interval_is_empty_in_the_breakdown() {
        // The H100 case: compute [0,10) [11,20) and a memcpy inverted by rounding at 11. With
        // the memcpy counted negative, busy was 18 < compute 19 (memory −1).
        let b = breakdown([(0, 10, Compute), (11, 10, Memory), (11, 20, Compute)]);
        assert_eq!((b.busy, b.compute, b.memory, b.other), (19, 19, 0, 0));
        assert_eq!(b.window, (0, 20));
    }

    fn check(b: &Breakdown) -> Result<(), TestCaseError> {
        prop_assert!(b.busy >= b.compute);
        for part in [b.compute, b.communication, b.memory, b.other] {
            prop_assert!(part >= 0, "{b:?}");
            prop_assert!(b.busy >= part, "{b:?}");
        }
        prop_assert_eq!(b.compute + b.communication + b.memory + b.other, b.busy);
        prop_assert!(b.idle() >= 0, "{b:?}");
        prop_assert!(
            b.comm_compute_overlap >= 0 && b.comm_compute_overlap <= b.communication_total
        );
        Ok(())
    }

    fn class() -> impl Strategy<Value = KernelClass> {
        prop_oneof![
            Just(Compute),
            Just(Communication),
            Just(Memory),
            Just(Other)
        ]
    }

    proptest! {
        /// busy ≥ each part, parts ≥ 0 and summing to busy (compute first, then communication,
        /// memory, other take what the earlier classes leave), also with inverted intervals;
        /// and busy equals the brute-force measure of the union on a unit grid.
        #[test]
        fn parts_sum_to_busy(
            mut acts in proptest::collection::vec((0i64..60, -3i64..15, class()), 0..40)
        ) {
            acts.sort_by_key(|a| a.0);
            let b = breakdown(acts.iter().map(|&(s, d, k)| (s, s + d, k)));
            check(&b)?;
            let mut covered = [false; 80];
            for &(s, d, _) in &acts {
                for x in s..s + d.max(0) {
                    covered[x as usize] = true;
                }
            }
            prop_assert_eq!(b.busy, covered.iter().filter(|&&c| c).count() as i64);
        }

        /// The device figures over several streams (k-way merge) keep the same invariants.
        #[test]
        fn merged_streams_keep_the_invariants(
            streams in proptest::collection::vec(
                proptest::collection::vec((0i64..60, -3i64..15, class()), 0..15), 1..4)
        ) {
            let mut a = crate::analysis::gpu::streams::Activities::default();
            let mut ranges = Vec::new();
            for mut st in streams {
                st.sort_by_key(|x| x.0);
                let lo = a.len();
                for (s, d, k) in st {
                    a.slice.push(0);
                    a.start.push(s);
                    a.end.push(s + d);
                    a.class.push(k);
                    a.idle_set.push(true);
                    a.launch.push(crate::model::NO_SLICE);
                }
                ranges.push((lo, a.len()));
            }
            check(&crate::analysis::gpu::overlap::merged_breakdown(&a, &ranges))?;
        }
    }

    #[test]
    fn inverted_interval_counts_negative_like_hta() {
        // After rounding a sub-µs event can end before it starts: HTA's merge keeps it as its
        // own group with a negative length.
        let mut u = UnionLen::default();
        u.push(0, 10);
        u.push(11, 10);
        u.push(11, 20);
        assert_eq!(u.len(), 10 - 1 + 9);
    }
}
