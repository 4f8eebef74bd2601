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
//! time.

use super::args::{cached_key, uint_value};
use super::event::{Loader, RawEvent};
use super::seed::{Field, id_from_str, key_from_str};
use super::time::us_text_to_ps;
use crate::model::{ArgValue, ArgsRef, Key, StrId};

/// A scalar value, validated; spans are byte ranges of the input.
#[derive(Clone, Copy)]
enum Val {
    /// String content (no escapes, valid UTF-8).
    Str(u32, u32),
    /// Integer text (never `-0`, at most 20 digits); read by [`int_value`] where a field needs
    /// the value (phase 1 turns those into `Whole`).
    Int(u32, u32),
    /// An integer's value as serde reads it: (negative, magnitude).
    Whole(bool, u64),
    /// Number with a fraction or exponent: its text span.
    Num(u32, u32),
    /// An arg float, read by serde_json's own parser.
    Float(f64),
    True,
    False,
    Null,
    /// An `args` object: entries `[from, to)` of the plan.
    Args(u32, u32),
    /// A nested array/object written compactly into the plan's text buffer `[from, to)`.
    Json(u32, u32),
}

/// What phase 1 found; reused across events (no allocation once warm).
#[derive(Default)]
pub struct Plan {
    fields: Vec<(Field, Val)>,
    /// Args entries: key span, value.
    entries: Vec<(u32, u32, Val)>,
    /// Compact JSON text of nested arg values.
    text: Vec<u8>,
}

const MAX_DEPTH: u32 = 64;

