//! Which op names have a perf model, and in which family.

use super::cost::{Cost, Family, Why};
use super::sdpa::Layout;
use super::shapes::OpInputs;
use super::{gemm, memops, sdpa};

/// The formula an op name maps to.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Mm,
    Addmm,
    Bmm,
    Baddbmm,
    ScaledMm,
    Matmul,
    Linear,
    GroupedMm,
    Attention(Layout),
    Unary,
    Fill,
    Binary,
    Reduce,
    LayerNorm,
    LayerNormBwd,
    Softmax(bool),
    Dropout,
    Conv(bool),
    Serving(super::inference::Serving),
}

/// The perf model of one op name.
#[derive(Clone, Copy, Debug)]
pub struct Model {
    /// Its family.
    pub family: Family,
    /// A composite op (`aten::linear`, `aten::matmul`, `aten::scaled_dot_product_attention`):
    /// modelled only when no op below it is.
    pub composite: bool,
    /// TraceLens models it too (else a tracetui addition, see docs/roofline.md).
    pub tracelens: bool,
    kind: Kind,
}

impl Model {
    /// FLOPs and bytes of one call of op `name` with inputs `a`.
    pub fn cost(&self, name: &str, a: &OpInputs) -> Result<Cost, Why> {
        match self.kind {
            Kind::Mm => gemm::mm(a),
            Kind::Addmm => gemm::addmm(a),
            Kind::Bmm => gemm::bmm(a),
            Kind::Baddbmm => gemm::baddbmm(a),
            Kind::ScaledMm => gemm::scaled_mm(a),
            Kind::Matmul => gemm::matmul(a),
            Kind::Linear => gemm::linear(a),
            Kind::GroupedMm => gemm::grouped_mm(a),
            Kind::Attention(l) => sdpa::cost(a, &l),
            Kind::Unary => memops::unary(name, a),
            Kind::Fill => memops::fill(a),
            Kind::Binary => memops::binary(a),
            Kind::Reduce => memops::reduce(name, a),
            Kind::LayerNorm => memops::layer_norm(a),
            Kind::LayerNormBwd => memops::layer_norm_bwd(a),
            Kind::Softmax(bwd) => memops::softmax(a, bwd),
            Kind::Dropout => memops::dropout(a),
            Kind::Conv(bwd) => super::conv::cost(a, bwd),
            Kind::Serving(_) => Err("needs its serving context (roofline::inference)"),
        }
    }

    /// The serving model (paged attention, MoE) when the op needs the context of its call.
    pub fn serving(&self) -> Option<super::inference::Serving> {
        match self.kind {
            Kind::Serving(s) => Some(s),
            _ => None,
        }
    }
}

/// TraceLens's unary elementwise ops (`torch_op_mapping.py`).
const UNARY: &[&str] = &[
    "aten::copy",
    "aten::copy_",
    "aten::clamp_min",
    "aten::clamp_min_",
    "aten::clamp_max",
    "aten::clamp_max_",
    "aten::sigmoid",
    "aten::rsqrt",
    "aten::silu",
    "aten::neg",
    "aten::pow",
];
/// Unary elementwise ops tracetui adds.
const UNARY_MORE: &[&str] = &[
    "aten::relu",
    "aten::relu_",
    "aten::gelu",
    "aten::tanh",
    "aten::exp",
    "aten::log",
    "aten::abs",
    "aten::sqrt",
    "aten::reciprocal",
    "aten::sin",
    "aten::cos",
    "aten::clamp",
    "aten::clamp_",
    "aten::_to_copy",
];
/// TraceLens's binary elementwise ops.
const BINARY: &[&str] = &[
    "aten::div",
    "aten::div_",
    "aten::mul",
    "aten::mul_",
    "aten::add",
    "aten::add_",
    "aten::sigmoid_backward",
    "aten::threshold_backward",
];
/// Binary elementwise ops tracetui adds.
const BINARY_MORE: &[&str] = &[
    "aten::sub",
    "aten::sub_",
    "aten::gelu_backward",
    "aten::silu_backward",
    "aten::maximum",
    "aten::minimum",
    "aten::tanh_backward",
];
/// TraceLens's reductions.
const REDUCE: &[&str] = &[
    "aten::sum",
    "aten::mean",
    "aten::max",
    "aten::min",
    "aten::norm",
    "aten::linalg_norm",
    "aten::std",
    "aten::var",
    "aten::logsumexp",
    "aten::cumsum",
    "aten::cumprod",
    "aten::amin",
    "aten::amax",
];

