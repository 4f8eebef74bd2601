//! Mixture-of-experts layers of serving engines, as TraceLens models them
//! (`PerfModel/extensions/moe_perf_model_extensions.py`):
//!
//! - vLLM's Triton MoE (`vllm::moe_forward`, GPT-OSS style, `matmul_ogs` kernels): TraceLens
//!   splits it into an up and a down projection (`moe_triton_unfused_up` / `_down`); here the
//!   op's row is their sum. M tokens, K hidden (input `[M, K]`), E experts (router logits
//!   `[M, E]`), N = K (TraceLens's stated limitation: the trace does not give the intermediate
//!   size), top-k from the `TopK` op under it (else 4, TraceLens's default), gating (SwiGLU:
//!   ×2 on the up projection) and the weight type (mxfp4: ½ byte, fp8: 1) from the kernel
//!   names. Up: 2·M·K·N·k·(2 if gated) FLOPs, M·K + E_act·(2 if gated)·K·N·w + M·N·k bytes;
//!   down: 2·M·N·K·k FLOPs, M·N·k + E_act·N·K·w + M·K bytes, with E_act = E·(1 − ((E − k)/E)^M)
//!   the experts a uniform routing of M tokens reaches.
//! - AITER's fused MoE (`vllm::rocm_aiter_fused_moe`, `FusedMoE` / `moe_aiter_fused_1stage`):
//!   weights `w1 [E, N·(1 or 2), K]`, `w2 [E, K, N]` and top-k from `[M, k]` in the shapes;
//!   FLOPs = up + down + M·K·(2k − 1) (the weighted sum), bytes = input + E_act·(w1 + w2) +
//!   output (the intermediate stays on chip).

use super::cost::{Cost, Why};
use super::dtype::precision;
use super::shapes::OpInputs;

/// Which MoE formula an op takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// vLLM's Triton MoE (`vllm::moe_forward`): up + down projection, unfused.
    TritonUnfused,
    /// AITER's one-stage fused MoE: weights in the shapes.
    AiterFused,
}

/// The MoE kind of an op name.
pub fn kind(name: &str) -> Option<Kind> {
    match name {
        "vllm::moe_forward" => Some(Kind::TritonUnfused),
        "vllm::rocm_aiter_fused_moe" => Some(Kind::AiterFused),
        _ => None,
    }
}

/// Bytes per element of a weight type read from a kernel name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weights {
    /// Not said by the kernel name.
    Unknown,
    /// `mxfp4` / `fp4`: ½ byte.
    Fp4,
    /// `fp8` / `e4m3`: 1 byte.
    Fp8,
}

impl Weights {
    /// From a kernel name (TraceLens: `mxfp4` / `fp4` → FP4, `fp8` / `e4m3` → FP8).
    pub fn of_kernel(name: &str) -> Weights {
        let n = name.to_ascii_lowercase();
        if n.contains("mxfp4") || n.contains("fp4") {
            Weights::Fp4
        } else if n.contains("fp8") || n.contains("e4m3") {
            Weights::Fp8
        } else {
            Weights::Unknown
        }
    }
    fn bytes(self) -> Option<f64> {
        match self {
            Weights::Unknown => None,
            Weights::Fp4 => Some(0.5),
            Weights::Fp8 => Some(1.0),
        }
    }
    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Weights::Unknown => "?",
            Weights::Fp4 => "fp4",
            Weights::Fp8 => "fp8",
        }
    }
}

/// What the kernels and child ops of one MoE call say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launched {
    /// `k` of the `TopK` op under it, when recorded.
    pub topk: Option<u32>,
    /// The up projection's kernel (first `matmul_ogs`), when one was seen: (gated, weights).
    pub up: Option<(bool, Weights)>,
    /// The down projection's kernel (second `matmul_ogs`).
    pub down: Option<Weights>,
}

impl Launched {
    /// A compact key (equal calls share a row).
    pub fn key(&self) -> u64 {
        let w = |w: Weights| w as u64 + 1;
        let up = self.up.map_or(0, |(g, x)| (u64::from(g) << 3) | w(x));
        let down = self.down.map_or(0, w);
        (u64::from(self.topk.unwrap_or(0)) << 16) | (up << 8) | (down << 4) | 1
    }
    /// For people: `top-4, swiglu, fp4 weights`.
    pub fn describe(&self) -> String {
        let k = match self.topk {
            Some(k) => format!("top-{k}"),
            None => "top-4 (TopK not recorded: TraceLens's default)".into(),
        };
        let (g, w) = self.up.unwrap_or((false, Weights::Unknown));
        format!(
            "{k}, {}, {} weights, intermediate = hidden (TraceLens)",
            if g { "gated" } else { "not gated" },
            w.name()
        )
    }
}

