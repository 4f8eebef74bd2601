//! Depth, parent and lane assignment for the slices of one track.
//!
//! Slices are sorted by (start asc, dur desc). Properly nested slices share a lane group and get
//! depth = nesting level; a slice that partially overlaps the open slice of a group is tried in the
//! next group, and a new group is opened when none fits. Nothing is dropped. Lanes are laid out
//! group after group: lane = base(group) + depth.

use super::capture::{NO_SLICE, Ps};

/// The columns of one track's slices that lane assignment reads and writes.
pub struct LaneCols<'a> {
    /// Starts (sorted).
    pub start: &'a [Ps],
    /// Durations.
    pub dur: &'a [Ps],
    /// Written: drawn row.
    pub lane: &'a mut [u16],
    /// Written: enclosing slice id (`first` + index), or `NO_SLICE`.
    pub parent: &'a mut [u32],
}

/// How one track's slices were laid out.
#[derive(Debug, Default)]
pub struct Laid {
    /// Number of lanes.
    pub lanes: u16,
    /// Deepest nesting depth.
    pub max_depth: u16,
    /// First lane of each lane group, ascending (see `Track::group_bases`).
    pub group_bases: Vec<u16>,
}

/// Fills `parent` and `lane` of one track's slices; `first` is the id of its first slice.
/// Tracks are independent, so `finish` runs them on several threads.
pub fn assign_lanes_cols(c: LaneCols<'_>, first: u32) -> Laid {
    let n = c.start.len();
    if n == 0 {
        return Laid::default();
    }
    let (lo, hi) = (first as usize, first as usize + n);
    let LaneCols {
        start,
        dur,
        lane,
        parent,
    } = c;
    // Depth of each slice within its group; lanes are derived from it, and readers derive it
    // back from the lane and the group bases.
    let mut depth = vec![0u16; n];
    // Index helpers in absolute ids, as the algorithm below is written.
    let st_of = |i: usize| start[i - lo];
    let du_of = |i: usize| dur[i - lo];
    // Per group: stack of (end, slice id).
    let mut groups: Vec<Vec<(Ps, u32)>> = vec![Vec::new()];
    // Group of each slice, materialized only once a second group opens (with one group, the
    // lane is the depth and no second pass is needed).
    let mut group_of: Vec<u16> = Vec::new();
    let mut group_depth: Vec<u16> = vec![0];
    for i in lo..hi {
        let st = st_of(i);
        let en = st + du_of(i);
        let mut placed = None;
        for (g, stack) in groups.iter_mut().enumerate() {
            while let Some(&(e, _)) = stack.last() {
                if e <= st {
                    stack.pop();
                } else {
                    break;
                }
            }
            match stack.last() {
                Some(&(e, _)) if en > e => continue,
                top => {
                    let parent_id = top.map(|t| t.1).unwrap_or(NO_SLICE);
                    let d = stack.len() as u16;
                    parent[i - lo] = parent_id;
                    depth[i - lo] = d;
                    stack.push((en, i as u32));
                    placed = Some(g);
                    if d > group_depth[g] {
                        group_depth[g] = d;
                    }
                    break;
                }
            }
        }
        let g = match placed {
            Some(g) => g,
            None => {
                groups.push(vec![(en, i as u32)]);
                group_depth.push(0);
                parent[i - lo] = NO_SLICE;
                depth[i - lo] = 0;
                groups.len() - 1
            }
        };
        if g > 0 && group_of.is_empty() {
            group_of = Vec::with_capacity(n);
            group_of.resize(i - lo, 0);
        }
        if !group_of.is_empty() {
            group_of.push(g.min(u16::MAX as usize) as u16);
        }
    }
    if group_of.is_empty() {
        // One group: lanes are depths.
        lane.copy_from_slice(&depth);
        let max_depth = group_depth[0];
        return Laid {
            lanes: max_depth.saturating_add(1),
            max_depth,
            group_bases: vec![0],
        };
    }
    let mut base = Vec::with_capacity(group_depth.len());
    let mut acc: u32 = 0;
    for &d in &group_depth {
        base.push(acc);
        acc += u32::from(d) + 1;
    }
    let mut max_depth = 0;
    for k in 0..n {
        let l = base[group_of[k] as usize] + u32::from(depth[k]);
        lane[k] = l.min(u32::from(u16::MAX)) as u16;
        max_depth = max_depth.max(depth[k]);
    }
    let cap = |v: u32| v.min(u32::from(u16::MAX)) as u16;
    Laid {
        lanes: cap(acc),
        max_depth,
        group_bases: base.into_iter().map(cap).collect(),
    }
}

