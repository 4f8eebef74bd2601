//! `tracetui gpu`: HTA-style GPU breakdowns per device and stream (see
//! [`crate::analysis::gpu`] and docs/gpu.md).

use super::parse::parse_us;
use super::report::report;
use clap::Args;
use std::path::PathBuf;

use super::text::{self, Align, clean};
use crate::analysis::diff::{StepRange, select_steps};
use crate::analysis::gpu::{self, GpuOptions, GpuReport, scope, streams};
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::model::Capture;
use serde::Serialize;

use super::stats::ns;

pub const GPU_AFTER: &str = "\
Examples:
  tracetui gpu run/worker0.123.pt.trace.json.gz
  tracetui gpu logs/ --json | jq '.captures[].gpu[] | {device, stream, idle_ns, host_wait_ns}'
  tracetui gpu trace.json --idle-threshold-us 10 --hta

Per device and stream, HTA's definitions (docs/gpu.md): busy time split into compute /
communication / memory / other by kernel name, idle time and its breakdown into host wait, kernel
wait and other, queue length (launched, not started) and launch delay; per device the temporal
breakdown and the communication/computation overlap. --json gives ns.";

/// Arguments of `gpu`.
#[derive(Args, Debug)]
pub struct GpuArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
    /// Gaps shorter than this are kernel wait, µs
    #[arg(long, value_name = "US", default_value = "30", value_parser = parse_us)]
    pub idle_threshold_us: f64,
    /// Launches longer than this are runtime outliers, µs
    #[arg(long, value_name = "US", default_value = "50", value_parser = parse_us)]
    pub runtime_cutoff_us: f64,
    /// Launch delays longer than this are outliers, µs
    #[arg(long, value_name = "US", default_value = "100", value_parser = parse_us)]
    pub launch_delay_cutoff_us: f64,
    /// Queue length that blocks the host
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub queue_full: i64,
    /// Reproduce HTA's preprocessing (for parity checks): JSON times rounded inward to whole µs,
    /// only activities launched before the last ProfilerStep
    #[arg(long)]
    pub hta: bool,
    /// Only the device work of these steps (`10`, `10..20`, `10..=19`): activities launched by a
    /// host slice starting in a step, as `diff --steps` selects
    #[arg(long, value_name = "RANGE", value_parser = crate::analysis::diff::StepRange::parse)]
    pub steps: Option<crate::analysis::diff::StepRange>,
}

pub fn cmd_gpu(a: &GpuArgs) -> i32 {
    let ps = |us: f64| (us * 1e6).round() as i64;
    let opts = crate::analysis::gpu::GpuOptions {
        idle_threshold: ps(a.idle_threshold_us),
        runtime_cutoff: ps(a.runtime_cutoff_us),
        launch_delay_cutoff: ps(a.launch_delay_cutoff_us),
        queue_full: a.queue_full,
        hta_compat: a.hta,
    };
    let steps = a.steps;
    report(
        &a.path,
        a.json,
        |cap, loaded| capture_gpu(cap, loaded, &opts, steps),
        render_text,
        |s| (s.path.as_str(), s.error.as_ref()),
    )
}

