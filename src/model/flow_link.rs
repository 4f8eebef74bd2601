//! Flow points → flows, the part of `CaptureBuilder::finish` that runs after the slices are
//! sorted: points grouped by (cat, id), ordered by time, consecutive points linked. When
//! (cat, id) packs into a few bytes (Kineto's correlation ids), 8-byte codes are sorted and the
//! keys written once in that order ([`keys_by_group`]); otherwise the keys themselves are
//! sorted (whose times look up slice starts). Sorting and the resolving of each end to a slice
//! run on two threads for large captures; the result is the one of the single-threaded order.

use super::builder::{FlowEnd, FlowPoint};
use super::capture::{Flow, NO_SLICE, Ps};
use super::order::PARALLEL_MIN_SLICES;

/// Sort key of a point: (cat, id, time, phase << 30 | seq), seq being the point's index in file
/// order. Unique, so the order is total and an unstable sort equals the stable one. 24 bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct PointKey(u32, u64, Ps, u32);

impl PointKey {
    /// The key of `p`, the point at index `i` of the file-order list.
    fn of(i: usize, p: &FlowPoint, time: &(dyn Fn(FlowEnd) -> Ps + Sync)) -> Self {
        PointKey(
            p.cat.0,
            p.id,
            time(p.end),
            (u32::from(p.phase) << 30) | i as u32,
        )
    }
    fn seq(self) -> usize {
        (self.3 & ((1 << 30) - 1)) as usize
    }
    fn phase(self) -> u32 {
        self.3 >> 30
    }
    fn group(self) -> (u32, u64) {
        (self.0, self.1)
    }
}

/// Whether to split work over two threads.
fn parallel(n: usize) -> bool {
    n >= PARALLEL_MIN_SLICES && crate::threads::cores() > 1
}

/// Sorts `keys` unless already in order.
fn sort_keys(keys: &mut [PointKey]) {
    if !keys.windows(2).all(|w| w[0] < w[1]) {
        sort_unique(keys);
    }
}

/// Sorts `v`, whose items are unique (so the unstable sort is the stable one); for large inputs
/// the halves (split around the median) sort on two threads.
fn sort_unique<T: Ord + Send>(v: &mut [T]) {
    if !parallel(v.len()) {
        v.sort_unstable();
        return;
    }
    let mid = v.len() / 2;
    v.select_nth_unstable(mid);
    let (a, b) = v.split_at_mut(mid);
    std::thread::scope(|sc| {
        sc.spawn(|| a.sort_unstable());
        b.sort_unstable();
    });
}

/// Links consecutive points of each (cat, id) group of sorted `keys[range]`: fills `out` (one
/// slot per link, counted beforehand) and returns (ends alone, starts alone, links with an end
/// on no slice).
fn fill(
    keys: &[PointKey],
    fp: &[FlowPoint],
    resolve: &(dyn Fn(FlowEnd) -> u32 + Sync),
    out: &mut [Flow],
) -> (u64, u64, u64) {
    let mut counts = (0u64, 0u64, 0u64);
    let mut o = 0;
    let mut k = 0;
    while k < keys.len() {
        let mut j = k + 1;
        while j < keys.len() && keys[j].group() == keys[k].group() {
            j += 1;
        }
        for w in k..j - 1 {
            if keys[w + 1].phase() == 0 {
                continue; // a new flow with a reused id starts here
            }
            let (a, b) = (&fp[keys[w].seq()], &fp[keys[w + 1].seq()]);
            let (from, to) = (resolve(a.end), resolve(b.end));
            if from == NO_SLICE || to == NO_SLICE {
                counts.2 += 1;
            }
            if let Some(slot) = out.get_mut(o) {
                *slot = Flow {
                    id: a.id,
                    cat: a.cat,
                    from,
                    to,
                };
            }
            o += 1;
        }
        if j - k == 1 {
            if keys[k].phase() == 0 {
                counts.1 += 1;
            } else {
                counts.0 += 1;
            }
        }
        k = j;
    }
    counts
}

