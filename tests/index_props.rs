//! Property tests: every `CaptureIndex` query against the brute-force oracle (`index::brute`), on
//! captures built through `CaptureBuilder` so depth, parent and lanes come from the real nesting
//! code. Covers zero-length slices, equal starts, slices spanning the whole capture, negative
//! times, empty tracks, partial overlaps (extra lanes) and empty / reversed windows.

use proptest::prelude::*;
use tracetui::index::{CaptureIndex, brute};
use tracetui::model::*;

/// One slice: (start, dur, name).
type Spec = (i64, i64, u8);

fn dur_strategy() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => Just(0i64),
        6 => 1i64..12,
        3 => 12i64..60,
        1 => Just(400i64), // spans the whole capture
    ]
}

fn slice_strategy() -> impl Strategy<Value = Spec> {
    (
        prop_oneof![4 => -60i64..60, 1 => Just(-100i64), 1 => Just(0i64)],
        dur_strategy(),
        0u8..5,
    )
}

fn capture_strategy() -> impl Strategy<Value = Vec<Vec<Spec>>> {
    prop::collection::vec(prop::collection::vec(slice_strategy(), 0..40), 0..4)
}

fn build(tracks: &[Vec<Spec>]) -> Capture {
    let mut b = CaptureBuilder::new();
    let names: Vec<StrId> = (0..5).map(|i| b.intern(&format!("n{i}"))).collect();
    let p = b.process(Key::Int(1));
    let ids: Vec<u32> = (0..tracks.len())
        .map(|t| b.track(p, Key::Int(t as i64), TrackKind::Thread))
        .collect();
    // Interleave tracks so the builder has to sort.
    let longest = tracks.iter().map(Vec::len).max().unwrap_or(0);
    for k in 0..longest {
        for (t, v) in tracks.iter().enumerate() {
            if let Some(&(s, d, n)) = v.get(k) {
                b.add_slice(
                    ids[t],
                    s,
                    d,
                    names[n as usize],
                    StrId::EMPTY,
                    ArgsRef::NONE,
                    0,
                );
            }
        }
    }
    b.finish(SourceInfo::default(), Format::Chrome)
}

fn windows() -> impl Strategy<Value = Vec<(i64, i64)>> {
    prop::collection::vec(
        prop_oneof![
            3 => (-120i64..120, 0i64..80).prop_map(|(a, w)| (a, a + w)),
            1 => (-120i64..120, 1i64..40).prop_map(|(a, w)| (a, a - w)),
            1 => Just((-1000i64, 1000i64)),
        ],
        1..8,
    )
}

