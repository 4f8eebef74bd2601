//! Aggregates of a time range over the index: slices overlapping it and busy time per track —
//! what the explorer's range marker (`m`) shows. Work is per lane (two binary searches) and per
//! track (the index's busy summaries), never a scan of every slice.

use crate::index::CaptureIndex;
use crate::model::{Capture, Ps, TrackKind};

/// Aggregate of a range `[a, b)`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RangeStats {
    /// Slices overlapping the range on drawn tracks (not hidden processes, not counters).
    pub slices: u64,
    /// Busy time per track inside the range (track, busy ps), busiest first, tracks without
    /// slices in the range left out.
    pub busy: Vec<(u32, Ps)>,
}

/// The aggregate of `[a, b)` over the drawn tracks of `cap`.
pub fn range_stats(cap: &Capture, index: &CaptureIndex, a: Ps, b: Ps) -> RangeStats {
    let mut slices = 0u64;
    let mut busy = Vec::new();
    for (t, tr) in cap.tracks.iter().enumerate() {
        if cap
            .processes
            .get(tr.process as usize)
            .is_some_and(|p| p.hidden)
            || tr.kind == TrackKind::Counter
        {
            continue;
        }
        let t = t as u32;
        let mut n = 0;
        for lane in 0..index.lane_count(t) {
            n += index.window(cap, t, lane, a, b).len() as u64;
        }
        if n > 0 {
            slices += n;
            busy.push((t, index.busy_time(cap, t, a, b)));
        }
    }
    busy.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    RangeStats { slices, busy }
}
