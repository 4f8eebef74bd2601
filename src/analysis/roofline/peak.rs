//! One device's peaks ([`Peaks`]): the type the GPU table (`super::peaks`) and the TPU table
//! (`super::tpu_peaks`) both fill.

use super::dtype::Precision;

/// One device's published peaks (dense, no sparsity), TFLOP/s, and memory bandwidth, TB/s.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Peaks {
    /// Display name.
    pub name: &'static str,
    /// FP64 (vector / CUDA cores).
    pub fp64: Option<f64>,
    /// FP32 (vector / CUDA cores).
    pub fp32: Option<f64>,
    /// TF32 matrix (tensor cores).
    pub tf32: Option<f64>,
    /// BF16 matrix.
    pub bf16: Option<f64>,
    /// FP16 matrix.
    pub fp16: Option<f64>,
    /// FP8 matrix.
    pub fp8: Option<f64>,
    /// INT8 matrix, TOP/s.
    pub int8: Option<f64>,
    /// HBM / GDDR bandwidth, TB/s.
    pub mem_tbps: f64,
}

impl Peaks {
    /// The compute peak for `p` on matrix or vector units, TFLOP/s. Matrix FP32 uses the FP32
    /// peak (torch's default matmul does not use TF32); vector 16-bit work uses the FP32 peak.
    pub fn tflops(&self, p: Precision, matrix: bool) -> Option<f64> {
        self.roof(p, matrix).map(|r| r.0)
    }

    /// The compute roof for `p` on matrix or vector units: (TFLOP/s, the precision whose peak
    /// it is, on matrix units). Vector work and matrix FP32 / FP64 use the vector peaks; FP16
    /// without a figure of its own falls back to BF16.
    pub fn roof(&self, p: Precision, matrix: bool) -> Option<(f64, Precision, bool)> {
        let with = |v: Option<f64>, q: Precision, m: bool| v.map(|v| (v, q, m));
        match (p, matrix) {
            (Precision::Fp64, _) => with(self.fp64, Precision::Fp64, false),
            (Precision::Fp32, _) | (_, false) => with(self.fp32, Precision::Fp32, false),
            (Precision::Tf32, true) => with(self.tf32, Precision::Tf32, true),
            (Precision::Bf16, true) => with(self.bf16, Precision::Bf16, true),
            (Precision::Fp16, true) => with(self.fp16, Precision::Fp16, true)
                .or_else(|| with(self.bf16, Precision::Bf16, true)),
            (Precision::Fp8, true) => with(self.fp8, Precision::Fp8, true),
            (Precision::Int8, true) => with(self.int8, Precision::Int8, true),
        }
    }

    /// The link between host and device, per direction: (GB/s, what it is), from the same
    /// datasheets (PCIe generation × 16 lanes: Gen3 16, Gen4 32, Gen5 64 GB/s each way);
    /// `None` where the table does not know it. Host ↔ device copies are measured against it,
    /// never against HBM.
    pub fn host_link(&self) -> Option<(f64, &'static str)> {
        let n = self.name;
        let gen5 = [
            "NVIDIA H100",
            "NVIDIA H200",
            "AMD Instinct MI300",
            "AMD Instinct MI325",
        ];
        let gen4 = [
            "NVIDIA A100",
            "NVIDIA L40S",
            "NVIDIA L4",
            "AMD Instinct MI250",
        ];
        let gen3 = ["NVIDIA V100", "NVIDIA T4"];
        let is = |list: &[&str]| list.iter().any(|p| n.starts_with(p));
        if is(&gen5) {
            Some((64.0, "PCIe Gen5 x16"))
        } else if is(&gen4) {
            Some((32.0, "PCIe Gen4 x16"))
        } else if is(&gen3) {
            Some((16.0, "PCIe Gen3 x16"))
        } else {
            None
        }
    }
}
