//! Memory of a capture or an allocator snapshot: per-(device, allocator) tracks holding a counter
//! series of allocated / reserved bytes, the allocations (matched to their frees by address),
//! out-of-memory events and the counts of what could not be matched.
//!
//! Built by `analysis::memory` from a loaded [`Capture`](super::Capture) (Kineto `[memory]`
//! instants, XPlane `MemoryAllocation` events) and by `formats::snapshot` from a torch CUDA
//! allocator snapshot. Allocations are columnar and sorted by start; [`LiveIndex`] answers "what
//! is live at time t" without scanning them all.

use super::capture::{NO_SLICE, Ps};
use rustc_hash::FxHashMap;

/// End time of an allocation never freed in the capture ("live at end").
pub const LIVE_AT_END: Ps = Ps::MAX;

/// No call stack.
pub const NO_STACK: u32 = u32::MAX;

/// One stack frame.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    /// Function name (or the whole frame text when the source gives only text).
    pub name: String,
    /// Source file ("" when unknown).
    pub file: String,
    /// Line (0 when unknown).
    pub line: i64,
}

impl Frame {
    /// `file:line:name` with the file's last path component (memory_viz `_frame_fmt`), or the
    /// name alone when there is no file.
    pub fn short(&self) -> String {
        if self.file.is_empty() {
            return self.name.clone();
        }
        let f = self.file.rsplit('/').next().unwrap_or(&self.file);
        format!("{f}:{}:{}", self.line, self.name)
    }
}

/// Interned frames and call stacks (innermost frame first, as torch writes them).
#[derive(Clone, Debug, Default)]
pub struct Stacks {
    /// Distinct frames.
    pub frames: Vec<Frame>,
    /// Distinct stacks: frame ids, innermost first.
    pub stacks: Vec<Vec<u32>>,
    frame_ids: FxHashMap<Frame, u32>,
    stack_ids: FxHashMap<Vec<u32>, u32>,
}

impl Stacks {
    /// Interns a frame.
    pub fn frame(&mut self, f: Frame) -> u32 {
        if let Some(&i) = self.frame_ids.get(&f) {
            return i;
        }
        let i = self.frames.len() as u32;
        self.frames.push(f.clone());
        self.frame_ids.insert(f, i);
        i
    }

    /// Interns a stack of frame ids (innermost first); the empty stack is [`NO_STACK`].
    pub fn stack(&mut self, frames: &[u32]) -> u32 {
        if frames.is_empty() {
            return NO_STACK;
        }
        if let Some(&i) = self.stack_ids.get(frames) {
            return i;
        }
        let i = self.stacks.len() as u32;
        self.stacks.push(frames.to_vec());
        self.stack_ids.insert(frames.to_vec(), i);
        i
    }

    /// Frames of stack `id`, innermost first (empty for [`NO_STACK`]).
    pub fn get(&self, id: u32) -> &[u32] {
        self.stacks.get(id as usize).map_or(&[], |s| s.as_slice())
    }
}

/// Columnar allocations of one memory track, sorted by start time.
#[derive(Clone, Debug, Default)]
pub struct Allocations {
    /// Allocation time, ps.
    pub start: Vec<Ps>,
    /// Time the memory was released, ps ([`LIVE_AT_END`] when never).
    pub end: Vec<Ps>,
    /// Size in bytes.
    pub bytes: Vec<i64>,
    /// Address.
    pub addr: Vec<u64>,
    /// Innermost op enclosing the allocation on its own thread (slice id), or `NO_SLICE`.
    pub op: Vec<u32>,
    /// Call stack id in [`MemoryModel::stacks`], or [`NO_STACK`].
    pub stack: Vec<u32>,
    /// Source event: instant id (Kineto), slice id (XPlane) or trace entry index (snapshot).
    pub event: Vec<u32>,
}