/// The perf model of op `name`, if it has one.
pub fn lookup(name: &str) -> Option<Model> {
    let m = |family, kind| {
        Some(Model {
            family,
            composite: false,
            tracelens: true,
            kind,
        })
    };
    let extra = |family, kind| {
        Some(Model {
            family,
            composite: false,
            tracelens: false,
            kind,
        })
    };
    let composite = |family, kind| {
        Some(Model {
            family,
            composite: true,
            tracelens: false,
            kind,
        })
    };
    if let Some(s) = super::inference::lookup(name) {
        let family = match s {
            super::inference::Serving::Paged(_) => Family::Attention,
            super::inference::Serving::Moe(_) => Family::Moe,
        };
        return m(family, Kind::Serving(s));
    }
    if let Some(l) = sdpa::layout(name) {
        return if name == "aten::scaled_dot_product_attention" {
            composite(Family::Attention, Kind::Attention(l))
        } else if name.starts_with("aten::_flash_attention")
            || name.starts_with("aten::_efficient_attention")
            || name.ends_with("_for_cpu")
        {
            extra(Family::Attention, Kind::Attention(l))
        } else {
            m(Family::Attention, Kind::Attention(l))
        };
    }
    match name {
        "aten::mm" => m(Family::Gemm, Kind::Mm),
        "aten::addmm" => m(Family::Gemm, Kind::Addmm),
        "aten::bmm" => m(Family::Gemm, Kind::Bmm),
        "aten::baddbmm" => m(Family::Gemm, Kind::Baddbmm),
        "aten::_scaled_mm" => m(Family::Gemm, Kind::ScaledMm),
        "aten::_grouped_mm" | "aten::_scaled_grouped_mm" => extra(Family::Gemm, Kind::GroupedMm),
        "aten::matmul" => composite(Family::Gemm, Kind::Matmul),
        "aten::linear" => composite(Family::Gemm, Kind::Linear),
        "aten::convolution" => m(Family::Conv, Kind::Conv(false)),
        "aten::convolution_backward" => m(Family::Conv, Kind::Conv(true)),
        "aten::_convolution" | "aten::cudnn_convolution" | "aten::miopen_convolution" => {
            extra(Family::Conv, Kind::Conv(false))
        }
        "aten::layer_norm" | "aten::native_layer_norm" => m(Family::Norm, Kind::LayerNorm),
        "aten::layer_norm_backward" | "aten::native_layer_norm_backward" => {
            m(Family::Norm, Kind::LayerNormBwd)
        }
        "aten::_softmax" | "aten::softmax" | "aten::_log_softmax" | "aten::log_softmax" => {
            extra(Family::Softmax, Kind::Softmax(false))
        }
        "aten::_softmax_backward_data" | "aten::_log_softmax_backward_data" => {
            extra(Family::Softmax, Kind::Softmax(true))
        }
        "aten::native_dropout" | "aten::native_dropout_backward" => {
            extra(Family::Elementwise, Kind::Dropout)
        }
        "aten::fill_" | "aten::zero_" => extra(Family::Elementwise, Kind::Fill),
        _ if UNARY.contains(&name) => m(Family::Elementwise, Kind::Unary),
        _ if UNARY_MORE.contains(&name) => extra(Family::Elementwise, Kind::Unary),
        _ if BINARY.contains(&name) => m(Family::Elementwise, Kind::Binary),
        _ if BINARY_MORE.contains(&name) => extra(Family::Elementwise, Kind::Binary),
        _ if REDUCE.contains(&name) => m(Family::Reduce, Kind::Reduce),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_families() {
        assert_eq!(lookup("aten::addmm").map(|m| m.family), Some(Family::Gemm));
        assert!(lookup("aten::linear").is_some_and(|m| m.composite && !m.tracelens));
        assert!(
            lookup("aten::_scaled_dot_product_efficient_attention").is_some_and(|m| m.tracelens)
        );
        assert!(lookup("aten::_efficient_attention_backward").is_some_and(|m| !m.tracelens));
        assert_eq!(lookup("aten::sum").map(|m| m.family), Some(Family::Reduce));
        assert!(lookup("aten::view").is_none());
        assert!(lookup("aten::copy_").is_some_and(|m| m.tracelens));
    }
}
