//! torch's `EventList.export_stacks` (torch/autograd/profiler_util.py) reproduced from a Kineto
//! capture recorded with `with_stack=True`:
//!
//! - Function events: the CPU ops of a thread (`cpu_op`, `user_annotation`, `cuda_runtime`,
//!   `cuda_driver`) and its `python_function` events; children by torch's containment rule
//!   (`_populate_cpu_children`), then `_remove_dup_nodes` (a child named like its parent, when it
//!   is the parent's only child, is removed and its children move up; `ProfilerStep#N` compares
//!   as `ProfilerStep*`).
//! - Every function event writes a line, `python_function` events included: with
//!   `experimental_config(verbose=True)` (which `with_stack` stacks need) torch's event list holds
//!   them too, and their self time is what they spent outside their children.
//! - Stack of an event: its `python_function` ancestors in torch's C++ event tree
//!   (`build_tree` in torch/csrc/profiler/collection.cpp), innermost first, without the frames
//!   `_filter_stack_entry` drops; written root first, each frame with ` `, `;`, tab and newline
//!   replaced by `_`. That tree is not the containment tree: an event's parent is the innermost
//!   event still open when it starts (an event closes when its end is before the new start, and
//!   closing it closes everything opened inside it), so a `record_function` annotation that
//!   starts inside `_record_function_enter_new` and outlives it keeps those frames.
//!   Self time and `_remove_dup_nodes` use the containment tree, as torch's Python side does.
//! - Backward: an op at or below a backward function (an event with a `Fwd thread id` that is
//!   not `autograd::engine::evaluate_function: …`; torch's `scope == BACKWARD_FUNCTION`) takes
//!   the stack of the first forward event with the same sequence number on the forward thread
//!   (`_set_backward_stacktraces`).
//! - Value per op instance: self time (duration − children's durations) in µs, truncated
//!   (`int()`); device: the duration of the device activities whose `External id` is the op's.
//!   Instances with a value ≤ 0 or an empty stack write nothing.
//!
//! torch writes one line per instance; [`export_stacks`] returns them summed per stack.

mod args;

use super::folded::sanitize_frame;
use super::gpu::DeviceLinks;
use crate::analysis::nesting::ContainmentStack;
use crate::analysis::stats::group_name;
use crate::model::{Capture, Category, NO_SLICE, Ps, StrId};
use rustc_hash::FxHashMap;

/// torch's `_filter_stack_entry`: frames containing both parts of a pair are dropped.
const FILTERED: [(&str, &str); 6] = [
    ("autograd/__init__", "_make_grads"),
    ("autograd/__init__", "backward"),
    ("torch/tensor", "backward"),
    ("_internal/common_utils", "prof_callable"),
    ("_internal/common_utils", "prof_func_call"),
    ("_internal/common_utils", "prof_meth_call"),
];

/// True when torch keeps a Python frame in stacks.
pub fn keep_frame(name: &str) -> bool {
    FILTERED
        .iter()
        .all(|(a, b)| !(name.contains(a) && name.contains(b)))
}

/// Which torch metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TorchMetric {
    /// `self_cpu_time_total`.
    SelfCpu,
    /// `self_cuda_time_total` (`self_device_time_total`).
    SelfDevice,
}

/// torch-style folded stacks of a capture.
#[derive(Clone, Debug, Default)]
pub struct TorchStacks {
    /// (stack, Σ of torch's per-instance values), sorted by stack.
    pub lines: Vec<(String, u64)>,
    /// `python_function` events in the capture (0: recorded without stacks).
    pub python_events: u64,
    /// Op instances that wrote a line.
    pub instances: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Op,
    Py,
}

struct Ev {
    id: u32,
    kind: Kind,
    /// Containment parent (torch's `_populate_cpu_children`), an index into the track's events.
    parent: u32,
    /// Parent in torch's C++ event tree (see the module docs), for stacks.
    stack_parent: u32,
    removed: bool,
}

struct Keys {
    seq: Option<StrId>,
    fwd: Option<StrId>,
    ext: Option<StrId>,
}

fn arg_i64(c: &Capture, id: u32, key: Option<StrId>) -> Option<i64> {
    let k = key?;
    c.args
        .get(c.slices.args[id as usize], k, &c.strings)
        .and_then(|v| v.as_i64(&c.strings))
}

