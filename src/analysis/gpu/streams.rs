//! Finds the GPU streams of a capture and their activities (kernels, copies, sets, device-side
//! syncs) as columns, each linked to the host event that launched it by correlation id.
//!
//! Kineto / Chrome JSON: every `gpu_stream` track; its slices except `gpu_user_annotation`
//! ranges (HTA's `stream != -1`). XPlane: the `Stream #…` lines of `/device:GPU:N` planes (derived
//! lines and `CUPTI overhead` are not streams). Launches: host slices with the same correlation
//! id (Kineto `args.correlation`, XPlane `correlation_id`).

use super::GpuOptions;
use super::classify::{KernelClass, classify};
use crate::model::{Capture, Category, Format, Key, NO_SLICE, ProcessKind, Ps, StrId, TrackKind};
use rustc_hash::FxHashMap;

/// One GPU stream: where it lives and which rows of [`Activities`] it owns.
#[derive(Clone, Debug)]
pub struct StreamInfo {
    /// Its track.
    pub track: u32,
    /// Its process / plane.
    pub process: u32,
    /// Device number: Kineto pid, XPlane `N` of `/device:GPU:N` (-1 when neither is a number).
    pub device: i64,
    /// Device display name (process name, plane name).
    pub device_name: String,
    /// Stream number: Kineto tid, XPlane `Stream #N` (else the line id).
    pub stream: i64,
    /// Stream display name (thread / line name).
    pub stream_name: String,
    /// Rows `[rows.0, rows.1)` of [`Activities`], in start order.
    pub rows: (usize, usize),
}

/// GPU activities of every stream, one row each, grouped by stream and sorted by start within it.
#[derive(Clone, Debug, Default)]
pub struct Activities {
    /// Slice id.
    pub slice: Vec<u32>,
    /// Start, ps (rounded inward to whole µs under [`GpuOptions::hta_round`]).
    pub start: Vec<Ps>,
    /// End, ps (same rounding; may then precede `start` for sub-µs events, as in HTA).
    pub end: Vec<Ps>,
    /// HTA kernel class.
    pub class: Vec<KernelClass>,
    /// True for HTA's idle-breakdown set: categories kernel, memcpy, memset (`mtia_ccp_events`
    /// too); false for device-side syncs and other stream events, which only count as busy time.
    pub idle_set: Vec<bool>,
    /// The host slice with the same correlation id, or `NO_SLICE`.
    pub launch: Vec<u32>,
}

impl Activities {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.slice.len()
    }
    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.slice.is_empty()
    }
}

/// What a host launch counts for, by its name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchKind {
    /// In HTA's kernel-launch-statistics set (`cudaLaunchKernel`, `cudaLaunchKernelExC`,
    /// `cudaMemcpyAsync`, `cudaMemsetAsync`, MTIA `runFunction`).
    pub stats: bool,
    /// In HTA's queue-length launch set (adds `cuLaunchKernel[Ex]` and the HIP launches).
    pub queue: bool,
}

/// HTA's launch-name sets; XPlane launches (any correlated host event) count for both.
pub fn launch_kind(name: &str) -> LaunchKind {
    const MTIA: &str = "runFunction - job_prep_and_submit_for_execution";
    let stats = matches!(
        name,
        "cudaLaunchKernel" | "cudaLaunchKernelExC" | "cudaMemcpyAsync" | "cudaMemsetAsync" | MTIA
    );
    let queue = stats
        || matches!(
            name,
            "cuLaunchKernel"
                | "cuLaunchKernelEx"
                | "hipLaunchKernel"
                | "hipExtModuleLaunchKernel"
                | "hipMemcpyAsync"
                | "hipMemsetAsync"
                | "hipMemcpyWithStream"
        );
    LaunchKind { stats, queue }
}

/// The GPU side of a capture: streams, their activities and the host launches.
#[derive(Clone, Debug, Default)]
pub struct GpuStreams {
    /// Streams, by device then stream number.
    pub streams: Vec<StreamInfo>,
    /// Their activities.
    pub acts: Activities,
    /// Launch kind of each distinct launch name seen (`launch_kind`, or both for XPlane).
    pub kinds: FxHashMap<StrId, LaunchKind>,
    /// Host slices carrying a correlation id.
    pub host_correlated: usize,
    /// Host slices whose correlation id was already taken by an earlier host slice (the first
    /// one is the launch).
    pub duplicate_corr: usize,
    /// Offset of the µs grid in ps (`origin mod 1 µs` of the file's clock) used by HTA rounding.
    pub grid_ps: Ps,
    /// Whether times are rounded like HTA.
    pub rounded: bool,
}

