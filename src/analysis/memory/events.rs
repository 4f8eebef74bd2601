//! Reading memory events out of a loaded capture: Kineto `[memory]` / `[OutOfMemory]` instants
//! and XPlane `MemoryAllocation` / `MemoryDeallocation` events (TraceMe instants of the BFC
//! allocator, loaded as zero-length slices or instants) with their args / stats.

use crate::model::{ArgValue, ArgsRef, Capture, Interner, Ps, StrId};

/// Kineto's name of a memory record (torch `MEMORY_EVENT_NAME`).
pub const MEMORY_EVENT: &str = "[memory]";
/// Kineto's name of an out-of-memory record (torch `OUT_OF_MEMORY_EVENT_NAME`).
pub const OOM_EVENT: &str = "[OutOfMemory]";
/// XPlane TraceMe of an allocation.
pub const XPLANE_ALLOC: &str = "MemoryAllocation";
/// XPlane TraceMe of a deallocation.
pub const XPLANE_FREE: &str = "MemoryDeallocation";

/// What a memory event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// `Bytes` > 0 (Kineto) or `MemoryAllocation`.
    Alloc,
    /// `Bytes` < 0 (Kineto) or `MemoryDeallocation`.
    Free,
    /// `[OutOfMemory]`.
    Oom,
}

/// One memory event, in the units of the model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemEvent {
    /// Time, ps.
    pub ts: Ps,
    /// Track (thread) it was recorded on.
    pub track: u32,
    /// Instant id (Kineto) or slice id (XPlane).
    pub id: u32,
    /// Whether `id` is a slice id.
    pub is_slice: bool,
    /// What it is.
    pub kind: MemKind,
    /// Bytes: positive for allocations, negative for frees, the request for OOMs.
    pub bytes: i64,
    /// Address (0 when absent).
    pub addr: u64,
    /// The allocator's allocated bytes after the event, when the event says.
    pub total_allocated: Option<i64>,
    /// The allocator's reserved bytes after the event, when the event says.
    pub total_reserved: Option<i64>,
    /// c10 device type (Kineto `Device Type`), −1 for XPlane.
    pub device_type: i64,
    /// Device index (Kineto `Device Id`).
    pub device_id: i64,
    /// XPlane `allocator_name` (`StrId::EMPTY` for Kineto).
    pub allocator: StrId,
    /// Kineto `Call stack` text, or `StrId::EMPTY`.
    pub stack: StrId,
}

impl MemEvent {
    /// The event `id` (a slice id when `is_slice`) at `ts` on `track`, of the `kind` its name
    /// says, before its args are read: no bytes, address or totals, device type 0, no device id.
    fn unread(ts: Ps, track: u32, id: u32, is_slice: bool, kind: MemKind) -> MemEvent {
        MemEvent {
            ts,
            track,
            id,
            is_slice,
            kind,
            bytes: 0,
            addr: 0,
            total_allocated: None,
            total_reserved: None,
            device_type: 0,
            device_id: -1,
            allocator: StrId::EMPTY,
            stack: StrId::EMPTY,
        }
    }

    /// A Kineto `[memory]` event is a free when its bytes are negative, else an allocation
    /// (an out-of-memory event stays one).
    fn kind_from_bytes(&mut self) {
        if self.kind != MemKind::Oom {
            self.kind = if self.bytes < 0 {
                MemKind::Free
            } else {
                MemKind::Alloc
            };
        }
    }
}

/// What an arg key is to the reader: an index into [`KEY_NAMES`] plus one, 0 for other keys.
type Slot = u8;

/// The arg keys read, in slot order (slot = index + 1): Kineto's six numbers (`Bytes`, `Addr`,
/// `Total Allocated`, `Total Reserved`, `Device Type`, `Device Id`) and its `Call stack`, then
/// XPlane's stats.
pub const KEY_NAMES: [&str; 13] = [
    "Bytes",
    "Addr",
    "Total Allocated",
    "Total Reserved",
    "Device Type",
    "Device Id",
    "Call stack",
    "allocation_bytes",
    "addr",
    "bytes_allocated",
    "bytes_reserved",
    "allocator_name",
    "tf_op",
];
const BYTES: Slot = 1;
const ADDR: Slot = 2;
const TOTAL_ALLOC: Slot = 3;
const TOTAL_RES: Slot = 4;
const DEV_TYPE: Slot = 5;
const DEV_ID: Slot = 6;
const STACK: Slot = 7;
const X_ALLOC_BYTES: Slot = 8;
const X_ADDR: Slot = 9;
const X_BYTES_ALLOCATED: Slot = 10;
const X_BYTES_RESERVED: Slot = 11;
const X_ALLOCATOR: Slot = 12;
const X_TF_OP: Slot = 13;

