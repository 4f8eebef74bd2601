//! The per-capture summary the cross-rank analyses work from, made while the capture is loaded.

use crate::analysis::gpu::GpuOptions;
use crate::analysis::gpu::streams;
use crate::analysis::gpu::temporal::BreakdownAcc;
use crate::analysis::steps::comms::{self, CollKind, CollSize};
use crate::analysis::steps::{self, DeviceParts, Step, StepOptions, StepSource};
use crate::model::{ArgValue, Capture, NO_SLICE, Ps, TrackKind};
use rustc_hash::FxHashMap;

/// One step of a rank: window and the parts of its primary device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankStep {
    /// The step.
    pub step: Step,
    /// Window in the file's clock, ns.
    pub start_ns: i64,
    /// Host input wait, ps.
    pub input: Ps,
    /// Parts of every device.
    pub devices: Vec<DeviceParts>,
}

impl RankStep {
    /// Parts of device `d` (the primary device when given), else zeros.
    pub fn device(&self, d: Option<i64>) -> DeviceParts {
        d.and_then(|d| self.devices.iter().find(|p| p.device == d))
            .cloned()
            .unwrap_or_default()
    }
}

/// One collective kernel of a rank, with owned names and times in the file's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankColl {
    /// Kernel name: index into [`RankSummary::names`].
    pub kernel: u32,
    /// Process group name: index into [`RankSummary::names`].
    pub group: Option<u32>,
    /// Collective kind.
    pub kind: CollKind,
    /// Stream number.
    pub stream: i64,
    /// Start, ns (file clock).
    pub start_ns: i64,
    /// End, ns (file clock).
    pub end_ns: i64,
    /// Sequence number in its process group, if given.
    pub seq: Option<i64>,
    /// Sizes for bandwidth.
    pub size: CollSize,
    /// Step containing its launch (HTA's iteration of a GPU event), if any.
    pub step: Option<i64>,
}

/// Everything the cross-rank analyses need from one capture: small, owned, no model.
#[derive(Clone, Debug, Default)]
pub struct RankSummary {
    /// File read.
    pub path: String,
    /// Run name from discovery.
    pub run: String,
    /// Host / worker name.
    pub host: String,
    /// Host whose clock the capture uses (`host_name` metadata, else the worker name minus a
    /// trailing `_<pid>`).
    pub clock_host: String,
    /// `distributedInfo.rank`.
    pub rank: Option<i64>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<i64>,
    /// Where the steps came from.
    pub step_source: Option<StepSource>,
    /// Steps with their parts.
    pub steps: Vec<RankStep>,
    /// Device whose parts are reported per step: the one with the most busy time.
    pub primary_device: Option<i64>,
    /// HTA's comm/comp overlap over all devices, whole capture (None without communication).
    pub comm_comp_overlap: Option<f64>,
    /// Collective kernels, by stream then start.
    pub colls: Vec<RankColl>,
    /// Names referenced by `colls`, as matched across ranks (addresses as `0x…`).
    pub names: Vec<String>,
    /// Latest end of the events HTA assigns to an iteration (host events starting in a step,
    /// device activities launched in one), ns.
    pub iter_events_end_ns: Option<i64>,
    /// File-clock ns of model time 0.
    pub clock0_ns: i64,
    /// First and last time of the capture, ns (file clock).
    pub span_ns: (i64, i64),
    /// Why loading failed.
    pub error: Option<String>,
}

fn meta(c: &Capture, key: &str) -> Option<ArgValue> {
    let k = c.strings.lookup(key)?;
    c.args.get(c.metadata, k, &c.strings)
}

/// `distributedInfo.rank` and `.world_size` of a Kineto capture.
pub fn distributed_info(c: &Capture) -> (Option<i64>, Option<i64>) {
    let Some(v) = meta(c, "distributedInfo") else {
        return (None, None);
    };
    let text = v.display(&c.strings);
    let Ok(j) = serde_json::from_str::<serde_json::Value>(&text) else {
        return (None, None);
    };
    (
        j.get("rank").and_then(serde_json::Value::as_i64),
        j.get("world_size").and_then(serde_json::Value::as_i64),
    )
}

/// The host whose clock a capture uses.
fn clock_host(c: &Capture) -> String {
    if let Some(v) = meta(c, "host_name") {
        let h = v.display(&c.strings);
        if !h.is_empty() {
            return h;
        }
    }
    let w = c.source.host.as_str();
    match w.rsplit_once('_') {
        Some((h, pid)) if !h.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) => h.into(),
        _ => w.to_string(),
    }
}

