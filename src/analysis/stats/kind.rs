//! What kind of activity a statistics row holds — CPU ops, GPU kernels, runtime calls, memory
//! copies, user annotations, ... — so tables keep them apart (torch's `key_averages` table keeps
//! CPU and device columns apart; summing a kernel's self time with a CPU op's means nothing),
//! and the per-kind totals that say what a total adds up.

use crate::model::{Capture, Category, Ps, TrackKind};

/// The kind of the events of one row. Rows of different kinds never merge, even with equal
/// names; tables list kinds in this order (host side first, then the device side).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    /// CPU operators (`cpu_op`, legacy `Operator`).
    CpuOp,
    /// `record_function` ranges on the CPU (`user_annotation`, `ProfilerStep#N`).
    Annotation,
    /// Python frames (`python_function`).
    Python,
    /// CUDA/HIP runtime and driver calls.
    Runtime,
    /// Synchronization (`cuda_sync`, `cuda_event`).
    Sync,
    /// GPU kernels.
    Kernel,
    /// GPU memory copies.
    Memcpy,
    /// GPU memsets.
    Memset,
    /// User annotation ranges on a GPU stream.
    GpuAnnotation,
    /// Collective communication.
    Collective,
    /// Other events of a device plane or process (XPlane XLA ops and modules, command buffers,
    /// TPU ops): the device's side of names the host also has (a host TraceMe
    /// `command_buffer_1` and the device op of that name are two rows).
    DeviceOp,
    /// Instant events (no duration: counted only).
    Instant,
    /// The profiler's own spans (Kineto `Trace` category, the `Spans` / `Traces` processes);
    /// left out of tables unless asked for.
    Profiler,
    /// Anything else (XPlane events, Chrome JSON without known categories).
    #[default]
    Other,
}

impl EventKind {
    /// Every kind, in table order.
    pub const ALL: [EventKind; 14] = [
        EventKind::CpuOp,
        EventKind::Annotation,
        EventKind::Python,
        EventKind::Runtime,
        EventKind::Sync,
        EventKind::Kernel,
        EventKind::Memcpy,
        EventKind::Memset,
        EventKind::GpuAnnotation,
        EventKind::Collective,
        EventKind::DeviceOp,
        EventKind::Instant,
        EventKind::Profiler,
        EventKind::Other,
    ];

    /// The kind of a slice of category `cat`.
    pub fn of_category(cat: Category) -> EventKind {
        match cat {
            Category::CpuOp => EventKind::CpuOp,
            Category::UserAnnotation => EventKind::Annotation,
            Category::GpuUserAnnotation => EventKind::GpuAnnotation,
            Category::Kernel => EventKind::Kernel,
            Category::Memcpy => EventKind::Memcpy,
            Category::Memset => EventKind::Memset,
            Category::Runtime | Category::Driver => EventKind::Runtime,
            Category::PythonFunction => EventKind::Python,
            Category::Trace => EventKind::Profiler,
            Category::Sync => EventKind::Sync,
            Category::Collective => EventKind::Collective,
            Category::CpuInstant | Category::Overhead | Category::Flow | Category::Other => {
                EventKind::Other
            }
        }
    }

    /// The kind of a slice of category `cat` on a device process (`device_track`) or not:
    /// [`EventKind::of_category`], where an event of no known category on a device is a
    /// [`EventKind::DeviceOp`], not host-side [`EventKind::Other`].
    pub fn of_event(cat: Category, device_track: bool) -> EventKind {
        match EventKind::of_category(cat) {
            EventKind::Other if device_track => EventKind::DeviceOp,
            k => k,
        }
    }

