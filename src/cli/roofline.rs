//! `tracetui roofline`: FLOP/s and bytes/s per op against the device's peaks (see
//! [`crate::analysis::roofline`] and docs/roofline.md).

use super::report::report;
use super::stats::ns;
use super::text::{self, Align, clean};
use crate::analysis::roofline::{self, Roofline, Row};
use crate::discover::CaptureFile;
use crate::formats::LoadError;
use crate::model::Capture;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

pub const ROOFLINE_AFTER: &str = "\
Examples:
  tracetui roofline run/worker0.123.pt.trace.json.gz
  tracetui roofline logs/ --json | jq '.captures[].rows[] | {name, input_dims, tflops, peak_pct}'

Per (op, input dims, dtype): FLOPs and bytes per call from the recorded shapes (record_shapes=True;
GEMM, conv, attention fwd/bwd, elementwise, reduction, norm, softmax, copy: TraceLens's formulas),
device time = the kernels launched by the op or below it, achieved TFLOP/s and TB/s, arithmetic
intensity, % of the roof that applies (compute or memory) from the device's published peaks, sorted
by the time running at the roof would save. Kernel time under no modelled op is counted and its top 5
listed. Formulas and the peaks table with sources: docs/roofline.md.";

/// Arguments of `roofline`.
#[derive(Args, Debug)]
pub struct RooflineArgs {
    /// Log dir or capture file
    pub path: PathBuf,
    /// Print JSON (stable shape, see docs/cli.md) instead of text
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_roofline(a: &RooflineArgs) -> i32 {
    report(&a.path, a.json, capture_roofline, render_text, |s| {
        (s.path.as_str(), s.error.as_ref())
    })
}

/// The device of `roofline --json`.
#[derive(Serialize, Clone, Debug)]
pub struct DeviceJson {
    /// Name as reported.
    pub name: String,
    /// `deviceProperties` or `xplane`.
    pub source: String,
    /// Compute capability.
    pub compute_capability: Option<String>,
    /// SMs.
    pub sms: Option<i64>,
    /// The peaks-table entry, null when the device is not in it.
    pub peaks: Option<roofline::peaks::Peaks>,
}

/// One row of `roofline --json`.
#[derive(Serialize, Clone, Debug)]
pub struct RowJson {
    pub name: String,
    pub input_dims: String,
    pub dtype: String,
    pub concrete_inputs: String,
    pub family: String,
    pub count: u64,
    /// Per call.
    pub flops: f64,
    /// Per call; null when a type's size is unknown.
    pub bytes: Option<f64>,
    /// Σ kernel time of the calls.
    pub device_ns: i64,
    pub tflops: Option<f64>,
    pub tbytes_per_s: Option<f64>,
    /// FLOP per byte.
    pub intensity: Option<f64>,
    /// The precision whose peak applies and whether on matrix units.
    pub precision: Option<String>,
    pub matrix: bool,
    pub peak_tflops: Option<f64>,
    pub peak_tbytes_per_s: Option<f64>,
    pub bound: Option<roofline::Bound>,
    pub peak_pct: Option<f64>,
    pub time_at_peak_ns: Option<f64>,
    pub saved_ns: f64,
}

impl RowJson {
    fn new(r: &Row) -> RowJson {
        RowJson {
            name: r.name.clone(),
            input_dims: r.input_dims.clone(),
            dtype: r.dtype.clone(),
            concrete_inputs: r.concrete.clone(),
            family: r.family.name().to_string(),
            count: r.count,
            flops: r.cost.flops,
            bytes: r.cost.bytes,
            device_ns: ns(r.device_ps),
            tflops: r.tflops(),
            tbytes_per_s: r.tbytes_per_s(),
            intensity: r.intensity(),
            precision: r.precision().map(|p| p.name().to_string()),
            matrix: r.cost.matrix,
            peak_tflops: r.peak_tflops,
            peak_tbytes_per_s: r.peak_tbps,
            bound: r.bound(),
            peak_pct: r.peak_pct(),
            time_at_peak_ns: r.time_at_peak_ps().map(|t| t / 1000.0),
            saved_ns: r.saved_ps() / 1000.0,
        }
    }
}

/// Device time under no modelled op, for one kernel name.
#[derive(Serialize, Clone, Debug)]
pub struct UnmodelledJson {
    pub name: String,
    pub device_ns: i64,
    pub count: u64,
}

/// Modelled op calls whose inputs could not be costed.
#[derive(Serialize, Clone, Debug)]
pub struct UncostedJson {
    pub name: String,
    pub reason: String,
    pub calls: u64,
}

/// One capture of `roofline --json`.
#[derive(Serialize, Clone, Debug, Default)]
pub struct CaptureRoofline {
    pub path: String,
    pub run: String,
    pub host: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Null when the trace names no device.
    pub device: Option<DeviceJson>,
    /// Σ durations of every kernel, copy and set.
    pub total_device_ns: i64,
    /// Σ device time of the rows.
    pub modelled_device_ns: i64,
    /// Device time under no modelled op.
    pub unmodelled_device_ns: i64,
    /// Its share of the total, %.
    pub unmodelled_pct: f64,
    /// Kernel names with unmodelled time, how many.
    pub unmodelled_kernels: usize,
    /// The 5 with most unmodelled time.
    pub unmodelled_top: Vec<UnmodelledJson>,
    pub uncosted: Vec<UncostedJson>,
    /// Modelled op calls with no device time (CPU work).
    pub no_device_calls: u64,
    /// Modelled op calls inside another modelled op (counted there).
    pub nested_calls: u64,
    /// Why nothing could be modelled, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub rows: Vec<RowJson>,
}

/// The JSON shape of one computed roofline.
pub fn of_roofline(r: &Roofline) -> CaptureRoofline {
    let total = ns(r.total_device_ps);
    let un = ns(r.unmodelled_ps());
    CaptureRoofline {
        device: r.device.as_ref().map(|d| DeviceJson {
            name: d.name.clone(),
            source: d.source.to_string(),
            compute_capability: d.compute_capability.clone(),
            sms: d.sms,
            peaks: d.peaks.copied(),
        }),
        total_device_ns: total,
        modelled_device_ns: ns(r.modelled_ps()),
        unmodelled_device_ns: un,
        unmodelled_pct: if total > 0 {
            100.0 * un as f64 / total as f64
        } else {
            0.0
        },
        unmodelled_kernels: r.unmodelled.len(),
        unmodelled_top: r
            .unmodelled
            .iter()
            .take(5)
            .map(|u| UnmodelledJson {
                name: u.name.clone(),
                device_ns: ns(u.device_ps),
                count: u.count,
            })
            .collect(),
        uncosted: r
            .uncosted
            .iter()
            .map(|(n, w, k)| UncostedJson {
                name: n.clone(),
                reason: (*w).to_string(),
                calls: *k,
            })
            .collect(),
        no_device_calls: r.no_device_calls,
        nested_calls: r.nested_calls,
        note: r.note.map(str::to_string),
        rows: r.rows.iter().map(RowJson::new).collect(),
        ..CaptureRoofline::default()
    }
}

/// Loads → roofline → JSON shape for one capture.
pub fn capture_roofline(cap: &CaptureFile, loaded: Result<Capture, LoadError>) -> CaptureRoofline {
    let mut out = match &loaded {
        Ok(c) => of_roofline(&roofline::compute(c)),
        Err(_) => CaptureRoofline::default(),
    };
    out.path = cap.path.display().to_string();
    out.run = cap.run.clone();
    out.host = cap.host.clone();
    if let Err(e) = loaded {
        out.error = Some(e.to_string());
    }
    out
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.prec$}"))
}

fn si(v: f64) -> String {
    let (d, u) = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(d, _)| v >= *d)
        .unwrap_or((1.0, ""));
    format!("{:.3}{u}", v / d).replace(".000", "")
}

