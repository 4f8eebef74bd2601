//! What each track and event is to the critical path: host threads and their operators, device
//! streams and their activities, launches (the one linking rule of `launch_link`), and the
//! runtime calls that block on the device or on another thread.

use super::graph::Kind;
use crate::analysis::launch_link;
use crate::analysis::steps::comms::is_collective_kernel;
use crate::model::{Capture, Category, Format, NO_SLICE, ProcessKind, Ps, TrackKind};

/// Runtime calls that block the calling thread until device work finishes (HTA's
/// `BLOCKING_SYNC_CALLS`; the driver-API and HIP names for XPlane and ROCm).
pub const BLOCKING_CALLS: &[&str] = &[
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventQuery",
    "cudaEventSynchronize",
    "cudaMemcpy",
    "cudaMemcpyAsync",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "cuEventSynchronize",
    "cuMemcpyDtoH",
    "cuMemcpyDtoHAsync",
    "cuMemcpyDtoH_v2",
    "cuMemcpyDtoHAsync_v2",
    "hipDeviceSynchronize",
    "hipStreamSynchronize",
    "hipEventSynchronize",
    "hipMemcpy",
    "hipMemcpyAsync",
];

/// A host thread's slice that waits for the autograd engine's threads.
pub fn is_thread_wait(name: &str) -> bool {
    name.contains("run_backward")
}

/// Per-capture roles, computed once and shared by every step.
#[derive(Clone, Debug)]
pub struct Roles {
    /// Host thread tracks whose operators are walked, in track order.
    pub threads: Vec<u32>,
    /// Device stream tracks, in track order.
    pub streams: Vec<u32>,
    /// Per device activity (indexed by `slice - first activity of its stream`, see
    /// [`Roles::launch_of`]): its launch, or `NO_SLICE`.
    launch: Vec<u32>,
    /// Per stream (parallel to `streams`): offset of its first activity in `launch`.
    launch_off: Vec<u32>,
    /// Per interned name: flags (`BLOCKING`, `THREAD_WAIT`, `LAUNCH`, `SYNC_CALL`).
    name_flags: Vec<u8>,
    /// The XPlane flavour (host ops have no categories).
    pub xplane: bool,
    /// The longest launch → activity start seen, ps (bounds the scan for a step's activities).
    pub max_delay: Ps,
    /// Device activities without a launch (not joined to the host).
    pub unlaunched: u64,
    /// Host launches by correlation id (also finds `cudaEventRecord` calls).
    pub launches: launch_link::Launches,
}

/// Name flag: a blocking runtime call.
pub const BLOCKING: u8 = 1;
/// Name flag: waits for another thread.
pub const THREAD_WAIT: u8 = 4;
/// Name flag: a launch call HTA's queue length counts.
pub const LAUNCH: u8 = 8;
/// Name flag: a synchronize call (waits for the device whatever it copies).
pub const SYNC_CALL: u8 = 64;

const LAUNCH_CALLS: &[&str] = &[
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
    "hipLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipMemsetAsync",
    "hipMemcpyAsync",
    "hipMemcpyWithStream",
];

