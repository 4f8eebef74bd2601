//! A binary snapshot of a loaded [`Capture`]: every column written as little-endian arrays, read
//! back without parsing. Used by the capture cache (`formats::cache`) so that reopening a
//! multi-GB JSON trace costs a copy of its model instead of a parse.
//!
//! Layout: magic `TTSNAP`, a format version, then the capture's parts in a fixed order; every
//! length is checked against the bytes left before anything is allocated, and every id is checked
//! against its table, so a corrupt or truncated snapshot is an error, never a panic or a huge
//! allocation. Captures with lazily read args (XPlane) are not snapshotted.

use super::args::ArgsArena;
use super::capture::*;
use super::category::Category;
use super::strings::{Interner, StrId};
use super::{ArgsRef, Ps};
use std::io::{self, Write};

const MAGIC: &[u8; 6] = b"TTSNAP";
/// Bumped whenever the model or this layout changes: older snapshots are then ignored.
pub const VERSION: u32 = 2;

/// Why a snapshot could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError {
    /// Byte offset where reading stopped.
    pub offset: usize,
    /// What was expected there.
    pub expected: &'static str,
}

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "snapshot: expected {} at byte {}",
            self.expected, self.offset
        )
    }
}

/// The running checksum: 8-byte words in order, then the tail bytes and the total length.
#[derive(Clone, Copy)]
struct Sum {
    h: u64,
    len: u64,
}

const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl Sum {
    fn new() -> Sum {
        Sum { h: K, len: 0 }
    }
    /// Absorbs `b`, whose length is a multiple of 8.
    fn words(&mut self, b: &[u8]) {
        for c in b.chunks_exact(8) {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            self.h = (self.h ^ u64::from_le_bytes(a))
                .wrapping_mul(K)
                .rotate_left(29);
        }
        self.len += b.len() as u64;
    }
    fn finish(mut self, tail: &[u8]) -> u64 {
        for &x in tail {
            self.h = (self.h ^ u64::from(x)).wrapping_mul(K).rotate_left(29);
        }
        self.h ^= self.len + tail.len() as u64;
        self.h ^ (self.h >> 31)
    }
}

/// The checksum of a whole body (what [`Enc`] computes while streaming).
fn checksum(b: &[u8]) -> u64 {
    let n = b.len() & !7;
    let mut s = Sum::new();
    s.words(&b[..n]);
    s.finish(&b[n..])
}

/// Writes through a 1 MiB buffer into `w`, hashing what it writes.
struct Enc<'w> {
    out: Vec<u8>,
    w: &'w mut dyn Write,
    sum: Sum,
    err: Option<io::Error>,
}

impl Enc<'_> {
    /// Passes whole words of the buffer on once it is big.
    fn spill(&mut self) {
        if self.out.len() < 1 << 20 {
            return;
        }
        let n = self.out.len() & !7;
        self.sum.words(&self.out[..n]);
        if self.err.is_none()
            && let Err(e) = self.w.write_all(&self.out[..n])
        {
            self.err = Some(e);
        }
        self.out.drain(..n);
    }
    fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        for c in b.chunks(1 << 16) {
            self.out.extend_from_slice(c);
            self.spill();
        }
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn key(&mut self, k: Key) {
        match k {
            Key::Int(i) => {
                self.u8(0);
                self.i64(i);
            }
            Key::Str(s) => {
                self.u8(1);
                self.i64(i64::from(s.0));
            }
        }
    }
    /// A column of fixed-size values.
    fn col<T: Copy, const N: usize>(&mut self, v: &[T], f: impl Fn(T) -> [u8; N]) {
        self.len(v.len());
        for part in v.chunks(1 << 14) {
            for &x in part {
                self.out.extend_from_slice(&f(x));
            }
            self.spill();
        }
    }
}

struct Dec<'a> {
    b: &'a [u8],
    pos: usize,
}

type R<T> = Result<T, SnapshotError>;

