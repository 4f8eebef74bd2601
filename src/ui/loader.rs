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
    /// Flow partners: `(slice, partner)`, sorted, both directions.
    pub flow_partners: Vec<(u32, u32)>,
    /// Slices with a correlation id under 2^32, as `corr << 32 | slice`, sorted: the slices
    /// sharing an id are found by binary search (8 bytes per correlated slice, no pair table).
    pub by_corr: Vec<u64>,
    /// The same for wider correlation ids: `(corr, slice)`, sorted.
    pub by_wide_corr: Vec<(u64, u32)>,
    /// Per counter series: (min, max) value, for sparkline scaling.
    pub counter_range: Vec<(f64, f64)>,
    /// Parse + index time.
    pub load_time: Duration,
}

impl Loaded {
    /// Wraps a capture: builds the index and the partner table.
    pub fn new(cap: Capture, started: Instant) -> Loaded {
        let index = CaptureIndex::build(&cap);
        let flow_partners = flow_partners(&cap);
        let (by_corr, by_wide_corr) = by_corr(&cap);
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
            flow_partners,
            by_corr,
            by_wide_corr,
            counter_range,
            load_time: started.elapsed(),
        }
    }

    /// Flow / correlation partners of slice `id` as `(id, partner)`, sorted: its flow
    /// partners and up to `MAX_GROUP` (16) other slices with its correlation id.
    pub fn partners_of(&self, id: u32) -> Vec<(u32, u32)> {
        let lo = self.flow_partners.partition_point(|p| p.0 < id);
        let hi = self.flow_partners.partition_point(|p| p.0 <= id);
        let mut out = self.flow_partners[lo..hi].to_vec();
        let s = &self.cap.slices;
        let corr = match s.corr.get(id as usize) {
            Some(0) | None => 0,
            Some(_) => s.corr(id as usize),
        };
        if let Ok(c) = u32::try_from(corr)
            && c != 0
        {
            let key = u64::from(c) << 32;
            let lo = self.by_corr.partition_point(|&k| k < key);
            let group = self.by_corr[lo..]
                .iter()
                .take_while(|&&k| k >> 32 == u64::from(c))
                .map(|&k| k as u32);
            out.extend(group.filter(|&p| p != id).take(MAX_GROUP).map(|p| (id, p)));
        } else if corr != 0 {
            let lo = self.by_wide_corr.partition_point(|e| e.0 < corr);
            let group = self.by_wide_corr[lo..]
                .iter()
                .take_while(|e| e.0 == corr)
                .map(|e| e.1);
            out.extend(group.filter(|&p| p != id).take(MAX_GROUP).map(|p| (id, p)));
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Most correlation partners listed per slice (a launch and its few kernels).
const MAX_GROUP: usize = 16;

fn flow_partners(cap: &Capture) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for f in &cap.flows {
        if f.from != NO_SLICE && f.to != NO_SLICE && f.from != f.to {
            out.push((f.from, f.to));
            out.push((f.to, f.from));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Correlated slices sorted by (correlation id, slice): packed for ids under 2^32.
fn by_corr(cap: &Capture) -> (Vec<u64>, Vec<(u64, u32)>) {
    let s = &cap.slices;
    let mut narrow: Vec<u64> = Vec::new();
    let mut wide: Vec<(u64, u32)> = Vec::new();
    for (i, &c) in s.corr.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let full = s.corr(i);
        match u32::try_from(full) {
            Ok(c) => narrow.push(u64::from(c) << 32 | i as u64),
            Err(_) => wide.push((full, i as u32)),
        }
    }
    narrow.sort_unstable();
    wide.sort_unstable();
    (narrow, wide)
}

/// Loads and indexes one capture on the calling thread.
pub fn load_sync(capture: &CaptureRef, progress: &Progress) -> Result<Loaded, String> {
    let started = Instant::now();
    let cap = catalog::load(capture, progress).map_err(|e| {
        if e.is_cancelled() {
            crate::formats::CANCELLED.to_string()
        } else {
            e.to_string()
        }
    })?;
    if progress.cancelled() {
        return Err(crate::formats::CANCELLED.into());
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
