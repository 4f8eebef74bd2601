//! Compact typed argument storage (Chrome `args`, XPlane stats).
//!
//! Every event's args are one block in a shared byte arena: a varint count, then per entry an
//! interned key, a tag byte and a varint / fixed payload. Keys and string values are interned,
//! so the common case costs a few bytes per arg and no allocation.

use super::strings::{Interner, StrId};
use std::sync::Arc;

/// Handle to one args block; `ArgsRef::NONE` means "no args". Bit 31 set: a block kept outside
/// the arena and decoded on demand by the arena's [`LazyArgs`] source (its 31-bit offset).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArgsRef(pub u32);

impl ArgsRef {
    /// No args.
    pub const NONE: ArgsRef = ArgsRef(u32::MAX);
    /// Largest offset a lazy handle can hold.
    pub const LAZY_MAX: u32 = (1 << 31) - 2;
    /// True unless this is `NONE`.
    #[inline]
    pub fn is_some(self) -> bool {
        self != Self::NONE
    }
    /// A lazy block at `offset` (≤ `LAZY_MAX`) of the lazy source.
    #[inline]
    pub fn lazy(offset: u32) -> ArgsRef {
        debug_assert!(offset <= Self::LAZY_MAX);
        ArgsRef(offset | 1 << 31)
    }
    /// The lazy offset, when this is a lazy handle.
    #[inline]
    pub fn lazy_offset(self) -> Option<u32> {
        (self.is_some() && self.0 >> 31 == 1).then_some(self.0 & !(1 << 31))
    }
}

/// Args blocks decoded on demand from data the capture keeps (XPlane stats read from the
/// mapped file), so loading does not copy them.
pub trait LazyArgs: Send + Sync + std::fmt::Debug {
    /// Appends the own entries of the block at `offset` to `out` (string values looked up in
    /// `strings`, where the loader interned them) and returns the arena block they inherit.
    fn decode(&self, offset: u32, strings: &Interner, out: &mut Vec<(StrId, ArgValue)>) -> ArgsRef;
    /// Heap bytes held (not counting mapped file pages).
    fn heap_bytes(&self) -> usize;
    /// True when the data the blocks are decoded from changed since loading (the file was truncated
    /// or rewritten on disk): [`LazyArgs::decode`] then yields no entries.
    fn source_changed(&self) -> bool {
        false
    }
}

impl Default for ArgsRef {
    fn default() -> Self {
        Self::NONE
    }
}

/// One typed argument value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArgValue {
    /// JSON `null`.
    Null,
    /// Boolean.
    Bool(bool),
    /// Signed integer.
    I64(i64),
    /// Unsigned integer too large for i64 (or an XPlane uint64 stat).
    U64(u64),
    /// Floating point.
    F64(f64),
    /// Interned string.
    Str(StrId),
    /// Interned compact JSON text of an array or object.
    Json(StrId),
    /// Opaque bytes (XPlane `bytes_value`); only the length is kept.
    Bytes(u64),
}

impl ArgValue {
    /// The value as an integer when it is one (or an integral string/float).
    pub fn as_i64(&self, strings: &Interner) -> Option<i64> {
        match *self {
            ArgValue::I64(v) => Some(v),
            ArgValue::U64(v) => i64::try_from(v).ok(),
            ArgValue::F64(v) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(v as i64),
            ArgValue::Str(s) => strings.get(s).trim().parse().ok(),
            _ => None,
        }
    }

    /// Renders the value for display (strings unquoted).
    pub fn display(&self, strings: &Interner) -> String {
        match *self {
            ArgValue::Null => "null".into(),
            ArgValue::Bool(b) => b.to_string(),
            ArgValue::I64(v) => v.to_string(),
            ArgValue::U64(v) => v.to_string(),
            ArgValue::F64(v) => v.to_string(),
            ArgValue::Str(s) | ArgValue::Json(s) => strings.get(s).to_string(),
            ArgValue::Bytes(n) => format!("<opaque {n} bytes>"),
        }
    }
}

