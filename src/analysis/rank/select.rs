//! Which slices of a capture play which part (analysis.md §b input mapping): CPU tree events,
//! kernel launches and kernels, for Kineto/Chrome JSON and XPlane GPU captures.

use super::Mode;
use crate::analysis::launch_link;
use crate::model::{Capture, Category, Format, ProcessKind, Ps, StrId, TrackKind};

/// Launch names torch recognises (prefix test).
pub const TORCH_LAUNCHES: &[&str] = &[
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "__cudaLaunchKernel",
    "cudaLaunchCooperativeKernel",
    "cudaLaunchCooperativeKernelMultiDevice",
];

/// Driver-API and AMD launch names torch misses; counted in the default mode (prefix test).
pub const EXTRA_LAUNCHES: &[&str] = &[
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "hipLaunchKernel",
    "hipExtLaunchKernel",
    "hipModuleLaunchKernel",
    "hipExtModuleLaunchKernel",
];

/// The slices taking part, by role.
#[derive(Clone, Debug, Default)]
pub struct Roles {
    /// CPU tree events (slice ids, ascending: grouped by track in storage order).
    pub tree: Vec<u32>,
    /// Start of each tree event, ps.
    pub start: Vec<Ps>,
    /// End of each tree event, ps.
    pub end: Vec<Ps>,
    /// Offsets into `tree` where each track's events begin, plus `tree.len()` at the end.
    pub groups: Vec<usize>,
    /// Launches: indices into `tree`, sorted by (start, slice id).
    pub launches: Vec<u32>,
    /// Kernels: slice ids sorted by (start, slice id).
    pub kernels: Vec<u32>,
    /// XPlane: launches link the last kernel of their id ([`launch_link`]).
    pub last_of_id: bool,
}

/// XPlane's linking inputs: which tracks are device streams, and the launches by id.
struct XRule {
    is_stream: Vec<bool>,
    launches: launch_link::Launches,
}

/// True when `name` contains none of `mem`, `cpy`, `alloc`, `free` (ASCII case-insensitive).
pub fn kernel_name(name: &str) -> bool {
    let b = name.as_bytes();
    !["mem", "cpy", "alloc", "free"].iter().any(|pat| {
        b.windows(pat.len())
            .any(|w| w.eq_ignore_ascii_case(pat.as_bytes()))
    })
}

/// True when `name` is a launch in `mode`.
pub fn launch_name(name: &str, mode: Mode) -> bool {
    TORCH_LAUNCHES.iter().any(|p| name.starts_with(p))
        || (mode == Mode::Default && EXTRA_LAUNCHES.iter().any(|p| name.starts_with(p)))
}

/// Memo of a per-name predicate (no string work per event).
struct NameMemo<F: Fn(&str) -> bool> {
    f: F,
    memo: Vec<u8>,
}

impl<F: Fn(&str) -> bool> NameMemo<F> {
    fn get(&mut self, c: &Capture, s: StrId) -> bool {
        let i = s.index();
        if i >= self.memo.len() {
            self.memo.resize(i + 1, 0);
        }
        if self.memo[i] == 0 {
            self.memo[i] = if (self.f)(c.strings.get(s)) { 1 } else { 2 };
        }
        self.memo[i] == 1
    }
}

/// Picks the roles. CPU tree: on host threads of JSON captures the categories `cpu_op`,
/// `user_annotation`, `cuda_runtime`, `cuda_driver` and `python_function` (torch's event tree holds
/// python frames too, which give the source locations); on XPlane every event of a host-plane line.
/// Kernels: on GPU streams, cat `kernel` (default) or every event whose name passes
/// [`kernel_name`] (compat: torch's device-type test). Launches: tree events named like a launch
/// ([`launch_name`]). On XPlane both follow the one linking rule of [`launch_link`], as `gpu`
/// does: kernels are every event of a `/device:GPU:N` stream line, launches the first host event
/// of each correlation id.
pub fn select(c: &Capture, mode: Mode) -> Roles {
    // Two halves of the tracks (by slice count) on two threads, then concatenated.
    let total = c.slices.len() as u64;
    let cut = c
        .tracks
        .partition_point(|t| u64::from(t.slices.0) * 2 < total)
        .min(c.tracks.len());
    let (a, b) = c.tracks.split_at(cut);
    let xr = (c.format == Some(Format::XPlane)).then(|| {
        let (is_stream, is_host) = launch_link::xplane_roles(c);
        XRule {
            launches: launch_link::launches(c, &is_host),
            is_stream,
        }
    });
    let xr = xr.as_ref();
    let (mut r, tail) = super::par::par2(
        || select_tracks(c, a, 0, mode, xr),
        || select_tracks(c, b, cut, mode, xr),
    );
    r.last_of_id = xr.is_some();
    let off = r.tree.len();
    r.launches
        .extend(tail.launches.iter().map(|&l| l + off as u32));
    r.groups
        .extend(tail.groups.iter().skip(1).map(|&g| g + off));
    r.tree.extend_from_slice(&tail.tree);
    r.start.extend_from_slice(&tail.start);
    r.end.extend_from_slice(&tail.end);
    r.kernels.extend_from_slice(&tail.kernels);
    // Each track contributes a run already sorted by (start, id): the stable sort merges runs.
    let start = |i: u32| -> Ps { c.slices.start[i as usize] };
    let (tree, tstart) = (&r.tree, &r.start);
    r.launches
        .sort_by_key(|&l| (tstart[l as usize], tree[l as usize]));
    r.kernels.sort_by_key(|&k| (start(k), k));
    r
}

