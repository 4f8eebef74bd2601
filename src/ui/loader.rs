//! Background loading: `formats::load` + `CaptureIndex::build` (+ flow partner table) on a worker
//! thread, reporting through [`Progress`] and one message at the end. Tests call [`load_sync`],
//! the same code without the thread.

use super::catalog::{self, CaptureRef};
use crate::formats::Progress;
use crate::index::CaptureIndex;
use crate::model::{Capture, NO_SLICE};
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// A capture ready to draw.
#[derive(Debug)]
pub struct Loaded {
    /// The model.
    pub cap: Capture,
    /// Its index.
    pub index: CaptureIndex,
    /// Flow / correlation partners: `(slice, partner)`, sorted, both directions.
    pub partners: Vec<(u32, u32)>,
    /// Per counter series: (min, max) value, for sparkline scaling.
    pub counter_range: Vec<(f64, f64)>,
    /// Parse + index time.
    pub load_time: Duration,
}

impl Loaded {
    /// Wraps a capture: builds the index and the partner table.
    pub fn new(cap: Capture, started: Instant) -> Loaded {
        let index = CaptureIndex::build(&cap);
        let partners = partners(&cap);
        let counter_range = cap
            .counters
            .iter()
            .map(|c| {
                c.value
                    .iter()
                    .filter(|v| v.is_finite())
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                        (lo.min(v), hi.max(v))
                    })
            })
            .collect();
        Loaded {
            cap,
            index,
            partners,
            counter_range,
            load_time: started.elapsed(),
        }
    }

    /// Flow / correlation partners of slice `id`.
    pub fn partners_of(&self, id: u32) -> &[(u32, u32)] {
        let lo = self.partners.partition_point(|p| p.0 < id);
        let hi = self.partners.partition_point(|p| p.0 <= id);
        &self.partners[lo..hi]
    }
}

/// Most partners linked per correlation id group (a launch and its few kernels).
const MAX_GROUP: usize = 16;

fn partners(cap: &Capture) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for f in &cap.flows {
        if f.from != NO_SLICE && f.to != NO_SLICE && f.from != f.to {
            out.push((f.from, f.to));
            out.push((f.to, f.from));
        }
    }
    let s = &cap.slices;
    let mut by_corr: Vec<(u64, u32)> = (0..s.len())
        .filter(|&i| s.corr[i] != 0)
        .map(|i| (s.corr(i), i as u32))
        .collect();
    by_corr.sort_unstable();
    for g in by_corr.chunk_by(|a, b| a.0 == b.0) {
        let g = &g[..g.len().min(MAX_GROUP)];
        for a in g {
            for b in g {
                if a.1 != b.1 {
                    out.push((a.1, b.1));
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Loads and indexes one capture on the calling thread.
pub fn load_sync(capture: &CaptureRef, progress: &Progress) -> Result<Loaded, String> {
    let started = Instant::now();
    let cap = catalog::load(capture, progress).map_err(|e| e.to_string())?;
    if progress.cancelled() {
        return Err("cancelled".into());
    }
    Ok(Loaded::new(cap, started))
}

/// The end of one load job.
#[derive(Debug)]
pub struct LoadDone {
    /// Generation of the job; stale generations are dropped by the app.
    pub generation: u64,
    /// Catalog entry loaded.
    pub entry: usize,
    /// The capture or the error text.
    pub result: Result<Arc<Loaded>, String>,
}

/// Runs [`load_sync`] on a new thread and sends the result through `tx` (wrapped by `wrap`).
pub fn spawn<M: Send + 'static>(
    generation: u64,
    entry: usize,
    capture: CaptureRef,
    progress: Arc<Progress>,
    tx: Sender<M>,
    wrap: fn(LoadDone) -> M,
) {
    let r = std::thread::Builder::new()
        .name(format!("tracetui-load-{generation}"))
        .spawn(move || {
            let result = load_sync(&capture, &progress).map(Arc::new);
            let _ = tx.send(wrap(LoadDone {
                generation,
                entry,
                result,
            }));
        });
    if let Err(e) = r {
        // Could not start a thread: report it like a load error (the receiver still exists in
        // the caller's loop, but the sender moved into the closure; nothing else to do).
        eprintln!("tracetui: cannot start loader thread: {e}");
    }
}
