//! Building the per-(device, allocator) memory tracks of a loaded capture: the allocated /
//! reserved counter series, the allocations matched to their frees by address, each attributed to
//! the innermost op enclosing it on its own thread (XPlane: to its `tf_op` stat, as XProf does),
//! and the out-of-memory events.

use super::events::{MemEvent, MemKind, Names, Reader, device_type_name, memory_refs};
use crate::model::memory::{EventSource, Frame, MemTrack, MemoryModel, NO_STACK, Oom, Stacks};
use crate::model::{Capture, NO_SLICE, Ps, StrId};
use rustc_hash::FxHashMap;
use std::sync::mpsc;

/// Track key: (device type, device id, allocator).
type TrackKey = (i64, i64, StrId);

/// Below this many memory events the build stays on the calling thread.
const PIPELINE_MIN: usize = 1 << 16;
/// Events per chunk handed from the reading stage to the building one.
const CHUNK: usize = 4096;

/// Builds the memory tracks of `c` (empty when it has no memory events).
///
/// Large captures are built in two stages on two threads (`TRACETUI_MEMORY_THREADS=1` keeps
/// one): a helper reads the events' args in time order, chunk by chunk, while this thread
/// matches frees to allocations and fills the columns. The result is the same either way.
pub fn build(c: &Capture) -> MemoryModel {
    build_with(c, crate::threads::from_env("TRACETUI_MEMORY_THREADS"))
}

/// [`build`] on at most `threads` threads (1 or 2).
fn build_with(c: &Capture, threads: usize) -> MemoryModel {
    let refs = memory_refs(c);
    let rd = Reader::new(c);
    // XPlane: no enclosing op, as XProf's memory profile (the `tf_op` stat names the op).
    let ops = if c.format == Some(crate::model::Format::XPlane) {
        vec![NO_SLICE; refs.len()]
    } else {
        enclosing_ops(c, refs.len(), |k| (refs.ts(c, k), refs.track(c, k)))
    };
    let mut b = Builder::new(c, refs.has_slices(), refs.len());
    if refs.len() < PIPELINE_MIN || threads < 2 {
        for &k in &refs.order {
            let k = k as usize;
            b.add(ops[k], &rd.read(c, &refs, k));
        }
        return b.finish();
    }
    type Chunk = Vec<(u32, MemEvent)>;
    std::thread::scope(|sc| {
        // A few chunks in flight; emptied ones go back to the reader to be refilled.
        let (full_tx, full_rx) = mpsc::sync_channel::<Chunk>(3);
        let (empty_tx, empty_rx) = mpsc::channel::<Chunk>();
        let (order, ops, rd, refs) = (&refs.order, &ops, &rd, &refs);
        sc.spawn(move || {
            let read = |k: u32| (ops[k as usize], rd.read(c, refs, k as usize));
            for part in order.chunks(CHUNK) {
                let mut buf = empty_rx
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(CHUNK));
                buf.clear();
                buf.extend(part.iter().map(|&k| read(k)));
                if full_tx.send(buf).is_err() {
                    return;
                }
            }
        });
        for buf in full_rx {
            for (op, e) in &buf {
                b.add(*op, e);
            }
            // The reader may be done and gone: then the chunk is simply dropped.
            let _ = empty_tx.send(buf);
        }
    });
    b.finish()
}

/// The memory tracks under construction, fed the events in time order. Per event: no hashing
/// of the track key (a scan of the few tracks, the last one first), one hash-map operation for
/// the address, column pushes.
struct Builder<'c> {
    c: &'c Capture,
    model: MemoryModel,
    /// Number of events (each track's columns reserve room for all).
    n: usize,
    keys: Vec<TrackKey>,
    /// Per track: live allocations by address.
    live: Vec<FxHashMap<u64, u32>>,
    /// Per track: bytes allocated by the events so far.
    sums: Vec<i64>,
    stack_memo: FxHashMap<StrId, u32>,
    last: usize,
}

