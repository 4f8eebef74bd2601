//! Finds the GPU streams of a capture and their activities (kernels, copies, sets, device-side
//! syncs) as columns, each linked to the host event that launched it by correlation id.
//!
//! Kineto / Chrome JSON: every `gpu_stream` track; its slices except `gpu_user_annotation`
//! ranges (HTA's `stream != -1`). XPlane: the `Stream #…` lines of `/device:GPU:N` planes (derived
//! lines and `CUPTI overhead` are not streams). Launches: host slices with the same correlation
//! id (Kineto `args.correlation`, XPlane `correlation_id`), by the rule of
//! [`crate::analysis::launch_link`] (shared with `rank`).

use super::classify::{KernelClass, classify};
use super::options::GpuOptions;
use crate::analysis::launch_link;
use crate::model::{Capture, Category, Format, Key, NO_SLICE, Ps, StrId};
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
    /// Start, ps (rounded inward to whole µs under [`GpuOptions::hta_compat`]).
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
    /// Activities left out because their launch is not before the last `ProfilerStep` start
    /// (HTA compat only; unlinked activities are left out too, as HTA's inner join does).
    pub window_dropped: usize,
    /// The file's clock at the capture origin, ns (the JSON loader's shift), for HTA rounding.
    pub shift_ns: i64,
    /// Whether times are rounded like HTA (HTA compat on a JSON capture).
    pub rounded: bool,
}

/// HTA's inward µs rounding (identity when `on` is false), done as HTA does it: in f64 µs of
/// the file's clock, `ceil(ts)` and `floor(ts + dur)` — so at 10^15 µs, where f64 steps are
/// 0.25 µs, the end rounds like HTA's and not like the exact sum.
#[derive(Clone, Copy, Debug)]
struct Rounding {
    on: bool,
    shift_ns: i64,
}

impl Rounding {
    #[inline]
    fn span(self, s: Ps, e: Ps) -> (Ps, Ps) {
        if !self.on {
            return (s, e);
        }
        let ts = (s.div_euclid(1000) + self.shift_ns) as f64 / 1000.0;
        let dur = (e - s).div_euclid(1000) as f64 / 1000.0;
        let back = |us: f64| (us as i64 * 1000 - self.shift_ns) * 1000;
        (back(ts.ceil()), back((ts + dur).floor()))
    }
}

