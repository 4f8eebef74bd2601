//! Chunk-parallel parsing of a mapped `traceEvents` array.
//!
//! The document's frame (everything outside the events array) is parsed by the usual seeds
//! through [`Frame`], a reader over the mapped text. When the events array opens, [`run`] cuts
//! it into chunks at candidate event boundaries (`}` `,` `{` with optional whitespace), parses
//! the chunks on all cores, each into its own interner and args arena, and replays them in file
//! order into the one [`Loader`]: strings are re-interned in the order the sequential parse would
//! have met them and args blocks are copied in event order, so the capture is identical to the
//! single-threaded one (same ids, same arena offsets, same warnings). A candidate boundary is
//! trusted only once the previous chunk's parse, starting from a verified boundary, lands on it
//! exactly; any failure (bad boundary, syntax error, truncation, cancel) returns `Err` and the
//! caller parses the whole file again single-threaded, which owns all error semantics.
//!
//! Boundaries are found as the text becomes readable ([`Chunked::avail`]), so a `.gz` that a
//! thread is still inflating is parsed while it inflates. Each chunk's events go through the
//! hand-written scanner ([`super::scan`]) first, serde for what it declines.

use super::event::{Loader, RawEvent};
use super::scan;
use super::seed::EventSeed;
use crate::formats::Progress;
use crate::model::{ArgsArena, ArgsRef, Interner, Key, StrId};
use serde::de::{Deserialize, DeserializeSeed, Deserializer, Error as _};
use std::cell::{Cell, RefCell};
use std::io::{self, Read};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Condvar, Mutex};

/// Inputs smaller than this are parsed single-threaded.
pub const MIN_BYTES: usize = 8 << 20;
/// Target chunk size.
pub const CHUNK_BYTES: usize = 8 << 20;

/// Progress sink for chunk loaders (the real progress is reported by the replaying thread).
static IDLE: Progress = Progress {
    bytes_done: AtomicU64::new(0),
    bytes_total: AtomicU64::new(0),
    events: AtomicU64::new(0),
    cancel: AtomicBool::new(false),
    max_events: AtomicU64::new(0),
};

/// Bytes readable so far and whether that is all of them (a file still being inflated).
pub type Avail<'a> = &'a (dyn Fn() -> (usize, bool) + Sync);

/// The mapped text and the frame reader's position, shared with [`run`].
pub struct Chunked<'a> {
    /// The whole input (for a growing input: its reserved map).
    pub bytes: &'a [u8],
    /// Next byte the frame reader hands out.
    pub pos: Rc<Cell<usize>>,
    /// Target chunk size in bytes.
    pub chunk_bytes: usize,
    /// Parsing threads (including the caller's).
    pub threads: usize,
    /// For an input still being written (inflated `.gz`): how much is readable; `None`: all.
    pub avail: Option<Avail<'a>>,
}

/// `(readable bytes, complete)` of an input, clamped to `bytes`.
fn readable(bytes: &[u8], avail: Option<Avail<'_>>) -> (usize, bool) {
    avail.map_or((bytes.len(), true), |f| {
        let (n, done) = f();
        (n.min(bytes.len()), done)
    })
}

/// Waits (polling) until `n` bytes are readable or the input is complete.
fn wait_for(bytes: &[u8], avail: Option<Avail<'_>>, n: usize) -> (usize, bool) {
    loop {
        let (a, done) = readable(bytes, avail);
        if a >= n || done {
            return (a, done);
        }
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
}

/// Reader over the mapped text whose position [`run`] moves past the events array.
pub struct Frame<'a> {
    /// The whole input.
    pub bytes: &'a [u8],
    /// Shared position.
    pub pos: Rc<Cell<usize>>,
    /// See [`Chunked::avail`].
    pub avail: Option<Avail<'a>>,
}

impl Read for Frame<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let p = self.pos.get();
        let (a, _) = wait_for(self.bytes, self.avail, p.saturating_add(1));
        let rest = self.bytes.get(p..a).unwrap_or(&[]);
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos.set(p + n);
        Ok(n)
    }
}

