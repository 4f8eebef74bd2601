//! `args` objects → [`ArgsArena`](crate::model::ArgsArena) blocks, and small value seeds shared
//! with the event and top-level seeds (interned strings, typed values, compact JSON text).

use super::event::Loader;
use crate::model::{ArgValue, ArgsRef, Interner, StrId};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt::{self, Write as _};

/// A direct-mapped cache in front of the interner: a fingerprint of a string's length and a few
/// of its bytes picks a slot; a hit is confirmed by comparing with the interned text. Saves hashing
/// long names (kernel signatures, call stacks) in full for every event.
pub struct StrCache {
    slots: Vec<(u64, StrId)>,
}

const CACHE_BITS: u32 = 12;

impl Default for StrCache {
    fn default() -> Self {
        StrCache {
            slots: vec![(0, StrId::EMPTY); 1 << CACHE_BITS],
        }
    }
}

#[inline]
fn word(b: &[u8]) -> u64 {
    let mut x = [0u8; 8];
    let n = b.len().min(8);
    x[..n].copy_from_slice(&b[..n]);
    u64::from_le_bytes(x)
}

impl StrCache {
    /// Interns `s` through the cache.
    #[inline]
    pub fn intern(&mut self, strings: &mut Interner, s: &str) -> StrId {
        let (fp, k) = fingerprint(s.as_bytes());
        if let Some(slot) = self.slots.get_mut(k) {
            if slot.0 == fp && strings.get(slot.1) == s {
                return slot.1;
            }
            let id = strings.intern(s);
            *slot = (fp, id);
            return id;
        }
        strings.intern(s)
    }

