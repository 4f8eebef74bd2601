//! What each step's wall time went to, per GPU device (docs/steps.md):
//!
//! `dur = compute + exposed communication + memory + other busy + idle` and
//! `idle = host wait + kernel wait + other idle`, exactly, per device. Busy parts are lengths of
//! merged unions clipped to the step, with the `gpu` precedence where classes overlap (compute
//! first, then communication, then memory). Idle time is the step minus the device's busy union;
//! each idle gap of the device (a stretch where no stream is busy) takes the cause of the
//! activity that ends it, by the `gpu` idle rules: host wait when that activity's launch started
//! after the gap began, kernel wait when the gap is shorter than the threshold, else other. The
//! gap before the device's first activity is host wait when that activity has a launch; the gap
//! after its last activity is other. A step that ends before the device's first activity or
//! starts after its last has no device data ([`DeviceParts::no_data`]): all its parts are 0.
//! Input wait is host time (a union of data-loading
//! annotations clipped to the step), reported beside the device parts, not in their sum.

use super::find::{flagged, is_host_track, matching_names};
use super::types::{StepOptions, Steps};
use crate::analysis::gpu::GpuOptions;
use crate::analysis::gpu::streams::{self, GpuStreams};
use crate::analysis::gpu::temporal::BreakdownAcc;
use crate::model::{Capture, NO_SLICE, Ps};

/// One device's share of one step, ps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceParts {
    /// Device number (Kineto pid, XPlane `/device:GPU:N`).
    pub device: i64,
    /// |∪ compute ∩ step|.
    pub compute: Ps,
    /// |∪ communication ∩ step|, overlapped or not.
    pub communication: Ps,
    /// Communication not overlapped by compute.
    pub exposed_communication: Ps,
    /// Memory not overlapped by compute or communication.
    pub memory: Ps,
    /// Other busy time (device-side syncs, ...).
    pub other: Ps,
    /// Step time with no activity on any stream of the device.
    pub idle: Ps,
    /// Idle whose next activity was launched after the gap began.
    pub host_wait: Ps,
    /// Idle in gaps shorter than the threshold.
    pub kernel_wait: Ps,
    /// The rest of the idle time.
    pub idle_other: Ps,
    /// The device recorded nothing during the step: the step ends before the device's first
    /// activity in the capture or starts after its last ends (its trace started late — on the
    /// H200 JAX capture 20.7 ms after the host's — or stopped early). Idle time cannot be told
    /// from time not recorded there, so every other part is 0 and averages over steps leave the
    /// step out.
    pub no_data: bool,
}

impl DeviceParts {
    /// True when the device has figures for the step (not [`DeviceParts::no_data`]).
    pub fn has_data(&self) -> bool {
        !self.no_data
    }
}

/// The parts of one step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepParts {
    /// Host time in input (data-loading) annotations, merged, clipped to the step.
    pub input: Ps,
    /// Per device with activities in the capture, by device number.
    pub devices: Vec<DeviceParts>,
}

/// Cause of an idle gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cause {
    Host,
    Kernel,
    Other,
}

/// A device's activities merged in start order, with the idle gaps between them.
struct DeviceLine {
    device: i64,
    /// Activity rows of [`GpuStreams::acts`] in start order.
    order: Vec<u32>,
    /// Running maximum of the end times along `order`.
    max_end: Vec<Ps>,
    /// Idle gaps (start, end, cause), in time order, covering everything outside the busy union.
    gaps: Vec<(Ps, Ps, Cause)>,
}

fn device_lines(c: &Capture, g: &GpuStreams, threshold: Ps) -> Vec<DeviceLine> {
    let a = &g.acts;
    let mut out = Vec::new();
    let mut k = 0;
    while k < g.streams.len() {
        let dev = g.streams[k].device;
        let mut order: Vec<u32> = Vec::new();
        while k < g.streams.len() && g.streams[k].device == dev {
            let (lo, hi) = g.streams[k].rows;
            order.extend(lo as u32..hi as u32);
            k += 1;
        }
        order.sort_by_key(|&i| (a.start[i as usize], i));
        let mut max_end = Vec::with_capacity(order.len());
        let mut gaps = Vec::new();
        let mut cur: Option<Ps> = None;
        for &i in &order {
            let i = i as usize;
            let (s, e) = (a.start[i], a.end[i]);
            let launch = (a.launch[i] != NO_SLICE).then(|| g.host_span(c, a.launch[i]).0);
            match cur {
                None => {
                    let cause = if launch.is_some() {
                        Cause::Host
                    } else {
                        Cause::Other
                    };
                    gaps.push((Ps::MIN, s, cause));
                    cur = Some(e);
                }
                Some(ce) if s > ce => {
                    let cause = if launch.is_some_and(|l| l > ce) {
                        Cause::Host
                    } else if s - ce < threshold {
                        Cause::Kernel
                    } else {
                        Cause::Other
                    };
                    gaps.push((ce, s, cause));
                    cur = Some(e);
                }
                Some(ce) => cur = Some(ce.max(e)),
            }
            max_end.push(cur.unwrap_or(e));
        }
        if let Some(ce) = cur {
            gaps.push((ce, Ps::MAX, Cause::Other));
        }
        out.push(DeviceLine {
            device: dev,
            order,
            max_end,
            gaps,
        });
    }
    out
}

