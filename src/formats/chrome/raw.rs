//! What the tokenizers emit and `apply` consumes: one event's fields as read ([`RawEvent`]),
//! with the small value conversions both tokenizers (`seed`, `scan`) share.

use crate::model::{ArgValue, ArgsRef, Interner, Key, StrId};

/// A flow / async id.
pub type IdVal = u64;

/// The fields of one event, as read (applied once the object is complete).
#[derive(Default, Clone, Copy)]
pub struct RawEvent {
    /// First byte of `ph` (0 = absent).
    pub ph: u8,
    /// Interned `name`.
    pub name: StrId,
    /// Interned `cat`.
    pub cat: StrId,
    /// `pid`.
    pub pid: Option<Key>,
    /// `tid`.
    pub tid: Option<Key>,
    /// `ts` in ps (raw, not yet shifted), see [`RawEvent::ts`]: an `i128` in two halves, so the
    /// record stays 8-aligned (an `i128` behind its two tags is 32 bytes, 16-aligned).
    ts_ps: [u64; 2],
    /// `dur` in ps, see [`RawEvent::dur`].
    dur_ps: [u64; 2],
    /// Whether `ts` is absent, unparsable or read ([`TIME_NONE`], [`TIME_BAD`], [`TIME_OK`]).
    ts_state: u8,
    /// The same for `dur`.
    dur_state: u8,
    /// Args block.
    pub args: ArgsRef,
    /// Values found in args.
    pub facts: ArgFacts,
    /// `id` / `id2` (when `has_id`), see [`RawEvent::id`]: an `Option<u64>` is 16 bytes, the
    /// flag fits the record's padding (128 bytes in all, copied inline).
    id_val: IdVal,
    has_id: bool,
    /// The `id` / `id2` text as written when it was a string, for `C` events only (counter
    /// series are named with it); `StrId::EMPTY` otherwise.
    pub id_text: StrId,
    /// `bind_id` (when `has_bind_id`), see [`RawEvent::bind_id`].
    bind_val: IdVal,
    has_bind_id: bool,
    /// First byte of `s` (instant scope).
    pub scope: u8,
    /// `bp == "e"`.
    pub bp_e: bool,
    /// `flow_in`.
    pub flow_in: bool,
    /// `flow_out`.
    pub flow_out: bool,
    /// Number of keys seen.
    pub fields: u32,
}

const TIME_NONE: u8 = 0;
const TIME_BAD: u8 = 1;
const TIME_OK: u8 = 2;

/// `(halves, state)` of a time.
#[inline(always)]
fn pack_time(t: TimeVal) -> ([u64; 2], u8) {
    match t {
        None => ([0; 2], TIME_NONE),
        Some(Err(())) => ([0; 2], TIME_BAD),
        Some(Ok(ps)) => ([ps as u64, (ps >> 64) as u64], TIME_OK),
    }
}

#[inline(always)]
fn unpack_time(h: [u64; 2], state: u8) -> TimeVal {
    match state {
        TIME_OK => Some(Ok(((i128::from(h[1] as i64)) << 64) | i128::from(h[0]))),
        TIME_BAD => Some(Err(())),
        _ => None,
    }
}

impl RawEvent {
    /// `ts` in ps (raw, not yet shifted).
    #[inline(always)]
    pub fn ts(&self) -> TimeVal {
        unpack_time(self.ts_ps, self.ts_state)
    }

    /// `dur` in ps.
    #[inline(always)]
    pub fn dur(&self) -> TimeVal {
        unpack_time(self.dur_ps, self.dur_state)
    }

    /// Sets `ts`.
    #[inline(always)]
    pub fn set_ts(&mut self, t: TimeVal) {
        (self.ts_ps, self.ts_state) = pack_time(t);
    }

    /// Sets `dur`.
    #[inline(always)]
    pub fn set_dur(&mut self, t: TimeVal) {
        (self.dur_ps, self.dur_state) = pack_time(t);
    }

