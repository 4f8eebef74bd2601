//! Disjoint, time-ordered intervals with prefix sums of their durations.
//!
//! Used for one lane (slices never overlap there, so starts and ends are both sorted) and for the
//! merged union of a track's root lanes. Durations are recovered from the prefix sums
//! (`dur(p) = cum[p + 1] - cum[p]`), so an interval costs 16 bytes: its start and one prefix sum.
//! Prefix sums use wrapping arithmetic, so differences stay exact even for hostile time values.

use crate::model::Ps;

/// Sorted, non-overlapping intervals (touching and zero-length ones allowed).
#[derive(Clone, Debug, Default)]
pub struct Runs {
    /// Start of each interval, ascending.
    start: Vec<Ps>,
    /// `cum[p]` = sum of the durations of intervals `0..p` (wrapping); `len + 1` entries once
    /// anything was pushed.
    cum: Vec<Ps>,
    /// Search directory: `dir[0]` samples every [`FANOUT`]th start, `dir[k]` every [`FANOUT`]th
    /// entry of `dir[k - 1]`, until a level fits in a few cache lines. A rank descends it touching
    /// about two cache lines per level, the upper levels staying cached (≈ 0.5 B/interval).
    dir: Vec<Vec<Ps>>,
}

/// Directory fan-out (power of two; 16 × 8 B = two cache lines per level).
pub const FANOUT: usize = 16;
const TOP: usize = 64;

impl Runs {
    /// Empty runs with room for `n` intervals.
    pub fn with_capacity(n: usize) -> Runs {
        let mut cum = Vec::with_capacity(n + 1);
        cum.push(0);
        Runs {
            start: Vec::with_capacity(n),
            cum,
            dir: Vec::new(),
        }
    }

    /// Builds the search directory; call once every interval was pushed.
    pub fn seal(&mut self) {
        self.dir.clear();
        let mut below: &[Ps] = &self.start;
        let mut levels: Vec<Vec<Ps>> = Vec::new();
        while below.len() > TOP {
            let level: Vec<Ps> = below.iter().step_by(FANOUT).copied().collect();
            levels.push(level);
            below = levels.last().map_or(&[], |l| &l[..]);
        }
        self.dir = levels;
    }

    /// Appends an interval; callers push in start order without overlaps.
    #[inline]
    pub fn push(&mut self, start: Ps, dur: Ps) {
        if self.cum.is_empty() {
            self.cum.push(0);
        }
        let last = self.cum.last().copied().unwrap_or(0);
        self.start.push(start);
        self.cum.push(last.wrapping_add(dur));
    }

    /// Number of intervals.
    #[inline]
    pub fn len(&self) -> usize {
        self.start.len()
    }

    /// True when there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// Start of interval `p`.
    #[inline]
    pub fn start(&self, p: usize) -> Ps {
        self.start[p]
    }

    /// Duration of interval `p`.
    #[inline]
    pub fn dur(&self, p: usize) -> Ps {
        self.cum[p + 1].wrapping_sub(self.cum[p])
    }

    /// End of interval `p`.
    #[inline]
    pub fn end(&self, p: usize) -> Ps {
        self.start[p].wrapping_add(self.dur(p))
    }

    /// Number of intervals starting before `t`: descends the directory, O(log n) with about
    /// two cache lines touched per level (works unsealed too, by plain binary search).
    #[inline]
    pub fn rank(&self, t: Ps) -> usize {
        // `j` = number of entries < t in the level above; the answer at this level lies in
        // segment j - 1 (entries [(j-1)·F + 1, j·F]).
        let mut levels = self.dir.iter().rev();
        let Some(top) = levels.next() else {
            return self.start.partition_point(|&x| x < t);
        };
        let mut j = top.partition_point(|&x| x < t);
        for level in levels {
            if j == 0 {
                return 0;
            }
            let a = (j - 1) * FANOUT;
            let b = (j * FANOUT).min(level.len());
            j = a + level[a..b].partition_point(|&x| x < t);
        }
        if j == 0 {
            return 0;
        }
        let a = (j - 1) * FANOUT;
        let b = (j * FANOUT).min(self.start.len());
        a + self.start[a..b].partition_point(|&x| x < t)
    }

    /// [`Runs::rank`] of every `ts[i]` into `out[i]`, descending the directory level by level for
    /// all of them at once so their cache misses overlap (independent searches instead of one
    /// dependent chain per edge). `out.len() >= ts.len()`.
    pub fn rank_many(&self, ts: &[Ps], out: &mut [usize]) {
        let out = &mut out[..ts.len()];
        let mut levels = self.dir.iter().rev();
        let Some(top) = levels.next() else {
            for (o, &t) in out.iter_mut().zip(ts) {
                *o = self.start.partition_point(|&x| x < t);
            }
            return;
        };
        for (o, &t) in out.iter_mut().zip(ts) {
            *o = top.partition_point(|&x| x < t);
        }
        for level in levels
            .map(|l| &l[..])
            .chain(std::iter::once(&self.start[..]))
        {
            for (o, &t) in out.iter_mut().zip(ts) {
                if *o > 0 {
                    let a = (*o - 1) * FANOUT;
                    let b = (*o * FANOUT).min(level.len());
                    *o = a + level[a..b].partition_point(|&x| x < t);
                }
            }
        }
    }

