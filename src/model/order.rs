//! The global slice order `finish` sorts into (track, start asc, dur desc, raw id) and the
//! enclosing-slice lookup over a finished track.

use super::capture::{NO_SLICE, Ps, Slices, Track};

/// Slice counts from which `finish` sorts and permutes on several threads.
pub(super) const PARALLEL_MIN_SLICES: usize = 1 << 16;

/// Raw slice ids ordered by (track, start asc, dur desc, raw id): a counting sort by track
/// (stable, so ids stay ascending within a track), then each track's bucket sorted on packed
/// keys (no indirection in the comparisons) unless already in order; tracks are spread over
/// threads for large captures. Same result as one comparison sort on the whole key.
pub fn sort_slice_order(track: &[u32], start: &[Ps], dur: &[Ps], ntracks: usize) -> Vec<u32> {
    let n = track.len();
    let nt = ntracks.max(track.iter().map(|&t| t as usize + 1).max().unwrap_or(0));
    let mut bounds = vec![0usize; nt + 1];
    for &t in track {
        bounds[t as usize + 1] += 1;
    }
    for t in 0..nt {
        bounds[t + 1] += bounds[t];
    }
    let mut fill = bounds.clone();
    let mut order = vec![0u32; n];
    for (i, &t) in track.iter().enumerate() {
        order[fill[t as usize]] = i as u32;
        fill[t as usize] += 1;
    }
    drop(fill);
    crate::timings::mark("finish: bucket by track");
    let sort_buckets = |part: &mut [u32], base: usize, tracks: std::ops::Range<usize>| {
        let mut keys: Vec<(Ps, std::cmp::Reverse<Ps>, u32)> = Vec::new();
        for t in tracks {
            let (lo, hi) = (bounds[t] - base, bounds[t + 1] - base);
            let ids = &mut part[lo..hi];
            let key = |i: u32| (start[i as usize], std::cmp::Reverse(dur[i as usize]), i);
            if ids.windows(2).all(|w| key(w[0]) < key(w[1])) {
                continue;
            }
            keys.clear();
            keys.extend(ids.iter().map(|&i| key(i)));
            sort_in_blocks(&mut keys);
            for (dst, k) in ids.iter_mut().zip(&keys) {
                *dst = k.2;
            }
        }
    };
    let threads = crate::threads::cores();
    if n < PARALLEL_MIN_SLICES || threads < 2 || nt < 2 {
        sort_buckets(&mut order, 0, 0..nt);
        return order;
    }
    // Contiguous track groups of about n / threads slices each: each cut at the track boundary
    // nearest its target (a few big tracks are common: the first boundary past the target
    // could leave one thread almost all the work).
    let mut cuts = vec![0usize];
    for k in 1..threads {
        let want = k * n / threads;
        let t = bounds.partition_point(|&b| b < want).min(nt);
        let t = if t > 0 && want - bounds[t - 1] < bounds[t].saturating_sub(want) {
            t - 1
        } else {
            t
        };
        if t > *cuts.last().unwrap_or(&0) && t < nt {
            cuts.push(t);
        }
    }
    cuts.push(nt);
    std::thread::scope(|sc| {
        let mut rest: &mut [u32] = &mut order;
        let mut taken = 0usize;
        for w in cuts.windows(2) {
            let (t0, t1) = (w[0], w[1]);
            let len = bounds[t1] - bounds[t0];
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(len);
            rest = tail;
            let base = taken;
            taken += len;
            let sb = &sort_buckets;
            sc.spawn(move || sb(part, base, t0..t1));
        }
    });
    order
}

