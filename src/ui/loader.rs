//! Background loading: `formats::load` + `CaptureIndex::build` (+ flow partner table) on a worker
//! thread, reporting through [`Progress`] and one message at the end. Tests call [`load_sync`],
//! the same code without the thread.

use super::catalog::{self, CaptureRef};
use crate::analysis::rank::{self, Ranking};
use crate::analysis::search::engine::SearchEngine;
use crate::formats::Progress;
use crate::index::CaptureIndex;
use crate::model::{Capture, NO_SLICE};
use std::sync::mpsc::Sender;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// A capture ready to draw.
#[derive(Debug)]
pub struct Loaded {
    /// The model.
    pub cap: Arc<Capture>,
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
    /// The capture's training steps (`analysis::steps::find`, default options): the timeline's
    /// `Steps` row and the step keys.
    pub steps: crate::analysis::steps::Steps,
    /// Per GPU stream, the spans of the CUDA/HIP graph launches it ran (the `graphs` row).
    pub graphs: super::graph_spans::GraphSpans,
    /// Parse + index time.
    pub load_time: Duration,
    /// The search index over event names, built once (on the loader thread right after the
    /// capture is handed to the UI, or on first use).
    search: OnceLock<SearchEngine>,
    /// The optimizable-events ranking, computed on first use (`o`, details of CPU events).
    rank: OnceLock<Ranking>,
    /// Per-slice self times of the last category filter the statistics table used (freed
    /// with the capture).
    self_times: std::sync::Mutex<Option<Arc<crate::analysis::stats_index::SelfTimes>>>,
    /// Derived counter rows: the GPU queue depth of each device over time, with its idle
    /// intervals (from the launch ↔ kernel links), and the queue length of each GPU stream; empty
    /// without GPU kernels, and until computed (on the loader thread after the capture is shown).
    pub derived: DerivedRows,
    /// The memory rows: allocations, allocated / reserved series and their indexes
    /// (`[memory]` events, XPlane allocator events, or an allocator snapshot); computed with
    /// the derived rows, or given with the capture.
    memory: OnceLock<super::memory::Memory>,
    /// `advise`'s findings over the capture's steps (the `!` view), computed on the loader
    /// thread after the search index, or on first call.
    findings: OnceLock<Vec<crate::analysis::advise::Finding>>,
}

/// The derived rows of a capture, filled once; reads as an empty slice until then.
#[derive(Debug, Default)]
pub struct DerivedRows(OnceLock<Vec<Derived>>);

impl DerivedRows {
    /// True once the rows are computed.
    pub fn is_ready(&self) -> bool {
        self.0.get().is_some()
    }
}

impl std::ops::Deref for DerivedRows {
    type Target = [Derived];
    fn deref(&self) -> &[Derived] {
        self.0.get().map_or(&[], |v| v.as_slice())
    }
}

/// Status-line meaning of the GPU queue depth rows.
const DEPTH_HELP: &str = "falling to 0 marks where the GPU starves (o ranks the CPU events)";
/// Status-line meaning of the stream queue-length rows.
const QUEUE_HELP: &str =
    "queue length: launched, not yet started on this stream (HTA); the host blocks at 1024";

/// A counter computed from the capture, drawn as a row under its process.
#[derive(Debug, Clone)]
pub struct Derived {
    /// Process the row belongs to.
    pub process: u32,
    /// Row label.
    pub name: String,
    /// Step series: value from `ts[i]` until the next sample.
    pub ts: Vec<crate::model::Ps>,
    /// Values.
    pub value: Vec<f64>,
    /// Largest value.
    pub max: f64,
    /// Intervals drawn as an overlay (GPU idle), sorted.
    pub marks: Vec<(crate::model::Ps, crate::model::Ps)>,
    /// What the value means (status line).
    pub help: &'static str,
}

impl Derived {
    fn new(
        process: u32,
        name: String,
        ts: Vec<crate::model::Ps>,
        value: Vec<f64>,
        marks: Vec<(crate::model::Ps, crate::model::Ps)>,
        help: &'static str,
    ) -> Derived {
        let max = value.iter().copied().fold(0.0, f64::max);
        Derived {
            process,
            name,
            ts,
            value,
            max,
            marks,
            help,
        }
    }
}

impl Loaded {
    /// Wraps a capture: builds the index, the partner table and the derived rows.
    pub fn new(cap: impl Into<Arc<Capture>>, started: Instant) -> Loaded {
        let l = Loaded::new_deferred(cap, started);
        let t = Instant::now();
        l.derive();
        let mut l = l;
        l.load_time += t.elapsed();
        l
    }

