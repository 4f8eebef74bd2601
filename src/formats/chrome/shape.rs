//! Whole-event shapes: the event scanner's ([`super::scan`]) first try.
//!
//! A profiler writes every event of one kind with the same text around its values: Kineto's
//! `cpu_op` events differ only in `name`, `pid`/`tid`, `ts`, `dur` and the values of `args`;
//! `ph`, `cat`, the keys, the whitespace and the punctuation are the same bytes each time. After
//! the scanner has read an event field by field, [`Shapes::learn`] keeps it as a [`Shape`]: the
//! constant text between its values (with the values of `ph`, `cat`, `s`, `bp`, `flow_in` and
//! `flow_out`, which name the kind) as masked words, and the kind of each value between them
//! ([`Hole`]). The next event is first matched against the kept shapes: one masked comparison
//! per stretch of constant text, each value read by the reader that field's value is read with
//! in the field-by-field path, and the event applied from a copy of the shape's record with the
//! values filled in. A mismatch anywhere — other bytes, a value of another type or form — leaves
//! no trace, and the event is read field by field. Equal bytes read the same way from the same
//! state, and the values are read by the same functions, so a matched event is the event the
//! field-by-field read would give (the chunked-vs-serde tests and proptests compare whole
//! captures).

use super::apply::Loader;
use super::lex::{Val, arg_value, scalar, signed, time_ps, time_ps_long};
use super::raw::{Field, RawEvent, id_from_str, uint_value};
use crate::model::{ArgValue, Key, StrId};

/// Shapes kept per chunk parse (a Kineto trace has a handful of event kinds per thread).
const SHAPES: usize = 8;
/// Values of one shape, at most.
const MAX_HOLES: usize = 64;
/// Constant text of one shape, at most (bytes).
const MAX_TEXT: usize = 4096;

/// The kind of one value of a shape, which says how it is read and where it goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hole {
    /// `name`: a string, interned.
    Name,
    /// `pid` / `tid`: an integer within i64.
    Pid,
    Tid,
    /// `ts` / `dur` in their common form (the scanner's fast readers).
    Ts,
    Dur,
    /// `id` / `id2` / `bind_id`: an integer, a string or null.
    Id,
    BindId,
    /// The value of an `args` entry whose key was interned to this id: any arg value.
    Arg(StrId),
}

/// One value of a shape and the constant text after it.
#[derive(Clone, Copy)]
struct Step {
    hole: Hole,
    /// The stretch of constant text that follows the value: `Shape::text[off..off + len]`.
    off: u32,
    len: u32,
}

/// One learned event shape.
#[derive(Default)]
struct Shape {
    /// Length of the constant text before the first value (at `text[0..]`).
    head: u32,
    /// The values in text order, each with the constant text after it (the last one's runs to
    /// the closing `}`).
    steps: Vec<Step>,
    /// The constant stretches, each padded with zeros to a multiple of 16 bytes.
    text: Vec<u8>,
    /// The record of an event of this shape before its values: `ph`, `cat`, `s`, `bp`,
    /// `flow_in`, `flow_out` and the field count.
    base: RawEvent,
    /// Whether the event has an `args` object, and its entries.
    has_args: bool,
    args: u32,
    /// When it last matched or was learned (for eviction).
    used: u64,
}

/// Whether `b` holds `text[off..off + len]` at `p` (`text` padded to whole 16-byte blocks).
/// Most stretches fit one block: it is compared first, the rest (if any) block by block.
#[inline(always)]
fn same(b: &[u8], p: usize, text: &[u8], off: usize, len: usize) -> bool {
    let (Some(x), Some(y)) = (b.get(p..p + 16), text.get(off..off + 16)) else {
        return b.get(p..p + len) == text.get(off..off + len);
    };
    let want = (1u32 << len.min(16)) - 1;
    if equal16(x, y) & want != want {
        return false;
    }
    let mut k = 16;
    while k < len {
        let (Some(x), Some(y)) = (b.get(p + k..p + k + 16), text.get(off + k..off + k + 16)) else {
            return b.get(p + k..p + len) == text.get(off + k..off + len);
        };
        let want = (1u32 << (len - k).min(16)) - 1;
        if equal16(x, y) & want != want {
            return false;
        }
        k += 16;
    }
    true
}

