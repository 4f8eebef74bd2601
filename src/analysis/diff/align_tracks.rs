//! Aligned timelines of two captures (issue 26 §4): which events of a track are aligned, how
//! the tracks of A and B are paired, names made comparable across the two interners, and the
//! per-pair Δ of an aligned stream.
//!
//! The events of a track are its **root slices** (those no other slice of the track encloses),
//! in start order: every kernel and copy of a GPU stream, the top-level operators of a thread
//! (their children follow from them). Tracks pair by their `process / track` title; those left
//! (ranks on different GPUs, thread names carrying thread ids) by track name (`stream 7` of
//! `GPU 3` with `stream 7` of `GPU 1`), then by busy rank — the busiest with the busiest — among
//! the tracks of the same process title, then among all device tracks or all threads.

use super::align::{AlignOptions, Alignment, NONE, Op, align};
use super::side::stream_name;
use crate::analysis::names::match_name;
use crate::model::{Capture, NO_SLICE, Ps, StrId, TrackKind};
use rustc_hash::FxHashMap;

/// A track of A paired with one of B.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrackPair {
    /// Track of A.
    pub a: u32,
    /// Track of B.
    pub b: u32,
    /// A's `process / track` title (B's when it differs: `A ↔ B`).
    pub title: String,
    /// A GPU stream or device line.
    pub device: bool,
    /// Σ root slice duration of both, ps.
    pub busy: Ps,
}

/// A track's events to align: its root slices, in start order.
pub fn events(c: &Capture, t: u32) -> Vec<u32> {
    let Some(tr) = c.tracks.get(t as usize) else {
        return Vec::new();
    };
    let hi = (tr.slices.1 as usize).min(c.slices.len()) as u32;
    (tr.slices.0..hi)
        .filter(|&i| c.slices.parent.get(i as usize) == Some(&NO_SLICE))
        .collect()
}

/// Σ root slice duration and root count of track `t`.
fn busy(c: &Capture, t: u32) -> (Ps, usize) {
    let Some(tr) = c.tracks.get(t as usize) else {
        return (0, 0);
    };
    let s = &c.slices;
    let hi = (tr.slices.1 as usize).min(s.len());
    let mut out = (0, 0);
    for i in tr.slices.0 as usize..hi {
        if s.parent[i] == NO_SLICE {
            out.0 += s.dur[i];
            out.1 += 1;
        }
    }
    out
}

/// A GPU stream, or an XPlane line whose first slice is a device event.
fn is_device(c: &Capture, t: u32) -> bool {
    let Some(tr) = c.tracks.get(t as usize) else {
        return false;
    };
    match tr.kind {
        TrackKind::GpuStream => true,
        TrackKind::XLine => {
            (tr.slices.0 as usize) < c.slices.len()
                && tr.slices.0 < tr.slices.1
                && c.slices.kind(tr.slices.0 as usize).is_device()
        }
        _ => false,
    }
}

/// One candidate track of a capture.
struct Cand {
    t: u32,
    title: String,
    name: String,
    process: String,
    device: bool,
    busy: Ps,
}

fn candidates(c: &Capture) -> Vec<Cand> {
    (0..c.tracks.len() as u32)
        .filter(|&t| {
            matches!(
                c.tracks[t as usize].kind,
                TrackKind::Thread | TrackKind::GpuStream | TrackKind::XLine
            )
        })
        .filter_map(|t| {
            let (b, n) = busy(c, t);
            (n > 0).then(|| Cand {
                t,
                title: stream_name(c, t).trim().to_string(),
                name: c.track_name(t).trim().to_string(),
                process: c.process_title(c.tracks[t as usize].process),
                device: is_device(c, t),
                busy: b,
            })
        })
        .collect()
}

