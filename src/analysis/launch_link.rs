//! One rule pairing XPlane host launch events with the device activities they launched, by
//! their `correlation_id` stats — used by `gpu` (launch delay, queue length), `rank` (queue
//! depth) and whatever walks launch → kernel edges (a critical path). docs/xplane.md, "Launch
//! linking".
//!
//! - Device activities: every event of a `Stream #N…` line of a GPU plane (`/device:GPU:N`);
//!   derived lines and `CUPTI overhead` are not streams.
//! - Host launches: events with a non-zero correlation id on the lines of every other plane.
//!   The first such event of an id (tracks in order, events by start) is its launch; later ones
//!   are duplicates and launch nothing.
//! - A launch links every activity with its id: a CUDA graph launch (`cuGraphLaunch`, one id per
//!   graph execution) links all the graph's kernels; an activity has at most one launch.
//!
//! For the queue depth (`rank`), a launch stands for its LAST activity in start order: the queue
//! then holds every activity launched and not yet started, as `gpu`'s queue length counts them.

use crate::model::{Capture, NO_SLICE, ProcessKind, TrackKind};
use rustc_hash::FxHashMap;

/// The stream number of an XPlane line named `Stream #N…`.
pub fn stream_number(name: &str) -> Option<i64> {
    let rest = name.strip_prefix("Stream #")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest[..digits].parse().ok()
}

/// Per track of an XPlane capture: (is a device stream line, is a host line).
pub fn xplane_roles(c: &Capture) -> (Vec<bool>, Vec<bool>) {
    c.tracks
        .iter()
        .map(|tr| {
            let gpu = c
                .processes
                .get(tr.process as usize)
                .is_some_and(|p| p.kind == ProcessKind::Gpu);
            let stream = gpu
                && tr.kind == TrackKind::XLine
                && stream_number(c.strings.get(tr.name)).is_some();
            (stream, !gpu && tr.kind != TrackKind::Derived)
        })
        .unzip()
}

/// Per track of any capture: (is a device stream, is a host track). XPlane: [`xplane_roles`];
/// JSON: `gpu_stream` tracks are streams and every other track is a host track (a device
/// process's CPU threads too).
pub fn track_roles(c: &Capture) -> (Vec<bool>, Vec<bool>) {
    if c.format == Some(crate::model::Format::XPlane) {
        return xplane_roles(c);
    }
    c.tracks
        .iter()
        .map(|tr| {
            let s = tr.kind == TrackKind::GpuStream;
            (s, !s)
        })
        .unzip()
}

/// Host launches by correlation id, from the tracks marked in `is_host` (in track order, each
/// track's events by start): the first event of an id is its launch.
#[derive(Clone, Debug, Default)]
pub struct Launches {
    /// Correlation id → launching host slice.
    pub by_corr: FxHashMap<u64, u32>,
    /// Host slices carrying a correlation id.
    pub host_correlated: usize,
    /// Of them, slices whose id an earlier slice already launched.
    pub duplicates: usize,
}

impl Launches {
    /// The launch of correlation id `corr`, or `NO_SLICE` (also for id 0: none).
    #[inline]
    pub fn launch_of(&self, corr: u64) -> u32 {
        if corr == 0 {
            return NO_SLICE;
        }
        self.by_corr.get(&corr).copied().unwrap_or(NO_SLICE)
    }
}

/// Collects the host launches of `c` from the tracks marked in `is_host`.
pub fn launches(c: &Capture, is_host: &[bool]) -> Launches {
    let mut out = Launches::default();
    for (t, tr) in c.tracks.iter().enumerate() {
        if !is_host.get(t).copied().unwrap_or(false) {
            continue;
        }
        for id in tr.slices.0..tr.slices.1 {
            let corr = c.slices.corr(id as usize);
            if corr == 0 {
                continue;
            }
            out.host_correlated += 1;
            match out.by_corr.entry(corr) {
                std::collections::hash_map::Entry::Occupied(_) => out.duplicates += 1,
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(id);
                }
            }
        }
    }
    out
}

/// The whole rule on an XPlane capture: the launches, the activities and what links.
#[derive(Clone, Debug, Default)]
pub struct XLinks {
    /// Host launches by correlation id.
    pub launches: Launches,
    /// Device activities (slice ids of stream lines), in track order then start.
    pub activities: Vec<u32>,
    /// Per activity: its launch, or `NO_SLICE`.
    pub launch: Vec<u32>,
}

impl XLinks {
    /// Activities with a launch.
    pub fn linked_activities(&self) -> usize {
        self.launch.iter().filter(|&&l| l != NO_SLICE).count()
    }
    /// Launches that launched at least one activity.
    pub fn linked_launches(&self) -> usize {
        let mut l: Vec<u32> = self
            .launch
            .iter()
            .copied()
            .filter(|&l| l != NO_SLICE)
            .collect();
        l.sort_unstable();
        l.dedup();
        l.len()
    }
}

