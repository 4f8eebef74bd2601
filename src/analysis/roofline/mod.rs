//! How close to the hardware: FLOPs and bytes per op from the recorded shapes (a perf model
//! per op family, after AMD's TraceLens), divided by the op's device time, against the
//! device's published peaks (a roofline). See docs/roofline.md.
//!
//! Files: [`shapes`] (recorded inputs), [`dtype`], [`cost`], [`ops`] (name → model),
//! [`gemm`], [`conv`], [`sdpa`], [`memops`] (the formulas), [`peaks`] (device table),
//! [`device`] (which device a capture ran on), [`attribute`] (device time per op), [`row`]
//! (achieved figures), [`xla`] (XPlane HLO ops).

pub mod attribute;
pub mod conv;
pub mod cost;
pub mod device;
pub mod dtype;
pub mod gemm;
pub mod memops;
pub mod ops;
pub mod peaks;
pub mod row;
pub mod sdpa;
pub mod shapes;
#[cfg(test)]
mod torch_counter;
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
    /// Calls of modelled ops whose inputs could not be costed: (op name, reason, calls).
    pub uncosted: Vec<(String, &'static str, u64)>,
    /// Calls of modelled ops without device time (CPU work).
    pub no_device_calls: u64,
    /// Calls of modelled ops left to an enclosing modelled op (its time includes theirs).
    pub nested_calls: u64,
    /// Why nothing could be modelled, when that is known.
    pub note: Option<&'static str>,
}

/// The note of an XPlane capture without cost stats.
pub const NOTE_NO_XLA_COSTS: &str = "the HLO ops carry no flops / bytes_accessed stats and no HLO module of the capture names them (XProf derives the costs from those modules)";
/// The note of an XPlane capture whose op costs come from the HLO cost model.
pub const NOTE_HLO_COSTS: &str = "FLOPs and bytes from the HLO modules of /host:metadata (XLA's GPU cost analysis, as XProf); XLA Ops without a module or a modelled opcode are not modelled";
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
        ..
    }) = xla::collect(c)
    {
        let mut out = Roofline {
            device: device::detect(c),
            rows,
            total_device_ps: total,
            note: from_hlo.then_some(NOTE_HLO_COSTS),
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
        out.note = Some(NOTE_NO_XLA_COSTS);
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
    let dev = attribute::device_totals(c, &selected);
    // Rows keyed by (name, dims, types, concrete).
    type Key = (StrId, StrId, StrId, StrId);
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
        let key = (s.name[i], kd, kt, kc);
        let name = c.strings.get(s.name[i]);
        let cost = *costs.entry(key).or_insert_with(|| {
            if kd == StrId::EMPTY {
                return Err("no recorded shapes (record_shapes=False)");
            }
            let a = shapes::OpInputs::parse(
                Some(c.strings.get(kd)),
                Some(c.strings.get(kt)),
                Some(c.strings.get(kc)),
            );
            match ops::lookup(name) {
                Some(m) => m.cost(name, &a),
                None => Err("no model"),
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
            out.rows.push(Row::new(
                name,
                c.strings.get(kd),
                &dtype,
                c.strings.get(kc),
                family,
                cost,
            ));
            out.rows.len() - 1
        });
        out.rows[r].count += 1;
        out.rows[r].device_ps += d;
        out.rows[r].slices.push(id);
    }
    out.device = device::detect(c);
    finish_rows(&mut out);
    let mut sel_rows: Vec<u32> = out
        .rows
        .iter()
        .flat_map(|r| r.slices.iter().copied())
        .collect();
    sel_rows.sort_unstable();
    let (un, total) = attribute::uncovered(c, &sel_rows);
    out.total_device_ps = total;
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
