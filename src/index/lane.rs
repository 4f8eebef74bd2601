//! One lane of one track: its slices in time order with their times, and the longest-slice
//! mipmap. Within a lane slices never overlap, so starts and ends are both sorted.

use super::mipmap::Mipmap;
use super::runs::Runs;
use super::{Cell, column_edge};
use crate::model::Ps;

/// Slices of one lane in start order.
#[derive(Clone, Debug, Default)]
pub struct Lane {
    /// Slice ids, ascending (which is also start order).
    pub ids: Vec<u32>,
    /// Start and duration of each slice, by position (copied from the model so that searches stay
    /// within one contiguous array).
    pub(crate) runs: Runs,
    /// Longest slice over any position range.
    mipmap: Mipmap,
}

impl Lane {
    /// An empty lane with room for `n` slices.
    pub(crate) fn with_capacity(n: usize) -> Lane {
        Lane {
            ids: Vec::with_capacity(n),
            runs: Runs::with_capacity(n),
            mipmap: Mipmap::default(),
        }
    }

    /// Appends a slice (in start order).
    #[inline]
    pub(crate) fn push(&mut self, id: u32, start: Ps, dur: Ps) {
        self.ids.push(id);
        self.runs.push(start, dur);
    }

    /// Builds the mipmap once every slice was pushed.
    pub(crate) fn seal(&mut self) {
        self.runs.seal();
        self.mipmap = Mipmap::build(&self.runs);
    }

    /// Number of slices.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when the lane holds no slice.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Slice ids overlapping `[t0, t1)` (see [`super::CaptureIndex::window`]).
    #[inline]
    pub fn window(&self, t0: Ps, t1: Ps) -> &[u32] {
        let lo = self.runs.first_overlapping(t0, self.runs.rank(t0));
        let hi = self.runs.rank(t1);
        if lo >= hi { &[] } else { &self.ids[lo..hi] }
    }

    /// Number of slices starting before `t`.
    #[inline]
    pub fn rank(&self, t: Ps) -> usize {
        self.runs.rank(t)
    }

    /// Position of slice `id` (starting at `start`) within the lane: a rank by start, then a
    /// short step over equal starts (zero-length slices); a binary search over ids otherwise.
    #[inline]
    pub fn position(&self, id: u32, start: Ps) -> Option<usize> {
        let p = self.runs.rank(start);
        for q in p..(p + 4).min(self.ids.len()) {
            if self.ids[q] == id {
                return Some(q);
            }
        }
        self.ids.binary_search(&id).ok()
    }

    /// Summary of the slices overlapping `[a, b)` given their positions `[lo, hi)`.
    #[inline]
    fn cell(&self, lo: usize, hi: usize, a: Ps, b: Ps) -> Cell {
        if hi <= lo {
            return Cell::EMPTY;
        }
        let best = if hi - lo == 1 {
            lo
        } else {
            self.mipmap.argmax(&self.runs, lo, hi)
        };
        Cell {
            count: (hi - lo) as u32,
            longest: self.ids[best],
            busy: self.runs.clipped_sum(lo, hi, a, b),
        }
    }

    /// Level of detail over `[t0, t1)` split into `out.len()` columns: O(columns × (log + BLOCK)),
    /// searching each column edge from the previous one.
    pub fn lod(&self, t0: Ps, t1: Ps, out: &mut [Cell]) {
        let cols = out.len();
        if self.ids.is_empty() {
            out.fill(Cell::EMPTY);
            return;
        }
        let (mut ra, mut rb) = (0usize, 0usize);
        let mut prev_b: Option<Ps> = None;
        for (k, cell) in out.iter_mut().enumerate() {
            let a = column_edge(t0, t1, cols, k);
            let b = column_edge(t0, t1, cols, k + 1).max(a.saturating_add(1));
            ra = if prev_b == Some(a) {
                rb
            } else {
                self.runs.rank_from(a, ra)
            };
            rb = self.runs.rank_from(b, rb.max(ra));
            prev_b = Some(b);
            let lo = self.runs.first_overlapping(a, ra);
            *cell = self.cell(lo, rb, a, b);
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.ids.capacity() * 4 + self.runs.heap_bytes() + self.mipmap.heap_bytes()
    }
}
