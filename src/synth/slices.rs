//! Nested slice stacks on several tracks, for index benchmarks and tests.
//!
//! Each track holds back-to-back call trees (a root with 1–3 children per level, up to
//! `max_depth` levels deep, durations shrinking with depth) separated by idle gaps; a small
//! fraction of slices partially overlap a neighbour, which opens extra lanes. Slices are written
//! in post-order (children before parents, as Chrome `X` events are emitted when they complete)
//! and tracks are interleaved, so `CaptureBuilder::finish` has real sorting to do.

use crate::model::{
    ArgsRef, Capture, CaptureBuilder, Format, Key, Ps, SourceInfo, StrId, TrackKind,
};

/// Shape of a generated capture.
#[derive(Clone, Debug)]
pub struct SliceSpec {
    /// Total number of slices (exact).
    pub slices: usize,
    /// Number of thread tracks.
    pub tracks: usize,
    /// Deepest call tree, in levels (each tree draws its depth from `1..=max_depth`).
    pub max_depth: u16,
    /// Number of distinct slice names.
    pub names: usize,
    /// Partially overlapping slices per million (they go to extra lanes).
    pub overlap_ppm: u32,
    /// Random seed.
    pub seed: u64,
}

impl Default for SliceSpec {
    fn default() -> Self {
        SliceSpec {
            slices: 1_000_000,
            tracks: 8,
            max_depth: 12,
            names: 4096,
            overlap_ppm: 200,
            seed: 42,
        }
    }
}

/// SplitMix64: small, fast, deterministic.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[lo, hi)` (`lo` when empty).
    #[inline]
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        lo + (self.next_u64() % (hi - lo) as u64) as i64
    }
}

const US: Ps = 1_000_000;

struct Gen<'a> {
    b: &'a mut CaptureBuilder,
    rng: Rng,
    names: Vec<StrId>,
    cat: StrId,
    overlap_ppm: u32,
}

impl Gen<'_> {
    fn name(&mut self, depth: u16) -> StrId {
        // Skewed: a few names are very common, most are rare; shallow levels use fewer names.
        let n = self.names.len().max(1) as u64;
        let a = self.rng.next_u64() % n;
        let b = self.rng.next_u64() % n;
        let pool = (n >> (12u16.saturating_sub(depth).min(10))).max(1);
        self.names[(a.min(b) % pool) as usize]
    }

    /// Emits the tree rooted at `[t, t + dur)`; `budget` counts slices still to write.
    fn tree(&mut self, track: u32, t: Ps, dur: Ps, depth: u16, max_depth: u16, budget: &mut usize) {
        if depth + 1 < max_depth && dur >= 4 * US / 1000 {
            let k = self.rng.range(1, 4);
            let slot = dur / k;
            for j in 0..k {
                if *budget == 0 {
                    break;
                }
                *budget -= 1;
                let gap = self.rng.range(0, slot / 8 + 1);
                let cd = slot * self.rng.range(55, 95) / 100;
                let cs = t + j * slot + gap;
                self.tree(track, cs, cd.min(slot - gap), depth + 1, max_depth, budget);
            }
        }
        let name = self.name(depth);
        self.b
            .add_slice(track, t, dur, name, self.cat, ArgsRef::NONE, 0);
        if *budget > 0 && self.rng.next_u64() % 1_000_000 < u64::from(self.overlap_ppm) {
            // A slice that starts inside this one and ends after it: an extra lane.
            *budget -= 1;
            let s = t + dur / 2 + 1;
            let name = self.name(depth);
            self.b
                .add_slice(track, s, dur, name, self.cat, ArgsRef::NONE, 0);
        }
    }
}

/// Generates a capture shaped by `spec` through [`CaptureBuilder`] (so depth, parent and lanes
/// come from the real nesting code). Returns the unfinished builder so callers can time `finish`.
pub fn nested_builder(spec: &SliceSpec) -> CaptureBuilder {
    let mut b = CaptureBuilder::new();
    let names: Vec<StrId> = (0..spec.names.max(1))
        .map(|i| b.intern(&format!("op_{}::kernel_{i}", i % 97)))
        .collect();
    let cat = b.intern("cpu_op");
    let p = b.process(Key::Int(1));
    let tracks: Vec<u32> = (0..spec.tracks.max(1))
        .map(|t| b.track(p, Key::Int(t as i64 + 1), TrackKind::Thread))
        .collect();
    let mut g = Gen {
        b: &mut b,
        rng: Rng::new(spec.seed),
        names,
        cat,
        overlap_ppm: spec.overlap_ppm,
    };
    let per_track = spec.slices / tracks.len();
    let mut budgets: Vec<usize> = vec![per_track; tracks.len()];
    budgets[0] += spec.slices - per_track * tracks.len();
    let mut clocks: Vec<Ps> = vec![0; tracks.len()];
    let max_depth = spec.max_depth.max(1);
    // Round-robin over tracks, one root tree at a time, so tracks interleave in the input.
    loop {
        let mut any = false;
        for (k, &t) in tracks.iter().enumerate() {
            if budgets[k] == 0 {
                continue;
            }
            any = true;
            budgets[k] -= 1;
            let depth = g.rng.range(1, i64::from(max_depth) + 1) as u16;
            let dur = g.rng.range(5 * US, 50 * US) * (1i64 << depth) / 2;
            let start = clocks[k] + g.rng.range(US / 2, 20 * US);
            g.tree(t, start, dur, 0, depth, &mut budgets[k]);
            clocks[k] = start + dur;
        }
        if !any {
            break;
        }
    }
    b
}

/// [`nested_builder`], finished.
pub fn nested_capture(spec: &SliceSpec) -> Capture {
    nested_builder(spec).finish(SourceInfo::default(), Format::Chrome)
}
