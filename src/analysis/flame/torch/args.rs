//! `export_stacks` of captures whose ops carry their Python stack as a `Call stack` argument
//! and whose python frames have no `CallFrom` (torch 2.11 with `with_stack` and the verbose
//! experimental config; the H200 captures of gen_torch_capture.py). There torch's event list is
//! the Kineto events, without the python tracer's frames:
//!
//! - Function events: the thread's `cpu_op`, `user_annotation`, `cuda_runtime`, `cuda_driver`;
//!   `python_function` events are not in the list (no line, no child, no self time taken).
//!   Children and `_remove_dup_nodes` over those, as in the CPU path.
//! - Stack of an op: its `Call stack` (innermost frame first in the file, filtered by
//!   `_filter_stack_entry`). A runtime or driver call has none in the file; torch gives it the
//!   stack of the event it was recorded under: the innermost op or `python_function` around it
//!   on its thread (an op's stack, or the python frame followed by that frame's own stack).
//! - Backward: as in the CPU path, ops at or below a backward function take the stack of the
//!   first forward event with the same sequence number on the forward thread.
//! - Device metric: an op's own device time (lifted by the merge); and every device event
//!   writes its own line too (torch's device `FunctionEvent`s have stacks): a kernel, copy or
//!   set its duration with the stack its launching op (`External id`) has in the file (before
//!   the backward rewrite); a `gpu_user_annotation` its span, with the stack of the first device
//!   activity that starts inside it on its stream.

use super::{Ev, Keys, Kind, TorchMetric, TorchStacks, arg_i64, effective_parent, keep_frame};
use crate::analysis::flame::folded::sanitize_frame;
use crate::analysis::flame::gpu::DeviceLinks;
use crate::analysis::nesting::ContainmentStack;
use crate::model::{Capture, Category, NO_SLICE, Ps, StrId};
use rustc_hash::FxHashMap;

/// The `Call stack` key when `c` takes these rules: see
/// [`crate::analysis::torch_events::call_stack_key`].
pub(super) fn has_call_stacks(c: &Capture) -> Option<StrId> {
    crate::analysis::torch_events::call_stack_key(c)
}

/// Appends the folded form of a `Call stack` value (innermost first, `;`-separated) to `out`:
/// root first, filtered frames dropped, each frame sanitized; `leaf` (a python frame's own
/// name) goes last.
fn fold_call_stack(text: &str, leaf: Option<&str>, out: &mut String) {
    let mut first = true;
    let frames = text.split(';').filter(|f| !f.is_empty() && keep_frame(f));
    let frames: Vec<&str> = leaf.into_iter().chain(frames).collect();
    for f in frames.iter().rev() {
        if !first {
            out.push(';');
        }
        first = false;
        sanitize_frame(f, out);
    }
}

/// The `Call stack` text of slice `id`.
fn call_stack(c: &Capture, key: StrId, id: u32) -> Option<&str> {
    match c.args.get(c.slices.args[id as usize], key, &c.strings)? {
        crate::model::ArgValue::Str(s) => Some(c.strings.get(s)),
        _ => None,
    }
}

