//! One lane of one track: its slices in time order with their times, and the longest-slice
//! mipmap. Within a lane slices never overlap, so starts and ends are both sorted.

use super::cell::{Cell, column_edge};
use super::mipmap::{Mipmap, pick};
use super::runs::Runs;
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

    /// Ranks of ascending edges `ts`: when they are dense in slices (few per edge, zoomed in) each
    /// is searched from the previous one's answer; when sparse (zoomed out) all descend the
    /// directory together ([`Runs::rank_many`]).
    fn ranks(&self, ts: &[Ps], out: &mut [usize]) {
        let (Some(&first), Some(&last)) = (ts.first(), ts.last()) else {
            return;
        };
        let r0 = self.runs.rank(first);
        let r1 = self.runs.rank(last);
        if r1 >= r0 && r1 - r0 <= ts.len() * 8 {
            let mut h = r0;
            for (o, &t) in out.iter_mut().zip(ts) {
                h = self.runs.rank_from(t, h);
                *o = h;
            }
        } else {
            self.runs.rank_many(ts, out);
        }
    }

    /// Level of detail over `[t0, t1)` split into `out.len()` columns:
    /// O(columns × log n) with O(1) mipmap work per cell. Columns are processed in chunks: first
    /// the ranks of all their edges (searches interleaved level by level), then the cells, whose
    /// look-ups are independent of each other, so memory latency overlaps.
    pub fn lod(&self, t0: Ps, t1: Ps, out: &mut [Cell]) {
        const CHUNK: usize = 128;
        let cols = out.len();
        if self.ids.is_empty() {
            out.fill(Cell::EMPTY);
            return;
        }
        // When every column is at least 1 ps wide, column k ends where column k + 1 starts.
        let shared = i128::from(t1) - i128::from(t0) >= cols as i128;
        let mut a = [0 as Ps; CHUNK + 1];
        let mut b = [0 as Ps; CHUNK];
        let mut ra = [0usize; CHUNK + 1];
        let mut rb = [0usize; CHUNK];
        for (c, cells) in out.chunks_mut(CHUNK).enumerate() {
            let k0 = c * CHUNK;
            let m = cells.len();
            for (i, e) in a[..=m].iter_mut().enumerate() {
                *e = column_edge(t0, t1, cols, k0 + i);
            }
            if shared {
                self.ranks(&a[..=m], &mut ra);
            } else {
                for (i, e) in b[..m].iter_mut().enumerate() {
                    *e = a[i + 1].max(a[i].saturating_add(1));
                }
                self.ranks(&a[..m], &mut ra);
                self.ranks(&b[..m], &mut rb);
            }
            // Three passes over the chunk, each with independent look-ups: positions and
            // mipmap candidates, then candidate durations, then ids and busy time.
            let mut lo = [0usize; CHUNK];
            let mut cand = [[0usize; 4]; CHUNK];
            for i in 0..m {
                let rbi = if shared { ra[i + 1] } else { rb[i] };
                let l = self.runs.first_overlapping(a[i], ra[i]);
                lo[i] = l;
                cand[i] = if rbi > l + 1 {
                    self.mipmap.candidates(&self.runs, l, rbi)
                } else {
                    // Empty (no duration is read) or a single slice.
                    [usize::MAX; 4]
                };
            }
            for (c, &l) in cand[..m].iter_mut().zip(&lo[..m]) {
                c[0] = if c[0] == usize::MAX {
                    l
                } else {
                    pick(&self.runs, *c)
                };
            }
            for (i, cell) in cells.iter_mut().enumerate() {
                let (bi, rbi) = if shared {
                    (a[i + 1], ra[i + 1])
                } else {
                    (b[i], rb[i])
                };
                let l = lo[i];
                *cell = if rbi <= l {
                    Cell::EMPTY
                } else {
                    Cell {
                        count: (rbi - l) as u32,
                        longest: self.ids[cand[i][0]],
                        busy: self.runs.clipped_sum(l, rbi, a[i], bi),
                    }
                };
            }
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.ids.capacity() * 4 + self.runs.heap_bytes() + self.mipmap.heap_bytes()
    }
}
