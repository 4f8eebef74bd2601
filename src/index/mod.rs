//! Interval index over a [`Capture`]: per track, per lane, slices in time order, with
//! level-of-detail queries for drawing and the look-ups the UI and analyses need.
//!
//! Within one lane slices never overlap (see `model::nesting`), so both starts and ends are sorted
//! and a window is two binary searches.

use crate::model::{Capture, NO_SLICE, Ps, StrId};

/// Summary of one lane within one screen column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Number of slices overlapping the column.
    pub count: u32,
    /// The longest slice overlapping the column (`NO_SLICE` when `count == 0`); ties go to the
    /// earliest.
    pub longest: u32,
    /// Time within the column covered by slices of this lane.
    pub busy: Ps,
}

impl Cell {
    /// An empty cell.
    pub const EMPTY: Cell = Cell {
        count: 0,
        longest: NO_SLICE,
        busy: 0,
    };
}

/// Slice ids of one lane in start order.
#[derive(Clone, Debug, Default)]
pub struct Lane {
    /// Slice ids, ascending (which is also start order).
    pub ids: Vec<u32>,
}

/// All lanes of one track.
#[derive(Clone, Debug, Default)]
pub struct TrackIndex {
    /// Lanes, index = `Slices::lane`.
    pub lanes: Vec<Lane>,
}

/// The index of one capture.
#[derive(Clone, Debug, Default)]
pub struct CaptureIndex {
    /// Per track.
    pub tracks: Vec<TrackIndex>,
    /// Per name id: slice ids of that name, ordered by (start, id).
    postings: Vec<Vec<u32>>,
}

/// Column boundary `k` of `cols` columns over `[t0, t1)`.
#[inline]
pub fn column_edge(t0: Ps, t1: Ps, cols: usize, k: usize) -> Ps {
    if cols == 0 {
        return t0;
    }
    t0 + ((i128::from(t1 - t0) * k as i128) / cols as i128) as Ps
}

impl CaptureIndex {
    /// Builds the index for `cap`.
    pub fn build(cap: &Capture) -> CaptureIndex {
        let s = &cap.slices;
        let mut tracks = Vec::with_capacity(cap.tracks.len());
        for t in &cap.tracks {
            let mut lanes = vec![Lane::default(); t.lanes as usize];
            for id in t.slices.0..t.slices.1 {
                let l = s.lane[id as usize] as usize;
                if l >= lanes.len() {
                    lanes.resize(l + 1, Lane::default());
                }
                lanes[l].ids.push(id);
            }
            tracks.push(TrackIndex { lanes });
        }
        let mut postings = vec![Vec::new(); cap.strings.len()];
        for (id, n) in s.name.iter().enumerate() {
            postings[n.index()].push(id as u32);
        }
        for p in &mut postings {
            p.sort_by_key(|&i| (s.start[i as usize], i));
        }
        CaptureIndex { tracks, postings }
    }

    /// Number of lanes of `track`.
    pub fn lane_count(&self, track: u32) -> usize {
        self.tracks.get(track as usize).map_or(0, |t| t.lanes.len())
    }

    fn lane(&self, track: u32, lane: usize) -> &[u32] {
        self.tracks
            .get(track as usize)
            .and_then(|t| t.lanes.get(lane))
            .map_or(&[], |l| &l.ids[..])
    }

    /// Slice ids of a lane overlapping `[t0, t1)`, in start order. A zero-length slice at `t`
    /// overlaps when `t0 <= t < t1`.
    pub fn window(&self, cap: &Capture, track: u32, lane: usize, t0: Ps, t1: Ps) -> &[u32] {
        let ids = self.lane(track, lane);
        let s = &cap.slices;
        let lo = ids.partition_point(|&i| {
            let i = i as usize;
            let e = s.start[i] + s.dur[i];
            e <= t0 && !(s.dur[i] == 0 && s.start[i] >= t0)
        });
        let hi = ids.partition_point(|&i| s.start[i as usize] < t1);
        if lo >= hi { &[] } else { &ids[lo..hi] }
    }

