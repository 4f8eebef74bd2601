//! The index of one track: its lanes and the merged union of its root slices for busy time.

use super::lane::Lane;
use super::runs::Runs;
use crate::model::{Ps, Slices, Track};

/// How busy time of a track is answered.
#[derive(Clone, Debug, Default)]
enum Busy {
    /// No slices.
    #[default]
    Idle,
    /// One root lane: every slice nests in it, so its own intervals are the union.
    Lane(usize),
    /// Several root lanes (partial overlaps): their merged union.
    Union(Runs),
}

/// All lanes of one track.
#[derive(Clone, Debug, Default)]
pub struct TrackIndex {
    /// Lanes, index = `Slices::lane`.
    pub lanes: Vec<Lane>,
    busy: Busy,
}

impl TrackIndex {
    /// Indexes slices `t.slices` of `s`.
    pub fn build(s: &Slices, t: &Track) -> TrackIndex {
        let hi = (t.slices.1 as usize).min(s.len());
        let lo = (t.slices.0 as usize).min(hi);
        let mut counts = vec![0usize; t.lanes as usize];
        let mut root = vec![false; t.lanes as usize];
        for id in lo..hi {
            let l = s.lane[id] as usize;
            if l >= counts.len() {
                counts.resize(l + 1, 0);
                root.resize(l + 1, false);
            }
            counts[l] += 1;
            root[l] |= t.depth_of_lane(s.lane[id]) == 0;
        }
        let mut lanes: Vec<Lane> = counts.iter().map(|&c| Lane::with_capacity(c)).collect();
        for id in lo..hi {
            lanes[s.lane[id] as usize].push(id as u32, s.start[id], s.dur[id]);
        }
        for l in &mut lanes {
            l.seal();
        }
        let roots: Vec<usize> = (0..root.len()).filter(|&l| root[l]).collect();
        let busy = match roots[..] {
            [] => Busy::Idle,
            [l] => Busy::Lane(l),
            _ => {
                let mut u = union_of_roots(s, t, lo, hi);
                u.seal();
                Busy::Union(u)
            }
        };
        TrackIndex { lanes, busy }
    }

    /// Time in `[t0, t1)` covered by at least one slice: O(log n).
    pub fn busy_time(&self, t0: Ps, t1: Ps) -> Ps {
        match &self.busy {
            Busy::Idle => 0,
            Busy::Lane(l) => self.lanes.get(*l).map_or(0, |l| l.runs.covered(t0, t1)),
            Busy::Union(r) => r.covered(t0, t1),
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.lanes.capacity() * std::mem::size_of::<Lane>()
            + self.lanes.iter().map(Lane::heap_bytes).sum::<usize>()
            + match &self.busy {
                Busy::Union(r) => r.heap_bytes(),
                _ => 0,
            }
    }
}

/// Merged union of the depth-0 slices of `[lo, hi)` (start-sorted); children nest inside their
/// root, so this is the union of the whole track.
fn union_of_roots(s: &Slices, t: &Track, lo: usize, hi: usize) -> Runs {
    let mut out = Runs::with_capacity(0);
    let mut cur: Option<(Ps, Ps)> = None;
    for id in lo..hi {
        if t.depth_of_lane(s.lane[id]) != 0 || s.dur[id] <= 0 {
            continue;
        }
        let (a, b) = (s.start[id], s.start[id].saturating_add(s.dur[id]));
        match &mut cur {
            Some((_, ce)) if a <= *ce => *ce = (*ce).max(b),
            _ => {
                if let Some((cs, ce)) = cur {
                    out.push(cs, ce.wrapping_sub(cs));
                }
                cur = Some((a, b));
            }
        }
    }
    if let Some((cs, ce)) = cur {
        out.push(cs, ce.wrapping_sub(cs));
    }
    out.shrink_to_fit();
    out
}