const T_NULL: u8 = 0;
const T_FALSE: u8 = 1;
const T_TRUE: u8 = 2;
const T_I64: u8 = 3;
const T_U64: u8 = 4;
const T_F64: u8 = 5;
const T_STR: u8 = 6;
const T_JSON: u8 = 7;
const T_BYTES: u8 = 8;
const T_INHERIT: u8 = 9;

/// The arena of all args blocks of one capture.
#[derive(Debug, Default, Clone)]
pub struct ArgsArena {
    data: Vec<u8>,
    /// Blocks that did not fit (arena over 2 GiB); reported as a warning by the builder.
    pub dropped_blocks: u64,
    // Scratch for the block being written.
    pending: Vec<u8>,
    pending_count: u32,
    /// Decoder of lazy handles (`ArgsRef::lazy`), set by loaders that keep their source.
    pub lazy: Option<Arc<dyn LazyArgs>>,
    /// Some block links to another (its handles are not position-independent).
    inherits: bool,
}

/// Whether a block whose entries take `entries` bytes, written at `off`, stays below the handles'
/// limit (the count's varint, at most 5 bytes, comes first); blocks past it are dropped.
fn block_fits(off: usize, entries: usize) -> bool {
    off + entries + 5 < ArgsRef::LAZY_MAX as usize
}

/// One entry's bytes: the key's id, a tag, the value.
#[inline(always)]
fn encode(p: &mut Vec<u8>, key: StrId, value: ArgValue) {
    put_varint(p, u64::from(key.0));
    match value {
        ArgValue::Null => p.push(T_NULL),
        ArgValue::Bool(false) => p.push(T_FALSE),
        ArgValue::Bool(true) => p.push(T_TRUE),
        ArgValue::I64(v) => {
            p.push(T_I64);
            put_varint(p, ((v << 1) ^ (v >> 63)) as u64);
        }
        ArgValue::U64(v) => {
            p.push(T_U64);
            put_varint(p, v);
        }
        ArgValue::F64(v) => {
            p.push(T_F64);
            p.extend_from_slice(&v.to_le_bytes());
        }
        ArgValue::Str(s) => {
            p.push(T_STR);
            put_varint(p, u64::from(s.0));
        }
        ArgValue::Json(s) => {
            p.push(T_JSON);
            put_varint(p, u64::from(s.0));
        }
        ArgValue::Bytes(n) => {
            p.push(T_BYTES);
            put_varint(p, n);
        }
    }
}

/// One entry of a block, undecoded: key id, tag and payload (the varint of integers, strings and
/// byte counts, the bits of an `F64`, 0 for null and booleans); `None` for an inherit link, an
/// unknown tag or a cut block. Copies and skips of blocks share it.
#[inline]
fn raw_entry(d: &[u8], pos: &mut usize) -> Option<(u64, u8, u64)> {
    let key = get_varint(d, pos)?;
    let tag = *d.get(*pos)?;
    *pos += 1;
    let v = match tag {
        T_NULL | T_FALSE | T_TRUE => 0,
        T_I64 | T_U64 | T_BYTES | T_STR | T_JSON => get_varint(d, pos)?,
        T_F64 => {
            let w = d.get(*pos..)?.first_chunk::<8>()?;
            *pos += 8;
            u64::from_le_bytes(*w)
        }
        _ => return None,
    };
    Some((key, tag, v))
}