/// [`select`] over `tracks` (a contiguous run of the capture's tracks, the first being track
/// `first`); launches and kernels come out in track order, not sorted.
fn select_tracks(
    c: &Capture,
    tracks: &[crate::model::Track],
    first: usize,
    mode: Mode,
    xr: Option<&XRule>,
) -> Roles {
    let s = &c.slices;
    let xplane = c.format == Some(Format::XPlane);
    let mut launch = NameMemo {
        f: |n: &str| launch_name(n, mode),
        memo: Vec::new(),
    };
    let mut kname = NameMemo {
        f: kernel_name,
        memo: Vec::new(),
    };
    // Per class: 1 = a tree category, 2 = a kernel category (default mode), else 0.
    let class_role: Vec<u8> = s
        .classes
        .iter()
        .map(|c| match c.1 {
            Category::CpuOp
            | Category::UserAnnotation
            | Category::Runtime
            | Category::Driver
            | Category::PythonFunction => 1,
            Category::Kernel => 2,
            _ => 0,
        })
        .collect();
    let role = |i: usize| {
        class_role
            .get(usize::from(s.class[i]))
            .copied()
            .unwrap_or(0)
    };
    let mut r = Roles::default();
    r.groups.push(0);
    for (ti, tr) in tracks.iter().enumerate() {
        let pk = c.processes.get(tr.process as usize).map(|p| p.kind);
        let (lo, hi) = (tr.slices.0 as usize, tr.slices.1 as usize);
        let host = if xplane {
            tr.kind == TrackKind::XLine && pk == Some(ProcessKind::Host)
        } else {
            tr.kind == TrackKind::Thread
        };
        let device = if let Some(x) = xr {
            x.is_stream.get(first + ti).copied().unwrap_or(false)
        } else {
            tr.kind == TrackKind::GpuStream
        };
        if host {
            r.tree.reserve(hi - lo);
            r.start.reserve(hi - lo);
            r.end.reserve(hi - lo);
            for i in lo..hi {
                let keep = xplane || role(i) == 1;
                if !keep {
                    continue;
                }
                let is_launch = if let Some(x) = xr {
                    let corr = s.corr(i);
                    corr != 0 && x.launches.launch_of(corr) == i as u32
                } else {
                    launch.get(c, s.name[i])
                };
                if is_launch {
                    r.launches.push(r.tree.len() as u32);
                }
                r.tree.push(i as u32);
                r.start.push(s.start[i]);
                r.end.push(s.start[i] + s.dur[i]);
            }
            if r.groups.last() != Some(&r.tree.len()) {
                r.groups.push(r.tree.len());
            }
        } else if device {
            for i in lo..hi {
                let k = if xr.is_some() {
                    true
                } else if mode == Mode::Default {
                    role(i) == 2
                } else {
                    kname.get(c, s.name[i])
                };
                if k {
                    r.kernels.push(i as u32);
                }
            }
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(kernel_name("ampere_sgemm_128x64_tn"));
        assert!(!kernel_name("Memcpy HtoD (Pageable -> Device)"));
        assert!(!kernel_name("void at::native::FREE_kernel"));
        assert!(launch_name("cudaLaunchKernel", Mode::Compat));
        assert!(launch_name("cudaLaunchKernelExC", Mode::Compat));
        assert!(!launch_name("cuLaunchKernel", Mode::Compat));
        assert!(launch_name("cuLaunchKernel", Mode::Default));
        assert!(launch_name("hipExtModuleLaunchKernel", Mode::Default));
        assert!(!launch_name("cudaMemcpyAsync", Mode::Default));
    }
}