/// Computes torch's `export_stacks(metric)` lines for `c`, summed per stack. Captures whose ops
/// carry a `Call stack` argument take the rules of [`args`].
pub fn export_stacks(c: &Capture, metric: TorchMetric) -> TorchStacks {
    if let Some(key) = args::has_call_stacks(c) {
        return args::export_stacks(c, metric, key);
    }
    let s = &c.slices;
    let keys = Keys {
        seq: c.strings.lookup("Sequence number"),
        fwd: c.strings.lookup("Fwd thread id"),
        ext: c.strings.lookup("External id"),
    };
    let mut out = TorchStacks::default();
    // Device time per External id (torch attaches kernels to the op with that id).
    let mut dev_by_ext: FxHashMap<i64, Ps> = FxHashMap::default();
    if metric == TorchMetric::SelfDevice {
        let l = DeviceLinks::of(c);
        for &a in l.pairs.iter().map(|p| &p.1).chain(&l.unlinked) {
            if let Some(e) = arg_i64(c, a, keys.ext) {
                *dev_by_ext.entry(e).or_insert(0) += s.dur[a as usize];
            }
        }
    }
    let fwd_track = forward_tracks(c, &keys);
    // Per thread: events, torch parents, dup removal, forward stacks, values.
    let mut per_track: Vec<(u32, Vec<Ev>)> = Vec::new();
    for (t, tr) in c.tracks.iter().enumerate() {
        let mut evs: Vec<Ev> = Vec::new();
        let mut st: ContainmentStack<u32> = ContainmentStack::new();
        for id in tr.slices.0..tr.slices.1 {
            let i = id as usize;
            let kind = match s.kind(i) {
                Category::CpuOp
                | Category::UserAnnotation
                | Category::Runtime
                | Category::Driver => Kind::Op,
                Category::PythonFunction => {
                    out.python_events += 1;
                    Kind::Py
                }
                _ => continue,
            };
            let k = evs.len() as u32;
            let mut parent = NO_SLICE;
            st.push(s.start[i], s.end(i), k, |_| {}, |p| parent = *p);
            evs.push(Ev {
                id,
                kind,
                parent,
                stack_parent: NO_SLICE,
                removed: false,
            });
        }
        replay_parents(c, &mut evs);
        if !evs.is_empty() {
            remove_dup_nodes(c, &mut evs);
            per_track.push((t as u32, evs));
        }
    }
    let mut fwd_stacks: FxHashMap<(i64, u32), String> = FxHashMap::default();
    let mut stack = String::new();
    let mut frames: Vec<StrId> = Vec::new();
    let mut bw: Vec<u32> = Vec::new();
    for (t, evs) in &per_track {
        backward_roots(c, &keys, evs, &mut bw);
        for k in 0..evs.len() {
            let e = &evs[k];
            if e.removed {
                continue;
            }
            if bw[k] == NO_SLICE {
                let seq = arg_i64(c, e.id, keys.seq).unwrap_or(-1);
                fwd_stacks.entry((seq, *t)).or_insert_with(|| {
                    python_stack(c, evs, k, &mut frames, &mut stack);
                    stack.clone()
                });
            }
        }
    }
    let mut lines: Vec<(String, u64)> = Vec::new();
    for (t, evs) in &per_track {
        // Σ durations of each event's current children.
        let mut child_dur: Vec<Ps> = vec![0; evs.len()];
        for e in evs.iter().filter(|e| !e.removed) {
            if let Some(p) = effective_parent(evs, e.parent) {
                child_dur[p as usize] += s.dur[e.id as usize];
            }
        }
        backward_roots(c, &keys, evs, &mut bw);
        for k in 0..evs.len() {
            let e = &evs[k];
            if e.removed {
                continue;
            }
            let v: Ps = match metric {
                TorchMetric::SelfCpu => s.dur[e.id as usize] - child_dur[k],
                TorchMetric::SelfDevice => own_device(c, evs, k, &keys, &dev_by_ext),
            };
            let v = v / 1_000_000;
            if v <= 0 {
                continue;
            }
            let st = if bw[k] == NO_SLICE {
                python_stack(c, evs, k, &mut frames, &mut stack);
                stack.clone()
            } else {
                forward_stack(
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
    out.lines = super::folded::sum_lines(lines.iter().map(|(s, v)| (s.as_str(), *v)));
    out
}

/// Forward-thread id → track, from the fwdbwd flows (forward op → backward op).
fn forward_tracks(c: &Capture, keys: &Keys) -> FxHashMap<i64, u32> {
    let mut fwd_track: FxHashMap<i64, u32> = FxHashMap::default();
    for f in &c.flows {
        if f.from == NO_SLICE || f.to == NO_SLICE || c.strings.get(f.cat) != "fwdbwd" {
            continue;
        }
        if let Some(ft) = arg_i64(c, f.to, keys.fwd) {
            fwd_track.entry(ft).or_insert_with(|| c.track_of(f.from));
        }
    }
    fwd_track
}

/// The enclosing backward function of each event of a track (index; `NO_SLICE`: none), into
/// `bw`. torch's `scope == BACKWARD_FUNCTION` is not in the JSON: autograd nodes are the events
/// with a forward thread (the engine's `evaluate_function` wrappers aside) and the nodes
/// without a forward op (`torch::autograd::AccumulateGrad`, `CopySlices`, …).
fn backward_roots(c: &Capture, keys: &Keys, evs: &[Ev], bw: &mut Vec<u32>) {
    let is_bwd_fn = |id: u32| {
        let name = c.slice_name(id);
        name.starts_with("torch::autograd::")
            || (arg_i64(c, id, keys.fwd).is_some_and(|f| f > 0)
                && !name.starts_with("autograd::engine::evaluate_function"))
    };
    bw.clear();
    bw.resize(evs.len(), NO_SLICE);
    for k in 0..evs.len() {
        if evs[k].removed {
            continue;
        }
        // A parent comes first (index order), so its root is known.
        bw[k] = if is_bwd_fn(evs[k].id) {
            k as u32
        } else {
            effective_parent(evs, evs[k].parent).map_or(NO_SLICE, |p| bw[p as usize])
        };
    }
}

/// The stack torch gives an event below backward function `bw_id` on track `t`: the forward
/// stack of the function's sequence number on its forward thread (empty without one).
fn forward_stack(
    c: &Capture,
    keys: &Keys,
    bw_id: u32,
    t: u32,
    fwd_track: &FxHashMap<i64, u32>,
    fwd_stacks: &FxHashMap<(i64, u32), String>,
) -> String {
    let seq = arg_i64(c, bw_id, keys.seq).unwrap_or(-1);
    // A node without a forward thread (`fwd_thread` 0) finds no forward stack.
    match arg_i64(c, bw_id, keys.fwd).filter(|&f| f > 0) {
        Some(f) => {
            let ft = fwd_track.get(&f).copied().unwrap_or(t);
            fwd_stacks.get(&(seq, ft)).cloned().unwrap_or_default()
        }
        None => String::new(),
    }
}

/// Device time of op `k`: its own activities, or (after `_remove_dup_nodes` lifted them) those
/// of its removed same-name only child.
fn own_device(c: &Capture, evs: &[Ev], k: usize, keys: &Keys, dev: &FxHashMap<i64, Ps>) -> Ps {
    // A removed only child hands its kernels to the parent (torch replaces them); the first
    // event after an event, when inside it, is a direct child.
    let mut src = k;
    while let Some(e) = evs.get(src + 1) {
        if e.parent == src as u32 && e.removed {
            src += 1;
        } else {
            break;
        }
    }
    // A runtime or driver call carries its op's `External id` in the file, but torch keys its
    // event by the CUPTI correlation id: the kernels are the op's, not the launch call's.
    let id = evs[src].id;
    if matches!(
        c.slices.kind(id as usize),
        Category::Runtime | Category::Driver
    ) {
        return 0;
    }
    arg_i64(c, id, keys.ext)
        .and_then(|x| dev.get(&x).copied())
        .unwrap_or(0)
}

/// The nearest non-removed ancestor, starting at `p`.
fn effective_parent(evs: &[Ev], mut p: u32) -> Option<u32> {
    while p != NO_SLICE {
        let e = evs.get(p as usize)?;
        if !e.removed {
            return Some(p);
        }
        p = e.parent;
    }
    None
}

/// Sets `stack_parent` by replaying the track's events in start order as torch's `build_tree`
/// does: before an event is entered, the outermost open event that ended before it closes, with
/// everything opened inside it; the new event's parent is the innermost one left open; an event
/// of zero duration is never open.
fn replay_parents(c: &Capture, evs: &mut [Ev]) {
    let s = &c.slices;
    let mut open: Vec<u32> = Vec::new();
    for k in 0..evs.len() {
        let i = evs[k].id as usize;
        let (start, end) = (s.start[i], s.end(i));
        if let Some(at) = open
            .iter()
            .position(|&j| s.end(evs[j as usize].id as usize) < start)
        {
            open.truncate(at);
        }
        evs[k].stack_parent = open.last().copied().unwrap_or(NO_SLICE);
        if end > start {
            open.push(k as u32);
        }
    }
}

/// torch's folded stack of event `k`: its python ancestors in the replayed tree, root first,
/// filtered, sanitized.
fn python_stack(c: &Capture, evs: &[Ev], k: usize, frames: &mut Vec<StrId>, out: &mut String) {
    frames.clear();
    let mut p = evs[k].stack_parent;
    while let Some(e) = evs.get(p as usize) {
        if e.kind == Kind::Py {
            let n = c.slices.name[e.id as usize];
            if keep_frame(c.strings.get(n)) {
                frames.push(n);
            }
        }
        p = e.stack_parent;
    }
    out.clear();
    for (i, &n) in frames.iter().rev().enumerate() {
        if i > 0 {
            out.push(';');
        }
        sanitize_frame(c.strings.get(n), out);
    }
}

/// `_remove_dup_nodes`: repeatedly, an event whose parent has the same (rewritten) name and
/// only this one child is removed; its children become the parent's.
fn remove_dup_nodes(c: &Capture, evs: &mut [Ev]) {
    let name = |e: &Ev| group_name(c.slice_name(e.id));
    loop {
        let mut kids: Vec<u32> = vec![0; evs.len()];
        for e in evs.iter().filter(|e| !e.removed) {
            if let Some(p) = effective_parent(evs, e.parent) {
                kids[p as usize] += 1;
            }
        }
        let mut changed = false;
        for k in 0..evs.len() {
            if evs[k].removed {
                continue;
            }
            let Some(p) = effective_parent(evs, evs[k].parent) else {
                continue;
            };
            let p = p as usize;
            if kids[p] == 1 && name(&evs[p]) == name(&evs[k]) {
                evs[k].removed = true;
                kids[p] = kids[k];
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}