/// Bits (one per byte, lowest first) of the bytes equal in `x` and `y`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn equal16(x: &[u8], y: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8};
    // Both are 16-byte slices where they are called from: the check folds away.
    assert!(x.len() >= 16 && y.len() >= 16);
    // SAFETY: SSE2 is part of every x86_64 CPU; each load reads 16 bytes, which both slices
    // hold (asserted above); unaligned loads.
    unsafe {
        let a = _mm_loadu_si128(x.as_ptr().cast());
        let b = _mm_loadu_si128(y.as_ptr().cast());
        _mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) as u32
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn equal16(x: &[u8], y: &[u8]) -> u32 {
    x.iter()
        .zip(y)
        .take(16)
        .enumerate()
        .fold(0, |m, (i, (a, b))| m | (u32::from(a == b) << i))
}

/// A value read in the match phase that the apply phase interns or writes to the arena.
#[derive(Clone, Copy)]
struct Deferred {
    hole: Hole,
    v: Val,
}

/// The shapes learned in one chunk parse, and the matcher's reused buffers.
#[derive(Default)]
pub struct Shapes {
    list: Vec<Shape>,
    /// The shape that matched after each pair of shapes last time (`u8::MAX`: none yet),
    /// indexed by the two shapes that matched last.
    next: [[u8; SHAPES]; SHAPES],
    /// The shapes that matched last and the one before it.
    last: u8,
    prev: u8,
    clock: u64,
    deferred: Vec<Deferred>,
    /// Compact JSON of nested arg values of the event being matched.
    text: Vec<u8>,
    /// The constant stretches of the event being learned (reused).
    cuts: Vec<(usize, usize)>,
    /// Events matched, and learned (for tests).
    pub hits: u64,
    pub learned: u64,
}

impl Shapes {
    /// Reads and applies the event at `i` (its `{`) when it has a learned shape: its end, or
    /// `None` with no side effect.
    #[inline]
    pub fn event(
        &mut self,
        ld: &mut Loader<'_>,
        ev: &mut RawEvent,
        b: &[u8],
        i: usize,
    ) -> Option<usize> {
        let n = self.list.len();
        if n == 0 {
            return None;
        }
        let (prev, last) = (usize::from(self.prev), usize::from(self.last));
        let guess = usize::from(*self.next.get(prev)?.get(last)?);
        let mut found = None;
        if guess < n
            && let Some(end) = self.read(guess, ev, b, i)
        {
            found = Some((guess, end));
        } else {
            for s in (0..n).filter(|&s| s != guess) {
                if let Some(end) = self.read(s, ev, b, i) {
                    found = Some((s, end));
                    break;
                }
            }
        }
        let (s, end) = found?;
        if let Some(x) = self.next.get_mut(prev).and_then(|r| r.get_mut(last)) {
            *x = s as u8;
        }
        self.prev = self.last;
        self.last = s as u8;
        self.clock += 1;
        self.hits += 1;
        let shape = self.list.get_mut(s)?;
        shape.used = self.clock;
        self.apply(s, ld, ev, b);
        Some(end)
    }

    /// Match phase: fills `ev` with shape `s`'s record and the values that need no loader,
    /// and `deferred` with the rest; the event's end, or `None` where it differs.
    #[inline(always)]
    fn read(&mut self, s: usize, ev: &mut RawEvent, b: &[u8], i: usize) -> Option<usize> {
        let shape = self.list.get(s)?;
        let text = shape.text.as_slice();
        if !same(b, i, text, 0, shape.head as usize) {
            return None;
        }
        self.deferred.clear();
        self.text.clear();
        *ev = shape.base;
        let mut p = i + shape.head as usize;
        for &Step { hole, off, len } in &shape.steps {
            let e = match hole {
                Hole::Ts | Hole::Dur => {
                    let (e, ps) = if hole == Hole::Ts {
                        time_ps_long(b, p)?
                    } else {
                        time_ps(b, p)?
                    };
                    if hole == Hole::Ts {
                        ev.set_ts(Some(Ok(ps)));
                    } else {
                        ev.set_dur(Some(Ok(ps)));
                    }
                    e
                }
                Hole::Pid | Hole::Tid => {
                    let (e, v) = scalar(b, p)?;
                    let (neg, mag) = whole(b, v)?;
                    if !neg && i64::try_from(mag).is_err() {
                        return None;
                    }
                    let k = Some(Key::Int(signed(neg, mag)));
                    if hole == Hole::Pid {
                        ev.pid = k;
                    } else {
                        ev.tid = k;
                    }
                    e
                }
                Hole::Id | Hole::BindId => {
                    let (e, v) = scalar(b, p)?;
                    let id = match v {
                        Val::Str(s, e) => Some(id_from_str(
                            b.get(s as usize..e as usize)
                                .and_then(|t| std::str::from_utf8(t).ok())?,
                        )),
                        Val::Null => None,
                        v => {
                            let (neg, mag) = whole(b, v)?;
                            Some(signed(neg, mag) as u64)
                        }
                    };
                    if hole == Hole::Id {
                        ev.set_id(id);
                    } else {
                        ev.set_bind_id(id);
                    }
                    e
                }
                Hole::Name => {
                    let (e, v) = scalar(b, p)?;
                    if !matches!(v, Val::Str(..)) {
                        return None;
                    }
                    self.deferred.push(Deferred { hole, v });
                    e
                }
                Hole::Arg(_) => {
                    let (e, v) = arg_value(b, p, &mut self.text)?;
                    self.deferred.push(Deferred { hole, v });
                    e
                }
            };
            if !same(b, e, text, off as usize, len as usize) {
                return None;
            }
            p = e + len as usize;
        }
        Some(p)
    }