    /// Level of detail: fills `out` (one cell per column over `[t0, t1)`).
    pub fn lod(&self, cap: &Capture, track: u32, lane: usize, t0: Ps, t1: Ps, out: &mut [Cell]) {
        let cols = out.len();
        let s = &cap.slices;
        for (k, cell) in out.iter_mut().enumerate() {
            let a = column_edge(t0, t1, cols, k);
            let b = column_edge(t0, t1, cols, k + 1).max(a + 1);
            let mut c = Cell::EMPTY;
            let mut best = -1;
            for &id in self.window(cap, track, lane, a, b) {
                let i = id as usize;
                c.count += 1;
                if s.dur[i] > best {
                    best = s.dur[i];
                    c.longest = id;
                }
                c.busy += (s.start[i] + s.dur[i]).min(b) - s.start[i].max(a);
            }
            *cell = c;
        }
    }

    /// The slice of a lane containing time `t` (`start <= t < end`, or a zero-length slice at `t`).
    pub fn slice_at(&self, cap: &Capture, track: u32, lane: usize, t: Ps) -> Option<u32> {
        self.window(cap, track, lane, t, t.saturating_add(1))
            .first()
            .copied()
    }

    fn lane_pos(&self, cap: &Capture, id: u32) -> Option<(u32, usize, usize)> {
        if id as usize >= cap.slices.len() {
            return None;
        }
        let track = cap.track_of(id);
        let lane = cap.slices.lane[id as usize] as usize;
        let ids = self.lane(track, lane);
        let pos = ids.binary_search(&id).ok()?;
        Some((track, lane, pos))
    }

    /// The next slice on the same lane.
    pub fn next_on_lane(&self, cap: &Capture, id: u32) -> Option<u32> {
        let (t, l, p) = self.lane_pos(cap, id)?;
        self.lane(t, l).get(p + 1).copied()
    }

    /// The previous slice on the same lane.
    pub fn prev_on_lane(&self, cap: &Capture, id: u32) -> Option<u32> {
        let (t, l, p) = self.lane_pos(cap, id)?;
        if p == 0 {
            None
        } else {
            self.lane(t, l).get(p - 1).copied()
        }
    }

    /// The first slice on a lane starting at or after `t`.
    pub fn first_at_or_after(&self, cap: &Capture, track: u32, lane: usize, t: Ps) -> Option<u32> {
        let ids = self.lane(track, lane);
        let k = ids.partition_point(|&i| cap.slices.start[i as usize] < t);
        ids.get(k).copied()
    }

    /// The last slice on a lane starting before `t`.
    pub fn last_before(&self, cap: &Capture, track: u32, lane: usize, t: Ps) -> Option<u32> {
        let ids = self.lane(track, lane);
        let k = ids.partition_point(|&i| cap.slices.start[i as usize] < t);
        if k == 0 {
            None
        } else {
            ids.get(k - 1).copied()
        }
    }

    /// Parent of a slice (enclosing slice on the same track).
    pub fn parent(&self, cap: &Capture, id: u32) -> Option<u32> {
        let p = *cap.slices.parent.get(id as usize)?;
        (p != NO_SLICE).then_some(p)
    }

    /// Direct children of a slice, in start order.
    pub fn children(&self, cap: &Capture, id: u32) -> Vec<u32> {
        let Some((track, lane, _)) = self.lane_pos(cap, id) else {
            return Vec::new();
        };
        let s = &cap.slices;
        let (st, en) = (s.start[id as usize], s.end(id as usize));
        let mut out: Vec<u32> = self
            .window(cap, track, lane + 1, st, en.max(st + 1))
            .iter()
            .copied()
            .filter(|&c| s.parent[c as usize] == id)
            .collect();
        out.sort_unstable();
        out
    }

    /// Every slice named `name`, ordered by start.
    pub fn occurrences(&self, name: StrId) -> &[u32] {
        self.postings.get(name.index()).map_or(&[], |v| &v[..])
    }

    /// Time in `[t0, t1)` during which at least one slice of `track` is running.
    pub fn busy_time(&self, cap: &Capture, track: u32, t0: Ps, t1: Ps) -> Ps {
        let Some(t) = cap.tracks.get(track as usize) else {
            return 0;
        };
        let s = &cap.slices;
        let mut iv: Vec<(Ps, Ps)> = (t.slices.0..t.slices.1)
            .map(|i| (s.start[i as usize].max(t0), s.end(i as usize).min(t1)))
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

    /// Approximate heap bytes held by the index.
    pub fn heap_bytes(&self) -> usize {
        self.tracks
            .iter()
            .flat_map(|t| t.lanes.iter())
            .map(|l| l.ids.capacity() * 4)
            .sum::<usize>()
            + self
                .postings
                .iter()
                .map(|p| p.capacity() * 4 + 24)
                .sum::<usize>()
    }
}
