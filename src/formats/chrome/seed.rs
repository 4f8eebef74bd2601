//! The serde `DeserializeSeed` chain: top level (array or object form) → `traceEvents` →
//! one event → its fields, writing straight into the [`Loader`] (no DOM, no per-event allocation).

use super::apply::Loader;
use super::args::{ArgsSeed, StrSeed, ValueSeed};
use super::raw::{ArgFacts, Field, IdVal, RawEvent, TimeVal, id_from_str, key_from_str};
use super::time::us_text_to_ps;
use crate::formats::error::CANCELLED;
use crate::formats::progress::percent;
use crate::model::{Key, StrId};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// serde_json's private name for `RawValue`: asking for a newtype struct with this name makes
/// serde_json hand over the value's exact text (borrowed from a slice, owned from a reader).
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an event key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(Field::from_key(v.as_bytes()))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Field, E> {
                Ok(Field::from_key(v))
            }
        }
        d.deserialize_identifier(V)
    }
}

/// Top-level document: `[events…]` or `{"traceEvents":[…], metadata…}`.
pub struct TopSeed<'a, 'p>(pub &'a mut Loader<'p>);

impl<'de> DeserializeSeed<'de> for TopSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array of trace events or an object with \"traceEvents\"")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<(), A::Error> {
        self.0.saw_events = true;
        events(self.0, a)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let ld = self.0;
        ld.object_form = true;
        let mut at = 0usize;
        while let Some(k) = a.next_key_seed(StrSeed {
            strings: &mut ld.b.strings,
            cache: &mut ld.cache,
            at: &mut at,
        })? {
            if k == ld.k.trace_events {
                ld.saw_events = true;
                a.next_value_seed(EventsSeed(ld))?;
            } else if k == ld.k.stack_frames || k == ld.k.samples {
                // Sampled CPU stacks (see `samples`).
                let frames = k == ld.k.stack_frames;
                let Loader {
                    b, cache, sampled, ..
                } = &mut *ld;
                let mut intern = |s: &str| cache.intern(&mut b.strings, s);
                if frames {
                    a.next_value_seed(super::samples::FramesSeed {
                        out: sampled,
                        intern: &mut intern,
                    })?;
                } else {
                    a.next_value_seed(super::samples::SamplesSeed {
                        out: sampled,
                        intern: &mut intern,
                    })?;
                }
            } else if k == ld.k.system_trace_events {
                a.next_value::<IgnoredAny>()?;
                ld.system_trace_events = true;
            } else {
                let v = a.next_value_seed(ValueSeed {
                    strings: &mut ld.b.strings,
                    cache: &mut ld.cache,
                    scratch: &mut ld.scratch,
                })?;
                ld.top_key(k, v);
            }
        }
        Ok(())
    }
}

/// The `traceEvents` array.
struct EventsSeed<'a, 'p>(&'a mut Loader<'p>);

impl<'de> DeserializeSeed<'de> for EventsSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<(), A::Error> {
        events(self.0, a)
    }
}

fn events<'de, A: SeqAccess<'de>>(ld: &mut Loader<'_>, mut a: A) -> Result<(), A::Error> {
    let mut ev = RawEvent::default();
    if let Some(ch) = ld.chunked.take() {
        // Chunk-parallel mode: the events come from the mapped text; the frame reader then
        // resumes at the closing bracket, so the array must end here.
        ch(ld).map_err(de::Error::custom)?;
        ev.clear();
        if a.next_element_seed(EventSeed { ld, ev: &mut ev })?
            .is_some()
        {
            return Err(de::Error::custom(
                "chunked parse did not end at the array's end",
            ));
        }
        return Ok(());
    }
    let cap = ld.progress().max_events();
    loop {
        ev.clear();
        if a.next_element_seed(EventSeed { ld, ev: &mut ev })?
            .is_none()
        {
            return Ok(());
        }
        ld.apply(&ev);
        if cap.is_some_and(|c| ld.events >= c) {
            return skip_rest(ld, a);
        }
        if ld.events & 4095 == 0 {
            ld.report_progress();
            if ld.progress_cancelled() {
                ld.cancelled = true;
                return Err(de::Error::custom(CANCELLED));
            }
        }
    }
}