/// One stream of `gpu --json` (`captures[].gpu[]`; shape documented in docs/cli.md).
#[derive(Serialize, Clone, Debug)]
pub struct StreamJson {
    /// Device number (Kineto pid, XPlane `/device:GPU:N`).
    pub device: i64,
    /// Stream number (Kineto tid / `args.stream`, XPlane `Stream #N`).
    pub stream: i64,
    /// Σ |∪ activities|, ns.
    pub busy_ns: i64,
    /// |∪ compute kernels|, ns.
    pub compute_ns: i64,
    /// Communication not overlapped by compute, ns.
    pub communication_ns: i64,
    /// Memory copies/sets not overlapped by compute or communication, ns.
    pub memory_ns: i64,
    /// Remaining busy time, ns.
    pub other_ns: i64,
    /// First start to last end minus busy, ns.
    pub idle_ns: i64,
    /// Idle breakdown (HTA rules): the host had not launched the next activity yet, ns.
    pub host_wait_ns: i64,
    /// Gaps below the threshold, ns.
    pub kernel_wait_ns: i64,
    /// Other gaps, ns.
    pub idle_other_ns: i64,
    /// Largest queue length (launched, not started).
    pub queue_len_max: Option<i64>,
    /// Mean queue length over change points (HTA's describe()).
    pub queue_len_mean: Option<f64>,
    /// Median launch delay, ns.
    pub launch_delay_p50_ns: Option<i64>,
    /// 99th percentile launch delay, ns.
    pub launch_delay_p99_ns: Option<i64>,
    /// Device display name.
    pub device_name: String,
    /// Stream display name.
    pub stream_name: String,
    /// GPU activities on the stream.
    pub activities: u64,
    /// Activities without a host launch (no correlation partner).
    pub unlinked: u64,
    /// First start and last end, ns from the capture origin.
    pub window_ns: [i64; 2],
    /// Activities whose launch is in HTA's launch-statistics set.
    pub launched: u64,
    /// Mean CPU runtime of those launches, ns.
    pub launch_cpu_mean_ns: Option<i64>,
    /// Short kernels (runtime ≤ cut-off and kernel shorter than its launch).
    pub short_kernels: u64,
    /// Launches whose runtime exceeds the cut-off.
    pub runtime_outliers: u64,
    /// Launches whose delay exceeds the cut-off.
    pub launch_delay_outliers: u64,
    /// Time-weighted mean queue length.
    pub queue_len_time_mean: Option<f64>,
    /// Time with a full queue (≥ `--queue-full`), ns.
    pub queue_blocked_ns: i64,
    /// That time over the capture span.
    pub queue_blocked_ratio: f64,
}

/// One device of `gpu --json` (`captures[].devices[]`): HTA's per-rank figures.
#[derive(Serialize, Clone, Debug)]
pub struct DeviceJson {
    /// Device number.
    pub device: i64,
    /// Device display name.
    pub device_name: String,
    /// Streams with activities.
    pub streams: u64,
    /// First activity start to last activity end over all streams, ns: the analysed window
    /// (not kernel time; idle = window − busy).
    pub window_ns: i64,
    /// The same window under HTA's name (`kernel_time`), ns.
    pub kernel_time_ns: i64,
    /// Busy time only activities without a launch in the file account for (work launched
    /// before host tracing started), ns; `busy_ns` − this = busy time of the file's launches.
    pub unlinked_busy_ns: i64,
    /// |∪ all activities|, ns.
    pub busy_ns: i64,
    /// |∪ compute|, ns.
    pub compute_ns: i64,
    /// Busy minus compute (HTA `non_compute_time`), ns.
    pub non_compute_ns: i64,
    /// Communication not overlapped by compute, ns.
    pub communication_ns: i64,
    /// Memory not overlapped by compute or communication, ns.
    pub memory_ns: i64,
    /// Remaining busy time, ns.
    pub other_ns: i64,
    /// kernel_time − busy, ns.
    pub idle_ns: i64,
    /// |∪ communication|, ns.
    pub communication_total_ns: i64,
    /// |∪ compute ∩ ∪ communication| / |∪ communication| (null without communication).
    pub comm_overlap: Option<f64>,
}

/// One capture of `gpu --json`.
#[derive(Serialize, Clone, Debug)]
pub struct CaptureGpu {
    /// File read.
    pub path: String,
    /// Run name.
    pub run: String,
    /// Host / worker.
    pub host: String,
    /// Why loading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Per stream.
    pub gpu: Vec<StreamJson>,
    /// Per device.
    pub devices: Vec<DeviceJson>,
    /// Host slices with a correlation id.
    pub host_correlated: u64,
    /// Host slices ignored because an earlier one had the same correlation id.
    pub duplicate_correlations: u64,
    /// Activities left out by `--hta`'s last-step window.
    pub hta_window_dropped: u64,
    /// With `--steps`: the range asked and the steps it matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<StepsJson>,
}

