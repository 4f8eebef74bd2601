//! Interning caches in front of the capture's [`Interner`]: a direct-mapped cache for names,
//! categories and string values, and a one-entry cache per `args` key position.

use crate::model::{Interner, StrId};

/// A direct-mapped cache in front of the interner: a fingerprint of a string's length and a few
/// of its bytes picks a slot; a hit is confirmed by comparing with the text. Saves hashing long
/// names (kernel signatures, call stacks) in full for every event.
pub struct StrCache {
    slots: Vec<Slot>,
}

/// Longest text a slot holds itself.
const INLINE: usize = 16;

/// One cached string: strings of up to [`INLINE`] bytes (most categories, short names) are
/// confirmed against the slot's own copy, without reaching into the interner's table (a hit
/// then costs one cache line instead of three dependent loads).
#[derive(Clone, Copy)]
struct Slot {
    fp: u64,
    id: StrId,
    len: u32,
    text: [u8; INLINE],
}

impl Slot {
    const EMPTY: Slot = Slot {
        fp: 0,
        id: StrId::EMPTY,
        len: 0,
        text: [0; INLINE],
    };

    /// A slot for `text`, interned as `id`.
    fn new(fp: u64, id: StrId, text: &[u8]) -> Slot {
        let mut s = Slot {
            fp,
            id,
            len: u32::try_from(text.len()).unwrap_or(u32::MAX),
            text: [0; INLINE],
        };
        // Longer texts are compared with the interner's copy.
        if let Some(d) = s.text.get_mut(..text.len()) {
            d.copy_from_slice(text);
        }
        s
    }

    /// Whether the slot holds `b` (fingerprint `fp`).
    #[inline(always)]
    fn holds(&self, fp: u64, b: &[u8], strings: &Interner) -> bool {
        if self.fp != fp || self.len as usize != b.len() {
            return false;
        }
        match self.text.get(..b.len()) {
            Some(t) => same(t, b),
            None => strings.get(self.id).as_bytes() == b,
        }
    }
}

/// 2 048 slots of 32 bytes: 64 KB.
const CACHE_BITS: u32 = 11;

impl Default for StrCache {
    fn default() -> Self {
        StrCache {
            slots: vec![Slot::EMPTY; 1 << CACHE_BITS],
        }
    }
}

/// Up to the first eight bytes of `b` as a word, for the fingerprint. Plain loads, never a
/// `memcpy` into a stack buffer: that call and the word load that follows its byte stores cost
/// more than the rest of an interning hit.
#[inline]
fn word(b: &[u8]) -> u64 {
    if let Some(w) = b.first_chunk::<8>() {
        return u64::from_le_bytes(*w);
    }
    let n = b.len();
    match (b.first_chunk::<4>(), b.last_chunk::<4>()) {
        // 4–7 bytes: two overlapping loads, the bytes zero-padded as a whole.
        (Some(lo), Some(hi)) => {
            u64::from(u32::from_le_bytes(*lo)) | u64::from(u32::from_le_bytes(*hi)) << (8 * (n - 4))
        }
        // 0–3 bytes: first, middle and last (the length is hashed beside).
        _ => match (b.first(), b.get(n / 2), b.last()) {
            (Some(&x), Some(&y), Some(&z)) => u64::from(x) | u64::from(y) << 8 | u64::from(z) << 16,
            _ => 0,
        },
    }
}

impl StrCache {
    /// Interns `s` through the cache.
    #[inline]
    pub fn intern(&mut self, strings: &mut Interner, s: &str) -> StrId {
        self.cached(strings, s.as_bytes(), |t| t.intern(s))
    }

    /// Interns text given as bytes that the caller checked to be UTF-8 earlier: a cache hit is
    /// a byte comparison with an interned (hence valid) string, so only a miss validates again
    /// (lossily, should the bytes have changed meanwhile — a mapped file rewritten in place).
    #[inline]
    pub fn intern_bytes(&mut self, strings: &mut Interner, b: &[u8]) -> StrId {
        self.cached(strings, b, |t| t.intern_lossy(b))
    }

