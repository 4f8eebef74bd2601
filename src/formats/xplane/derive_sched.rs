//! Step grouping and the GPU planes' derivation, run inside the parallel walk as soon as their
//! inputs are complete: grouping when the last host line is walked (its records are dropped
//! right after), a GPU plane's lines when its last line is walked and grouping is done. So the
//! records of a plane live only until that plane is derived, not until the whole file is read.

use super::derive_device::{DeriveCtx, Stream, derive_plane};
use super::derived::NameTable as _;
use super::derived::{DerivedLine, DevRun, NO_VALUE};
use super::group::{self, CU, HostNodes, LAUNCH_PLANE, NONE};
use super::launch_stats::Launch;
use super::scan::SpaceScan;
use super::walk::SharedNames;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// What step grouping produced, for the derivation and the merge.
#[derive(Debug, Default)]
pub(super) struct Grouped {
    /// Group of each launch's correlation id.
    pub(super) by_corr: FxHashMap<i64, i64>,
    /// Names of the groups grouping made.
    pub(super) names: FxHashMap<i64, String>,
    /// The host launches `Launch Stats` counts (in a group grouping made).
    pub(super) launches: Vec<Launch>,
}

/// Which unit of work waits for what, and where results go.
pub(super) struct Sched<'a> {
    space: &'a SpaceScan<'a>,
    ctx: DeriveCtx<'a>,
    /// Host lines not walked yet.
    host_left: AtomicUsize,
    /// Per plane: lines whose records are not in yet, + 1 until grouping is done (derivation
    /// planes only).
    plane_left: Vec<AtomicUsize>,
    /// Planes whose lines are derived.
    derive: Vec<bool>,
    dev: Vec<Mutex<Vec<DevRun>>>,
    grouped: OnceLock<Grouped>,
    derived: Vec<Mutex<Vec<DerivedLine>>>,
}

impl<'a> Sched<'a> {
    /// `units`: (plane, line) of each unit of work; `host[u]`: unit `u` records host events;
    /// `derive[p]`: plane `p`'s lines are derived.
    pub(super) fn new(
        space: &'a SpaceScan<'a>,
        ctx: DeriveCtx<'a>,
        units: &[(usize, usize)],
        host: &[bool],
        derive: Vec<bool>,
    ) -> Self {
        let mut left = vec![0usize; derive.len()];
        for &(p, _) in units {
            if derive[p] {
                left[p] += 1;
            }
        }
        Sched {
            space,
            ctx,
            host_left: AtomicUsize::new(host.iter().filter(|&&h| h).count()),
            plane_left: left.into_iter().map(|n| AtomicUsize::new(n + 1)).collect(),
            dev: derive.iter().map(|_| Mutex::new(Vec::new())).collect(),
            derived: derive.iter().map(|_| Mutex::new(Vec::new())).collect(),
            derive,
            grouped: OnceLock::new(),
        }
    }

    /// True when the space has no host line: grouping has nothing to wait for (call
    /// [`Sched::group`] with no records before the walk).
    pub(super) fn no_host(&self) -> bool {
        self.host_left.load(Ordering::Acquire) == 0
    }

    /// A unit of plane `pi` is walked: `run` holds its records (derivation planes); `host`
    /// says it recorded host events, which `take_host` hands over (all host units, in file
    /// order) once the last one is in.
    pub(super) fn unit_done(
        &self,
        pi: usize,
        run: Option<DevRun>,
        host: bool,
        take_host: impl FnOnce() -> HostNodes,
        names: &mut SharedNames<'_>,
    ) {
        if self.derive[pi] {
            if let Some(run) = run.filter(|r| !r.recs.is_empty()) {
                lock(&self.dev[pi]).push(run);
            }
            self.plane_step(pi, names);
        }
        if host && self.host_left.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.group(take_host(), names);
        }
    }

    /// Groups the host records (then dropped) and derives the planes waiting only for that.
    pub(super) fn group(&self, host: HostNodes, names: &mut SharedNames<'_>) {
        let groups = {
            let text = |id| names.text(id);
            group::group(&host, &text)
        };
        // Launch Stats counts only groups this grouping made (XProf looks a launch's group up
        // in its group metadata; groups a file carries already have none).
        let launches = host
            .nodes
            .iter()
            .zip(&groups.of_node)
            .filter(|(n, g)| {
                n.flags & LAUNCH_PLANE != 0
                    && n.flags & CU == 0
                    && n.corr != NONE
                    && n.device != i32::MIN
                    && groups.names.contains_key(g)
            })
            .map(|(n, &g)| Launch {
                device: i64::from(n.device),
                group: g,
                start: n.start,
                dur: n.dur,
            })
            .collect();
        drop(host);
        let _ = self.grouped.set(Grouped {
            by_corr: groups.by_corr,
            names: groups.names,
            launches,
        });
        for pi in 0..self.derive.len() {
            if self.derive[pi] {
                self.plane_step(pi, names);
            }
        }
    }

    /// One input of plane `pi` is complete; the last one derives it.
    fn plane_step(&self, pi: usize, names: &mut SharedNames<'_>) {
        if self.plane_left[pi].fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let mut runs = std::mem::take(&mut *lock(&self.dev[pi]));
        if runs.is_empty() {
            return;
        }
        if let Some(g) = self.grouped.get()
            && !g.by_corr.is_empty()
        {
            // Device events join the group of their launch.
            for e in runs.iter_mut().flat_map(|r| r.recs.iter_mut()) {
                if !e.grouped
                    && e.corr != NO_VALUE
                    && let Some(&g) = g.by_corr.get(&e.corr)
                {
                    e.group_id = g;
                    e.grouped = true;
                }
            }
        }
        runs.sort_by_key(|r| r.line);
        let streams: Vec<Stream> = self.space.planes[pi]
            .lines
            .iter()
            .map(|l| Stream {
                id: l.id,
                compute: String::from_utf8_lossy(l.title()).contains("Compute"),
            })
            .collect();
        let lines = derive_plane(&mut runs, &streams, self.ctx, names);
        drop(runs);
        *lock(&self.derived[pi]) = lines;
    }

    /// Grouping's result and each plane's derived lines.
    pub(super) fn finish(self) -> (Grouped, Vec<Vec<DerivedLine>>) {
        let derived = self
            .derived
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect();
        (self.grouped.into_inner().unwrap_or_default(), derived)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
