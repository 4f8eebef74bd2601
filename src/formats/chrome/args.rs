//! Argument decoding: `args` objects → [`ArgsArena`](crate::model::ArgsArena) blocks, and small
//! value seeds shared with the event and top-level seeds (interned strings, typed values,
//! compact JSON text).

use super::apply::Loader;
use super::intern::{StrCache, cached_key};
use super::raw::{ArgFacts, uint_value};
use crate::model::{ArgValue, ArgsRef, Interner, StrId};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt::{self, Write as _};

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
