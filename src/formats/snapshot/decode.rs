//! From the decoded pickle of a snapshot to [`Snapshot`]: segments with their blocks, and per
//! device a memory track replayed from the device trace.

use super::pickle::{Pickle, Val, ValId};
use super::types::{Block, Segment, SegmentTotals, Snapshot};
use crate::model::Ps;
use crate::model::memory::{
    EventSource, Frame, LIVE_AT_END, MemTrack, NO_OP, NO_STACK, Oom, Stacks,
};
use rustc_hash::{FxHashMap, FxHashSet};

/// Interns the frames lists of one pickle, once per distinct list object.
struct FrameReader<'p, 'a> {
    p: &'p Pickle<'a>,
    stacks: Stacks,
    memo: FxHashMap<ValId, u32>,
    scratch: Vec<u32>,
}

impl FrameReader<'_, '_> {
    fn stack(&mut self, frames: Option<ValId>) -> u32 {
        let Some(id) = frames else { return NO_STACK };
        if let Some(&s) = self.memo.get(&id) {
            return s;
        }
        self.scratch.clear();
        for &f in self.p.items(id) {
            let get = |k: &str| self.p.get(f, k);
            let frame = Frame {
                name: get("name")
                    .and_then(|v| self.p.str(v))
                    .map_or_else(String::new, |s| s.into_owned()),
                file: get("filename")
                    .and_then(|v| self.p.str(v))
                    .map_or_else(String::new, |s| s.into_owned()),
                line: get("line").and_then(|v| self.p.int(v)).unwrap_or(0),
            };
            let fid = self.stacks.frame(frame);
            self.scratch.push(fid);
        }
        let s = self.stacks.stack(&self.scratch);
        self.memo.insert(id, s);
        s
    }
}

fn int(p: &Pickle<'_>, d: ValId, k: &str) -> Option<i64> {
    p.get(d, k).and_then(|v| p.int(v))
}

fn text(p: &Pickle<'_>, d: ValId, k: &str) -> String {
    p.get(d, k)
        .and_then(|v| p.str(v))
        .map_or_else(String::new, |s| s.into_owned())
}

fn block(p: &Pickle<'_>, fr: &mut FrameReader<'_, '_>, b: ValId) -> Block {
    let size = int(p, b, "size").unwrap_or(0);
    let state = text(p, b, "state");
    let frames = p.get(b, "frames");
    let history = p.get(b, "history").map(|h| {
        p.items(h)
            .iter()
            .map(|&e| {
                let sz = int(p, e, "real_size").unwrap_or(0);
                (sz, p.get(e, "frames").map(|f| fr.stack(Some(f))))
            })
            .collect::<Vec<_>>()
    });
    // memory_viz `_block_extra`: frames + requested_size, else the first history entry, else
    // requested_size or size.
    let requested = if frames.is_some() {
        int(p, b, "requested_size").unwrap_or(size)
    } else if let Some(h) = history.as_ref().and_then(|h| h.first()) {
        h.0
    } else {
        int(p, b, "requested_size").unwrap_or(size)
    };
    let stack = match (frames, &history) {
        (Some(f), _) => fr.stack(Some(f)),
        (None, Some(h)) => h.first().and_then(|e| e.1).unwrap_or(NO_STACK),
        _ => NO_STACK,
    };
    Block {
        size,
        requested,
        state,
        stack,
        has_frames: frames.is_some(),
        history,
    }
}