/// The step scope of `gpu --steps`.
#[derive(Serialize, Clone, Debug)]
pub struct StepsJson {
    /// The range as given (`10..20`).
    pub range: String,
    /// Step numbers matched.
    pub numbers: Vec<i64>,
    /// Device activities of the file left out (not launched in those steps).
    pub activities_left_out: u64,
}

/// Integer ns of a ps figure that is a mean or percentile (rounded to nearest).
fn opt_ns(v: Option<f64>) -> Option<i64> {
    v.map(|p| (p / 1000.0).round() as i64)
}

/// Converts a report to the JSON shape.
pub fn to_json(cap: &CaptureFile, r: &GpuReport) -> CaptureGpu {
    let gpu = r
        .streams
        .iter()
        .map(|s| {
            let b = &s.breakdown;
            let q = (s.queue.points > 0).then_some(&s.queue);
            StreamJson {
                device: s.info.device,
                stream: s.info.stream,
                busy_ns: ns(b.busy),
                compute_ns: ns(b.compute),
                communication_ns: ns(b.communication),
                memory_ns: ns(b.memory),
                other_ns: ns(b.other),
                idle_ns: ns(b.idle()),
                host_wait_ns: ns(s.idle.host_wait),
                kernel_wait_ns: ns(s.idle.kernel_wait),
                idle_other_ns: ns(s.idle.other),
                queue_len_max: q.map(|q| q.max),
                queue_len_mean: q.map(|q| q.mean),
                launch_delay_p50_ns: opt_ns(s.launch.delay_p50),
                launch_delay_p99_ns: opt_ns(s.launch.delay_p99),
                device_name: s.info.device_name.clone(),
                stream_name: s.info.stream_name.clone(),
                activities: s.activities,
                unlinked: s.unlinked,
                window_ns: [ns(b.window.0), ns(b.window.1)],
                launched: s.launch.launched,
                launch_cpu_mean_ns: opt_ns(s.launch.cpu_mean),
                short_kernels: s.launch.short,
                runtime_outliers: s.launch.runtime_outliers,
                launch_delay_outliers: s.launch.delay_outliers,
                queue_len_time_mean: q.map(|q| q.time_mean),
                queue_blocked_ns: ns(s.queue.blocked),
                queue_blocked_ratio: if r.span > 0 {
                    s.queue.blocked as f64 / r.span as f64
                } else {
                    0.0
                },
            }
        })
        .collect();
    let devices = r
        .devices
        .iter()
        .map(|d| {
            let b = &d.breakdown;
            DeviceJson {
                device: d.device,
                device_name: d.device_name.clone(),
                streams: d.streams,
                window_ns: ns(b.window.1 - b.window.0),
                kernel_time_ns: ns(b.window.1 - b.window.0),
                unlinked_busy_ns: ns(d.unlinked_busy),
                busy_ns: ns(b.busy),
                compute_ns: ns(b.compute),
                non_compute_ns: ns(b.non_compute()),
                communication_ns: ns(b.communication),
                memory_ns: ns(b.memory),
                other_ns: ns(b.other),
                idle_ns: ns(b.idle()),
                communication_total_ns: ns(b.communication_total),
                comm_overlap: b.comm_overlap_ratio(),
            }
        })
        .collect();
    CaptureGpu {
        path: cap.path.display().to_string(),
        run: cap.run.clone(),
        host: cap.host.clone(),
        error: None,
        gpu,
        devices,
        host_correlated: r.host_correlated,
        duplicate_correlations: r.duplicate_corr,
        hta_window_dropped: r.window_dropped,
        steps: None,
    }
}

