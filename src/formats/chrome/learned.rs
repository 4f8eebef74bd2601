//! What the event scanner ([`super::scan`]) learns from earlier events: the text around each
//! key ([`Gaps`]) and values that repeat ([`Lits`]). Both are caches checked against the bytes:
//! a match means the input holds exactly the text read before, and equal bytes read the same
//! way from the same state, so nothing learned can change what an event reads as.

use super::lex::{Val, ends_number};
use super::raw::Field;
use crate::model::StrId;
use std::cell::Cell;

/// Longest text between two values that [`Gaps`] keeps.
const GAP_MAX: usize = 32;

/// The text from the end of one value (or an object's `{`) to the start of the next value —
/// whitespace, `,`, the quoted key, `:` — as read at one key position of an earlier event.
/// Profilers write every event of a kind with the same keys in the same order and layout, so the
/// next event's text at that position is usually the same bytes: one masked comparison of four
/// words then stands for the byte-by-byte read of whitespace, punctuation and key. Equal bytes
/// read the same way from the same state, so the outcome is the one of the full read.
#[derive(Clone, Copy)]
struct Gap {
    /// The bytes as little-endian words, zero past the end.
    words: [u64; GAP_MAX / 8],
    /// Which bytes of each word count.
    masks: [u64; GAP_MAX / 8],
    /// What a match tells the reader.
    found: Found,
}

/// A matched gap: its length, where its key's characters start in it and their length, and the
/// field that key names.
#[derive(Clone, Copy)]
pub struct Found {
    pub len: u8,
    pub key_at: u8,
    pub key_len: u8,
    pub field: Field,
}

impl Default for Gap {
    fn default() -> Self {
        Gap {
            words: [0; GAP_MAX / 8],
            // Nothing learned (`found.len == 0`, which `at` checks first).
            masks: [0; GAP_MAX / 8],
            found: Found {
                len: 0,
                key_at: 0,
                key_len: 0,
                field: Field::Other,
            },
        }
    }
}

impl Gap {
    /// Whether `b` holds this gap's text at `at`.
    #[inline(always)]
    fn at(&self, b: &[u8], at: usize) -> bool {
        if self.found.len == 0 {
            return false;
        }
        match b.get(at..at + GAP_MAX) {
            Some(s) => {
                let (w, _) = s.as_chunks::<8>();
                let x = |i: usize| (u64::from_le_bytes(w[i]) ^ self.words[i]) & self.masks[i];
                // Most gaps fit two words.
                let diff = if self.found.len <= 16 {
                    x(0) | x(1)
                } else {
                    x(0) | x(1) | x(2) | x(3)
                };
                diff == 0
            }
            None => {
                let n = usize::from(self.found.len);
                let mut text = [0u8; GAP_MAX];
                for (c, w) in text.chunks_mut(8).zip(self.words) {
                    c.copy_from_slice(&w.to_le_bytes());
                }
                b.get(at..at + n) == text.get(..n)
            }
        }
    }
}

/// Key positions of an object with learned gaps; later keys are always read in full.
const GAP_KEYS: usize = 24;

/// An index into [`Gaps`] or [`Lits`] that names nothing: read in full, not kept.
pub const NO_SLOT: u8 = u8::MAX;

/// The gaps learned at each key position of an object: two per position, since events of two
/// shapes often alternate (a runtime call and its flow start, a kernel and its flow end).
pub struct Gaps {
    at: [[Gap; 2]; GAP_KEYS],
    /// Which of the two last matched or was learned, per position.
    recent: [u8; GAP_KEYS],
    /// The interned id of each gap's key, once an event applied it (`EMPTY`: not yet); a match
    /// proves the key's bytes are the learned ones, so the id needs no lookup.
    ids: [[Cell<StrId>; 2]; GAP_KEYS],
    /// How many gaps were learned: the key positions read in full.
    pub learned: u64,
}

impl Default for Gaps {
    fn default() -> Self {
        Gaps {
            at: [[Gap::default(); 2]; GAP_KEYS],
            recent: [0; GAP_KEYS],
            ids: Default::default(),
            learned: 0,
        }
    }
}

impl Gaps {
    /// Which gap matched or was learned last at position `k`, as a slot for [`Gaps::id`].
    #[inline(always)]
    pub fn slot(&self, k: usize) -> u8 {
        match self.recent.get(k) {
            Some(r) => (2 * k) as u8 | (r & 1),
            None => NO_SLOT,
        }
    }

    /// The id cell of `slot`'s key.
    #[inline(always)]
    pub fn id(&self, slot: u8) -> Option<&Cell<StrId>> {
        let s = usize::from(slot);
        self.ids.get(s / 2)?.get(s & 1)
    }

