//! How close to the hardware: FLOPs and bytes per op from the recorded shapes (a perf model
//! per op family, after AMD's TraceLens), divided by the op's device time, against the
//! device's published peaks (a roofline). See docs/roofline.md.
//!
//! Files: [`shapes`] (recorded inputs), [`dtype`], [`cost`], [`ops`] (name → model),
//! [`gemm`], [`conv`], [`sdpa`], [`memops`] (the formulas), [`peaks`] (device table;
//! [`tpu_peaks`] the TPU generations),
//! [`device`] (which device a capture ran on), [`attribute`] (device time per op), [`row`]
//! (achieved figures), [`xla`] (XPlane HLO ops).

pub mod attribute;
pub mod conv;
pub mod cost;
pub mod device;
pub mod dtype;
pub mod gemm;
pub mod inference;
pub mod memops;
pub mod moe;
pub mod ops;
pub mod paged_attention;
pub mod peak;
pub mod peaks;
pub mod row;
pub mod sdpa;
pub mod shapes;
#[cfg(test)]
mod torch_counter;
pub mod tpu_peaks;
pub mod xla;

pub use cost::{Cost, Family};
pub use device::Device;
pub use row::{Bound, Row};

use crate::model::{ArgValue, Capture, Category, NO_SLICE, Ps, StrId};
use rustc_hash::FxHashMap;

/// Device time no model covers, for one activity name.
#[derive(Clone, Debug, PartialEq)]
pub struct Unmodelled {
    /// Kernel / copy name (raw; sanitise before display).
    pub name: String,
    /// Σ durations, ps.
    pub device_ps: Ps,
    /// Activities.
    pub count: u64,
}

/// The link a data transfer uses, when it is not the device's own memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Link {
    /// Host memory → device (PCIe or the device's host link).
    HostToDevice,
    /// Device → host memory.
    DeviceToHost,
    /// Host → host, staged by the driver.
    HostToHost,
    /// Device → another device (NVLink / PCIe peer).
    Peer,
    /// An XLA async start / done op (`copy-start`, `all-gather-done`, …): it starts or waits
    /// for a transfer, it does not compute.
    Async,
}

impl Link {
    /// Short name for people.
    pub fn name(self) -> &'static str {
        match self {
            Link::HostToDevice => "host→device",
            Link::DeviceToHost => "device→host",
            Link::HostToHost => "host→host",
            Link::Peer => "peer",
            Link::Async => "async start/done",
        }
    }
}

/// The link of a memcpy activity by its name (Kineto `Memcpy HtoD (Pinned -> Device)`, XPlane
/// `MemcpyH2D`, …); `None` for a copy within the device's memory (DtoD), which HBM bounds.
pub fn copy_link(name: &str) -> Option<Link> {
    let n: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let has = |ks: &[&str]| ks.iter().any(|k| n.contains(k));
    if has(&["htod", "h2d", "hosttodevice"]) {
        Some(Link::HostToDevice)
    } else if has(&["dtoh", "d2h", "devicetohost"]) {
        Some(Link::DeviceToHost)
    } else if has(&["htoh", "h2h"]) {
        Some(Link::HostToHost)
    } else if has(&["ptop", "p2p", "peer"]) {
        Some(Link::Peer)
    } else {
        None
    }
}

/// True for an XLA async start / done / update op name (`copy-start.4`, `all-gather-done`,
/// `send-done.1`, `async-update`): the halves of a transfer the device runs beside compute.
pub fn is_async_half(name: &str) -> bool {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    base.ends_with("-start")
        || base.ends_with("-done")
        || base.ends_with("-update")
        || matches!(base, "send" | "recv")
}

/// Device time that moves data over a link other than the device's memory, counted apart
/// from the compute table: per activity (or async op) name.
#[derive(Clone, Debug, PartialEq)]
pub struct Transfer {
    /// Activity / HLO op name (raw; sanitise before display). Async ops: the name without
    /// its `.N` suffix.
    pub name: String,
    /// The link.
    pub link: Link,
    /// Activities.
    pub count: u64,
    /// Σ durations, ps.
    pub device_ps: Ps,
    /// Σ bytes moved (the activities' `bytes`, an async op's `bytes_accessed`); `None` when
    /// not recorded.
    pub bytes: Option<f64>,
    /// The link's peak per direction, GB/s, when the device table knows it.
    pub peak_gbps: Option<f64>,
}