impl Allocations {
    /// Number of allocations.
    pub fn len(&self) -> usize {
        self.start.len()
    }
    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }
    /// Reserves room for `n` more allocations in every column.
    pub fn reserve(&mut self, n: usize) {
        self.start.reserve(n);
        self.end.reserve(n);
        self.bytes.reserve(n);
        self.addr.reserve(n);
        self.op.reserve(n);
        self.stack.reserve(n);
        self.event.reserve(n);
    }

    /// Releases spare capacity of every column.
    pub fn shrink_to_fit(&mut self) {
        self.start.shrink_to_fit();
        self.end.shrink_to_fit();
        self.bytes.shrink_to_fit();
        self.addr.shrink_to_fit();
        self.op.shrink_to_fit();
        self.stack.shrink_to_fit();
        self.event.shrink_to_fit();
    }

    /// Appends one allocation (live at end until [`Allocations::free`]).
    pub fn push(&mut self, start: Ps, bytes: i64, addr: u64, op: u32, stack: u32, event: u32) {
        self.start.push(start);
        self.end.push(LIVE_AT_END);
        self.bytes.push(bytes);
        self.addr.push(addr);
        self.op.push(op);
        self.stack.push(stack);
        self.event.push(event);
    }
}

/// An out-of-memory event.
#[derive(Clone, Debug, PartialEq)]
pub struct Oom {
    /// Time, ps.
    pub ts: Ps,
    /// Bytes requested.
    pub bytes: i64,
    /// Free device memory the allocator saw (snapshot `device_free`), when known.
    pub device_free: Option<i64>,
    /// Allocated bytes at the time, when known.
    pub allocated: Option<i64>,
    /// Reserved bytes at the time, when known.
    pub reserved: Option<i64>,
    /// Call stack, or [`NO_STACK`].
    pub stack: u32,
    /// Source event (instant id, slice id or trace entry index).
    pub event: u32,
}

/// What happened to the events of one track, nothing dropped silently.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemCounts {
    /// Allocation events.
    pub allocs: u64,
    /// Free events (matched or not).
    pub frees: u64,
    /// Frees without a live allocation at their address: memory allocated before recording
    /// started (or whose allocation event was lost).
    pub unmatched_frees: u64,
    /// Allocations at an address that was still live: the earlier one is closed there.
    pub addr_reuse: u64,
    /// Events of size 0 (kept in the counter series, no allocation made).
    pub zero_size: u64,
}

/// Memory of one (device, allocator).
#[derive(Clone, Debug, Default)]
pub struct MemTrack {
    /// Device (`cpu`, `cuda:0`, `/device:GPU:0`, ...).
    pub device: String,
    /// Allocator name ("" when the source names none).
    pub allocator: String,
    /// Sample times, ps (sorted).
    pub ts: Vec<Ps>,
    /// Allocated bytes after each sample.
    pub allocated: Vec<i64>,
    /// Reserved bytes after each sample (equal to `allocated` when `has_reserved` is false).
    pub reserved: Vec<i64>,
    /// True when the source gives reserved bytes.
    pub has_reserved: bool,
    /// True when `allocated` comes from the events' running totals (else summed here).
    pub totals_from_events: bool,
    /// The allocations, sorted by start.
    pub allocs: Allocations,
    /// Out-of-memory events.
    pub ooms: Vec<Oom>,
    /// Event counts.
    pub counts: MemCounts,
}

impl MemTrack {
    /// `device` plus `/allocator` when there is one.
    pub fn label(&self) -> String {
        if self.allocator.is_empty() {
            self.device.clone()
        } else {
            format!("{} {}", self.device, self.allocator)
        }
    }

    /// (time, bytes) of the first sample with the most allocated bytes.
    pub fn peak_allocated(&self) -> Option<(Ps, i64)> {
        peak(&self.ts, &self.allocated)
    }

    /// (time, bytes) of the first sample with the most reserved bytes.
    pub fn peak_reserved(&self) -> Option<(Ps, i64)> {
        peak(&self.ts, &self.reserved)
    }

    /// Allocated and reserved bytes at time `t` (after every sample at or before it).
    pub fn at(&self, t: Ps) -> (i64, i64) {
        let k = self.ts.partition_point(|&s| s <= t);
        match k.checked_sub(1) {
            Some(i) => (self.allocated[i], self.reserved[i]),
            None => (0, 0),
        }
    }