/// torch's `export_stacks(metric)` of a capture with `Call stack` arguments.
pub(super) fn export_stacks(c: &Capture, metric: TorchMetric, key: StrId) -> TorchStacks {
    let s = &c.slices;
    let keys = Keys {
        seq: c.strings.lookup("Sequence number"),
        fwd: c.strings.lookup("Fwd thread id"),
        ext: c.strings.lookup("External id"),
    };
    let mut out = TorchStacks::default();
    let links = (metric == TorchMetric::SelfDevice).then(|| DeviceLinks::of(c));
    let mut dev_by_ext: FxHashMap<i64, Ps> = FxHashMap::default();
    if let Some(l) = &links {
        for &a in l.pairs.iter().map(|p| &p.1).chain(&l.unlinked) {
            if let Some(e) = arg_i64(c, a, keys.ext) {
                *dev_by_ext.entry(e).or_insert(0) += s.dur[a as usize];
            }
        }
    }
    let fwd_track = super::forward_tracks(c, &keys);
    // Per thread: the op events (containment parents, merge) and each one's stack as the file
    // has it (`raw`, before the backward rewrite).
    let mut per_track: Vec<(u32, Vec<Ev>, Vec<String>)> = Vec::new();
    // Where the device lines find their stacks (positions in `per_track`, no copies): ops and
    // annotations by `External id`, launch calls by correlation id, annotations' threads.
    let mut raw_by_ext: FxHashMap<i64, At> = FxHashMap::default();
    let mut raw_by_corr: FxHashMap<u64, At> = FxHashMap::default();
    let mut thread_by_ext: FxHashMap<i64, u32> = FxHashMap::default();
    for (t, tr) in c.tracks.iter().enumerate() {
        let mut evs: Vec<Ev> = Vec::new();
        let mut raw: Vec<String> = Vec::new();
        let mut ops: ContainmentStack<u32> = ContainmentStack::new();
        // Innermost op (its index) or python frame (slice id | PY) around an event.
        const PY: u32 = 1 << 31;
        let mut around: ContainmentStack<u32> = ContainmentStack::new();
        for id in tr.slices.0..tr.slices.1 {
            let i = id as usize;
            let (start, end) = (s.start[i], s.end(i));
            match s.kind(i) {
                Category::CpuOp
                | Category::UserAnnotation
                | Category::Runtime
                | Category::Driver => {}
                Category::PythonFunction => {
                    out.python_events += 1;
                    if id < PY {
                        around.push(start, end, id | PY, |_| {}, |_| {});
                    }
                    continue;
                }
                _ => continue,
            }
            let k = evs.len() as u32;
            let mut parent = NO_SLICE;
            ops.push(start, end, k, |_| {}, |p| parent = *p);
            let mut outer = NO_SLICE;
            around.push(start, end, k, |_| {}, |p| outer = *p);
            let mut st = String::new();
            match call_stack(c, key, id) {
                Some(text) => fold_call_stack(text, None, &mut st),
                None if outer == NO_SLICE => {}
                None if outer & PY != 0 => {
                    let py = outer & !PY;
                    if let Some(text) = call_stack(c, key, py) {
                        fold_call_stack(text, Some(c.slice_name(py)), &mut st);
                    }
                }
                None => st.clone_from(&raw[outer as usize]),
            }
            // This thread's place in `per_track` (it is pushed: `evs` gets this event).
            let at = (per_track.len() as u32, k);
            if let Some(e) = arg_i64(c, id, keys.ext)
                && matches!(s.kind(i), Category::CpuOp | Category::UserAnnotation)
            {
                raw_by_ext.entry(e).or_insert(at);
                if s.kind(i) == Category::UserAnnotation {
                    thread_by_ext.entry(e).or_insert(at.0);
                }
            }
            if matches!(s.kind(i), Category::Runtime | Category::Driver) && s.corr(i) != 0 {
                raw_by_corr.entry(s.corr(i)).or_insert(at);
            }
            raw.push(st);
            evs.push(Ev {
                id,
                kind: Kind::Op,
                parent,
                stack_parent: NO_SLICE,
                removed: false,
            });
        }
        if !evs.is_empty() {
            super::remove_dup_nodes(c, &mut evs);
            per_track.push((t as u32, evs, raw));
        }
    }
    // Forward stacks by (sequence number, track): the first event outside any backward function.
    let mut fwd_stacks: FxHashMap<(i64, u32), String> = FxHashMap::default();
    let mut bw: Vec<u32> = Vec::new();
    for (t, evs, raw) in &per_track {
        super::backward_roots(c, &keys, evs, &mut bw);
        for (k, e) in evs.iter().enumerate() {
            if !e.removed && bw[k] == NO_SLICE {
                let seq = arg_i64(c, e.id, keys.seq).unwrap_or(-1);
                fwd_stacks
                    .entry((seq, *t))
                    .or_insert_with(|| raw[k].clone());
            }
        }
    }
    let mut lines: Vec<(String, u64)> = Vec::new();
    for (t, evs, raw) in &per_track {
        let mut child_dur: Vec<Ps> = vec![0; evs.len()];
        for e in evs.iter().filter(|e| !e.removed) {
            if let Some(p) = effective_parent(evs, e.parent) {
                child_dur[p as usize] += s.dur[e.id as usize];
            }
        }
        super::backward_roots(c, &keys, evs, &mut bw);
        for (k, e) in evs.iter().enumerate() {
            if e.removed {
                continue;
            }
            let v: Ps = match metric {
                TorchMetric::SelfCpu => s.dur[e.id as usize] - child_dur[k],
                TorchMetric::SelfDevice => super::own_device(c, evs, k, &keys, &dev_by_ext),
            };
            let v = v / 1_000_000;
            if v <= 0 {
                continue;
            }
            let st = if bw[k] == NO_SLICE {
                raw[k].clone()
            } else {
                super::forward_stack(
                    c,
                    &keys,
                    evs[bw[k] as usize].id,
                    *t,
                    &fwd_track,
                    &fwd_stacks,
                )
            };
            if st.is_empty() {
                continue;
            }
            out.instances += 1;
            lines.push((st, v as u64));
        }
    }
    if metric == TorchMetric::SelfDevice {
        let stacks = RawStacks {
            key,
            by_ext: &raw_by_ext,
            by_corr: &raw_by_corr,
            thread_by_ext: &thread_by_ext,
            per_track: &per_track,
        };
        device_event_lines(c, &keys, &stacks, &mut out, &mut lines);
    }
    out.lines =
        crate::analysis::flame::folded::sum_lines(lines.iter().map(|(s, v)| (s.as_str(), *v)));
    out
}

/// An event's place: (index in `per_track`, index in that thread's events).
type At = (u32, u32);