/// One parsed chunk, in its own string and args space.
struct Parsed {
    strings: Interner,
    args: ArgsArena,
    events: Vec<RawEvent>,
    /// Length of the chunk's interner after each event.
    strs_after: Vec<u32>,
    args_not_object: u64,
    /// Where the chunk's parse stopped (next chunk's start, or the closing `]`).
    end: usize,
}

thread_local! {
    /// The chunk loader of this thread while a chunk is parsed (see [`Ev`]).
    static CUR: RefCell<Option<Loader<'static>>> = const { RefCell::new(None) };
}

/// One event parsed into the thread's chunk loader, with its interner length afterwards.
struct Ev(RawEvent, u32);

impl<'de> Deserialize<'de> for Ev {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        CUR.with(|c| {
            let mut g = c.borrow_mut();
            let ld = g
                .as_mut()
                .ok_or_else(|| D::Error::custom("no chunk loader"))?;
            let mut ev = RawEvent::default();
            ev.clear();
            EventSeed { ld, ev: &mut ev }.deserialize(d)?;
            let n = ld.b.strings.len() as u32;
            Ok(Ev(ev, n))
        })
    }
}

fn skip_ws(b: &[u8], mut p: usize) -> usize {
    while let Some(c) = b.get(p) {
        if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        p += 1;
    }
    p
}

/// First `{` at or after `from` preceded by `}` `,` (whitespace allowed): a likely event start.
fn next_boundary(b: &[u8], from: usize) -> Option<usize> {
    let mut p = from;
    loop {
        p += b.get(p..)?.iter().position(|&c| c == b'{')?;
        let mut q = p;
        let mut seen_comma = false;
        let ok = loop {
            if q == 0 {
                break false;
            }
            q -= 1;
            match b.get(q) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => {}
                Some(b',') if !seen_comma => seen_comma = true,
                Some(b'}') if seen_comma => break true,
                _ => break false,
            }
        };
        if ok {
            return Some(p);
        }
        p += 1;
    }
}

/// Parses the events from `start` until exactly `stop` (the next chunk's start) or, for the
/// last chunk, the closing `]`. `Err` on anything else.
fn parse_chunk(
    bytes: &[u8],
    start: usize,
    stop: Option<usize>,
    progress: &Progress,
) -> Result<Parsed, ()> {
    CUR.with(|c| *c.borrow_mut() = Some(Loader::new(&IDLE)));
    // Kineto events take ~300 bytes of text: reserve once instead of growing by copies.
    let guess = (stop.unwrap_or(bytes.len()).saturating_sub(start) / 256).min(1 << 20);
    let mut events = Vec::with_capacity(guess);
    let mut strs_after = Vec::with_capacity(guess);
    let end = parse_elements(bytes, start, stop, &mut events, &mut strs_after, progress);
    let ld = CUR.with(|c| c.borrow_mut().take());
    let (end, mut ld) = (end?, ld.ok_or(())?);
    Ok(Parsed {
        strings: std::mem::take(&mut ld.b.strings),
        args: std::mem::take(&mut ld.b.args),
        events,
        strs_after,
        args_not_object: ld.args_not_object,
        end,
    })
}

fn parse_elements(
    bytes: &[u8],
    mut pos: usize,
    stop: Option<usize>,
    events: &mut Vec<RawEvent>,
    strs_after: &mut Vec<u32>,
    progress: &Progress,
) -> Result<usize, ()> {
    let mut plan = scan::Plan::default();
    let mut ev = RawEvent::default();
    loop {
        // The hand-written scanner takes the common shape; anything else goes through serde.
        let fast = CUR.with(|c| {
            let mut g = c.borrow_mut();
            let ld = g.as_mut()?;
            let end = scan::event(ld, &mut plan, &mut ev, bytes, pos)?;
            Some((end, ld.b.strings.len() as u32))
        });
        if let Some((end, n)) = fast {
            pos = end;
            events.push(ev);
            strs_after.push(n);
        } else {
            let rest = bytes.get(pos..).ok_or(())?;
            let mut it = serde_json::Deserializer::from_slice(rest).into_iter::<Ev>();
            let Some(Ok(Ev(ev, n))) = it.next() else {
                return Err(());
            };
            pos += it.byte_offset();
            events.push(ev);
            strs_after.push(n);
        }
        pos = skip_ws(bytes, pos);
        match (bytes.get(pos), stop) {
            (Some(b','), _) => {
                pos = skip_ws(bytes, pos + 1);
                if let Some(st) = stop {
                    if pos == st {
                        return Ok(pos);
                    }
                    if pos > st {
                        return Err(());
                    }
                }
            }
            (Some(b']'), None) => return Ok(pos),
            _ => return Err(()),
        }
        if events.len() & 4095 == 0 && progress.cancelled() {
            return Err(());
        }
    }
}

