//! The replay side of the merge: graph launches, the device activities each ran (by the
//! launch's correlation id), and the serving iterations (annotations) that hold them.

use super::details::iteration;
use crate::model::{Capture, Category, TrackKind};
use rustc_hash::FxHashMap;

/// One graph launch of the replay trace.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The `cudaGraphLaunch` / `hipGraphLaunch` slice.
    pub slice: u32,
    /// Its track.
    pub track: u32,
    /// Device activities it ran, in start order.
    pub kernels: Vec<u32>,
}

/// One serving iteration and the graph launches inside it.
#[derive(Clone, Debug)]
pub struct Step {
    /// The annotation slice.
    pub slice: u32,
    /// Batch size from the annotation.
    pub batch_size: u64,
    /// Indices into the launch list, in start order.
    pub launches: Vec<usize>,
}

pub use crate::model::graph_replay::is_graph_launch_name as is_graph_launch;

/// The graph launches of `c` (host slices, start order) with their device activities.
pub fn launches(c: &Capture) -> Vec<Launch> {
    let mut out: Vec<Launch> = Vec::new();
    let mut by_corr: FxHashMap<u64, usize> = FxHashMap::default();
    for (t, tr) in c.tracks.iter().enumerate() {
        if tr.kind == TrackKind::GpuStream || tr.kind == TrackKind::Counter {
            continue;
        }
        for i in tr.slices.0..tr.slices.1 {
            let iu = i as usize;
            if !matches!(c.slices.kind(iu), Category::Runtime | Category::Driver)
                || !is_graph_launch(c.strings.get(c.slices.name[iu]))
            {
                continue;
            }
            let corr = c.slices.corr(iu);
            if corr != 0 {
                by_corr.entry(corr).or_insert(out.len());
            }
            out.push(Launch {
                slice: i,
                track: t as u32,
                kernels: Vec::new(),
            });
        }
    }
    if by_corr.is_empty() {
        return out;
    }
    for tr in c.tracks.iter().filter(|t| t.kind == TrackKind::GpuStream) {
        for i in tr.slices.0..tr.slices.1 {
            let iu = i as usize;
            if !matches!(
                c.slices.kind(iu),
                Category::Kernel | Category::Memcpy | Category::Memset
            ) {
                continue;
            }
            if let Some(&l) = by_corr.get(&c.slices.corr(iu)) {
                out[l].kernels.push(i);
            }
        }
    }
    for l in &mut out {
        l.kernels.sort_by_key(|&k| (c.slices.start[k as usize], k));
    }
    out.sort_by_key(|l| (c.slices.start[l.slice as usize], l.slice));
    out
}

/// The serving iterations of `c` (TraceLens's rule: the detailed annotation kinds when the
/// trace has any, else the native ones) with the launches that lie inside each.
pub fn steps(c: &Capture, launches: &[Launch]) -> Vec<Step> {
    let mut found: Vec<(u32, u64, bool)> = Vec::new();
    for i in 0..c.slices.len() {
        if c.slices.kind(i) != Category::UserAnnotation {
            continue;
        }
        if let Some(it) = iteration(c.strings.get(c.slices.name[i])) {
            found.push((i as u32, it.batch_size, it.detailed));
        }
    }
    if found.iter().any(|f| f.2) {
        found.retain(|f| f.2);
    }
    found.sort_by_key(|f| (c.slices.start[f.0 as usize], f.0));
    found
        .into_iter()
        .map(|(slice, batch_size, _)| {
            let (s, e) = (c.slices.start[slice as usize], c.slices.end(slice as usize));
            let launches = launches
                .iter()
                .enumerate()
                .filter(|(_, l)| {
                    let l = l.slice as usize;
                    c.slices.start[l] >= s && c.slices.end(l) <= e
                })
                .map(|(k, _)| k)
                .collect();
            Step {
                slice,
                batch_size,
                launches,
            }
        })
        .collect()
}