/// Largest key id given a table entry; keys interned later are found by comparison.
const TABLE_MAX: u32 = 1 << 20;

/// The interned ids of the arg keys read, looked up once: a key id's slot is one table load
/// (per arg of millions of events), not a string comparison or a chain of id compares.
struct Keys {
    /// Slot of each key id below the table's length.
    table: Vec<Slot>,
    /// (id, slot) of keys too large for the table.
    rest: Vec<(StrId, Slot)>,
}

impl Keys {
    fn new(s: &Interner) -> Keys {
        let ids: Vec<(StrId, Slot)> = KEY_NAMES
            .iter()
            .enumerate()
            .filter_map(|(i, n)| s.lookup(n).map(|id| (id, i as Slot + 1)))
            .collect();
        let len = ids
            .iter()
            .map(|(id, _)| id.0 + 1)
            .filter(|&n| n <= TABLE_MAX)
            .max()
            .unwrap_or(0);
        let mut table = vec![0; len as usize];
        let mut rest = Vec::new();
        for &(id, slot) in &ids {
            match table.get_mut(id.index()) {
                Some(t) => *t = slot,
                None => rest.push((id, slot)),
            }
        }
        Keys { table, rest }
    }

    #[inline]
    fn slot(&self, key: StrId) -> Slot {
        match self.table.get(key.index()) {
            Some(&s) => s,
            None if self.rest.is_empty() => 0,
            None => self.rest.iter().find(|r| r.0 == key).map_or(0, |r| r.1),
        }
    }
}

#[inline]
fn int(v: &ArgValue, s: &Interner) -> Option<i64> {
    if let ArgValue::I64(x) = *v {
        // The usual case, without a call.
        return Some(x);
    }
    v.as_i64(s).or(match *v {
        ArgValue::F64(f) if f.is_finite() => Some(f as i64),
        _ => None,
    })
}

