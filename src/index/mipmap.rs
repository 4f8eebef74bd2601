//! Range "longest slice" queries over one lane: a block mipmap.
//!
//! The lane is cut into blocks of [`BLOCK`] slices. Within a block, every position stores (as a
//! one-byte offset) the longest slice from the block start up to it and from it to the block end.
//! Across blocks, level `k` holds, for every run of `2^k` consecutive blocks starting at each
//! block, the position of the longest slice in that run (an overlapping mipmap, also known as a
//! sparse table). A query over positions `[lo, hi)` reads the suffix entry of `lo`, the prefix
//! entry of `hi - 1` and two (overlapping) level entries for the full blocks in between: O(1) and
//! a handful of cache lines whatever the zoom level. A range inside one block is scanned
//! (at most [`BLOCK`] slices).
//!
//! Level entries are `u32` positions into the lane; durations are read back from the lane's
//! prefix sums. Memory: 2 B/slice of offsets plus about `log2(len / BLOCK) × 4 / BLOCK` B/slice
//! of levels (≈ 2.9 B/slice for a 1 M-slice lane). Ties go to the earliest position.

use super::runs::Runs;

/// Slices per block (power of two, at most 256 so offsets fit a byte).
pub const BLOCK: usize = 64;
const SHIFT: u32 = BLOCK.trailing_zeros();

/// Longest-slice summary of one lane.
#[derive(Clone, Debug, Default)]
pub struct Mipmap {
    /// Number of full blocks.
    blocks: usize,
    /// Levels laid out one after another; level `k` has `blocks - 2^k + 1` entries.
    table: Vec<u32>,
    /// Per position: offset in its block of the longest slice from the block start to it.
    prefix: Vec<u8>,
    /// Per position: offset in its block of the longest slice from it to the block end.
    suffix: Vec<u8>,
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
        let mut prefix = vec![0u8; n];
        let mut suffix = vec![0u8; n];
        let levels = usize::BITS - blocks.leading_zeros();
        let total = level_offset(blocks, levels);
        let mut table = Vec::with_capacity(total);
        // Durations of the current level's winners, to avoid re-reading them from the lane.
        let mut durs: Vec<i64> = Vec::with_capacity(blocks);
        for b in 0..n.div_ceil(BLOCK) {
            let base = b << SHIFT;
            let end = (base + BLOCK).min(n);
            let (mut best, mut bd) = (0usize, i64::MIN);
            for (o, slot) in prefix[base..end].iter_mut().enumerate() {
                let d = runs.dur(base + o);
                if d > bd {
                    best = o;
                    bd = d;
                }
                *slot = best as u8;
            }
            if b < blocks {
                table.push((base + best) as u32);
                durs.push(bd);
            }
            let (mut best, mut bd) = (0usize, i64::MIN);
            for (o, slot) in suffix[base..end].iter_mut().enumerate().rev() {
                let d = runs.dur(base + o);
                if d >= bd {
                    best = o;
                    bd = d;
                }
                *slot = best as u8;
            }
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
        Mipmap {
            blocks,
            table,
            prefix,
            suffix,
        }
    }

    /// Position of the longest slice in `[lo, hi)` (ties: earliest); `hi > lo`, `hi <= runs.len()`.
    #[inline]
    pub fn argmax(&self, runs: &Runs, lo: usize, hi: usize) -> usize {
        pick(runs, self.candidates(runs, lo, hi))
    }

    /// Up to four candidate positions for the longest slice in `[lo, hi)`, in position order
    /// (head block suffix, two level entries, tail block prefix); [`pick`] chooses among them.
    /// Split from the choice so a caller can gather candidates for many ranges before reading
    /// their durations, letting the cache misses overlap.
    #[inline]
    pub fn candidates(&self, runs: &Runs, lo: usize, hi: usize) -> [usize; 4] {
        let (bl, bh) = (lo >> SHIFT, (hi - 1) >> SHIFT);
        if bl == bh || self.prefix.is_empty() {
            let b = scan(runs, lo, hi);
            return [b; 4];
        }
        let head = (bl << SHIFT) + self.suffix[lo] as usize;
        let tail = (bh << SHIFT) + self.prefix[hi - 1] as usize;
        if bl + 1 < bh {
            let (f, e) = (bl + 1, bh.min(self.blocks));
            let r = e - f;
            let k = usize::BITS - 1 - r.leading_zeros();
            let off = level_offset(self.blocks, k);
            let p = self.table[off + f] as usize;
            let q = self.table[off + e - (1usize << k)] as usize;
            [head, p, q, tail]
        } else {
            [head, head, head, tail]
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.table.capacity() * 4 + self.prefix.capacity() + self.suffix.capacity()
    }
}

/// The longest of candidates given in position order, earliest on ties.
#[inline]
pub fn pick(runs: &Runs, c: [usize; 4]) -> usize {
    let mut best = c[0];
    let mut bd = runs.dur(best);
    for &p in &c[1..] {
        let d = runs.dur(p);
        if d > bd {
            best = p;
            bd = d;
        }
    }
    best
}

/// Longest of `[lo, hi)`, earliest on ties.
#[inline]
fn scan(runs: &Runs, lo: usize, hi: usize) -> usize {
    let (mut best, mut bd) = (lo, runs.dur(lo));
    for p in lo + 1..hi {
        let d = runs.dur(p);
        if d > bd {
            best = p;
            bd = d;
        }
    }
    best
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