/// Renders one capture for people.
pub fn render_text(s: &CaptureRoofline) -> String {
    let extra = match &s.device {
        Some(d) if d.peaks.is_some() => format!("  device {}", d.name),
        Some(d) => format!("  device {} (not in the peaks table: no %)", d.name),
        None => "  device unknown (no %)".to_string(),
    };
    let mut o = match text::capture_head(&s.path, &s.run, &s.host, &extra, s.error.as_ref()) {
        Ok(o) => o,
        Err(failed) => return failed,
    };
    let d = |v: i64| text::dur(v as f64 * 1000.0);
    if let Some(n) = &s.note {
        o.push_str(&format!("   {n}\n"));
    }
    let mut rows: Vec<Vec<String>> = s
        .rows
        .iter()
        .take(25)
        .map(|r| {
            vec![
                r.name.clone(),
                r.input_dims.clone(),
                r.dtype.clone(),
                r.count.to_string(),
                si(r.flops),
                r.bytes.map_or("-".into(), si),
                d(r.device_ns),
                opt(r.tflops, 2),
                opt(r.tbytes_per_s, 3),
                opt(r.intensity, 1),
                r.peak_pct.map_or("-".into(), |p| format!("{p:.1}%")),
                r.bound
                    .map_or("-".into(), |b| format!("{b:?}").to_lowercase()),
                d(r.saved_ns.round() as i64),
            ]
        })
        .collect();
    for r in &mut rows {
        for c in r.iter_mut() {
            *c = clean(c).into_owned();
        }
    }
    text::fit_column(&mut rows, 0, 48);
    text::fit_column(&mut rows, 1, 40);
    o.push_str(&text::table(
        "   ",
        &[
            ("OP", Align::Left),
            ("INPUT DIMS", Align::Left),
            ("DTYPE", Align::Left),
            ("CALLS", Align::Right),
            ("FLOP", Align::Right),
            ("BYTES", Align::Right),
            ("DEVICE", Align::Right),
            ("TFLOP/S", Align::Right),
            ("TB/S", Align::Right),
            ("FLOP/B", Align::Right),
            ("% PEAK", Align::Right),
            ("BOUND", Align::Right),
            ("SAVED", Align::Right),
        ],
        &rows,
    ));
    if s.rows.len() > 25 {
        o.push_str(&format!(
            "   … {} more rows (--json has all)\n",
            s.rows.len() - 25
        ));
    }
    o.push_str(&format!(
        "   {:.1}% of device time ({} of {}) not modelled",
        s.unmodelled_pct,
        d(s.unmodelled_device_ns),
        d(s.total_device_ns)
    ));
    if !s.unmodelled_top.is_empty() {
        let top: Vec<String> = s
            .unmodelled_top
            .iter()
            .map(|u| format!("{} {}", clean(&text::fit(&u.name, 60)), d(u.device_ns)))
            .collect();
        o.push_str(&format!(": top {}: {}", top.len(), top.join("; ")));
    }
    o.push('\n');
    for u in &s.uncosted {
        o.push_str(&format!(
            "   {} calls of {} not costed: {}\n",
            u.calls,
            clean(&u.name),
            u.reason
        ));
    }
    o
}