/// Sorts unique `keys` as `sort()` does, first cutting them wherever every key before the cut
/// is below every key after it, and sorting each block on its own. A track is a few long
/// ascending runs, each overlapping only its neighbours (a capture's profiling windows, each
/// copy of a replicated trace: run k's tail interleaves with run k+1's head); the stable sort,
/// which finds runs and merges them, then pays about one merge pass, not one per level of a tree
/// over all the runs. Keys are unique, so the stable order is the only sorted one.
fn sort_in_blocks<K: Ord + Copy>(keys: &mut [K]) {
    let n = keys.len();
    // Where each maximal ascending run starts; many runs: no long ones to cut between.
    let mut runs = vec![0usize];
    for i in 1..n {
        if keys[i] < keys[i - 1] {
            runs.push(i);
            if runs.len() > n / 64 + 2 {
                keys.sort();
                return;
            }
        }
    }
    if runs.len() == 1 {
        return;
    }
    runs.push(n);
    let m = runs.len() - 1;
    // A run's first key is its least, its last its greatest. `after[r]`: the least key of the
    // runs after r.
    let mut after: Vec<Option<K>> = vec![None; m];
    for r in (0..m - 1).rev() {
        let first = keys[runs[r + 1]];
        after[r] = Some(after[r + 1].map_or(first, |l| l.min(first)));
    }
    // A cut at p inside run r (s ≤ p ≤ e) needs max(G, keys[p-1]) < min(keys[p], L), G the
    // greatest key before the run and L the least after it: p at or past the run's first key
    // above G, and keys[p-1] below L. Both cuts bounding that range are kept (the keys between
    // are one sorted piece).
    let mut cuts = vec![0usize];
    let mut before: Option<K> = None;
    for r in 0..m {
        let (s, e) = (runs[r], runs[r + 1]);
        let run = &keys[s..e];
        let lo = s + before.map_or(0, |g| run.partition_point(|&k| k <= g));
        let hi = s + after[r].map_or(run.len(), |l| run.partition_point(|&k| k < l));
        let apart = match (before, after[r]) {
            (Some(g), Some(l)) => g < l,
            _ => true,
        };
        if apart && lo <= hi {
            for p in [lo, hi] {
                if p > *cuts.last().unwrap_or(&0) && p < n {
                    cuts.push(p);
                }
            }
        }
        let last = keys[e - 1];
        before = Some(before.map_or(last, |g| g.max(last)));
    }
    cuts.push(n);
    for w in cuts.windows(2) {
        keys[w[0]..w[1]].sort();
    }
}

/// The deepest slice of `track` (finished: lanes assigned) with `start <= ts < end`, or a
/// zero-length slice starting exactly at `ts`; `NO_SLICE` when none.
pub fn enclosing_slice(s: &Slices, track: &Track, ts: Ps) -> u32 {
    let (lo, hi) = (track.slices.0 as usize, track.slices.1 as usize);
    // Last slice starting at or before ts; walk up its parent chain until one contains ts.
    let k = lo + s.start[lo..hi].partition_point(|&x| x <= ts);
    let contains = |i: usize| {
        let st = s.start[i];
        (st <= ts && ts < st + s.dur[i]) || (s.dur[i] == 0 && st == ts)
    };
    if track.group_bases.len() <= 1 {
        // One lane group: slices nest properly, so every slice starting between the deepest
        // one containing `ts` and `ts` lies inside it — that slice is the last one starting at
        // or before `ts` or its first ancestor containing `ts` (what the scan below finds).
        let mut p = if k > lo { (k - 1) as u32 } else { NO_SLICE };
        while p != NO_SLICE {
            if contains(p as usize) {
                return p;
            }
            p = s.parent[p as usize];
        }
        return NO_SLICE;
    }
    let mut best = NO_SLICE;
    let mut best_depth = -1i32;
    // Scan backwards over a bounded number of candidates (slices on other lanes may overlap).
    let mut i = k;
    let mut steps = 0;
    while i > lo && steps < 64 {
        i -= 1;
        steps += 1;
        if contains(i) {
            let d = i32::from(track.depth_of_lane(s.lane[i]));
            if d > best_depth {
                best = i as u32;
                best_depth = d;
            }
        }
    }
    if best == NO_SLICE && k > lo {
        // Long-running ancestors: follow the parent chain of the nearest earlier slice.
        let mut p = (k - 1) as u32;
        while p != NO_SLICE {
            let pi = p as usize;
            if s.start[pi] <= ts && ts < s.start[pi] + s.dur[pi] {
                return p;
            }
            p = s.parent[pi];
        }
    }
    best
}