/// Loads → analyses → JSON shape for one capture.
pub fn capture_gpu(
    cap: &CaptureFile,
    loaded: Result<std::sync::Arc<Capture>, LoadError>,
    opts: &GpuOptions,
    steps: Option<StepRange>,
) -> CaptureGpu {
    let failed = |e: String| CaptureGpu {
        path: cap.path.display().to_string(),
        run: cap.run.clone(),
        host: cap.host.clone(),
        error: Some(e),
        gpu: Vec::new(),
        devices: Vec::new(),
        host_correlated: 0,
        duplicate_correlations: 0,
        hta_window_dropped: 0,
        steps: None,
    };
    let c = match loaded {
        Ok(c) => c,
        Err(e) => return failed(e.to_string()),
    };
    let g = streams::collect(&c, opts);
    let Some(range) = steps else {
        return to_json(cap, &gpu::analyze_streams(&c, &g, opts));
    };
    // The rule of `diff --steps` (`--hta`: HTA's, which leaves unlinked work out).
    let (found, keep) = match select_steps(&c, range, opts.hta_compat) {
        Ok(v) => v,
        Err(e) => return failed(e),
    };
    let kept = scope::retain(&g, |id| keep.get(id as usize).copied().unwrap_or(false));
    let mut out = to_json(cap, &gpu::analyze_streams(&c, &kept, opts));
    out.steps = Some(StepsJson {
        range: range.to_string(),
        numbers: found.iter().map(|s| s.number).collect(),
        activities_left_out: (g.acts.len() - kept.acts.len()) as u64,
    });
    out
}

