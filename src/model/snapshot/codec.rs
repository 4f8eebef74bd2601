//! The byte layout of a snapshot: format constants, the running checksum, a buffered
//! little-endian writer ([`Enc`]) and a reader that checks every length against the bytes left
//! ([`Dec`]), and the codes of the model's enums.

use crate::model::capture::*;
use crate::model::category::Category;
use crate::model::strings::StrId;
use std::io::{self, Write};

pub const MAGIC: &[u8; 6] = b"TTSNAP";
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
pub(super) struct Sum {
    pub(super) h: u64,
    pub(super) len: u64,
}

pub(super) const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl Sum {
    pub(super) fn new() -> Sum {
        Sum { h: K, len: 0 }
    }
    /// Absorbs `b`, whose length is a multiple of 8.
    pub(super) fn words(&mut self, b: &[u8]) {
        for c in b.chunks_exact(8) {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            self.h = (self.h ^ u64::from_le_bytes(a))
                .wrapping_mul(K)
                .rotate_left(29);
        }
        self.len += b.len() as u64;
    }
    pub(super) fn finish(mut self, tail: &[u8]) -> u64 {
        for &x in tail {
            self.h = (self.h ^ u64::from(x)).wrapping_mul(K).rotate_left(29);
        }
        self.h ^= self.len + tail.len() as u64;
        self.h ^ (self.h >> 31)
    }
}

/// The checksum of a whole body (what [`Enc`] computes while streaming).
pub(super) fn checksum(b: &[u8]) -> u64 {
    let n = b.len() & !7;
    let mut s = Sum::new();
    s.words(&b[..n]);
    s.finish(&b[n..])
}

/// Writes through a 1 MiB buffer into `w`, hashing what it writes.
pub(super) struct Enc<'w> {
    pub(super) out: Vec<u8>,
    pub(super) w: &'w mut dyn Write,
    pub(super) sum: Sum,
    pub(super) err: Option<io::Error>,
}

impl Enc<'_> {
    /// Passes whole words of the buffer on once it is big.
    pub(super) fn spill(&mut self) {
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
    pub(super) fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    pub(super) fn u16(&mut self, v: u16) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn i64(&mut self, v: i64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    pub(super) fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    pub(super) fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        for c in b.chunks(1 << 16) {
            self.out.extend_from_slice(c);
            self.spill();
        }
    }
    pub(super) fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    pub(super) fn key(&mut self, k: Key) {
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
    pub(super) fn col<T: Copy, const N: usize>(&mut self, v: &[T], f: impl Fn(T) -> [u8; N]) {
        self.len(v.len());
        for part in v.chunks(1 << 14) {
            for &x in part {
                self.out.extend_from_slice(&f(x));
            }
            self.spill();
        }
    }
}

pub(super) struct Dec<'a> {
    pub(super) b: &'a [u8],
    pub(super) pos: usize,
}

pub(super) type R<T> = Result<T, SnapshotError>;

impl<'a> Dec<'a> {
    pub(super) fn err<T>(&self, expected: &'static str) -> R<T> {
        Err(SnapshotError {
            offset: self.pos,
            expected,
        })
    }
    pub(super) fn take(&mut self, n: usize, what: &'static str) -> R<&'a [u8]> {
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
    pub(super) fn arr<const N: usize>(&mut self, what: &'static str) -> R<[u8; N]> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    pub(super) fn u8(&mut self, what: &'static str) -> R<u8> {
        Ok(self.arr::<1>(what)?[0])
    }
    pub(super) fn u16(&mut self, what: &'static str) -> R<u16> {
        Ok(u16::from_le_bytes(self.arr(what)?))
    }
    pub(super) fn u32(&mut self, what: &'static str) -> R<u32> {
        Ok(u32::from_le_bytes(self.arr(what)?))
    }
    pub(super) fn u64(&mut self, what: &'static str) -> R<u64> {
        Ok(u64::from_le_bytes(self.arr(what)?))
    }
    pub(super) fn i64(&mut self, what: &'static str) -> R<i64> {
        Ok(i64::from_le_bytes(self.arr(what)?))
    }
    /// A length whose `size`-byte elements must fit in what is left.
    pub(super) fn len(&mut self, size: usize, what: &'static str) -> R<usize> {
        let n = self.u64(what)?;
        let left = (self.b.len() - self.pos) as u64;
        if n.saturating_mul(size.max(1) as u64) > left {
            return self.err(what);
        }
        Ok(n as usize)
    }
    pub(super) fn bytes(&mut self, what: &'static str) -> R<&'a [u8]> {
        let n = self.len(1, what)?;
        self.take(n, what)
    }
    pub(super) fn str(&mut self, what: &'static str) -> R<&'a str> {
        let b = self.bytes(what)?;
        match std::str::from_utf8(b) {
            Ok(s) => Ok(s),
            Err(_) => self.err(what),
        }
    }
    pub(super) fn key(&mut self, what: &'static str) -> R<Key> {
        match self.u8(what)? {
            0 => Ok(Key::Int(self.i64(what)?)),
            1 => Ok(Key::Str(StrId(self.i64(what)? as u32))),
            _ => self.err(what),
        }
    }
    pub(super) fn col<T, const N: usize>(
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

pub(super) const CATEGORIES: [Category; 16] = [
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
pub(super) const FORMATS: [Format; 6] = [
    Format::XPlane,
    Format::Kineto,
    Format::XProfJson,
    Format::Chrome,
    Format::Folded,
    Format::Snapshot,
];
pub(super) const PROCESS_KINDS: [ProcessKind; 5] = [
    ProcessKind::Host,
    ProcessKind::Gpu,
    ProcessKind::Tpu,
    ProcessKind::Device,
    ProcessKind::Other,
];
pub(super) const TRACK_KINDS: [TrackKind; 6] = [
    TrackKind::Thread,
    TrackKind::GpuStream,
    TrackKind::XLine,
    TrackKind::Derived,
    TrackKind::Counter,
    TrackKind::Async,
];

pub(super) fn index_of<T: PartialEq>(all: &[T], v: &T) -> u8 {
    all.iter().position(|x| x == v).unwrap_or(0) as u8
}

/// Warning kinds are `&'static str`: each distinct kind read from a snapshot is kept once for
/// the life of the process (a handful of short names).
pub(super) fn warning_kind(s: &str) -> &'static str {
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