impl<'a> Dec<'a> {
    fn err<T>(&self, expected: &'static str) -> R<T> {
        Err(SnapshotError {
            offset: self.pos,
            expected,
        })
    }
    fn take(&mut self, n: usize, what: &'static str) -> R<&'a [u8]> {
        match self
            .pos
            .checked_add(n)
            .and_then(|e| self.b.get(self.pos..e))
        {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => self.err(what),
        }
    }
    fn arr<const N: usize>(&mut self, what: &'static str) -> R<[u8; N]> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    fn u8(&mut self, what: &'static str) -> R<u8> {
        Ok(self.arr::<1>(what)?[0])
    }
    fn u16(&mut self, what: &'static str) -> R<u16> {
        Ok(u16::from_le_bytes(self.arr(what)?))
    }
    fn u32(&mut self, what: &'static str) -> R<u32> {
        Ok(u32::from_le_bytes(self.arr(what)?))
    }
    fn u64(&mut self, what: &'static str) -> R<u64> {
        Ok(u64::from_le_bytes(self.arr(what)?))
    }
    fn i64(&mut self, what: &'static str) -> R<i64> {
        Ok(i64::from_le_bytes(self.arr(what)?))
    }
    /// A length whose `size`-byte elements must fit in what is left.
    fn len(&mut self, size: usize, what: &'static str) -> R<usize> {
        let n = self.u64(what)?;
        let left = (self.b.len() - self.pos) as u64;
        if n.saturating_mul(size.max(1) as u64) > left {
            return self.err(what);
        }
        Ok(n as usize)
    }
    fn bytes(&mut self, what: &'static str) -> R<&'a [u8]> {
        let n = self.len(1, what)?;
        self.take(n, what)
    }
    fn str(&mut self, what: &'static str) -> R<&'a str> {
        let b = self.bytes(what)?;
        match std::str::from_utf8(b) {
            Ok(s) => Ok(s),
            Err(_) => self.err(what),
        }
    }
    fn key(&mut self, what: &'static str) -> R<Key> {
        match self.u8(what)? {
            0 => Ok(Key::Int(self.i64(what)?)),
            1 => Ok(Key::Str(StrId(self.i64(what)? as u32))),
            _ => self.err(what),
        }
    }
    fn col<T, const N: usize>(
        &mut self,
        what: &'static str,
        f: impl Fn([u8; N]) -> T,
    ) -> R<Vec<T>> {
        let n = self.len(N, what)?;
        let raw = self.take(n * N, what)?;
        Ok(raw
            .chunks_exact(N)
            .map(|c| {
                let mut a = [0u8; N];
                a.copy_from_slice(c);
                f(a)
            })
            .collect())
    }
}

const CATEGORIES: [Category; 16] = [
    Category::CpuOp,
    Category::UserAnnotation,
    Category::GpuUserAnnotation,
    Category::Kernel,
    Category::Memcpy,
    Category::Memset,
    Category::Runtime,
    Category::Driver,
    Category::PythonFunction,
    Category::CpuInstant,
    Category::Overhead,
    Category::Trace,
    Category::Sync,
    Category::Collective,
    Category::Flow,
    Category::Other,
];
const FORMATS: [Format; 4] = [
    Format::XPlane,
    Format::Kineto,
    Format::XProfJson,
    Format::Chrome,
];
const PROCESS_KINDS: [ProcessKind; 5] = [
    ProcessKind::Host,
    ProcessKind::Gpu,
    ProcessKind::Tpu,
    ProcessKind::Device,
    ProcessKind::Other,
];
const TRACK_KINDS: [TrackKind; 6] = [
    TrackKind::Thread,
    TrackKind::GpuStream,
    TrackKind::XLine,
    TrackKind::Derived,
    TrackKind::Counter,
    TrackKind::Async,
];

fn index_of<T: PartialEq>(all: &[T], v: &T) -> u8 {
    all.iter().position(|x| x == v).unwrap_or(0) as u8
}

/// True when `c` can be snapshotted (not for lazily read args: XPlane).
pub fn supported(c: &Capture) -> bool {
    c.args.lazy.is_none()
}

/// `c` as a snapshot in memory; `None` when not [`supported`].
pub fn encode(c: &Capture) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    encode_to(c, &mut v).ok()?.then_some(v)
}

/// Streams `c` as a snapshot into `w` (through a 1 MiB buffer: no second copy of the model);
/// `Ok(false)` when not [`supported`].
pub fn encode_to(c: &Capture, w: &mut dyn Write) -> io::Result<bool> {
    if !supported(c) {
        return Ok(false);
    }
    let mut e = Enc {
        out: Vec::with_capacity(1 << 21),
        w,
        sum: Sum::new(),
        err: None,
    };
    e.out.extend_from_slice(MAGIC);
    e.u32(VERSION);
    match c.format {
        None => e.u8(0xff),
        Some(f) => e.u8(index_of(&FORMATS, &f)),
    }
    // Strings, in id order (id 0 is the empty string).
    e.len(c.strings.len());
    for (_, s) in c.strings.iter() {
        e.str(s);
    }
    let (data, dropped, inherits) = c.args.raw_parts();
    e.bytes(data);
    e.u64(dropped);
    e.u8(u8::from(inherits));
    e.len(c.processes.len());
    for p in &c.processes {
        e.key(p.key);
        e.u32(p.name.0);
        e.u32(p.label.0);
        e.i64(p.sort_index);
        e.u8(index_of(&PROCESS_KINDS, &p.kind));
        e.u8(u8::from(p.hidden));
    }
    e.len(c.tracks.len());
    for t in &c.tracks {
        e.u32(t.process);
        e.key(t.key);
        e.u32(t.name.0);
        e.u8(index_of(&TRACK_KINDS, &t.kind));
        e.i64(t.sort_index);
        e.u32(t.slices.0);
        e.u32(t.slices.1);
        e.u32(t.instants.0);
        e.u32(t.instants.1);
        e.u32(t.counter.unwrap_or(u32::MAX));
        e.u8(u8::from(t.counter.is_some()));
        e.u16(t.lanes);
        e.u16(t.max_depth);
        e.col(&t.group_bases, u16::to_le_bytes);
    }
    let s = &c.slices;
    e.col(&s.start, i64::to_le_bytes);
    e.col(&s.dur, i64::to_le_bytes);
    e.col(&s.name, |x| x.0.to_le_bytes());
    e.col(&s.class, u16::to_le_bytes);
    e.len(s.classes.len());
    for &(cat, k) in &s.classes {
        e.u32(cat.0);
        e.u8(index_of(&CATEGORIES, &k));
    }
    e.col(&s.lane, u16::to_le_bytes);
    e.col(&s.parent, u32::to_le_bytes);
    e.col(&s.args, |x| x.0.to_le_bytes());
    e.col(&s.corr, u32::to_le_bytes);
    e.len(s.corr_wide.len());
    for &(i, v) in &s.corr_wide {
        e.u32(i);
        e.u64(v);
    }
    e.col(&s.flags, |x| [x]);
    let i = &c.instants;
    e.col(&i.ts, i64::to_le_bytes);
    e.col(&i.name, |x| x.0.to_le_bytes());
    e.col(&i.cat, |x| x.0.to_le_bytes());
    e.col(&i.args, |x| x.0.to_le_bytes());
    e.col(&i.track, u32::to_le_bytes);
    e.col(&i.scope, |x| [x]);
    e.len(c.counters.len());
    for k in &c.counters {
        e.u32(k.track);
        e.u32(k.name.0);
        e.col(&k.ts, i64::to_le_bytes);
        e.col(&k.value, f64::to_le_bytes);
    }
    e.len(c.flows.len());
    for f in &c.flows {
        e.u64(f.id);
        e.u32(f.cat.0);
        e.u32(f.from);
        e.u32(f.to);
    }
    e.len(c.aggregated.len());
    for a in &c.aggregated {
        e.u32(a.track);
        e.u32(a.name.0);
        e.u64(a.occurrences);
        e.i64(a.dur);
    }
    e.u8(u8::from(c.origin_epoch_ns.is_some()));
    e.i64(c.origin_epoch_ns.unwrap_or(0));
    e.i64(c.span.0);
    e.i64(c.span.1);
    e.u32(c.metadata.0);
    e.len(c.warnings.len());
    for w in &c.warnings {
        e.str(w.kind);
        e.u64(w.count);
        e.str(&w.message);
    }
    e.out.extend_from_slice(MAGIC);
    let n = e.out.len() & !7;
    e.sum.words(&e.out[..n]);
    let sum = e.sum.finish(&e.out[n..]);
    e.u64(sum);
    if let Some(err) = e.err {
        return Err(err);
    }
    e.w.write_all(&e.out)?;
    Ok(true)
}

/// Reads a snapshot written by [`encode`]; `source` is the file it stands for.
pub fn decode(b: &[u8], source: SourceInfo) -> Result<Capture, SnapshotError> {
    let body = b.len().saturating_sub(8);
    let sum = b.get(body..).and_then(|t| <[u8; 8]>::try_from(t).ok());
    if sum.map(u64::from_le_bytes) != Some(checksum(&b[..body])) {
        return Err(SnapshotError {
            offset: body,
            expected: "a matching checksum",
        });
    }
    let b = &b[..body];
    let mut d = Dec { b, pos: 0 };
    if d.take(MAGIC.len(), "magic")? != MAGIC {
        return d.err("magic TTSNAP");
    }
    if d.u32("version")? != VERSION {
        return d.err("this tracetui's snapshot version");
    }
    let format = match d.u8("format")? {
        0xff => None,
        f => Some(*FORMATS.get(f as usize).ok_or(SnapshotError {
            offset: d.pos,
            expected: "a format",
        })?),
    };
    let n = d.len(8, "string count")?;
    let mut strings = Interner::new();
    for i in 0..n {
        let s = d.str("a string")?;
        if i > 0 && strings.intern(s) != StrId(i as u32) {
            return d.err("distinct strings");
        }
    }
    let nstr = strings.len() as u32;
    let sid = |d: &Dec<'_>, v: u32| -> R<StrId> {
        if v < nstr {
            Ok(StrId(v))
        } else {
            d.err("a string id")
        }
    };
    let data = d.bytes("args arena")?.to_vec();
    let dropped = d.u64("dropped blocks")?;
    let inherits = d.u8("inherit flag")? != 0;
    let args = ArgsArena::from_raw_parts(data, dropped, inherits);
    let np = d.len(23, "process count")?;
    let mut processes = Vec::with_capacity(np);
    for _ in 0..np {
        let key = d.key("process key")?;
        let name = d.u32("process name")?;
        let label = d.u32("process label")?;
        processes.push(Process {
            key,
            name: sid(&d, name)?,
            label: sid(&d, label)?,
            sort_index: d.i64("sort index")?,
            kind: *PROCESS_KINDS
                .get(d.u8("process kind")? as usize)
                .ok_or(SnapshotError {
                    offset: d.pos,
                    expected: "a process kind",
                })?,
            hidden: d.u8("hidden")? != 0,
        });
    }
    let nt = d.len(50, "track count")?;
    let mut tracks = Vec::with_capacity(nt);
    for _ in 0..nt {
        let process = d.u32("track process")?;
        if process as usize >= np {
            return d.err("a process index");
        }
        let key = d.key("track key")?;
        let name = d.u32("track name")?;
        let name = sid(&d, name)?;
        let kind = *TRACK_KINDS
            .get(d.u8("track kind")? as usize)
            .ok_or(SnapshotError {
                offset: d.pos,
                expected: "a track kind",
            })?;
        let sort_index = d.i64("track sort index")?;
        let slices = (d.u32("slice range")?, d.u32("slice range")?);
        let instants = (d.u32("instant range")?, d.u32("instant range")?);
        let counter = d.u32("counter")?;
        let has_counter = d.u8("counter flag")? != 0;
        tracks.push(Track {
            process,
            key,
            name,
            kind,
            sort_index,
            slices,
            instants,
            counter: has_counter.then_some(counter),
            lanes: d.u16("lanes")?,
            max_depth: d.u16("max depth")?,
            group_bases: d.col("group bases", u16::from_le_bytes)?,
        });
    }
    let start = d.col("slice starts", i64::from_le_bytes)?;
    let dur = d.col("slice durations", i64::from_le_bytes)?;
    let name = d.col("slice names", |a| StrId(u32::from_le_bytes(a)))?;
    let class = d.col("slice classes", u16::from_le_bytes)?;
    let nc = d.len(5, "class count")?;
    let mut classes = Vec::with_capacity(nc);
    for _ in 0..nc {
        let cat = d.u32("class category")?;
        let k = d.u8("category kind")?;
        let k = *CATEGORIES.get(k as usize).ok_or(SnapshotError {
            offset: d.pos,
            expected: "a category",
        })?;
        classes.push((sid(&d, cat)?, k));
    }
    let lane = d.col("slice lanes", u16::from_le_bytes)?;
    let parent = d.col("slice parents", u32::from_le_bytes)?;
    let sargs = d.col("slice args", |a| ArgsRef(u32::from_le_bytes(a)))?;
    let corr = d.col("slice correlations", u32::from_le_bytes)?;
    let nw = d.len(12, "wide correlations")?;
    let mut corr_wide = Vec::with_capacity(nw);
    for _ in 0..nw {
        corr_wide.push((d.u32("wide correlation")?, d.u64("wide correlation")?));
    }
    let flags = d.col("slice flags", |a: [u8; 1]| a[0])?;
    let n = start.len();
    if [
        dur.len(),
        name.len(),
        class.len(),
        lane.len(),
        parent.len(),
        sargs.len(),
        corr.len(),
        flags.len(),
    ]
    .iter()
    .any(|&l| l != n)
        || name.iter().any(|s| s.0 >= nstr)
        || class.iter().any(|&k| k as usize >= classes.len().max(1))
        || parent.iter().any(|&p| p != NO_SLICE && p as usize >= n)
        || tracks
            .iter()
            .any(|t| t.slices.0 > t.slices.1 || t.slices.1 as usize > n)
    {
        return d.err("consistent slice columns");
    }
    let slices = Slices {
        start,
        dur,
        name,
        class,
        classes,
        lane,
        parent,
        args: sargs,
        corr,
        corr_wide,
        flags,
    };
    let instants = Instants {
        ts: d.col("instant times", i64::from_le_bytes)?,
        name: d.col("instant names", |a| StrId(u32::from_le_bytes(a)))?,
        cat: d.col("instant categories", |a| StrId(u32::from_le_bytes(a)))?,
        args: d.col("instant args", |a| ArgsRef(u32::from_le_bytes(a)))?,
        track: d.col("instant tracks", u32::from_le_bytes)?,
        scope: d.col("instant scopes", |a: [u8; 1]| a[0])?,
    };
    let ni = instants.ts.len();
    if [
        instants.name.len(),
        instants.cat.len(),
        instants.args.len(),
        instants.track.len(),
        instants.scope.len(),
    ]
    .iter()
    .any(|&l| l != ni)
        || instants
            .name
            .iter()
            .chain(&instants.cat)
            .any(|s| s.0 >= nstr)
        || instants.track.iter().any(|&t| t as usize >= nt)
        || tracks
            .iter()
            .any(|t| t.instants.0 > t.instants.1 || t.instants.1 as usize > ni)
    {
        return d.err("consistent instant columns");
    }
    let nk = d.len(24, "counter count")?;
    let mut counters = Vec::with_capacity(nk);
    for _ in 0..nk {
        let track = d.u32("counter track")?;
        let name = d.u32("counter name")?;
        let ts: Vec<Ps> = d.col("counter times", i64::from_le_bytes)?;
        let value = d.col("counter values", f64::from_le_bytes)?;
        if track as usize >= nt || ts.len() != value.len() {
            return d.err("a consistent counter");
        }
        counters.push(CounterSeries {
            track,
            name: sid(&d, name)?,
            ts,
            value,
        });
    }
    if tracks
        .iter()
        .any(|t| t.counter.is_some_and(|k| k as usize >= nk))
    {
        return d.err("a counter index");
    }
    let nf = d.len(20, "flow count")?;
    let mut flows = Vec::with_capacity(nf);
    for _ in 0..nf {
        let id = d.u64("flow id")?;
        let cat = d.u32("flow category")?;
        let (from, to) = (d.u32("flow from")?, d.u32("flow to")?);
        if [from, to].iter().any(|&s| s != NO_SLICE && s as usize >= n) {
            return d.err("a flow endpoint");
        }
        flows.push(Flow {
            id,
            cat: sid(&d, cat)?,
            from,
            to,
        });
    }
    let na = d.len(24, "aggregated count")?;
    let mut aggregated = Vec::with_capacity(na);
    for _ in 0..na {
        let track = d.u32("aggregated track")?;
        let name = d.u32("aggregated name")?;
        if track as usize >= nt {
            return d.err("a track index");
        }
        aggregated.push(Aggregated {
            track,
            name: sid(&d, name)?,
            occurrences: d.u64("occurrences")?,
            dur: d.i64("aggregated duration")?,
        });
    }
    let has_origin = d.u8("origin flag")? != 0;
    let origin = d.i64("origin")?;
    let span = (d.i64("span")?, d.i64("span")?);
    let metadata = ArgsRef(d.u32("metadata")?);
    let nw = d.len(17, "warning count")?;
    let mut warnings = Vec::with_capacity(nw);
    for _ in 0..nw {
        let kind = warning_kind(d.str("warning kind")?);
        let count = d.u64("warning count")?;
        let message = d.str("warning message")?.to_string();
        warnings.push(Warning {
            kind,
            count,
            message,
        });
    }
    if d.take(MAGIC.len(), "end marker")? != MAGIC || d.pos != b.len() {
        return d.err("the end marker");
    }
    Ok(Capture {
        source,
        format,
        strings,
        args,
        processes,
        tracks,
        slices,
        instants,
        counters,
        flows,
        aggregated,
        origin_epoch_ns: has_origin.then_some(origin),
        span,
        metadata,
        warnings,
    })
}

/// Warning kinds are `&'static str`: each distinct kind read from a snapshot is kept once for
/// the life of the process (a handful of short names).
fn warning_kind(s: &str) -> &'static str {
    use std::sync::{Mutex, OnceLock};
    static KINDS: OnceLock<Mutex<Vec<&'static str>>> = OnceLock::new();
    let m = KINDS.get_or_init(|| Mutex::new(Vec::new()));
    let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&k) = g.iter().find(|&&k| k == s) {
        return k;
    }
    if g.len() >= 256 {
        return "other";
    }
    let k: &'static str = Box::leak(s.to_string().into_boxed_str());
    g.push(k);
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{Progress, chrome};

    /// Every part of two captures, compared through their debug text (the interner by content).
    fn same(a: &Capture, b: &Capture) -> bool {
        let strs = |c: &Capture| {
            c.strings
                .iter()
                .map(|(_, s)| s.to_string())
                .collect::<Vec<_>>()
        };
        strs(a) == strs(b)
            && format!(
                "{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}",
                a.format,
                a.args,
                a.processes,
                a.tracks,
                a.slices,
                a.instants,
                a.counters,
                a.flows,
                a.aggregated,
                (a.origin_epoch_ns, a.span, a.metadata),
                a.warnings,
                a.source
            ) == format!(
                "{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}",
                b.format,
                b.args,
                b.processes,
                b.tracks,
                b.slices,
                b.instants,
                b.counters,
                b.flows,
                b.aggregated,
                (b.origin_epoch_ns, b.span, b.metadata),
                b.warnings,
                b.source
            )
    }

    fn fixtures() -> Vec<Capture> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chrome");
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.to_string_lossy().to_string();
            if name.ends_with(".json") || name.ends_with(".json.gz") {
                let src = SourceInfo {
                    path: p.clone(),
                    ..SourceInfo::default()
                };
                out.push(chrome::load(&p, src, &Progress::default()).unwrap());
            }
        }
        out
    }

    #[test]
    fn round_trip_of_every_fixture() {
        let caps = fixtures();
        assert!(caps.len() >= 10);
        for c in &caps {
            let snap = encode(c).unwrap();
            let back = decode(&snap, c.source.clone()).unwrap();
            assert!(same(c, &back), "{}", c.source.path.display());
        }
    }

    #[test]
    fn corrupt_or_cut_snapshots_are_errors() {
        let caps = fixtures();
        let c = caps
            .iter()
            .max_by_key(|c| c.slices.len())
            .expect("a fixture");
        let snap = encode(c).unwrap();
        // Every cut fails cleanly.
        for cut in (0..snap.len()).step_by((snap.len() / 300).max(1)) {
            assert!(
                decode(&snap[..cut], SourceInfo::default()).is_err(),
                "cut {cut}"
            );
        }
        // Flipped bytes never panic (most fail; some only change a value).
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut bad = snap.clone();
            let i = (x as usize) % bad.len();
            bad[i] ^= (x >> 32) as u8 | 1;
            let _ = decode(&bad, SourceInfo::default());
        }
        let mut wrong = snap.clone();
        wrong[6] ^= 1;
        assert_eq!(
            decode(&wrong, SourceInfo::default()).unwrap_err().expected,
            "a matching checksum"
        );
        // Past the checksum, the parser's own checks hold (a snapshot with a valid sum but a
        // wrong version or cut body).
        let body = &snap[..snap.len() - 8];
        let mut v = body.to_vec();
        v[6] ^= 1;
        let resum = |v: &[u8]| {
            let mut w = v.to_vec();
            w.extend_from_slice(&checksum(v).to_le_bytes());
            w
        };
        assert_eq!(
            decode(&resum(&v), SourceInfo::default())
                .unwrap_err()
                .expected,
            "this tracetui's snapshot version"
        );
        for cut in (0..body.len()).step_by((body.len() / 300).max(1)) {
            assert!(
                decode(&resum(&body[..cut]), SourceInfo::default()).is_err(),
                "cut {cut}"
            );
        }
    }
}