/// HTA's inward µs rounding on a grid offset by `grid` ps (identity when `on` is false).
#[derive(Clone, Copy, Debug)]
struct Rounding {
    on: bool,
    grid: Ps,
}

impl Rounding {
    #[inline]
    fn start(self, t: Ps) -> Ps {
        if self.on {
            ceil_to(t + self.grid, 1_000_000) - self.grid
        } else {
            t
        }
    }
    #[inline]
    fn end(self, t: Ps) -> Ps {
        if self.on {
            (t + self.grid).div_euclid(1_000_000) * 1_000_000 - self.grid
        } else {
            t
        }
    }
}

impl GpuStreams {
    fn rounding(&self) -> Rounding {
        Rounding {
            on: self.rounded,
            grid: self.grid_ps,
        }
    }
    /// Rounds a start up to the µs grid (identity unless rounding).
    #[inline]
    pub fn round_start(&self, t: Ps) -> Ps {
        self.rounding().start(t)
    }
    /// Rounds an end down to the µs grid (identity unless rounding).
    #[inline]
    pub fn round_end(&self, t: Ps) -> Ps {
        self.rounding().end(t)
    }
    /// (start, end) of a host slice under the same rounding.
    #[inline]
    pub fn host_span(&self, c: &Capture, id: u32) -> (Ps, Ps) {
        let i = id as usize;
        (
            self.round_start(c.slices.start[i]),
            self.round_end(c.slices.end(i)),
        )
    }
    /// Launch kind of a host slice.
    #[inline]
    pub fn kind_of(&self, c: &Capture, id: u32) -> LaunchKind {
        self.kinds
            .get(&c.slices.name[id as usize])
            .copied()
            .unwrap_or_default()
    }
}

fn ceil_to(t: Ps, unit: Ps) -> Ps {
    let f = t.div_euclid(unit) * unit;
    if f == t { f } else { f + unit }
}

/// Offset of the file's µs grid relative to the capture origin, in ps: the origin's wall-clock
/// ns minus Kineto's `baseTimeNanoseconds` (the shift the JSON loader applied), modulo 1 µs.
fn grid_offset(c: &Capture) -> Ps {
    let Some(origin) = c.origin_epoch_ns else {
        return 0;
    };
    let base = c
        .strings
        .lookup("baseTimeNanoseconds")
        .and_then(|k| c.args.get(c.metadata, k, &c.strings))
        .and_then(|v| v.as_i64(&c.strings))
        .unwrap_or(0);
    origin.wrapping_sub(base).rem_euclid(1000) * 1000
}

fn key_number(c: &Capture, k: Key) -> Option<i64> {
    match k {
        Key::Int(v) => Some(v),
        Key::Str(s) => c.strings.get(s).trim().parse().ok(),
    }
}

/// Device number and whether this process is an XPlane GPU plane.
fn device_of(c: &Capture, p: u32) -> i64 {
    let pr = &c.processes[p as usize];
    if let Some(n) = c
        .strings
        .get(pr.name)
        .strip_prefix("/device:GPU:")
        .and_then(|n| n.parse().ok())
    {
        return n;
    }
    key_number(c, pr.key).unwrap_or(-1)
}

/// Stream number of an XPlane line named `Stream #N…`.
fn xplane_stream_number(name: &str) -> Option<i64> {
    let rest = name.strip_prefix("Stream #")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest[..digits].parse().ok()
}