fn clip(s: Ps, e: Ps, lo: Ps, hi: Ps) -> Ps {
    (e.min(hi) - s.max(lo)).max(0)
}

fn device_parts(line: &DeviceLine, g: &GpuStreams, lo: Ps, hi: Ps) -> DeviceParts {
    let a = &g.acts;
    // What the device recorded: its first activity's start to its last end.
    let recorded = line
        .order
        .first()
        .map(|&i| a.start[i as usize])
        .zip(line.max_end.last().copied());
    if recorded.is_none_or(|(first, last)| hi <= first || lo >= last) {
        return DeviceParts {
            device: line.device,
            no_data: true,
            ..DeviceParts::default()
        };
    }
    let mut acc = BreakdownAcc::default();
    let first = line.max_end.partition_point(|&m| m <= lo);
    for &i in &line.order[first..] {
        let i = i as usize;
        if a.start[i] >= hi {
            break;
        }
        let (s, e) = (a.start[i].max(lo), a.end[i].min(hi));
        if e > s {
            acc.push(s, e, a.class[i]);
        }
    }
    let b = acc.finish();
    let mut p = DeviceParts {
        device: line.device,
        compute: b.compute,
        communication: b.communication_total,
        exposed_communication: b.communication,
        memory: b.memory,
        other: b.other,
        idle: (hi - lo) - b.busy,
        ..DeviceParts::default()
    };
    let gfirst = line.gaps.partition_point(|g| g.1 <= lo);
    for &(s, e, cause) in &line.gaps[gfirst..] {
        if s >= hi {
            break;
        }
        let d = clip(s, e, lo, hi);
        match cause {
            Cause::Host => p.host_wait += d,
            Cause::Kernel => p.kernel_wait += d,
            Cause::Other => p.idle_other += d,
        }
    }
    p
}

/// Merged (start, end) intervals of host slices whose name matches the input pattern.
fn input_intervals(c: &Capture, opts: &StepOptions) -> Vec<(Ps, Ps)> {
    let Some(re) = &opts.input else {
        return Vec::new();
    };
    let names = matching_names(c, re);
    let mut iv: Vec<(Ps, Ps)> = Vec::new();
    for t in 0..c.tracks.len() {
        if !is_host_track(c, t) {
            continue;
        }
        let (a, b) = c.tracks[t].slices;
        for id in a as usize..b as usize {
            if flagged(&names, c.slices.name[id]) {
                iv.push((c.slices.start[id], c.slices.end(id)));
            }
        }
    }
    iv.sort_unstable();
    let mut merged: Vec<(Ps, Ps)> = Vec::with_capacity(iv.len());
    for (s, e) in iv {
        match merged.last_mut() {
            Some(l) if s <= l.1 => l.1 = l.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

/// The parts of every step of `steps` (same order). GPU activities are collected with
/// [`streams::collect`] (no HTA rounding) unless `gpu` is given.
pub fn breakdown(
    c: &Capture,
    steps: &Steps,
    opts: &StepOptions,
    gpu: Option<&GpuStreams>,
) -> Vec<StepParts> {
    let owned;
    let g = match gpu {
        Some(g) => g,
        None => {
            owned = streams::collect(c, &GpuOptions::default());
            &owned
        }
    };
    let lines = device_lines(c, g, opts.idle_threshold);
    let input = input_intervals(c, opts);
    steps
        .steps
        .iter()
        .map(|st| {
            let k = input.partition_point(|iv| iv.1 <= st.start);
            let input_ps = input[k..]
                .iter()
                .take_while(|iv| iv.0 < st.end)
                .map(|iv| clip(iv.0, iv.1, st.start, st.end))
                .sum();
            StepParts {
                input: input_ps,
                devices: lines
                    .iter()
                    .map(|l| device_parts(l, g, st.start, st.end))
                    .collect(),
            }
        })
        .collect()
}

/// The device with the most busy time over all steps.
pub fn primary_device(parts: &[StepParts]) -> Option<i64> {
    let mut best: Vec<(i64, Ps)> = Vec::new();
    for p in parts {
        for d in &p.devices {
            let b = d.compute + d.exposed_communication + d.memory + d.other;
            match best.iter_mut().find(|x| x.0 == d.device) {
                Some(x) => x.1 += b,
                None => best.push((d.device, b)),
            }
        }
    }
    best.iter().max_by_key(|(d, b)| (*b, -*d)).map(|(d, _)| *d)
}