impl<'c> Builder<'c> {
    fn new(c: &'c Capture, slices: bool, n: usize) -> Builder<'c> {
        Builder {
            c,
            model: MemoryModel {
                source: if slices {
                    EventSource::Slices
                } else {
                    EventSource::Instants
                },
                ..MemoryModel::default()
            },
            n,
            keys: Vec::new(),
            live: Vec::new(),
            sums: Vec::new(),
            stack_memo: FxHashMap::default(),
            last: usize::MAX,
        }
    }

    /// Index of the track of `e`, made when new.
    #[inline]
    fn track(&mut self, e: &MemEvent) -> usize {
        let key = (e.device_type, e.device_id, e.allocator);
        if self.keys.get(self.last) == Some(&key) {
            return self.last;
        }
        let ti = match self.keys.iter().position(|&x| x == key) {
            Some(i) => i,
            None => {
                let mut t = new_track(self.c, e);
                // Room for every event: pages are only touched as they fill, and the
                // columns are shrunk at the end (no doubling copies on the way).
                t.ts.reserve(self.n);
                t.allocated.reserve(self.n);
                t.reserved.reserve(self.n);
                t.allocs.reserve(self.n);
                self.model.tracks.push(t);
                let mut m = FxHashMap::default();
                m.reserve(1024);
                self.live.push(m);
                self.sums.push(0);
                self.keys.push(key);
                self.keys.len() - 1
            }
        };
        self.last = ti;
        ti
    }

    /// Adds event `e`, `op` the op enclosing it.
    #[inline]
    fn add(&mut self, op: u32, e: &MemEvent) {
        let ti = self.track(e);
        let stack = if e.stack == StrId::EMPTY {
            NO_STACK
        } else {
            let (stacks, c) = (&mut self.model.stacks, self.c);
            *self
                .stack_memo
                .entry(e.stack)
                .or_insert_with(|| intern_stack(stacks, c.strings.get(e.stack)))
        };
        let tr = &mut self.model.tracks[ti];
        let event = e.id;
        match e.kind {
            MemKind::Oom => {
                tr.ooms.push(Oom {
                    ts: e.ts,
                    bytes: e.bytes,
                    device_free: None,
                    allocated: e.total_allocated,
                    reserved: e.total_reserved,
                    stack,
                    event,
                });
                return;
            }
            MemKind::Alloc if e.bytes == 0 => tr.counts.zero_size += 1,
            MemKind::Alloc => {
                tr.counts.allocs += 1;
                let id = tr.allocs.len() as u32;
                if let Some(old) = self.live[ti].insert(e.addr, id) {
                    tr.counts.addr_reuse += 1;
                    tr.allocs.end[old as usize] = e.ts;
                }
                tr.allocs.push(e.ts, e.bytes, e.addr, op, stack, event);
            }
            MemKind::Free => {
                tr.counts.frees += 1;
                match self.live[ti].remove(&e.addr) {
                    Some(id) => tr.allocs.end[id as usize] = e.ts,
                    None => tr.counts.unmatched_frees += 1,
                }
            }
        }
        self.sums[ti] = self.sums[ti].saturating_add(e.bytes);
        let allocated = e.total_allocated.unwrap_or(self.sums[ti]);
        tr.totals_from_events |= e.total_allocated.is_some();
        tr.has_reserved |= e.total_reserved.is_some();
        let reserved = e.total_reserved.unwrap_or(allocated);
        tr.ts.push(e.ts);
        tr.allocated.push(allocated);
        tr.reserved.push(reserved);
    }

    fn finish(mut self) -> MemoryModel {
        for t in &mut self.model.tracks {
            t.ts.shrink_to_fit();
            t.allocated.shrink_to_fit();
            t.reserved.shrink_to_fit();
            t.allocs.shrink_to_fit();
        }
        self.model
    }
}

fn new_track(c: &Capture, e: &MemEvent) -> MemTrack {
    let (device, allocator) = if e.device_type < 0 {
        (c.strings.get(e.allocator).to_string(), String::new())
    } else {
        let name = device_type_name(e.device_type);
        let device = if e.device_id < 0 {
            name.to_string()
        } else {
            format!("{name}:{}", e.device_id)
        };
        (device, String::new())
    };
    MemTrack {
        device,
        allocator,
        ..MemTrack::default()
    }
}

/// Interns a Kineto `Call stack` text: frames separated by `;`, as written.
fn intern_stack(stacks: &mut Stacks, text: &str) -> u32 {
    let ids: Vec<u32> = text
        .split(';')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(|f| {
            stacks.frame(Frame {
                name: f.to_string(),
                file: String::new(),
                line: 0,
            })
        })
        .collect();
    stacks.stack(&ids)
}

/// For each of `n` memory events given as `at(k)` = (time, track), stored grouped by track with
/// each group in time order (as [`memory_refs`] stores them), the innermost slice on its own
/// track with start ≤ ts ≤ end (memory events themselves excluded), or `NO_SLICE`. One sweep per
/// group over its track's slices.
pub fn enclosing_ops(c: &Capture, n: usize, at: impl Fn(usize) -> (Ps, u32)) -> Vec<u32> {
    let mut out = vec![NO_SLICE; n];
    let names = Names::of(c);
    let mut open: Vec<u32> = Vec::new();
    let mut g = 0;
    while g < n {
        let track = at(g).1;
        let mut h = g;
        while h < n && at(h).1 == track {
            h += 1;
        }
        let Some(tr) = c.tracks.get(track as usize) else {
            g = h;
            continue;
        };
        open.clear();
        let mut next = tr.slices.0;
        for (k, op) in (g..h).zip(&mut out[g..h]) {
            let (ts, _) = at(k);
            while next < tr.slices.1 && c.slices.start[next as usize] <= ts {
                let s = next as usize;
                next += 1;
                if names.contains(c.slices.name[s]) {
                    continue;
                }
                let start = c.slices.start[s];
                while open
                    .last()
                    .is_some_and(|&o| c.slices.end(o as usize) < start)
                {
                    open.pop();
                }
                open.push(s as u32);
            }
            while open.last().is_some_and(|&o| c.slices.end(o as usize) < ts) {
                open.pop();
            }
            *op = open.last().copied().unwrap_or(NO_SLICE);
        }
        g = h;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::memory::events::KEY_NAMES;
    use crate::model::{ArgValue, ArgsRef, CaptureBuilder, Format, Key, SourceInfo, TrackKind};

    /// `n` `[memory]` events on 3 threads inside nested ops: two devices with running totals
    /// and one without, address reuse, frees of unknown addresses, call stacks, and OOMs.
    fn capture(n: usize) -> Capture {
        let mut b = CaptureBuilder::new();
        let p = b.process(Key::Int(1));
        let mem = b.intern("[memory]");
        let oom = b.intern("[OutOfMemory]");
        let op = b.intern("aten::mm");
        let k: Vec<StrId> = KEY_NAMES[..7].iter().map(|s| b.intern(s)).collect();
        let stacks = [b.intern("a.py(1): f;b.py(2): g"), b.intern("c.py(3): h")];
        let th: Vec<u32> = (0..3)
            .map(|t| b.track(p, Key::Int(t), TrackKind::Thread))
            .collect();
        let mut live: Vec<Vec<u64>> = vec![Vec::new(); 3];
        let mut total = [0i64; 3];
        let mut x = 0x9e37_79b9_u64;
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ts = i as i64 * 1000;
            let t = th[i % 3];
            if i % 6 == 0 {
                b.add_slice(t, ts, 6000 * 3, op, op, ArgsRef::NONE, 0);
            }
            let dev = (x % 3) as usize;
            let (bytes, addr) = if x.is_multiple_of(97) {
                (-64, (1 << 40) | (x % 1000)) // a free of memory allocated before the capture
            } else if !live[dev].is_empty() && x % 100 < 45 {
                let j = (x / 100) as usize % live[dev].len();
                (-256, live[dev].swap_remove(j))
            } else {
                // Few addresses, so some are allocated again while live.
                let a = 0x1000 + (x >> 20) % 4096 * 256;
                live[dev].push(a);
                (256, a)
            };
            total[dev] += bytes;
            b.args.begin();
            b.args.push(k[0], ArgValue::I64(bytes));
            b.args.push(k[1], ArgValue::U64(addr));
            if dev < 2 {
                b.args.push(k[2], ArgValue::I64(total[dev]));
                b.args.push(k[3], ArgValue::I64(total[dev] + 4096));
            }
            b.args.push(k[4], ArgValue::I64(dev.min(1) as i64));
            b.args.push(k[5], ArgValue::I64(dev as i64 - 1));
            if x.is_multiple_of(5) {
                b.args
                    .push(k[6], ArgValue::Str(stacks[(x >> 8) as usize % 2]));
            }
            let args = b.args.finish();
            let name = if i % 10_007 == 5 { oom } else { mem };
            b.add_instant(t, ts + 10, name, mem, args, b't');
        }
        b.finish(SourceInfo::default(), Format::Kineto)
    }

    /// The two-stage build gives what the one-thread build gives, across many chunks.
    #[test]
    fn two_stages_build_what_one_does() {
        let c = capture(PIPELINE_MIN + 3 * CHUNK + 17);
        let one = build_with(&c, 1);
        let two = build_with(&c, 2);
        assert_eq!(one.tracks.len(), 3);
        let t = &one.tracks[1];
        assert!(
            t.counts.addr_reuse > 0 && t.counts.unmatched_frees > 0,
            "{:?}",
            t.counts
        );
        assert!(one.tracks.iter().any(|t| !t.ooms.is_empty()));
        assert!(one.tracks.iter().any(|t| !t.totals_from_events));
        assert!(!one.stacks.frames.is_empty());
        assert_eq!(format!("{one:?}"), format!("{two:?}"));
    }

    /// XPlane allocator events as XProf reads them: `bytes_reserved` is a stack reservation
    /// (memory in use = heap + stack; none on a GPU BFC allocator), and the op is the `tf_op`
    /// stat, not the enclosing `Build buffer allocations` TraceMe.
    #[test]
    fn xplane_events_follow_xprof() {
        let mut b = CaptureBuilder::new();
        let host = b.intern("/host:CPU");
        let p = b.process(Key::Str(host));
        b.process_mut(p).name = host;
        let t = b.track(p, Key::Int(1), TrackKind::XLine);
        let (alloc, free, bba) = (
            b.intern("MemoryAllocation"),
            b.intern("MemoryDeallocation"),
            b.intern("Build buffer allocations"),
        );
        let k: Vec<StrId> = KEY_NAMES[7..].iter().map(|s| b.intern(s)).collect();
        let (gpu_bfc, dot) = (b.intern("GPU_0_bfc"), b.intern("jit(f)/dot_general"));
        b.add_slice(t, 0, 1000, bba, StrId::EMPTY, ArgsRef::NONE, 0);
        // (time, name, bytes, addr, allocated after, reserved, tf_op)
        let evs = [
            (10, alloc, 256, 1, 256, 0, Some(dot)),
            (20, alloc, 512, 2, 768, 64, None),
            (30, free, 256, 1, 512, 0, None),
        ];
        for (ts, name, bytes, addr, total, reserved, op) in evs {
            b.args.begin();
            b.args.push(k[0], ArgValue::I64(bytes));
            b.args.push(k[1], ArgValue::U64(addr));
            b.args.push(k[2], ArgValue::I64(total));
            b.args.push(k[3], ArgValue::I64(reserved));
            b.args.push(k[4], ArgValue::Str(gpu_bfc));
            if let Some(op) = op {
                b.args.push(k[5], ArgValue::Str(op));
            }
            let args = b.args.finish();
            b.add_slice(t, ts, 0, name, StrId::EMPTY, args, 0);
        }
        let c = b.finish(SourceInfo::default(), Format::XPlane);
        let m = build(&c);
        assert_eq!(m.tracks.len(), 1);
        let tr = &m.tracks[0];
        assert_eq!(tr.device, "GPU_0_bfc");
        assert_eq!(tr.allocated, vec![256, 768, 512]);
        // Only the second event reserves stack: in use 768 + 64 there, else the heap.
        assert!(tr.has_reserved);
        assert_eq!(tr.reserved, vec![256, 832, 512]);
        // No enclosing op; the first allocation is named by its tf_op, the second by nothing.
        assert!(tr.allocs.op.iter().all(|&o| o == NO_SLICE));
        let f = m.stacks.get(tr.allocs.stack[0])[0];
        assert_eq!(m.stacks.frames[f as usize].name, "jit(f)/dot_general");
        assert_eq!(tr.allocs.stack[1], NO_STACK);
        assert_eq!(tr.allocs.end[0], 30);
    }
}