    /// [`Loaded::new`] without the derived rows (and ranking): [`Loaded::derive`] adds them.
    pub fn new_deferred(cap: impl Into<Arc<Capture>>, started: Instant) -> Loaded {
        let cap: Arc<Capture> = cap.into();
        // The index on this thread, the partner tables beside it: both are on the way to the
        // first frame.
        let (index, ((flow_partners, (by_corr, by_wide_corr)), (steps, graphs))) = rank::par2(
            || CaptureIndex::build(&cap),
            || {
                let steps = crate::analysis::steps::find(&cap, &Default::default());
                let graphs = super::graph_spans::GraphSpans::of(&cap);
                ((flow_partners(&cap), by_corr(&cap)), (steps, graphs))
            },
        );
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
            steps,
            graphs,
            load_time: started.elapsed(),
            search: OnceLock::new(),
            self_times: std::sync::Mutex::new(None),
            rank: OnceLock::new(),
            derived: DerivedRows::default(),
            memory: OnceLock::new(),
            findings: OnceLock::new(),
        }
    }

    /// The memory rows, once computed (`None` before: drawing never computes them).
    pub fn memory(&self) -> Option<&super::memory::Memory> {
        self.memory.get()
    }

    /// Sets the memory rows (an allocator snapshot gives them whole); false when already set.
    pub fn set_memory(&self, m: super::memory::Memory) -> bool {
        self.memory.set(m).is_ok()
    }

    /// Computes the ranking and the derived rows when not done yet: per device the GPU queue
    /// depth (one ranking selection shared with the ranking), per GPU stream its queue length
    /// (HTA's definition, `analysis::gpu::queue`). Both sides run on two threads.
    pub fn derive(&self) -> &[Derived] {
        if self.derived.is_ready() {
            return &self.derived;
        }
        let cap = &self.cap;
        let ((queues, streams), ()) = rank::par2(
            || self.derive_queues(),
            || {
                self.memory
                    .get_or_init(|| super::memory::Memory::build(cap));
            },
        );
        let mut rows: Vec<Derived> = queues
            .into_iter()
            .filter(|q| !q.steps.is_empty())
            .map(|q| {
                let ts: Vec<_> = q.steps.iter().map(|s| s.0).collect();
                let value: Vec<f64> = q.steps.iter().map(|s| f64::from(s.1)).collect();
                Derived::new(
                    q.process,
                    "GPU queue depth".into(),
                    ts,
                    value,
                    q.idle,
                    DEPTH_HELP,
                )
            })
            .collect();
        for (track, series) in streams {
            let Some(tr) = cap.tracks.get(track as usize) else {
                continue;
            };
            if series.is_empty() {
                continue;
            }
            let ts: Vec<_> = series.iter().map(|s| s.0).collect();
            let value: Vec<f64> = series.iter().map(|s| s.1 as f64).collect();
            let name = format!("queue {}", cap.track_name(track));
            rows.push(Derived::new(
                tr.process,
                name,
                ts,
                value,
                Vec::new(),
                QUEUE_HELP,
            ));
        }
        let _ = self.derived.0.set(rows);
        &self.derived
    }

    /// The per-device GPU queue depth (sharing one selection with the ranking) and the per
    /// stream queue lengths, on two threads.
    #[allow(clippy::type_complexity)]
    fn derive_queues(
        &self,
    ) -> (
        Vec<rank::DeviceQueue>,
        Vec<(u32, crate::analysis::gpu::queue::QueueSeries)>,
    ) {
        let cap = &self.cap;
        rank::par2(
            || {
                if self.rank.get().is_some() {
                    rank::device_queues(cap, rank::Mode::Default)
                } else {
                    let (r, q) = rank::rank_and_queues(cap, rank::Mode::Default);
                    let _ = self.rank.set(r);
                    q
                }
            },
            || crate::analysis::gpu::queue_series(cap, &Default::default()),
        )
    }

    /// Approximate heap bytes held: the model's columns, the index, the partner tables and
    /// the derived rows (the search engine and ranking, built lazily, are not counted). What
    /// the capture set's memory budget and the picker add up.
    pub fn heap_bytes(&self) -> usize {
        let derived: usize = self
            .derived
            .iter()
            .map(|d| d.ts.capacity() * 8 + d.value.capacity() * 8 + d.marks.capacity() * 16)
            .sum();
        self.cap.heap_bytes()
            + self.index.heap_bytes()
            + self.flow_partners.capacity() * 8
            + self.by_corr.capacity() * 8
            + self.by_wide_corr.capacity() * 16
            + self.counter_range.capacity() * 16
            + self.steps.steps.capacity() * std::mem::size_of::<crate::analysis::steps::Step>()
            + self.graphs.heap_bytes()
            + derived
            + self.memory().map_or(0, super::memory::Memory::heap_bytes)
    }

    /// The optimizable-events ranking (torch's intended semantics), computed on first call.
    pub fn ranking(&self) -> &Ranking {
        self.rank
            .get_or_init(|| rank::rank(&self.cap, rank::Mode::Default))
    }

    /// The ranking when it was already computed (drawing never computes it).
    pub fn ranking_if_ready(&self) -> Option<&Ranking> {
        self.rank.get()
    }

    /// Per-slice self times for the category filter of `opts`, kept for the next table with
    /// the same filter.
    pub fn self_times(
        &self,
        opts: &crate::analysis::stats::StatsOptions,
    ) -> Arc<crate::analysis::stats_index::SelfTimes> {
        let mut g = self.self_times.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(st) = g.as_ref().filter(|st| st.fits(opts)) {
            return st.clone();
        }
        let st = Arc::new(crate::analysis::stats_index::SelfTimes::new(
            &self.cap, opts,
        ));
        *g = Some(st.clone());
        st
    }

    /// `advise`'s findings, ranked by saving (computed on first call: call it off the UI
    /// thread, as the loader does).
    pub fn findings(&self) -> &[crate::analysis::advise::Finding] {
        self.findings.get_or_init(|| {
            use crate::analysis::advise::{Ctx, advise};
            let opts = crate::analysis::steps::StepOptions::default();
            advise(&Ctx::new(&self.cap, &self.steps, &opts))
        })
    }

    /// The findings when already computed (what drawing uses: it never computes them).
    pub fn findings_if_ready(&self) -> Option<&[crate::analysis::advise::Finding]> {
        self.findings.get().map(Vec::as_slice)
    }

    /// The search engine of this capture (built on first call: call it from key handling,
    /// not from a draw).
    pub fn search_engine(&self) -> &SearchEngine {
        self.search.get_or_init(|| SearchEngine::build(&self.cap))
    }

    /// The search engine when already built (what drawing uses: it never builds).
    pub fn built_search_engine(&self) -> Option<&SearchEngine> {
        self.search.get()
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

/// Loads and indexes one capture on the calling thread (derived rows included).
pub fn load_sync(capture: &CaptureRef, progress: &Progress) -> Result<Loaded, String> {
    let l = load_deferred(capture, progress)?;
    let t = Instant::now();
    l.derive();
    let mut l = l;
    l.load_time += t.elapsed();
    Ok(l)
}

/// [`load_sync`] without the derived rows.
fn load_deferred(capture: &CaptureRef, progress: &Progress) -> Result<Loaded, String> {
    let started = Instant::now();
    if capture.format == Some(crate::model::Format::Snapshot) {
        // An allocator snapshot: its memory model is the whole capture.
        let (cap, snap) =
            crate::formats::snapshot::open(&capture.source.path, capture.source.clone())
                .map_err(|e| e.to_string())?;
        let l = Loaded::new_deferred(cap, started);
        let mut m = super::memory::Memory::of(snap.model);
        m.segments = snap.segments;
        l.set_memory(m);
        return Ok(l);
    }
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
    Ok(Loaded::new_deferred(cap, started))
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
    /// A partial preview of a big file sent while the full load runs (a final `LoadDone`
    /// with `partial: false` always follows).
    pub partial: bool,
}

impl LoadDone {
    /// The end of job `generation` for `entry`: the capture or the error text.
    pub fn finished(generation: u64, entry: usize, result: Result<Arc<Loaded>, String>) -> Self {
        LoadDone {
            generation,
            entry,
            result,
            partial: false,
        }
    }

    /// A partial preview sent while job `generation` for `entry` still runs.
    pub fn preview(generation: u64, entry: usize, preview: Arc<Loaded>) -> Self {
        LoadDone {
            generation,
            entry,
            result: Ok(preview),
            partial: true,
        }
    }
}

/// A partial capture of a big JSON file to draw while it loads ([`chrome::preview`]).
fn preview(capture: &CaptureRef) -> Option<Loaded> {
    if matches!(
        capture.format,
        Some(crate::model::Format::XPlane | crate::model::Format::Snapshot)
    ) || crate::formats::cache::has_current(&capture.source.path)
    {
        return None;
    }
    let started = Instant::now();
    let cap = crate::formats::chrome::preview(&capture.source.path, capture.source.clone())?;
    Some(Loaded::new(cap, started))
}

/// Loads on a new thread and sends the result through `tx` (wrapped by `wrap`); then, while the
/// UI draws, builds the search index and the derived rows and sends `derived(generation)`.
pub fn spawn<M: Send + 'static>(
    generation: u64,
    entry: usize,
    capture: CaptureRef,
    progress: Arc<Progress>,
    tx: Sender<M>,
    wrap: fn(LoadDone) -> M,
    derived: fn(u64) -> M,
) {
    let r = std::thread::Builder::new()
        .name(format!("tracetui-load-{generation}"))
        .spawn(move || {
            if let Some(p) = preview(&capture) {
                let _ = tx.send(wrap(LoadDone::preview(generation, entry, Arc::new(p))));
            }
            let result = load_deferred(&capture, &progress).map(Arc::new);
            let ready = result.as_ref().ok().cloned();
            let _ = tx.send(wrap(LoadDone::finished(generation, entry, result)));
            // The UI draws meanwhile; the derived rows appear when ready, and the first `/` then
            // finds the search index built.
            if let Some(l) = ready {
                l.derive();
                let _ = tx.send(derived(generation));
                l.search_engine();
                // `advise`'s findings (the `!` view and the status-line hint), then a redraw.
                l.findings();
                let _ = tx.send(derived(generation));
                // Big JSON captures: a snapshot for the next open (after the first frame).
                crate::formats::cache::store(&capture.source.path, &l.cap);
            }
        });
    if let Err(e) = r {
        // Could not start a thread: report it like a load error (the receiver still exists in
        // the caller's loop, but the sender moved into the closure; nothing else to do).
        eprintln!("tracetui: cannot start loader thread: {e}");
    }
}