    /// The learned gap at position `k` that `b` holds at `at`.
    #[inline(always)]
    pub fn matching(&mut self, k: usize, b: &[u8], at: usize) -> Option<Found> {
        let (two, recent) = (self.at.get(k)?, self.recent.get_mut(k)?);
        let first = usize::from(*recent & 1);
        let g = two.get(first)?;
        if g.at(b, at) {
            return Some(g.found);
        }
        let g = two.get(first ^ 1)?;
        if g.at(b, at) {
            *recent ^= 1;
            return Some(g.found);
        }
        None
    }

    /// Learns `b[at..end]` (key characters at `key`) as a gap of position `k`, in place of the
    /// one that did not match last; false when it cannot be kept (too long, or past the
    /// positions kept).
    pub fn learn(
        &mut self,
        k: usize,
        b: &[u8],
        at: usize,
        end: usize,
        key: (usize, usize),
        f: Field,
    ) -> bool {
        self.learned += 1;
        let (Some(two), Some(recent), Some(t)) =
            (self.at.get_mut(k), self.recent.get_mut(k), b.get(at..end))
        else {
            return false;
        };
        if t.len() > GAP_MAX || key.0 < at || key.1 > end {
            return false;
        }
        *recent ^= 1;
        let which = usize::from(*recent & 1);
        if let Some(id) = self.ids.get(k).and_then(|c| c.get(which)) {
            id.set(StrId::EMPTY);
        }
        let g = &mut two[which];
        let mut text = [0u8; GAP_MAX];
        text[..t.len()].copy_from_slice(t);
        for (w, ((word, m), c)) in g
            .words
            .iter_mut()
            .zip(g.masks.iter_mut())
            .zip(text.chunks(8))
            .enumerate()
        {
            let mut x = [0u8; 8];
            x.copy_from_slice(c);
            *word = u64::from_le_bytes(x);
            let bytes = t.len().saturating_sub(8 * w).min(8);
            *m = if bytes == 0 {
                0
            } else {
                u64::MAX >> (64 - 8 * bytes)
            };
        }
        g.found = Found {
            len: t.len() as u8,
            key_at: (key.0 - at) as u8,
            key_len: (key.1 - key.0) as u8,
            field: f,
        };
        true
    }
}

/// Longest value text (quotes included) that [`Lit`] keeps.
const LIT_MAX: usize = 24;

/// The value text read after one learned gap of an earlier event (a string, or a plain integer
/// starting 1–9), with what it read as. `cat`, `pid`, `tid` and often `name` repeat their
/// values from event to event of one kind, so a masked comparison of up to three words stands
/// for reading the value (and, for `cat` and `name`, for interning it: [`Lits::ids`]).
#[derive(Clone, Copy, Default)]
struct Lit {
    words: [u64; LIT_MAX / 8],
    masks: [u64; LIT_MAX / 8],
    /// Text length; 0: nothing kept.
    len: u8,
    /// The integer's value (`None`: a string).
    uint: Option<u64>,
}

impl Lit {
    /// The value at `j` when `b` holds this text there: its end and value.
    #[inline(always)]
    fn at(&self, b: &[u8], j: usize) -> Option<(usize, Val)> {
        let n = usize::from(self.len);
        if n == 0 {
            return None;
        }
        let s = b.get(j..j + LIT_MAX)?;
        let (w, _) = s.as_chunks::<8>();
        let x = |i: usize| (u64::from_le_bytes(w[i]) ^ self.words[i]) & self.masks[i];
        let diff = if n <= 8 { x(0) } else { x(0) | x(1) | x(2) };
        if diff != 0 {
            return None;
        }
        let e = j + n;
        match self.uint {
            None => Some((e, Val::Str((j + 1) as u32, (e - 1) as u32))),
            // The digits alone are the same: the number must end where it did.
            Some(mag) => ends_number(b.get(e)).then_some((e, Val::Whole(false, mag))),
        }
    }

    /// Keeps the value `v` read from `b[j..e]` when it is a short string or plain integer;
    /// false (nothing kept) otherwise.
    fn learn(&mut self, b: &[u8], j: usize, e: usize, v: Val) -> bool {
        self.len = 0;
        let Some(t) = b.get(j..e) else {
            return false;
        };
        self.uint = match v {
            Val::Str(..) => None,
            Val::Whole(false, mag) if matches!(t.first(), Some(b'1'..=b'9')) => Some(mag),
            _ => return false,
        };
        let n = t.len();
        // Read where [`Lit::at`] reads: the 24 bytes from `j` (a value nearer the end of the
        // input is not kept).
        let Some(w) = b.get(j..j + LIT_MAX).filter(|_| n <= LIT_MAX) else {
            return false;
        };
        let (w, _) = w.as_chunks::<8>();
        for (i, (word, m)) in self.words.iter_mut().zip(self.masks.iter_mut()).enumerate() {
            let bytes = n.saturating_sub(8 * i).min(8);
            *m = if bytes == 0 {
                0
            } else {
                u64::MAX >> (64 - 8 * bytes)
            };
            *word = u64::from_le_bytes(w[i]) & *m;
        }
        self.len = n as u8;
        true
    }
}

