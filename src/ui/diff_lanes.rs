//! The two lanes of the aligned-timeline view (`views/diff_align.rs`), laid out once per track
//! and mode so a frame only binary-searches them: per event its position on the shared axis,
//! the running maximum of its end (the visible range of a column is two binary searches) and
//! its status, with prefix counts of the statuses so a column holding thousands of events is
//! summarised in O(1).
//!
//! **Aligned** (by sequence): A's events at their own start; a matched B event at the start
//! of its A partner, so the sequences line up and the widths show Δ; an added B event as far
//! after the previous B event as it was in B (never past the next A event). **Overlay**: each
//! lane at its own start, both from a common zero. Positions are relative to the first event
//! of the lane (overlay) or of A (aligned).

use crate::analysis::diff::align::{NONE, Op};
use crate::analysis::diff::align_tracks::{PairStatus, StreamAlignment, pair_status};
use crate::model::{Capture, Ps};

/// Status of an event: matched and about as long.
pub const SAME: u8 = 0;
/// Matched; B takes longer.
pub const SLOWER: u8 = 1;
/// Matched; B is quicker.
pub const FASTER: u8 = 2;
/// On one side only: removed (A lane) or added (B lane).
pub const ONLY: u8 = 3;

/// One lane: its events in order (indices into the side's events).
#[derive(Clone, Debug, Default)]
pub struct Lane {
    /// Start on the axis, ascending.
    pub pos: Vec<Ps>,
    /// Duration.
    pub dur: Vec<Ps>,
    /// Running maximum of `pos + dur` (ascending).
    end_max: Vec<Ps>,
    /// [`SAME`], [`SLOWER`], [`FASTER`] or [`ONLY`].
    pub status: Vec<u8>,
    /// Aligned row of each event.
    pub row: Vec<u32>,
    /// Events of each status before event `k` (`k` = 0..=len).
    prefix: Vec<[u32; 4]>,
}

/// What one screen column of a lane holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ColumnSummary {
    /// Events per status.
    pub counts: [u32; 4],
    /// The one event overlapping the column, when exactly one does.
    pub one: Option<usize>,
}

impl ColumnSummary {
    /// Events in the column.
    pub fn total(&self) -> u32 {
        self.counts.iter().sum()
    }
}

impl Lane {
    fn new(pos: Vec<Ps>, dur: Vec<Ps>, status: Vec<u8>, row: Vec<u32>) -> Lane {
        let mut end_max = Vec::with_capacity(pos.len());
        let mut m = Ps::MIN;
        for (p, d) in pos.iter().zip(&dur) {
            m = m.max(p + d.max(&0));
            end_max.push(m);
        }
        let mut prefix = Vec::with_capacity(status.len() + 1);
        let mut c = [0u32; 4];
        prefix.push(c);
        for &s in &status {
            c[usize::from(s.min(ONLY))] += 1;
            prefix.push(c);
        }
        Lane {
            pos,
            dur,
            end_max,
            status,
            row,
            prefix,
        }
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// True without events.
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// `[first, last)` event that may overlap `[t0, t1)`: two binary searches.
    pub fn range(&self, t0: Ps, t1: Ps) -> (usize, usize) {
        let lo = self.end_max.partition_point(|&e| e <= t0);
        let hi = self.pos.partition_point(|&p| p < t1);
        (lo, hi.max(lo))
    }

    fn overlaps(&self, k: usize, t0: Ps, t1: Ps) -> bool {
        let (p, d) = (self.pos[k], self.dur[k]);
        p < t1 && (p + d > t0 || (d <= 0 && p >= t0))
    }

    /// The events of `[t0, t1)`: exact for up to 16 candidates, else from the prefix counts.
    pub fn column(&self, t0: Ps, t1: Ps) -> ColumnSummary {
        let (lo, hi) = self.range(t0, t1);
        let mut out = ColumnSummary::default();
        if hi - lo <= 16 {
            for k in lo..hi {
                if self.overlaps(k, t0, t1) {
                    out.counts[usize::from(self.status[k].min(ONLY))] += 1;
                    out.one = if out.total() == 1 { Some(k) } else { None };
                }
            }
        } else {
            let (a, b) = (self.prefix[lo], self.prefix[hi]);
            for (s, c) in out.counts.iter_mut().enumerate() {
                *c = b[s] - a[s];
            }
        }
        out
    }

    /// The running end maximum at event `k`.
    pub fn end_max(&self, k: usize) -> Option<Ps> {
        self.end_max.get(k).copied()
    }

    /// Events per status over the whole lane.
    pub fn totals(&self) -> [u32; 4] {
        self.prefix.last().copied().unwrap_or_default()
    }

    /// Earliest start and latest end.
    pub fn extent(&self) -> Option<(Ps, Ps)> {
        Some((*self.pos.first()?, *self.end_max.last()?))
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.pos.capacity() * 8
            + self.dur.capacity() * 8
            + self.end_max.capacity() * 8
            + self.status.capacity()
            + self.row.capacity() * 4
            + self.prefix.capacity() * 16
    }
}

/// Both lanes of an aligned stream.
#[derive(Clone, Debug, Default)]
pub struct Lanes {
    /// A's events.
    pub a: Lane,
    /// B's events.
    pub b: Lane,
    /// Laid out as a plain overlay (else aligned by sequence).
    pub overlay: bool,
}

fn status_of(s: PairStatus) -> u8 {
    match s {
        PairStatus::Same => SAME,
        PairStatus::Slower => SLOWER,
        PairStatus::Faster => FASTER,
    }
}

/// Start and duration of event `k` of `ids` in `c`.
fn time(c: &Capture, ids: &[u32], k: usize) -> (Ps, Ps) {
    let i = ids.get(k).map_or(usize::MAX, |&i| i as usize);
    (
        c.slices.start.get(i).copied().unwrap_or(0),
        c.slices.dur.get(i).copied().unwrap_or(0),
    )
}

impl Lanes {
    /// Lays out `sa` (tracks of `a` and `b`) aligned by sequence, or as an overlay.
    pub fn build(a: &Capture, b: &Capture, sa: &StreamAlignment, overlay: bool) -> Lanes {
        let (na, nb) = (sa.a_ids.len(), sa.b_ids.len());
        let a0 = time(a, &sa.a_ids, 0).0;
        let b0 = time(b, &sa.b_ids, 0).0;
        let mut a_st = vec![ONLY; na];
        let mut b_st = vec![ONLY; nb];
        let mut a_row = vec![NONE; na];
        let mut b_row = vec![NONE; nb];
        for (r, op) in sa.al.ops().enumerate() {
            match op {
                Op::Match(x, y) => {
                    let (da, db) = (
                        time(a, &sa.a_ids, x as usize).1,
                        time(b, &sa.b_ids, y as usize).1,
                    );
                    let s = status_of(pair_status(da, db));
                    if let (Some(p), Some(q)) = (a_st.get_mut(x as usize), b_st.get_mut(y as usize))
                    {
                        (*p, *q) = (s, s);
                    }
                    if let (Some(p), Some(q)) =
                        (a_row.get_mut(x as usize), b_row.get_mut(y as usize))
                    {
                        (*p, *q) = (r as u32, r as u32);
                    }
                }
                Op::Insert(y) => {
                    if let Some(q) = b_row.get_mut(y as usize) {
                        *q = r as u32;
                    }
                }
                Op::Delete(x) => {
                    if let Some(p) = a_row.get_mut(x as usize) {
                        *p = r as u32;
                    }
                }
            }
        }
        let (a_pos, a_dur): (Vec<Ps>, Vec<Ps>) = (0..na)
            .map(|k| {
                let (s, d) = time(a, &sa.a_ids, k);
                (s - a0, d)
            })
            .unzip();
        let b_dur: Vec<Ps> = (0..nb).map(|k| time(b, &sa.b_ids, k).1).collect();
        let b_pos = if overlay {
            (0..nb).map(|k| time(b, &sa.b_ids, k).0 - b0).collect()
        } else {
            aligned_b(b, sa, &a_pos, b0)
        };
        Lanes {
            a: Lane::new(a_pos, a_dur, a_st, a_row),
            b: Lane::new(b_pos, b_dur, b_st, b_row),
            overlay,
        }
    }

