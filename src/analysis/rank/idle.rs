//! Idle intervals (analysis.md §b step 3) and falling queue-depth phases (step 4), the latter in
//! O(n) instead of torch's nested scan but picking the same peaks.

use super::queue::QueuePoint;
use crate::model::Ps;

/// Queue depth at or below which the queue counts as drained.
pub const BOTTOM: u32 = 0;
/// Peak depth a falling phase must reach.
pub const TOP: u32 = 4;

/// torch's idle intervals, in construction order: when there are points and tree events, first
/// `(first tree start, first point start)` and `(last point end, end of the latest-starting tree
/// event)`; then, scanning the points, from the end of the first depth-0 point of a run to the start
/// of the next point with depth > 0. A trailing idle run is covered only by the tail edge.
/// Intervals may be inverted or overlap; callers decide how to count them.
pub fn idle_intervals(points: &[QueuePoint], tree_edges: Option<(Ps, Ps)>) -> Vec<(Ps, Ps)> {
    let mut out = Vec::new();
    if let (Some(first), Some(last), Some((t0, t1))) = (points.first(), points.last(), tree_edges) {
        out.push((t0, first.start));
        out.push((last.end, t1));
    }
    let mut idle_start: Option<Ps> = None;
    for p in points {
        if p.depth == 0 && idle_start.is_none() {
            idle_start = Some(p.end);
        }
        if p.depth > 0
            && let Some(s) = idle_start.take()
        {
            out.push((s, p.start));
        }
    }
    out
}

/// torch's falling phases `(peak start, zero start)`, in its order (latest first).
///
/// Walking the points backwards in time from each depth-0 point, the first earlier run of non-zero
/// points whose maximum is ≥ [`TOP`] gives a phase from the start of that run's latest maximum to
/// the zero point; the walk then resumes after the zero that closes the run. When the run reaches
/// the beginning of the capture, every zero in between repeats the same peak (nested intervals),
/// as in torch. Runs are summarised once, so this is O(n).
pub fn falling_phases(points: &[QueuePoint]) -> Vec<(Ps, Ps)> {
    let n = points.len();
    // Reversed view: r(i) = points[n - 1 - i].
    let v = |i: usize| points[n - 1 - i].depth;
    let start = |i: usize| points[n - 1 - i].start;
    // For each reversed index x, the first qualifying run starting at or after x:
    // (peak index, run end = index of the closing zero or n).
    let mut next: Vec<Option<(usize, usize)>> = vec![None; n + 1];
    let mut i = n;
    while i > 0 {
        i -= 1;
        if v(i) == BOTTOM {
            next[i] = next[i + 1];
            continue;
        }
        // i is inside a run; find the run [rs, re) ending here when walking down.
        let re = i + 1;
        let mut rs = i;
        while rs > 0 && v(rs - 1) > BOTTOM {
            rs -= 1;
        }
        let after = if re < n { next[re] } else { None };
        let mut peak = rs;
        for k in rs..re {
            if v(k) > v(peak) {
                peak = k;
            }
        }
        let this = (v(peak) >= TOP).then_some((peak, re));
        for slot in &mut next[rs..re] {
            *slot = this.or(after);
        }
        // Inner positions of a qualifying run are never queried with a later start; the run
        // start is what matters.
        i = rs;
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        if v(i) > BOTTOM {
            i += 1;
            continue;
        }
        if let Some((p, re)) = next[i + 1] {
            out.push((start(p), start(i)));
            if re < n {
                i = re;
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(d: &[u32]) -> Vec<QueuePoint> {
        d.iter()
            .enumerate()
            .map(|(i, &depth)| QueuePoint {
                start: i as Ps * 10,
                end: i as Ps * 10 + 5,
                depth,
                launch: true,
            })
            .collect()
    }

    /// torch's `rank_events` interval search, transcribed literally (O(n²)).
    pub(crate) fn torch_falling(points: &[QueuePoint]) -> Vec<(Ps, Ps)> {
        let r: Vec<&QueuePoint> = points.iter().rev().collect();
        let v: Vec<u32> = r.iter().map(|p| p.depth).collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < v.len() {
            if v[i] > BOTTOM {
                i += 1;
                continue;
            }
            for j in i + 1..v.len() {
                let z = (j..v.len()).find(|&k| v[k] == BOTTOM);
                let seg = &v[j..z.unwrap_or(v.len())];
                let peak = seg
                    .iter()
                    .enumerate()
                    .fold(None, |b: Option<(usize, u32)>, (k, &x)| match b {
                        Some((_, bx)) if bx >= x => b,
                        _ => Some((k, x)),
                    })
                    .map(|(k, _)| k + j);
                if let Some(p) = peak
                    && v[p] >= TOP
                {
                    out.push((r[p].start, r[i].start));
                    i = z.unwrap_or(i);
                    break;
                }
            }
            i += 1;
        }
        out
    }

    #[test]
    fn idle_hand_computed() {
        // depths 1 0 0 2 0 1: idle from end of point 1 (15) to start of point 3 (30); from end of
        // point 4 (45) to start of point 5 (50). Edges: (tree start, 0) and (55, tree end).
        let p = pts(&[1, 0, 0, 2, 0, 1]);
        assert_eq!(
            idle_intervals(&p, Some((-3, 70))),
            vec![(-3, 0), (55, 70), (15, 30), (45, 50)]
        );
        assert_eq!(idle_intervals(&p, None), vec![(15, 30), (45, 50)]);
    }

    #[test]
    fn falling_hand_computed() {
        // Time order: 0 | 1 4 5 5 2 | 0 | 3 | 0 (t = 0, 10, …, 80). From the last zero (t=80)
        // backwards: the run "3" is below the threshold, the run 1 4 5 5 2 peaks at 5 with its
        // latest maximum at t=40 → (40, 80); the walk resumes after the zero at t=0, so the zero
        // at t=60 starts nothing.
        let p = pts(&[0, 1, 4, 5, 5, 2, 0, 3, 0]);
        assert_eq!(falling_phases(&p), vec![(40, 80)]);
        assert_eq!(torch_falling(&p), vec![(40, 80)]);
        // A peak run reaching the start: each later zero repeats it (nested intervals).
        let p = pts(&[6, 0, 1, 0]);
        assert_eq!(falling_phases(&p), vec![(0, 30), (0, 10)]);
        assert_eq!(torch_falling(&p), vec![(0, 30), (0, 10)]);
        assert!(falling_phases(&[]).is_empty());
    }

    proptest::proptest! {
        #[test]
        fn falling_matches_torch(d in proptest::collection::vec(0u32..7, 0..40)) {
            let p = pts(&d);
            proptest::prop_assert_eq!(falling_phases(&p), torch_falling(&p));
        }
    }
}