/// Experts a uniform routing of `m` tokens to `k` of `e` experts reaches, on average.
pub fn active_experts(e: f64, k: f64, m: f64) -> f64 {
    if e <= 0.0 {
        return 0.0;
    }
    e * (1.0 - ((e - k) / e).powf(m))
}

/// The sizes of one MoE layer call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sizes {
    /// Tokens, M.
    pub m: f64,
    /// Hidden size, K.
    pub k: f64,
    /// Intermediate size, N.
    pub n: f64,
    /// Experts, E.
    pub e: f64,
    /// Experts per token.
    pub topk: f64,
    /// Bytes per activation element.
    pub act_bytes: f64,
}

/// Up projection (`UnfusedMoE_Up`) with weights of `wb` bytes per element: (FLOPs, bytes).
pub fn up(z: &Sizes, gated: bool, wb: f64) -> (f64, f64) {
    let g = if gated { 2.0 } else { 1.0 };
    let flops = 2.0 * z.m * z.k * z.n * z.topk * g;
    let bytes = z.m * z.k * z.act_bytes
        + active_experts(z.e, z.topk, z.m) * g * z.k * z.n * wb
        + z.m * z.n * z.topk * z.act_bytes;
    (flops, bytes)
}

/// Down projection (`UnfusedMoE_Down`): (FLOPs, bytes).
pub fn down(z: &Sizes, wb: f64) -> (f64, f64) {
    let flops = 2.0 * z.m * z.n * z.k * z.topk;
    let bytes = z.m * z.n * z.topk * z.act_bytes
        + active_experts(z.e, z.topk, z.m) * z.n * z.k * wb
        + z.m * z.k * z.act_bytes;
    (flops, bytes)
}

/// TraceLens's `DTYPE_TO_BYTES` for activations.
fn act_bytes(ty: &str) -> Option<f64> {
    let t = ty.trim_start_matches("c10::");
    Some(match t {
        "BFloat16" | "Half" | "Float16" => 2.0,
        "Float" | "Float32" => 4.0,
        "Float8_e4m3fn" | "Float8_e4m3fnuz" | "Float8_e5m2" | "Float8_e5m2fnuz" => 1.0,
        "Float4_e2m1fn_x2" => 0.5,
        _ => return None,
    })
}

fn dim(s: Option<&[i64]>, i: usize) -> Result<f64, Why> {
    s.and_then(|s| s.get(i))
        .map(|&d| d.max(0) as f64)
        .ok_or("MoE shapes not recorded")
}

