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
use super::learned::{Gaps, Lits, NO_SLOT};
use super::lex::{
    Val, arg_value, int_value, scalar, short_string, signed, string, time_ps, time_ps_long, ws,
};
use super::raw::{Field, RawEvent, id_from_str, key_from_str};
use super::shape::{Shapes, arg_of};
use super::time::us_text_to_ps;
use crate::model::{ArgsRef, Key, StrId};
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
    /// Whole events learned from the ones read here, tried first.
    pub shapes: Shapes,
    /// The last event's `args` entries as applied (key id, value span), for [`Shapes::learn`].
    keyed: Vec<(StrId, u32, u32)>,
}

/// One top-level field as read: its value, and the index of the kept value it was read from or
/// learned into (`2 * slot + way`, see [`Lits`]; [`NO_SLOT`]: read in full and not kept).
#[derive(Clone, Copy)]
struct Item {
    f: Field,
    lit: u8,
    v: Val,
    /// The value's text.
    s: u32,
    e: u32,
}

/// One `args` entry as read: its key's span, the learned gap the key was matched in
/// ([`Gaps::slot`], or [`NO_SLOT`]), its value.
#[derive(Clone, Copy)]
struct Entry {
    ks: u32,
    ke: u32,
    gap: u8,
    v: Val,
    /// The value's text.
    vs: u32,
    ve: u32,
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
            self.fields.push(Item {
                f,
                lit,
                v,
                s: j as u32,
                e: e as u32,
            });
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
            let (e, v) = arg_value(b, j, &mut self.text)?;
            self.entries.push(Entry {
                ks: key.0,
                ke: key.1,
                gap: if gap_ids { slot } else { NO_SLOT },
                v,
                vs: j as u32,
                ve: e as u32,
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
    if let Some(end) = plan.shapes.event(ld, ev, b, i) {
        return Some(end);
    }
    let end = plan.read(b, i)?;
    if !plan.supported() {
        return None;
    }
    ev.clear();
    let mut keyed = std::mem::take(&mut plan.keyed);
    keyed.clear();
    // The last `id` / `id2` string (see `RawEvent::id_text`).
    let mut id_span: Option<(u32, u32)> = None;
    for &Item { f, lit, v, .. } in &plan.fields {
        ev.fields += 1;
        match (f, v) {
            (Field::Ph, Val::Str(s, e)) => ev.ph = first(b, s, e),
            (Field::S, Val::Str(s, e)) => ev.scope = first(b, s, e),
            (Field::Bp, Val::Str(s, e)) => ev.bp_e = first(b, s, e) == b'e',
            (Field::Name, Val::Str(s, e)) => ev.name = lit_string(ld, &plan.lits, lit, b, s, e),
            (Field::Cat, Val::Str(s, e)) => ev.cat = lit_string(ld, &plan.lits, lit, b, s, e),
            (Field::Pid | Field::Tid, v) => {
                let k = match v {
                    Val::Whole(neg, mag) => Key::Int(signed(neg, mag)),
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
                ev.args = args(ld, plan, b, from, to, ev, &mut keyed);
            }
            (Field::Id | Field::Id2 | Field::BindId, v) => {
                let id = match v {
                    Val::Whole(neg, mag) => Some(signed(neg, mag) as u64),
                    Val::Str(s, e) => Some(id_from_str(span(b, s, e))),
                    _ => None,
                };
                if f == Field::BindId {
                    ev.set_bind_id(id);
                } else {
                    ev.set_id(id);
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
    // Times read by the fast readers only: a shape reads them with those.
    if plan
        .fields
        .iter()
        .all(|it| !matches!(it.f, Field::Ts | Field::Dur) || matches!(it.v, Val::Time(_)))
    {
        let fields = plan.fields.iter().map(|it| (it.f, it.s, it.e));
        plan.shapes.learn(fields, &keyed, ev, b, (i, end));
    }
    plan.keyed = keyed;
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
    keyed: &mut Vec<(StrId, u32, u32)>,
) -> ArgsRef {
    let entries = plan.entries.get(from as usize..to as usize).unwrap_or(&[]);
    // The entry count is known: the block goes straight into the arena.
    let mark = ld.b.args.begin_counted(entries.len() as u32);
    let mut spare = StrId::EMPTY;
    for (
        pos,
        &Entry {
            ks,
            ke,
            gap,
            v,
            vs,
            ve,
        },
    ) in entries.iter().enumerate()
    {
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
        let value = arg_of(ld, v, b, &plan.text);
        keyed.push((k, vs, ve));
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