    /// Allocations never freed: (count, bytes).
    pub fn live_at_end(&self) -> (u64, i64) {
        let mut n = 0;
        let mut b = 0;
        for (i, &e) in self.allocs.end.iter().enumerate() {
            if e == LIVE_AT_END {
                n += 1;
                b += self.allocs.bytes[i];
            }
        }
        (n, b)
    }
}

fn peak(ts: &[Ps], v: &[i64]) -> Option<(Ps, i64)> {
    let mut best: Option<(Ps, i64)> = None;
    for (&t, &x) in ts.iter().zip(v) {
        if best.is_none_or(|(_, b)| x > b) {
            best = Some((t, x));
        }
    }
    best
}

/// What the `event` columns of a model point at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EventSource {
    /// Instant ids of the capture (Kineto `[memory]` events).
    #[default]
    Instants,
    /// Slice ids of the capture (XPlane `MemoryAllocation` events).
    Slices,
    /// Indexes into the snapshot's device trace of the track.
    SnapshotTrace,
}

/// All memory tracks of a capture or snapshot.
#[derive(Clone, Debug, Default)]
pub struct MemoryModel {
    /// What `event` columns index.
    pub source: EventSource,
    /// One track per (device, allocator), in order of first appearance.
    pub tracks: Vec<MemTrack>,
    /// Call stacks of allocations and OOMs.
    pub stacks: Stacks,
}

impl MemoryModel {
    /// True when there is no memory data at all.
    pub fn is_empty(&self) -> bool {
        self.tracks.is_empty()
    }
}

/// Subtrees of at most this many leaves are scanned instead of descended.
const LEAF_SCAN: usize = 32;

/// "Which allocations are live at time t" for one [`Allocations`] set: a max-end tree over the
/// start-sorted allocations, so a query visits only subtrees holding a live allocation
/// (O((k + 1) log n) for k results) instead of scanning them all.
#[derive(Clone, Debug, Default)]
pub struct LiveIndex {
    /// Leaf count rounded up to a power of two.
    size: usize,
    /// Max end of each node; leaves at `size..2 * size`.
    max_end: Vec<Ps>,
}

impl LiveIndex {
    /// Builds the index of `a` (its `start` must be sorted).
    pub fn new(a: &Allocations) -> LiveIndex {
        let n = a.len();
        let size = n.next_power_of_two().max(1);
        let mut max_end = vec![Ps::MIN; 2 * size];
        max_end[size..size + n].copy_from_slice(&a.end);
        for i in (1..size).rev() {
            max_end[i] = max_end[2 * i].max(max_end[2 * i + 1]);
        }
        LiveIndex { size, max_end }
    }

    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.max_end.capacity() * 8
    }

    /// Ids (ascending) of the allocations live at `t`: started at or before `t`, released after.
    pub fn live_at(&self, a: &Allocations, t: Ps, out: &mut Vec<u32>) {
        out.clear();
        let p = a.start.partition_point(|&s| s <= t);
        if p == 0 || self.max_end.len() < 2 {
            return;
        }
        // Iterative descent over the nodes covering leaves [0, p).
        let mut stack: Vec<(usize, usize, usize)> = vec![(1, 0, self.size)];
        while let Some((node, lo, hi)) = stack.pop() {
            if lo >= p || self.max_end[node] <= t {
                continue;
            }
            if hi - lo <= LEAF_SCAN {
                // Small subtrees: a linear scan of their leaves is cheaper than descending.
                for i in lo..hi.min(p) {
                    if a.end[i] > t {
                        out.push(i as u32);
                    }
                }
                continue;
            }
            let mid = (lo + hi) / 2;
            stack.push((2 * node + 1, mid, hi));
            stack.push((2 * node, lo, mid));
        }
    }
}

/// No op attributed (the capture's `NO_SLICE`).
pub const NO_OP: u32 = NO_SLICE;