/// After the event cap: reads past the remaining events without keeping them (memory stays
/// bounded; the count goes into the `capped` warning).
fn skip_rest<'de, A: SeqAccess<'de>>(ld: &mut Loader<'_>, mut a: A) -> Result<(), A::Error> {
    let mut skipped = 0u64;
    let warn = |ld: &mut Loader<'_>, skipped: u64, more: &str| {
        let kept = ld.events;
        ld.b.warn_n(
            "capped",
            format!(
                "kept the first {kept} events of {}{more} ({}); {skipped}{more} events not loaded",
                kept + skipped,
                percent(kept, kept + skipped)
            ),
            skipped.max(1),
        );
    };
    loop {
        match a.next_element::<IgnoredAny>() {
            Ok(Some(_)) => skipped += 1,
            Ok(None) => break,
            Err(e) => {
                // A cut or broken tail after the cap: the count is a lower bound.
                warn(ld, skipped, "+");
                return Err(e);
            }
        }
        if skipped & 65535 == 0 && ld.progress_cancelled() {
            ld.cancelled = true;
            return Err(de::Error::custom(CANCELLED));
        }
    }
    if skipped > 0 {
        warn(ld, skipped, "");
    }
    Ok(())
}

/// One event object; fields are collected into `ev`, applied by the caller once complete.
pub struct EventSeed<'a, 'p> {
    /// The loader whose interner and args arena receive the event's strings and args.
    pub ld: &'a mut Loader<'p>,
    /// Where the fields go.
    pub ev: &'a mut RawEvent,
}

impl<'de> DeserializeSeed<'de> for EventSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EventSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace event object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let (ld, ev) = (self.ld, self.ev);
        ld.id_text.clear();
        while let Some(f) = a.next_key::<Field>()? {
            ev.fields += 1;
            match f {
                Field::Ph => ev.ph = a.next_value_seed(FirstByte)?,
                Field::Name => {
                    ev.name = a.next_value_seed(StrSeed {
                        strings: &mut ld.b.strings,
                        cache: &mut ld.cache,
                        at: &mut ld.last_str_addr,
                    })?
                }
                Field::Cat => {
                    ev.cat = a.next_value_seed(StrSeed {
                        strings: &mut ld.b.strings,
                        cache: &mut ld.cache,
                        at: &mut ld.last_str_addr,
                    })?
                }
                Field::Pid => ev.pid = Some(a.next_value_seed(KeySeed(ld))?),
                Field::Tid => ev.tid = Some(a.next_value_seed(KeySeed(ld))?),
                Field::Ts => ev.set_ts(a.next_value_seed(TimeSeed)?),
                Field::Dur => ev.set_dur(a.next_value_seed(TimeSeed)?),
                Field::Args => {
                    // A repeated `args`: the earlier block is no one's.
                    ld.b.args.drop_last(ev.args);
                    let mut facts = ArgFacts::default();
                    ev.args = a.next_value_seed(ArgsSeed {
                        ld,
                        facts: &mut facts,
                    })?;
                    ev.facts = facts;
                }
                Field::Id | Field::Id2 => {
                    ev.set_id(a.next_value_seed(IdTextSeed(&mut ld.id_text))?)
                }
                Field::S => ev.scope = a.next_value_seed(FirstByte)?,
                Field::Bp => ev.bp_e = a.next_value_seed(FirstByte)? == b'e',
                Field::BindId => ev.set_bind_id(a.next_value_seed(IdSeed)?),
                Field::FlowIn => ev.flow_in = a.next_value_seed(Truthy)?,
                Field::FlowOut => ev.flow_out = a.next_value_seed(Truthy)?,
                Field::Other => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        // Counter series keep a string id as written (interned once the event is complete,
        // as the scanner does).
        if ev.ph == b'C' && !ld.id_text.is_empty() {
            ev.id_text = ld.cache.intern(&mut ld.b.strings, &ld.id_text);
        }
        Ok(())
    }
}

/// [`IdSeed`] that also keeps the text of a string id (the last id value seen; cleared by a
/// non-string one).
struct IdTextSeed<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for IdTextSeed<'_> {
    type Value = Option<IdVal>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<IdVal>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for IdTextSeed<'_> {
    type Value = Option<IdVal>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an id")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.0.clear();
        IdSeed.visit_u64(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.0.clear();
        IdSeed.visit_i64(v)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        self.0.clear();
        IdSeed.visit_f64(v)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        self.0.clear();
        IdSeed.visit_bool(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.0.clear();
        self.0.push_str(v);
        IdSeed.visit_str(v)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.clear();
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
        self.0.clear();
        IdSeed.visit_seq(a)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        self.0.clear();
        let mut id = None;
        while a.next_key::<IgnoredAny>()?.is_some() {
            if let Some(v) = a.next_value_seed(IdTextSeed(&mut *self.0))? {
                id = Some(v);
            }
        }
        Ok(id)
    }
}

