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
    /// Whose peak `peak_tflops` is (`bf16 matrix`, `fp32 vector`).
    pub peak_of: Option<String>,
    /// What the precision was taken from (input type, HLO precision config, …).
    pub precision_from: String,
    pub peak_tbytes_per_s: Option<f64>,
    pub bound: Option<roofline::Bound>,
    pub peak_pct: Option<f64>,
    /// `peak_pct` above 100: faster than the table's peak (`peak_of`) allows, so the
    /// precision assumed or the byte model does not hold for this row.
    pub beyond_peak: bool,
    pub time_at_peak_ns: Option<f64>,
    pub saved_ns: f64,
    /// Serving ops: what else the model read (the iteration annotation of paged attention;
    /// a MoE's top-k, gating and weight type).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub context: String,
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
            peak_of: r.roof_label(),
            precision_from: r.precision_from.clone(),
            peak_tbytes_per_s: r.peak_tbps,
            bound: r.bound(),
            peak_pct: r.peak_pct(),
            beyond_peak: r.beyond_peak(),
            time_at_peak_ns: r.time_at_peak_ps().map(|t| t / 1000.0),
            saved_ns: r.saved_ps() / 1000.0,
            context: r.context.clone(),
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

/// Device time counted apart from the compute rows, for one activity / async op name.
#[derive(Serialize, Clone, Debug)]
pub struct TransferJson {
    pub name: String,
    /// `host_to_device`, `device_to_host`, `host_to_host`, `peer`, `async`.
    pub link: roofline::Link,
    pub count: u64,
    pub device_ns: i64,
    /// Σ bytes moved; null when not recorded (async ops: left out, not measured).
    pub bytes: Option<f64>,
    pub gbytes_per_s: Option<f64>,
    /// The link's peak per direction (host link), GB/s.
    pub peak_gbytes_per_s: Option<f64>,
    pub peak_pct: Option<f64>,
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
    /// Device time counted apart: host ↔ device copies and XLA async start / done ops.
    /// modelled + transfer + unmodelled = total.
    pub transfer_device_ns: i64,
    /// The device's host link (per direction) the host copies are measured against.
    pub host_link: Option<String>,
    pub host_link_gbytes_per_s: Option<f64>,
    pub transfers: Vec<TransferJson>,
    /// Its share of the total, %.
    pub unmodelled_pct: f64,
    /// Kernel names with unmodelled time, how many.
    pub unmodelled_kernels: usize,
    /// The 5 with most unmodelled time.
    pub unmodelled_top: Vec<UnmodelledJson>,
    /// Of the unmodelled time, what lies inside CUDA/HIP graphs: per graph, `count` kernels
    /// not modelled (absent without graphs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub in_graphs: Vec<UnmodelledJson>,
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
        transfer_device_ns: ns(r.transfer_ps()),
        host_link: r.host_link.map(|h| h.1.to_string()),
        host_link_gbytes_per_s: r.host_link.map(|h| h.0),
        transfers: r
            .transfers
            .iter()
            .map(|t| TransferJson {
                name: t.name.clone(),
                link: t.link,
                count: t.count,
                device_ns: ns(t.device_ps),
                bytes: t.bytes,
                gbytes_per_s: t.gbps(),
                peak_gbytes_per_s: t.peak_gbps,
                peak_pct: t.peak_pct(),
            })
            .collect(),
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
        in_graphs: r
            .in_graphs
            .iter()
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
pub fn capture_roofline(
    cap: &CaptureFile,
    loaded: Result<std::sync::Arc<Capture>, LoadError>,
) -> CaptureRoofline {
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
                r.peak_of.as_deref().map_or("-".into(), |p| {
                    p.replace("matrix", "mx").replace("vector", "vec")
                }),
                r.peak_pct.map_or("-".into(), |p| {
                    format!("{p:.1}%{}", if r.beyond_peak { "!" } else { "" })
                }),
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
            ("PEAK", Align::Left),
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
    // Serving rows: what else their model read (the iteration; the MoE's top-k and weights).
    for r in s.rows.iter().take(25).filter(|r| !r.context.is_empty()) {
        o.push_str(&format!(
            "   {}: {}\n",
            clean(&text::fit(&r.name, 40)),
            clean(&text::fit(&r.context, 140))
        ));
    }
    // Rows above their roof: say so, with the peak each was measured against.
    let beyond: Vec<&RowJson> = s.rows.iter().filter(|r| r.beyond_peak).collect();
    if !beyond.is_empty() {
        let named: Vec<String> = beyond
            .iter()
            .map(|r| {
                format!(
                    "{} {} ({} {} TFLOP/s, {} TB/s)",
                    clean(&text::fit(&r.name, 40)),
                    r.peak_pct.map_or("-".into(), |p| format!("{p:.1}%")),
                    r.peak_of.as_deref().unwrap_or("no compute peak"),
                    opt(r.peak_tflops, 1),
                    opt(r.peak_tbytes_per_s, 2)
                )
            })
            .collect();
        o.push_str(&format!(
            "   ! {} row(s) above the peak they are measured against (data served from L2, or the precision assumed or the byte model does not hold for them): {}\n",
            beyond.len(),
            named.join("; ")
        ));
    }
    // Where each row's precision comes from (one line per distinct source).
    let mut from: Vec<(String, &str, usize)> = Vec::new();
    for r in &s.rows {
        let p = r
            .peak_of
            .clone()
            .unwrap_or_else(|| "no compute peak".into());
        match from
            .iter_mut()
            .find(|f| f.0 == p && f.1 == r.precision_from)
        {
            Some(f) => f.2 += 1,
            None => from.push((p, &r.precision_from, 1)),
        }
    }
    for (p, f, n) in from.iter().take(8) {
        o.push_str(&format!("   peak {p} ← {} ({n} rows)\n", clean(f)));
    }
    if !s.transfers.is_empty() {
        let mut what = Vec::new();
        if s.transfers.iter().any(|t| t.link != roofline::Link::Async) {
            what.push(match (&s.host_link, s.host_link_gbytes_per_s) {
                (Some(l), Some(g)) => {
                    format!(
                        "host↔device copies against the host link ({l}, {g} GB/s per direction)"
                    )
                }
                _ => "host↔device copies (host link not in the peaks table: no %)".into(),
            });
        }
        let asyncs: u64 = s
            .transfers
            .iter()
            .filter(|t| t.link == roofline::Link::Async)
            .map(|t| t.count)
            .sum();
        if asyncs > 0 {
            what.push(format!(
                "{asyncs} XLA async start/done ops left out (they start or wait for a transfer: no FLOP/s, no time saved)"
            ));
        }
        o.push_str(&format!(
            "   counted apart, not compute ({} of device time): {}\n",
            d(s.transfer_device_ns),
            what.join("; ")
        ));
        let rows: Vec<Vec<String>> = s
            .transfers
            .iter()
            .take(10)
            .map(|t| {
                vec![
                    clean(&text::fit(&t.name, 48)).into_owned(),
                    t.link.name().to_string(),
                    t.count.to_string(),
                    t.bytes.map_or("-".into(), si),
                    d(t.device_ns),
                    opt(t.gbytes_per_s, 2),
                    t.peak_pct.map_or("-".into(), |p| format!("{p:.1}%")),
                ]
            })
            .collect();
        o.push_str(&text::table(
            "   ",
            &[
                ("TRANSFER", Align::Left),
                ("LINK", Align::Left),
                ("COUNT", Align::Right),
                ("BYTES", Align::Right),
                ("DEVICE", Align::Right),
                ("GB/S", Align::Right),
                ("% LINK", Align::Right),
            ],
            &rows,
        ));
        if s.transfers.len() > 10 {
            o.push_str(&format!(
                "   … {} more (--json has all)\n",
                s.transfers.len() - 10
            ));
        }
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
    for g in &s.in_graphs {
        o.push_str(&format!(
            "   of it inside graphs, {} kernels, not modelled: {} ({})\n",
            g.count,
            clean(&g.name),
            d(g.device_ns)
        ));
    }
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