    /// Interns text given as bytes that the caller checked to be UTF-8 earlier: a cache hit is
    /// a byte comparison with an interned (hence valid) string, so only a miss validates again
    /// (lossily, should the bytes have changed meanwhile — a mapped file rewritten in place).
    #[inline]
    pub fn intern_bytes(&mut self, strings: &mut Interner, b: &[u8]) -> StrId {
        let (fp, k) = fingerprint(b);
        if let Some(slot) = self.slots.get_mut(k) {
            if slot.0 == fp && strings.get(slot.1).as_bytes() == b {
                return slot.1;
            }
            let id = strings.intern_lossy(b);
            *slot = (fp, id);
            return id;
        }
        strings.intern_lossy(b)
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

/// Interns a string value (borrowed or from serde's scratch buffer); numbers, bools and null
/// become their JSON text. Reports the string's address to the loader for progress.
pub struct StrSeed<'a> {
    /// Destination table.
    pub strings: &'a mut Interner,
    /// Look-up cache.
    pub cache: &'a mut StrCache,
    /// Set to the address of a borrowed string (progress offsets on mapped input).
    pub at: &'a mut usize,
}

impl<'de> DeserializeSeed<'de> for StrSeed<'_> {
    type Value = StrId;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<StrId, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrSeed<'_> {
    type Value = StrId;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<StrId, E> {
        *self.at = v.as_ptr() as usize;
        Ok(self.cache.intern(self.strings, v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<StrId, E> {
        Ok(self.cache.intern(self.strings, v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<StrId, E> {
        Ok(self.strings.intern_lossy(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<StrId, E> {
        let mut buf = String::new();
        let _ = write!(buf, "{v}");
        Ok(self.strings.intern(&buf))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<StrId, E> {
        let mut buf = String::new();
        let _ = write!(buf, "{v}");
        Ok(self.strings.intern(&buf))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<StrId, E> {
        let mut buf = String::new();
        let _ = write!(buf, "{v}");
        Ok(self.strings.intern(&buf))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<StrId, E> {
        Ok(self.strings.intern(if v { "true" } else { "false" }))
    }
    fn visit_unit<E: de::Error>(self) -> Result<StrId, E> {
        Ok(StrId::EMPTY)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<StrId, A::Error> {
        let mut buf = String::new();
        buf.push('[');
        let mut first = true;
        while a
            .next_element_seed(JsonText {
                out: &mut buf,
                first: &mut first,
            })?
            .is_some()
        {}
        buf.push(']');
        Ok(self.strings.intern(&buf))
    }
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<StrId, A::Error> {
        let mut buf = String::new();
        write_map(&mut buf, a)?;
        Ok(self.strings.intern(&buf))
    }
}

/// Interns an `args` key through a one-entry cache per key position: Kineto writes the same keys
/// in the same order for every event of a kind, so most keys are a short compare, not a hash.
pub struct CachedKeySeed<'a> {
    /// Destination table.
    pub strings: &'a mut Interner,
    /// The cache slot of this key position.
    pub slot: &'a mut StrId,
}

impl<'de> DeserializeSeed<'de> for CachedKeySeed<'_> {
    type Value = StrId;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<StrId, D::Error> {
        // Raw bytes: serde_json skips UTF-8 validation; only a cache miss validates (lossily).
        d.deserialize_bytes(self)
    }
}

impl<'de> Visitor<'de> for CachedKeySeed<'_> {
    type Value = StrId;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    #[inline]
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<StrId, E> {
        Ok(cached_key(self.strings, self.slot, v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<StrId, E> {
        self.visit_bytes(v.as_bytes())
    }
}

/// Interns an `args` key through its position's one-entry cache (see [`CachedKeySeed`]).
#[inline]
pub fn cached_key(strings: &mut Interner, slot: &mut StrId, key: &[u8]) -> StrId {
    if strings.get(*slot).as_bytes() == key {
        return *slot;
    }
    let id = strings.intern_lossy(key);
    *slot = id;
    id
}

/// An unsigned JSON integer as an arg value: `I64` when it fits, else `U64`.
#[inline]
pub fn uint_value(v: u64) -> ArgValue {
    match i64::try_from(v) {
        Ok(i) => ArgValue::I64(i),
        Err(_) => ArgValue::U64(v),
    }
}

/// Writes a value as compact JSON text onto `out`, preceded by a comma unless `first`.
pub struct JsonText<'a> {
    /// Output text.
    pub out: &'a mut String,
    /// True before the first element of the enclosing array/object.
    pub first: &'a mut bool,
}

impl JsonText<'_> {
    fn sep(&mut self) {
        if !*self.first {
            self.out.push(',');
        }
        *self.first = false;
    }
}

/// Appends `s` as a JSON string literal.
pub fn write_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_map<'de, A: MapAccess<'de>>(out: &mut String, mut a: A) -> Result<(), A::Error> {
    out.push('{');
    let mut first = true;
    while let Some(k) = a.next_key::<KeyText>()? {
        if !first {
            out.push(',');
        }
        first = false;
        match k {
            KeyText::Borrowed(s) => write_json_str(out, s),
            KeyText::Owned(s) => write_json_str(out, &s),
        }
        out.push(':');
        let mut inner_first = true;
        a.next_value_seed(JsonText {
            out,
            first: &mut inner_first,
        })?;
    }
    out.push('}');
    Ok(())
}

/// An object key inside nested JSON: borrowed when possible (allocates only for keys with escapes
/// read from a stream, which happens only in nested arg objects).
enum KeyText<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl<'de> de::Deserialize<'de> for KeyText<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyText<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(KeyText::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(KeyText::Owned(v.to_owned()))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> DeserializeSeed<'de> for JsonText<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for JsonText<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(mut self, v: &str) -> Result<(), E> {
        self.sep();
        write_json_str(self.out, v);
        Ok(())
    }
    fn visit_u64<E: de::Error>(mut self, v: u64) -> Result<(), E> {
        self.sep();
        let _ = write!(self.out, "{v}");
        Ok(())
    }
    fn visit_i64<E: de::Error>(mut self, v: i64) -> Result<(), E> {
        self.sep();
        let _ = write!(self.out, "{v}");
        Ok(())
    }
    fn visit_f64<E: de::Error>(mut self, v: f64) -> Result<(), E> {
        self.sep();
        if v.is_finite() {
            let _ = write!(self.out, "{v:?}");
        } else {
            self.out.push_str("null");
        }
        Ok(())
    }
    fn visit_bool<E: de::Error>(mut self, v: bool) -> Result<(), E> {
        self.sep();
        self.out.push_str(if v { "true" } else { "false" });
        Ok(())
    }
    fn visit_unit<E: de::Error>(mut self) -> Result<(), E> {
        self.sep();
        self.out.push_str("null");
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut a: A) -> Result<(), A::Error> {
        self.sep();
        self.out.push('[');
        let mut first = true;
        while a
            .next_element_seed(JsonText {
                out: self.out,
                first: &mut first,
            })?
            .is_some()
        {}
        self.out.push(']');
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(mut self, a: A) -> Result<(), A::Error> {
        self.sep();
        write_map(self.out, a)
    }
}

/// One typed arg value: ints exact, floats, interned strings, arrays/objects as interned JSON text.
pub struct ValueSeed<'a> {
    /// Destination table.
    pub strings: &'a mut Interner,
    /// Look-up cache.
    pub cache: &'a mut StrCache,
    /// Reusable text buffer for arrays/objects.
    pub scratch: &'a mut String,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = ArgValue;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<ArgValue, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = ArgValue;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an arg value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<ArgValue, E> {
        Ok(ArgValue::Str(self.cache.intern(self.strings, v)))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<ArgValue, E> {
        Ok(ArgValue::Str(self.strings.intern_lossy(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ArgValue, E> {
        Ok(uint_value(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ArgValue, E> {
        Ok(ArgValue::I64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ArgValue, E> {
        Ok(ArgValue::F64(v))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<ArgValue, E> {
        Ok(ArgValue::Bool(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<ArgValue, E> {
        Ok(ArgValue::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<ArgValue, A::Error> {
        self.scratch.clear();
        self.scratch.push('[');
        let mut first = true;
        while a
            .next_element_seed(JsonText {
                out: self.scratch,
                first: &mut first,
            })?
            .is_some()
        {}
        self.scratch.push(']');
        Ok(ArgValue::Json(
            self.cache.intern(self.strings, self.scratch),
        ))
    }
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<ArgValue, A::Error> {
        self.scratch.clear();
        write_map(self.scratch, a)?;
        Ok(ArgValue::Json(
            self.cache.intern(self.strings, self.scratch),
        ))
    }
}

/// Values of args keys the loader interprets while parsing.
#[derive(Default, Clone, Copy)]
pub struct ArgFacts {
    /// Kineto `correlation`.
    pub correlation: Option<u64>,
    /// A `stream` key was present (Kineto device activities carry one).
    pub stream: bool,
}

impl ArgFacts {
    /// Notes entry (`key`, `v`) when it is a fact the loader uses (`correlation` is the
    /// interned id of that key).
    #[inline]
    pub fn note(&mut self, key: StrId, correlation: StrId, stream: StrId, v: ArgValue) {
        if key == stream {
            self.stream = true;
        }
        if key == correlation {
            match v {
                ArgValue::I64(c) if c >= 0 => self.correlation = Some(c as u64),
                ArgValue::U64(c) => self.correlation = Some(c),
                _ => {}
            }
        }
    }
}

/// Parses an `args` object into one arena block; extracts `correlation`.
pub struct ArgsSeed<'a, 'p> {
    /// The loader (strings, arena, well-known keys).
    pub ld: &'a mut Loader<'p>,
    /// Facts found.
    pub facts: &'a mut ArgFacts,
}

impl<'de> DeserializeSeed<'de> for ArgsSeed<'_, '_> {
    type Value = ArgsRef;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<ArgsRef, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ArgsSeed<'_, '_> {
    type Value = ArgsRef;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an args object")
    }
    fn visit_unit<E: de::Error>(self) -> Result<ArgsRef, E> {
        Ok(ArgsRef::NONE)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<ArgsRef, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        self.ld.args_not_object += 1;
        Ok(ArgsRef::NONE)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<ArgsRef, A::Error> {
        let ld = self.ld;
        ld.b.args.begin();
        let mut pos = 0usize;
        let mut spare = StrId::EMPTY;
        loop {
            let slot = match ld.key_cache.get_mut(pos) {
                Some(s) => s,
                None => &mut spare,
            };
            pos += 1;
            let Some(k) = a.next_key_seed(CachedKeySeed {
                strings: &mut ld.b.strings,
                slot,
            })?
            else {
                break;
            };
            let v = a.next_value_seed(ValueSeed {
                strings: &mut ld.b.strings,
                cache: &mut ld.cache,
                scratch: &mut ld.scratch,
            })?;
            self.facts.note(k, ld.k.correlation, ld.k.stream, v);
            ld.b.args.push(k, v);
        }
        Ok(ld.b.args.finish())
    }
}
