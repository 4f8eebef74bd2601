//! Range "longest slice" queries over one lane: a block mipmap.
//!
//! The lane is cut into blocks of [`BLOCK`] slices. Level 0 holds the position of the longest
//! slice of every block; level `k` holds, for every run of `2^k` consecutive blocks starting at
//! each block, the position of the longest slice in that run (an overlapping mipmap, also known as
//! a sparse table). A query over positions `[lo, hi)` scans the at most `2 × (BLOCK - 1)` slices in
//! the partial blocks at both ends and reads two (overlapping) level entries for the full blocks in
//! between: O(BLOCK) work, independent of the lane length and of the zoom level.
//!
//! Entries are `u32` positions into the lane; durations are read back from the lane's prefix sums.
//! Memory: about `log2(len / BLOCK) × 4 / BLOCK` bytes per slice (≈ 2 B/slice for a 1 M-slice lane).
//! Ties go to the earliest position.

use super::runs::Runs;

/// Slices per block (power of two).
pub const BLOCK: usize = 32;
const SHIFT: u32 = BLOCK.trailing_zeros();

/// Longest-slice summary of one lane.
#[derive(Clone, Debug, Default)]
pub struct Mipmap {
    /// Number of blocks.
    blocks: usize,
    /// Levels laid out one after another; level `k` has `blocks - 2^k + 1` entries.
    table: Vec<u32>,
}

/// Whether `(dq, q)` beats `(dp, p)`: longer first, then earlier.
#[inline]
fn beats(dq: i64, q: usize, dp: i64, p: usize) -> bool {
    dq > dp || (dq == dp && q < p)
}

#[inline]
fn level_offset(blocks: usize, k: u32) -> usize {
    k as usize * (blocks + 1) - ((1usize << k) - 1)
}

impl Mipmap {
    /// Builds the mipmap of `runs` (skipped for lanes shorter than two blocks).
    pub fn build(runs: &Runs) -> Mipmap {
        let n = runs.len();
        let blocks = n >> SHIFT;
        if blocks < 2 {
            return Mipmap::default();
        }
        let levels = usize::BITS - blocks.leading_zeros();
        let total = level_offset(blocks, levels);
        let mut table = Vec::with_capacity(total);
        // Durations of the current level's winners, to avoid re-reading them from the lane.
        let mut durs: Vec<i64> = Vec::with_capacity(blocks);
        for b in 0..blocks {
            let (mut best, mut bd) = (b << SHIFT, runs.dur(b << SHIFT));
            for p in (b << SHIFT) + 1..(b + 1) << SHIFT {
                let d = runs.dur(p);
                if d > bd {
                    best = p;
                    bd = d;
                }
            }
            table.push(best as u32);
            durs.push(bd);
        }
        for k in 1..levels {
            let prev = level_offset(blocks, k - 1);
            let half = 1usize << (k - 1);
            let len = blocks - (1usize << k) + 1;
            for j in 0..len {
                let (p, q) = (table[prev + j], table[prev + j + half]);
                let (dp, dq) = (durs[j], durs[j + half]);
                if dq > dp {
                    table.push(q);
                    durs[j] = dq;
                } else {
                    table.push(p);
                }
            }
            durs.truncate(len);
        }
        debug_assert_eq!(table.len(), total);
        Mipmap { blocks, table }
    }

    /// Position of the longest slice in `[lo, hi)` (ties: earliest); `hi > lo`, `hi <= runs.len()`.
    #[inline]
    pub fn argmax(&self, runs: &Runs, lo: usize, hi: usize) -> usize {
        let first_full = (lo + BLOCK - 1) >> SHIFT;
        let end_full = (hi >> SHIFT).min(self.blocks);
        if first_full >= end_full {
            return scan(runs, lo + 1, hi, lo, runs.dur(lo)).0;
        }
        // Full blocks [first_full, end_full): two overlapping level entries.
        let r = end_full - first_full;
        let k = usize::BITS - 1 - r.leading_zeros();
        let off = level_offset(self.blocks, k);
        let p = self.table[off + first_full] as usize;
        let q = self.table[off + end_full - (1usize << k)] as usize;
        let (dp, dq) = (runs.dur(p), runs.dur(q));
        let (mut best, mut bd) = if dq > dp { (q, dq) } else { (p, dp) };
        // Partial blocks: before (earlier, wins ties) and after (later, loses ties).
        let head_end = first_full << SHIFT;
        if lo < head_end {
            let (h, hd) = scan(runs, lo + 1, head_end, lo, runs.dur(lo));
            if hd >= bd {
                best = h;
                bd = hd;
            }
        }
        let tail = end_full << SHIFT;
        if tail < hi {
            let (t, td) = scan(runs, tail + 1, hi, tail, runs.dur(tail));
            if beats(td, t, bd, best) {
                best = t;
            }
        }
        best
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.table.capacity() * 4
    }
}

/// Longest of `[from, to)` against a current best `(best, bd)` that precedes them.
#[inline]
fn scan(runs: &Runs, from: usize, to: usize, mut best: usize, mut bd: i64) -> (usize, i64) {
    for p in from..to {
        let d = runs.dur(p);
        if d > bd {
            best = p;
            bd = d;
        }
    }
    (best, bd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argmax_matches_scan() {
        let mut runs = Runs::with_capacity(0);
        let mut x: u64 = 7;
        let mut t = 0;
        for _ in 0..(BLOCK * 9 + 5) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = (x % 7) as i64;
            runs.push(t, d);
            t += d + (x % 3) as i64;
        }
        let m = Mipmap::build(&runs);
        let n = runs.len();
        for lo in 0..n {
            for hi in lo + 1..=n {
                let mut best = lo;
                for p in lo..hi {
                    if runs.dur(p) > runs.dur(best) {
                        best = p;
                    }
                }
                assert_eq!(m.argmax(&runs, lo, hi), best, "lo={lo} hi={hi}");
            }
        }
    }
}