#[inline]
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline(always)]
fn get_varint(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = *data.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

impl ArgsArena {
    /// Empties the arena, keeping its buffers' capacity.
    pub fn clear(&mut self) {
        self.data.clear();
        self.dropped_blocks = 0;
        self.begin();
        self.lazy = None;
        self.inherits = false;
    }

    /// Starts a new block, discarding any unfinished one.
    #[inline]
    pub fn begin(&mut self) {
        self.pending.clear();
        self.pending_count = 0;
    }

    /// Adds one entry to the block being written.
    #[inline]
    pub fn push(&mut self, key: StrId, value: ArgValue) {
        encode(&mut self.pending, key, value);
        self.pending_count += 1;
    }

    /// Starts a block of exactly `n` entries written straight into the arena (no pending copy):
    /// `n` calls of [`ArgsArena::push_counted`] follow, then [`ArgsArena::finish_counted`] with
    /// the returned mark. The block's bytes are those of `begin`, `push` × n, `finish`.
    #[inline]
    pub fn begin_counted(&mut self, n: u32) -> usize {
        self.begin();
        let off = self.data.len();
        if n > 0 {
            put_varint(&mut self.data, u64::from(n));
        }
        off
    }

    /// Adds one entry to the block started by [`ArgsArena::begin_counted`].
    #[inline]
    pub fn push_counted(&mut self, key: StrId, value: ArgValue) {
        encode(&mut self.data, key, value);
    }

    /// Seals the block started at `off` by [`ArgsArena::begin_counted`]: `ArgsRef::NONE` for an
    /// empty block, or (dropped, counted) for one past the handles' limit, as
    /// [`ArgsArena::finish`].
    #[inline]
    pub fn finish_counted(&mut self, off: usize) -> ArgsRef {
        let len = self.data.len();
        if len == off {
            return ArgsRef::NONE;
        }
        // The entries' bytes, without the count's varint.
        let mut p = off;
        let head = get_varint(&self.data, &mut p).map_or(0, |_| p - off);
        if !block_fits(off, len - off - head) {
            self.data.truncate(off);
            self.dropped_blocks += 1;
            return ArgsRef::NONE;
        }
        ArgsRef(off as u32)
    }

    /// Removes block `r` when it is the arena's last (an event's `args` read again: the earlier
    /// block is no one's), so that loaders that copy only the blocks events keep write the same
    /// bytes as those that write every block.
    pub fn drop_last(&mut self, r: ArgsRef) {
        if !r.is_some() || r.lazy_offset().is_some() || self.inherits {
            return;
        }
        let d = &self.data;
        let mut pos = r.0 as usize;
        let skipped = (|| {
            for _ in 0..get_varint(d, &mut pos)? {
                raw_entry(d, &mut pos)?;
            }
            Some(pos)
        })();
        if skipped == Some(self.data.len()) {
            self.data.truncate(r.0 as usize);
        }
    }

    /// Adds a link to another block whose entries follow this block's own (XPlane metadata stats).
    #[inline]
    pub fn push_inherit(&mut self, parent: ArgsRef) {
        if !parent.is_some() {
            return;
        }
        self.inherits = true;
        put_varint(&mut self.pending, 0);
        self.pending.push(T_INHERIT);
        put_varint(&mut self.pending, u64::from(parent.0));
        self.pending_count += 1;
    }

    /// Number of entries in the block being written.
    pub fn pending_len(&self) -> u32 {
        self.pending_count
    }

    /// Seals the block being written; an empty block gives `ArgsRef::NONE`.
    #[inline]
    pub fn finish(&mut self) -> ArgsRef {
        if self.pending_count == 0 {
            return ArgsRef::NONE;
        }
        let off = self.data.len();
        if !block_fits(off, self.pending.len()) {
            self.dropped_blocks += 1;
            self.begin();
            return ArgsRef::NONE;
        }
        put_varint(&mut self.data, u64::from(self.pending_count));
        self.data.extend_from_slice(&self.pending);
        self.begin();
        ArgsRef(off as u32)
    }

    /// Iterates a block's entries, following inherited blocks after the block's own entries.
    /// `strings` is the capture's table (lazy blocks look their string values up in it).
    pub fn iter<'a>(&'a self, r: ArgsRef, strings: &Interner) -> ArgsIter<'a> {
        let mut it = ArgsIter {
            data: &self.data,
            pos: 0,
            left: 0,
            next_block: None,
            hops: 0,
            own: Vec::new(),
            own_pos: 0,
        };
        match (r.lazy_offset(), &self.lazy) {
            (Some(off), Some(src)) => {
                // A buffer reused across iterators of this thread: no allocation per event
                // when an analysis reads the args of millions of events.
                it.own = SPARE.with(std::cell::Cell::take);
                it.own.clear();
                let then = src.decode(off, strings, &mut it.own);
                it.next_block = Some(then);
            }
            (Some(_), None) => {}
            (None, _) => it.enter(r),
        }
        it
    }

    /// Calls `f` on each entry of block `r` in [`ArgsArena::iter`] order (own entries, then
    /// inherited): arena blocks are decoded in one tight loop, without the iterator's state
    /// (what analyses reading the args of millions of events use); lazy blocks go through
    /// [`ArgsArena::iter`].
    #[inline]
    pub fn for_each(&self, r: ArgsRef, strings: &Interner, mut f: impl FnMut(StrId, ArgValue)) {
        if !r.is_some() {
            return;
        }
        if r.lazy_offset().is_some() {
            for (k, v) in self.iter(r, strings) {
                f(k, v);
            }
            return;
        }
        let d = &self.data[..];
        let mut r = r;
        // The iterator follows at most 9 blocks (hops), as here.
        for _ in 0..9 {
            if !r.is_some() || r.lazy_offset().is_some() {
                return;
            }
            let mut pos = r.0 as usize;
            let Some(mut left) = get_varint(d, &mut pos) else {
                return;
            };
            let mut next = None;
            while left > 0 {
                left -= 1;
                let Some(key) = get_varint(d, &mut pos) else {
                    return;
                };
                let Some(&tag) = d.get(pos) else { return };
                pos += 1;
                let v = match tag {
                    T_I64 => match get_varint(d, &mut pos) {
                        Some(z) => ArgValue::I64(((z >> 1) as i64) ^ -((z & 1) as i64)),
                        None => return,
                    },
                    T_U64 | T_STR | T_JSON | T_BYTES | T_INHERIT => {
                        let Some(x) = get_varint(d, &mut pos) else {
                            return;
                        };
                        match tag {
                            T_U64 => ArgValue::U64(x),
                            T_STR => ArgValue::Str(StrId(x as u32)),
                            T_JSON => ArgValue::Json(StrId(x as u32)),
                            T_BYTES => ArgValue::Bytes(x),
                            _ => {
                                next = Some(ArgsRef(x as u32));
                                continue;
                            }
                        }
                    }
                    T_NULL => ArgValue::Null,
                    T_FALSE => ArgValue::Bool(false),
                    T_TRUE => ArgValue::Bool(true),
                    T_F64 => {
                        let Some(b) = d.get(pos..pos + 8) else { return };
                        let Ok(b) = <[u8; 8]>::try_from(b) else {
                            return;
                        };
                        pos += 8;
                        ArgValue::F64(f64::from_le_bytes(b))
                    }
                    _ => return,
                };
                f(StrId(key as u32), v);
            }
            match next {
                Some(n) => r = n,
                None => return,
            }
        }
    }

    /// First value stored under `key` in block `r` (own entries first, then inherited).
    pub fn get(&self, r: ArgsRef, key: StrId, strings: &Interner) -> Option<ArgValue> {
        self.iter(r, strings)
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    /// Appends every block of `other`, which must have been written without
    /// [`ArgsArena::push_inherit`] (blocks are then position-independent); returns the offset
    /// to add to `other`'s handles, or `None` (nothing appended) when it does not fit or
    /// `other` has inherit links. Lets threads write args into arenas of their own.
    pub fn append(&mut self, other: &ArgsArena) -> Option<u32> {
        let base = self.data.len();
        if other.inherits || base + other.data.len() >= ArgsRef::LAZY_MAX as usize {
            return None;
        }
        self.data.extend_from_slice(&other.data);
        Some(base as u32)
    }

    /// Copies block `r` of `src` (an arena without inherit links or lazy handles) into this
    /// arena with its string ids (keys, `Str` and `Json` values) mapped by `map`: the same
    /// result as `begin`, one `push` per entry and `finish`, without decoding values.
    /// `None` when the block has an inherit link or is malformed (nothing written).
    pub fn copy_mapped(
        &mut self,
        src: &ArgsArena,
        r: ArgsRef,
        map: impl Fn(u32) -> u32,
    ) -> Option<ArgsRef> {
        if !r.is_some() {
            return Some(r);
        }
        if r.lazy_offset().is_some() {
            return None;
        }
        let d = &src.data;
        let mut pos = r.0 as usize;
        let n = get_varint(d, &mut pos)?;
        // A counted block (the count is known up front), undone if malformed.
        let Ok(n32) = u32::try_from(n) else {
            self.begin();
            return None;
        };
        let off = self.begin_counted(n32);
        let out = &mut self.data;
        let copied = (|| {
            for _ in 0..n {
                let (key, tag, v) = raw_entry(d, &mut pos)?;
                put_varint(out, u64::from(map(key as u32)));
                out.push(tag);
                match tag {
                    T_NULL | T_FALSE | T_TRUE => {}
                    T_F64 => out.extend_from_slice(&v.to_le_bytes()),
                    T_STR | T_JSON => put_varint(out, u64::from(map(v as u32))),
                    _ => put_varint(out, v),
                }
            }
            Some(())
        })();
        if copied.is_none() {
            self.data.truncate(off);
            return None;
        }
        Some(self.finish_counted(off))
    }

    /// The encoded blocks, dropped-block count and inherit flag (for snapshots).
    pub fn raw_parts(&self) -> (&[u8], u64, bool) {
        (&self.data, self.dropped_blocks, self.inherits)
    }

    /// An arena from [`ArgsArena::raw_parts`] output. Blocks are decoded defensively, so bytes
    /// from a damaged snapshot read as missing entries, never as a panic.
    pub fn from_raw_parts(data: Vec<u8>, dropped_blocks: u64, inherits: bool) -> ArgsArena {
        ArgsArena {
            data,
            dropped_blocks,
            inherits,
            ..ArgsArena::default()
        }
    }

    /// True when the lazy source changed on disk since loading (its blocks read as empty).
    pub fn source_changed(&self) -> bool {
        self.lazy.as_ref().is_some_and(|l| l.source_changed())
    }

    /// Bytes used by the arena (and by the lazy source's tables).
    pub fn heap_bytes(&self) -> usize {
        self.data.capacity()
            + self.pending.capacity()
            + self.lazy.as_ref().map_or(0, |l| l.heap_bytes())
    }

    /// Releases spare capacity once loading is done.
    pub fn shrink(&mut self) {
        self.data.shrink_to_fit();
        self.pending = Vec::new();
    }
}