impl Transfer {
    /// Achieved GB/s; `None` for async start / done ops (a start lasts a few cycles and a
    /// done only waits: their bytes over their time is no rate).
    pub fn gbps(&self) -> Option<f64> {
        if self.link == Link::Async {
            return None;
        }
        let b = self.bytes?;
        (self.device_ps > 0).then(|| b / (self.device_ps as f64 * 1e-12) / 1e9)
    }

    /// Achieved share of the link's peak, %.
    pub fn peak_pct(&self) -> Option<f64> {
        Some(100.0 * self.gbps()? / self.peak_gbps.filter(|&p| p > 0.0)?)
    }
}

/// The roofline of one capture.
#[derive(Clone, Debug, Default)]
pub struct Roofline {
    /// The device, when the capture says which.
    pub device: Option<Device>,
    /// One row per (op, input dims, types, concrete inputs) with device time.
    pub rows: Vec<Row>,
    /// Σ durations of all device activities, ps.
    pub total_device_ps: Ps,
    /// Device time under no modelled op, per activity name, most first.
    pub unmodelled: Vec<Unmodelled>,
    /// Host ↔ device copies (measured against the host link) and XLA async start / done ops
    /// (left out): device time counted apart from the rows, per name, most first. Σ rows +
    /// Σ transfers + Σ unmodelled = the total.
    pub transfers: Vec<Transfer>,
    /// The device's host link per direction: (GB/s, what it is), when the table knows it.
    pub host_link: Option<(f64, &'static str)>,
    /// Calls of modelled ops whose inputs could not be costed: (op name, reason, calls).
    pub uncosted: Vec<(String, &'static str, u64)>,
    /// Calls of modelled ops without device time (CPU work).
    pub no_device_calls: u64,
    /// Calls of modelled ops left to an enclosing modelled op (its time includes theirs).
    pub nested_calls: u64,
    /// Why nothing could be modelled, when that is known.
    pub note: Option<&'static str>,
    /// Of the unmodelled time, what lies inside CUDA/HIP graph launches: per graph
    /// (`graph (N kernels) @ host op`, [`crate::analysis::graphs`]), the activities under no
    /// modelled op (`count`) and their time; part of `unmodelled`, not added to it.
    pub in_graphs: Vec<Unmodelled>,
}

/// The note of an XPlane capture without cost stats.
pub const NOTE_NO_XLA_COSTS: &str = "the HLO ops carry no flops / bytes_accessed stats and no HLO module of the capture names them (XProf derives the costs from those modules)";
/// The note of an XPlane capture whose op costs come from the HLO cost model.
pub const NOTE_HLO_COSTS: &str = "FLOPs and bytes from the HLO modules of /host:metadata (XLA's GPU cost analysis, as XProf); XLA Ops without a module or a modelled opcode are not modelled; an elementwise op's FLOPs are XLA's cycle-weighted counts (an f32 exp counts 86), so a vector fusion can read above the FP32 peak";
/// The note of a PyTorch capture without shapes.
pub const NOTE_NO_SHAPES: &str = "no op records its input shapes: profile with record_shapes=True";

impl Roofline {
    /// Σ device time of the rows, ps.
    pub fn modelled_ps(&self) -> Ps {
        self.rows.iter().map(|r| r.device_ps).sum()
    }
    /// Σ device time not modelled, ps.
    pub fn unmodelled_ps(&self) -> Ps {
        self.unmodelled.iter().map(|u| u.device_ps).sum()
    }
    /// Σ device time of the transfers counted apart, ps.
    pub fn transfer_ps(&self) -> Ps {
        self.transfers.iter().map(|t| t.device_ps).sum()
    }
}

/// The activities of graph launches under no modelled op (the slices `selected`, sorted), per
/// graph; `apart` leaves activities out as [`attribute::uncovered`] does.
fn graphs_unmodelled(
    c: &Capture,
    selected: &[u32],
    apart: impl Fn(usize) -> bool,
) -> Vec<Unmodelled> {
    let g = crate::analysis::graphs::GraphLaunches::of(c);
    if g.is_empty() {
        return Vec::new();
    }
    let s = &c.slices;
    let mut out: Vec<Unmodelled> = Vec::new();
    for gr in g.groups(c) {
        let mut u = Unmodelled {
            name: gr.label(),
            device_ps: 0,
            count: 0,
        };
        for &li in &gr.launches {
            let Some(l) = g.launches.get(li as usize) else {
                continue;
            };
            let mut p = l.launch;
            let mut covered = false;
            while p != NO_SLICE && (p as usize) < s.len() {
                if selected.binary_search(&p).is_ok() {
                    covered = true;
                    break;
                }
                p = s.parent[p as usize];
            }
            if covered {
                continue;
            }
            for &k in g.kernels_of(l) {
                if s.kind(k as usize).is_activity() && !apart(k as usize) {
                    u.device_ps += s.dur[k as usize];
                    u.count += 1;
                }
            }
        }
        if u.count > 0 {
            out.push(u);
        }
    }
    out.sort_by(|a, b| b.device_ps.cmp(&a.device_ps).then(a.name.cmp(&b.name)));
    out
}

/// Transfers summed per (name, link), most time first; `bytes_of` gives an activity's bytes.
fn sum_transfers(
    items: impl Iterator<Item = (String, Link, Ps, Option<f64>)>,
    host_link: Option<(f64, &'static str)>,
) -> Vec<Transfer> {
    let mut by: FxHashMap<(String, Link), Transfer> = FxHashMap::default();
    for (name, link, ps, bytes) in items {
        let t = by.entry((name.clone(), link)).or_insert_with(|| Transfer {
            name,
            link,
            count: 0,
            device_ps: 0,
            bytes: Some(0.0),
            peak_gbps: matches!(link, Link::HostToDevice | Link::DeviceToHost)
                .then_some(host_link.map(|h| h.0))
                .flatten(),
        });
        t.count += 1;
        t.device_ps += ps;
        t.bytes = t.bytes.zip(bytes).map(|(a, b)| a + b);
    }
    let mut v: Vec<Transfer> = by.into_values().collect();
    v.sort_by(|a, b| {
        b.device_ps
            .cmp(&a.device_ps)
            .then(a.name.cmp(&b.name))
            .then(a.link.cmp(&b.link))
    });
    v
}

/// True for a kernel that runs fp32 data on TF32 tensor cores, by its name: cuBLAS / cuDNN
/// `…tf32…` (`sm80_xmma_gemm_f32f32_tf32f32_f32…`, `ampere_tf32_s1688gemm…`) and CUTLASS
/// single-precision tensor-op GEMMs (`cutlass_80_tensorop_s1688gemm…`).
pub fn is_tf32_kernel(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("tf32") || n.contains("tensorop_s") || n.contains("_s1688") || n.contains("_s16816")
}

/// True for a cuDNN convolution kernel that does fewer multiply-adds than the direct
/// convolution the model counts (Winograd, FFT): its row can read above the compute peak.
pub fn is_fast_conv_kernel(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("winograd") || n.contains("fft")
}

/// What the kernels say about a row's model: the TF32 setting (an fp32 matrix row whose calls
/// launched a TF32 kernel, [`is_tf32_kernel`]: `allow_tf32` on, measured against the TF32
/// peak) and convolutions run as Winograd / FFT ([`is_fast_conv_kernel`]: fewer FLOPs than
/// counted, said in the row's precision source).
fn read_kernels(c: &Capture, rows: &mut [Row]) {
    let mut row_of: FxHashMap<u32, usize> = FxHashMap::default();
    for (k, r) in rows.iter().enumerate() {
        if r.cost.matrix {
            row_of.extend(r.slices.iter().map(|&id| (id, k)));
        }
    }
    if row_of.is_empty() {
        return;
    }
    let s = &c.slices;
    let by_corr = crate::analysis::stats::tree::launch_by_corr(c);
    let (mut tf32, mut fast): (FxHashMap<usize, String>, FxHashMap<usize, String>) =
        Default::default();
    for i in 0..s.len() {
        if s.kind(i) != Category::Kernel {
            continue;
        }
        let name = c.strings.get(s.name[i]);
        let (t, f) = (is_tf32_kernel(name), is_fast_conv_kernel(name));
        if !t && !f {
            continue;
        }
        let Some(&l) = by_corr.get(&s.corr(i)) else {
            continue;
        };
        let mut p = l;
        while p != NO_SLICE {
            if let Some(&k) = row_of.get(&p) {
                let into = if t { &mut tf32 } else { &mut fast };
                into.entry(k)
                    .or_insert_with(|| name.chars().take(48).collect());
                break;
            }
            p = s.parent[p as usize];
        }
    }
    for (k, kernel) in tf32 {
        let r = &mut rows[k];
        if r.cost.precision == Some(dtype::Precision::Fp32) {
            r.cost.precision = Some(dtype::Precision::Tf32);
            r.precision_from = format!(
                "input type {}; its kernels run TF32 ({kernel}…): allow_tf32 on",
                r.dtype
            );
        }
    }
    for (k, kernel) in fast {
        let r = &mut rows[k];
        r.precision_from.push_str(&format!(
            "; runs as Winograd / FFT ({kernel}…): fewer FLOPs than the direct convolution counted"
        ));
    }
}

/// Where a PyTorch row's precision comes from, for people.
fn torch_precision_from(dtype: &str, cost: &Cost) -> String {
    if dtype.is_empty() {
        return "no input type with a precision: no compute peak".into();
    }
    match (cost.precision, cost.matrix) {
        (Some(dtype::Precision::Fp32), true) => {
            format!("input type {dtype}; no TF32 kernel ran (allow_tf32 off): fp32 peak")
        }
        (Some(_), true) => format!("input type {dtype} (after autocast)"),
        (Some(_), false) => format!("input type {dtype}; vector op: fp32 vector peak"),
        (None, _) => format!("input type {dtype}: no compute peak"),
    }
}

/// Sets the device's peaks on the rows and sorts them by the time saved at the roof.
fn finish_rows(out: &mut Roofline) {
    let peaks = out.device.as_ref().and_then(|d| d.peaks);
    for r in &mut out.rows {
        r.set_peaks(peaks);
    }
    out.rows.sort_by(|a, b| {
        b.saved_ps()
            .total_cmp(&a.saved_ps())
            .then(b.device_ps.cmp(&a.device_ps))
            .then(a.name.cmp(&b.name))
            .then(a.input_dims.cmp(&b.input_dims))
    });
}

struct ArgKeys {
    dims: Option<StrId>,
    types: Option<StrId>,
    concrete: Option<StrId>,
}

fn text(v: ArgValue) -> Option<StrId> {
    match v {
        ArgValue::Str(s) | ArgValue::Json(s) => Some(s),
        _ => None,
    }
}

/// Computes the roofline of a capture: PyTorch ops from their recorded shapes, or XPlane HLO
/// ops from XLA's own cost stats ([`xla`]).
pub fn compute(c: &Capture) -> Roofline {
    if let Some(xla::Collected {
        rows,
        other,
        total,
        from_hlo,
        apart,
        ..
    }) = xla::collect(c)
    {
        let device = device::detect(c);
        let host_link = device.as_ref().and_then(|d| d.peaks?.host_link());
        let mut out = Roofline {
            device,
            rows,
            total_device_ps: total,
            note: from_hlo.then_some(NOTE_HLO_COSTS),
            host_link,
            transfers: sum_transfers(
                apart.into_iter().map(|(n, l, d, b)| {
                    let n = c.strings.get(n);
                    let n = if l == Link::Async {
                        n.trim_end_matches(|c: char| c.is_ascii_digit())
                            .trim_end_matches('.')
                    } else {
                        n
                    };
                    (n.to_string(), l, d, b)
                }),
                host_link,
            ),
            ..Roofline::default()
        };
        let bad = xla::malformed_modules(c);
        if bad > 0 {
            out.uncosted.push((
                "Hlo Proto (/host:metadata)".to_string(),
                "module cannot be decoded: skipped",
                bad,
            ));
        }
        finish_rows(&mut out);
        out.unmodelled = other
            .into_iter()
            .map(|(n, d, k)| Unmodelled {
                name: c.strings.get(n).to_string(),
                device_ps: d,
                count: k,
            })
            .collect();
        return out;
    }
    let s = &c.slices;
    let keys = ArgKeys {
        dims: c.strings.lookup("Input Dims"),
        types: c.strings.lookup("Input type"),
        concrete: c.strings.lookup("Concrete Inputs"),
    };
    // Candidates: host CPU ops with a model.
    let mut by_name: FxHashMap<StrId, Option<ops::Model>> = FxHashMap::default();
    let mut cand: Vec<u32> = Vec::new();
    let mut model_of: Vec<ops::Model> = Vec::new();
    for i in 0..s.len() {
        if s.kind(i) != Category::CpuOp {
            continue;
        }
        let m = *by_name
            .entry(s.name[i])
            .or_insert_with(|| ops::lookup(c.strings.get(s.name[i])));
        if let Some(m) = m {
            cand.push(i as u32);
            model_of.push(m);
        }
    }
    // cand ascends (slice ids are visited in order).
    let idx = |id: u32| cand.binary_search(&id).ok();
    let mut has_inner = vec![false; cand.len()];
    let mut covered = vec![false; cand.len()];
    for (k, &id) in cand.iter().enumerate() {
        let mut p = s.parent[id as usize];
        while p != NO_SLICE {
            if let Some(j) = idx(p) {
                if model_of[j].composite {
                    has_inner[j] = true;
                } else {
                    covered[k] = true;
                }
            }
            p = s.parent[p as usize];
        }
    }
    let mut out = Roofline::default();
    if c.format == Some(crate::model::Format::XPlane) {
        out.note = Some(if xla::has_tpu_ops(c) {
            xla::NOTE_NO_TPU_COSTS
        } else {
            NOTE_NO_XLA_COSTS
        });
    } else if !cand.is_empty() && keys.dims.is_none() {
        out.note = Some(NOTE_NO_SHAPES);
    }
    let selected: Vec<u32> = cand
        .iter()
        .enumerate()
        .filter(|&(k, _)| !(covered[k] || model_of[k].composite && has_inner[k]))
        .map(|(_, &id)| id)
        .collect();
    out.nested_calls = (cand.len() - selected.len()) as u64;
    // Host ↔ device copies are counted apart (against the host link), never in a row.
    let host_copy =
        |i: usize| s.kind(i) == Category::Memcpy && copy_link(c.strings.get(s.name[i])).is_some();
    let dev = attribute::device_totals(c, &selected, |i| !host_copy(i));
    // Rows keyed by (name, dims, types, concrete, serving context: `inference`).
    type Key = (StrId, StrId, StrId, StrId, u64);
    let mut infer = inference::Context::new(c);
    let mut contexts: FxHashMap<Key, String> = FxHashMap::default();
    let mut rows: FxHashMap<Key, usize> = FxHashMap::default();
    let mut uncosted: FxHashMap<(StrId, &'static str), u64> = FxHashMap::default();
    let mut costs: FxHashMap<Key, Result<Cost, &'static str>> = FxHashMap::default();
    for (&id, &d) in selected.iter().zip(&dev) {
        let i = id as usize;
        if d == 0 {
            out.no_device_calls += 1;
            continue;
        }
        let (mut kd, mut kt, mut kc) = (StrId::EMPTY, StrId::EMPTY, StrId::EMPTY);
        c.args.for_each(s.args[i], &c.strings, |k, v| {
            let k = Some(k);
            if k == keys.dims {
                kd = text(v).unwrap_or(StrId::EMPTY);
            } else if k == keys.types {
                kt = text(v).unwrap_or(StrId::EMPTY);
            } else if k == keys.concrete {
                kc = text(v).unwrap_or(StrId::EMPTY);
            }
        });
        let name = c.strings.get(s.name[i]);
        let model = ops::lookup(name);
        let serving = model.and_then(|m| m.serving());
        let ctx = serving.map_or(0, |m| infer.key(m, i));
        let key = (s.name[i], kd, kt, kc, ctx);
        let cost = *costs.entry(key).or_insert_with(|| {
            if kd == StrId::EMPTY {
                return Err("no recorded shapes (record_shapes=False)");
            }
            let a = shapes::OpInputs::parse(
                Some(c.strings.get(kd)),
                Some(c.strings.get(kt)),
                Some(c.strings.get(kc)),
            );
            match (model, serving) {
                (_, Some(sv)) => {
                    let (cost, what) = infer.cost(sv, i, &a, ctx);
                    contexts.insert(key, what);
                    cost
                }
                (Some(m), None) => m.cost(name, &a),
                (None, None) => Err("no model"),
            }
        });
        let Ok(cost) = cost else {
            if let Err(why) = cost {
                *uncosted.entry((s.name[i], why)).or_default() += 1;
            }
            continue;
        };
        let r = *rows.entry(key).or_insert_with(|| {
            let a = shapes::OpInputs::parse(None, Some(c.strings.get(kt)), None);
            let dtype = a
                .types
                .iter()
                .find(|t| dtype::precision(t).is_some())
                .cloned()
                .unwrap_or_default();
            let family = ops::lookup(name).map_or(Family::Elementwise, |m| m.family);
            let mut row = Row::new(
                name,
                c.strings.get(kd),
                &dtype,
                c.strings.get(kc),
                family,
                cost,
            );
            row.precision_from = torch_precision_from(&dtype, &cost);
            if let Some(what) = contexts.get(&key) {
                row.context.clone_from(what);
                if family == Family::Moe {
                    row.precision_from
                        .push_str("; the weights are dequantised to the input type");
                }
            }
            out.rows.push(row);
            out.rows.len() - 1
        });
        out.rows[r].count += 1;
        out.rows[r].device_ps += d;
        out.rows[r].slices.push(id);
    }
    read_kernels(c, &mut out.rows);
    out.device = device::detect(c);
    out.host_link = out.device.as_ref().and_then(|d| d.peaks?.host_link());
    finish_rows(&mut out);
    let mut sel_rows: Vec<u32> = out
        .rows
        .iter()
        .flat_map(|r| r.slices.iter().copied())
        .collect();
    sel_rows.sort_unstable();
    let (un, total) = attribute::uncovered(c, &sel_rows, host_copy);
    out.total_device_ps = total;
    let k_bytes = c.strings.lookup("bytes");
    out.transfers = sum_transfers(
        (0..s.len())
            .filter(|&i| s.kind(i).is_activity() && host_copy(i))
            .filter_map(|i| {
                let name = c.strings.get(s.name[i]);
                let bytes = k_bytes
                    .and_then(|k| c.args.get(s.args[i], k, &c.strings))
                    .and_then(|v| match v {
                        ArgValue::F64(x) => Some(x),
                        v => v.as_i64(&c.strings).map(|x| x as f64),
                    });
                Some((name.to_string(), copy_link(name)?, s.dur[i], bytes))
            }),
        out.host_link,
    );
    out.in_graphs = graphs_unmodelled(c, &sel_rows, host_copy);
    out.unmodelled = un
        .into_iter()
        .map(|(n, d, k)| Unmodelled {
            name: c.strings.get(StrId(n)).to_string(),
            device_ps: d,
            count: k,
        })
        .collect();
    let mut u: Vec<(String, &'static str, u64)> = uncosted
        .into_iter()
        .map(|((n, w), k)| (c.strings.get(n).to_string(), w, k))
        .collect();
    u.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    out.uncosted = u;
    out
}