    /// Apply phase: interns the deferred strings and writes the args block, in text order.
    #[inline(always)]
    fn apply(&self, s: usize, ld: &mut Loader<'_>, ev: &mut RawEvent, b: &[u8]) {
        let Some(shape) = self.list.get(s) else {
            return;
        };
        let mut mark = None;
        for d in &self.deferred {
            match (d.hole, d.v) {
                (Hole::Name, Val::Str(s, e)) => {
                    let t = b.get(s as usize..e as usize).unwrap_or(&[]);
                    ev.name = ld.cache.intern_bytes(&mut ld.b.strings, t);
                }
                (Hole::Arg(k), v) => {
                    if mark.is_none() {
                        mark = Some(ld.b.args.begin_counted(shape.args));
                    }
                    let value = arg_of(ld, v, b, &self.text);
                    ev.facts.note(k, ld.k.correlation, ld.k.stream, value);
                    ld.b.args.push_counted(k, value);
                }
                _ => {}
            }
        }
        if shape.has_args {
            let m = mark.unwrap_or_else(|| ld.b.args.begin_counted(0));
            ev.args = ld.b.args.finish_counted(m);
        }
    }

    /// Keeps the event just read field by field as a shape. `fields`: its top-level fields in
    /// text order (field, value start, value end); `entries`: its `args` entries (key id,
    /// value start, value end); `ev`: the record it was applied as; `i..end`: its text. Its
    /// `ts`/`dur`, if any, were read by the fast readers (the caller checks).
    pub fn learn(
        &mut self,
        fields: impl Iterator<Item = (Field, u32, u32)>,
        entries: &[(StrId, u32, u32)],
        ev: &RawEvent,
        b: &[u8],
        (i, end): (usize, usize),
    ) {
        if ev.ph == b'C' {
            // Counters name their series with a string id's text: left to the full read.
            return;
        }
        let mut seen = 0u32;
        let mut holes: [(u32, u32, Hole); MAX_HOLES] = [(0, 0, Hole::Name); MAX_HOLES];
        let mut n = 0;
        let mut has_args = false;
        let mut push = |h: (u32, u32, Hole)| -> Option<()> {
            *holes.get_mut(n)? = h;
            n += 1;
            Some(())
        };
        for (f, s, e) in fields {
            let bit = 1u32 << (f as u32);
            if seen & bit != 0 {
                return; // a repeated key: left to the full read
            }
            seen |= bit;
            let hole = match f {
                Field::Ph | Field::S | Field::Bp | Field::Cat | Field::FlowIn | Field::FlowOut => {
                    continue;
                }
                Field::Name => Hole::Name,
                Field::Pid | Field::Tid => {
                    // Integers only (a string pid is interned as a key).
                    if !matches!(b.get(s as usize), Some(b'-' | b'0'..=b'9')) {
                        return;
                    }
                    if f == Field::Pid {
                        Hole::Pid
                    } else {
                        Hole::Tid
                    }
                }
                Field::Ts => Hole::Ts,
                Field::Dur => Hole::Dur,
                Field::Id | Field::Id2 => Hole::Id,
                Field::BindId => Hole::BindId,
                Field::Args => {
                    if b.get(s as usize) != Some(&b'{') {
                        return;
                    }
                    has_args = true;
                    for &(k, vs, ve) in entries {
                        if push((vs, ve, Hole::Arg(k))).is_none() {
                            return;
                        }
                    }
                    continue;
                }
                Field::Other => return,
            };
            if push((s, e, hole)).is_none() {
                return;
            }
        }
        let holes = &holes[..n];
        // The constant stretches: before, between and after the values.
        let mut cuts = std::mem::take(&mut self.cuts);
        cuts.clear();
        let mut p = i;
        for &(s, e, _) in holes {
            let s = s as usize;
            if s < p {
                self.cuts = cuts;
                return;
            }
            cuts.push((p, s));
            p = e as usize;
        }
        if end < p {
            self.cuts = cuts;
            return;
        }
        cuts.push((p, end));
        if cuts.iter().map(|&(a, z)| z - a).sum::<usize>() <= MAX_TEXT {
            self.keep(&cuts, holes, entries.len() as u32, has_args, ev, b);
        }
        self.cuts = cuts;
    }