/// Links in sorted `keys` (see [`fill`]).
fn links(keys: &[PointKey]) -> usize {
    keys.windows(2)
        .filter(|w| w[0].group() == w[1].group() && w[1].phase() != 0)
        .count()
}

/// Links the flow points: returns the flows and the unresolved counts (ends alone, starts
/// alone, links with an end on no slice). `fp` must be in file order (`seq` = index).
pub(super) fn link(
    mut fp: Vec<FlowPoint>,
    time: &(dyn Fn(FlowEnd) -> Ps + Sync),
    resolve: &(dyn Fn(FlowEnd) -> u32 + Sync),
) -> (Vec<Flow>, (u64, u64, u64)) {
    if fp.len() >= 1 << 30 {
        // Beyond the packed key: the plain stable sort.
        fp.sort_by_key(|p| (p.cat, p.id, time(p.end), p.phase, p.seq));
        return link_huge(&fp, resolve);
    }
    if let Some(keys) = keys_by_group(&fp, time) {
        crate::timings::mark("flows: keys and sort by group");
        return link_sorted(&fp, resolve, &keys);
    }
    let mut keys: Vec<PointKey> = fp
        .iter()
        .enumerate()
        .map(|(i, p)| PointKey::of(i, p, time))
        .collect();
    crate::timings::mark("flows: keys");
    sort_keys(&mut keys);
    crate::timings::mark("flows: sort");
    link_sorted(&fp, resolve, &keys)
}

/// The sorted keys of `fp` (in file order), built by sorting 8-byte codes — (rank of cat,
/// id − least id) packed above the point's index — and then each (cat, id) group, a flow's two
/// or three points as a rule, by the rest of the key; `None` when the code would not fit (over
/// 256 categories, ids spread over more than 2^34 − rank bits) or the input is small. The
/// 24-byte keys are then written once, in order, instead of being moved by every level of the
/// sort (1.5 M flow points: 37 MB). Same order as sorting the keys: the key is total.
fn keys_by_group(fp: &[FlowPoint], time: &(dyn Fn(FlowEnd) -> Ps + Sync)) -> Option<Vec<PointKey>> {
    const SEQ_BITS: u32 = 30;
    if fp.len() < 256 || fp.len() >= 1 << SEQ_BITS {
        return None;
    }
    let mut cats: Vec<u32> = Vec::new();
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for p in fp {
        if !cats.contains(&p.cat.0) {
            if cats.len() == 256 {
                return None;
            }
            cats.push(p.cat.0);
        }
        lo = lo.min(p.id);
        hi = hi.max(p.id);
    }
    cats.sort_unstable();
    let bits = |x: u64| u64::BITS - x.leading_zeros();
    let (cat_bits, id_bits) = (bits(cats.len() as u64 - 1), bits(hi - lo));
    if cat_bits + id_bits + SEQ_BITS > 64 {
        return None;
    }
    let rank = |c: u32| cats.partition_point(|&x| x < c) as u64;
    let mut codes: Vec<u64> = fp
        .iter()
        .enumerate()
        .map(|(i, p)| (((rank(p.cat.0) << id_bits) | (p.id - lo)) << SEQ_BITS) | i as u64)
        .collect();
    // Unique: the index is part of each code.
    sort_unique(&mut codes);
    let seq_mask = (1u64 << SEQ_BITS) - 1;
    let mut keys: Vec<PointKey> = codes
        .iter()
        .map(|&c| {
            let i = (c & seq_mask) as usize;
            PointKey::of(i, &fp[i], time)
        })
        .collect();
    drop(codes);
    // Within a group (in file order so far), order by (time, phase, seq).
    let mut k = 0;
    while k < keys.len() {
        let g = keys[k].group();
        let mut j = k + 1;
        while j < keys.len() && keys[j].group() == g {
            j += 1;
        }
        let group = &mut keys[k..j];
        if !group.windows(2).all(|w| w[0] < w[1]) {
            group.sort_unstable();
        }
        k = j;
    }
    Some(keys)
}