/// Iterator over `(key, value)` pairs of one args block.
pub struct ArgsIter<'a> {
    data: &'a [u8],
    pos: usize,
    left: u64,
    next_block: Option<ArgsRef>,
    hops: u8,
    /// Entries of a lazy block, served before `next_block`.
    own: Vec<(StrId, ArgValue)>,
    own_pos: usize,
}

thread_local! {
    /// The entries buffer of the last dropped lazy [`ArgsIter`] of this thread.
    static SPARE: std::cell::Cell<Vec<(StrId, ArgValue)>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Drop for ArgsIter<'_> {
    fn drop(&mut self) {
        if self.own.capacity() > 0 {
            let v = std::mem::take(&mut self.own);
            SPARE.with(|s| s.set(v));
        }
    }
}

impl ArgsIter<'_> {
    fn enter(&mut self, r: ArgsRef) {
        self.left = 0;
        if !r.is_some() || r.lazy_offset().is_some() || self.hops > 8 {
            return;
        }
        self.hops += 1;
        self.pos = r.0 as usize;
        self.left = get_varint(self.data, &mut self.pos).unwrap_or(0);
    }
}

impl Iterator for ArgsIter<'_> {
    type Item = (StrId, ArgValue);

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(&e) = self.own.get(self.own_pos) {
            self.own_pos += 1;
            return Some(e);
        }
        loop {
            if self.left == 0 {
                let nb = self.next_block.take()?;
                self.enter(nb);
                continue;
            }
            self.left -= 1;
            let d = self.data;
            let key = StrId(get_varint(d, &mut self.pos)? as u32);
            let tag = *d.get(self.pos)?;
            self.pos += 1;
            let v = match tag {
                T_NULL => ArgValue::Null,
                T_FALSE => ArgValue::Bool(false),
                T_TRUE => ArgValue::Bool(true),
                T_I64 => {
                    let z = get_varint(d, &mut self.pos)?;
                    ArgValue::I64(((z >> 1) as i64) ^ -((z & 1) as i64))
                }
                T_U64 => ArgValue::U64(get_varint(d, &mut self.pos)?),
                T_F64 => {
                    let b: [u8; 8] = d.get(self.pos..self.pos + 8)?.try_into().ok()?;
                    self.pos += 8;
                    ArgValue::F64(f64::from_le_bytes(b))
                }
                T_STR => ArgValue::Str(StrId(get_varint(d, &mut self.pos)? as u32)),
                T_JSON => ArgValue::Json(StrId(get_varint(d, &mut self.pos)? as u32)),
                T_BYTES => ArgValue::Bytes(get_varint(d, &mut self.pos)?),
                T_INHERIT => {
                    let r = ArgsRef(get_varint(d, &mut self.pos)? as u32);
                    self.next_block = Some(r);
                    continue;
                }
                _ => return None,
            };
            return Some((key, v));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn for_each_visits_what_iter_yields() {
        let mut a = ArgsArena::default();
        a.begin();
        a.push(StrId(9), ArgValue::F64(2.5));
        a.push(StrId(8), ArgValue::Json(StrId(4)));
        let parent = a.finish();
        a.begin();
        a.push(StrId(3), ArgValue::I64(-5));
        a.push_inherit(parent);
        a.push(StrId(1), ArgValue::U64(u64::MAX));
        a.push(StrId(2), ArgValue::Str(StrId(7)));
        a.push(StrId(3), ArgValue::Bool(true));
        a.push(StrId(3), ArgValue::Bool(false));
        a.push(StrId(3), ArgValue::Null);
        a.push(StrId(3), ArgValue::Bytes(17));
        let r = a.finish();
        // A block inheriting itself: both stop after the same number of hops.
        a.begin();
        a.push(StrId(5), ArgValue::I64(i64::MIN));
        a.push_inherit(ArgsRef(a.raw_parts().0.len() as u32));
        let cyc = a.finish();
        let s = Interner::new();
        for b in [
            r,
            parent,
            cyc,
            ArgsRef::NONE,
            ArgsRef(u32::MAX - 7),
            ArgsRef(1000),
        ] {
            let want: Vec<(StrId, ArgValue)> = a.iter(b, &s).collect();
            let mut got = Vec::new();
            a.for_each(b, &s, |k, v| got.push((k, v)));
            assert_eq!(got, want, "{b:?}");
        }
        assert_eq!(a.iter(r, &s).count(), 9);
    }

    #[test]
    fn copy_mapped_equals_push_with_mapped_ids() {
        let mut src = ArgsArena::default();
        src.begin();
        src.push(StrId(3), ArgValue::I64(-5));
        src.push(StrId(1), ArgValue::U64(u64::MAX));
        src.push(StrId(2), ArgValue::F64(1.5));
        src.push(StrId(1), ArgValue::Str(StrId(200)));
        src.push(StrId(2), ArgValue::Json(StrId(3)));
        src.push(StrId(3), ArgValue::Bool(true));
        src.push(StrId(3), ArgValue::Null);
        src.push(StrId(3), ArgValue::Bytes(17));
        let r = src.finish();
        let map = |x: u32| x * 1000 + 7;
        let (mut a, mut b) = (ArgsArena::default(), ArgsArena::default());
        let ra = a.copy_mapped(&src, r, map).unwrap();
        let s = Interner::new();
        b.begin();
        for (k, v) in src.iter(r, &s) {
            let v = match v {
                ArgValue::Str(x) => ArgValue::Str(StrId(map(x.0))),
                ArgValue::Json(x) => ArgValue::Json(StrId(map(x.0))),
                v => v,
            };
            b.push(StrId(map(k.0)), v);
        }
        let rb = b.finish();
        assert_eq!((ra, &a.data), (rb, &b.data));
        assert_eq!(a.copy_mapped(&src, ArgsRef::NONE, map), Some(ArgsRef::NONE));
    }

    #[test]
    fn counted_blocks_equal_pending_ones() {
        let entries = [
            (StrId(3), ArgValue::I64(-5)),
            (StrId(300), ArgValue::U64(u64::MAX)),
            (StrId(2), ArgValue::F64(1.5)),
            (StrId(1), ArgValue::Str(StrId(200_000))),
            (StrId(2), ArgValue::Json(StrId(3))),
            (StrId(3), ArgValue::Bool(false)),
            (StrId(3), ArgValue::Null),
            (StrId(3), ArgValue::Bytes(17)),
        ];
        let (mut a, mut b) = (ArgsArena::default(), ArgsArena::default());
        for n in [0, 1, 3, entries.len()] {
            a.begin();
            for &(k, v) in &entries[..n] {
                a.push(k, v);
            }
            let ra = a.finish();
            let mark = b.begin_counted(n as u32);
            for &(k, v) in &entries[..n] {
                b.push_counted(k, v);
            }
            let rb = b.finish_counted(mark);
            assert_eq!(ra, rb, "{n} entries");
        }
        assert_eq!(a.data, b.data);
        assert_eq!(b.dropped_blocks, 0);
    }

    #[test]
    fn drop_last_removes_only_the_last_block() {
        let mut a = ArgsArena::default();
        a.begin();
        a.push(StrId(1), ArgValue::F64(0.5));
        let first = a.finish();
        a.begin();
        a.push(StrId(2), ArgValue::Str(StrId(9)));
        a.push(StrId(3), ArgValue::I64(-1));
        let second = a.finish();
        let len = a.data.len();
        a.drop_last(first);
        assert_eq!(a.data.len(), len, "not the last block");
        a.drop_last(second);
        assert_eq!(a.data.len(), second.0 as usize);
        a.drop_last(first);
        assert!(a.data.is_empty());
        a.drop_last(ArgsRef::NONE);
    }

    #[test]
    fn roundtrip_all_types_and_inherit() {
        let mut s = Interner::new();
        let mut a = ArgsArena::default();
        let k = |s: &mut Interner, x: &str| s.intern(x);
        let (ka, kb, kc) = (k(&mut s, "a"), k(&mut s, "b"), k(&mut s, "c"));
        a.begin();
        a.push(kc, ArgValue::Str(s.intern("meta")));
        let meta = a.finish();
        a.begin();
        a.push(ka, ArgValue::I64(-5));
        a.push(kb, ArgValue::U64(u64::MAX));
        a.push(kb, ArgValue::F64(1.5));
        a.push(ka, ArgValue::Bool(true));
        a.push(ka, ArgValue::Null);
        a.push(ka, ArgValue::Bytes(17));
        a.push_inherit(meta);
        let r = a.finish();
        let got: Vec<_> = a.iter(r, &s).collect();
        assert_eq!(got.len(), 7);
        assert_eq!(got[0], (ka, ArgValue::I64(-5)));
        assert_eq!(got[1], (kb, ArgValue::U64(u64::MAX)));
        assert_eq!(got[2], (kb, ArgValue::F64(1.5)));
        assert_eq!(got[6].0, kc);
        assert_eq!(a.get(r, kb, &s), Some(ArgValue::U64(u64::MAX)));
        assert_eq!(a.get(r, kc, &s).map(|v| v.display(&s)), Some("meta".into()));
        a.begin();
        assert_eq!(a.finish(), ArgsRef::NONE);
        assert_eq!(a.iter(ArgsRef::NONE, &s).count(), 0);
    }
}
