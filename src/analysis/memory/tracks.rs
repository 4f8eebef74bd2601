//! Building the per-(device, allocator) memory tracks of a loaded capture: the allocated /
//! reserved counter series, the allocations matched to their frees by address, each attributed to
//! the innermost op enclosing it on its own thread, and the out-of-memory events.

use super::events::{MemEvent, MemKind, Names, Reader, device_type_name, memory_refs};
use crate::model::memory::{EventSource, Frame, MemTrack, MemoryModel, NO_STACK, Oom, Stacks};
use crate::model::{Capture, NO_SLICE, Ps, StrId};
use rustc_hash::FxHashMap;

/// Track key: (device type, device id, allocator).
type TrackKey = (i64, i64, StrId);

/// Builds the memory tracks of `c` (empty when it has no memory events).
pub fn build(c: &Capture) -> MemoryModel {
    let refs = memory_refs(c);
    let rd = Reader::new(c);
    let ops = enclosing_ops(c, refs.len(), |k| (refs.ts(c, k), refs.track(c, k)));
    build_ordered(c, &refs.order, refs.has_slices(), &ops, |k| {
        rd.read(c, &refs, k)
    })
}

/// Builds the memory tracks from the events `event(k)` taken in the time order `order`, `ops[k]`
/// the op enclosing event `k`. The events are read (args decoded) one at a time, never held
/// all at once. Per event: no hashing of the track key (a scan of the few tracks, the last one
/// first), one hash-map operation for the address, column pushes.
fn build_ordered(
    c: &Capture,
    order: &[u32],
    slices: bool,
    ops: &[u32],
    event: impl Fn(usize) -> MemEvent,
) -> MemoryModel {
    let mut model = MemoryModel {
        source: if slices {
            EventSource::Slices
        } else {
            EventSource::Instants
        },
        ..MemoryModel::default()
    };
    let mut keys: Vec<TrackKey> = Vec::new();
    let mut live: Vec<FxHashMap<u64, u32>> = Vec::new();
    let mut sums: Vec<i64> = Vec::new();
    let mut stack_memo: FxHashMap<StrId, u32> = FxHashMap::default();
    let mut last = usize::MAX;
    for &k in order {
        let k = k as usize;
        let e = &event(k);
        let key = (e.device_type, e.device_id, e.allocator);
        let ti = if keys.get(last) == Some(&key) {
            last
        } else {
            match keys.iter().position(|&x| x == key) {
                Some(i) => i,
                None => {
                    let mut t = new_track(c, e);
                    // Room for every event: pages are only touched as they fill, and the
                    // columns are shrunk at the end (no doubling copies on the way).
                    let n = order.len();
                    t.ts.reserve(n);
                    t.allocated.reserve(n);
                    t.reserved.reserve(n);
                    t.allocs.reserve(n);
                    model.tracks.push(t);
                    let mut m = FxHashMap::default();
                    m.reserve(1024);
                    live.push(m);
                    sums.push(0);
                    keys.push(key);
                    keys.len() - 1
                }
            }
        };
        last = ti;
        let tr = &mut model.tracks[ti];
        let stack = if e.stack == StrId::EMPTY {
            NO_STACK
        } else {
            *stack_memo
                .entry(e.stack)
                .or_insert_with(|| intern_stack(&mut model.stacks, c.strings.get(e.stack)))
        };
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
                continue;
            }
            MemKind::Alloc if e.bytes == 0 => tr.counts.zero_size += 1,
            MemKind::Alloc => {
                tr.counts.allocs += 1;
                let id = tr.allocs.len() as u32;
                if let Some(old) = live[ti].insert(e.addr, id) {
                    tr.counts.addr_reuse += 1;
                    tr.allocs.end[old as usize] = e.ts;
                }
                tr.allocs.push(e.ts, e.bytes, e.addr, ops[k], stack, event);
            }
            MemKind::Free => {
                tr.counts.frees += 1;
                match live[ti].remove(&e.addr) {
                    Some(id) => tr.allocs.end[id as usize] = e.ts,
                    None => tr.counts.unmatched_frees += 1,
                }
            }
        }
        sums[ti] += e.bytes;
        let allocated = e.total_allocated.unwrap_or(sums[ti]);
        tr.totals_from_events |= e.total_allocated.is_some();
        tr.has_reserved |= e.total_reserved.is_some();
        let reserved = e.total_reserved.unwrap_or(allocated);
        tr.ts.push(e.ts);
        tr.allocated.push(allocated);
        tr.reserved.push(reserved);
    }
    for t in &mut model.tracks {
        t.ts.shrink_to_fit();
        t.allocated.shrink_to_fit();
        t.reserved.shrink_to_fit();
        t.allocs.shrink_to_fit();
    }
    model
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