#[inline]
fn ws(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
            break;
        }
        i += 1;
    }
    i
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Bytes of `w` that are `"`, `\`, a control character or non-ASCII, as high bits (exact for the
/// lowest such byte).
#[inline]
fn specials(w: u64) -> u64 {
    let quote = w ^ (ONES * u64::from(b'"'));
    let slash = w ^ (ONES * u64::from(b'\\'));
    let zq = quote.wrapping_sub(ONES) & !quote;
    let zs = slash.wrapping_sub(ONES) & !slash;
    let ctl = w.wrapping_sub(ONES * 0x20) & !w;
    (zq | zs | ctl | w) & HIGHS
}

/// Scans a string whose opening quote is at `i - 1`; returns the index of the closing quote.
/// `None` for escapes, control characters, invalid UTF-8 or a missing end.
#[inline(always)]
fn string(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    let mut ascii = true;
    loop {
        if let Some(chunk) = b.get(i..i + 8) {
            let mut a = [0u8; 8];
            a.copy_from_slice(chunk);
            let m = specials(u64::from_le_bytes(a));
            if m == 0 {
                i += 8;
                continue;
            }
            i += (m.trailing_zeros() / 8) as usize;
        }
        let c = *b.get(i)?;
        match c {
            b'"' => break,
            b'\\' | 0..=0x1f => return None,
            0x80.. => {
                ascii = false;
                i += 1;
            }
            _ => i += 1,
        }
    }
    if !ascii {
        std::str::from_utf8(b.get(start..i)?).ok()?;
    }
    Some(i)
}

/// Scans a number at `i`; `(end, Val)`. Only the text is checked here: integer values are
/// read by [`int_value`] where a field needs them (`ts`/`dur` keep their text).
#[inline(always)]
fn number(b: &[u8], i: usize) -> Option<(usize, Val)> {
    let mut j = i;
    let neg = b.get(j) == Some(&b'-');
    if neg {
        j += 1;
    }
    let d0 = j;
    while b.get(j).is_some_and(u8::is_ascii_digit) {
        j += 1;
    }
    let nd = j - d0;
    if nd == 0 || (nd > 1 && b.get(d0) == Some(&b'0')) {
        return None;
    }
    let mut float = false;
    if b.get(j) == Some(&b'.') {
        j += 1;
        let f0 = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j == f0 {
            return None;
        }
        float = true;
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        j += 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let e0 = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j == e0 {
            return None;
        }
        float = true;
    }
    // A number must end at a delimiter (serde rejects `12a`).
    if !matches!(
        b.get(j),
        Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
    ) {
        return None;
    }
    let (s, e) = (i as u32, j as u32);
    if float {
        return Some((j, Val::Num(s, e)));
    }
    // serde reads `-0` as the float -0.0 and integers past 64 bits as floats: leave to it.
    if (neg && nd == 1 && b.get(d0) == Some(&b'0')) || nd > 20 {
        return None;
    }
    Some((j, Val::Int(s, e)))
}

/// The value of an integer's text as serde reads it: `(negative, magnitude)`, `None` when serde
/// would read a float instead (beyond u64, or below i64::MIN).
#[inline]
fn int_value(b: &[u8], s: u32, e: u32) -> Option<(bool, u64)> {
    let t = b.get(s as usize..e as usize)?;
    let (neg, digits) = match t.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, t),
    };
    let mut mag: u64 = 0;
    for &c in digits {
        mag = mag
            .checked_mul(10)?
            .checked_add(u64::from(c.wrapping_sub(b'0')))?;
    }
    if neg && mag > 1 << 63 {
        return None;
    }
    Some((neg, mag))
}

#[inline(always)]
fn literal(b: &[u8], i: usize, word: &[u8], v: Val) -> Option<(usize, Val)> {
    if b.get(i..i + word.len())? == word {
        Some((i + word.len(), v))
    } else {
        None
    }
}

/// A scalar value at `i` (string, number, literal); arrays/objects → `None`.
#[inline(always)]
fn scalar(b: &[u8], i: usize) -> Option<(usize, Val)> {
    match *b.get(i)? {
        b'"' => {
            let e = string(b, i + 1)?;
            Some((e + 1, Val::Str((i + 1) as u32, e as u32)))
        }
        b'-' | b'0'..=b'9' => number(b, i),
        b't' => literal(b, i, b"true", Val::True),
        b'f' => literal(b, i, b"false", Val::False),
        b'n' => literal(b, i, b"null", Val::Null),
        _ => None,
    }
}

/// Writes the array/object at `i` compactly into `out` (the serde `JsonText` output for the
/// subset handled: strings without escapes, integers, literals); returns the end.
fn nested(b: &[u8], i: usize, out: &mut Vec<u8>, depth: u32) -> Option<usize> {
    if depth > MAX_DEPTH {
        return None;
    }
    let open = *b.get(i)?;
    let close = match open {
        b'[' => b']',
        b'{' => b'}',
        _ => return None,
    };
    out.push(open);
    let mut j = ws(b, i + 1);
    if b.get(j) == Some(&close) {
        out.push(close);
        return Some(j + 1);
    }
    loop {
        if open == b'{' {
            if b.get(j) != Some(&b'"') {
                return None;
            }
            let e = string(b, j + 1)?;
            out.extend_from_slice(b.get(j..=e)?);
            j = ws(b, e + 1);
            if b.get(j) != Some(&b':') {
                return None;
            }
            out.push(b':');
            j = ws(b, j + 1);
        }
        match *b.get(j)? {
            b'[' | b'{' => j = nested(b, j, out, depth + 1)?,
            _ => {
                let (e, v) = scalar(b, j)?;
                match v {
                    // Floats are re-printed by serde (`{:?}`): leave them to it.
                    Val::Num(..) => return None,
                    Val::Int(s, e) => {
                        int_value(b, s, e)?;
                    }
                    _ => {}
                }
                out.extend_from_slice(b.get(j..e)?);
                j = e;
            }
        }
        j = ws(b, j);
        match *b.get(j)? {
            b',' => {
                out.push(b',');
                j = ws(b, j + 1);
            }
            c if c == close => {
                out.push(close);
                return Some(j + 1);
            }
            _ => return None,
        }
    }
}

impl Plan {
    /// Phase 1: validates the event object at `i` (`{`); returns its end.
    fn read(&mut self, b: &[u8], i: usize) -> Option<usize> {
        self.fields.clear();
        self.entries.clear();
        self.text.clear();
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
            let ke = string(b, j + 1)?;
            let f = Field::from_key(b.get(j + 1..ke)?);
            j = ws(b, ke + 1);
            if b.get(j) != Some(&b':') {
                return None;
            }
            j = ws(b, j + 1);
            let (e, v) = if f == Field::Args && b.get(j) == Some(&b'{') {
                self.args(b, j)?
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
            Field::Ts | Field::Dur => matches!(v, Val::Int(..) | Val::Num(..)),
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

/// serde_json's own reading of a float's text.
fn float(b: &[u8], s: u32, e: u32) -> Option<f64> {
    serde_json::from_slice::<f64>(b.get(s as usize..e as usize)?).ok()
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
            (Field::Ts | Field::Dur, Val::Int(s, e) | Val::Num(s, e)) => {
                let t = Some(us_text_to_ps(span(b, s, e)).ok_or(()));
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
            Val::Null | Val::Int(..) | Val::Num(..) | Val::Args(..) => ArgValue::Null,
        };
        ev.facts.note(k, ld.k.correlation, ld.k.stream, value);
        ld.b.args.push(k, value);
    }
    ld.b.args.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specials_finds_the_first() {
        for (s, at) in [
            (&b"abcdefgh"[..], None),
            (b"abc\"efgh", Some(3)),
            (b"a\\cdefgh", Some(1)),
            (b"abcdefg\n", Some(7)),
            (b"\xc3\xa9cdefgh", Some(0)),
            (b"ab\x7fdefgh", None),
        ] {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            let m = specials(u64::from_le_bytes(a));
            let got = (m != 0).then(|| (m.trailing_zeros() / 8) as usize);
            assert_eq!(got, at, "{s:?}");
        }
    }

    #[test]
    fn strings_and_numbers() {
        let b = b"\"plain text here\" \"caf\xc3\xa9 au lait, longer!\"";
        assert_eq!(string(b, 1), Some(16));
        assert_eq!(string(b, 19), Some(b.len() - 1));
        assert!(string(br#""esc\"x""#, 1).is_none());
        assert!(string(b"\"bad\xff utf8 here\"", 1).is_none());
        assert!(string(b"\"ctl\x01\"", 1).is_none());
        assert!(string(b"\"no end", 1).is_none());
        assert!(matches!(number(b"12,", 0), Some((2, Val::Int(0, 2)))));
        assert_eq!(int_value(b"-7}", 0, 2), Some((true, 7)));
        assert!(matches!(number(b"1.5e3 ", 0), Some((5, Val::Num(0, 5)))));
        assert!(number(b"-0,", 0).is_none());
        assert!(number(b"01,", 0).is_none());
        assert!(number(b"1.,", 0).is_none());
        assert!(matches!(
            number(b"18446744073709551616,", 0),
            Some((20, Val::Int(0, 20)))
        ));
        assert_eq!(int_value(b"18446744073709551616", 0, 20), None);
        assert_eq!(
            int_value(b"18446744073709551615", 0, 20),
            Some((false, u64::MAX))
        );
        assert_eq!(
            int_value(b"-9223372036854775808", 0, 20),
            Some((true, 1 << 63))
        );
        assert_eq!(int_value(b"-9223372036854775809", 0, 20), None);
        assert!(number(b"123456789012345678901,", 0).is_none());
        assert!(number(b"12a", 0).is_none());
    }

    #[test]
    fn nested_is_compact() {
        let mut out = Vec::new();
        let t = b"[[1, 2], [], {\"a\" : [true,null], \"b\":\"x y\"}, -3] ";
        let e = nested(t, 0, &mut out, 1).unwrap();
        assert_eq!(e, t.len() - 1);
        assert_eq!(out, br#"[[1,2],[],{"a":[true,null],"b":"x y"},-3]"#);
        out.clear();
        assert!(nested(b"[1.5]", 0, &mut out, 1).is_none());
        assert!(nested(b"[1,]", 0, &mut out, 1).is_none());
        assert!(nested(b"{\"a\":1", 0, &mut out, 1).is_none());
    }
}

/// The scanner against serde on generated events full of edge cases: the chunked load (scanner
/// first, serde for what it declines) must build exactly the capture of the sequential serde
/// load, or both must decline/fail alike.
#[cfg(test)]
mod equivalence {
    use crate::formats::Progress;
    use crate::formats::chrome::{load_bytes, load_bytes_chunked};
    use crate::model::SourceInfo;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("0".to_string()),
            Just("-0".to_string()),
            Just("-7".to_string()),
            Just("1.5".to_string()),
            Just("2e3".to_string()),
            Just("-1.25E-2".to_string()),
            Just("18446744073709551615".to_string()),
            Just("18446744073709551616".to_string()),
            Just("9223372036854775808".to_string()),
            Just("-9223372036854775808".to_string()),
            Just("-9223372036854775809".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            Just("null".to_string()),
            Just("\"\"".to_string()),
            Just("\"x\"".to_string()),
            Just("\"42\"".to_string()),
            Just("\" 7 \"".to_string()),
            Just("\"0x1F\"".to_string()),
            Just("\"caf\u{e9} \u{2603}\"".to_string()),
            Just("\"tab\\there\"".to_string()),
            Just("\"q\\\"uote\"".to_string()),
            Just("[]".to_string()),
            Just("{}".to_string()),
            Just("[1, [2, \"a b\"], {\"k\": null}]".to_string()),
            Just("[1.5, 2]".to_string()),
            Just("{\"local\": 5}".to_string()),
            Just("[ [ [ ] ] ]".to_string()),
            "[a-z]{0,12}".prop_map(|s| format!("\"{s}\"")),
            any::<i64>().prop_map(|v| v.to_string()),
            any::<u64>().prop_map(|v| v.to_string()),
            (0u64..1 << 53, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b:03}")),
        ]
    }

    fn key() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            Just("ph"),
            Just("name"),
            Just("cat"),
            Just("pid"),
            Just("tid"),
            Just("ts"),
            Just("dur"),
            Just("id"),
            Just("id2"),
            Just("s"),
            Just("bp"),
            Just("bind_id"),
            Just("flow_in"),
            Just("flow_out"),
            Just("other"),
        ]
    }

    fn event() -> impl Strategy<Value = String> {
        let ph = prop_oneof![
            Just("X"),
            Just("B"),
            Just("E"),
            Just("i"),
            Just("C"),
            Just("s"),
            Just("f"),
            Just("b"),
            Just("M"),
            Just("")
        ];
        let extra = proptest::collection::vec((key(), value()), 0..4);
        let args = proptest::collection::vec(
            (
                prop_oneof![
                    Just("correlation"),
                    Just("External id"),
                    Just("name"),
                    Just("a"),
                    Just("b")
                ],
                value(),
            ),
            0..5,
        );
        let ws = prop_oneof![Just(""), Just(" "), Just("\n    ")];
        (ph, 0u64..1_000_000, 0u64..500, extra, proptest::option::of(args), ws).prop_map(
            |(ph, ts, dur, extra, args, w)| {
                let mut e = format!(
                    "{{{w}\"ph\":{w}\"{ph}\", \"name\": \"n{}\", \"cat\": \"kernel\", \"pid\": 1, \"tid\": {}, \"ts\": {ts}.{:03}, \"dur\": {dur}",
                    ts % 7,
                    ts % 3,
                    ts % 1000
                );
                for (k, v) in extra {
                    e.push_str(&format!(",{w}\"{k}\":{w}{v}"));
                }
                if let Some(args) = args {
                    e.push_str(", \"args\": {");
                    for (i, (k, v)) in args.iter().enumerate() {
                        if i > 0 {
                            e.push(',');
                        }
                        e.push_str(&format!("{w}\"{k}\": {v}"));
                    }
                    e.push('}');
                }
                e.push('}');
                e
            },
        )
    }

    /// A small real-shaped trace, mutated byte by byte below.
    fn base_trace() -> Vec<u8> {
        let mut v = Vec::new();
        crate::synth::kineto::write_kineto_trace(&mut v, 60, 11).unwrap();
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(160))]
        /// Differential fuzzing: damaged traces never panic either path, and whenever the chunked
        /// path (scanner first) accepts one, it builds exactly what serde builds.
        #[test]
        fn mutated_traces_agree_or_decline(
            edits in proptest::collection::vec(
                (any::<proptest::sample::Index>(), proptest::sample::select(
                    &b"\"\\{}[],:0-.eE+ \n\x01\x7f\xc3\xa9\xffatfnx"[..],
                )),
                1..6,
            )
        ) {
            let mut text = base_trace();
            for (at, byte) in edits {
                let i = at.index(text.len());
                text[i] = byte;
            }
            let p = Progress::default();
            let seq = load_bytes(&text, SourceInfo::default(), &p);
            if let Some(c) = load_bytes_chunked(&text, SourceInfo::default(), &p, 700, 2) {
                let s = seq.map_err(|e| e.to_string());
                prop_assert!(s.is_ok(), "chunks loaded, serde failed: {s:?}");
                if let Ok(s) = s {
                    let (a, b) = (format!("{s:?}"), format!("{c:?}"));
                    prop_assert!(a == b, "chunked capture differs");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        #[test]
        fn scanner_builds_what_serde_builds(events in proptest::collection::vec(event(), 1..40)) {
            let text = format!("{{\"traceEvents\": [\n  {}\n]}}", events.join(",\n  "));
            let p = Progress::default();
            let seq = load_bytes(text.as_bytes(), SourceInfo::default(), &p);
            let par = load_bytes_chunked(text.as_bytes(), SourceInfo::default(), &p, 200, 2);
            match (seq, par) {
                (Ok(s), Some(c)) => prop_assert!(format!("{s:?}") == format!("{c:?}"), "{text}"),
                (Ok(_), None) => prop_assert!(false, "chunked path declined valid input: {text}"),
                (Err(_), None) => {}
                (Err(e), Some(_)) => prop_assert!(false, "serde failed ({e}) but chunks loaded: {text}"),
            }
        }
    }
}
