//! Interval index over a [`Capture`]: per track, per lane, slices in time order, with
//! level-of-detail queries for drawing and the look-ups the UI and analyses need.
//!
//! Within one lane slices never overlap (see `model::nesting`), so both starts and ends are sorted
//! and a window is one binary search per edge ([`runs`]). Each lane also keeps prefix sums of
//! durations (busy time of any range in O(1) after the search) and a block [`mipmap`] that names
//! the longest slice of any position range in O(block) time, so a level-of-detail frame costs
//! O(columns × lanes × (log n + block)) whatever the zoom. Names map to time-ordered posting
//! lists ([`postings`]). [`brute`] answers every query by a full scan, as the test oracle.
//! Layout, costs and measured figures: `docs/index.md`.

pub mod brute;
pub mod cell;
pub mod lane;
pub mod mipmap;
pub mod postings;
pub mod runs;
pub mod track;

pub use cell::{Cell, column_edge};
pub use lane::Lane;
pub use track::TrackIndex;

use crate::model::{Capture, NO_SLICE, Ps, StrId};
use postings::Postings;
use std::sync::Mutex;

/// The index of one capture.
#[derive(Clone, Debug, Default)]
pub struct CaptureIndex {
    /// Per track.
    pub tracks: Vec<TrackIndex>,
    /// Per name id: slice ids of that name, ordered by (start, id).
    postings: Postings,
}

impl CaptureIndex {
    /// Builds the index for `cap` on two threads: one scatters slices into posting lists while
    /// the other builds lanes (with prefix sums, directories and mipmaps); then both sort posting
    /// lists, taking chunks of names from a shared queue. O(n) plus the merge of names that occur
    /// on several tracks.
    pub fn build(cap: &Capture) -> CaptureIndex {
        let s = &cap.slices;
        let names = cap.strings.len();
        let mut offsets: Vec<u32> = Vec::new();
        let mut ids: Vec<u32> = Vec::new();
        // Jobs: (name offsets, first name, its ids), sorted by whichever thread is free.
        type Job<'a> = (&'a [u32], usize, &'a mut [u32]);
        let queue: Mutex<Vec<Job>> = Mutex::new(Vec::new());
        let drain = || {
            let mut keyed = Vec::new();
            loop {
                let job = queue.lock().ok().and_then(|mut q| q.pop());
                let Some((offsets, first, chunk)) = job else {
                    break;
                };
                Postings::sort_chunk(s, offsets, first, chunk, &mut keyed);
            }
        };
        let tracks = std::thread::scope(|scope| {
            let (offsets, ids, queue, drain) = (&mut offsets, &mut ids, &queue, &drain);
            let helper = scope.spawn(move || {
                let (o, i) = Postings::scatter(s, names);
                *offsets = o;
                *ids = i;
                let offsets: &[u32] = offsets;
                let jobs = Postings::chunks(offsets, ids, 64);
                if let Ok(mut q) = queue.lock() {
                    q.extend(jobs.into_iter().map(|(first, c)| (offsets, first, c)));
                }
                drain();
            });
            let tracks: Vec<TrackIndex> =
                cap.tracks.iter().map(|t| TrackIndex::build(s, t)).collect();
            drain();
            if let Err(e) = helper.join() {
                std::panic::resume_unwind(e);
            }
            tracks
        });
        CaptureIndex {
            tracks,
            postings: Postings::from_parts(offsets, ids),
        }
    }

    /// Number of lanes of `track`.
    pub fn lane_count(&self, track: u32) -> usize {
        self.tracks.get(track as usize).map_or(0, |t| t.lanes.len())
    }

    /// Lane `lane` of `track`, if any.
    pub fn lane_index(&self, track: u32, lane: usize) -> Option<&Lane> {
        self.tracks.get(track as usize)?.lanes.get(lane)
    }

    /// Slice ids of a lane overlapping `[t0, t1)`, in start order. A zero-length slice at `t`
    /// overlaps when `t0 <= t < t1`. Two binary searches: O(log n).
    pub fn window(&self, _cap: &Capture, track: u32, lane: usize, t0: Ps, t1: Ps) -> &[u32] {
        self.lane_index(track, lane)
            .map_or(&[], |l| l.window(t0, t1))
    }