#[cfg(test)]
mod tests {
    use crate::model::*;

    fn build(slices: &[(i64, i64)]) -> Capture {
        let mut b = CaptureBuilder::new();
        let p = b.process(Key::Int(1));
        let t = b.track(p, Key::Int(1), TrackKind::Thread);
        let n = b.intern("x");
        for &(s, d) in slices {
            b.add_slice(t, s, d, n, StrId::EMPTY, ArgsRef::NONE, 0);
        }
        b.finish(SourceInfo::default(), Format::Chrome)
    }

    #[test]
    fn nests_and_splits_partial_overlaps() {
        // a [0,100) contains b [10,50) contains c [20,30); d [40,70) overlaps b partially.
        let c = build(&[(40, 30), (0, 100), (20, 10), (10, 40)]);
        let s = &c.slices;
        assert_eq!(s.start, vec![0, 10, 20, 40]);
        let depth: Vec<u16> = (0..4).map(|i| c.depth(i)).collect();
        assert_eq!(depth, vec![0, 1, 2, 0]);
        assert_eq!(s.parent, vec![NO_SLICE, 0, 1, NO_SLICE]);
        // group 0 has depths 0..=2 (3 lanes), d opens group 1 at lane 3
        assert_eq!(s.lane, vec![0, 1, 2, 3]);
        assert_eq!(c.tracks[0].lanes, 4);
        assert_eq!(c.tracks[0].max_depth, 2);
    }

    #[test]
    fn zero_length_and_equal_starts() {
        let c = build(&[(5, 0), (5, 10), (5, 0), (15, 0), (15, 5)]);
        let s = &c.slices;
        // [5,15) first, the two zero-length slices at 5 nest in it as siblings
        assert_eq!(s.start, vec![5, 5, 5, 15, 15]);
        let depth: Vec<u16> = (0..5).map(|i| c.depth(i)).collect();
        assert_eq!(depth, vec![0, 1, 1, 0, 1]);
        assert_eq!(s.parent[1], 0);
        assert_eq!(s.parent[2], 0);
        assert_eq!(s.parent[4], 3);
        assert_eq!(c.span, (5, 20));
    }

    #[test]
    fn unmatched_begin_is_closed_and_reported() {
        let mut b = CaptureBuilder::new();
        let p = b.process(Key::Int(1));
        let t = b.track(p, Key::Int(1), TrackKind::Thread);
        let n = b.intern("open");
        b.begin_slice(t, 10, n, StrId::EMPTY, ArgsRef::NONE);
        b.begin_slice(t, 20, n, StrId::EMPTY, ArgsRef::NONE);
        b.end_slice(t, 30, StrId::EMPTY);
        b.add_slice(t, 0, 100, n, StrId::EMPTY, ArgsRef::NONE, 0);
        b.end_slice(t, 50, StrId::EMPTY);
        b.end_slice(t, 60, StrId::EMPTY);
        b.begin_slice(t, 70, n, StrId::EMPTY, ArgsRef::NONE);
        let c = b.finish(SourceInfo::default(), Format::Chrome);
        assert_eq!(c.slices.len(), 4);
        assert!(
            c.warnings
                .iter()
                .any(|w| w.kind == "unmatched_end" && w.count == 1)
        );
        assert!(
            c.warnings
                .iter()
                .any(|w| w.kind == "unmatched_begin" && w.count == 1)
        );
        let last = c.slices.len() - 1;
        assert_eq!(c.slices.start[last], 70);
        assert_eq!(c.slices.end(last), 100);
        assert_eq!(c.slices.flags[last], slice_flags::UNFINISHED);
    }
}