/// Pairs the unpaired candidates of A and B whose `key`s are equal, busiest first.
fn pair_by<K: PartialEq>(
    ca: &[Cand],
    cb: &[Cand],
    pair_of_a: &mut [Option<usize>],
    used_b: &mut [bool],
    key: impl Fn(&Cand) -> K,
) {
    let busiest = |c: &[Cand], v: &mut Vec<usize>| {
        v.sort_by(|&x, &y| c[y].busy.cmp(&c[x].busy).then(x.cmp(&y)));
    };
    let mut rest_a: Vec<usize> = (0..ca.len()).filter(|&k| pair_of_a[k].is_none()).collect();
    let mut rest_b: Vec<usize> = (0..cb.len()).filter(|&j| !used_b[j]).collect();
    busiest(ca, &mut rest_a);
    busiest(cb, &mut rest_b);
    for k in rest_a {
        let want = key(&ca[k]);
        if let Some(&j) = rest_b.iter().find(|&&j| !used_b[j] && key(&cb[j]) == want) {
            used_b[j] = true;
            pair_of_a[k] = Some(j);
        }
    }
}

/// Tracks of A paired with tracks of B (see the module doc): device tracks first, then the
/// busiest first.
pub fn track_pairs(a: &Capture, b: &Capture) -> Vec<TrackPair> {
    let (ca, mut cb) = (candidates(a), candidates(b));
    let mut used_b = vec![false; cb.len()];
    let mut pair_of_a: Vec<Option<usize>> = vec![None; ca.len()];
    let (pa, ub) = (&mut pair_of_a, &mut used_b);
    pair_by(&ca, &cb, pa, ub, |c| c.title.clone());
    pair_by(&ca, &cb, pa, ub, |c| (c.device, c.name.clone()));
    pair_by(&ca, &cb, pa, ub, |c| (c.device, c.process.clone()));
    pair_by(&ca, &cb, pa, ub, |c| c.device);
    let mut out: Vec<TrackPair> = ca
        .iter()
        .zip(&pair_of_a)
        .filter_map(|(c, j)| {
            let d = &mut cb[(*j)?];
            let title = if d.title == c.title {
                c.title.clone()
            } else {
                format!("{} ↔ {}", c.title, std::mem::take(&mut d.title))
            };
            Some(TrackPair {
                a: c.t,
                b: d.t,
                title,
                device: c.device,
                busy: c.busy + d.busy,
            })
        })
        .collect();
    out.sort_by(|x, y| {
        y.device
            .cmp(&x.device)
            .then(y.busy.cmp(&x.busy))
            .then(x.a.cmp(&y.a))
    });
    out
}

/// Name ids of `ea` (events of A) and `eb` (events of B) in one space: equal ids for names
/// equal once addresses read `0x…` ([`match_name`]: a Python frame's object address differs
/// from run to run) — each distinct name of either side looked up once.
pub fn shared_names(a: &Capture, b: &Capture, ea: &[u32], eb: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut by_text: FxHashMap<String, u32> = FxHashMap::default();
    let mut ids = |c: &Capture, events: &[u32]| -> Vec<u32> {
        let mut memo: FxHashMap<StrId, u32> = FxHashMap::default();
        events
            .iter()
            .map(|&i| {
                let n = c.slices.name.get(i as usize).copied().unwrap_or_default();
                *memo.entry(n).or_insert_with(|| {
                    let text = match_name(c.strings.get(n)).into_owned();
                    let next = by_text.len() as u32;
                    *by_text.entry(text).or_insert(next)
                })
            })
            .collect()
    };
    let ids_a = ids(a, ea);
    let ids_b = ids(b, eb);
    (ids_a, ids_b)
}

/// Name of slice `id` of `c` (empty when `c` has no such slice: a capture reloaded since).
pub fn slice_name(c: &Capture, id: u32) -> &str {
    c.slices
        .name
        .get(id as usize)
        .map_or("", |&n| c.strings.get(n))
}

/// How a matched pair's durations compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairStatus {
    /// |Δ| below the noise threshold ([`SAME_PCT`] of the longer, or [`SAME_PS`]).
    Same,
    /// B takes longer.
    Slower,
    /// B is quicker.
    Faster,
}