impl Roles {
    /// The roles of `c`'s tracks and names, and every activity's launch.
    pub fn new(c: &Capture) -> Roles {
        let xplane = c.format == Some(Format::XPlane);
        let (is_stream, is_host) = launch_link::track_roles(c);
        let launches = launch_link::launches(c, &is_host);
        let threads = (0..c.tracks.len() as u32)
            .filter(|&t| {
                let tr = &c.tracks[t as usize];
                let host = c
                    .processes
                    .get(tr.process as usize)
                    .is_some_and(|p| p.kind != ProcessKind::Gpu);
                is_host[t as usize]
                    && host
                    && (tr.kind == TrackKind::Thread || xplane && tr.kind == TrackKind::XLine)
            })
            .collect();
        let streams: Vec<u32> = (0..c.tracks.len() as u32)
            .filter(|&t| is_stream[t as usize])
            .collect();
        let mut launch = Vec::new();
        let mut launch_off = Vec::with_capacity(streams.len());
        let mut max_delay = 0;
        let mut unlaunched = 0;
        for &t in &streams {
            let tr = &c.tracks[t as usize];
            launch_off.push(launch.len() as u32);
            for id in tr.slices.0..tr.slices.1 {
                let l = launches.launch_of(c.slices.corr(id as usize));
                // A `cuda_sync` marker is no activity: its correlation is the sync call's.
                if l == NO_SLICE {
                    if activity_kind(c, id, xplane).is_some() {
                        unlaunched += 1;
                    }
                } else {
                    max_delay =
                        max_delay.max(c.slices.start[id as usize] - c.slices.start[l as usize]);
                }
                launch.push(l);
            }
        }
        let mut name_flags = vec![0u8; c.strings.len()];
        let mut mark = |names: &[&str], flag: u8| {
            for n in names {
                if let Some(id) = c.strings.lookup(n) {
                    name_flags[id.0 as usize] |= flag;
                }
            }
        };
        mark(BLOCKING_CALLS, BLOCKING);
        mark(LAUNCH_CALLS, LAUNCH);
        for (i, f) in name_flags.iter_mut().enumerate() {
            let n = c.strings.get(crate::model::StrId(i as u32));
            if is_thread_wait(n) {
                *f |= THREAD_WAIT;
            }
            if *f & BLOCKING != 0 && n.contains("Synchronize") {
                *f |= SYNC_CALL;
            }
        }
        Roles {
            threads,
            streams,
            launch,
            launch_off,
            name_flags,
            xplane,
            max_delay,
            unlaunched,
            launches,
        }
    }

    /// The launch of activity `id`, the `k`-th stream's slice, or `NO_SLICE`.
    #[inline]
    pub fn launch_of(&self, c: &Capture, k: usize, id: u32) -> u32 {
        let first = c.tracks[self.streams[k] as usize].slices.0;
        self.launch[(self.launch_off[k] + id - first) as usize]
    }

    /// Index in the per-activity arrays (launches, HTA queue) of the `k`-th stream's first
    /// activity.
    #[inline]
    pub fn launch_index(&self, k: usize) -> usize {
        self.launch_off[k] as usize
    }

    /// The name flags of slice `id`.
    #[inline]
    pub fn flags(&self, c: &Capture, id: u32) -> u8 {
        self.name_flags
            .get(c.slices.name[id as usize].0 as usize)
            .copied()
            .unwrap_or(0)
    }
}

/// The kind of a host operator for the path (`None`: not an operator: Python frames, user
/// annotations, instants). HTA's operators are `cpu_op`, `cuda_runtime` and `cuda_driver`;
/// on XPlane host lines every event is one (runtime calls by their `cu`/`cuda`/`hip` names).
pub fn host_kind(c: &Capture, id: u32, xplane: bool) -> Option<Kind> {
    if xplane {
        let n = c.slice_name(id);
        let rt = n.starts_with("cu") || n.starts_with("hip");
        return Some(if rt { Kind::Runtime } else { Kind::CpuOp });
    }
    match c.slices.kind(id as usize) {
        Category::CpuOp => Some(Kind::CpuOp),
        Category::Runtime | Category::Driver => Some(Kind::Runtime),
        _ => None,
    }
}

/// The kind of a device activity (`None`: annotations, sync markers, overhead).
pub fn activity_kind(c: &Capture, id: u32, xplane: bool) -> Option<Kind> {
    let name = c.slice_name(id);
    let k = match c.slices.kind(id as usize) {
        Category::Kernel | Category::Collective => Kind::Kernel,
        Category::Memcpy | Category::Memset => Kind::Memcpy,
        Category::Other if xplane => {
            let l = name.to_ascii_lowercase();
            if l.starts_with("memcpy") || l.starts_with("memset") {
                Kind::Memcpy
            } else {
                Kind::Kernel
            }
        }
        _ => return None,
    };
    Some(if k == Kind::Kernel && is_collective_kernel(name) {
        Kind::Communication
    } else {
        k
    })
}

/// True for a device-to-host copy (`Memcpy DtoH`, XPlane `MemcpyD2H`).
pub fn is_d2h(name: &str) -> bool {
    name.contains("DtoH") || name.contains("D2H")
}
