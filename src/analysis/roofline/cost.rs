//! What a perf model answers for one call: FLOPs, bytes and the peak that applies.

use super::dtype::Precision;

/// FLOPs and bytes of one call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// Floating-point (or integer) operations.
    pub flops: f64,
    /// Bytes read and written from device memory; `None` when an element type is unknown.
    pub bytes: Option<f64>,
    /// Precision of the compute (`None`: unknown type, no compute peak applies).
    pub precision: Option<Precision>,
    /// Runs on matrix units (tensor cores / MXU) rather than vector units.
    pub matrix: bool,
}

/// Op families, each with its own module of formulas.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Matrix multiplications ([`super::gemm`]).
    Gemm,
    /// Convolutions ([`super::conv`]).
    Conv,
    /// Scaled-dot-product / flash attention ([`super::sdpa`]).
    Attention,
    /// Elementwise ops and copies ([`super::memops`]).
    Elementwise,
    /// Reductions ([`super::memops`]).
    Reduce,
    /// Normalizations ([`super::memops`]).
    Norm,
    /// Softmax ([`super::memops`]).
    Softmax,
    /// Mixture-of-experts layers ([`super::moe`]).
    Moe,
    /// An XLA HLO op with XLA's own FLOPs and bytes ([`super::xla`]).
    Hlo,
}

impl Family {
    /// Snake-case name.
    pub fn name(self) -> &'static str {
        match self {
            Family::Gemm => "gemm",
            Family::Conv => "conv",
            Family::Attention => "attention",
            Family::Elementwise => "elementwise",
            Family::Reduce => "reduce",
            Family::Norm => "norm",
            Family::Softmax => "softmax",
            Family::Moe => "moe",
            Family::Hlo => "hlo",
        }
    }
}

/// Why a modelled op's recorded inputs could not be costed.
pub type Why = &'static str;

/// Bytes of `elems` elements of type `ty` (`None` when the type is unknown).
pub fn bytes_of(elems: f64, ty: &str) -> Option<f64> {
    super::dtype::bytes_per_element(ty).map(|b| elems * f64::from(b))
}