/// FLOPs and bytes of one MoE call with inputs `a`; `l` is what its kernels and child ops say.
pub fn cost(kind: Kind, a: &OpInputs, l: &Launched) -> Result<Cost, Why> {
    let ty = a.ty(0);
    let ib = act_bytes(ty).ok_or("input type not known")?;
    match kind {
        Kind::TritonUnfused => {
            let x = a.tensor(0).filter(|s| s.len() == 2);
            let (m, k_dim) = (dim(x, 0)?, dim(x, 1)?);
            let e = dim(a.tensor(1).filter(|s| s.len() == 2), 1)?;
            let (gated, wu) = l.up.ok_or("no matmul_ogs kernel under it")?;
            let wu = wu.bytes().ok_or("weight type not in the kernel name")?;
            let topk = f64::from(l.topk.unwrap_or(4));
            let n = k_dim; // TraceLens: the intermediate size is not in the trace.
            let z = Sizes {
                m,
                k: k_dim,
                n,
                e,
                topk,
                act_bytes: ib,
            };
            let (fu, bu) = up(&z, gated, wu);
            let (fd, bd) = match l.down {
                Some(w) => {
                    let w = w.bytes().ok_or("weight type not in the kernel name")?;
                    down(&z, w)
                }
                None => (0.0, 0.0),
            };
            Ok(Cost {
                flops: fu + fd,
                bytes: Some(bu + bd),
                precision: precision(ty),
                matrix: true,
            })
        }
        Kind::AiterFused => {
            let x = a.tensor(0).filter(|s| s.len() == 2);
            let w1 = a.tensor(1).filter(|s| s.len() == 3);
            let w2 = a.tensor(2).filter(|s| s.len() == 3);
            let m = dim(x, 0)?;
            let (e, w1_n, w1_k) = (dim(w1, 0)?, dim(w1, 1)?, dim(w1, 2)?);
            let (k_dim, mut n) = (dim(w2, 1)?, dim(w2, 2)?);
            if w1_k > 0.0 {
                n *= (k_dim / w1_k).floor().max(1.0); // int4 packing (TraceLens's int4_war)
            }
            let topk = dim(a.tensor(3).filter(|s| s.len() == 2), 1)?;
            let gated = w1_n == 2.0 * n;
            let wb = act_bytes(a.ty(1)).unwrap_or(1.0);
            let g = if gated { 2.0 } else { 1.0 };
            let flops = 2.0 * m * k_dim * n * topk * g
                + 2.0 * m * k_dim * n * topk
                + m * k_dim * (2.0 * topk - 1.0);
            let ea = active_experts(e, topk, m);
            let bytes =
                m * k_dim * ib + ea * n * k_dim * wb * g + ea * n * k_dim * wb + m * k_dim * ib;
            Ok(Cost {
                flops,
                bytes: Some(bytes),
                precision: precision(ty),
                matrix: true,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(m: i64) -> OpInputs {
        OpInputs::parse(
            Some(&format!("[[{m}, 3072], [{m}, 32], [], []]")),
            Some(r#"["c10::BFloat16", "c10::BFloat16", "", ""]"#),
            Some(r#"["", "", "", ""]"#),
        )
    }
    fn launched() -> Launched {
        Launched {
            topk: Some(4),
            up: Some((
                true,
                Weights::of_kernel("_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu"),
            )),
            down: Some(Weights::of_kernel(
                "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1",
            )),
        }
    }

    #[test]
    fn tracelens_rows_of_the_vllm_traces() {
        // MoE_unfused_fwd.csv, vllm_decode_full: up 4.831838208 GFLOP / 284.9228269331473 MB,
        // down 2.415919104 / 142.93016346657365 (MB = 2^20 bytes).
        let c = cost(Kind::TritonUnfused, &inputs(32), &launched()).unwrap();
        assert_eq!(c.flops, 4_831_838_208.0 + 2_415_919_104.0);
        let mb = c.bytes.unwrap() / 1048576.0;
        assert!(
            (mb - (284.9228269331473 + 142.93016346657365)).abs() < 1e-9,
            "{mb}"
        );
        // vllm_prefilldecode_piecewise: 8192 tokens, up 1236.950581248 / 528.0, down
        // 618.475290624 / 384.0.
        let c = cost(Kind::TritonUnfused, &inputs(8192), &launched()).unwrap();
        assert_eq!(c.flops, 1_236_950_581_248.0 + 618_475_290_624.0);
        assert!((c.bytes.unwrap() / 1048576.0 - 912.0).abs() < 1e-9);
        let none = Launched {
            topk: Some(4),
            up: None,
            down: None,
        };
        assert!(cost(Kind::TritonUnfused, &inputs(32), &none).is_err());
    }

    #[test]
    fn fused_by_hand() {
        // M = 4 tokens, K = 8, N = 16, E = 2 experts, top-2, gated, bf16 weights.
        let a = OpInputs::parse(
            Some("[[4, 8], [2, 32, 8], [2, 8, 16], [4, 2]]"),
            Some(r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "float"]"#),
            None,
        );
        let c = cost(
            Kind::AiterFused,
            &a,
            &Launched {
                topk: None,
                up: None,
                down: None,
            },
        )
        .unwrap();
        let (m, k, n, t) = (4.0, 8.0, 16.0, 2.0);
        assert_eq!(
            c.flops,
            2.0 * m * k * n * t * 2.0 + 2.0 * m * k * n * t + m * k * 3.0
        );
        // Both experts reached: E_act = 2·(1 − 0⁴) = 2.
        assert_eq!(active_experts(2.0, 2.0, 4.0), 2.0);
        let b = m * k * 2.0 * 2.0 + 2.0 * n * k * 2.0 * 3.0;
        assert_eq!(c.bytes, Some(b));
    }
}