/// [`link`] once the order is known (`keys` sorted).
fn link_sorted(
    fp: &[FlowPoint],
    resolve: &(dyn Fn(FlowEnd) -> u32 + Sync),
    keys: &[PointKey],
) -> (Vec<Flow>, (u64, u64, u64)) {
    let empty = Flow {
        id: 0,
        cat: Default::default(),
        from: NO_SLICE,
        to: NO_SLICE,
    };
    if !parallel(keys.len()) {
        let mut flows = vec![empty; links(keys)];
        let counts = fill(keys, fp, resolve, &mut flows);
        return (flows, counts);
    }
    // Split at the first group boundary at or after the middle.
    let mut cut = keys.len() / 2;
    while cut > 0 && cut < keys.len() && keys[cut].group() == keys[cut - 1].group() {
        cut += 1;
    }
    let (ka, kb) = keys.split_at(cut);
    let (na, nb) = std::thread::scope(|sc| {
        let h = sc.spawn(|| links(kb));
        let na = links(ka);
        (
            na,
            h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
        )
    });
    let mut flows = vec![empty; na + nb];
    let (fa, fb) = flows.split_at_mut(na);
    let (ca, cb) = std::thread::scope(|sc| {
        let h = sc.spawn(|| fill(kb, fp, resolve, fb));
        let ca = fill(ka, fp, resolve, fa);
        (
            ca,
            h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
        )
    });
    (flows, (ca.0 + cb.0, ca.1 + cb.1, ca.2 + cb.2))
}