    /// Keeps a shape of constant text `cuts` (byte ranges of `b`) and values `holes`.
    fn keep(
        &mut self,
        cuts: &[(usize, usize)],
        holes: &[(u32, u32, Hole)],
        args: u32,
        has_args: bool,
        ev: &RawEvent,
        b: &[u8],
    ) {
        // Reuse the least recently used shape's buffers once all are taken.
        let slot = if self.list.len() < SHAPES {
            self.list.push(Shape::default());
            self.list.len() - 1
        } else {
            let Some(lru) = (0..self.list.len()).min_by_key(|&s| self.list[s].used) else {
                return;
            };
            for x in self.next.iter_mut().flatten() {
                if usize::from(*x) == lru {
                    *x = u8::MAX;
                }
            }
            lru
        };
        self.clock += 1;
        self.learned += 1;
        let sh = &mut self.list[slot];
        sh.steps.clear();
        sh.text.clear();
        for (c, &(a, z)) in cuts.iter().enumerate() {
            let t = b.get(a..z).unwrap_or(&[]);
            let off = sh.text.len() as u32;
            sh.text.extend_from_slice(t);
            sh.text.resize(sh.text.len().next_multiple_of(16), 0);
            match c.checked_sub(1).and_then(|h| holes.get(h)) {
                Some(&(_, _, hole)) => sh.steps.push(Step {
                    hole,
                    off,
                    len: t.len() as u32,
                }),
                None => sh.head = t.len() as u32,
            }
        }
        sh.base = RawEvent::default();
        sh.base.clear();
        sh.base.ph = ev.ph;
        sh.base.cat = ev.cat;
        sh.base.scope = ev.scope;
        sh.base.bp_e = ev.bp_e;
        sh.base.flow_in = ev.flow_in;
        sh.base.flow_out = ev.flow_out;
        sh.base.fields = ev.fields;
        sh.has_args = has_args;
        sh.args = args;
        sh.used = self.clock;
        self.prev = self.last;
        self.last = slot as u8;
    }
}

/// An integer value read by [`scalar`] as serde reads it, or `None` for any other value.
#[inline(always)]
fn whole(b: &[u8], v: Val) -> Option<(bool, u64)> {
    match v {
        Val::Whole(neg, mag) => Some((neg, mag)),
        Val::Int(s, e) => super::lex::int_value(b, s, e),
        _ => None,
    }
}

/// The arena value of an `args` value read by [`arg_value`] (`text`: its nested values).
#[inline(always)]
pub(super) fn arg_of(ld: &mut Loader<'_>, v: Val, b: &[u8], text: &[u8]) -> ArgValue {
    match v {
        Val::Str(s, e) => ArgValue::Str(ld.cache.intern_bytes(
            &mut ld.b.strings,
            b.get(s as usize..e as usize).unwrap_or(&[]),
        )),
        Val::Whole(false, mag) => uint_value(mag),
        Val::Whole(true, mag) => ArgValue::I64(signed(true, mag)),
        Val::Float(f) => ArgValue::F64(f),
        Val::True => ArgValue::Bool(true),
        Val::False => ArgValue::Bool(false),
        Val::Json(s, e) => {
            let t = text.get(s as usize..e as usize).unwrap_or(&[]);
            ArgValue::Json(ld.cache.intern_bytes(&mut ld.b.strings, t))
        }
        // `arg_value` resolves every number; the rest is null.
        Val::Null | Val::Int(..) | Val::Num(..) | Val::Args(..) | Val::Time(_) => ArgValue::Null,
    }
}