/// Copies args block `r` of `src` into `dst`, mapping string ids.
fn copy_args(dst: &mut ArgsArena, src: &Parsed, r: ArgsRef, map: &[StrId]) -> ArgsRef {
    // Chunk arenas hold plain blocks written moments ago (no inherit links, no lazy handles),
    // so the raw copy always applies.
    let m = |s: u32| map.get(s as usize).map_or(0, |x| x.0);
    dst.copy_mapped(&src.args, r, m).unwrap_or(ArgsRef::NONE)
}

/// Applies a parsed chunk to the loader as if its events had been parsed there.
fn replay(ld: &mut Loader<'_>, p: &Parsed, at: usize) {
    let mut map: Vec<StrId> = Vec::with_capacity(p.strings.len());
    let key = |k: Option<Key>, map: &[StrId]| match k {
        Some(Key::Str(s)) => Some(Key::Str(
            map.get(s.index()).copied().unwrap_or(StrId::EMPTY),
        )),
        other => other,
    };
    ld.last_str_addr = ld.input_range.0 + at;
    for (raw, &upto) in p.events.iter().zip(&p.strs_after) {
        // The strings this event met first, in the order the sequential parse interned them.
        while map.len() < upto as usize {
            let s = p.strings.get(StrId(map.len() as u32));
            map.push(ld.b.strings.intern(s));
        }
        let m = |s: StrId| map.get(s.index()).copied().unwrap_or(StrId::EMPTY);
        let mut ev = *raw;
        ev.name = m(raw.name);
        ev.cat = m(raw.cat);
        ev.id_text = m(raw.id_text);
        ev.pid = key(raw.pid, &map);
        ev.tid = key(raw.tid, &map);
        ev.args = copy_args(&mut ld.b.args, p, raw.args, &map);
        ld.apply(&ev);
        if ld.events & 4095 == 0 {
            ld.report_progress();
        }
    }
    ld.args_not_object += p.args_not_object;
}

/// Work shared by the parsing threads.
struct State {
    /// Next chunk nobody has claimed.
    next: usize,
    /// Chunks replayed so far.
    applied: usize,
    abort: bool,
    slots: Vec<Option<Result<Parsed, ()>>>,
    /// Chunk starts found so far (candidate event boundaries, verified by the parse).
    starts: Vec<usize>,
    /// Every boundary is known: the input is complete and the last chunk runs to its end.
    complete: bool,
}

impl State {
    /// Chunk `c` can be parsed: its end is known.
    fn ready(&self, c: usize) -> bool {
        c + 1 < self.starts.len() || (self.complete && c + 1 == self.starts.len())
    }

    /// Finds boundaries in what is readable, up to `ahead` chunks past the next claim.
    fn extend(&mut self, bytes: &[u8], avail: Option<Avail<'_>>, step: usize, ahead: usize) {
        while !self.complete && self.starts.len() <= self.next + ahead + 1 {
            let Some(&last) = self.starts.last() else {
                self.complete = true;
                break;
            };
            let t = last.saturating_add(step);
            let (a, done) = readable(bytes, avail);
            let found = if t < a {
                next_boundary(bytes.get(..a).unwrap_or(&[]), t)
            } else {
                None
            };
            match found {
                Some(b) => {
                    self.starts.push(b);
                    self.slots.push(None);
                }
                None => {
                    self.complete = done;
                    break;
                }
            }
        }
    }

    fn finished(&self, i: usize) -> bool {
        self.complete && i >= self.starts.len()
    }
}

