//! Figures of one memory track for reports: peaks, counts, live at end, the ops (or stacks)
//! that allocated most, and the allocations live at a time.

use crate::model::Ps;
use crate::model::memory::{LIVE_AT_END, LiveIndex, MemTrack};
use rustc_hash::FxHashMap;

/// Bytes allocated under one name (op or call site).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedBytes {
    /// Op name or frame.
    pub name: String,
    /// Allocations.
    pub count: u64,
    /// Σ bytes allocated.
    pub bytes: i64,
    /// Of them, bytes still live at the end.
    pub live_bytes: i64,
}

/// The `n` names with the most bytes allocated (ties by name); `name_of(i)` names allocation `i`.
pub fn top_allocators(
    tr: &MemTrack,
    n: usize,
    mut name_of: impl FnMut(usize) -> String,
) -> Vec<NamedBytes> {
    let mut by: FxHashMap<String, NamedBytes> = FxHashMap::default();
    for i in 0..tr.allocs.len() {
        let name = name_of(i);
        let e = by.entry(name.clone()).or_insert(NamedBytes {
            name,
            count: 0,
            bytes: 0,
            live_bytes: 0,
        });
        e.count += 1;
        e.bytes += tr.allocs.bytes[i];
        if tr.allocs.end[i] == LIVE_AT_END {
            e.live_bytes += tr.allocs.bytes[i];
        }
    }
    let mut v: Vec<NamedBytes> = by.into_values().collect();
    v.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
    v.truncate(n);
    v
}

/// Bytes allocated at `t` (the allocator's counter) beyond the `listed` bytes of the
/// allocations the capture shows live then: memory allocated before the capture began and still
/// live (Kineto's `Total Allocated` counts it; no event of the capture allocated it). 0 when
/// nothing is missing.
pub fn unlisted_live(tr: &MemTrack, t: Ps, listed: i64) -> i64 {
    (tr.at(t).0 - listed).max(0)
}

/// Allocations live at `t`, largest first (ties by start).
pub fn live_at(tr: &MemTrack, index: &LiveIndex, t: Ps) -> Vec<u32> {
    let mut out = Vec::new();
    index.live_at(&tr.allocs, t, &mut out);
    out.sort_by(|&a, &b| {
        let (a, b) = (a as usize, b as usize);
        tr.allocs.bytes[b]
            .cmp(&tr.allocs.bytes[a])
            .then(tr.allocs.start[a].cmp(&tr.allocs.start[b]))
    });
    out
}

/// Allocations never freed, largest first.
pub fn live_at_end(tr: &MemTrack) -> Vec<u32> {
    let mut out: Vec<u32> = (0..tr.allocs.len() as u32)
        .filter(|&i| tr.allocs.end[i as usize] == LIVE_AT_END)
        .collect();
    out.sort_by(|&a, &b| {
        let (a, b) = (a as usize, b as usize);
        tr.allocs.bytes[b]
            .cmp(&tr.allocs.bytes[a])
            .then(tr.allocs.start[a].cmp(&tr.allocs.start[b]))
    });
    out
}

/// The `n` largest allocations starting in `[from, to)`, largest first.
pub fn largest_in(tr: &MemTrack, from: Ps, to: Ps, n: usize) -> Vec<u32> {
    let lo = tr.allocs.start.partition_point(|&s| s < from);
    let hi = tr.allocs.start.partition_point(|&s| s < to);
    let mut v: Vec<u32> = (lo as u32..hi as u32).collect();
    v.sort_by(|&a, &b| {
        let (a, b) = (a as usize, b as usize);
        tr.allocs.bytes[b]
            .cmp(&tr.allocs.bytes[a])
            .then(tr.allocs.start[a].cmp(&tr.allocs.start[b]))
    });
    v.truncate(n);
    v
}
