//! What torch's own event list holds for a Kineto capture, read from the file (the JSON names no
//! torch version): whether it is a PyTorch capture at all, which categories torch's
//! `key_averages()` aggregates, and whether the python tracer's frames are events of that list
//! (they then nest with the ops and take self time from them) or only stacks beside it.
//!
//! - torch 2.15 writes `python_function` events with `CallFrom` and keeps them in its event
//!   list (`_populate_cpu_children` nests them; `key_averages()` prints no row for them).
//! - torch 2.11 with `with_stack` and the verbose experimental config carries each op's stack
//!   as a `Call stack` argument; its event list has no python frames.
//!
//! `stats` (its default table) and `stacks --torch` both decide with these functions.

use crate::model::{Capture, Category, StrId};

/// The categories torch's `key_averages()` aggregates: CPU ops, `record_function` ranges,
/// runtime and driver calls, and the device rows (kernels, copies, sets, device annotations).
pub const KEY_AVERAGES_CATS: [&str; 8] = [
    "cpu_op",
    "user_annotation",
    "cuda_runtime",
    "cuda_driver",
    "kernel",
    "gpu_memcpy",
    "gpu_memset",
    "gpu_user_annotation",
];

/// True when `c` was written by PyTorch's profiler (Kineto): it has CPU op events (`cpu_op`,
/// or the 2021 schema's `Operator`).
pub fn is_pytorch(c: &Capture) -> bool {
    c.slices.classes.iter().any(|&(_, k)| k == Category::CpuOp)
}

/// True when `c` holds `python_function` events.
pub fn has_python_frames(c: &Capture) -> bool {
    c.slices
        .classes
        .iter()
        .any(|&(_, k)| k == Category::PythonFunction)
}

/// The `Call stack` key when torch's event list has no python frames: the ops carry `Call
/// stack` arguments and the `python_function` events carry no `CallFrom` (torch 2.11).
pub fn call_stack_key(c: &Capture) -> Option<StrId> {
    let key = c.strings.lookup("Call stack")?;
    let s = &c.slices;
    let op = (0..s.len()).find(|&i| s.kind(i) == Category::CpuOp && s.args[i].is_some())?;
    c.args.get(s.args[op], key, &c.strings)?;
    if let Some(from) = c.strings.lookup("CallFrom") {
        let py = (0..s.len()).find(|&i| s.kind(i) == Category::PythonFunction);
        if py.is_some_and(|i| c.args.get(s.args[i], from, &c.strings).is_some()) {
            return None;
        }
    }
    Some(key)
}

/// True when the python tracer's frames are events of torch's list, so they take self time from
/// the ops and annotations around them (torch 2.15 with `with_stack`).
pub fn python_in_event_list(c: &Capture) -> bool {
    has_python_frames(c) && call_stack_key(c).is_none()
}