/// Parses the events array whose `[` the frame reader has just consumed; on success the reader
/// continues at the array's closing `]`. Chunk boundaries are found as the input becomes
/// readable, so a `.gz` still being inflated is parsed while it inflates.
pub fn run(ld: &mut Loader<'_>, ch: &Chunked<'_>) -> Result<(), String> {
    let fail = || "chunked parse declined".to_string();
    let bytes = ch.bytes;
    let avail = ch.avail;
    let (a, _) = wait_for(bytes, avail, ch.pos.get().saturating_add(4096));
    let start = skip_ws(bytes.get(..a).unwrap_or(&[]), ch.pos.get());
    if bytes.get(..a).and_then(|b| b.get(start)) != Some(&b'{') {
        return Err(fail());
    }
    let step = ch.chunk_bytes.max(1);
    let ahead = ch.threads.max(1) + 1;
    let state = Mutex::new(State {
        next: 0,
        applied: 0,
        abort: false,
        slots: vec![None],
        starts: vec![start],
        complete: false,
    });
    let cv = Condvar::new();
    let progress = ld.progress();
    // The chunk starting at `s`, whose end the caller saw known: the next start, or (last) the
    // array's end.
    let chunk = |s: usize, stop: Option<usize>| -> Result<Parsed, ()> {
        let (a, _) = readable(bytes, avail);
        parse_chunk(bytes.get(..a).ok_or(())?, s, stop, progress)
    };
    let lock = || state.lock().unwrap_or_else(|e| e.into_inner());
    // Polls while the input grows (nobody signals new bytes); plain waits otherwise.
    fn wait<'m>(
        cv: &Condvar,
        g: std::sync::MutexGuard<'m, State>,
    ) -> std::sync::MutexGuard<'m, State> {
        if g.complete {
            cv.wait(g).unwrap_or_else(|e| e.into_inner())
        } else {
            cv.wait_timeout(g, std::time::Duration::from_millis(1))
                .unwrap_or_else(|e| e.into_inner())
                .0
        }
    }
    // Claims the next chunk when it is ready and within `limit`: (index, start, stop).
    let claim = |g: &mut State, limit: usize| -> Option<(usize, usize, Option<usize>)> {
        g.extend(bytes, avail, step, ahead);
        if g.next < limit && g.ready(g.next) {
            let c = g.next;
            g.next += 1;
            Some((c, g.starts[c], g.starts.get(c + 1).copied()))
        } else {
            None
        }
    };
    std::thread::scope(|sc| {
        for _ in 1..ch.threads {
            sc.spawn(|| {
                loop {
                    let (c, s, stop) = {
                        let mut g = lock();
                        loop {
                            if g.abort || g.finished(g.next) {
                                return;
                            }
                            let limit = g.applied + ahead;
                            if let Some(x) = claim(&mut g, limit) {
                                break x;
                            }
                            g = wait(&cv, g);
                        }
                    };
                    let r = chunk(s, stop);
                    let failed = r.is_err();
                    let mut g = lock();
                    if let Some(slot) = g.slots.get_mut(c) {
                        *slot = Some(r);
                    }
                    if failed {
                        g.abort = true;
                    }
                    drop(g);
                    cv.notify_all();
                }
            });
        }
        let res = (|| -> Result<usize, String> {
            let mut i = 0;
            let mut end = 0;
            loop {
                enum Act {
                    Apply(Result<Parsed, ()>, usize),
                    Parse(usize, usize, Option<usize>),
                    Done,
                }
                let act = {
                    let mut g = lock();
                    loop {
                        if g.finished(i) {
                            break Act::Done;
                        }
                        if let Some(r) = g.slots.get_mut(i).and_then(Option::take) {
                            break Act::Apply(r, g.starts[i]);
                        }
                        if let Some((c, s, stop)) = claim(&mut g, i + ahead) {
                            break Act::Parse(c, s, stop);
                        }
                        if g.abort {
                            return Err(fail());
                        }
                        g = wait(&cv, g);
                    }
                };
                let (parsed, at) = match act {
                    Act::Done => break,
                    Act::Apply(r, at) => (r, at),
                    Act::Parse(c, s, stop) => {
                        let r = chunk(s, stop);
                        if c != i {
                            let mut g = lock();
                            if let Some(slot) = g.slots.get_mut(c) {
                                *slot = Some(r);
                            }
                            continue;
                        }
                        (r, s)
                    }
                };
                let p = parsed.map_err(|()| fail())?;
                replay(ld, &p, at);
                end = p.end;
                drop(p);
                i += 1;
                lock().applied = i;
                cv.notify_all();
            }
            Ok(end)
        })();
        lock().abort = true;
        cv.notify_all();
        let end = res?;
        ch.pos.set(end);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::chrome::{load_bytes, load_bytes_chunked};
    use crate::model::SourceInfo;

    #[test]
    fn boundaries() {
        let t = br#"[{"a":{"b":1}}, {"x":"},{"} ,
 {"c":2}]"#;
        let b = next_boundary(t, 2).unwrap();
        assert_eq!(&t[b..b + 5], br#"{"x":"#);
        // Inside the string "},{" looks like a boundary: found here, rejected by the chain.
        let b2 = next_boundary(t, b + 1).unwrap();
        assert_eq!(t[b2 - 1], b',');
        assert!(next_boundary(t, t.len() - 3).is_none());
    }

    /// Sequential and chunked loads of `text` (chunked forced with `chunk` bytes, `threads`).
    fn both(text: &[u8], chunk: usize, threads: usize) -> (String, Option<String>) {
        let src = SourceInfo::default();
        let p = Progress::default();
        let seq = load_bytes(text, src.clone(), &p).unwrap();
        let par = load_bytes_chunked(text, src, &p, chunk, threads);
        (format!("{seq:?}"), par.map(|c| format!("{c:?}")))
    }

    fn assert_same(text: &[u8], chunk: usize, threads: usize) {
        let (seq, par) = both(text, chunk, threads);
        let par = par.unwrap_or_else(|| panic!("chunked path declined (chunk {chunk})"));
        assert!(
            seq == par,
            "chunked capture differs (chunk {chunk}, {threads} threads)"
        );
    }

    #[test]
    fn generated_kineto_identical() {
        for seed in [1u64, 7, 42] {
            let mut v = Vec::new();
            crate::synth::kineto::write_kineto_trace(&mut v, 3000, seed).unwrap();
            for (chunk, threads) in [(1 << 20, 2), (4096, 2), (777, 3), (100, 1)] {
                assert_same(&v, chunk, threads);
            }
        }
    }

    #[test]
    fn begin_end_across_chunks_identical() {
        // Nested B/E on 3 threads with counters, flows and instants; small chunks cut pairs.
        let mut t = String::from("{\"traceEvents\":[");
        let mut ts = 0u64;
        for i in 0..400 {
            let tid = i % 3;
            for d in 0..3 {
                ts += 1;
                t.push_str(&format!(
                    "{{\"ph\":\"B\",\"name\":\"f{d}_{}\",\"cat\":\"c\",\"pid\":1,\"tid\":{tid},\"ts\":{ts},\"args\":{{\"k{d}\":\"v{i}\",\"n\":[1,{{\"x\":{i}}}]}}}},",
                    i % 17
                ));
            }
            t.push_str(&format!(
                "{{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":{ts},\"args\":{{\"bytes\":{i}}}}},\n"
            ));
            t.push_str(&format!(
                "{{\"ph\":\"s\",\"id\":{i},\"name\":\"fl\",\"cat\":\"ac2g\",\"pid\":1,\"tid\":{tid},\"ts\":{ts}}},"
            ));
            for _ in 0..3 {
                ts += 2;
                t.push_str(&format!(
                    "{{\"ph\":\"E\",\"pid\":1,\"tid\":{tid},\"ts\":{ts}}},"
                ));
            }
            t.push_str(&format!(
                "{{\"ph\":\"i\",\"name\":\"m{i}\",\"s\":\"g\",\"pid\":\"{}\",\"tid\":\"x\",\"ts\":{ts}}},",
                100 + i % 2
            ));
        }
        t.push_str("{\"ph\":\"E\",\"pid\":1,\"tid\":9,\"ts\":1},{\"ph\":\"B\",\"name\":\"open\",\"pid\":1,\"tid\":0,\"ts\":5},{\"ph\":\"Q\"}],\"baseTimeNanoseconds\":1000}");
        for (chunk, threads) in [(64, 2), (500, 2), (3000, 3), (1 << 20, 2)] {
            assert_same(t.as_bytes(), chunk, threads);
        }
    }

    #[test]
    fn fixtures_identical() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chrome");
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.to_string_lossy().to_string();
            let mut bytes = std::fs::read(&path).unwrap();
            if name.ends_with(".gz") {
                let mut v = Vec::new();
                flate2::read::MultiGzDecoder::new(&bytes[..])
                    .read_to_end(&mut v)
                    .unwrap();
                bytes = v;
            } else if !name.ends_with(".json") {
                continue;
            }
            let (seq, par) = both(&bytes, 1000, 2);
            if let Some(par) = par {
                assert!(seq == par, "{name}: chunked capture differs");
                n += 1;
            }
        }
        assert!(n >= 8, "chunked path ran on only {n} fixtures");
    }

    #[test]
    fn fidelity_fixtures_identical() {
        // Counter ids as written, B/E out of order, sampled stacks, device rows (issue 21).
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fidelity");
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let p = Progress::default();
            let Ok(seq) = load_bytes(&bytes, SourceInfo::default(), &p) else {
                continue;
            };
            for chunk in [40, 300] {
                if let Some(par) = load_bytes_chunked(&bytes, SourceInfo::default(), &p, chunk, 2) {
                    assert!(
                        format!("{seq:?}") == format!("{par:?}"),
                        "{}: chunked capture differs",
                        path.display()
                    );
                    n += 1;
                }
            }
        }
        assert!(n >= 10, "chunked path ran {n} times");
    }

    #[test]
    fn defects_fall_back() {
        // A "},{" inside a string picked as a boundary, truncation, syntax errors, repairable
        // tokens, an empty array: the chunked path declines; the sequential path decides.
        let mut t = String::from("[");
        for i in 0..200 {
            t.push_str(&format!(
                "{{\"ph\":\"X\",\"name\":\"a}},{{b{i}\",\"pid\":1,\"tid\":1,\"ts\":{i},\"dur\":1}},"
            ));
        }
        t.push_str("{}]");
        let (_, par) = both(t.as_bytes(), 10, 2);
        assert!(par.is_none());
        let cut = &t.as_bytes()[..t.len() / 2];
        let p = Progress::default();
        assert!(load_bytes_chunked(cut, SourceInfo::default(), &p, 100, 2).is_none());
        for bad in [
            "[{\"ph\":\"X\",\"ts\":1},{\"ph\":\"X\",\"ts\":N/A},{\"ph\":\"i\",\"ts\":1}]",
            "[{\"ph\":\"X\",\"ts\":1},,{\"ph\":\"i\",\"ts\":1}]",
            "[{\"ph\":\"X\",\"ts\":1},{\"ph\":\"i\",\"ts\":1},]",
            "{\"traceEvents\":[]}",
            "{\"traceEvents\":{}}",
        ] {
            assert!(
                load_bytes_chunked(bad.as_bytes(), SourceInfo::default(), &p, 1, 2).is_none(),
                "{bad}"
            );
        }
    }

    #[test]
    fn default_path_on_big_input_matches_streaming_parse() {
        // Above MIN_BYTES `load_bytes` takes the parallel path (or its fallback, for the cut
        // text); gzip input goes through the sequential reader path: both must agree.
        use std::io::Write as _;
        let mut v = Vec::new();
        crate::synth::kineto::write_kineto_trace(&mut v, 34_000, 9).unwrap();
        assert!(v.len() > MIN_BYTES, "{}", v.len());
        for text in [&v[..], &v[..v.len() * 2 / 3]] {
            let p = Progress::default();
            let fast = load_bytes(text, SourceInfo::default(), &p).unwrap();
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(text).unwrap();
            let gz = gz.finish().unwrap();
            let slow = load_bytes(&gz, SourceInfo::default(), &p).unwrap();
            assert!(format!("{fast:?}") == format!("{slow:?}"));
            assert_eq!(
                fast.warnings.iter().any(|w| w.kind == "truncated"),
                text.len() < v.len()
            );
        }
    }
}
