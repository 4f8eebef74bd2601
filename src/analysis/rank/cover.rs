//! Overlap of a query interval with a set of intervals: the merged union (what torch intends) and
//! torch's `EventKey.intervals_overlap` walk with its quirks (compat), both answered in O(log n).

use crate::model::Ps;

/// Σ |[a, b) ∩ c| over a fixed multiset of intervals `c`, answered in O(log n) from sorted starts
/// and ends with prefix sums (∫ of the coverage count).
#[derive(Clone, Debug, Default)]
pub struct Cover {
    starts: Vec<Ps>,
    ends: Vec<Ps>,
    start_sums: Vec<i128>,
    end_sums: Vec<i128>,
}

fn prefix(v: &[Ps]) -> Vec<i128> {
    let mut out = Vec::with_capacity(v.len() + 1);
    let mut acc = 0i128;
    out.push(0);
    for &x in v {
        acc += i128::from(x);
        out.push(acc);
    }
    out
}

impl Cover {
    /// Builds the cover of `iv` (`(start, end)`); empty and inverted intervals count for nothing.
    pub fn new(iv: impl IntoIterator<Item = (Ps, Ps)>) -> Cover {
        let (mut starts, mut ends): (Vec<Ps>, Vec<Ps>) =
            iv.into_iter().filter(|i| i.1 > i.0).unzip();
        // Stable sorts: runs already in order (a union, time-ordered lists) are merged in O(n).
        starts.sort();
        ends.sort();
        let start_sums = prefix(&starts);
        let end_sums = prefix(&ends);
        Cover {
            starts,
            ends,
            start_sums,
            end_sums,
        }
    }

    /// ∫_{-∞}^{t} (number of intervals covering x) dx.
    fn integral(&self, t: Ps) -> i128 {
        let k = self.starts.partition_point(|&s| s < t);
        let m = self.ends.partition_point(|&e| e < t);
        self.integral_at(t, k, m)
    }

    /// Σ over the intervals of their overlap with `[a, b)` (0 when `b <= a`).
    pub fn overlap(&self, a: Ps, b: Ps) -> Ps {
        if b <= a || self.starts.is_empty() {
            return 0;
        }
        let v = self.integral(b) - self.integral(a);
        Ps::try_from(v).unwrap_or(Ps::MAX)
    }

    /// [`Cover::overlap`] of each event `[start[i], end[i])` of a run sorted by start, handed to
    /// `sink(i, overlap)`: the searches gallop from the previous event's position, so a run costs
    /// O(n + Σ log gap) instead of O(n log k).
    pub fn overlap_run(&self, start: &[Ps], end: &[Ps], mut sink: impl FnMut(usize, Ps)) {
        if self.starts.is_empty() {
            for i in 0..start.len() {
                sink(i, 0);
            }
            return;
        }
        let (mut ka, mut ma) = (0usize, 0usize);
        for (i, (&a, &b)) in start.iter().zip(end).enumerate() {
            if b <= a {
                sink(i, 0);
                continue;
            }
            ka = gallop(&self.starts, ka, |s| s < a);
            ma = gallop(&self.ends, ma, |e| e < a);
            let kb = gallop(&self.starts, ka, |s| s < b);
            let mb = gallop(&self.ends, ma, |e| e < b);
            let v = self.integral_at(b, kb, mb) - self.integral_at(a, ka, ma);
            sink(i, Ps::try_from(v).unwrap_or(Ps::MAX));
        }
    }

    /// [`Cover::integral`] with the two partition points known.
    fn integral_at(&self, t: Ps, k: usize, m: usize) -> i128 {
        let t = i128::from(t);
        (k as i128 * t - self.start_sums[k]) - (m as i128 * t - self.end_sums[m])
    }

    /// Number of (non-empty) intervals.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// True when no interval has a positive length.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }
}

/// `v.partition_point(pred)` for a `pred` true on a prefix that covers at least `v[..from]`,
/// found by galloping forward from `from` (O(log distance)).
pub fn gallop(v: &[Ps], from: usize, pred: impl Fn(Ps) -> bool) -> usize {
    let (mut lo, mut hi, mut step) = (from.min(v.len()), from.min(v.len()), 1usize);
    while hi < v.len() && pred(v[hi]) {
        lo = hi + 1;
        hi += step;
        step *= 2;
    }
    let hi = hi.min(v.len());
    lo + v[lo..hi].partition_point(|&x| pred(x))
}