/// Applies the rule to an XPlane capture.
pub fn xplane_links(c: &Capture) -> XLinks {
    let (is_stream, is_host) = xplane_roles(c);
    let launches = launches(c, &is_host);
    let mut out = XLinks {
        launches,
        ..XLinks::default()
    };
    for (t, tr) in c.tracks.iter().enumerate() {
        if !is_stream[t] {
            continue;
        }
        for id in tr.slices.0..tr.slices.1 {
            out.activities.push(id);
            out.launch
                .push(out.launches.launch_of(c.slices.corr(id as usize)));
        }
    }
    out
}

/// "No kernel" in [`last_kernel_of`]'s output.
pub const NO_KERNEL: u32 = u32::MAX;

/// For each launch's correlation id, the index of the LAST of the (start-sorted) kernels with
/// that id, or [`NO_KERNEL`]: the kernel a launch stands for in a queue depth that counts every
/// kernel launched and not started. Id 0 links nothing.
pub fn last_kernel_of(launch_corr: &[u64], kernel_corr: &[u64]) -> Vec<u32> {
    let mut last: FxHashMap<u64, u32> = FxHashMap::default();
    for (k, &c) in kernel_corr.iter().enumerate() {
        if c != 0 {
            last.insert(c, k as u32);
        }
    }
    launch_corr
        .iter()
        .map(|&c| {
            if c == 0 {
                NO_KERNEL
            } else {
                last.get(&c).copied().unwrap_or(NO_KERNEL)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ArgsRef, CaptureBuilder, Format, Key, SourceInfo, StrId};

    /// A host plane launching a 3-kernel graph (id 7), a single kernel (id 8, launched twice:
    /// the second is a duplicate), a memcpy whose launch is absent (id 9), and a host event
    /// without an id; a GPU plane with a stream line and a derived line carrying id 7 too.
    fn capture() -> Capture {
        let mut b = CaptureBuilder::new();
        let (hn, gn) = (b.intern("/host:CPU"), b.intern("/device:GPU:0"));
        let host = b.process(Key::Str(hn));
        b.process_mut(host).name = hn;
        b.process_mut(host).kind = ProcessKind::Host;
        let gpu = b.process(Key::Str(gn));
        b.process_mut(gpu).name = gn;
        b.process_mut(gpu).kind = ProcessKind::Gpu;
        let th = b.track(host, Key::Int(1), TrackKind::XLine);
        let st = b.track(gpu, Key::Int(7), TrackKind::XLine);
        let sn = b.intern("Stream #7(Compute)");
        b.track_mut(st).name = sn;
        let dl = b.track(gpu, Key::Int(100), TrackKind::Derived);
        let names: Vec<StrId> = ["cuGraphLaunch", "cuLaunchKernel", "k", "memcpy", "op"]
            .iter()
            .map(|n| b.intern(n))
            .collect();
        let e = StrId::EMPTY;
        let n = ArgsRef::NONE;
        b.add_slice(th, 0, 10, names[0], e, n, 7);
        b.add_slice(th, 20, 10, names[1], e, n, 8);
        b.add_slice(th, 40, 10, names[1], e, n, 8);
        b.add_slice(th, 60, 10, names[4], e, n, 0);
        for (s, corr) in [(100, 7), (110, 7), (120, 7), (130, 8), (140, 9)] {
            b.add_slice(st, s, 5, names[2], e, n, corr);
        }
        b.add_slice(dl, 100, 25, names[4], e, n, 7);
        b.finish(SourceInfo::default(), Format::XPlane)
    }

    #[test]
    fn graph_launches_link_all_their_kernels() {
        let c = capture();
        let l = xplane_links(&c);
        assert_eq!(l.activities.len(), 5);
        assert_eq!(
            (
                l.launches.by_corr.len(),
                l.launches.host_correlated,
                l.launches.duplicates
            ),
            (2, 3, 1)
        );
        assert_eq!((l.linked_activities(), l.linked_launches()), (4, 2));
        let name = |i: u32| c.slice_name(i).to_string();
        assert_eq!(name(l.launch[0]), "cuGraphLaunch");
        assert_eq!(l.launch[0], l.launch[2]);
        assert_eq!(name(l.launch[3]), "cuLaunchKernel");
        assert_eq!(l.launch[4], NO_SLICE);
        assert_eq!(l.launches.launch_of(0), NO_SLICE);
    }

    #[test]
    fn a_launch_stands_for_its_last_kernel() {
        // Kernels by start with ids 7, 7, 8, 7, 0; launches 7, 8, 9, 0.
        assert_eq!(
            last_kernel_of(&[7, 8, 9, 0], &[7, 7, 8, 7, 0]),
            vec![3, 2, NO_KERNEL, NO_KERNEL]
        );
        assert_eq!(stream_number("Stream #134(Compute)"), Some(134));
        assert_eq!(stream_number("CUPTI overhead"), None);
    }
}
