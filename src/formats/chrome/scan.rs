//! A hand-written scanner for the common shape of one trace event, used by the chunk-parallel
//! parse in front of serde.
//!
//! [`event`] reads one `{…}` event straight from the mapped bytes in two phases: it first
//! *validates* the whole object into a small plan (field kinds and byte spans; nested arg
//! values written as compact JSON into a side buffer) without touching the loader, then
//! *applies* the plan in text order with exactly the calls the serde seeds make (interning
//! order, args arena pushes, key cache, `correlation`). Anything outside the subset it knows —
//! escapes, control characters, floats inside nested values, `-0`, integers beyond 64 bits,
//! unexpected types, deep nesting — makes it return `None` before any side effect, and the caller
//! parses that event with serde. So the capture is byte-for-byte the one the serde path builds
//! (the chunked tests compare the `Debug` text of whole captures), only faster: no per-field
//! visitor dispatch, no `RawValue` round trip for `ts`/`dur`, string ends found eight bytes at a
//! time ([`super::lex`]).

use super::apply::Loader;
use super::intern::cached_key;
use super::lex::{
    Val, ends_number, float, int_value, nested, scalar, short_string, string, time_ps,
    time_ps_long, ws,
};
use super::raw::{Field, RawEvent, id_from_str, key_from_str, uint_value};
use super::time::us_text_to_ps;
use crate::model::{ArgValue, ArgsRef, Key, StrId};
use std::cell::Cell;

/// What phase 1 found; reused across events (no allocation once warm).
#[derive(Default)]
pub struct Plan {
    fields: Vec<Item>,
    /// Args entries.
    entries: Vec<Entry>,
    /// Compact JSON text of nested arg values.
    text: Vec<u8>,
    /// `ts`/`dur` values read in phase 1 (`Val::Time`).
    times: Vec<i128>,
    /// The text around each key of the event object, by position, as last read.
    top: Gaps,
    /// The same for the keys of `args`.
    arg: Gaps,
    /// Values read after the event object's gaps.
    lits: Lits,
}

/// One top-level field as read: its value, and the index of the kept value it was read from or
/// learned into (`2 * slot + way`, see [`Lits`]; [`NO_SLOT`]: read in full and not kept).
#[derive(Clone, Copy)]
struct Item {
    f: Field,
    lit: u8,
    v: Val,
}

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
struct Found {
    len: u8,
    key_at: u8,
    key_len: u8,
    field: Field,
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

/// An args entry whose key was read in full.
const NO_SLOT: u8 = u8::MAX;

/// One `args` entry as read: its key's span, the learned gap the key was matched in
/// ([`Gaps::slot`], or [`NO_SLOT`]), its value.
#[derive(Clone, Copy)]
struct Entry {
    ks: u32,
    ke: u32,
    gap: u8,
    v: Val,
}

/// The gaps learned at each key position of an object: two per position, since events of two
/// shapes often alternate (a runtime call and its flow start, a kernel and its flow end).
struct Gaps {
    at: [[Gap; 2]; GAP_KEYS],
    /// Which of the two last matched or was learned, per position.
    recent: [u8; GAP_KEYS],
    /// The interned id of each gap's key, once an event applied it (`EMPTY`: not yet); a match
    /// proves the key's bytes are the learned ones, so the id needs no lookup.
    ids: [[Cell<StrId>; 2]; GAP_KEYS],
    /// How many gaps were learned: the key positions read in full.
    learned: u64,
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
    fn slot(&self, k: usize) -> u8 {
        match self.recent.get(k) {
            Some(r) => (2 * k) as u8 | (r & 1),
            None => NO_SLOT,
        }
    }

    /// The id cell of `slot`'s key.
    #[inline(always)]
    fn id(&self, slot: u8) -> Option<&Cell<StrId>> {
        let s = usize::from(slot);
        self.ids.get(s / 2)?.get(s & 1)
    }