/// First byte of a string value (`ph`, `s`, `bp`); 0 for anything else.
struct FirstByte;

impl<'de> DeserializeSeed<'de> for FirstByte {
    type Value = u8;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<u8, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FirstByte {
    type Value = u8;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<u8, E> {
        Ok(v.as_bytes().first().copied().unwrap_or(0))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<u8, E> {
        Ok(0)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<u8, E> {
        Ok(0)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<u8, E> {
        Ok(0)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<u8, E> {
        Ok(0)
    }
    fn visit_unit<E: de::Error>(self) -> Result<u8, E> {
        Ok(0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<u8, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(0)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<u8, A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(0)
    }
}

/// JSON truthiness for `flow_in` / `flow_out`.
struct Truthy;

impl<'de> DeserializeSeed<'de> for Truthy {
    type Value = bool;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Truthy {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a boolean")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
        Ok(v)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<bool, E> {
        Ok(v != 0)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<bool, E> {
        Ok(v != 0)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<bool, E> {
        Ok(v != 0.0)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        Ok(v == "true" || v == "1")
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<bool, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(false)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<bool, A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(false)
    }
}

/// Time value (`ts`, `dur`): the number's exact text → ps. `Err(())` inside means present but
/// not a number.
struct TimeSeed;

impl<'de> DeserializeSeed<'de> for TimeSeed {
    type Value = TimeVal;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<TimeVal, D::Error> {
        d.deserialize_newtype_struct(RAW_TOKEN, RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = TimeVal;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<TimeVal, A::Error> {
        // serde_json's raw-value protocol: one entry whose value is the raw text.
        if a.next_key::<IgnoredAny>()?.is_none() {
            return Ok(None);
        }
        let v = a.next_value_seed(TimeText)?;
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(v)
    }
    // Non-serde_json deserializers: plain values.
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<TimeVal, E> {
        Ok(Some(Ok(i128::from(v) * 1_000_000)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<TimeVal, E> {
        Ok(Some(Ok(i128::from(v) * 1_000_000)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<TimeVal, E> {
        let ps = (v * 1.0e6).round();
        Ok(Some(if ps.abs() < 1.0e30 {
            Ok(ps as i128)
        } else {
            Err(())
        }))
    }
    fn visit_unit<E: de::Error>(self) -> Result<TimeVal, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<TimeVal, E> {
        TimeText.visit_str(v)
    }
}

struct TimeText;

impl<'de> DeserializeSeed<'de> for TimeText {
    type Value = TimeVal;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<TimeVal, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for TimeText {
    type Value = TimeVal;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("number text")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<TimeVal, E> {
        if v == "null" {
            return Ok(None);
        }
        Ok(Some(us_text_to_ps(v).ok_or(())))
    }
}

/// pid / tid: exact integers, numeric strings normalized to integers, other strings interned.
struct KeySeed<'a, 'p>(&'a mut Loader<'p>);

impl<'de> DeserializeSeed<'de> for KeySeed<'_, '_> {
    type Value = Key;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_, '_> {
    type Value = Key;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a pid/tid")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Key, E> {
        Ok(match i64::try_from(v) {
            Ok(i) => Key::Int(i),
            Err(_) => {
                let s = v.to_string();
                Key::Str(self.0.b.strings.intern(&s))
            }
        })
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Key, E> {
        Ok(Key::Int(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Key, E> {
        if v.fract() == 0.0 && v.abs() < 9.0e18 {
            Ok(Key::Int(v as i64))
        } else {
            let s = v.to_string();
            Ok(Key::Str(self.0.b.strings.intern(&s)))
        }
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(key_from_str(&mut self.0.b.strings, v))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Key, E> {
        Ok(Key::Int(i64::from(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Key, E> {
        Ok(Key::Str(StrId::EMPTY))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Key, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Key::Str(StrId::EMPTY))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Key, A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Key::Str(StrId::EMPTY))
    }
}

/// Flow / async ids: numbers, decimal or `0x` hex strings, other strings hashed; `id2` objects
/// (`{"local": …}` / `{"global": …}`) use their inner id.
struct IdSeed;

impl<'de> DeserializeSeed<'de> for IdSeed {
    type Value = Option<IdVal>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<IdVal>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for IdSeed {
    type Value = Option<IdVal>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an id")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(v as u64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Some(v.to_bits()))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Some(u64::from(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(id_from_str(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut id = None;
        while a.next_key::<IgnoredAny>()?.is_some() {
            if let Some(v) = a.next_value_seed(IdSeed)? {
                id = Some(v);
            }
        }
        Ok(id)
    }
}