/// The merged union of `iv`: sorted, disjoint, non-empty; touching intervals merge.
pub fn union(iv: &[(Ps, Ps)]) -> Vec<(Ps, Ps)> {
    let mut v: Vec<(Ps, Ps)> = iv.iter().copied().filter(|i| i.1 > i.0).collect();
    v.sort();
    let mut out: Vec<(Ps, Ps)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// torch's `intervals_overlap` called once per event on one shared interval list.
///
/// Each call sorts the list by start (stable), adds the overlap with the first interval, then walks
/// with `i = 0, j = 1`: a `cur` inside `prev` is skipped together with the interval after it; a
/// `cur` overlapping `prev` partially gets `cur.start = prev.end` **in the shared list** and
/// `i = j + 1`, so the next interval is compared with itself and truncated to zero length. The
/// intervals a call counts do not depend on the event, so each call is one walk over the list
/// (O(k log k)) and a [`Cover`]; once a walk changes nothing the list is settled and its cover
/// answers every later call.
#[derive(Clone, Debug)]
pub struct CompatOverlap {
    list: Vec<(Ps, Ps)>,
    order: Vec<u32>,
    cover: Cover,
    settled: bool,
    /// Walks that changed the list (for the docs' figures).
    pub changing_walks: usize,
}

impl CompatOverlap {
    /// Starts from `list` in construction order (the order decides ties of the stable sort).
    pub fn new(list: Vec<(Ps, Ps)>) -> CompatOverlap {
        CompatOverlap {
            order: (0..list.len() as u32).collect(),
            list,
            cover: Cover::default(),
            settled: false,
            changing_walks: 0,
        }
    }

    /// The overlap torch's next call computes for the event `[a, b)`.
    pub fn next(&mut self, a: Ps, b: Ps) -> Ps {
        if !self.settled {
            self.walk();
        }
        self.cover.overlap(a, b)
    }

    /// The covers torch's first `calls` calls count with: call `k` uses entry `min(k, len − 1)`
    /// (the list settles after a few walks, so the result is short).
    pub fn covers(mut self, calls: usize) -> Vec<Cover> {
        let mut out = Vec::new();
        while out.len() < calls && !self.settled {
            self.walk();
            out.push(std::mem::take(&mut self.cover));
        }
        out
    }

    /// The list as it stands now (after the calls made so far).
    pub fn list(&self) -> &[(Ps, Ps)] {
        &self.list
    }

    fn walk(&mut self) {
        let list = &mut self.list;
        self.order.sort_by_key(|&k| (list[k as usize].0, k));
        let n = self.order.len();
        let mut counted: Vec<(Ps, Ps)> = Vec::with_capacity(n);
        let mut changed = false;
        if let Some(&f) = self.order.first() {
            counted.push(list[f as usize]);
        }
        let (mut i, mut j) = (0usize, 1usize);
        while j < n {
            let prev = list[self.order[i] as usize];
            let ci = self.order[j] as usize;
            j += 1;
            if prev.1 > list[ci].0 {
                if prev.1 > list[ci].1 {
                    j += 1;
                    continue;
                }
                list[ci].0 = prev.1;
                changed = true;
                i = j;
            }
            counted.push(list[ci]);
        }
        if changed {
            self.changing_walks += 1;
        } else {
            self.settled = true;
        }
        self.cover = Cover::new(counted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(iv: &[(Ps, Ps)], a: Ps, b: Ps) -> Ps {
        iv.iter().map(|&(s, e)| (b.min(e) - a.max(s)).max(0)).sum()
    }

    #[test]
    fn cover_matches_brute_force() {
        let iv = [(0, 10), (5, 15), (20, 30), (25, 25), (40, 35)];
        let c = Cover::new(iv);
        for a in -5..45 {
            for b in a..50 {
                assert_eq!(c.overlap(a, b), brute(&iv, a, b), "[{a},{b})");
            }
        }
    }

    #[test]
    fn union_merges_touching() {
        assert_eq!(
            union(&[(5, 8), (0, 5), (10, 12), (11, 20), (30, 30)]),
            vec![(0, 8), (10, 20)]
        );
    }

    /// torch's function transcribed literally, list of mutable intervals.
    fn torch(list: &mut [(Ps, Ps)], a: Ps, b: Ps) -> Ps {
        let mut order: Vec<usize> = (0..list.len()).collect();
        order.sort_by_key(|&k| list[k].0);
        let ov = |s: Ps, e: Ps| (b.min(e) - a.max(s)).max(0);
        let mut t = 0;
        if let Some(&f) = order.first() {
            t += ov(list[f].0, list[f].1);
        }
        let (mut i, mut j) = (0, 1);
        while j < order.len() {
            let prev = list[order[i]];
            let c = order[j];
            j += 1;
            if prev.1 > list[c].0 {
                if prev.1 > list[c].1 {
                    j += 1;
                    continue;
                }
                list[c].0 = prev.1;
                i = j;
            }
            t += ov(list[c].0, list[c].1);
        }
        t
    }

    #[test]
    fn compat_quirks_hand_computed() {
        // Disjoint: exact overlap.
        let mut c = CompatOverlap::new(vec![(0, 10), (20, 30)]);
        assert_eq!(c.next(5, 25), 10);
        // Subsumed (2,4) hides its successor (6,8): only (0,10) counts → [0,10) ∩ [0,100) = 10,
        // while the union would say 10 too; the event [6,8) shows it: 2 from (0,10), nothing else.
        let mut c = CompatOverlap::new(vec![(0, 10), (2, 4), (6, 8), (20, 30)]);
        assert_eq!(c.next(0, 100), 20); // (0,10) + (20,30); (6,8) skipped
        // Partial overlap: (5,15) becomes (10,15); then (20,30) is compared with itself → (30,30).
        let mut c = CompatOverlap::new(vec![(0, 10), (5, 15), (20, 30)]);
        assert_eq!(c.next(0, 100), 15);
        assert_eq!(c.list(), &[(0, 10), (10, 15), (30, 30)]);
        // The truncation persists: the next call sees (0,10), (10,15), (30,30).
        assert_eq!(c.next(0, 100), 15);
    }

    proptest::proptest! {
        #[test]
        fn compat_matches_literal_transcription(
            iv in proptest::collection::vec((0i64..60, 0i64..25), 0..8),
            ev in proptest::collection::vec((0i64..80, 0i64..40), 1..6),
        ) {
            let list: Vec<(Ps, Ps)> = iv.iter().map(|&(s, d)| (s, s + d - 5)).collect();
            let mut lit = list.clone();
            let mut fast = CompatOverlap::new(list);
            for &(a, d) in &ev {
                proptest::prop_assert_eq!(fast.next(a, a + d), torch(&mut lit, a, a + d));
            }
            proptest::prop_assert_eq!(fast.list(), &lit[..]);
        }

        #[test]
        fn covers_and_runs_match_calls(
            iv in proptest::collection::vec((0i64..60, 0i64..25), 0..8),
            ev in proptest::collection::vec((0i64..80, 0i64..40), 1..12),
        ) {
            let list: Vec<(Ps, Ps)> = iv.iter().map(|&(s, d)| (s, s + d - 5)).collect();
            let mut calls = CompatOverlap::new(list.clone());
            let covers = CompatOverlap::new(list).covers(ev.len());
            let mut sorted: Vec<(Ps, Ps)> = ev.iter().map(|&(a, d)| (a, a + d - 3)).collect();
            for (k, &(a, b)) in sorted.iter().enumerate() {
                let c = &covers[k.min(covers.len() - 1)];
                proptest::prop_assert_eq!(c.overlap(a, b), calls.next(a, b));
            }
            sorted.sort_unstable();
            let (st, en): (Vec<Ps>, Vec<Ps>) = sorted.iter().copied().unzip();
            let last = &covers[covers.len() - 1];
            let mut got = vec![0; st.len()];
            last.overlap_run(&st, &en, |i, v| got[i] = v);
            let want: Vec<Ps> = sorted.iter().map(|&(a, b)| last.overlap(a, b)).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }
}