    /// Short machine name (`--json` `kind`, the KIND column).
    pub fn name(self) -> &'static str {
        match self {
            EventKind::CpuOp => "cpu_op",
            EventKind::Annotation => "annotation",
            EventKind::Python => "python",
            EventKind::Runtime => "runtime",
            EventKind::Sync => "sync",
            EventKind::Kernel => "kernel",
            EventKind::Memcpy => "memcpy",
            EventKind::Memset => "memset",
            EventKind::GpuAnnotation => "gpu_annotation",
            EventKind::Collective => "collective",
            EventKind::DeviceOp => "device_op",
            EventKind::Instant => "instant",
            EventKind::Profiler => "profiler",
            EventKind::Other => "other",
        }
    }

    /// Plural label for people ("GPU kernels").
    pub fn label(self) -> &'static str {
        match self {
            EventKind::CpuOp => "CPU ops",
            EventKind::Annotation => "user annotations",
            EventKind::Python => "python frames",
            EventKind::Runtime => "runtime calls",
            EventKind::Sync => "synchronizations",
            EventKind::Kernel => "GPU kernels",
            EventKind::Memcpy => "memory copies",
            EventKind::Memset => "memsets",
            EventKind::GpuAnnotation => "GPU annotations",
            EventKind::Collective => "collectives",
            EventKind::DeviceOp => "device ops",
            EventKind::Instant => "instant events",
            EventKind::Profiler => "profiler spans",
            EventKind::Other => "events",
        }
    }

    /// True for device-side rows (kernels, copies, sets, device annotations, device ops).
    pub fn is_device(self) -> bool {
        matches!(
            self,
            EventKind::Kernel
                | EventKind::Memcpy
                | EventKind::Memset
                | EventKind::GpuAnnotation
                | EventKind::DeviceOp
        )
    }

    /// Bit of this kind in a kind mask.
    #[inline]
    pub(crate) fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// What the rows of one kind add up to, and over which tracks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KindTotal {
    /// The kind.
    pub kind: EventKind,
    /// Rows of this kind.
    pub rows: usize,
    /// Events.
    pub count: u64,
    /// Σ duration, ps (each track's events summed separately: threads and streams that run
    /// at the same time add up, so this can exceed the capture's span).
    pub total_ps: Ps,
    /// Σ self time, ps (same rule).
    pub self_ps: Ps,
    /// CPU threads its events were summed over.
    pub threads: usize,
    /// GPU streams its events were summed over.
    pub streams: usize,
    /// Other tracks (XPlane lines, async lanes).
    pub other_tracks: usize,
}

impl KindTotal {
    /// "3 threads and 2 streams", "1 thread", "4 tracks".
    pub fn over(&self) -> String {
        let n =
            |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
        let mut parts = Vec::new();
        if self.threads > 0 {
            parts.push(n(self.threads, "thread", "threads"));
        }
        if self.streams > 0 {
            parts.push(n(self.streams, "stream", "streams"));
        }
        if self.other_tracks > 0 {
            parts.push(n(self.other_tracks, "track", "tracks"));
        }
        match parts.len() {
            0 => "no track".to_string(),
            1 => parts.remove(0),
            _ => {
                let last = parts.pop().unwrap_or_default();
                format!("{} and {last}", parts.join(", "))
            }
        }
    }
}

/// Per-kind totals of `rows` (kinds in table order, only those with rows); `masks[t]` holds
/// the kinds that had events on track `t`.
pub(crate) fn totals(c: &Capture, rows: &[super::StatRow], masks: &[u16]) -> Vec<KindTotal> {
    let mut out: Vec<KindTotal> = Vec::new();
    for k in EventKind::ALL {
        let mut t = KindTotal {
            kind: k,
            ..KindTotal::default()
        };
        for r in rows.iter().filter(|r| r.kind == k) {
            t.rows += 1;
            t.count += r.count;
            t.total_ps += r.total_ps;
            t.self_ps += r.self_ps;
        }
        if t.rows == 0 {
            continue;
        }
        for (tr, &m) in c.tracks.iter().zip(masks) {
            if m & k.bit() == 0 {
                continue;
            }
            match tr.kind {
                TrackKind::Thread => t.threads += 1,
                TrackKind::GpuStream => t.streams += 1,
                _ => t.other_tracks += 1,
            }
        }
        out.push(t);
    }
    out
}