    /// [`Runs::rank`] searched from a hint: searches the [`FANOUT`] entries after `hint` when the
    /// answer lies there (cheap for nearby edges), else uses the directory. Exact for any hint.
    #[inline]
    pub fn rank_from(&self, t: Ps, hint: usize) -> usize {
        let s = &self.start[..];
        let n = s.len();
        if hint > n || (hint > 0 && s[hint - 1] >= t) {
            return self.rank(t);
        }
        // One probe tells whether the answer is within the next FANOUT entries.
        let end = (hint + FANOUT).min(n);
        if end == n || s[end - 1] >= t {
            return hint + s[hint..end].partition_point(|&x| x < t);
        }
        self.rank(t)
    }

    /// First interval overlapping a window starting at `t`, given `rank = self.rank(t)`: the
    /// interval before `rank` counts when it ends after `t`.
    #[inline]
    pub fn first_overlapping(&self, t: Ps, rank: usize) -> usize {
        if rank > 0 && self.end(rank - 1) > t {
            rank - 1
        } else {
            rank
        }
    }

    /// Positions `[lo, hi)` of the intervals overlapping `[t0, t1)`; a zero-length interval at `t`
    /// overlaps when `t0 <= t < t1`.
    #[inline]
    pub fn window(&self, t0: Ps, t1: Ps) -> (usize, usize) {
        let lo = self.first_overlapping(t0, self.rank(t0));
        let hi = self.rank(t1);
        (lo, hi.max(lo))
    }

    /// Sum over intervals `[lo, hi)` of their length clipped to `[a, b)`; the caller passes the
    /// window positions of `[a, b)`, so only the first and last interval can stick out.
    #[inline]
    pub fn clipped_sum(&self, lo: usize, hi: usize, a: Ps, b: Ps) -> Ps {
        if hi <= lo {
            return 0;
        }
        let mut total = self.cum[hi].wrapping_sub(self.cum[lo]);
        let s = self.start[lo];
        if s < a {
            total = total.wrapping_sub(a.wrapping_sub(s));
        }
        let e = self.end(hi - 1);
        if e > b {
            total = total.wrapping_sub(e.wrapping_sub(b));
        }
        total
    }

    /// Time in `[t0, t1)` covered by the intervals; 0 when `t1 <= t0`.
    pub fn covered(&self, t0: Ps, t1: Ps) -> Ps {
        if t1 <= t0 {
            return 0;
        }
        let (lo, hi) = self.window(t0, t1);
        self.clipped_sum(lo, hi, t0, t1)
    }

    /// Releases spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.start.shrink_to_fit();
        self.cum.shrink_to_fit();
        for d in &mut self.dir {
            d.shrink_to_fit();
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        (self.start.capacity()
            + self.cum.capacity()
            + self.dir.iter().map(Vec::capacity).sum::<usize>())
            * 8
            + self.dir.capacity() * 24
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_rank_matches_binary_search() {
        for n in [0usize, 1, 15, 16, 17, 64, 65, 300, 1023, 1024, 1025, 5000] {
            let mut r = Runs::with_capacity(n);
            for i in 0..n as i64 {
                // Runs of equal starts (zero-length intervals) and gaps.
                r.push(i / 3 * 2, 0);
            }
            r.seal();
            for t in -2..(n as i64) + 2 {
                let want = r.start.partition_point(|&x| x < t);
                assert_eq!(r.rank(t), want, "n={n} t={t}");
                let mut out = [0usize; 2];
                r.rank_many(&[t, t + 1], &mut out);
                assert_eq!(out, [want, r.rank(t + 1)], "n={n} t={t}");
                for h in [
                    0,
                    want.saturating_sub(40),
                    want.saturating_sub(1),
                    want,
                    want + 3,
                    n + 1,
                ] {
                    assert_eq!(r.rank_from(t, h), want, "n={n} t={t} h={h}");
                }
            }
        }
    }

    #[test]
    fn rank_from_any_hint_matches_rank() {
        let mut r = Runs::with_capacity(8);
        for (s, d) in [(-5, 2), (0, 0), (0, 3), (4, 4), (8, 0), (8, 1), (20, 5)] {
            r.push(s, d);
        }
        r.seal();
        for t in -10..30 {
            for h in 0..=r.len() + 2 {
                assert_eq!(r.rank_from(t, h), r.rank(t), "t={t} h={h}");
            }
        }
        assert_eq!(r.covered(-10, 30), 2 + 3 + 4 + 1 + 5);
        assert_eq!(r.covered(1, 6), 2 + 2);
        assert_eq!(r.covered(6, 1), 0);
    }
}