    /// The learned gap at position `k` that `b` holds at `at`.
    #[inline(always)]
    fn matching(&mut self, k: usize, b: &[u8], at: usize) -> Option<Found> {
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
    fn learn(
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
struct Lits {
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
    fn wanted(&mut self, slot: u8) -> bool {
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
    fn matching(&mut self, slot: u8, b: &[u8], j: usize) -> Option<(usize, Val, u8)> {
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
    fn id(&self, lit: u8) -> Option<&Cell<StrId>> {
        let l = usize::from(lit);
        self.ids.get(l / 2)?.get(l & 1)
    }

    /// Keeps the value read at `b[j..e]` in `slot`, in place of the one that did not match
    /// last; its index, or [`NO_SLOT`] when not kept.
    fn learn(&mut self, slot: u8, b: &[u8], j: usize, e: usize, v: Val) -> u8 {
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

/// Fields whose values [`Lits`] keeps: the ones that repeat across the events of one kind.
fn repeats(f: Field) -> bool {
    matches!(f, Field::Cat | Field::Pid | Field::Tid | Field::Name)
}

/// Reads the text before a key in full, from `at` — an object's `{` (`first`) or the end of its
/// previous value — to the key's opening quote: `Ok(quote)`, or `Err(end)` where the object
/// closes instead.
fn to_key(b: &[u8], at: usize, first: bool) -> Option<Result<usize, usize>> {
    let j = ws(b, if first { at + 1 } else { at });
    let q = match (*b.get(j)?, first) {
        (b'}', _) => return Some(Err(j + 1)),
        (b',', false) => ws(b, j + 1),
        (b'"', true) => j,
        _ => return None,
    };
    (b.get(q) == Some(&b'"')).then_some(Ok(q))
}

/// After a key's closing quote at `ke`: where its value starts (past `:` and whitespace).
fn to_value(b: &[u8], ke: usize) -> Option<usize> {
    let j = ws(b, ke + 1);
    (b.get(j) == Some(&b':')).then(|| ws(b, j + 1))
}

impl Plan {
    /// Gaps learned so far (key positions read in full), top level and in `args`.
    #[cfg(test)]
    fn learned(&self) -> (u64, u64) {
        (self.top.learned, self.arg.learned)
    }

    /// Phase 1: validates the event object at `i` (`{`); returns its end.
    fn read(&mut self, b: &[u8], i: usize) -> Option<usize> {
        self.fields.clear();
        self.entries.clear();
        self.text.clear();
        self.times.clear();
        if b.get(i) != Some(&b'{') {
            return None;
        }
        // `at`: where the text before the next key starts (the `{`, then each value's end).
        let mut at = i;
        for k in 0.. {
            let (j, f, slot) = match self.top.matching(k, b, at) {
                Some(g) => (ws(b, at + usize::from(g.len)), g.field, self.top.slot(k)),
                None => {
                    let q = match to_key(b, at, k == 0)? {
                        Ok(q) => q,
                        Err(end) => return Some(end),
                    };
                    let (ke, f) = match short_string(b, q + 1) {
                        Some((ke, w)) => (ke, Field::from_word(w)),
                        None => {
                            let ke = string(b, q + 1)?;
                            (ke, Field::from_key(b.get(q + 1..ke)?))
                        }
                    };
                    let j = to_value(b, ke)?;
                    let kept = self.top.learn(k, b, at, j, (q + 1, ke), f);
                    (j, f, if kept { self.top.slot(k) } else { NO_SLOT })
                }
            };
            let kept = repeats(f) && slot != NO_SLOT && self.lits.wanted(slot);
            let known = if kept {
                self.lits.matching(slot, b, j)
            } else {
                None
            };
            let (e, v, lit) = match known {
                Some(x) => x,
                None => {
                    let (e, v) = if f == Field::Args && b.get(j) == Some(&b'{') {
                        self.args(b, j)?
                    } else if let Some((e, ps)) = match f {
                        Field::Ts => time_ps_long(b, j),
                        Field::Dur => time_ps(b, j),
                        _ => None,
                    } {
                        self.times.push(ps);
                        (e, Val::Time(self.times.len() as u32 - 1))
                    } else {
                        scalar(b, j)?
                    };
                    // `ts`/`dur` keep their text (`us_text_to_ps`); skipped keys need no value.
                    let v = match (f, v) {
                        (Field::Ts | Field::Dur | Field::Other, v) => v,
                        (_, Val::Int(s, e)) => {
                            let (neg, mag) = int_value(b, s, e)?;
                            Val::Whole(neg, mag)
                        }
                        (_, v) => v,
                    };
                    let lit = if kept {
                        self.lits.learn(slot, b, j, e, v)
                    } else {
                        NO_SLOT
                    };
                    (e, v, lit)
                }
            };
            self.fields.push(Item { f, lit, v });
            at = e;
        }
        None
    }

    fn args(&mut self, b: &[u8], i: usize) -> Option<(usize, Val)> {
        let from = self.entries.len() as u32;
        // A second `args` object in one event may relearn a gap an earlier one's key was read
        // in: then no key of the event takes a gap's id (they go through the key cache).
        let gap_ids = from == 0;
        if !gap_ids {
            for e in &mut self.entries {
                e.gap = NO_SLOT;
            }
        }
        let mut at = i;
        for k in 0.. {
            let (j, key, slot) = match self.arg.matching(k, b, at) {
                Some(g) => {
                    let ks = at + usize::from(g.key_at);
                    (
                        ws(b, at + usize::from(g.len)),
                        (ks as u32, (ks + usize::from(g.key_len)) as u32),
                        self.arg.slot(k),
                    )
                }
                None => {
                    let q = match to_key(b, at, k == 0)? {
                        Ok(q) => q,
                        Err(end) => return Some((end, Val::Args(from, self.entries.len() as u32))),
                    };
                    let ke = string(b, q + 1)?;
                    let j = to_value(b, ke)?;
                    let kept = self.arg.learn(k, b, at, j, (q + 1, ke), Field::Other);
                    let slot = if kept { self.arg.slot(k) } else { NO_SLOT };
                    (j, ((q + 1) as u32, ke as u32), slot)
                }
            };
            let (e, v) = match *b.get(j)? {
                b'[' | b'{' => {
                    let t0 = self.text.len() as u32;
                    let e = nested(b, j, &mut self.text, 1)?;
                    (e, Val::Json(t0, self.text.len() as u32))
                }
                _ => match scalar(b, j)? {
                    (e, Val::Int(s, t)) => {
                        let (neg, mag) = int_value(b, s, t)?;
                        (e, Val::Whole(neg, mag))
                    }
                    (e, Val::Num(s, t)) => (e, Val::Float(float(b, s, t)?)),
                    other => other,
                },
            };
            self.entries.push(Entry {
                ks: key.0,
                ke: key.1,
                gap: if gap_ids { slot } else { NO_SLOT },
                v,
            });
            at = e;
        }
        None
    }

    /// Whether every field has a type the apply phase handles like serde (checked before any
    /// side effect; args entries were resolved in phase 1).
    fn supported(&self) -> bool {
        self.fields.iter().all(|&Item { f, v, .. }| match f {
            Field::Ph | Field::S | Field::Bp | Field::Name | Field::Cat => {
                matches!(v, Val::Str(..))
            }
            // serde interns pids/tids beyond i64 as text: leave those to it.
            Field::Pid | Field::Tid => match v {
                Val::Whole(neg, mag) => neg || i64::try_from(mag).is_ok(),
                Val::Str(..) => true,
                _ => false,
            },
            Field::Ts | Field::Dur => {
                matches!(
                    v,
                    Val::Int(..) | Val::Num(..) | Val::Whole(..) | Val::Time(..)
                )
            }
            Field::Args => matches!(v, Val::Args(..) | Val::Null),
            Field::Id | Field::Id2 | Field::BindId => {
                matches!(v, Val::Whole(..) | Val::Str(..) | Val::Null)
            }
            Field::FlowIn | Field::FlowOut => matches!(v, Val::True | Val::False),
            Field::Other => true,
        })
    }
}

fn bytes(b: &[u8], s: u32, e: u32) -> &[u8] {
    b.get(s as usize..e as usize).unwrap_or(&[])
}

fn span(b: &[u8], s: u32, e: u32) -> &str {
    // Validated in phase 1; an empty string otherwise (never reached).
    b.get(s as usize..e as usize)
        .and_then(|x| std::str::from_utf8(x).ok())
        .unwrap_or("")
}

fn int(neg: bool, mag: u64) -> i64 {
    if neg {
        (mag as i64).wrapping_neg()
    } else {
        mag as i64
    }
}

/// Parses the event at `i` (its `{`) into `ev` through `ld`'s interner and args arena, exactly as
/// `EventSeed` would; returns the end of the object, or `None` (with no side effect) when the
/// event is outside the handled subset.
pub fn event(
    ld: &mut Loader<'_>,
    plan: &mut Plan,
    ev: &mut RawEvent,
    b: &[u8],
    i: usize,
) -> Option<usize> {
    let end = plan.read(b, i)?;
    if !plan.supported() {
        return None;
    }
    ev.clear();
    // The last `id` / `id2` string (see `RawEvent::id_text`).
    let mut id_span: Option<(u32, u32)> = None;
    for &Item { f, lit, v } in &plan.fields {
        ev.fields += 1;
        match (f, v) {
            (Field::Ph, Val::Str(s, e)) => ev.ph = first(b, s, e),
            (Field::S, Val::Str(s, e)) => ev.scope = first(b, s, e),
            (Field::Bp, Val::Str(s, e)) => ev.bp_e = first(b, s, e) == b'e',
            (Field::Name, Val::Str(s, e)) => ev.name = lit_string(ld, &plan.lits, lit, b, s, e),
            (Field::Cat, Val::Str(s, e)) => ev.cat = lit_string(ld, &plan.lits, lit, b, s, e),
            (Field::Pid | Field::Tid, v) => {
                let k = match v {
                    Val::Whole(neg, mag) => Key::Int(int(neg, mag)),
                    Val::Str(s, e) => key_from_str(&mut ld.b.strings, span(b, s, e)),
                    _ => Key::Str(StrId::EMPTY),
                };
                if f == Field::Pid {
                    ev.pid = Some(k);
                } else {
                    ev.tid = Some(k);
                }
            }
            (
                Field::Ts | Field::Dur,
                v @ (Val::Int(..) | Val::Num(..) | Val::Whole(..) | Val::Time(_)),
            ) => {
                let t = Some(match v {
                    Val::Time(k) => plan.times.get(k as usize).copied().ok_or(()),
                    // `us_text_to_ps` reads at most i64::MAX µs.
                    Val::Whole(_, mag) if mag > i64::MAX as u64 => Err(()),
                    Val::Whole(neg, mag) => {
                        let ps = i128::from(mag) * 1_000_000;
                        Ok(if neg { -ps } else { ps })
                    }
                    Val::Int(s, e) | Val::Num(s, e) => us_text_to_ps(span(b, s, e)).ok_or(()),
                    _ => Err(()),
                });
                if f == Field::Ts {
                    ev.set_ts(t);
                } else {
                    ev.set_dur(t);
                }
            }
            (Field::Args, Val::Null) => {
                // A repeated `args` (as the serde seed): the earlier block is no one's.
                ld.b.args.drop_last(ev.args);
                ev.facts = Default::default();
                ev.args = ArgsRef::NONE;
            }
            (Field::Args, Val::Args(from, to)) => {
                ld.b.args.drop_last(ev.args);
                ev.facts = Default::default();
                ev.args = args(ld, plan, b, from, to, ev);
            }
            (Field::Id | Field::Id2 | Field::BindId, v) => {
                let id = match v {
                    Val::Whole(neg, mag) => Some(int(neg, mag) as u64),
                    Val::Str(s, e) => Some(id_from_str(span(b, s, e))),
                    _ => None,
                };
                if f == Field::BindId {
                    ev.bind_id = id;
                } else {
                    ev.id = id;
                    id_span = match v {
                        Val::Str(s, e) if e > s => Some((s, e)),
                        _ => None,
                    };
                }
            }
            (Field::FlowIn, v) => ev.flow_in = matches!(v, Val::True),
            (Field::FlowOut, v) => ev.flow_out = matches!(v, Val::True),
            _ => {}
        }
    }
    if ev.ph == b'C'
        && let Some((s, e)) = id_span
    {
        ev.id_text = ld.cache.intern_bytes(&mut ld.b.strings, bytes(b, s, e));
    }
    Some(end)
}

/// The id of string `b[s..e]`, read from or kept as value `lit`: the kept id once an event
/// interned it, else through the cache, as serde.
#[inline(always)]
fn lit_string(ld: &mut Loader<'_>, lits: &Lits, lit: u8, b: &[u8], s: u32, e: u32) -> StrId {
    let known = lits.id(lit);
    match known.map(Cell::get) {
        Some(id) if id != StrId::EMPTY => id,
        _ => {
            let id = ld.cache.intern_bytes(&mut ld.b.strings, bytes(b, s, e));
            if let Some(c) = known {
                c.set(id);
            }
            id
        }
    }
}

fn first(b: &[u8], s: u32, e: u32) -> u8 {
    if e > s {
        b.get(s as usize).copied().unwrap_or(0)
    } else {
        0
    }
}

/// `ArgsSeed::visit_map`: one arena block, key cache per position, `correlation` noted.
fn args(
    ld: &mut Loader<'_>,
    plan: &Plan,
    b: &[u8],
    from: u32,
    to: u32,
    ev: &mut RawEvent,
) -> ArgsRef {
    let entries = plan.entries.get(from as usize..to as usize).unwrap_or(&[]);
    // The entry count is known: the block goes straight into the arena.
    let mark = ld.b.args.begin_counted(entries.len() as u32);
    let mut spare = StrId::EMPTY;
    for (pos, &Entry { ks, ke, gap, v }) in entries.iter().enumerate() {
        // The key's id from its learned gap; else through the per-position cache, as serde.
        let known = plan.arg.id(gap);
        let k = match known.map(Cell::get) {
            Some(id) if id != StrId::EMPTY => id,
            _ => {
                let key = b.get(ks as usize..ke as usize).unwrap_or(&[]);
                let slot = match ld.key_cache.get_mut(pos) {
                    Some(s) => s,
                    None => &mut spare,
                };
                let id = cached_key(&mut ld.b.strings, slot, key);
                if let Some(c) = known {
                    c.set(id);
                }
                id
            }
        };
        let value = match v {
            Val::Str(s, e) => {
                ArgValue::Str(ld.cache.intern_bytes(&mut ld.b.strings, bytes(b, s, e)))
            }
            Val::Whole(false, mag) => uint_value(mag),
            Val::Whole(true, mag) => ArgValue::I64(int(true, mag)),
            Val::Float(f) => ArgValue::F64(f),
            Val::True => ArgValue::Bool(true),
            Val::False => ArgValue::Bool(false),
            Val::Json(s, e) => {
                let t = plan.text.get(s as usize..e as usize).unwrap_or(&[]);
                ArgValue::Json(ld.cache.intern_bytes(&mut ld.b.strings, t))
            }
            // Phase 1 resolves every number in args; the rest is null.
            Val::Null | Val::Int(..) | Val::Num(..) | Val::Args(..) | Val::Time(_) => {
                ArgValue::Null
            }
        };
        ev.facts.note(k, ld.k.correlation, ld.k.stream, value);
        ld.b.args.push_counted(k, value);
    }
    ld.b.args.finish_counted(mark)
}

#[cfg(test)]
mod tests {
    use super::Plan;

    #[test]
    fn repeated_layout_reads_through_gaps() {
        let one = br#"{
    "ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1102, "tid": 1262,
    "ts": 1712195496120962.029, "dur": 2.940,
    "args": {
      "External id": 1002367,"Ev Idx": 318
    }
  }"#;
        let text = [
            &one[..],
            b",\n  ",
            &one[..],
            b",\n  ",
            &one[..],
            &[b' '; 40],
        ]
        .concat();
        let mut plan = Plan::default();
        let mut i = 0;
        for _ in 0..3 {
            i = plan.read(&text, i).unwrap() + 4;
        }
        assert_eq!(plan.learned(), (8, 2));
    }

    #[test]
    fn two_alternating_layouts_are_both_kept() {
        let x = &br#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 10.5, "dur": 3, "args": {"correlation": 7}}"#[..];
        let s = &br#"{"ph": "s", "id": 7, "pid": 1, "tid": 2, "ts": 10.5, "cat": "ac2g", "name": "ac2g"}"#[..];
        let mut text = Vec::new();
        for _ in 0..4 {
            text.extend_from_slice(x);
            text.extend_from_slice(b", ");
            text.extend_from_slice(s);
            text.extend_from_slice(b", ");
        }
        text.extend_from_slice(&[b' '; 40]);
        let mut plan = Plan::default();
        let mut i = 0;
        while i + 40 < text.len() {
            i = plan.read(&text, i).unwrap() + 2;
        }
        // `ph` is shared; every other position of each layout is learned once.
        assert_eq!(plan.learned(), (8 + 6, 1));
    }

    #[test]
    fn a_changed_gap_is_read_in_full() {
        // The second event has one more space after `"ts":` (the gap matches, the space is
        // skipped after it), the third another key order (both its later positions relearned).
        let text = br#"{"ph": "X", "ts": 1, "dur": 2}, {"ph": "X", "ts":  1.5, "dur": 2}, {"ph": "X", "dur": 4, "ts": 3}                                        "#;
        let mut plan = Plan::default();
        let e1 = plan.read(text, 0).unwrap();
        let e2 = plan.read(text, e1 + 2).unwrap();
        assert_eq!(&text[e1 + 2..e2], br#"{"ph": "X", "ts":  1.5, "dur": 2}"#);
        assert_eq!(plan.times, [1_500_000, 2_000_000]);
        let e3 = plan.read(text, e2 + 2).unwrap();
        assert_eq!(&text[e2 + 2..e3], br#"{"ph": "X", "dur": 4, "ts": 3}"#);
        assert_eq!(plan.times, [4_000_000, 3_000_000]);
        assert_eq!(plan.learned(), (3 + 2, 0));
    }
}
