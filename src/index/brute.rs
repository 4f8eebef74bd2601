//! Brute-force oracle: every [`super::CaptureIndex`] query answered by scanning the model's
//! columns, with the same semantics. Slow (O(n) per query); kept for property tests and
//! benchmark cross-checks.

use super::cell::{Cell, column_edge};
use crate::model::{Capture, NO_SLICE, Ps, StrId};

fn track_ids(cap: &Capture, track: u32) -> std::ops::Range<usize> {
    cap.tracks.get(track as usize).map_or(0..0, |t| {
        let hi = (t.slices.1 as usize).min(cap.slices.len());
        (t.slices.0 as usize).min(hi)..hi
    })
}

fn lane_ids(cap: &Capture, track: u32, lane: usize) -> impl Iterator<Item = usize> + '_ {
    track_ids(cap, track).filter(move |&i| cap.slices.lane[i] as usize == lane)
}

/// Whether slice `i` overlaps `[t0, t1)` (a zero-length slice at `t` when `t0 <= t < t1`; for an
/// empty or reversed window, a slice with `start < t1` and `end > t0`).
pub fn overlaps(cap: &Capture, i: usize, t0: Ps, t1: Ps) -> bool {
    let s = &cap.slices;
    let (st, d) = (s.start[i], s.dur[i]);
    st < t1 && (st + d > t0 || (d == 0 && st >= t0))
}

/// Slices of a lane overlapping `[t0, t1)`, ascending ids.
pub fn window(cap: &Capture, track: u32, lane: usize, t0: Ps, t1: Ps) -> Vec<u32> {
    lane_ids(cap, track, lane)
        .filter(|&i| overlaps(cap, i, t0, t1))
        .map(|i| i as u32)
        .collect()
}

/// Level-of-detail cells of a lane (see [`Cell`] for the definition of each field).
pub fn lod(cap: &Capture, track: u32, lane: usize, t0: Ps, t1: Ps, cols: usize) -> Vec<Cell> {
    let s = &cap.slices;
    (0..cols)
        .map(|k| {
            let a = column_edge(t0, t1, cols, k);
            let b = column_edge(t0, t1, cols, k + 1).max(a.saturating_add(1));
            let mut c = Cell::EMPTY;
            let mut best = -1;
            for i in lane_ids(cap, track, lane).filter(|&i| overlaps(cap, i, a, b)) {
                c.count += 1;
                if s.dur[i] > best {
                    best = s.dur[i];
                    c.longest = i as u32;
                }
                c.busy += s.end(i).min(b) - s.start[i].max(a);
            }
            c
        })
        .collect()
}

/// The slice of a lane at time `t`.
pub fn slice_at(cap: &Capture, track: u32, lane: usize, t: Ps) -> Option<u32> {
    window(cap, track, lane, t, t.saturating_add(1))
        .first()
        .copied()
}

fn lane_of(cap: &Capture, id: u32) -> Option<(u32, usize)> {
    let i = id as usize;
    (i < cap.slices.len()).then(|| (cap.track_of(id), cap.slices.lane[i] as usize))
}

/// Next slice on the same lane.
pub fn next_on_lane(cap: &Capture, id: u32) -> Option<u32> {
    let (t, l) = lane_of(cap, id)?;
    lane_ids(cap, t, l)
        .find(|&i| i > id as usize)
        .map(|i| i as u32)
}

/// Previous slice on the same lane.
pub fn prev_on_lane(cap: &Capture, id: u32) -> Option<u32> {
    let (t, l) = lane_of(cap, id)?;
    lane_ids(cap, t, l)
        .filter(|&i| i < id as usize)
        .last()
        .map(|i| i as u32)
}

/// First slice of a lane starting at or after `t`.
pub fn first_at_or_after(cap: &Capture, track: u32, lane: usize, t: Ps) -> Option<u32> {
    lane_ids(cap, track, lane)
        .find(|&i| cap.slices.start[i] >= t)
        .map(|i| i as u32)
}

/// Last slice of a lane starting before `t`.
pub fn last_before(cap: &Capture, track: u32, lane: usize, t: Ps) -> Option<u32> {
    lane_ids(cap, track, lane)
        .filter(|&i| cap.slices.start[i] < t)
        .last()
        .map(|i| i as u32)
}

/// Parent as the model records it (nesting itself is checked by `model::nesting` and by the
/// containment property in `tests/index_props.rs`).
pub fn parent(cap: &Capture, id: u32) -> Option<u32> {
    let p = *cap.slices.parent.get(id as usize)?;
    (p != NO_SLICE).then_some(p)
}

/// Direct children of a slice (slices whose parent is `id`), ascending ids.
pub fn children(cap: &Capture, id: u32) -> Vec<u32> {
    if id as usize >= cap.slices.len() {
        return Vec::new();
    }
    track_ids(cap, cap.track_of(id))
        .filter(|&i| cap.slices.parent[i] == id)
        .map(|i| i as u32)
        .collect()
}

/// Every slice named `name`, ordered by (start, id).
pub fn occurrences(cap: &Capture, name: StrId) -> Vec<u32> {
    let s = &cap.slices;
    let mut v: Vec<u32> = (0..s.len())
        .filter(|&i| s.name[i] == name)
        .map(|i| i as u32)
        .collect();
    v.sort_by_key(|&i| (s.start[i as usize], i));
    v
}

/// Time in `[t0, t1)` covered by at least one slice of `track` (sweep over all its slices).
pub fn busy_time(cap: &Capture, track: u32, t0: Ps, t1: Ps) -> Ps {
    let s = &cap.slices;
    let mut iv: Vec<(Ps, Ps)> = track_ids(cap, track)
        .map(|i| (s.start[i].max(t0), s.end(i).min(t1)))
        .filter(|(a, b)| a < b)
        .collect();
    iv.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(Ps, Ps)> = None;
    for (a, b) in iv {
        match &mut cur {
            Some((_, ce)) if a <= *ce => *ce = (*ce).max(b),
            _ => {
                if let Some((cs, ce)) = cur {
                    total += ce - cs;
                }
                cur = Some((a, b));
            }
        }
    }
    if let Some((cs, ce)) = cur {
        total += ce - cs;
    }
    total
}