/// Collects the GPU streams of `c` with their activities and launch links.
pub fn collect(c: &Capture, opts: &GpuOptions) -> GpuStreams {
    let xplane = c.format == Some(Format::XPlane);
    let mut g = GpuStreams {
        rounded: opts.hta_round && !xplane,
        grid_ps: if opts.hta_round && !xplane {
            grid_offset(c)
        } else {
            0
        },
        ..GpuStreams::default()
    };
    // Which tracks are streams.
    let mut is_stream = vec![false; c.tracks.len()];
    for (t, tr) in c.tracks.iter().enumerate() {
        let proc_gpu = c.processes[tr.process as usize].kind == ProcessKind::Gpu;
        is_stream[t] = match tr.kind {
            TrackKind::GpuStream => true,
            TrackKind::XLine => {
                proc_gpu && xplane_stream_number(c.strings.get(tr.name)).is_some()
            }
            _ => false,
        };
    }
    // Host launches by correlation id: host = not on a GPU process.
    let mut by_corr: FxHashMap<u64, u32> = FxHashMap::default();
    for (t, tr) in c.tracks.iter().enumerate() {
        if is_stream[t] || c.processes[tr.process as usize].kind == ProcessKind::Gpu {
            continue;
        }
        for id in tr.slices.0..tr.slices.1 {
            let corr = c.slices.corr(id as usize);
            if corr == 0 {
                continue;
            }
            g.host_correlated += 1;
            match by_corr.entry(corr) {
                std::collections::hash_map::Entry::Occupied(_) => g.duplicate_corr += 1,
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(id);
                    let name = c.slices.name[id as usize];
                    g.kinds.entry(name).or_insert_with(|| {
                        if xplane {
                            LaunchKind {
                                stats: true,
                                queue: true,
                            }
                        } else {
                            launch_kind(c.strings.get(name))
                        }
                    });
                }
            }
        }
    }
    // Streams, ordered by (device, stream, track).
    let mut order: Vec<(i64, i64, u32)> = (0..c.tracks.len() as u32)
        .filter(|&t| is_stream[t as usize])
        .map(|t| {
            let tr = &c.tracks[t as usize];
            let stream = if xplane {
                xplane_stream_number(c.strings.get(tr.name))
            } else {
                key_number(c, tr.key)
            };
            let stream = stream.unwrap_or(match tr.key {
                Key::Int(v) => v,
                Key::Str(_) => -1,
            });
            (device_of(c, tr.process), stream, t)
        })
        .collect();
    order.sort_unstable();
    let mut class_of: FxHashMap<StrId, KernelClass> = FxHashMap::default();
    let round = Rounding {
        on: g.rounded,
        grid: g.grid_ps,
    };
    let a = &mut g.acts;
    for (device, stream, t) in order {
        let tr = &c.tracks[t as usize];
        let first = a.len();
        for id in tr.slices.0..tr.slices.1 {
            let i = id as usize;
            let cat = c.slices.kind(i);
            if cat == Category::GpuUserAnnotation {
                continue;
            }
            let idle_set = xplane
                || matches!(cat, Category::Kernel | Category::Memcpy | Category::Memset)
                || c.strings.get(c.slices.cat(i)) == "mtia_ccp_events";
            let name = c.slices.name[i];
            let class = *class_of
                .entry(name)
                .or_insert_with(|| classify(c.strings.get(name)));
            let corr = c.slices.corr(i);
            let launch = if corr == 0 {
                NO_SLICE
            } else {
                by_corr.get(&corr).copied().unwrap_or(NO_SLICE)
            };
            a.slice.push(id);
            let (s, e) = (c.slices.start[i], c.slices.end(i));
            a.start.push(round.start(s));
            a.end.push(round.end(e));
            a.class.push(class);
            a.idle_set.push(idle_set);
            a.launch.push(launch);
        }
        if a.len() == first {
            continue;
        }
        g.streams.push(StreamInfo {
            track: t,
            process: tr.process,
            device,
            device_name: c.process_name(tr.process),
            stream,
            stream_name: c.track_name(t),
            rows: (first, a.len()),
        });
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_sets() {
        let k = launch_kind("cudaLaunchKernel");
        assert!(k.stats && k.queue);
        let k = launch_kind("cuLaunchKernel");
        assert!(!k.stats && k.queue);
        let k = launch_kind("cudaLaunchKernelExC");
        assert!(k.stats && k.queue);
        let k = launch_kind("hipLaunchKernel");
        assert!(!k.stats && k.queue);
        assert_eq!(launch_kind("cudaStreamSynchronize"), LaunchKind::default());
    }

    #[test]
    fn rounding_grid() {
        assert_eq!(ceil_to(1, 1_000_000), 1_000_000);
        assert_eq!(ceil_to(0, 1_000_000), 0);
        assert_eq!(ceil_to(-1, 1_000_000), 0);
        assert_eq!(xplane_stream_number("Stream #134(Compute)"), Some(134));
        assert_eq!(xplane_stream_number("CUPTI overhead"), None);
    }
}