/// The stacks the file gives, for the device events' lines.
struct RawStacks<'a> {
    /// The `Call stack` key.
    key: StrId,
    /// Ops and annotations by `External id`.
    by_ext: &'a FxHashMap<i64, At>,
    /// Launch (runtime / driver) calls by correlation id.
    by_corr: &'a FxHashMap<u64, At>,
    /// The thread (index in `per_track`) of each user annotation, by `External id`.
    thread_by_ext: &'a FxHashMap<i64, u32>,
    /// Per thread: its track, its events (slice order) and their stacks.
    per_track: &'a [(u32, Vec<Ev>, Vec<String>)],
}

impl RawStacks<'_> {
    /// The stack of the event at `at`.
    fn raw(&self, at: At) -> Option<&String> {
        self.per_track.get(at.0 as usize)?.2.get(at.1 as usize)
    }

    /// The stack of the innermost event (op, annotation, launch call or python frame) running
    /// at `at` on thread `thread` (index in `per_track`): where torch's event tree puts a device
    /// annotation.
    fn running_at(&self, c: &Capture, thread: u32, at: Ps) -> Option<String> {
        let s = &c.slices;
        let (track, evs, raw) = self.per_track.get(thread as usize)?;
        let tr = c.tracks.get(*track as usize)?;
        let ids = tr.slices.0 as usize..tr.slices.1 as usize;
        let after = s.start[ids.clone()].partition_point(|&x| x <= at);
        let mut id = (ids.start + after)
            .checked_sub(1)
            .filter(|&i| i >= ids.start)? as u32;
        loop {
            let i = id as usize;
            if s.start[i] <= at && at < s.end(i) {
                if let Some(p) = orphaned(c, id, ids.start as u32, at) {
                    // Closed with its parent: what runs is around that parent.
                    id = p;
                    continue;
                }
                match s.kind(i) {
                    Category::PythonFunction => {
                        let mut st = String::new();
                        if let Some(text) = call_stack(c, self.key, id) {
                            fold_call_stack(text, Some(c.slice_name(id)), &mut st);
                        }
                        return Some(st);
                    }
                    Category::CpuOp
                    | Category::UserAnnotation
                    | Category::Runtime
                    | Category::Driver => {
                        let k = evs.binary_search_by_key(&id, |e| e.id).ok()?;
                        return raw.get(k).cloned();
                    }
                    _ => {}
                }
            }
            id = s.parent[i];
            if id == NO_SLICE {
                return None;
            }
        }
    }
}

/// torch's parent of slice `id` when torch's tree has closed `id` by `at`: the innermost slice
/// around its start (torch's parent for it) ends before it and by `at` — e.g. an annotation
/// entered inside the `_record_function_enter_new` call, which returns at once. torch's
/// per-thread stack pops such a child with its parent, so what runs at `at` is around that
/// parent. `first`: the track's first slice id.
fn orphaned(c: &Capture, id: u32, first: u32, at: Ps) -> Option<u32> {
    let s = &c.slices;
    if id <= first {
        return None;
    }
    let start = s.start[id as usize];
    // The slices before `id` that contain its start are `id - 1` and its ancestors.
    let mut p = id - 1;
    while p != NO_SLICE && s.end(p as usize) <= start {
        p = s.parent[p as usize];
    }
    (p != NO_SLICE && s.end(p as usize) < s.end(id as usize) && s.end(p as usize) <= at)
        .then_some(p)
}

/// The device events' own lines (torch's device `FunctionEvent`s have stacks, from its event
/// tree): an activity takes its launch call's stack (the innermost op or python frame around
/// the call; a CUDA graph's kernels all take their `cudaGraphLaunch`'s), else its op's by
/// `External id`; a `gpu_user_annotation` the stack of whatever runs on its host annotation's
/// thread when its span starts on the device (the CPU is usually ahead: often a later op).
fn device_event_lines(
    c: &Capture,
    keys: &Keys,
    stacks: &RawStacks<'_>,
    out: &mut TorchStacks,
    lines: &mut Vec<(String, u64)>,
) {
    let s = &c.slices;
    for tr in &c.tracks {
        for id in tr.slices.0..tr.slices.1 {
            let i = id as usize;
            let st = if s.kind(i).is_activity() {
                let by_corr = (s.corr(i) != 0)
                    .then(|| stacks.by_corr.get(&s.corr(i)))
                    .flatten();
                by_corr
                    .or_else(|| stacks.by_ext.get(&arg_i64(c, id, keys.ext)?))
                    .and_then(|&at| stacks.raw(at))
                    .cloned()
            } else if s.kind(i) == Category::GpuUserAnnotation {
                arg_i64(c, id, keys.ext)
                    .and_then(|e| stacks.thread_by_ext.get(&e))
                    .and_then(|&t| stacks.running_at(c, t, s.start[i]))
            } else {
                continue;
            };
            let v = s.dur[i] / 1_000_000;
            match st {
                Some(st) if v > 0 && !st.is_empty() => {
                    out.instances += 1;
                    lines.push((st, v as u64));
                }
                _ => {}
            }
        }
    }
}