    /// `id` / `id2`.
    #[inline(always)]
    pub fn id(&self) -> Option<IdVal> {
        self.has_id.then_some(self.id_val)
    }

    /// `bind_id`.
    #[inline(always)]
    pub fn bind_id(&self) -> Option<IdVal> {
        self.has_bind_id.then_some(self.bind_val)
    }

    /// Sets `id`.
    #[inline(always)]
    pub fn set_id(&mut self, id: Option<IdVal>) {
        (self.has_id, self.id_val) = (id.is_some(), id.unwrap_or(0));
    }

    /// Sets `bind_id`.
    #[inline(always)]
    pub fn set_bind_id(&mut self, id: Option<IdVal>) {
        (self.has_bind_id, self.bind_val) = (id.is_some(), id.unwrap_or(0));
    }

    /// Resets every field.
    #[inline]
    pub fn clear(&mut self) {
        *self = RawEvent {
            args: ArgsRef::NONE,
            ..RawEvent::default()
        };
    }
}

/// Parsed time in ps (raw, before rebasing): `None` absent/null, `Some(Err(()))` unparsable.
pub type TimeVal = Option<Result<i128, ()>>;

/// Values of args keys the loader interprets while parsing.
#[derive(Default, Clone, Copy)]
pub struct ArgFacts {
    /// Kineto `correlation` (0 when absent, as the loader reads it).
    pub correlation: u64,
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
                ArgValue::I64(c) if c >= 0 => self.correlation = c as u64,
                ArgValue::U64(c) => self.correlation = c,
                _ => {}
            }
        }
    }
}

/// Keys of one trace event the loader reads; anything else is skipped. Both tokenizers (`seed`,
/// `scan`) match keys through [`Field::from_key`].
#[derive(Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Field {
    Ph,
    Name,
    Cat,
    Pid,
    Tid,
    Ts,
    Dur,
    Args,
    Id,
    Id2,
    S,
    Bp,
    BindId,
    FlowIn,
    FlowOut,
    Other,
}

impl Field {
    /// The field a key names.
    pub fn from_key(k: &[u8]) -> Field {
        match k {
            b"ph" => Field::Ph,
            b"name" => Field::Name,
            b"cat" => Field::Cat,
            b"pid" => Field::Pid,
            b"tid" => Field::Tid,
            b"ts" => Field::Ts,
            b"dur" => Field::Dur,
            b"args" => Field::Args,
            b"id" => Field::Id,
            b"id2" => Field::Id2,
            b"s" => Field::S,
            b"bp" => Field::Bp,
            b"bind_id" => Field::BindId,
            b"flow_in" => Field::FlowIn,
            b"flow_out" => Field::FlowOut,
            _ => Field::Other,
        }
    }
}

/// `key` (at most 8 bytes) packed little-endian into a word, zero-padded.
const fn pack(key: &[u8]) -> u64 {
    let mut w = 0u64;
    let mut i = 0;
    while i < key.len() {
        w |= (key[i] as u64) << (8 * i);
        i += 1;
    }
    w
}

impl Field {
    /// [`Field::from_key`] for a key of at most 7 bytes given packed ([`pack`]; keys hold no NUL,
    /// so the word says the length too): one integer match instead of slice compares.
    #[inline]
    pub fn from_word(w: u64) -> Field {
        const PH: u64 = pack(b"ph");
        const NAME: u64 = pack(b"name");
        const CAT: u64 = pack(b"cat");
        const PID: u64 = pack(b"pid");
        const TID: u64 = pack(b"tid");
        const TS: u64 = pack(b"ts");
        const DUR: u64 = pack(b"dur");
        const ARGS: u64 = pack(b"args");
        const ID: u64 = pack(b"id");
        const ID2: u64 = pack(b"id2");
        const S: u64 = pack(b"s");
        const BP: u64 = pack(b"bp");
        const BIND_ID: u64 = pack(b"bind_id");
        const FLOW_IN: u64 = pack(b"flow_in");
        match w {
            PH => Field::Ph,
            NAME => Field::Name,
            CAT => Field::Cat,
            PID => Field::Pid,
            TID => Field::Tid,
            TS => Field::Ts,
            DUR => Field::Dur,
            ARGS => Field::Args,
            ID => Field::Id,
            ID2 => Field::Id2,
            S => Field::S,
            BP => Field::Bp,
            BIND_ID => Field::BindId,
            FLOW_IN => Field::FlowIn,
            _ => Field::Other,
        }
    }
}