/// A matched pair is `same` when |Δ| is below this percentage of the longer duration …
pub const SAME_PCT: f64 = 2.0;
/// … or below this many ps (100 ns).
pub const SAME_PS: Ps = 100_000;

/// The status of a matched pair of durations `a` (A) and `b` (B).
pub fn pair_status(a: Ps, b: Ps) -> PairStatus {
    let d = b - a;
    if d.abs() < SAME_PS || (d.abs() as f64) * 100.0 < SAME_PCT * (a.max(b) as f64) {
        PairStatus::Same
    } else if d > 0 {
        PairStatus::Slower
    } else {
        PairStatus::Faster
    }
}

/// Two tracks aligned: their events (slice ids) and the alignment of their names.
#[derive(Clone, Debug)]
pub struct StreamAlignment {
    /// The tracks.
    pub pair: TrackPair,
    /// A's events (slice ids of A), in start order.
    pub a_ids: Vec<u32>,
    /// B's events (slice ids of B).
    pub b_ids: Vec<u32>,
    /// The rows; indices into `a_ids` / `b_ids`.
    pub al: Alignment,
}

/// Aligns the events of `pair` (tracks of `a` and `b`).
pub fn align_pair(
    a: &Capture,
    b: &Capture,
    pair: TrackPair,
    opts: AlignOptions,
) -> StreamAlignment {
    let (a_ids, b_ids) = (events(a, pair.a), events(b, pair.b));
    let (na, nb) = shared_names(a, b, &a_ids, &b_ids);
    let al = align(&na, &nb, opts);
    StreamAlignment {
        pair,
        a_ids,
        b_ids,
        al,
    }
}

/// One matched pair with its durations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairDelta {
    /// Row.
    pub row: u32,
    /// Slice of A.
    pub a: u32,
    /// Slice of B.
    pub b: u32,
    /// A's duration, ps.
    pub dur_a: Ps,
    /// B's duration, ps.
    pub dur_b: Ps,
}

impl StreamAlignment {
    /// Duration of A's slice `x` (index into `a_ids`) and of B's `y`.
    pub fn durs(&self, a: &Capture, b: &Capture, x: u32, y: u32) -> (Ps, Ps) {
        let d = |c: &Capture, ids: &[u32], k: u32| {
            ids.get(k as usize)
                .and_then(|&i| c.slices.dur.get(i as usize))
                .copied()
                .unwrap_or(0)
        };
        (d(a, &self.a_ids, x), d(b, &self.b_ids, y))
    }

    /// The `n` matched pairs with the largest |Δ|, largest first (ties by row).
    pub fn top_deltas(&self, a: &Capture, b: &Capture, n: usize) -> Vec<PairDelta> {
        let mut v: Vec<PairDelta> = self
            .al
            .ops()
            .enumerate()
            .filter_map(|(r, op)| match op {
                Op::Match(x, y) => {
                    let (da, db) = self.durs(a, b, x, y);
                    Some(PairDelta {
                        row: r as u32,
                        a: self.a_ids.get(x as usize).copied().unwrap_or(NONE),
                        b: self.b_ids.get(y as usize).copied().unwrap_or(NONE),
                        dur_a: da,
                        dur_b: db,
                    })
                }
                _ => None,
            })
            .collect();
        let key = |p: &PairDelta| (p.dur_b - p.dur_a).abs();
        v.sort_by(|x, y| key(y).cmp(&key(x)).then(x.row.cmp(&y.row)));
        v.truncate(n);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_threshold() {
        assert_eq!(pair_status(10_000_000, 10_050_000), PairStatus::Same);
        assert_eq!(pair_status(1_000, 90_000), PairStatus::Same);
        assert_eq!(pair_status(10_000_000, 12_000_000), PairStatus::Slower);
        assert_eq!(pair_status(10_000_000, 8_000_000), PairStatus::Faster);
    }
}
