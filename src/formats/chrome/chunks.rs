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
//!
//! [`parse`] is the entry: it installs [`run`] as the loader's `chunked` events reader, which the
//! tokenizer (`seed`) calls when the events array opens.

use super::apply::Loader;
use super::raw::RawEvent;
use super::scan;
use super::seed::{EventSeed, TopSeed};
use super::sequential::finish;
use crate::formats::progress::Progress;
use crate::model::{ArgsArena, ArgsRef, Capture, Format, Interner, Key, SourceInfo, StrId};
use serde::de::{Deserialize, DeserializeSeed, Deserializer, Error as _};
use std::cell::{Cell, RefCell};
use std::io::{self, Read};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Condvar, Mutex};

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

/// Strings tables of at most this many strings are handed to the chunk parses as their seed (a
/// clone per chunk: two allocations per string).
const SEED_MAX: usize = 4096;

/// One parsed chunk, in its own string and args space.
struct Parsed {
    strings: Interner,
    /// How many strings the chunk's table started with, copied from the loader's table (a
    /// prefix of it: the loader's table only grows), so their ids are the loader's.
    seeded: usize,
    args: ArgsArena,
    events: Vec<RawEvent>,
    /// Length of the chunk's interner after each event.
    strs_after: Vec<u32>,
    args_not_object: u64,
    /// Where the chunk's parse stopped (next chunk's start, or the closing `]`).
    end: usize,
}