#[inline]
fn uint(v: &ArgValue, s: &Interner) -> Option<u64> {
    match *v {
        ArgValue::U64(u) => Some(u),
        ArgValue::I64(i) => Some(i as u64),
        ArgValue::Str(id) => {
            let t = s.get(id).trim();
            t.strip_prefix("0x")
                .map_or_else(|| t.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
        }
        _ => int(v, s).map(|i| i as u64),
    }
}

/// The values of the keys read out of one args block, by slot (`Null` when absent; the last
/// of repeated keys wins). Storing by slot keeps the per-arg work to a table load and a store,
/// with no branch on the key; the values are converted once per event.
#[inline]
fn read_slots(c: &Capture, k: &Keys, args: ArgsRef) -> [ArgValue; KEY_NAMES.len() + 1] {
    let mut vals = [ArgValue::Null; KEY_NAMES.len() + 1];
    c.args.for_each(args, &c.strings, |key, v| {
        let slot = k.slot(key);
        // Stacks and allocator names count only as text (as before: other values ignored).
        let text = matches!(v, ArgValue::Str(_) | ArgValue::Json(_));
        if ((slot != STACK && slot != X_ALLOCATOR && slot != X_TF_OP) || text)
            && let Some(x) = vals.get_mut(usize::from(slot))
        {
            *x = v;
        }
    });
    vals
}

/// Kineto's six numbers by slot (with a bit per slot present) and its `Call stack` text, read in
/// one pass when each number is absent or an integer (`I64`, or a `U64` that fits; an address
/// keeps its bits): no value array is built and nothing is converted. `None` sends the event
/// to the general path (a number given as text, float or null), with the same result, slower.
#[inline]
fn kineto_ints(c: &Capture, k: &Keys, args: ArgsRef) -> Option<([i64; 7], u8, StrId)> {
    let mut v = [0i64; 7];
    let mut have = 0u8;
    let mut stack = StrId::EMPTY;
    let mut plain = true;
    c.args
        .for_each(args, &c.strings, |key, val| match k.slot(key) {
            s @ BYTES..=DEV_ID => match val {
                ArgValue::I64(x) => {
                    v[usize::from(s)] = x;
                    have |= 1 << s;
                }
                // An address keeps its bits; another number must fit.
                ArgValue::U64(x) if s == ADDR || x <= i64::MAX as u64 => {
                    v[usize::from(s)] = x as i64;
                    have |= 1 << s;
                }
                _ => plain = false,
            },
            STACK => {
                if let ArgValue::Str(id) | ArgValue::Json(id) = val {
                    stack = id;
                }
            }
            _ => {}
        });
    plain.then_some((v, have, stack))
}

fn kineto_event(c: &Capture, k: &Keys, args: ArgsRef, base: MemEvent) -> MemEvent {
    let mut e = base;
    if let Some((v, have, stack)) = kineto_ints(c, k, args) {
        let at = |s: Slot| (have >> s & 1 == 1).then(|| v[usize::from(s)]);
        e.bytes = at(BYTES).unwrap_or(0);
        e.addr = at(ADDR).map_or(0, |a| a as u64);
        e.total_allocated = at(TOTAL_ALLOC);
        e.total_reserved = at(TOTAL_RES);
        e.device_type = at(DEV_TYPE).unwrap_or(0);
        e.device_id = at(DEV_ID).unwrap_or(-1);
        e.stack = stack;
    } else {
        kineto_fields(c, k, args, &mut e);
    }
    e.kind_from_bytes();
    e
}

/// Kineto's fields of `e` read by the general path: every value type converted as
/// [`ArgValue::as_i64`] does (numbers as text, floats), for events [`kineto_ints`] declines.
/// Inlined: as a call of its own it slows the fast path's caller by a tenth.
#[inline(always)]
fn kineto_fields(c: &Capture, k: &Keys, args: ArgsRef, e: &mut MemEvent) {
    let s = &c.strings;
    let v = read_slots(c, k, args);
    let at = |slot: Slot| &v[usize::from(slot)];
    e.bytes = int(at(BYTES), s).unwrap_or(0);
    e.addr = uint(at(ADDR), s).unwrap_or(0);
    e.total_allocated = int(at(TOTAL_ALLOC), s);
    e.total_reserved = int(at(TOTAL_RES), s);
    e.device_type = int(at(DEV_TYPE), s).unwrap_or(0);
    e.device_id = int(at(DEV_ID), s).unwrap_or(-1);
    if let ArgValue::Str(id) | ArgValue::Json(id) = *at(STACK) {
        e.stack = id;
    }
}

fn xplane_event(c: &Capture, k: &Keys, args: ArgsRef, base: MemEvent) -> MemEvent {
    let mut e = base;
    e.device_type = -1;
    e.device_id = -1;
    let s = &c.strings;
    let v = read_slots(c, k, args);
    let at = |slot: Slot| &v[usize::from(slot)];
    if !matches!(at(X_ALLOC_BYTES), ArgValue::Null) {
        let b = int(at(X_ALLOC_BYTES), s).unwrap_or(0).saturating_abs();
        e.bytes = if e.kind == MemKind::Free { -b } else { b };
    }
    e.addr = uint(at(X_ADDR), s).unwrap_or(0);
    e.total_allocated = int(at(X_BYTES_ALLOCATED), s);
    // XProf's memory profile: `bytes_reserved` is the stack reservation (TPU), not an
    // allocator's cache; memory in use is heap allocated + stack reserved. Without a stack
    // reservation there is nothing beyond the allocated bytes to show.
    e.total_reserved = match (e.total_allocated, int(at(X_BYTES_RESERVED), s)) {
        (Some(a), Some(r)) if r > 0 => Some(a.saturating_add(r)),
        _ => None,
    };
    if let ArgValue::Str(id) = *at(X_ALLOCATOR) {
        e.allocator = id;
    }
    // XProf attributes an allocation to its `tf_op` stat (a free takes its allocation's):
    // kept as a one-frame call stack.
    if let ArgValue::Str(id) = *at(X_TF_OP) {
        e.stack = id;
    }
    e
}

/// The ids of the four memory event names (`None` when the capture never names one).
#[derive(Clone, Copy, Debug)]
pub(super) struct Names {
    mem: Option<StrId>,
    oom: Option<StrId>,
    alloc: Option<StrId>,
    free: Option<StrId>,
}

impl Names {
    pub(super) fn of(c: &Capture) -> Names {
        let s = &c.strings;
        Names {
            mem: s.lookup(MEMORY_EVENT),
            oom: s.lookup(OOM_EVENT),
            alloc: s.lookup(XPLANE_ALLOC),
            free: s.lookup(XPLANE_FREE),
        }
    }

    /// What a name says: (kind, is an XPlane allocator event), or `None` for other events (a
    /// Kineto `[memory]` reads as `Alloc` until its `Bytes` say).
    #[inline]
    fn what(&self, n: StrId) -> Option<(MemKind, bool)> {
        let n = Some(n);
        if n == self.mem {
            Some((MemKind::Alloc, false))
        } else if n == self.oom {
            Some((MemKind::Oom, false))
        } else if n == self.alloc {
            Some((MemKind::Alloc, true))
        } else if n == self.free {
            Some((MemKind::Free, true))
        } else {
            None
        }
    }

    /// True for the name of a memory event (never the op enclosing an allocation).
    #[inline]
    pub(super) fn contains(&self, n: StrId) -> bool {
        self.what(n).is_some()
    }
}

/// The memory events of a capture before their args are read: 4 bytes each (the event's id; its
/// time, track and name stay in the model's columns), and their time order. Stored instants
/// first, track by track, then XPlane slices track by track, each track's events in time order.
#[derive(Clone, Debug)]
pub struct MemRefs {
    /// Instant ids, then slice ids from `first_slice` on.
    ids: Vec<u32>,
    /// Track of each slice entry (slices keep no track column).
    slice_tracks: Vec<u32>,
    first_slice: usize,
    names: Names,
    /// Indexes into the stored events sorted by (time, instants before slices, id).
    pub order: Vec<u32>,
}

impl MemRefs {
    /// Number of memory events.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when the capture has none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether any is an XPlane slice.
    pub fn has_slices(&self) -> bool {
        self.first_slice < self.ids.len()
    }

    /// Whether stored event `k` is a slice (else an instant).
    #[inline]
    pub fn is_slice(&self, k: usize) -> bool {
        k >= self.first_slice
    }

    /// Instant or slice id of stored event `k`.
    #[inline]
    pub fn id(&self, k: usize) -> u32 {
        self.ids[k]
    }

    /// Time of stored event `k`, ps.
    #[inline]
    pub fn ts(&self, c: &Capture, k: usize) -> Ps {
        let i = self.ids[k] as usize;
        if self.is_slice(k) {
            c.slices.start[i]
        } else {
            c.instants.ts[i]
        }
    }

    /// Track of stored event `k`.
    #[inline]
    pub fn track(&self, c: &Capture, k: usize) -> u32 {
        if self.is_slice(k) {
            self.slice_tracks[k - self.first_slice]
        } else {
            c.instants.track[self.ids[k] as usize]
        }
    }

    /// What stored event `k`'s name says: (kind, is an XPlane allocator event).
    #[inline]
    fn what(&self, c: &Capture, k: usize) -> (MemKind, bool) {
        let i = self.ids[k] as usize;
        let name = if self.is_slice(k) {
            c.slices.name[i]
        } else {
            c.instants.name[i]
        };
        self.names.what(name).unwrap_or((MemKind::Alloc, false))
    }
}

/// Reads the args of stored memory events into [`MemEvent`]s (the arg keys looked up once).
pub struct Reader {
    keys: Keys,
}

impl Reader {
    /// A reader for the events of `c`.
    pub fn new(c: &Capture) -> Reader {
        Reader {
            keys: Keys::new(&c.strings),
        }
    }

    /// Stored event `k` of `refs` with its args read.
    pub fn read(&self, c: &Capture, refs: &MemRefs, k: usize) -> MemEvent {
        let (kind, xplane) = refs.what(c, k);
        let id = refs.id(k);
        let is_slice = refs.is_slice(k);
        let base = MemEvent::unread(refs.ts(c, k), refs.track(c, k), id, is_slice, kind);
        let args = if is_slice {
            c.slices.args.get(id as usize)
        } else {
            c.instants.args.get(id as usize)
        };
        let args = args.copied().unwrap_or(ArgsRef::NONE);
        if xplane {
            xplane_event(c, &self.keys, args, base)
        } else {
            kineto_event(c, &self.keys, args, base)
        }
    }
}

/// Every memory event of `c`, sorted by (time, kind of source, id).
pub fn memory_events(c: &Capture) -> Vec<MemEvent> {
    let refs = memory_refs(c);
    let rd = Reader::new(c);
    refs.order
        .iter()
        .map(|&k| rd.read(c, &refs, k as usize))
        .collect()
}

/// Every memory event of `c` (args not read), and their time order, merged from the runs of
/// the stored order (no sort).
pub fn memory_refs(c: &Capture) -> MemRefs {
    let names = Names::of(c);
    let mut refs = MemRefs {
        ids: Vec::new(),
        slice_tracks: Vec::new(),
        first_slice: 0,
        names,
        order: Vec::new(),
    };
    if names.mem.is_none() && names.oom.is_none() && names.alloc.is_none() && names.free.is_none() {
        return refs;
    }
    let inst = &c.instants;
    let is_mem = |n: &StrId| names.contains(*n);
    refs.ids
        .reserve(inst.name.iter().filter(|n| is_mem(n)).count());
    refs.ids.extend(
        inst.name
            .iter()
            .enumerate()
            .filter(|(_, n)| is_mem(n))
            .map(|(i, _)| i as u32),
    );
    refs.first_slice = refs.ids.len();
    if names.alloc.is_some() || names.free.is_some() {
        for (t, tr) in c.tracks.iter().enumerate() {
            for id in tr.slices.0..tr.slices.1 {
                if let Some((_, true)) = names.what(c.slices.name[id as usize]) {
                    refs.ids.push(id);
                    refs.slice_tracks.push(t as u32);
                }
            }
        }
    }
    refs.order = time_order(refs.len(), |k| {
        (refs.ts(c, k), refs.is_slice(k), refs.id(k))
    });
    refs
}

/// The time order of memory events: (time, is_slice, id).
type EventKey = (Ps, bool, u32);

/// Indexes `0..n` sorted by `key`: a k-way merge of the maximal non-decreasing runs of the stored
/// order (one per track as stored), O(n log runs).
fn time_order(n: usize, key: impl Fn(usize) -> EventKey) -> Vec<u32> {
    use std::cmp::Reverse;
    let mut runs: Vec<(u32, u32)> = Vec::new();
    let mut lo = 0usize;
    for i in 1..=n {
        if i == n || key(i) < key(i - 1) {
            runs.push((lo as u32, i as u32));
            lo = i;
        }
    }
    if runs.len() <= 1 {
        return (0..n as u32).collect();
    }
    let mut out = Vec::with_capacity(n);
    if runs.len() <= 8 {
        // Few runs (threads): a scan of their heads beats a heap.
        let mut heads: Vec<EventKey> = runs.iter().map(|&(a, _)| key(a as usize)).collect();
        loop {
            let mut best: Option<usize> = None;
            for (r, &(a, b)) in runs.iter().enumerate() {
                if a < b && best.is_none_or(|q| heads[r] < heads[q]) {
                    best = Some(r);
                }
            }
            let Some(r) = best else { break };
            out.push(runs[r].0);
            runs[r].0 += 1;
            if runs[r].0 < runs[r].1 {
                heads[r] = key(runs[r].0 as usize);
            }
        }
        return out;
    }
    let mut heap: std::collections::BinaryHeap<Reverse<(EventKey, u32)>> = runs
        .iter()
        .enumerate()
        .map(|(r, &(a, _))| Reverse((key(a as usize), r as u32)))
        .collect();
    while let Some(Reverse((_, r))) = heap.pop() {
        let run = &mut runs[r as usize];
        out.push(run.0);
        run.0 += 1;
        if run.0 < run.1 {
            heap.push(Reverse((key(run.0 as usize), r)));
        }
    }
    out
}

/// c10 `DeviceType` names (`c10/core/DeviceType.h`), by number.
pub fn device_type_name(t: i64) -> &'static str {
    const NAMES: [&str; 21] = [
        "cpu",
        "cuda",
        "mkldnn",
        "opengl",
        "opencl",
        "ideep",
        "hip",
        "fpga",
        "maia",
        "xla",
        "vulkan",
        "metal",
        "xpu",
        "mps",
        "meta",
        "hpu",
        "ve",
        "lazy",
        "ipu",
        "mtia",
        "privateuseone",
    ];
    usize::try_from(t)
        .ok()
        .and_then(|i| NAMES.get(i).copied())
        .unwrap_or("device")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaptureBuilder, Format, Key, SourceInfo, TrackKind};
    use proptest::prelude::*;

    /// (time, is_slice, id) keys of events stored run after run.
    fn keys(runs: &[Vec<i64>]) -> Vec<EventKey> {
        let mut out = Vec::new();
        for run in runs {
            for &ts in run {
                out.push((ts, false, out.len() as u32));
            }
        }
        out
    }

    #[test]
    fn time_order_merges_runs_like_a_sort() {
        // Few runs (the scan) and many (the heap), with ties across runs.
        for nruns in [1usize, 3, 8, 9, 40] {
            let mut x = 0x2545_f491_u64 + nruns as u64;
            let runs: Vec<Vec<i64>> = (0..nruns)
                .map(|_| {
                    let mut t = 0i64;
                    (0..(x % 50) as usize + 1)
                        .map(|_| {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            t += (x % 3) as i64;
                            t
                        })
                        .collect()
                })
                .collect();
            let ev = keys(&runs);
            let mut want: Vec<u32> = (0..ev.len() as u32).collect();
            want.sort_by_key(|&k| ev[k as usize]);
            assert_eq!(time_order(ev.len(), |k| ev[k]), want, "{nruns} runs");
        }
    }

    proptest! {
        /// The one-pass integer reader and the general path read every Kineto args block alike:
        /// any of the twelve keys (and another) in any order, repeated, with any value type.
        #[test]
        fn kineto_fast_path_equals_general(
            entries in proptest::collection::vec((0usize..13, 0u8..10, any::<i64>()), 0..12),
        ) {
            let mut b = CaptureBuilder::new();
            let p = b.process(Key::Int(1));
            let th = b.track(p, Key::Int(1), TrackKind::Thread);
            let mem = b.intern(MEMORY_EVENT);
            let keys: Vec<StrId> = KEY_NAMES
                .iter()
                .chain(&["Other"])
                .map(|n| b.intern(n))
                .collect();
            let texts = [b.intern("123"), b.intern(" 0x40 "), b.intern("f;g"), b.intern("x")];
            b.args.begin();
            for &(key, ty, x) in &entries {
                // Every value type a loader stores, numbers as text among them.
                let v = match ty {
                    0 | 1 => ArgValue::I64(x),
                    2 => ArgValue::U64(x as u64),
                    3 => ArgValue::U64((x as u64) >> 1),
                    4 => ArgValue::F64(x as f64 / 7.0),
                    5 => ArgValue::Str(texts[(x as usize) % texts.len()]),
                    6 => ArgValue::Json(texts[2]),
                    7 => ArgValue::Null,
                    8 => ArgValue::Bool(x & 1 == 1),
                    _ => ArgValue::F64(x as f64),
                };
                b.args.push(keys[key], v);
            }
            let args = b.args.finish();
            b.add_instant(th, 5, mem, mem, args, b't');
            let c = b.finish(SourceInfo::default(), Format::Kineto);
            let k = Keys::new(&c.strings);
            let args = c.instants.args[0];
            let base = MemEvent::unread(5, th, 0, false, MemKind::Alloc);
            let got = kineto_event(&c, &k, args, base);
            let mut want = base;
            kineto_fields(&c, &k, args, &mut want);
            want.kind_from_bytes();
            prop_assert_eq!(got, want);
        }
    }
}