/// Renders one capture for people.
pub fn render_text(s: &CaptureGpu) -> String {
    let mut o = match text::capture_head(&s.path, &s.run, &s.host, "", s.error.as_ref()) {
        Ok(o) => o,
        Err(failed) => return failed,
    };
    if s.gpu.is_empty() {
        o.push_str("   no GPU activity (no GPU stream with kernels, copies or sets)\n");
        return o;
    }
    let d = |v: i64| text::dur(v as f64 * 1000.0);
    let od = |v: Option<i64>| v.map_or("-".into(), d);
    let rows: Vec<Vec<String>> = s
        .gpu
        .iter()
        .map(|r| {
            vec![
                r.device.to_string(),
                format!("{} {}", r.stream, text::fit(&clean(&r.stream_name), 24)),
                r.activities.to_string(),
                d(r.busy_ns),
                text::pct(r.compute_ns, r.busy_ns, 1),
                text::pct(r.communication_ns, r.busy_ns, 1),
                text::pct(r.memory_ns, r.busy_ns, 1),
                text::pct(r.other_ns, r.busy_ns, 1),
                d(r.idle_ns),
                d(r.host_wait_ns),
                d(r.kernel_wait_ns),
                d(r.idle_other_ns),
                r.queue_len_max.map_or("-".into(), |v| v.to_string()),
                r.queue_len_mean.map_or("-".into(), |v| format!("{v:.2}")),
                od(r.launch_delay_p50_ns),
                od(r.launch_delay_p99_ns),
            ]
        })
        .collect();
    o.push_str(&text::table(
        "   ",
        &[
            ("DEV", Align::Right),
            ("STREAM", Align::Left),
            ("ACTS", Align::Right),
            ("BUSY", Align::Right),
            ("COMP", Align::Right),
            ("COMM", Align::Right),
            ("MEM", Align::Right),
            ("OTHER", Align::Right),
            ("IDLE", Align::Right),
            ("HOST WAIT", Align::Right),
            ("KERN WAIT", Align::Right),
            ("IDLE OTHER", Align::Right),
            ("Q MAX", Align::Right),
            ("Q MEAN", Align::Right),
            ("DELAY P50", Align::Right),
            ("DELAY P99", Align::Right),
        ],
        &rows,
    ));
    let drows: Vec<Vec<String>> = s
        .devices
        .iter()
        .map(|r| {
            vec![
                format!("{} {}", r.device, text::fit(&clean(&r.device_name), 24)),
                r.streams.to_string(),
                d(r.window_ns),
                d(r.busy_ns),
                text::pct(r.idle_ns, r.window_ns, 1),
                text::pct(r.compute_ns, r.window_ns, 1),
                text::pct(r.non_compute_ns, r.window_ns, 1),
                r.comm_overlap
                    .map_or("-".into(), |v| format!("{:.1}%", 100.0 * v)),
            ]
        })
        .collect();
    o.push('\n');
    o.push_str(&text::table(
        "   ",
        &[
            ("DEVICE", Align::Left),
            ("STREAMS", Align::Right),
            ("WINDOW", Align::Right),
            ("BUSY", Align::Right),
            ("IDLE %WIN", Align::Right),
            ("COMPUTE %WIN", Align::Right),
            ("NON-COMPUTE %WIN", Align::Right),
            ("COMM OVERLAP", Align::Right),
        ],
        &drows,
    ));
    o.push_str(
        "   WINDOW: first activity start to last activity end (HTA's kernel_time); %WIN: share of \
         it; IDLE = WINDOW − BUSY\n",
    );
    // HTA's idle breakdown takes each gap from the previous activity's end: activities that
    // overlap on a stream (graph or command-buffer nodes) give negative gaps, counted as HTA does.
    let negative: Vec<String> = s
        .gpu
        .iter()
        .filter(|r| r.kernel_wait_ns < 0 || r.host_wait_ns < 0 || r.idle_other_ns < 0)
        .map(|r| format!("device {} stream {}", r.device, r.stream))
        .collect();
    if !negative.is_empty() {
        o.push_str(&format!(
            "   negative HOST / KERN WAIT / IDLE OTHER on {}: activities overlap on the stream, \
             and HTA's breakdown counts each gap from the previous activity's end, so an overlap \
             is a negative gap (docs/gpu.md); IDLE is not affected\n",
            negative.join(", ")
        ));
    }
    for r in &s.devices {
        if r.unlinked_busy_ns > 0 {
            o.push_str(&format!(
                "   device {}: {} of the {} busy is device work whose launch is not in the file \
                 (launched before host tracing started); {} is launched in the file\n",
                r.device,
                d(r.unlinked_busy_ns),
                d(r.busy_ns),
                d(r.busy_ns - r.unlinked_busy_ns)
            ));
        }
    }
    if let Some(st) = &s.steps {
        o.push_str(&format!(
            "   --steps {}: steps {}; device work launched in them ({} activities of the file left out)\n",
            st.range,
            st.numbers
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            st.activities_left_out
        ));
    }
    let launched: u64 = s.gpu.iter().map(|r| r.launched).sum();
    let unlinked: u64 = s.gpu.iter().map(|r| r.unlinked).sum();
    let acts: u64 = s.gpu.iter().map(|r| r.activities).sum();
    let sum = |f: fn(&StreamJson) -> u64| s.gpu.iter().map(f).sum::<u64>();
    if s.duplicate_correlations > 0 {
        o.push_str(&format!(
            "   {} host slices reuse a correlation id already taken (the first is the launch)\n",
            s.duplicate_correlations
        ));
    }
    if s.hta_window_dropped > 0 {
        o.push_str(&format!(
            "   --hta: {} activities not launched before the last ProfilerStep left out\n",
            s.hta_window_dropped
        ));
    }
    o.push_str(&format!(
        "   launches: {launched} in HTA's statistics set ({} short kernels, {} runtime outliers, {} \
         launch-delay outliers); {unlinked} of {acts} activities have no host launch\n",
        sum(|r| r.short_kernels),
        sum(|r| r.runtime_outliers),
        sum(|r| r.launch_delay_outliers),
    ));
    o
}
