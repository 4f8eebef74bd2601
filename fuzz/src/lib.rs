//! Shared helpers of the fuzz targets: read everything a loaded capture exposes, so lazy paths
//! (XPlane stats decoded on demand) run too.

use tracetui::model::Capture;

/// Reads every slice's and instant's args (lazy XPlane stats included), names and the
/// aggregated events; returns a checksum so nothing is optimized away.
pub fn touch_all(cap: &Capture) -> u64 {
    let mut sum = 0u64;
    let s = &cap.slices;
    for &r in &s.args {
        for (k, _v) in cap.args.iter(r, &cap.strings) {
            sum = sum.wrapping_add(u64::from(k.0));
        }
    }
    for &r in &cap.instants.args {
        for (k, _v) in cap.args.iter(r, &cap.strings) {
            sum = sum.wrapping_add(u64::from(k.0));
        }
    }
    for t in 0..cap.tracks.len() {
        sum = sum.wrapping_add(cap.track_name(t as u32).len() as u64);
        sum = sum.wrapping_add(cap.track_stable_name(t as u32).len() as u64);
    }
    sum.wrapping_add(cap.aggregated.len() as u64 + cap.event_count())
}

/// Loads with `load`, then builds the interval index and reads everything (see [`touch_all`]).
/// Every error must name a place inside the input: `offset <= len`.
pub fn check(
    loaded: Result<Capture, tracetui::formats::LoadError>,
    len: usize,
) -> u64 {
    match loaded {
        Ok(cap) => {
            let idx = tracetui::index::CaptureIndex::build(&cap);
            drop(idx);
            touch_all(&cap)
        }
        Err(e) => {
            if let Some(o) = e.offset {
                assert!(o <= len as u64, "error offset {o} past the input ({len} bytes): {e}");
            }
            assert!(!e.message.is_empty());
            0
        }
    }
}