    /// Earliest start and latest end over both lanes.
    pub fn extent(&self) -> (Ps, Ps) {
        match (self.a.extent(), self.b.extent()) {
            (Some(x), Some(y)) => (x.0.min(y.0), x.1.max(y.1)),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => (0, 1),
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.a.heap_bytes() + self.b.heap_bytes()
    }
}

/// B's positions aligned by sequence (see the module doc), ascending.
fn aligned_b(b: &Capture, sa: &StreamAlignment, a_pos: &[Ps], b0: Ps) -> Vec<Ps> {
    let nb = sa.b_ids.len();
    let mut pos = vec![Ps::MAX; nb];
    // Pass 1 (backwards): an added event's bound, the next A event's position.
    let mut next_a = Ps::MAX;
    for r in (0..sa.al.len()).rev() {
        match sa.al.op(r) {
            Some(Op::Match(x, _)) | Some(Op::Delete(x)) => {
                next_a = a_pos.get(x as usize).copied().unwrap_or(next_a);
            }
            Some(Op::Insert(y)) => {
                if let Some(p) = pos.get_mut(y as usize) {
                    *p = next_a;
                }
            }
            None => {}
        }
    }
    // Pass 2: matched at their partner, added after the previous B event, kept ascending.
    let (mut last_pos, mut last_start) = (0, b0);
    let mut floor = Ps::MIN;
    for r in 0..sa.al.len() {
        let (y, p) = match sa.al.op(r) {
            Some(Op::Match(x, y)) => (y, a_pos.get(x as usize).copied().unwrap_or(last_pos)),
            Some(Op::Insert(y)) => {
                let start = time(b, &sa.b_ids, y as usize).0;
                let bound = pos.get(y as usize).copied().unwrap_or(Ps::MAX);
                (y, (last_pos + (start - last_start)).min(bound))
            }
            _ => continue,
        };
        let p = p.max(floor);
        floor = p;
        last_pos = p;
        last_start = time(b, &sa.b_ids, y as usize).0;
        if let Some(q) = pos.get_mut(y as usize) {
            *q = p;
        }
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_exactly_or_by_prefix() {
        let n = 100;
        let pos: Vec<Ps> = (0..n).map(|k| k * 10).collect();
        let dur = vec![10; n as usize];
        let status: Vec<u8> = (0..n)
            .map(|k| if k % 10 == 0 { ONLY } else { SAME })
            .collect();
        let lane = Lane::new(pos, dur, status, (0..n as u32).collect());
        let c = lane.column(0, 10);
        assert_eq!(c.one, Some(0));
        assert_eq!(c.counts, [0, 0, 0, 1]);
        let c = lane.column(5, 25);
        assert_eq!(c.total(), 3);
        assert_eq!(c.one, None);
        let c = lane.column(0, 1000);
        assert_eq!(c.counts, [90, 0, 0, 10]);
        assert_eq!(lane.column(1000, 2000).total(), 0);
    }
}