/// The big buffers of a replayed chunk, handed to the next chunk's parse: the pages stay
/// mapped, so no chunk pays page faults and zeroing for its ~6 MB of events again.
#[derive(Default)]
struct Spare {
    args: ArgsArena,
    events: Vec<RawEvent>,
    strs_after: Vec<u32>,
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
    spare: Spare,
    seed: Option<&Interner>,
) -> Result<Parsed, ()> {
    let Spare {
        mut args,
        mut events,
        mut strs_after,
    } = spare;
    args.clear();
    events.clear();
    strs_after.clear();
    let mut fresh = Loader::new(&IDLE);
    fresh.b.args = args;
    // Start from the loader's strings when their table begins with the fresh one's (the keys
    // every loader interns first): the chunk then writes the loader's ids for every string
    // seen before, and the replay maps them, and copies args blocks, as they are.
    let mut seeded = 0;
    if let Some(seed) = seed {
        let own = &fresh.b.strings;
        let prefix = seed.len() >= own.len()
            && (0..own.len()).all(|i| seed.get(StrId(i as u32)) == own.get(StrId(i as u32)));
        if prefix {
            fresh.b.strings = seed.clone();
            seeded = seed.len();
        }
    }
    CUR.with(|c| *c.borrow_mut() = Some(fresh));
    // Kineto events take ~300 bytes of text: reserve once instead of growing by copies.
    let guess = (stop.unwrap_or(bytes.len()).saturating_sub(start) / 256).min(1 << 20);
    events.reserve(guess);
    strs_after.reserve(guess);
    let end = parse_elements(bytes, start, stop, &mut events, &mut strs_after, progress);
    let ld = CUR.with(|c| c.borrow_mut().take());
    let (end, mut ld) = (end?, ld.ok_or(())?);
    Ok(Parsed {
        strings: std::mem::take(&mut ld.b.strings),
        seeded,
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

/// Applies a parsed chunk to the loader as if its events had been parsed there; returns its
/// buffers for the next chunk.
fn replay(ld: &mut Loader<'_>, mut p: Parsed, at: usize) -> Spare {
    // The seeded strings have the loader's ids.
    let mut map: Vec<StrId> = Vec::with_capacity(p.strings.len());
    map.extend((0..p.seeded as u32).map(StrId));
    // A chunk that met no new string wrote only the loader's ids: its args arena is appended
    // in one copy, each handle shifted by where it lands (when no block can pass the limit).
    let (data, _, _) = p.args.raw_parts();
    let shift = if p.strings.len() == p.seeded
        && ld.b.args.raw_parts().0.len() + data.len() + 5 < ArgsRef::LAZY_MAX as usize
    {
        ld.b.args.append(&p.args)
    } else {
        None
    };
    let key = |k: Option<Key>, map: &[StrId]| match k {
        Some(Key::Str(s)) => Some(Key::Str(
            map.get(s.index()).copied().unwrap_or(StrId::EMPTY),
        )),
        other => other,
    };
    ld.last_str_addr = ld.input_range.0 + at;
    let mut events = std::mem::take(&mut p.events);
    for (ev, &upto) in events.iter_mut().zip(&p.strs_after) {
        // The strings this event met first, in the order the sequential parse interned them.
        while map.len() < upto as usize {
            let s = p.strings.get(StrId(map.len() as u32));
            map.push(ld.b.strings.intern(s));
        }
        // Remapped in place: no copy of the record (nothing to map when every id is the
        // loader's).
        if shift.is_none() {
            let m = |s: StrId| map.get(s.index()).copied().unwrap_or(StrId::EMPTY);
            ev.name = m(ev.name);
            ev.cat = m(ev.cat);
            ev.id_text = m(ev.id_text);
            ev.pid = key(ev.pid, &map);
            ev.tid = key(ev.tid, &map);
        }
        ev.args = match shift {
            Some(base) if ev.args.is_some() => ArgsRef(ev.args.0 + base),
            Some(_) => ev.args,
            None => copy_args(&mut ld.b.args, &p, ev.args, &map),
        };
        ld.apply(ev);
        if ld.events & 4095 == 0 {
            ld.report_progress();
        }
    }
    ld.args_not_object += p.args_not_object;
    Spare {
        args: p.args,
        events,
        strs_after: p.strs_after,
    }
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
    /// Buffers of replayed chunks, for the next parses.
    spares: Vec<Spare>,
    /// The loader's strings as of a recent replay, to seed the next parses with.
    seed: Option<Arc<Interner>>,
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
    crate::timings::mark("frame");
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
        spares: Vec::new(),
        seed: None,
    });
    let cv = Condvar::new();
    let progress = ld.progress();
    // The chunk starting at `s`, whose end the caller saw known: the next start, or (last) the
    // array's end.
    let lock = || state.lock().unwrap_or_else(|e| e.into_inner());
    let chunk = |s: usize, stop: Option<usize>| -> Result<Parsed, ()> {
        let (a, _) = readable(bytes, avail);
        let (spare, seed) = {
            let mut g = lock();
            (g.spares.pop().unwrap_or_default(), g.seed.clone())
        };
        parse_chunk(
            bytes.get(..a).ok_or(())?,
            s,
            stop,
            progress,
            spare,
            seed.as_deref(),
        )
    };
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
            let mut published = 0;
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
                end = p.end;
                let spare = replay(ld, p, at);
                i += 1;
                // A new seed when the table grew (cloned outside the lock).
                let n = ld.b.strings.len();
                let seed = (n != published && n <= SEED_MAX).then(|| {
                    published = n;
                    Arc::new(ld.b.strings.clone())
                });
                let mut g = lock();
                g.applied = i;
                g.spares.push(spare);
                if seed.is_some() {
                    g.seed = seed;
                }
                drop(g);
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

/// Chunk-parallel parse of mapped text; `None` when it declined or failed, in
/// which case the caller parses single-threaded (which owns every error and truncation case).
pub fn parse(
    bytes: &[u8],
    source: &SourceInfo,
    hint: Option<Format>,
    progress: &Progress,
    chunk_bytes: usize,
    threads: usize,
    avail: Option<Avail<'_>>,
) -> Option<Capture> {
    let pos = Rc::new(Cell::new(0usize));
    let mut ld = Loader::new(progress);
    let lo = bytes.as_ptr() as usize;
    ld.input_range = (lo, lo + bytes.len());
    let ch = Chunked {
        bytes,
        pos: pos.clone(),
        chunk_bytes,
        threads,
        avail,
    };
    ld.chunked = Some(Box::new(move |ld: &mut Loader<'_>| run(ld, &ch)));
    let mut de = serde_json::Deserializer::from_reader(Frame { bytes, pos, avail });
    let res = TopSeed(&mut ld)
        .deserialize(&mut de)
        .and_then(|()| de.end());
    if res.is_err()
        || !ld.saw_events
        || ld.chunked.is_some()
        || ld.no_phase_anywhere()
        || progress.cancelled()
    {
        return None;
    }
    ld.chunked = None;
    Some(finish(ld, source.clone(), hint))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

/// Single-threaded speed of one chunk parse (`TRACETUI_SCAN_FILE=… cargo test --release --lib
/// chunk_parse_speed -- --ignored --nocapture`): the chunk workers' share of a load, without
/// threads or replay.
#[cfg(test)]
mod speed {
    #[test]
    #[ignore]
    fn chunk_parse_speed() {
        let Ok(path) = std::env::var("TRACETUI_SCAN_FILE") else {
            return;
        };
        let bytes = std::fs::read(path).unwrap();
        let at = bytes
            .windows(13)
            .position(|w| w == b"\"traceEvents\"")
            .unwrap();
        let start = at + bytes[at..].iter().position(|&c| c == b'{').unwrap();
        let mut best = f64::MAX;
        let mut spare = super::Spare::default();
        for _ in 0..5 {
            let t = std::time::Instant::now();
            let p = super::parse_chunk(&bytes, start, None, &super::IDLE, spare, None).unwrap();
            best = best.min(t.elapsed().as_secs_f64());
            eprintln!(
                "{} events, {:.3} s",
                p.events.len(),
                t.elapsed().as_secs_f64()
            );
            spare = super::Spare {
                args: p.args,
                events: p.events,
                strs_after: p.strs_after,
            };
        }
        let n = spare.events.len() as f64;
        eprintln!("best {:.3} s, {:.1} ns/event", best, best * 1e9 / n);
    }
}
