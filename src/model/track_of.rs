//! The track of every slice while a capture is built: run-length encoded while loaders append
//! slices track by track (XPlane lines, derived lines: a handful of runs for millions of
//! slices), a plain `u32` per slice once runs get short (Chrome JSON interleaves threads).

use super::capture::Ps;

/// Runs count under which `TrackOf` stays run-length encoded: beyond it, a run must cover at
/// least 4 slices on average (a run is 8 bytes, a dense entry 4).
const RUNS_MIN: usize = 4096;

/// Track id per slice, as runs or dense.
#[derive(Debug, Default, Clone)]
pub struct TrackOf {
    /// (track, slice count) runs covering slices `0..len` in order, while not dense.
    runs: Vec<(u32, u32)>,
    /// One track per slice once dense.
    dense: Vec<u32>,
    is_dense: bool,
    len: usize,
}

impl TrackOf {
    /// Number of slices covered.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no slice is covered.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one slice of `track`.
    #[inline]
    pub fn push(&mut self, track: u32) {
        self.len += 1;
        if self.is_dense {
            self.dense.push(track);
            return;
        }
        match self.runs.last_mut() {
            Some((t, n)) if *t == track && *n < u32::MAX => *n += 1,
            _ => {
                self.runs.push((track, 1));
                if self.runs.len() > RUNS_MIN && self.runs.len() * 4 > self.len {
                    self.densify();
                }
            }
        }
    }

    /// Appends `n` slices of `track` (a reserved run of slots); returns the run's index for
    /// [`TrackOf::set_runs`], or `None` when dense (the slots were written out).
    pub fn push_run(&mut self, track: u32, n: usize) -> Option<usize> {
        self.len += n;
        if self.is_dense {
            self.dense.resize(self.dense.len() + n, track);
            return None;
        }
        self.runs
            .push((track, u32::try_from(n).unwrap_or(u32::MAX)));
        Some(self.runs.len() - 1)
    }

    /// Shrinks the runs pushed by [`TrackOf::push_run`] from `first` on to the given lengths
    /// (slots left unfilled are removed by the caller); dense entries are cut at `new_len`.
    pub fn set_runs(&mut self, first: Option<usize>, used: &[usize], new_len: usize) {
        self.len = new_len;
        if self.is_dense {
            // Dense entries of the reserved slots: rebuilt from the runs' tracks by the caller
            // (see `CaptureBuilder::compact_slots`), here only cut.
            self.dense.truncate(new_len);
            return;
        }
        if let Some(first) = first {
            for (r, &u) in self.runs[first..].iter_mut().zip(used) {
                r.1 = u32::try_from(u).unwrap_or(u32::MAX);
            }
            self.runs.retain(|r| r.1 > 0);
        }
    }

    /// True when dense.
    pub fn is_dense(&self) -> bool {
        self.is_dense
    }

    /// The dense entries (call [`TrackOf::densify`] first).
    pub fn dense_mut(&mut self) -> &mut Vec<u32> {
        &mut self.dense
    }

    /// Reserves room for `n` more dense entries (no-op while run-length encoded).
    pub fn reserve(&mut self, n: usize) {
        if self.is_dense {
            self.dense.reserve_exact(n);
        }
    }

    /// Switches to one entry per slice.
    pub fn densify(&mut self) {
        if self.is_dense {
            return;
        }
        let mut d = Vec::with_capacity(self.len);
        for &(t, n) in &self.runs {
            d.resize(d.len() + n as usize, t);
        }
        self.dense = d;
        self.runs = Vec::new();
        self.is_dense = true;
    }

    /// While run-length encoded: true when the slices are grouped by ascending track and
    /// sorted by (start asc, dur desc) within each track, checked on two threads for many
    /// slices. `None` when dense (the caller checks the dense column).
    pub fn runs_presorted(&self, start: &[Ps], dur: &[Ps], parallel: bool) -> Option<bool> {
        if self.is_dense {
            return None;
        }
        let in_order = |r: std::ops::Range<usize>| {
            r.into_iter().all(|i| {
                (start[i - 1], std::cmp::Reverse(dur[i - 1]))
                    <= (start[i], std::cmp::Reverse(dur[i]))
            })
        };
        // Ranges of consecutive runs of one track; tracks strictly ascending between them.
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        let mut at = 0usize;
        let mut last: Option<u32> = None;
        for &(t, n) in &self.runs {
            let n = n as usize;
            match last {
                Some(l) if l == t => {
                    if let Some(r) = ranges.last_mut() {
                        r.1 = at + n;
                    }
                }
                Some(l) if l > t => return Some(false),
                _ => ranges.push((at, at + n)),
            }
            last = Some(t);
            at += n;
        }
        let check = |rs: &[(usize, usize)]| rs.iter().all(|&(lo, hi)| in_order(lo + 1..hi));
        if parallel && ranges.len() > 1 {
            // Split the ranges where half of the slices lie before.
            let k = ranges.partition_point(|r| r.1 <= at / 2).max(1);
            let (a, b) = ranges.split_at(k);
            Some(std::thread::scope(|sc| {
                let h = sc.spawn(|| check(b));
                check(a) & h.join().unwrap_or(false)
            }))
        } else {
            Some(check(&ranges))
        }
    }

    /// While run-length encoded and presorted: each track's slice range `[lo, hi)` (empty
    /// ranges at the right place for tracks without slices).
    pub fn ranges(&self, ntracks: usize) -> Vec<(u32, u32)> {
        let mut out = vec![(0u32, 0u32); ntracks];
        let mut at = 0u32;
        let mut next_track = 0usize;
        for &(t, n) in &self.runs {
            let t = t as usize;
            while next_track < t.min(ntracks) {
                out[next_track] = (at, at);
                next_track += 1;
            }
            if let Some(r) = out.get_mut(t) {
                if next_track == t {
                    *r = (at, at + n);
                    next_track += 1;
                } else {
                    r.1 = at + n;
                }
            }
            at += n;
        }
        while next_track < ntracks {
            out[next_track] = (at, at);
            next_track += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_until_short_then_dense() {
        let mut t = TrackOf::default();
        for k in 0..10_000u32 {
            t.push(k / 1000);
        }
        assert!(!t.is_dense());
        assert_eq!(t.ranges(12)[3], (3000, 4000));
        assert_eq!(t.ranges(12)[11], (10_000, 10_000));
        for k in 0..20_000u32 {
            t.push(k % 2);
        }
        assert!(t.is_dense());
        assert_eq!(t.len(), 30_000);
        assert_eq!(t.dense_mut().len(), 30_000);
        assert_eq!(t.dense_mut()[10_001], 1);
    }

    #[test]
    fn presorted_by_runs() {
        let mut t = TrackOf::default();
        let first = t.push_run(0, 3);
        t.push_run(2, 2);
        t.set_runs(first, &[2, 2], 4);
        // track 0: starts 1, 1 (longer first); track 2: 0, 5
        let (start, dur) = ([1, 1, 0, 5], [5, 3, 1, 1]);
        assert_eq!(t.runs_presorted(&start, &dur, false), Some(true));
        assert_eq!(t.runs_presorted(&start, &dur, true), Some(true));
        assert_eq!(t.ranges(3), vec![(0, 2), (2, 2), (2, 4)]);
        let dur2 = [3, 5, 1, 1];
        assert_eq!(t.runs_presorted(&start, &dur2, false), Some(false));
        t.push(1);
        assert_eq!(
            t.runs_presorted(&[1, 1, 0, 5, 9], &[5, 3, 1, 1, 1], false),
            Some(false)
        );
    }
}