/// Gap slots ([`Gaps::slot`]) of one object.
const GAP_SLOTS: usize = 2 * GAP_KEYS;

/// The values kept per gap slot of the event object: two per slot, since the events that
/// share a key's layout often alternate two values (`cpu_op` and `cuda_runtime` under `"cat"`,
/// two threads under `"tid"`). A value's index ([`Item::lit`]) is `2 * slot + way`.
pub struct Lits {
    at: [[Lit; 2]; GAP_SLOTS],
    /// Which of the two last matched or was learned, per slot.
    recent: [u8; GAP_SLOTS],
    /// The interned id of each kept string, once an event applied it (`EMPTY`: not yet).
    ids: [[Cell<StrId>; 2]; GAP_SLOTS],
    /// Values read since the last match, per slot.
    misses: [u8; GAP_SLOTS],
    /// Values still to read without trying the kept ones, per slot: a slot whose values vary
    /// (`External id`, most names) costs a comparison and a copy per event for nothing.
    skip: [u8; GAP_SLOTS],
}

/// Misses in a row after which a slot's values are read without trying the kept ones for
/// [`LIT_REST`] events.
const LIT_MISSES: u8 = 4;
/// See [`LIT_MISSES`].
const LIT_REST: u8 = 32;

impl Default for Lits {
    fn default() -> Self {
        Lits {
            at: [[Lit::default(); 2]; GAP_SLOTS],
            recent: [0; GAP_SLOTS],
            ids: std::array::from_fn(|_| [Cell::new(StrId::EMPTY), Cell::new(StrId::EMPTY)]),
            misses: [0; GAP_SLOTS],
            skip: [0; GAP_SLOTS],
        }
    }
}

impl Lits {
    /// Whether the value at `slot` is to be tried against the kept ones (and kept); false
    /// while the slot rests.
    #[inline(always)]
    pub fn wanted(&mut self, slot: u8) -> bool {
        match self.skip.get_mut(usize::from(slot)) {
            Some(0) => true,
            Some(n) => {
                *n -= 1;
                false
            }
            None => false,
        }
    }

    /// The kept value of `slot` that `b` holds at `j`: its end, value and index.
    #[inline(always)]
    pub fn matching(&mut self, slot: u8, b: &[u8], j: usize) -> Option<(usize, Val, u8)> {
        let s = usize::from(slot);
        let (two, recent) = (self.at.get(s)?, self.recent.get_mut(s)?);
        let first = *recent & 1;
        let (e, v, way) = match two.get(usize::from(first))?.at(b, j) {
            Some((e, v)) => (e, v, first),
            None => {
                let (e, v) = two.get(usize::from(first ^ 1))?.at(b, j)?;
                *recent ^= 1;
                (e, v, first ^ 1)
            }
        };
        if let Some(m) = self.misses.get_mut(s) {
            *m = 0;
        }
        Some((e, v, (2 * slot) | way))
    }

    /// The id cell of value `lit`'s string.
    #[inline(always)]
    pub fn id(&self, lit: u8) -> Option<&Cell<StrId>> {
        let l = usize::from(lit);
        self.ids.get(l / 2)?.get(l & 1)
    }

    /// Keeps the value read at `b[j..e]` in `slot`, in place of the one that did not match
    /// last; its index, or [`NO_SLOT`] when not kept.
    pub fn learn(&mut self, slot: u8, b: &[u8], j: usize, e: usize, v: Val) -> u8 {
        let s = usize::from(slot);
        let (Some(recent), Some(misses), Some(skip)) = (
            self.recent.get_mut(s),
            self.misses.get_mut(s),
            self.skip.get_mut(s),
        ) else {
            return NO_SLOT;
        };
        *misses += 1;
        if *misses >= LIT_MISSES {
            *misses = 0;
            *skip = LIT_REST;
        }
        *recent ^= 1;
        let lit = (2 * slot) | (*recent & 1);
        if let Some(id) = self.id(lit) {
            id.set(StrId::EMPTY);
        }
        let l = usize::from(lit);
        let kept = self
            .at
            .get_mut(l / 2)
            .and_then(|two| two.get_mut(l & 1))
            .is_some_and(|x| x.learn(b, j, e, v));
        if kept { lit } else { NO_SLOT }
    }
}