/// A pid/tid given as a string: numeric strings normalized to integers, others interned.
pub fn key_from_str(strings: &mut Interner, v: &str) -> Key {
    let t = v.trim();
    if !t.is_empty()
        && t.len() <= 20
        && t.bytes().all(|c| c.is_ascii_digit() || c == b'-')
        && let Ok(i) = t.parse::<i64>()
    {
        return Key::Int(i);
    }
    Key::Str(strings.intern(v))
}

/// A flow/async id given as a string: decimal or `0x` hex, else a hash of the text.
pub fn id_from_str(v: &str) -> u64 {
    let t = v.trim();
    let parsed = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        t.parse::<u64>().ok()
    };
    parsed.unwrap_or_else(|| hash_str(v))
}

/// FNV-1a, for string ids that are not numbers.
fn hash_str(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// An unsigned JSON integer as an arg value: `I64` when it fits, else `U64`.
#[inline]
pub fn uint_value(v: u64) -> ArgValue {
    match i64::try_from(v) {
        Ok(i) => ArgValue::I64(i),
        Err(_) => ArgValue::U64(v),
    }
}

#[cfg(test)]
mod tests {
    use super::{Field, RawEvent};

    #[test]
    fn times_round_trip() {
        let mut ev = RawEvent::default();
        assert_eq!(ev.ts(), None);
        for t in [
            None,
            Some(Err(())),
            Some(Ok(0)),
            Some(Ok(-1)),
            Some(Ok(1_712_195_495_604_628_867_000)),
            Some(Ok(-(1 << 100))),
            Some(Ok(i128::MIN)),
            Some(Ok(i128::MAX)),
        ] {
            ev.set_ts(t);
            ev.set_dur(t);
            assert_eq!((ev.ts(), ev.dur()), (t, t));
        }
        assert_eq!((ev.id(), ev.bind_id()), (None, None));
        for id in [Some(0), Some(7), Some(u64::MAX), None] {
            ev.set_id(id);
            ev.set_bind_id(id.map(|v| v ^ 1));
            assert_eq!((ev.id(), ev.bind_id()), (id, id.map(|v| v ^ 1)));
        }
        assert!(std::mem::size_of::<RawEvent>() <= 128);
    }

    #[test]
    fn keys_to_fields() {
        for (k, f) in [
            (&b"ph"[..], Field::Ph),
            (b"name", Field::Name),
            (b"cat", Field::Cat),
            (b"pid", Field::Pid),
            (b"tid", Field::Tid),
            (b"ts", Field::Ts),
            (b"dur", Field::Dur),
            (b"args", Field::Args),
            (b"id", Field::Id),
            (b"id2", Field::Id2),
            (b"s", Field::S),
            (b"bp", Field::Bp),
            (b"bind_id", Field::BindId),
            (b"flow_in", Field::FlowIn),
            (b"flow_out", Field::FlowOut),
            (b"", Field::Other),
            (b"ph\0", Field::Other),
            (b"\0name", Field::Other),
            (b"Name", Field::Other),
            (b"flow_outs", Field::Other),
            (b"bind_ids", Field::Other),
        ] {
            assert!(Field::from_key(k) == f, "{k:?}");
        }
    }
}