#[cfg(test)]
mod sort_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Runs shifted so they overlap only some neighbours, shuffled pieces, repeats of one
        /// start: the blockwise sort equals the plain one.
        #[test]
        fn sort_in_blocks_is_the_sort(
            runs in proptest::collection::vec((0i64..400, 1usize..60, 1i64..9), 0..12),
            noise in proptest::collection::vec((0usize..400, 0i64..400), 0..6),
        ) {
            let mut keys: Vec<(Ps, u32)> = Vec::new();
            for &(base, len, step) in &runs {
                for k in 0..len {
                    let id = keys.len() as u32;
                    keys.push((base + k as Ps * step, id));
                }
            }
            for &(at, v) in &noise {
                if !keys.is_empty() {
                    let at = at % keys.len();
                    keys[at].0 = v;
                }
            }
            let mut want = keys.clone();
            want.sort();
            sort_in_blocks(&mut keys);
            prop_assert_eq!(keys, want);
        }
    }

    #[test]
    fn sort_order_matches_comparison_sort() {
        // Pseudo-random tracks/starts/durs with many ties; big enough for the threaded path.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for n in [0usize, 1, 5, 1000, PARALLEL_MIN_SLICES + 777] {
            let nt = 1 + n / 300;
            let tr: Vec<u32> = (0..n).map(|_| next(nt as u64) as u32).collect();
            let st: Vec<Ps> = (0..n).map(|_| next(50) as Ps).collect();
            let du: Vec<Ps> = (0..n).map(|_| next(4) as Ps).collect();
            let mut want: Vec<u32> = (0..n as u32).collect();
            want.sort_by_key(|&i| {
                let i = i as usize;
                (tr[i], st[i], std::cmp::Reverse(du[i]), i)
            });
            assert_eq!(sort_slice_order(&tr, &st, &du, nt), want, "n = {n}");
            // Already sorted within tracks: still grouped by track correctly.
            let st2: Vec<Ps> = (0..n as Ps).collect();
            let mut want2: Vec<u32> = (0..n as u32).collect();
            want2.sort_by_key(|&i| (tr[i as usize], i));
            assert_eq!(sort_slice_order(&tr, &st2, &du, nt), want2);
        }
    }
}

#[cfg(test)]
mod enclosing_tests {
    use super::*;
    use crate::model::{ArgsRef, CaptureBuilder, Format, Key, SourceInfo, StrId, TrackKind};
    use proptest::prelude::*;

    /// The deepest slice of the track containing `ts` (zero-length ones at `ts` included),
    /// by looking at every slice; ties (only possible with overlaps) are not compared.
    fn brute(s: &Slices, t: &Track, ts: Ps) -> Option<(u16, bool)> {
        let (lo, hi) = (t.slices.0 as usize, t.slices.1 as usize);
        let mut best: Option<u16> = None;
        let mut tie = false;
        for i in lo..hi {
            let (st, du) = (s.start[i], s.dur[i]);
            if (st <= ts && ts < st + du) || (du == 0 && st == ts) {
                let d = t.depth_of_lane(s.lane[i]);
                match best {
                    Some(b) if b == d => tie = true,
                    Some(b) if b > d => {}
                    _ => {
                        best = Some(d);
                        tie = false;
                    }
                }
            }
        }
        best.map(|d| (d, tie))
    }

    proptest! {
        /// On properly nested tracks (the fast path) and on tracks with overlaps (the scan), the
        /// slice found is one of the deepest containing `ts`, or none when none contains it.
        #[test]
        fn enclosing_is_the_deepest(
            spans in proptest::collection::vec((0i64..60, 0i64..25), 1..80),
            nested in any::<bool>(),
        ) {
            let mut b = CaptureBuilder::new();
            let p = b.process(Key::Int(1));
            let t = b.track(p, Key::Int(1), TrackKind::Thread);
            // Nested: each span clipped into the enclosing one of a stack (a proper tree).
            let mut stack: Vec<(Ps, Ps)> = Vec::new();
            let mut sorted = spans.clone();
            sorted.sort_by_key(|&(s, d)| (s, std::cmp::Reverse(d)));
            for (st, du) in sorted {
                let (st, du) = if nested {
                    while stack.last().is_some_and(|&(_, e)| e <= st) {
                        stack.pop();
                    }
                    let du = stack.last().map_or(du, |&(_, e)| du.min(e - st));
                    stack.push((st, st + du));
                    (st, du)
                } else {
                    (st, du)
                };
                b.add_slice(t, st, du, StrId::EMPTY, StrId::EMPTY, ArgsRef::NONE, 0);
            }
            let c = b.finish(SourceInfo::default(), Format::Chrome);
            let tr = &c.tracks[t as usize];
            if nested {
                prop_assert!(tr.group_bases.len() <= 1);
            }
            for ts in -1..90 {
                let got = enclosing_slice(&c.slices, tr, ts);
                match brute(&c.slices, tr, ts) {
                    None => prop_assert_eq!(got, NO_SLICE, "ts {}", ts),
                    Some((d, tie)) => {
                        prop_assert!(got != NO_SLICE, "ts {}", ts);
                        let gd = tr.depth_of_lane(c.slices.lane[got as usize]);
                        if nested || !tie {
                            prop_assert_eq!(gd, d, "ts {}", ts);
                        }
                    }
                }
            }
        }
    }
}