/// Summarizes a loaded capture for the cross-rank analyses.
pub fn summarize(c: &Capture, opts: &StepOptions) -> RankSummary {
    let g = streams::collect(c, &GpuOptions::default());
    let found = steps::find(c, opts);
    let parts = steps::breakdown(c, &found, opts, Some(&g));
    let clock0 = c.file_clock0_ns();
    let ns = |ps: Ps| clock0 + ps.div_euclid(1000);
    let primary = steps::primary_device(&parts).or_else(|| g.streams.first().map(|s| s.device));
    // HTA keeps only device activities launched by a host event that starts by the end of the
    // last ProfilerStep (`_filter_irrelevant_gpu_kernels(include_last_profiler_step=True)`).
    let window = (found.source == StepSource::ProfilerStep && found.steps.len() >= 2)
        .then(|| found.steps.iter().map(|s| s.end).max())
        .flatten();
    let overlap = hta_overlap(c, &g, clock0, window);
    // Names are matched across ranks: addresses read `0x…` (`analysis::names`).
    let mut names: Vec<String> = Vec::new();
    let mut name_ix: FxHashMap<crate::model::StrId, u32> = FxHashMap::default();
    let mut intern = |id: crate::model::StrId| -> u32 {
        *name_ix.entry(id).or_insert_with(|| {
            names.push(crate::analysis::names::match_name(c.strings.get(id)).into_owned());
            (names.len() - 1) as u32
        })
    };
    let step_of = |t: Ps| found.at(t).map(|k| found.steps[k].number);
    let colls: Vec<RankColl> = comms::collect(c, &g)
        .into_iter()
        .map(|k| RankColl {
            kernel: intern(k.kernel),
            group: k.group.map(&mut intern),
            kind: k.kind,
            stream: k.stream,
            start_ns: ns(k.start),
            end_ns: ns(k.end),
            seq: k.seq,
            size: k.size,
            step: k.launch.and_then(step_of),
        })
        .collect();
    // Latest end of the events HTA gives an iteration.
    let mut iter_end: Option<Ps> = None;
    if found.source != StepSource::Whole {
        for (t, tr) in c.tracks.iter().enumerate() {
            if tr.kind == TrackKind::GpuStream || tr.kind == TrackKind::Counter {
                continue;
            }
            if !steps_host(c, t) {
                continue;
            }
            for id in tr.slices.0 as usize..tr.slices.1 as usize {
                if found.at(c.slices.start[id]).is_some() {
                    let e = c.slices.end(id);
                    iter_end = Some(iter_end.map_or(e, |m| m.max(e)));
                }
            }
        }
        let a = &g.acts;
        for i in 0..a.len() {
            if a.launch[i] != NO_SLICE && found.at(g.host_span(c, a.launch[i]).0).is_some() {
                iter_end = Some(iter_end.map_or(a.end[i], |m| m.max(a.end[i])));
            }
        }
    }
    let (rank, world_size) = distributed_info(c);
    RankSummary {
        path: c.source.path.display().to_string(),
        run: c.source.run.clone(),
        host: c.source.host.clone(),
        clock_host: clock_host(c),
        rank,
        world_size,
        step_source: Some(found.source),
        steps: found
            .steps
            .iter()
            .zip(parts)
            .map(|(s, p)| RankStep {
                step: *s,
                start_ns: ns(s.start),
                input: p.input,
                devices: p.devices,
            })
            .collect(),
        primary_device: primary,
        comm_comp_overlap: overlap,
        colls,
        names,
        iter_events_end_ns: iter_end.map(ns),
        clock0_ns: clock0,
        span_ns: (ns(c.span.0), ns(c.span.1)),
        error: None,
    }
}

/// HTA's whole-capture comm/comp overlap (`get_comm_comp_overlap`): times rounded inward to
/// whole µs of the file's clock as HTA's parser does (`ceil(ts)`, `floor(ts + dur)`, in f64 µs),
/// every device merged, `|∪ comp ∩ ∪ comm| / |∪ comm|`. The rounding matters: on short NCCL
/// kernels it moves the figure by up to 2 percentage points. With `launched_by` (the end of the
/// last step), only activities whose host launch starts by then count, as in HTA.
pub fn hta_overlap(
    c: &Capture,
    g: &streams::GpuStreams,
    clock0_ns: i64,
    launched_by: Option<Ps>,
) -> Option<f64> {
    let a = &g.acts;
    let round = |ps: Ps| (ps.div_euclid(1000) + clock0_ns) as f64 / 1000.0;
    let back = |us: f64| (us as i64 * 1000 - clock0_ns) * 1000;
    let mut v: Vec<(Ps, Ps, crate::analysis::gpu::classify::KernelClass)> = (0..a.len())
        .filter(|&i| {
            launched_by.is_none_or(|w| {
                a.launch[i] != NO_SLICE && c.slices.start[a.launch[i] as usize] <= w
            })
        })
        .map(|i| {
            let ts = round(a.start[i]);
            let dur = (a.end[i] - a.start[i]).div_euclid(1000) as f64 / 1000.0;
            (back(ts.ceil()), back((ts + dur).floor()), a.class[i])
        })
        .collect();
    v.sort_by_key(|r| (r.0, r.1));
    let mut acc = BreakdownAcc::default();
    for (s, e, k) in v {
        acc.push(s, e, k);
    }
    acc.finish().comm_overlap_ratio()
}

/// Host-side tracks (not device planes).
fn steps_host(c: &Capture, t: usize) -> bool {
    !matches!(
        c.processes[c.tracks[t].process as usize].kind,
        crate::model::ProcessKind::Gpu | crate::model::ProcessKind::Tpu
    )
}
