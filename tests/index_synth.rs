//! The index against the brute-force oracle on generated nested stacks (`synth::slices`): many
//! lanes, deep trees, long slices spanning many mipmap blocks, partial overlaps.

use tracetui::index::{CaptureIndex, Cell, brute};
use tracetui::model::{Capture, StrId};
use tracetui::synth::slices::{Rng, SliceSpec, nested_capture};

fn capture() -> Capture {
    nested_capture(&SliceSpec {
        slices: 30_000,
        tracks: 3,
        max_depth: 9,
        names: 50,
        overlap_ppm: 20_000,
        seed: 7,
    })
}

#[test]
fn lod_window_and_busy_match_brute_force_at_every_zoom() {
    let cap = capture();
    let idx = CaptureIndex::build(&cap);
    assert!(
        cap.tracks.iter().any(|t| t.lanes > t.max_depth + 1),
        "no extra lanes generated"
    );
    let (lo, hi) = cap.span;
    let mut rng = Rng::new(3);
    let mut out = vec![Cell::EMPTY; 40];
    for q in 0..60 {
        // Zoom from the whole capture down to a few ps per column.
        let width = ((hi - lo) >> (q % 30)).max(1);
        let t0 = rng.range(lo - width / 2, hi);
        let t1 = t0 + width;
        let t = (q % cap.tracks.len()) as u32;
        for lane in 0..idx.lane_count(t) {
            idx.lod(&cap, t, lane, t0, t1, &mut out);
            assert_eq!(
                out,
                brute::lod(&cap, t, lane, t0, t1, out.len()),
                "q={q} lane={lane}"
            );
            assert_eq!(
                idx.window(&cap, t, lane, t0, t1),
                &brute::window(&cap, t, lane, t0, t1)[..]
            );
            let x = rng.range(lo, hi);
            assert_eq!(
                idx.slice_at(&cap, t, lane, x),
                brute::slice_at(&cap, t, lane, x)
            );
        }
        assert_eq!(
            idx.busy_time(&cap, t, t0, t1),
            brute::busy_time(&cap, t, t0, t1)
        );
    }
}

#[test]
fn navigation_and_postings_match_brute_force() {
    let cap = capture();
    let idx = CaptureIndex::build(&cap);
    let mut rng = Rng::new(9);
    for _ in 0..300 {
        let id = rng.range(0, cap.slices.len() as i64) as u32;
        assert_eq!(idx.next_on_lane(&cap, id), brute::next_on_lane(&cap, id));
        assert_eq!(idx.prev_on_lane(&cap, id), brute::prev_on_lane(&cap, id));
        assert_eq!(idx.children(&cap, id), brute::children(&cap, id));
    }
    for n in 0..cap.strings.len() as u32 {
        assert_eq!(
            idx.occurrences(StrId(n)),
            &brute::occurrences(&cap, StrId(n))[..]
        );
    }
}
