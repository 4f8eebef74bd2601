//! One roofline row: an op with one set of recorded inputs, its model and its achieved figures.

use super::cost::{Cost, Family};
use super::dtype::Precision;
use super::peaks::Peaks;
use crate::model::Ps;

/// Which roof limits an op at peak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// FLOPs / peak FLOP/s ≥ bytes / bandwidth.
    Compute,
    /// Bytes / bandwidth > FLOPs / peak FLOP/s.
    Memory,
}

/// One (op name, input dims, types, concrete inputs) with its calls.
#[derive(Clone, Debug)]
pub struct Row {
    /// Op name (raw).
    pub name: String,
    /// `Input Dims` as the trace records it.
    pub input_dims: String,
    /// The first input type with a precision (`float`, `c10::BFloat16`, …).
    pub dtype: String,
    /// `Concrete Inputs` as recorded.
    pub concrete: String,
    /// Model family.
    pub family: Family,
    /// Calls.
    pub count: u64,
    /// FLOPs and bytes of one call.
    pub cost: Cost,
    /// Σ device time of the calls, ps.
    pub device_ps: Ps,
    /// Peak compute for this op's precision, TFLOP/s (unknown device or precision: `None`).
    pub peak_tflops: Option<f64>,
    /// Peak memory bandwidth, TB/s.
    pub peak_tbps: Option<f64>,
    /// Whose compute peak `peak_tflops` is: (precision, on matrix units).
    pub peak_of: Option<(Precision, bool)>,
    /// What the precision was taken from (input type, HLO precision config, …), for people.
    pub precision_from: String,
    /// Slice ids of the calls.
    pub slices: Vec<u32>,
    /// What else the model read, for serving ops (the iteration annotation of paged
    /// attention; a MoE's top-k, gating and weight type); empty otherwise.
    pub context: String,
}

impl Row {
    /// A row with no calls yet.
    pub fn new(
        name: &str,
        dims: &str,
        dtype: &str,
        concrete: &str,
        family: Family,
        cost: Cost,
    ) -> Row {
        Row {
            name: name.to_string(),
            input_dims: dims.to_string(),
            dtype: dtype.to_string(),
            concrete: concrete.to_string(),
            family,
            count: 0,
            cost,
            device_ps: 0,
            peak_tflops: None,
            peak_tbps: None,
            peak_of: None,
            precision_from: String::new(),
            slices: Vec::new(),
            context: String::new(),
        }
    }

    /// Sets the device's peaks.
    pub fn set_peaks(&mut self, p: Option<&Peaks>) {
        let roof = p
            .zip(self.cost.precision)
            .and_then(|(p, pr)| p.roof(pr, self.cost.matrix));
        self.peak_tflops = roof.map(|r| r.0);
        self.peak_of = roof.map(|r| (r.1, r.2));
        self.peak_tbps = p.map(|p| p.mem_tbps);
    }

    /// The compute roof used, for people: `bf16 matrix`, `fp32 vector` (`None`: no peak).
    pub fn roof_label(&self) -> Option<String> {
        self.peak_of
            .map(|(p, m)| format!("{} {}", p.name(), if m { "matrix" } else { "vector" }))
    }

    /// True when the calls ran faster than the roof allows (`peak_pct` > 100): the table's
    /// peak, the precision assumed or the byte model does not hold for this row, and its
    /// figures must be read with the peak named.
    pub fn beyond_peak(&self) -> bool {
        self.peak_pct().is_some_and(|p| p > 100.0)
    }

    /// Device seconds.
    fn secs(&self) -> f64 {
        self.device_ps as f64 * 1e-12
    }

    /// Achieved TFLOP/s.
    pub fn tflops(&self) -> Option<f64> {
        (self.device_ps > 0).then(|| self.cost.flops * self.count as f64 / self.secs() / 1e12)
    }

    /// Achieved TB/s.
    pub fn tbytes_per_s(&self) -> Option<f64> {
        let b = self.cost.bytes?;
        (self.device_ps > 0).then(|| b * self.count as f64 / self.secs() / 1e12)
    }

    /// Arithmetic intensity, FLOP/byte.
    pub fn intensity(&self) -> Option<f64> {
        self.cost
            .bytes
            .filter(|&b| b > 0.0)
            .map(|b| self.cost.flops / b)
    }

    /// (compute time, memory time) at peak for all calls, ps; a side is `None` when its peak
    /// or its bytes are unknown.
    fn times_at_peak(&self) -> (Option<f64>, Option<f64>) {
        let n = self.count as f64;
        let tc = self
            .peak_tflops
            .filter(|&p| p > 0.0)
            .map(|p| self.cost.flops * n / (p * 1e12) * 1e12);
        let tm = self
            .peak_tbps
            .zip(self.cost.bytes)
            .filter(|(p, _)| *p > 0.0)
            .map(|(p, b)| b * n / (p * 1e12) * 1e12);
        (tc, tm)
    }

    /// The roof that applies (TraceLens's rule: compute when its time at peak ≥ memory's).
    pub fn bound(&self) -> Option<Bound> {
        match self.times_at_peak() {
            (Some(c), Some(m)) => Some(if c >= m {
                Bound::Compute
            } else {
                Bound::Memory
            }),
            (Some(_), None) => Some(Bound::Compute),
            (None, Some(_)) => Some(Bound::Memory),
            (None, None) => None,
        }
    }

    /// Time the calls would take at the roof, ps (max of compute and memory times).
    pub fn time_at_peak_ps(&self) -> Option<f64> {
        match self.times_at_peak() {
            (Some(c), Some(m)) => Some(c.max(m)),
            (c, m) => c.or(m),
        }
    }

    /// Achieved share of the roof that applies, % (= time at peak / device time).
    pub fn peak_pct(&self) -> Option<f64> {
        let t = self.time_at_peak_ps()?;
        (self.device_ps > 0).then(|| 100.0 * t / self.device_ps as f64)
    }

    /// Device time that running at the roof would save, ps (0 when unknown or above it).
    pub fn saved_ps(&self) -> f64 {
        self.time_at_peak_ps()
            .map_or(0.0, |t| (self.device_ps as f64 - t).max(0.0))
    }

    /// The precision of the peak used.
    pub fn precision(&self) -> Option<Precision> {
        self.cost.precision
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn achieved_and_bound_by_hand() {
        let cost = Cost {
            flops: 2.0e12,
            bytes: Some(1.0e9),
            precision: Some(Precision::Bf16),
            matrix: true,
        };
        let mut r = Row::new(
            "aten::mm",
            "[[1],[1]]",
            "c10::BFloat16",
            "",
            Family::Gemm,
            cost,
        );
        r.count = 2;
        r.device_ps = 8_000_000_000; // 8 ms
        assert_eq!(r.tflops(), Some(500.0));
        assert_eq!(r.tbytes_per_s(), Some(0.25));
        assert_eq!(r.intensity(), Some(2000.0));
        assert_eq!(r.bound(), None);
        r.set_peaks(super::super::peaks::lookup("NVIDIA H200"));
        assert_eq!(r.bound(), Some(Bound::Compute));
        // 4e12 FLOP / 989.4e12 = 4.043 ms at peak.
        let pct = r.peak_pct().unwrap();
        assert!((pct - 100.0 * 4.0 / 989.4 / 8e-3).abs() < 1e-9, "{pct}");
        assert!((r.saved_ps() - (8e9 - 4.0e12 / 989.4)).abs() < 1.0);
    }
}
