//! The memory of a loaded capture as the explorer draws it: the memory model
//! ([`crate::model::memory`]: per device / allocator the allocated and reserved series, the
//! allocations, the OOM events), a live-set index per track, each series' peak and a range-max
//! table so a memory row costs O(log n) per column at any zoom. Built once per capture on the
//! loader thread (`Loaded::derive`), or given whole by an allocator snapshot.

use crate::model::memory::{LiveIndex, MemTrack, MemoryModel, NO_STACK};
use crate::model::{Capture, Ps};

/// Samples per block of the range-max table.
const BLOCK: usize = 64;

/// Largest value of a series over index ranges: block maxima with a sparse table over them
/// (O(1) for whole blocks, at most two partial blocks scanned).
#[derive(Clone, Debug, Default)]
pub struct RangeMax {
    /// `levels[k][b]` = max of blocks `b .. b + 2^k`.
    levels: Vec<Vec<i64>>,
}

impl RangeMax {
    /// The table of `v`.
    pub fn new(v: &[i64]) -> RangeMax {
        let base: Vec<i64> = v
            .chunks(BLOCK)
            .map(|c| c.iter().copied().max().unwrap_or(i64::MIN))
            .collect();
        let mut levels = vec![base];
        let mut w = 1;
        while w * 2 <= levels[0].len() {
            let prev = &levels[levels.len() - 1];
            let next: Vec<i64> = (0..prev.len() - w)
                .map(|b| prev[b].max(prev[b + w]))
                .collect();
            levels.push(next);
            w *= 2;
        }
        RangeMax { levels }
    }

    /// Max of `v[lo..hi]` (`v` the series the table was built from); `None` when empty.
    pub fn max(&self, v: &[i64], lo: usize, hi: usize) -> Option<i64> {
        let hi = hi.min(v.len());
        if lo >= hi {
            return None;
        }
        let (bl, bh) = (lo.div_ceil(BLOCK), hi / BLOCK);
        if bl >= bh {
            return v[lo..hi].iter().copied().max();
        }
        let mut m = v[lo..bl * BLOCK]
            .iter()
            .chain(&v[bh * BLOCK..hi])
            .copied()
            .max()
            .unwrap_or(i64::MIN);
        let n = bh - bl;
        let k = (usize::BITS - 1 - n.leading_zeros()) as usize;
        if let Some(level) = self.levels.get(k) {
            m = m.max(level[bl]).max(level[bh - (1 << k)]);
        }
        Some(m)
    }

    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.levels.iter().map(|l| l.capacity() * 8).sum()
    }
}

/// One memory track with what drawing and queries need.
#[derive(Clone, Debug, Default)]
pub struct TrackView {
    /// Live set at a time.
    pub live: LiveIndex,
    /// (time, bytes) of the allocated peak ([`settled_peak`]).
    pub peak: Option<(Ps, i64)>,
    /// (time, bytes) of the reserved peak (when reserved is recorded).
    pub peak_reserved: Option<(Ps, i64)>,
    /// Largest allocated or reserved value: both rows share this scale.
    pub scale: i64,
    /// Range maxima of allocated, then reserved.
    pub max: [RangeMax; 2],
}

/// The memory of a capture or snapshot, ready to draw.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    /// The model.
    pub model: MemoryModel,
    /// Per track of the model.
    pub tracks: Vec<TrackView>,
    /// An allocator snapshot's segments at snapshot time (empty for traces).
    pub segments: Vec<crate::formats::snapshot::Segment>,
}

impl Memory {
    /// The memory of `cap` (empty when it has no memory events).
    pub fn build(cap: &Capture) -> Memory {
        Memory::of(crate::analysis::memory::build(cap))
    }

    /// Indexes `model`.
    pub fn of(model: MemoryModel) -> Memory {
        let tracks = model
            .tracks
            .iter()
            .map(|t| TrackView {
                live: LiveIndex::new(&t.allocs),
                peak: settled_peak(&t.ts, &t.allocated),
                peak_reserved: t
                    .has_reserved
                    .then(|| settled_peak(&t.ts, &t.reserved))
                    .flatten(),
                scale: t
                    .allocated
                    .iter()
                    .chain(if t.has_reserved { &t.reserved[..] } else { &[] })
                    .copied()
                    .max()
                    .unwrap_or(0),
                max: [RangeMax::new(&t.allocated), RangeMax::new(&t.reserved)],
            })
            .collect();
        Memory {
            model,
            tracks,
            segments: Vec::new(),
        }
    }

    /// True without memory data.
    pub fn is_empty(&self) -> bool {
        self.model.is_empty()
    }

    /// Track `i` of the model.
    pub fn track(&self, i: u32) -> Option<&MemTrack> {
        self.model.tracks.get(i as usize)
    }

