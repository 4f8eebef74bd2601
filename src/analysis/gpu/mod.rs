//! HTA-style GPU breakdowns (Holistic Trace Analysis, design/analysis.md §e), per device and
//! stream: temporal breakdown, idle breakdown, kernel launch statistics, queue length and
//! communication/computation overlap. Pure functions over a [`Capture`]; O(n log n).
//!
//! Kineto/Chrome GPU streams and XPlane `/device:GPU:N` stream lines are handled alike
//! ([`streams`]); launches are host slices with the same correlation id.

pub mod classify;
pub mod idle;
pub mod launch;
pub mod options;
pub mod overlap;
pub mod queue;
pub mod scope;
pub mod streams;
pub mod temporal;

use crate::model::{Capture, NO_SLICE, Ps};
use idle::{IdleBreakdown, IdleRow, idle_breakdown};
use launch::{LaunchCutoffs, LaunchRecord, LaunchSummary};
use queue::{QueueSeries, QueueSummary};
use streams::GpuStreams;

pub use options::GpuOptions;
use temporal::{Breakdown, BreakdownAcc};

/// Everything about one stream.
#[derive(Clone, Debug)]
pub struct StreamReport {
    /// Where it is.
    pub info: streams::StreamInfo,
    /// Activities on it.
    pub activities: u64,
    /// Activities with no host launch of the same correlation id.
    pub unlinked: u64,
    /// Temporal breakdown.
    pub breakdown: Breakdown,
    /// Idle breakdown (HTA's rules).
    pub idle: IdleBreakdown,
    /// Launch statistics.
    pub launch: LaunchSummary,
    /// Queue length change points.
    pub queue_series: QueueSeries,
    /// Their summary.
    pub queue: QueueSummary,
}

/// Everything about one device.
#[derive(Clone, Debug)]
pub struct DeviceReport {
    /// Device number.
    pub device: i64,
    /// Device name.
    pub device_name: String,
    /// Streams with activities.
    pub streams: u64,
    /// Temporal breakdown over all its streams (HTA's per-rank figures).
    pub breakdown: Breakdown,
    /// Busy time only activities without a launch in the file account for
    /// ([`scope::unlinked_busy`]); busy − this = busy time of the work launched in the file.
    pub unlinked_busy: Ps,
}

/// The GPU analyses of one capture.
#[derive(Clone, Debug, Default)]
pub struct GpuReport {
    /// Per stream, by device then stream.
    pub streams: Vec<StreamReport>,
    /// Per device.
    pub devices: Vec<DeviceReport>,
    /// Host slices with a correlation id.
    pub host_correlated: u64,
    /// Host slices ignored because an earlier one had the same correlation id.
    pub duplicate_corr: u64,
    /// Activities left out by HTA's last-step window ([`GpuOptions::hta_compat`]).
    pub window_dropped: u64,
    /// Capture span, ps (denominator of the blocked-queue ratio).
    pub span: Ps,
}

/// Runs every analysis over `c`.
pub fn analyze(c: &Capture, opts: &GpuOptions) -> GpuReport {
    let g = streams::collect(c, opts);
    analyze_streams(c, &g, opts)
}

/// Runs every analysis over already collected streams.
pub fn analyze_streams(c: &Capture, g: &GpuStreams, opts: &GpuOptions) -> GpuReport {
    let a = &g.acts;
    let cut = LaunchCutoffs {
        runtime: opts.runtime_cutoff,
        delay: opts.launch_delay_cutoff,
    };
    let mut records: Vec<LaunchRecord> = Vec::new();
    let mut delays: Vec<Ps> = Vec::new();
    let mut qscratch: Vec<(Ps, i8)> = Vec::new();
    let mut out = GpuReport {
        host_correlated: g.host_correlated as u64,
        duplicate_corr: g.duplicate_corr as u64,
        window_dropped: g.window_dropped as u64,
        span: c.span.1 - c.span.0,
        ..GpuReport::default()
    };
    for info in &g.streams {
        let rows = info.rows.0..info.rows.1;
        let mut acc = BreakdownAcc::default();
        let mut unlinked = 0u64;
        records.clear();
        for i in rows.clone() {
            acc.push(a.start[i], a.end[i], a.class[i]);
            let l = a.launch[i];
            if l == NO_SLICE {
                unlinked += 1;
            } else if g.kind_of(c, l).stats {
                records.push(LaunchRecord::new(
                    i as u32,
                    g.host_span(c, l),
                    (a.start[i], a.end[i]),
                ));
            }
        }
        let idle = idle_breakdown(
            rows.clone().filter(|&i| a.idle_set[i]).map(|i| IdleRow {
                start: a.start[i],
                end: a.end[i],
                launch_start: (a.launch[i] != NO_SLICE).then(|| g.host_span(c, a.launch[i]).0),
            }),
            opts.idle_threshold,
        );
        let queue_series = queue::series(
            rows.clone()
                .filter(|&i| a.launch[i] != NO_SLICE && g.kind_of(c, a.launch[i]).queue)
                .map(|i| (g.host_span(c, a.launch[i]).0, a.start[i])),
            &mut qscratch,
        );
        out.streams.push(StreamReport {
            info: info.clone(),
            activities: rows.len() as u64,
            unlinked,
            breakdown: acc.finish(),
            idle,
            launch: launch::summarize(&records, cut, &mut delays),
            queue: queue::summarize(&queue_series, opts.queue_full),
            queue_series,
        });
    }
    // Devices: streams are ordered by device.
    let unlinked = scope::unlinked_busy(g);
    let mut k = 0;
    while k < g.streams.len() {
        let dev = g.streams[k].device;
        let n = g.streams[k..]
            .iter()
            .take_while(|s| s.device == dev)
            .count();
        let ranges: Vec<(usize, usize)> = g.streams[k..k + n].iter().map(|s| s.rows).collect();
        out.devices.push(DeviceReport {
            device: dev,
            device_name: g.streams[k].device_name.clone(),
            streams: n as u64,
            breakdown: overlap::merged_breakdown(a, &ranges),
            unlinked_busy: unlinked.iter().find(|u| u.0 == dev).map_or(0, |u| u.1),
        });
        k += n;
    }
    out
}

/// Per-kernel launch records of every stream (activities whose launch is in the statistics
/// set), in stream then start order.
pub fn launch_records(c: &Capture, g: &GpuStreams) -> Vec<LaunchRecord> {
    let a = &g.acts;
    (0..a.len())
        .filter(|&i| a.launch[i] != NO_SLICE && g.kind_of(c, a.launch[i]).stats)
        .map(|i| {
            LaunchRecord::new(
                i as u32,
                g.host_span(c, a.launch[i]),
                (a.start[i], a.end[i]),
            )
        })
        .collect()
}

/// Queue-length step series of every stream, keyed by track id: for a timeline counter track.
pub fn queue_series(c: &Capture, opts: &GpuOptions) -> Vec<(u32, QueueSeries)> {
    analyze(c, opts)
        .streams
        .into_iter()
        .map(|s| (s.info.track, s.queue_series))
        .collect()
}
