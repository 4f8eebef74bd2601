//! Sharing of identical args blocks: many events carry the same stat values (op, module, step,
//! kernel details) besides a unique correlation id. The event's stats after its last unique
//! stat (correlation, flow) are written once as a block that inherits the metadata args, and
//! later events with the same values reuse it through `push_inherit`; the entry order seen by
//! readers is unchanged (own stats, then the shared ones, then the metadata's).

use crate::model::{ArgValue, ArgsArena, ArgsRef, StrId};
use rustc_hash::FxHashMap;

/// One arg as a comparable, hashable record (floats by bit pattern: `-0.0` ≠ `0.0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Entry(u32, u8, u64);

#[inline(always)]
fn entry(k: StrId, v: ArgValue) -> Entry {
    let (tag, bits) = match v {
        ArgValue::Null => (0, 0),
        ArgValue::Bool(b) => (1, u64::from(b)),
        ArgValue::I64(x) => (2, x as u64),
        ArgValue::U64(x) => (3, x),
        ArgValue::F64(x) => (4, x.to_bits()),
        ArgValue::Str(s) => (5, u64::from(s.0)),
        ArgValue::Json(s) => (6, u64::from(s.0)),
        ArgValue::Bytes(n) => (7, n),
    };
    Entry(k.0, tag, bits)
}

/// One Fx-style hashing step (the map hashes the result again).
#[inline(always)]
fn mix(h: u64, w: u64) -> u64 {
    (h.rotate_left(5) ^ w).wrapping_mul(0xf135_7aea_2e62_a9c5)
}

/// Lookups between hit-rate checks.
const WINDOW: u32 = 1 << 16;
/// Most distinct blocks remembered (≈ 40 B each with their entries).
const MAX_BLOCKS: usize = 1 << 20;

/// Where a remembered block's entries lie in `entries`, and what it inherits.
#[derive(Clone, Copy, Debug)]
struct Known {
    block: ArgsRef,
    inherit: ArgsRef,
    at: u32,
    len: u32,
}

/// Remembers written shared blocks by content hash; gives up (writes every block) when fewer
/// than a quarter of the lookups of a window hit.
#[derive(Debug, Default)]
pub struct Dedup {
    map: FxHashMap<u64, Known>,
    entries: Vec<Entry>,
    scratch: Vec<Entry>,
    lookups: u32,
    hits: u32,
    off: bool,
    /// The last block looked up: consecutive events often share their values.
    last: Option<(u64, Known)>,
    /// Blocks reused instead of written (for the benchmark and tests).
    pub reused: u64,
}

impl Dedup {
    /// Forgets every block (per plane: bounds the memory) and turns sharing back on.
    pub fn reset(&mut self) {
        self.map = FxHashMap::default();
        self.entries = Vec::new();
        self.lookups = 0;
        self.hits = 0;
        self.off = false;
        self.last = None;
    }

    /// The block holding `args` followed by `inherit`'s entries: a remembered one when the
    /// same content was written before, else a new one.
    pub fn block(
        &mut self,
        arena: &mut ArgsArena,
        args: &[(StrId, ArgValue)],
        inherit: ArgsRef,
    ) -> ArgsRef {
        if self.off {
            return write(arena, args, inherit);
        }
        self.scratch.clear();
        let mut h = u64::from(inherit.0);
        for &(k, v) in args {
            let e = entry(k, v);
            h = mix(mix(h, (u64::from(e.0) << 8) | u64::from(e.1)), e.2);
            self.scratch.push(e);
        }
        self.lookups += 1;
        let found = match self.last {
            Some((lh, k)) if lh == h => Some(k),
            _ => self.map.get(&h).copied(),
        };
        if let Some(k) = found
            && k.inherit == inherit
            && self
                .entries
                .get(k.at as usize..(k.at + k.len) as usize)
                .is_some_and(|s| s == self.scratch.as_slice())
        {
            self.hits += 1;
            self.reused += 1;
            self.last = Some((h, k));
            return k.block;
        }
        let block = write(arena, args, inherit);
        if self.map.len() < MAX_BLOCKS && block.is_some() {
            let known = Known {
                block,
                inherit,
                at: self.entries.len() as u32,
                len: self.scratch.len() as u32,
            };
            self.entries.extend_from_slice(&self.scratch);
            self.map.insert(h, known);
            self.last = Some((h, known));
        }
        if self.lookups >= WINDOW {
            if self.hits < self.lookups / 4 {
                self.off = true;
                self.last = None;
                self.map = FxHashMap::default();
                self.entries = Vec::new();
            }
            self.lookups = 0;
            self.hits = 0;
        }
        block
    }
}

/// Writes `args` + an inherit of `inherit` as a new block.
fn write(arena: &mut ArgsArena, args: &[(StrId, ArgValue)], inherit: ArgsRef) -> ArgsRef {
    arena.begin();
    for &(k, v) in args {
        arena.push(k, v);
    }
    arena.push_inherit(inherit);
    arena.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_equal_blocks_and_keeps_order() {
        let mut a = ArgsArena::default();
        a.begin();
        a.push(StrId(9), ArgValue::I64(1));
        let meta = a.finish();
        let mut d = Dedup::default();
        let x = [
            (StrId(1), ArgValue::F64(0.0)),
            (StrId(2), ArgValue::Str(StrId(3))),
        ];
        let b1 = d.block(&mut a, &x, meta);
        let b2 = d.block(&mut a, &x, meta);
        assert_eq!(b1, b2);
        assert_eq!(d.reused, 1);
        // -0.0 differs from 0.0; another inherit differs too
        let y = [
            (StrId(1), ArgValue::F64(-0.0)),
            (StrId(2), ArgValue::Str(StrId(3))),
        ];
        assert_ne!(d.block(&mut a, &y, meta), b1);
        assert_ne!(d.block(&mut a, &x, ArgsRef::NONE), b1);
        let got: Vec<_> = a.iter(b1, &crate::model::Interner::new()).collect();
        assert_eq!(
            got,
            vec![x[0], x[1], (StrId(9), ArgValue::I64(1))],
            "own entries, then inherited"
        );
    }

    #[test]
    fn gives_up_when_blocks_are_unique() {
        let mut a = ArgsArena::default();
        let mut d = Dedup::default();
        for i in 0..u64::from(WINDOW) + 1 {
            d.block(&mut a, &[(StrId(1), ArgValue::U64(i))], ArgsRef::NONE);
        }
        assert!(d.off && d.map.is_empty());
        let r = d.block(&mut a, &[(StrId(1), ArgValue::U64(0))], ArgsRef::NONE);
        assert_eq!(a.iter(r, &crate::model::Interner::new()).count(), 1);
        d.reset();
        assert!(!d.off);
    }
}