fn check(cap: &Capture, wins: &[(i64, i64)], cols: usize) -> Result<(), TestCaseError> {
    let idx = CaptureIndex::build(cap);
    let s = &cap.slices;
    let mut out = vec![tracetui::index::Cell::EMPTY; cols];
    for t in 0..cap.tracks.len() as u32 + 1 {
        let lanes = cap.tracks.get(t as usize).map_or(0, |tr| tr.lanes as usize);
        prop_assert_eq!(idx.lane_count(t), lanes);
        for lane in 0..lanes + 1 {
            // Lane invariant the index relies on: starts and ends sorted, no overlap.
            let ids = brute::window(cap, t, lane, i64::MIN / 4, i64::MAX / 4);
            for w in ids.windows(2) {
                prop_assert!(s.end(w[0] as usize) <= s.start[w[1] as usize]);
            }
            for &(t0, t1) in wins {
                prop_assert_eq!(
                    idx.window(cap, t, lane, t0, t1),
                    &brute::window(cap, t, lane, t0, t1)[..],
                    "window t={} lane={} [{}, {})",
                    t,
                    lane,
                    t0,
                    t1
                );
                idx.lod(cap, t, lane, t0, t1, &mut out);
                prop_assert_eq!(
                    &out[..],
                    &brute::lod(cap, t, lane, t0, t1, cols)[..],
                    "lod t={} lane={} [{}, {}) cols={}",
                    t,
                    lane,
                    t0,
                    t1,
                    cols
                );
                prop_assert_eq!(
                    idx.busy_time(cap, t, t0, t1),
                    brute::busy_time(cap, t, t0, t1),
                    "busy t={} [{}, {})",
                    t,
                    t0,
                    t1
                );
            }
            for x in -110..110 {
                prop_assert_eq!(
                    idx.slice_at(cap, t, lane, x),
                    brute::slice_at(cap, t, lane, x)
                );
                prop_assert_eq!(
                    idx.first_at_or_after(cap, t, lane, x),
                    brute::first_at_or_after(cap, t, lane, x)
                );
                prop_assert_eq!(
                    idx.last_before(cap, t, lane, x),
                    brute::last_before(cap, t, lane, x)
                );
            }
        }
    }
    for id in 0..s.len() as u32 + 2 {
        prop_assert_eq!(idx.next_on_lane(cap, id), brute::next_on_lane(cap, id));
        prop_assert_eq!(idx.prev_on_lane(cap, id), brute::prev_on_lane(cap, id));
        prop_assert_eq!(idx.parent(cap, id), brute::parent(cap, id));
        let kids = idx.children(cap, id);
        prop_assert_eq!(&kids, &brute::children(cap, id), "children of {}", id);
        for &c in &kids {
            // Strict containment on the same track, one level deeper.
            let (c, p) = (c as usize, id as usize);
            prop_assert!(s.start[p] <= s.start[c] && s.end(c) <= s.end(p));
            prop_assert_eq!(cap.depth(c as u32), cap.depth(p as u32) + 1);
        }
        // Depth (derived from lane and group bases) = length of the parent chain.
        if (id as usize) < s.len() {
            let (mut chain, mut q) = (0u16, s.parent[id as usize]);
            while q != tracetui::model::NO_SLICE {
                chain += 1;
                q = s.parent[q as usize];
            }
            prop_assert_eq!(cap.depth(id), chain, "depth of {}", id);
        }
    }
    for n in 0..cap.strings.len() as u32 + 1 {
        prop_assert_eq!(
            idx.occurrences(StrId(n)),
            &brute::occurrences(cap, StrId(n))[..]
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_query_matches_brute_force(
        tracks in capture_strategy(),
        wins in windows(),
        cols in 1usize..14,
    ) {
        let cap = build(&tracks);
        check(&cap, &wins, cols)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Long lanes (hundreds of slices, several mipmap blocks) with a few long slices among them.
    #[test]
    fn long_lanes_match_brute_force(
        raw in prop::collection::vec(
            (0i64..3000, prop_oneof![4 => 0i64..8, 1 => 8i64..300], 0u8..5),
            0..500,
        ),
        wins in prop::collection::vec((-50i64..3100, 1i64..3200).prop_map(|(a, w)| (a, a + w)), 1..4),
        cols in 1usize..60,
    ) {
        let cap = build(&[raw]);
        check(&cap, &wins, cols)?;
    }
}

#[test]
fn empty_capture_answers_nothing() {
    let cap = build(&[]);
    let idx = CaptureIndex::build(&cap);
    let mut out = [tracetui::index::Cell::EMPTY; 3];
    idx.lod(&cap, 0, 0, 0, 10, &mut out);
    assert_eq!(out, [tracetui::index::Cell::EMPTY; 3]);
    assert_eq!(idx.window(&cap, 5, 0, 0, 10), &[] as &[u32]);
    assert_eq!(idx.busy_time(&cap, 0, 0, 10), 0);
    assert_eq!(idx.children(&cap, 0), Vec::<u32>::new());
    assert_eq!(idx.next_on_lane(&cap, 0), None);
}

#[test]
fn partial_overlap_goes_to_an_extra_lane_and_counts_once_in_busy_time() {
    // [0,10) and [5,15) overlap partially: two root lanes; the union is [0,15).
    let cap = build(&[vec![(0, 10, 0), (5, 10, 1), (2, 3, 2)]]);
    let idx = CaptureIndex::build(&cap);
    assert_eq!(idx.lane_count(0), 3);
    assert_eq!(idx.busy_time(&cap, 0, -5, 100), 15);
    assert_eq!(idx.busy_time(&cap, 0, 3, 12), 9);
    assert_eq!(
        idx.busy_time(&cap, 0, 3, 12),
        brute::busy_time(&cap, 0, 3, 12)
    );
    check(&cap, &[(0, 15), (4, 6)], 5).unwrap();
}