/// Builds the snapshot of a decoded pickle.
pub fn snapshot(p: &Pickle<'_>) -> Result<Snapshot, String> {
    let root = p.root;
    let (segs, traces) = match p.val(root) {
        Val::Dict(_) => (p.get(root, "segments"), p.get(root, "device_traces")),
        Val::List(_) => (Some(root), None),
        _ => (None, None),
    };
    if segs.is_none() && traces.is_none() {
        return Err(
            "the pickle is not an allocator snapshot (no `segments` or `device_traces`)".into(),
        );
    }
    let mut fr = FrameReader {
        p,
        stacks: Stacks::default(),
        memo: FxHashMap::default(),
        scratch: Vec::new(),
    };
    let mut snap = Snapshot::default();
    let mut totals = SegmentTotals::default();
    for &s in segs.map_or(&[][..], |s| p.items(s)) {
        let blocks: Vec<Block> = p
            .get(s, "blocks")
            .map_or(&[][..], |b| p.items(b))
            .iter()
            .map(|&b| block(p, &mut fr, b))
            .collect();
        let seg = Segment {
            device: int(p, s, "device").unwrap_or(0),
            address: p.get(s, "address").and_then(|v| p.uint(v)).unwrap_or(0),
            total_size: int(p, s, "total_size").unwrap_or(0),
            stream: int(p, s, "stream").unwrap_or(0),
            segment_type: text(p, s, "segment_type"),
            is_expandable: p
                .get(s, "is_expandable")
                .is_some_and(|v| p.val(v) == Val::Bool(true)),
            blocks,
        };
        totals.segments += 1;
        totals.total_reserved += seg.total_size;
        for b in &seg.blocks {
            if b.state == "active_allocated" {
                totals.total_allocated += b.requested;
                totals.free_internal += b.size - b.requested;
            } else {
                totals.free_external += b.size;
            }
        }
        snap.segments.push(seg);
    }
    snap.totals = totals;
    let devices = traces.map_or(&[][..], |t| p.items(t));
    let mut max_dev = snap.segments.iter().map(|s| s.device).max().unwrap_or(-1);
    max_dev = max_dev.max(devices.len() as i64 - 1);
    // Times are kept relative to the earliest entry of any device (µs since the epoch would
    // overflow picoseconds).
    let base_us = devices
        .iter()
        .flat_map(|&e| p.items(e))
        .filter_map(|&e| int(p, e, "time_us"))
        .min()
        .unwrap_or(0);
    snap.origin_us = base_us;
    for d in 0..=max_dev {
        let entries = usize::try_from(d)
            .ok()
            .and_then(|i| devices.get(i))
            .map_or(&[][..], |&e| p.items(e));
        let has_segments = snap.segments.iter().any(|s| s.device == d);
        if entries.is_empty() && !has_segments {
            continue;
        }
        snap.entries += entries.len() as u64;
        let tr = device_track(
            p,
            &mut fr,
            d,
            entries,
            base_us,
            &snap.segments,
            &mut snap.notes,
        );
        snap.model.tracks.push(tr);
    }
    snap.model.stacks = fr.stacks;
    snap.model.source = EventSource::SnapshotTrace;
    Ok(snap)
}

/// Action codes of trace entries.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Action {
    Alloc,
    FreeRequested,
    FreeCompleted,
    SegAdd,
    SegRemove,
    Snapshot,
    Oom,
    Other,
}

fn action(p: &Pickle<'_>, e: ValId) -> Action {
    let Some(a) = p.get(e, "action") else {
        return Action::Other;
    };
    for (name, act) in [
        ("alloc", Action::Alloc),
        ("free_requested", Action::FreeRequested),
        ("free_completed", Action::FreeCompleted),
        ("segment_alloc", Action::SegAdd),
        ("segment_map", Action::SegAdd),
        ("segment_free", Action::SegRemove),
        ("segment_unmap", Action::SegRemove),
        ("snapshot", Action::Snapshot),
        ("oom", Action::Oom),
    ] {
        if p.key_is(a, name) {
            return act;
        }
    }
    Action::Other
}

/// One decoded trace entry.
struct Entry {
    act: Action,
    ts: Ps,
    addr: u64,
    size: i64,
    val: ValId,
}