    /// The id of text `b` from its slot, else from `miss` (which interns it), kept in the slot.
    #[inline(always)]
    fn cached(
        &mut self,
        strings: &mut Interner,
        b: &[u8],
        miss: impl FnOnce(&mut Interner) -> StrId,
    ) -> StrId {
        let (fp, k) = fingerprint(b);
        let Some(slot) = self.slots.get_mut(k) else {
            return miss(strings);
        };
        if slot.holds(fp, b, strings) {
            return slot.id;
        }
        let id = miss(strings);
        *slot = Slot::new(fp, id, strings.get(id).as_bytes());
        id
    }
}

/// A fingerprint of a string's length and a few of its bytes, and its cache slot.
#[inline]
fn fingerprint(b: &[u8]) -> (u64, usize) {
    let n = b.len();
    let head = word(b);
    let tail = word(&b[n.saturating_sub(8)..]);
    let mid = word(&b[n / 2..]);
    let fp = (head ^ tail.rotate_left(23) ^ mid.rotate_left(41) ^ (n as u64).rotate_left(7))
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        | 1;
    (fp, (fp >> (64 - CACHE_BITS)) as usize)
}

/// Interns an `args` key through its position's one-entry cache (see [`CachedKeySeed`]).
#[inline]
pub fn cached_key(strings: &mut Interner, slot: &mut StrId, key: &[u8]) -> StrId {
    if same(strings.get(*slot).as_bytes(), key) {
        return *slot;
    }
    let id = strings.intern_lossy(key);
    *slot = id;
    id
}

/// `a == b`; strings of up to 16 bytes (most keys, categories, short names) are compared in two
/// overlapping loads instead of a `memcmp` call.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n > 16 {
        return a == b;
    }
    if n >= 8 {
        return ends_equal::<8>(a, b);
    }
    if n >= 4 {
        return ends_equal::<4>(a, b);
    }
    // 0–3 bytes: first, middle, last.
    a.first() == b.first() && a.get(n / 2) == b.get(n / 2) && a.last() == b.last()
}

/// Whether the first and the last `N` bytes of `a` and `b` (of one length, at least `N`) are
/// equal: two loads each, overlapping when the length is below `2N`.
#[inline(always)]
fn ends_equal<const N: usize>(a: &[u8], b: &[u8]) -> bool {
    a.first_chunk::<N>() == b.first_chunk::<N>() && a.last_chunk::<N>() == b.last_chunk::<N>()
}

#[cfg(test)]
mod tests {
    use super::{StrCache, same, word};
    use crate::model::Interner;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn same_is_equality(
            a in proptest::collection::vec(0u8..3, 0..24),
            b in proptest::collection::vec(0u8..3, 0..24),
        ) {
            prop_assert_eq!(same(&a, &b), a == b);
            prop_assert!(same(&a, &a));
        }
    }

    proptest! {
        /// Through the cache or not, every string gets the interner's id: strings of every
        /// length around the inline limit, and ones that differ only in bytes the fingerprint
        /// does not read (same fingerprint, same slot).
        #[test]
        fn cache_gives_the_interners_ids(
            picks in proptest::collection::vec((0usize..40, 0u8..4, 0usize..40), 1..300),
        ) {
            let mut cache = StrCache::default();
            let (mut a, mut b) = (Interner::new(), Interner::new());
            for (len, fill, at) in picks {
                let mut t = vec![b'a'; len];
                if let Some(c) = t.get_mut(at) {
                    *c = b'a' + fill;
                }
                let t = String::from_utf8(t).unwrap();
                let direct = a.intern(&t);
                let cached = if at % 2 == 0 {
                    cache.intern_bytes(&mut b, t.as_bytes())
                } else {
                    cache.intern(&mut b, &t)
                };
                prop_assert_eq!(direct, cached, "{:?}", t);
            }
        }
    }

    #[test]
    fn word_is_the_zero_padded_head() {
        for n in 4..=12 {
            let a: Vec<u8> = (1..=n as u8).collect();
            let mut x = [0u8; 8];
            x[..n.min(8)].copy_from_slice(&a[..n.min(8)]);
            assert_eq!(word(&a), u64::from_le_bytes(x), "length {n}");
        }
        assert_eq!(word(b""), 0);
        assert_ne!(word(b"ab"), word(b"ba"));
    }

    #[test]
    fn one_changed_byte_anywhere_differs() {
        for n in 1..=24 {
            let a: Vec<u8> = (0..n as u8).collect();
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x40;
                assert!(!same(&a, &b), "length {n}, byte {i}");
            }
        }
    }
}