    /// Largest value of series `reserved` of track `i` over `[a, b)`: the value holding at `a`
    /// and every sample before `b`; `None` before the first sample.
    pub fn max_in(&self, i: u32, reserved: bool, a: Ps, b: Ps) -> Option<i64> {
        let t = self.track(i)?;
        let v = self.tracks.get(i as usize)?;
        let vals = if reserved { &t.reserved } else { &t.allocated };
        let k = t.ts.partition_point(|&x| x <= a);
        let lo = k.saturating_sub(1);
        let hi = t.ts.partition_point(|&x| x < b).max(k);
        v.max[usize::from(reserved)].max(vals, lo, hi)
    }

    /// Index of the first OOM event of track `i` in `[a, b)`.
    pub fn oom_in(&self, i: u32, a: Ps, b: Ps) -> Option<usize> {
        let t = self.track(i)?;
        t.ooms.iter().position(|o| o.ts >= a && o.ts < b)
    }

    /// The call stack `id` as text, innermost frame first, frames joined by ` ← ` (interpreter
    /// and unwinder frames left out, as memory_viz does).
    pub fn stack_text(&self, id: u32) -> String {
        if id == NO_STACK {
            return String::new();
        }
        let s = &self.model.stacks;
        s.get(id)
            .iter()
            .filter_map(|&f| s.frames.get(f as usize))
            .filter(|f| crate::formats::snapshot::frame_kept(&f.name, &f.file))
            .map(|f| f.short())
            .collect::<Vec<_>>()
            .join(" ← ")
    }

    /// Approximate heap bytes (columns, indexes, tables).
    pub fn heap_bytes(&self) -> usize {
        let model: usize = self
            .model
            .tracks
            .iter()
            .map(|t| {
                t.ts.capacity() * 24
                    + t.allocs.len() * 48
                    + t.ooms.capacity() * std::mem::size_of::<crate::model::memory::Oom>()
            })
            .sum();
        let views: usize = self
            .tracks
            .iter()
            .map(|v| v.max[0].heap_bytes() + v.max[1].heap_bytes() + v.live.heap_bytes())
            .sum();
        model + views
    }
}

/// (time, value) of the first time with the largest value once all samples at that time are
/// applied: the state the live set at that time shows (several events can share a timestamp;
/// a value between two of them is never on screen).
pub fn settled_peak(ts: &[Ps], v: &[i64]) -> Option<(Ps, i64)> {
    let mut best: Option<(Ps, i64)> = None;
    for (i, (&t, &x)) in ts.iter().zip(v).enumerate() {
        if ts.get(i + 1) == Some(&t) {
            continue;
        }
        if best.is_none_or(|(_, b)| x > b) {
            best = Some((t, x));
        }
    }
    best
}

/// Bytes in binary units as torch and memory_viz print them: `512 B`, `1.5 MiB`, `-64.0 KiB`.
pub fn mem_bytes(v: i64) -> String {
    const U: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut x = v.unsigned_abs() as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < U.len() {
        x /= 1024.0;
        u += 1;
    }
    let sign = if v < 0 { "-" } else { "" };
    if u == 0 {
        format!("{sign}{} B", v.unsigned_abs())
    } else {
        format!("{sign}{x:.1} {}", U[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_max_matches_brute_force() {
        let mut x = 0x9e37_79b9_u64;
        let v: Vec<i64> = (0..1000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 10_000) as i64 - 5000
            })
            .collect();
        let t = RangeMax::new(&v);
        for lo in (0..1000).step_by(37) {
            for hi in (lo..=1000).step_by(13) {
                assert_eq!(
                    t.max(&v, lo, hi),
                    v[lo..hi].iter().copied().max(),
                    "{lo}..{hi}"
                );
            }
        }
        assert_eq!(t.max(&v, 5, 5), None);
        assert_eq!(RangeMax::new(&[]).max(&[], 0, 3), None);
    }

    #[test]
    fn the_peak_is_a_settled_state() {
        // At t = 10 an allocation of 5 and a free of 4 share the timestamp: 9 is never seen.
        let ts = [0, 10, 10, 20];
        let v = [4, 9, 5, 7];
        assert_eq!(settled_peak(&ts, &v), Some((20, 7)));
        assert_eq!(settled_peak(&[0, 5], &[3, 3]), Some((0, 3)));
        assert_eq!(settled_peak(&[], &[]), None);
    }

    #[test]
    fn bytes_in_binary_units() {
        assert_eq!(mem_bytes(512), "512 B");
        assert_eq!(mem_bytes(1536 * 1024), "1.5 MiB");
        assert_eq!(mem_bytes(-65536), "-64.0 KiB");
    }
}