impl GpuStreams {
    fn rounding(&self) -> Rounding {
        Rounding {
            on: self.rounded,
            shift_ns: self.shift_ns,
        }
    }
    /// (start, end) of slice times under HTA rounding (identity unless rounding).
    #[inline]
    pub fn round_span(&self, s: Ps, e: Ps) -> (Ps, Ps) {
        self.rounding().span(s, e)
    }
    /// (start, end) of a host slice under the same rounding.
    #[inline]
    pub fn host_span(&self, c: &Capture, id: u32) -> (Ps, Ps) {
        let i = id as usize;
        self.round_span(c.slices.start[i], c.slices.end(i))
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
    launch_link::stream_number(name)
}

/// HTA's iteration window: the (rounded) latest start of a `ProfilerStep*` slice, when the
/// host has at least two distinct `ProfilerStep` names. HTA counts every event without a
/// `stream` arg as a CPU event, the device's `gpu_user_annotation` steps too: as the GPU runs
/// behind the host, the last step's device span starts later, and the launches made in
/// between are kept (on a CUDA-graph capture, the next step's input copies).
fn last_step_start(c: &Capture, is_host: &[bool], g: &GpuStreams) -> Option<Ps> {
    let mut names: Vec<StrId> = Vec::new();
    let mut last: Option<Ps> = None;
    for (t, tr) in c.tracks.iter().enumerate() {
        for id in tr.slices.0..tr.slices.1 {
            if !is_host[t] && c.slices.kind(id as usize) != Category::GpuUserAnnotation {
                continue;
            }
            let n = c.slices.name[id as usize];
            if !c.strings.get(n).contains("ProfilerStep") {
                continue;
            }
            if names.len() < 2 && !names.contains(&n) {
                names.push(n);
            }
            let i = id as usize;
            let s = g.round_span(c.slices.start[i], c.slices.end(i)).0;
            last = Some(last.map_or(s, |l: Ps| l.max(s)));
        }
    }
    last.filter(|_| names.len() >= 2)
}

/// Collects the GPU streams of `c` with their activities and launch links.
pub fn collect(c: &Capture, opts: &GpuOptions) -> GpuStreams {
    let xplane = c.format == Some(Format::XPlane);
    let compat = opts.hta_compat && !xplane;
    let mut g = GpuStreams {
        rounded: compat,
        shift_ns: if compat { c.file_clock0_ns() } else { 0 },
        ..GpuStreams::default()
    };
    // Which tracks are streams, which are host tracks: the one linking rule (`launch_link`).
    let (is_stream, is_host) = launch_link::track_roles(c);
    // Host launches by correlation id: the first host slice of each id.
    let launches = launch_link::launches(c, &is_host);
    g.host_correlated = launches.host_correlated;
    g.duplicate_corr = launches.duplicates;
    for &id in launches.by_corr.values() {
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
    let window_end = if compat {
        last_step_start(c, &is_host, &g)
    } else {
        None
    };
    // Streams, ordered by (device, stream, track). JSON: the `stream` arg of the first
    // activity (MTIA's tids are not stream numbers), else the tid.
    let stream_key = c.strings.lookup("stream");
    let stream_arg = |tr: &crate::model::Track| -> Option<i64> {
        let k = stream_key?;
        let first = (tr.slices.0..tr.slices.1).find(|&i| c.slices.args[i as usize].is_some())?;
        c.args
            .get(c.slices.args[first as usize], k, &c.strings)?
            .as_i64(&c.strings)
    };
    let mut order: Vec<(i64, i64, u32)> = (0..c.tracks.len() as u32)
        .filter(|&t| is_stream[t as usize])
        .map(|t| {
            let tr = &c.tracks[t as usize];
            let stream = if xplane {
                xplane_stream_number(c.strings.get(tr.name))
            } else {
                stream_arg(tr).or_else(|| key_number(c, tr.key))
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
    let round = g.rounding();
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
            let idle_set =
                xplane || cat.is_activity() || c.strings.get(c.slices.cat(i)) == "mtia_ccp_events";
            let name = c.slices.name[i];
            let class = *class_of
                .entry(name)
                .or_insert_with(|| classify(c.strings.get(name)));
            let corr = c.slices.corr(i);
            let launch = launches.launch_of(corr);
            if let Some(w) = window_end
                && (launch == NO_SLICE
                    || round
                        .span(
                            c.slices.start[launch as usize],
                            c.slices.end(launch as usize),
                        )
                        .0
                        >= w)
            {
                g.window_dropped += 1;
                continue;
            }
            a.slice.push(id);
            let (s, e) = (c.slices.start[i], c.slices.end(i));
            let (s, e) = round.span(s, e);
            a.start.push(s);
            a.end.push(e);
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
            device_name: c.process_title(tr.process),
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
    fn rounding_like_hta() {
        let r = Rounding {
            on: true,
            shift_ns: 5_500,
        };
        // File ts 5.5+0.25 = 5.75 µs, dur 3.5 → ceil 6, floor(9.25) = 9: relative 0.5 and 3.5 µs.
        assert_eq!(r.span(250_000, 3_750_000), (500_000, 3_500_000));
        // Sub-µs event inside one µs: end before start, as in HTA.
        assert_eq!(r.span(600_000, 900_000), (1_500_000, 500_000));
        // f64 at 1.7e15 µs: 1712195495505583.0 + 4.928 rounds to ...588.0 in f64 → floor 588.
        let big = Rounding {
            on: true,
            shift_ns: 1_712_195_495_505_583_000,
        };
        assert_eq!(big.span(0, 4_928_000), (0, 5_000_000));
        let off = Rounding {
            on: false,
            shift_ns: 0,
        };
        assert_eq!(off.span(1, 2), (1, 2));
        assert_eq!(xplane_stream_number("Stream #134(Compute)"), Some(134));
        assert_eq!(xplane_stream_number("CUPTI overhead"), None);
    }
}