/// [`link`] for 2^30 points or more (beyond the packed key), `fp` sorted: one thread.
fn link_huge(
    fp: &[FlowPoint],
    resolve: &(dyn Fn(FlowEnd) -> u32 + Sync),
) -> (Vec<Flow>, (u64, u64, u64)) {
    let mut flows = Vec::new();
    let mut counts = (0u64, 0u64, 0u64);
    let mut k = 0;
    while k < fp.len() {
        let mut j = k + 1;
        while j < fp.len() && (fp[j].cat, fp[j].id) == (fp[k].cat, fp[k].id) {
            j += 1;
        }
        for w in k..j - 1 {
            if fp[w + 1].phase == 0 {
                continue;
            }
            let (from, to) = (resolve(fp[w].end), resolve(fp[w + 1].end));
            if from == NO_SLICE || to == NO_SLICE {
                counts.2 += 1;
            }
            flows.push(Flow {
                id: fp[w].id,
                cat: fp[w].cat,
                from,
                to,
            });
        }
        if j - k == 1 {
            if fp[k].phase == 0 {
                counts.1 += 1;
            } else {
                counts.0 += 1;
            }
        }
        k = j;
    }
    (flows, counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StrId;

    /// A xorshift generator: `next(m)` is a pseudo-random number below `m`.
    fn xorshift(mut x: u64) -> impl FnMut(u64) -> u64 {
        move |m| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        }
    }

    /// The single-threaded reference: stable sort on the full key, then the plain walk.
    fn reference(
        mut fp: Vec<FlowPoint>,
        time: &(dyn Fn(FlowEnd) -> Ps + Sync),
        resolve: &(dyn Fn(FlowEnd) -> u32 + Sync),
    ) -> (Vec<Flow>, (u64, u64, u64)) {
        fp.sort_by_key(|p| (p.cat, p.id, time(p.end), p.phase, p.seq));
        link_huge(&fp, resolve)
    }

    proptest::proptest! {
        /// The keys sorted by group equal the sorted keys whenever that path runs, and it runs
        /// for few cats and ids close together (Kineto's correlation ids).
        #[test]
        fn keys_by_group_is_the_sort(
            raw in proptest::collection::vec((0u32..300, 0u64..64, 0u32..50, 0u8..3), 256..700),
            cat_spread in 1u32..300,
            id_base in proptest::prop_oneof![
                proptest::strategy::Just(0u64),
                proptest::strategy::Just(1u64 << 40),
                proptest::strategy::Just(u64::MAX - 100)
            ],
            id_scale in proptest::prop_oneof![
                proptest::strategy::Just(1u64),
                proptest::strategy::Just(1u64 << 29)
            ],
        ) {
            let fp: Vec<FlowPoint> = raw
                .iter()
                .enumerate()
                .map(|(i, &(c, id, t, ph))| FlowPoint {
                    id: id_base.wrapping_add(id.saturating_mul(id_scale)),
                    cat: StrId(c % cat_spread),
                    end: FlowEnd::Slice(t),
                    phase: ph,
                    seq: i as u32,
                })
                .collect();
            let time = |e: FlowEnd| match e {
                FlowEnd::Slice(r) => Ps::from(r % 40) - 20,
                FlowEnd::Enclosing { ts, .. } | FlowEnd::Next { ts, .. } => ts,
            };
            let mut want: Vec<PointKey> =
                fp.iter().enumerate().map(|(i, p)| PointKey::of(i, p, &time)).collect();
            want.sort();
            let fits = cat_spread <= 16 && id_scale == 1 && id_base != u64::MAX - 100;
            match keys_by_group(&fp, &time) {
                Some(got) => proptest::prop_assert!(got == want),
                None => proptest::prop_assert!(!fits),
            }
        }
    }

    #[test]
    fn sort_keys_is_the_sort_on_both_paths() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for n in [0usize, 1, 300, PARALLEL_MIN_SLICES + 99] {
            let mut keys: Vec<PointKey> = (0..n)
                .map(|i| {
                    let (c, id, t) = (next(3) as u32, next(n as u64 / 2 + 1), next(50) as Ps);
                    PointKey(c, id, t, (next(3) as u32) << 30 | i as u32)
                })
                .collect();
            let mut want = keys.clone();
            want.sort();
            sort_keys(&mut keys);
            assert!(keys == want, "n = {n}");
        }
    }

    #[test]
    fn matches_the_stable_sort_on_both_paths() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        // Few ids and times so that groups, ties and reused ids are common.
        for n in [0usize, 1, 2, 7, 500, PARALLEL_MIN_SLICES + 1234] {
            let ids = (n as u64 / 3).max(1);
            let fp: Vec<FlowPoint> = (0..n)
                .map(|i| FlowPoint {
                    id: next(ids),
                    cat: StrId(next(3) as u32),
                    end: match next(3) {
                        0 => FlowEnd::Slice(next(1000) as u32),
                        1 => FlowEnd::Enclosing {
                            track: next(4) as u32,
                            ts: next(50) as Ps,
                        },
                        _ => FlowEnd::Next {
                            track: next(4) as u32,
                            ts: next(50) as Ps,
                        },
                    },
                    phase: next(3) as u8,
                    seq: i as u32,
                })
                .collect();
            let time = |e: FlowEnd| match e {
                FlowEnd::Slice(r) => Ps::from(r % 40),
                FlowEnd::Enclosing { ts, .. } | FlowEnd::Next { ts, .. } => ts,
            };
            // Some ends on no slice.
            let resolve = |e: FlowEnd| match e {
                FlowEnd::Slice(r) => r,
                FlowEnd::Enclosing { track, ts } | FlowEnd::Next { track, ts } => {
                    if ts % 7 == 0 {
                        NO_SLICE
                    } else {
                        track * 100 + ts as u32
                    }
                }
            };
            let got = link(fp.clone(), &time, &resolve);
            let want = reference(fp, &time, &resolve);
            assert_eq!(got, want, "n = {n}");
        }
    }
}
