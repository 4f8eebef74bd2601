//! Occurrences of a result set in time order — across tracks, or within one track — built from
//! the per-name posting lists, with next / previous from any point in O(log n) and counts for a
//! time range.
//!
//! Order is (start, slice id), the postings' order. "Next after" a slice means the first
//! occurrence ordered after that slice's (start, id), so stepping from a selected occurrence
//! never repeats it and stepping from any other slice continues from its time.

use super::filter::EventFilter;
use crate::index::CaptureIndex;
use crate::index::postings::Postings;
use crate::model::{Capture, Ps, Slices, StrId};
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Source of per-name posting lists (slice ids of one name ordered by (start, id)).
pub trait NamePostings: Sync {
    /// Slices named `name`, ordered by (start, id).
    fn occurrences(&self, name: StrId) -> &[u32];
}

impl NamePostings for CaptureIndex {
    fn occurrences(&self, name: StrId) -> &[u32] {
        CaptureIndex::occurrences(self, name)
    }
}

impl NamePostings for Postings {
    fn occurrences(&self, name: StrId) -> &[u32] {
        self.get(name)
    }
}

/// Time-ordered occurrences of some names (borrowed from the postings when there is one name and
/// no filter).
#[derive(Clone, Debug, Default)]
pub struct Occurrences<'a> {
    ids: Cow<'a, [u32]>,
}

impl<'a> Occurrences<'a> {
    /// Every slice named one of `names` that passes `filter`, in (start, id) order: a k-way merge
    /// of the posting lists, O(n log k).
    pub fn of_names(
        cap: &Capture,
        postings: &'a dyn NamePostings,
        names: &[StrId],
        filter: &EventFilter,
    ) -> Occurrences<'a> {
        let s = &cap.slices;
        if let [one] = names
            && filter.is_empty()
        {
            return Occurrences {
                ids: Cow::Borrowed(postings.occurrences(*one)),
            };
        }
        let lists: Vec<&[u32]> = names
            .iter()
            .map(|&n| postings.occurrences(n))
            .filter(|l| !l.is_empty())
            .collect();
        let mut out = Vec::with_capacity(lists.iter().map(|l| l.len()).sum());
        let mut buf = String::new();
        let mut keep = |id: u32, out: &mut Vec<u32>| {
            if filter.is_empty() || filter.slice_ok(cap, id, cap.track_of(id), &mut buf) {
                out.push(id);
            }
        };
        if let [one] = lists.as_slice() {
            one.iter().for_each(|&id| keep(id, &mut out));
        } else if lists.len() > MERGE_LISTS_MAX {
            // Many names: one scan of the name column marks their slices track by track (each
            // track is already in (start, id) order), then a merge over tracks, O(n log tracks).
            let mut want = vec![false; cap.strings.len()];
            for &n in names {
                if let Some(w) = want.get_mut(n.index()) {
                    *w = true;
                }
            }
            let per_track: Vec<Vec<u32>> = cap
                .tracks
                .iter()
                .map(|t| {
                    let mut v = Vec::new();
                    for id in t.slices.0..t.slices.1.min(s.len() as u32) {
                        if want[s.name[id as usize].index()] {
                            keep(id, &mut v);
                        }
                    }
                    v
                })
                .collect();
            let lists: Vec<&[u32]> = per_track.iter().map(|v| &v[..]).collect();
            merge(s, &lists, &mut out);
        } else {
            let mut merged = Vec::with_capacity(out.capacity());
            merge(s, &lists, &mut merged);
            merged.into_iter().for_each(|id| keep(id, &mut out));
        }
        Occurrences {
            ids: Cow::Owned(out),
        }
    }

    /// The occurrences on `track` only (same order). O(n).
    pub fn within_track(&self, cap: &Capture, track: u32) -> Occurrences<'static> {
        let (a, b) = cap.tracks.get(track as usize).map_or((0, 0), |t| t.slices);
        Occurrences {
            ids: Cow::Owned(
                self.ids
                    .iter()
                    .copied()
                    .filter(|&id| id >= a && id < b)
                    .collect(),
            ),
        }
    }

    /// Slice ids in order.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Number of occurrences.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Position of the first occurrence ordered after (start of `id`, `id`). O(log n).
    fn rank_after(&self, cap: &Capture, id: u32) -> usize {
        let s = &cap.slices;
        let key = (s.start.get(id as usize).copied().unwrap_or(Ps::MIN), id);
        self.ids
            .partition_point(|&x| (s.start[x as usize], x) <= key)
    }

    /// Position of the first occurrence starting at or after `t`. O(log n).
    pub fn first_at_or_after(&self, cap: &Capture, t: Ps) -> usize {
        let s = &cap.slices;
        self.ids.partition_point(|&x| s.start[x as usize] < t)
    }

    /// (position, id) of the next occurrence after slice `id` (see the module doc). O(log n).
    pub fn next_after(&self, cap: &Capture, id: u32) -> Option<(usize, u32)> {
        let k = self.rank_after(cap, id);
        self.ids.get(k).map(|&x| (k, x))
    }

    /// (position, id) of the previous occurrence before slice `id`. O(log n).
    pub fn prev_before(&self, cap: &Capture, id: u32) -> Option<(usize, u32)> {
        let s = &cap.slices;
        let key = (s.start.get(id as usize).copied().unwrap_or(Ps::MAX), id);
        let k = self
            .ids
            .partition_point(|&x| (s.start[x as usize], x) < key)
            .checked_sub(1)?;
        self.ids.get(k).map(|&x| (k, x))
    }

    /// Position of `id` among the occurrences (for a `k/N` display). O(log n).
    pub fn position(&self, cap: &Capture, id: u32) -> Option<usize> {
        let k = self.rank_after(cap, id).checked_sub(1)?;
        (self.ids.get(k) == Some(&id)).then_some(k)
    }

    /// Occurrences starting in `[t0, t1)`. O(log n).
    pub fn count_in(&self, cap: &Capture, t0: Ps, t1: Ps) -> usize {
        if t1 <= t0 {
            return 0;
        }
        self.first_at_or_after(cap, t1) - self.first_at_or_after(cap, t0)
    }
}

/// Above this many posting lists, occurrences are collected by one scan over the slices.
const MERGE_LISTS_MAX: usize = 32;

/// Merge heap entry: ((start, id), list, position in the list), smallest first.
type Head = Reverse<((Ps, u32), usize, usize)>;

/// k-way merge of lists each in (start, id) order into `out`. O(n log k).
fn merge(s: &Slices, lists: &[&[u32]], out: &mut Vec<u32>) {
    let key = |id: u32| (s.start[id as usize], id);
    let mut heap: BinaryHeap<Head> = lists
        .iter()
        .enumerate()
        .filter_map(|(k, l)| l.first().map(|&id| Reverse((key(id), k, 0))))
        .collect();
    while let Some(Reverse(((_, id), k, pos))) = heap.pop() {
        out.push(id);
        if let Some(&next) = lists[k].get(pos + 1) {
            heap.push(Reverse((key(next), k, pos + 1)));
        }
    }
}

/// The first `k` occurrences of `name` passing `filter`, streaming the posting list (stops after
/// `k`; arg tests run only on the events visited).
pub fn first_occurrences(
    cap: &Capture,
    postings: &dyn NamePostings,
    name: StrId,
    filter: &EventFilter,
    k: usize,
) -> Vec<u32> {
    let mut buf = String::new();
    postings
        .occurrences(name)
        .iter()
        .copied()
        .filter(|&id| filter.is_empty() || filter.slice_ok(cap, id, cap.track_of(id), &mut buf))
        .take(k)
        .collect()
}
