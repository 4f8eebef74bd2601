//! HTA's idle-time breakdown of one stream (`_analyze_idle_time_for_stream`): each gap before an
//! activity is host wait, kernel wait or other.
//!
//! Rows in start order; `prev_end` is the end of the previous row (not a running maximum), so
//! overlapping activities give negative gaps, which count (in kernel wait unless host wait) as
//! in HTA. The first row has no gap.

use crate::model::Ps;

/// Idle time of one stream by cause, ps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdleBreakdown {
    /// The launch of the next activity started after the previous one ended: the host was late.
    pub host_wait: Ps,
    /// Gap below the threshold (launch overhead between back-to-back kernels).
    pub kernel_wait: Ps,
    /// Everything else (synchronisation, waits on other streams, ...).
    pub other: Ps,
    /// Gaps counted (rows after the first).
    pub gaps: u64,
}

impl IdleBreakdown {
    /// host + kernel + other.
    pub fn total(&self) -> Ps {
        self.host_wait + self.kernel_wait + self.other
    }
}

/// One row: activity start and end, and the start of its launch (`None` without one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdleRow {
    /// Activity start.
    pub start: Ps,
    /// Activity end.
    pub end: Ps,
    /// Start of the correlated host launch.
    pub launch_start: Option<Ps>,
}

/// Breaks down the gaps between `rows` (in start order) with `threshold` ps for kernel wait.
pub fn idle_breakdown(rows: impl IntoIterator<Item = IdleRow>, threshold: Ps) -> IdleBreakdown {
    let mut out = IdleBreakdown::default();
    let mut prev_end: Option<Ps> = None;
    for r in rows {
        if let Some(pe) = prev_end {
            let gap = r.start - pe;
            out.gaps += 1;
            if r.launch_start.is_some_and(|l| l > pe) {
                out.host_wait += gap;
            } else if gap < threshold {
                out.kernel_wait += gap;
            } else {
                out.other += gap;
            }
        }
        prev_end = Some(r.end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(start: Ps, end: Ps, launch_start: Option<Ps>) -> IdleRow {
        IdleRow {
            start,
            end,
            launch_start,
        }
    }

    #[test]
    fn three_causes() {
        let b = idle_breakdown(
            [
                row(0, 10, Some(0)),
                row(15, 20, Some(1)), // gap 5, launched before 10: kernel wait
                row(100, 110, Some(50)), // gap 80, launched at 50 > 20: host wait
                row(200, 210, Some(90)), // gap 90 ≥ 30, launched before: other
                row(220, 230, None),  // gap 10, no launch: kernel wait
            ],
            30,
        );
        assert_eq!(b.kernel_wait, 15);
        assert_eq!(b.host_wait, 80);
        assert_eq!(b.other, 90);
        assert_eq!(b.gaps, 4);
        assert_eq!(b.total(), 185);
    }

    #[test]
    fn overlap_gives_negative_kernel_wait_and_uses_previous_row_end() {
        // [0,100) then [10,20) (gap -90), then [30,40): prev_end = 20, not 100 → gap 10.
        let b = idle_breakdown(
            [row(0, 100, None), row(10, 20, None), row(30, 40, None)],
            30,
        );
        assert_eq!(b.kernel_wait, -80);
        assert_eq!(b.total(), -80);
    }

    #[test]
    fn empty_and_single() {
        assert_eq!(idle_breakdown([], 30), IdleBreakdown::default());
        assert_eq!(
            idle_breakdown([row(5, 6, None)], 30),
            IdleBreakdown::default()
        );
    }
}