    /// Level of detail: fills `out` (one cell per column over `[t0, t1)`, columns as in
    /// [`column_edge`]). O(columns × (log n + mipmap block)), independent of how many slices
    /// the window holds.
    pub fn lod(&self, _cap: &Capture, track: u32, lane: usize, t0: Ps, t1: Ps, out: &mut [Cell]) {
        match self.lane_index(track, lane) {
            Some(l) => l.lod(t0, t1, out),
            None => out.fill(Cell::EMPTY),
        }
    }

    /// The slice of a lane containing time `t` (`start <= t < end`, or a zero-length slice at `t`).
    pub fn slice_at(&self, cap: &Capture, track: u32, lane: usize, t: Ps) -> Option<u32> {
        self.window(cap, track, lane, t, t.saturating_add(1))
            .first()
            .copied()
    }

    /// (track, lane, position within the lane) of slice `id`.
    pub fn lane_position(&self, cap: &Capture, id: u32) -> Option<(u32, usize, usize)> {
        if id as usize >= cap.slices.len() {
            return None;
        }
        let track = cap.track_of(id);
        let lane = cap.slices.lane[id as usize] as usize;
        let start = cap.slices.start[id as usize];
        let pos = self.lane_index(track, lane)?.position(id, start)?;
        Some((track, lane, pos))
    }

    fn lane_ids(&self, track: u32, lane: usize) -> &[u32] {
        self.lane_index(track, lane).map_or(&[], |l| &l.ids[..])
    }

    /// The next slice on the same lane.
    pub fn next_on_lane(&self, cap: &Capture, id: u32) -> Option<u32> {
        let (t, l, p) = self.lane_position(cap, id)?;
        self.lane_ids(t, l).get(p + 1).copied()
    }

    /// The previous slice on the same lane.
    pub fn prev_on_lane(&self, cap: &Capture, id: u32) -> Option<u32> {
        let (t, l, p) = self.lane_position(cap, id)?;
        self.lane_ids(t, l).get(p.checked_sub(1)?).copied()
    }

    /// The first slice on a lane starting at or after `t`.
    pub fn first_at_or_after(&self, _cap: &Capture, track: u32, lane: usize, t: Ps) -> Option<u32> {
        let l = self.lane_index(track, lane)?;
        l.ids.get(l.rank(t)).copied()
    }

    /// The last slice on a lane starting before `t`.
    pub fn last_before(&self, _cap: &Capture, track: u32, lane: usize, t: Ps) -> Option<u32> {
        let l = self.lane_index(track, lane)?;
        l.ids.get(l.rank(t).checked_sub(1)?).copied()
    }

    /// Parent of a slice (enclosing slice on the same track).
    pub fn parent(&self, cap: &Capture, id: u32) -> Option<u32> {
        let p = *cap.slices.parent.get(id as usize)?;
        (p != NO_SLICE).then_some(p)
    }

    /// Direct children of a slice, in start order: a window of the next lane. O(log n + k).
    pub fn children(&self, cap: &Capture, id: u32) -> Vec<u32> {
        let Some((track, lane, _)) = self.lane_position(cap, id) else {
            return Vec::new();
        };
        let s = &cap.slices;
        let (st, en) = (s.start[id as usize], s.end(id as usize));
        self.window(cap, track, lane + 1, st, en.max(st.saturating_add(1)))
            .iter()
            .copied()
            .filter(|&c| s.parent[c as usize] == id)
            .collect()
    }

    /// Every slice named `name`, ordered by (start, id).
    pub fn occurrences(&self, name: StrId) -> &[u32] {
        self.postings.get(name)
    }

    /// Time in `[t0, t1)` during which at least one slice of `track` is running. O(log n).
    pub fn busy_time(&self, _cap: &Capture, track: u32, t0: Ps, t1: Ps) -> Ps {
        self.tracks
            .get(track as usize)
            .map_or(0, |t| t.busy_time(t0, t1))
    }

    /// Approximate heap bytes held by the index.
    pub fn heap_bytes(&self) -> usize {
        self.tracks.capacity() * std::mem::size_of::<TrackIndex>()
            + self
                .tracks
                .iter()
                .map(TrackIndex::heap_bytes)
                .sum::<usize>()
            + self.postings.heap_bytes()
    }
}