fn device_track(
    p: &Pickle<'_>,
    fr: &mut FrameReader<'_, '_>,
    d: i64,
    raw: &[ValId],
    base_us: i64,
    segments: &[Segment],
    notes: &mut Vec<String>,
) -> MemTrack {
    // Times: µs → ps; an entry without `time_us` takes the previous entry's time.
    let mut last = 0;
    let entries: Vec<Entry> = raw
        .iter()
        .map(|&e| {
            if let Some(t) = int(p, e, "time_us") {
                last = t.saturating_sub(base_us).saturating_mul(1_000_000);
            }
            Entry {
                act: action(p, e),
                ts: last,
                addr: p.get(e, "addr").and_then(|v| p.uint(v)).unwrap_or(0),
                size: int(p, e, "size").unwrap_or(0),
                val: e,
            }
        })
        .collect();
    let mut entries = entries;
    if entries.windows(2).any(|w| w[1].ts < w[0].ts) {
        // Allocations and samples must be in time order; the buffer normally is.
        entries.sort_by_key(|e| e.ts);
        notes.push(format!(
            "cuda:{d}: trace entries were not in time order; replayed sorted by time_us"
        ));
    }
    let t0 = entries.first().map_or(0, |e| e.ts);
    // Pass 1: frees without their alloc and the live set at the end.
    let mut live: FxHashSet<u64> = FxHashSet::default();
    let mut before: Vec<(Ps, i64, u64, u32)> = Vec::new();
    let mut seg_delta = 0i64;
    let mut other = 0u64;
    for (k, e) in entries.iter().enumerate() {
        match e.act {
            Action::Alloc => {
                live.insert(e.addr);
            }
            Action::FreeCompleted if !live.remove(&e.addr) => {
                before.push((e.ts, e.size, e.addr, k as u32));
            }
            Action::SegAdd => seg_delta += e.size,
            Action::SegRemove => seg_delta -= e.size,
            Action::Other => other += 1,
            _ => {}
        }
    }
    // Blocks active at snapshot time that the trace never allocated.
    let mut untraced: Vec<(i64, u64, u32)> = Vec::new();
    let mut reserved_end = 0;
    for s in segments.iter().filter(|s| s.device == d) {
        reserved_end += s.total_size;
        let mut addr = s.address;
        for b in &s.blocks {
            if b.state.starts_with("active") && !live.contains(&addr) {
                untraced.push((b.size, addr, b.stack));
            }
            addr = addr.wrapping_add(b.size as u64);
        }
    }
    let mut tr = MemTrack {
        device: format!("cuda:{d}"),
        allocator: "caching allocator".into(),
        has_reserved: true,
        totals_from_events: false,
        ..MemTrack::default()
    };
    let mut allocated: i64 =
        before.iter().map(|b| b.1).sum::<i64>() + untraced.iter().map(|b| b.0).sum::<i64>();
    let mut reserved = reserved_end - seg_delta;
    for &(end, size, addr, k) in &before {
        let stack = fr.stack(p.get(entries[k as usize].val, "frames"));
        tr.allocs.push(t0, size, addr, NO_OP, stack, k);
        if let Some(e) = tr.allocs.end.last_mut() {
            *e = end;
        }
    }
    for &(size, addr, stack) in &untraced {
        tr.allocs.push(t0, size, addr, NO_OP, stack, u32::MAX);
    }
    tr.ts.push(t0);
    tr.allocated.push(allocated);
    tr.reserved.push(reserved);
    let mut ids: FxHashMap<u64, u32> = FxHashMap::default();
    for (k, e) in entries.iter().enumerate() {
        match e.act {
            Action::Alloc => {
                tr.counts.allocs += 1;
                let id = tr.allocs.len() as u32;
                if let Some(old) = ids.insert(e.addr, id) {
                    tr.counts.addr_reuse += 1;
                    if tr.allocs.end[old as usize] == LIVE_AT_END {
                        tr.allocs.end[old as usize] = e.ts;
                    }
                }
                let stack = fr.stack(p.get(e.val, "frames"));
                tr.allocs.push(e.ts, e.size, e.addr, NO_OP, stack, k as u32);
                allocated += e.size;
            }
            Action::FreeCompleted => {
                tr.counts.frees += 1;
                match ids.remove(&e.addr) {
                    Some(id) => tr.allocs.end[id as usize] = e.ts,
                    None => tr.counts.unmatched_frees += 1,
                }
                allocated -= e.size;
            }
            Action::SegAdd => reserved += e.size,
            Action::SegRemove => reserved -= e.size,
            Action::Oom => {
                tr.ooms.push(Oom {
                    ts: e.ts,
                    bytes: e.size,
                    device_free: int(p, e.val, "device_free"),
                    allocated: Some(allocated),
                    reserved: Some(reserved),
                    stack: fr.stack(p.get(e.val, "frames")),
                    event: k as u32,
                });
                continue;
            }
            Action::FreeRequested | Action::Snapshot | Action::Other => continue,
        }
        tr.ts.push(e.ts);
        tr.allocated.push(allocated);
        tr.reserved.push(reserved);
    }
    if !before.is_empty() {
        notes.push(format!(
            "cuda:{d}: {} frees of memory allocated before the trace's first entry (recording started late or the ring buffer of max_entries wrapped); counted as allocated from the start, as memory_viz does",
            before.len()
        ));
    }
    if !untraced.is_empty() {
        notes.push(format!(
            "cuda:{d}: {} blocks active at snapshot time were allocated before the trace; counted as allocated from the start",
            untraced.len()
        ));
    }
    if other > 0 {
        notes.push(format!(
            "cuda:{d}: {other} trace entries with an unknown action were skipped"
        ));
    }
    tr
}
