//! The hit list: slices the user is stepping through with `n` / `N` — the occurrences of a
//! search result or the ranked optimizable events — in time order, with what the timeline needs
//! to highlight them (membership by id, and per-lane start times so a hit inside a merged
//! level-of-detail cell still shows).

use crate::model::{Capture, Ps};
use rustc_hash::{FxHashMap, FxHashSet};

/// Slices to step through and highlight.
#[derive(Debug, Clone, Default)]
pub struct HitList {
    /// What the hits are, for the status line (`search "conv"`, `ranking`).
    pub label: String,
    /// Slice ids in (start, id) order.
    pub ids: Vec<u32>,
    set: FxHashSet<u32>,
    /// Per (track, lane): sorted (start, end) of the hits there.
    lanes: FxHashMap<(u32, u16), Vec<(Ps, Ps)>>,
    /// Index of the hit last stepped to.
    pub pos: Option<usize>,
    /// Step in the given order (a ranking) instead of time order.
    pub ordered: bool,
    /// `n` / `N` stay on the cursor's track.
    pub within_track: bool,
    /// Dim everything that is not a hit.
    pub dim: bool,
}

impl HitList {
    /// A hit list over `ids` (any order; sorted here by (start, id)).
    pub fn new(cap: &Capture, label: impl Into<String>, mut ids: Vec<u32>) -> HitList {
        let s = &cap.slices;
        ids.retain(|&id| (id as usize) < s.len());
        ids.sort_unstable_by_key(|&id| (s.start[id as usize], id));
        ids.dedup();
        let mut lanes: FxHashMap<(u32, u16), Vec<(Ps, Ps)>> = FxHashMap::default();
        for &id in &ids {
            let i = id as usize;
            lanes
                .entry((cap.track_of(id), s.lane[i]))
                .or_default()
                .push((s.start[i], s.end(i)));
        }
        HitList {
            label: label.into(),
            set: ids.iter().copied().collect(),
            ids,
            lanes,
            pos: None,
            ordered: false,
            within_track: false,
            dim: false,
        }
    }

    /// A hit list stepped through in the given order (best first), highlighted like any other.
    pub fn in_order(cap: &Capture, label: impl Into<String>, ids: Vec<u32>) -> HitList {
        let mut h = HitList::new(cap, label, ids.clone());
        h.ids = ids
            .into_iter()
            .filter(|&id| (id as usize) < cap.slices.len())
            .collect();
        h.ordered = true;
        h
    }

    /// True when slice `id` is a hit.
    pub fn contains(&self, id: u32) -> bool {
        self.set.contains(&id)
    }

    /// True when a hit on (track, lane) overlaps `[a, b)`.
    pub fn any_in(&self, track: u32, lane: u16, a: Ps, b: Ps) -> bool {
        let Some(v) = self.lanes.get(&(track, lane)) else {
            return false;
        };
        // Within a lane starts and ends are both sorted: the last hit starting before `b` has
        // the latest end of those.
        let k = v.partition_point(|&(st, _)| st < b);
        k > 0 && v[k - 1].1 > a
    }

    /// The next (or previous) hit after slice `from` (by (start, id)), or from time `t` when
    /// nothing is selected; restricted to `track` when given. Returns (index, id).
    pub fn step(
        &self,
        cap: &Capture,
        from: Option<u32>,
        t: Ps,
        forward: bool,
        track: Option<u32>,
    ) -> Option<(usize, u32)> {
        let s = &cap.slices;
        if self.ordered {
            let ok = |id: u32| track.is_none_or(|tr| cap.track_of(id) == tr);
            let at = from.and_then(|id| self.ids.iter().position(|&x| x == id));
            return match (at, forward) {
                (None, _) => self.ids.iter().position(|&id| ok(id)),
                (Some(p), true) => (p + 1..self.ids.len()).find(|&i| ok(self.ids[i])),
                (Some(p), false) => (0..p).rev().find(|&i| ok(self.ids[i])),
            }
            .map(|i| (i, self.ids[i]));
        }
        let key = |id: u32| (s.start[id as usize], id);
        let here = match from {
            Some(id) if (id as usize) < s.len() => key(id),
            _ if forward => (t, 0),
            _ => (t, u32::MAX),
        };
        let ok = |id: u32| track.is_none_or(|tr| cap.track_of(id) == tr);
        let k = self.ids.partition_point(|&id| key(id) <= here);
        if forward {
            (k..self.ids.len())
                .map(|i| (i, self.ids[i]))
                .find(|&(_, id)| ok(id) && key(id) > here)
        } else {
            let k = self.ids.partition_point(|&id| key(id) < here);
            (0..k)
                .rev()
                .map(|i| (i, self.ids[i]))
                .find(|&(_, id)| ok(id))
        }
    }

    /// Position of slice `id` in the list, when it is a hit.
    pub fn index_of(&self, cap: &Capture, id: u32) -> Option<usize> {
        if self.ordered {
            return self.ids.iter().position(|&x| x == id);
        }
        let s = &cap.slices;
        let key = (s.start.get(id as usize).copied()?, id);
        let k = self
            .ids
            .partition_point(|&x| (s.start[x as usize], x) < key);
        (self.ids.get(k) == Some(&id)).then_some(k)
    }

    /// Hits inside `[a, b)` (by start).
    pub fn count_in(&self, cap: &Capture, a: Ps, b: Ps) -> usize {
        let s = &cap.slices;
        if self.ordered {
            return self
                .ids
                .iter()
                .filter(|&&id| s.start[id as usize] >= a && s.start[id as usize] < b)
                .count();
        }
        let lo = self.ids.partition_point(|&id| s.start[id as usize] < a);
        let hi = self.ids.partition_point(|&id| s.start[id as usize] < b);
        hi - lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::demo;

    #[test]
    fn steps_in_time_order_and_within_a_track() {
        let cap = demo::capture(4, 3, false);
        let all: Vec<u32> = (0..cap.slices.len() as u32).collect();
        let h = HitList::new(&cap, "all", all.clone());
        // Brute force: the order by (start, id).
        let mut want = all;
        want.sort_by_key(|&id| (cap.slices.start[id as usize], id));
        let mut got = Vec::new();
        let mut cur = None;
        while let Some((_, id)) = h.step(&cap, cur, i64::MIN, true, None) {
            got.push(id);
            cur = Some(id);
        }
        assert_eq!(got, want);
        // And back.
        let mut back = Vec::new();
        while let Some((_, id)) = h.step(&cap, cur, i64::MAX, false, None) {
            back.push(id);
            cur = Some(id);
        }
        assert_eq!(back.len(), want.len() - 1);
        let t = cap.track_of(want[0]);
        let mut cur = None;
        while let Some((_, id)) = h.step(&cap, cur, i64::MIN, true, Some(t)) {
            assert_eq!(cap.track_of(id), t);
            cur = Some(id);
        }
        assert!(h.any_in(
            t,
            cap.slices.lane[want[0] as usize],
            cap.slices.start[want[0] as usize],
            cap.slices.start[want[0] as usize] + 1
        ));
        assert_eq!(h.count_in(&cap, i64::MIN, i64::MAX), want.len());
    }
}
