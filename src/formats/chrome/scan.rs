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
use super::lex::{Val, float, int_value, nested, scalar, short_string, string, time_ps, ws};
use super::raw::{Field, RawEvent, id_from_str, key_from_str, uint_value};
use super::time::us_text_to_ps;
use crate::model::{ArgValue, ArgsRef, Key, StrId};

/// What phase 1 found; reused across events (no allocation once warm).
#[derive(Default)]
pub struct Plan {
    fields: Vec<(Field, Val)>,
    /// Args entries: key span, value.
    entries: Vec<(u32, u32, Val)>,
    /// Compact JSON text of nested arg values.
    text: Vec<u8>,
    /// `ts`/`dur` values read in phase 1 (`Val::Time`).
    times: Vec<i128>,
}

impl Plan {
    /// Phase 1: validates the event object at `i` (`{`); returns its end.
    fn read(&mut self, b: &[u8], i: usize) -> Option<usize> {
        self.fields.clear();
        self.entries.clear();
        self.text.clear();
        self.times.clear();
        if b.get(i) != Some(&b'{') {
            return None;
        }
        let mut j = ws(b, i + 1);
        if b.get(j) == Some(&b'}') {
            return Some(j + 1);
        }
        loop {
            if b.get(j) != Some(&b'"') {
                return None;
            }
            let (ke, f) = match short_string(b, j + 1) {
                Some((ke, w)) => (ke, Field::from_word(w)),
                None => {
                    let ke = string(b, j + 1)?;
                    (ke, Field::from_key(b.get(j + 1..ke)?))
                }
            };
            j = ws(b, ke + 1);
            if b.get(j) != Some(&b':') {
                return None;
            }
            j = ws(b, j + 1);
            let (e, v) = if f == Field::Args && b.get(j) == Some(&b'{') {
                self.args(b, j)?
            } else if let (Field::Ts | Field::Dur, Some((e, ps))) = (f, time_ps(b, j)) {
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
            self.fields.push((f, v));
            j = ws(b, e);
            match *b.get(j)? {
                b',' => j = ws(b, j + 1),
                b'}' => return Some(j + 1),
                _ => return None,
            }
        }
    }

    fn args(&mut self, b: &[u8], i: usize) -> Option<(usize, Val)> {
        let from = self.entries.len() as u32;
        let mut j = ws(b, i + 1);
        if b.get(j) == Some(&b'}') {
            return Some((j + 1, Val::Args(from, from)));
        }
        loop {
            if b.get(j) != Some(&b'"') {
                return None;
            }
            let ke = string(b, j + 1)?;
            let key = ((j + 1) as u32, ke as u32);
            j = ws(b, ke + 1);
            if b.get(j) != Some(&b':') {
                return None;
            }
            j = ws(b, j + 1);
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
            self.entries.push((key.0, key.1, v));
            j = ws(b, e);
            match *b.get(j)? {
                b',' => j = ws(b, j + 1),
                b'}' => return Some((j + 1, Val::Args(from, self.entries.len() as u32))),
                _ => return None,
            }
        }
    }

    /// Whether every field has a type the apply phase handles like serde (checked before any
    /// side effect; args entries were resolved in phase 1).
    fn supported(&self) -> bool {
        self.fields.iter().all(|&(f, v)| match f {
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
    for &(f, v) in &plan.fields {
        ev.fields += 1;
        match (f, v) {
            (Field::Ph, Val::Str(s, e)) => ev.ph = first(b, s, e),
            (Field::S, Val::Str(s, e)) => ev.scope = first(b, s, e),
            (Field::Bp, Val::Str(s, e)) => ev.bp_e = first(b, s, e) == b'e',
            (Field::Name, Val::Str(s, e)) => {
                ev.name = ld.cache.intern_bytes(&mut ld.b.strings, bytes(b, s, e));
            }
            (Field::Cat, Val::Str(s, e)) => {
                ev.cat = ld.cache.intern_bytes(&mut ld.b.strings, bytes(b, s, e));
            }
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
                    ev.ts = t;
                } else {
                    ev.dur = t;
                }
            }
            (Field::Args, Val::Null) => {
                ev.facts = Default::default();
                ev.args = ArgsRef::NONE;
            }
            (Field::Args, Val::Args(from, to)) => {
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
    ld.b.args.begin();
    let entries = plan.entries.get(from as usize..to as usize).unwrap_or(&[]);
    let mut spare = StrId::EMPTY;
    for (pos, &(ks, ke, v)) in entries.iter().enumerate() {
        let key = b.get(ks as usize..ke as usize).unwrap_or(&[]);
        let slot = match ld.key_cache.get_mut(pos) {
            Some(s) => s,
            None => &mut spare,
        };
        let k = cached_key(&mut ld.b.strings, slot, key);
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
        ld.b.args.push(k, value);
    }
    ld.b.args.finish()
}
