//! Attention FLOPs and bytes, as TraceLens models them (`PerfModel/perf_model.py`: `SDPA`,
//! after flash-attention's benchmark):
//!
//! - forward FLOPs = B·H_Q·(2·N_Q·N_KV·d_qk + 2·N_Q·N_KV·d_v), halved when causal (softmax left
//!   out); bytes = (Q + K + V + O elements)·bpe.
//! - backward FLOPs = [flash: B·H_Q·2·N_Q·N_KV·d_qk to recompute S] + dV + dP + dQ + dK, each
//!   B·H_Q·2·N_Q·N_KV·d (plus the GQA head reduction B·N_KV·d·(H_Q/H_KV − 1) on dV and dK),
//!   halved when causal; bytes = (Q + K + V + dO + dQ + dK + dV elements)·bpe.
//!
//! TraceLens uses bpe = 2 whatever the dtype; here it is the query's recorded type.

use super::cost::{Cost, Why};
use super::dtype::{bytes_per_element, precision};
use super::shapes::OpInputs;

/// Attention geometry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    /// Batch.
    pub b: f64,
    /// Query length.
    pub n_q: f64,
    /// Query heads.
    pub h_q: f64,
    /// Key/value length.
    pub n_kv: f64,
    /// Key/value heads.
    pub h_kv: f64,
    /// Query/key head dim.
    pub d_qk: f64,
    /// Value head dim.
    pub d_v: f64,
}

/// Forward FLOPs.
pub fn flops_fwd(g: &Geometry, causal: bool) -> f64 {
    let f = g.b * g.h_q * (2.0 * g.n_q * g.n_kv * g.d_qk + 2.0 * g.n_q * g.n_kv * g.d_v);
    if causal { f / 2.0 } else { f }
}

/// Forward elements moved (Q, K, V read, O written).
pub fn elems_fwd(g: &Geometry) -> f64 {
    g.b * (g.n_q * g.h_q * g.d_qk
        + g.n_kv * g.h_kv * g.d_qk
        + g.n_kv * g.h_kv * g.d_v
        + g.n_q * g.h_q * g.d_v)
}

/// Backward FLOPs (`flash`: the scores are recomputed).
pub fn flops_bwd(g: &Geometry, causal: bool, flash: bool) -> f64 {
    let mm = |d: f64| g.b * g.h_q * 2.0 * g.n_q * g.n_kv * d;
    let gqa = (g.h_q / g.h_kv).floor() - 1.0;
    let mut f = if flash { mm(g.d_qk) } else { 0.0 };
    f += mm(g.d_v) + g.b * g.n_kv * g.d_v * gqa; // dV
    f += mm(g.d_v); // dP
    f += mm(g.d_qk); // dQ
    f += mm(g.d_qk) + g.b * g.n_kv * g.d_qk * gqa; // dK
    if causal { f / 2.0 } else { f }
}

/// Backward elements moved (Q, K, V, dO read; dQ, dK, dV written).
pub fn elems_bwd(g: &Geometry) -> f64 {
    let q = g.b * g.n_q * g.h_q * g.d_qk;
    let k = g.b * g.n_kv * g.h_kv * g.d_qk;
    let v = g.b * g.n_kv * g.h_kv * g.d_v;
    let d_o = g.b * g.n_q * g.h_q * g.d_v;
    2.0 * (q + k + v) + d_o
}

/// How one attention op records its inputs.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// Index of the query (K and V follow).
    pub q: usize,
    /// Tensors are [B, N, H, d] (flash / xformers kernels) rather than [B, H, N, d].
    pub bnhd: bool,
    /// Concrete-input index of `is_causal` (or of xformers' `custom_mask_type`).
    pub causal: Option<usize>,
    /// Backward op.
    pub bwd: bool,
    /// Flash implementation (backward recomputes the scores).
    pub flash: bool,
}

/// The geometry of Q, K, V (TraceLens's `extract_sdpa_cfg`).
pub fn geometry(a: &OpInputs, l: &Layout) -> Result<Geometry, Why> {
    let get = |i: usize| -> Result<[f64; 4], Why> {
        let s = a
            .tensor(l.q + i)
            .filter(|s| s.len() == 4)
            .ok_or("Q, K or V not 4-D")?;
        let s: [f64; 4] = [s[0], s[1], s[2], s[3]].map(|d| d.max(0) as f64);
        // → [B, H, N, d]
        Ok(if l.bnhd { [s[0], s[2], s[1], s[3]] } else { s })
    };
    let (q, k, v) = (get(0)?, get(1)?, get(2)?);
    if q[0] != k[0] || q[0] != v[0] || k[1] != v[1] || k[2] != v[2] || q[3] != k[3] {
        return Err("Q, K, V shapes disagree");
    }
    if k[1] == 0.0 {
        return Err("no key heads");
    }
    Ok(Geometry {
        b: q[0],
        h_q: q[1],
        n_q: q[2],
        h_kv: k[1],
        n_kv: k[2],
        d_qk: q[3],
        d_v: v[3],
    })
}

/// FLOPs and bytes of one attention call.
pub fn cost(a: &OpInputs, l: &Layout) -> Result<Cost, Why> {
    let g = geometry(a, l)?;
    let causal = match l.causal {
        Some(i) => match a.flag(i) {
            Some(c) => c,
            // xformers' custom_mask_type: 0 none, 1 causal from the top left, 2 bottom right.
            None => a.concrete(i).parse::<i64>().is_ok_and(|m| m != 0),
        },
        None => false,
    };
    if causal && g.n_q != g.n_kv {
        return Err("causal with N_Q ≠ N_KV");
    }
    let ty = a.ty(l.q);
    let (flops, elems) = if l.bwd {
        (flops_bwd(&g, causal, l.flash), elems_bwd(&g))
    } else {
        (flops_fwd(&g, causal), elems_fwd(&g))
    };
    Ok(Cost {
        flops,
        bytes: bytes_per_element(ty).map(|b| elems * f64::from(b)),
        precision: precision(ty),
        matrix: true,
    })
}

/// The layout of a known attention op.
pub fn layout(name: &str) -> Option<Layout> {
    let l = |q, bnhd, causal, bwd, flash| Layout {
        q,
        bnhd,
        causal: Some(causal),
        bwd,
        flash,
    };
    Some(match name {
        "aten::scaled_dot_product_attention" => l(0, false, 5, false, false),
        "aten::_scaled_dot_product_flash_attention" => l(0, false, 4, false, true),
        "aten::_scaled_dot_product_flash_attention_for_cpu" => l(0, false, 4, false, true),
        "aten::_scaled_dot_product_efficient_attention" => l(0, false, 6, false, false),
        "aten::_scaled_dot_product_cudnn_attention" => l(0, false, 6, false, false),
        "aten::_flash_attention_forward" => l(0, true, 8, false, true),
        "aten::_efficient_attention_forward" => l(0, true, 9, false, false),
        "flash_attn::_flash_attn_forward" => l(0, true, 5, false, true),
        "aten::_scaled_dot_product_flash_attention_backward" => l(1, false, 11, true, true),
        "aten::_scaled_dot_product_efficient_attention_backward" => l(1, false, 11, true, false),
        "aten::_scaled_dot_product_cudnn_attention_backward" => l(1, false, 14, true, false),
        "aten::_flash_attention_backward" => l(1, true, 11, true, true),
        "aten::_efficient_attention_backward" => l(1, true, 14, true, false),
        "flash_attn::_flash_attn_backward" => l(1, true, 11, true, true),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efficient_attention_of_the_h200_capture_by_hand() {
        // aten::_scaled_dot_product_efficient_attention q,k,v [16,4,32,32] float, not causal.
        let a = OpInputs::parse(
            Some("[[16,4,32,32],[16,4,32,32],[16,4,32,32],[],[],[],[],[]]"),
            Some(r#"["float","float","float","","Scalar","Scalar","Scalar",""]"#),
            Some(r#"["","","","","True","0.1","False",""]"#),
        );
        let l = layout("aten::_scaled_dot_product_efficient_attention").unwrap();
        let c = cost(&a, &l).unwrap();
        assert_eq!(c.flops, 16.0 * 4.0 * 4.0 * 32.0 * 32.0 * 32.0);
        assert_eq!(c.bytes, Some(4.0 * 16.0 * 4.0 * 32.0 * 32.0 * 4.0));
        // The backward (4 products, no recompute for the efficient kernel).
        let a = OpInputs::parse(
            Some("[[16,4,32,32],[16,4,32,32],[16,4,32,32],[16,4,32,32],[],[16,4,32,32],[16,4,32]]"),
            Some(r#"["float","float","float","float","","float","float"]"#),
            Some(r#"["","","","","","","","","","0.1","[True, True, True, False]","False",""]"#),
        );
        let l = layout("aten::_scaled_dot_product_efficient_attention_backward").unwrap();
        let c = cost(&a, &l).unwrap();
        assert_eq!(c.flops, 4.0 * 16.0 * 4.0 * 2.0 * 32.0 * 32.0 * 32.0);
        assert_eq!(c.bytes, Some(7.0 * 16.0 * 4.0 * 32.0 * 32.0 * 4.0));
    }

    #[test]
    fn causal_gqa_and_bnhd() {
        let g = Geometry {
            b: 2.0,
            n_q: 128.0,
            h_q: 8.0,
            n_kv: 128.0,
            h_kv: 2.0,
            d_qk: 64.0,
            d_v: 64.0,
        };
        let mm = 2.0 * 8.0 * 2.0 * 128.0 * 128.0 * 64.0;
        assert_eq!(flops_fwd(&g, false), 2.0 * mm);
        assert_eq!(flops_fwd(&g, true), mm);
        let red = 2.0 * 128.0 * 64.0 * 3.0;
        assert_eq!(flops_bwd(&g, false, true), 5.0 * mm + 2.0 * red);
        assert_eq!(flops_bwd(&g, true, false), (4.0 * mm + 2.0 * red) / 2.0);
        // flash_attn [B, N, H, d], causal at concrete 5.
        let a = OpInputs::parse(
            Some("[[2,128,8,64],[2,128,2,64],[2,128,2,64]]"),
            Some(r#"["c10::BFloat16","c10::BFloat16","c10::BFloat16"]"#),
            Some(r#"["","","","0.0","0.125","True"]"#),
        );
        let c = cost(&a, &layout("flash_attn::_flash_attn_forward").unwrap()).unwrap();
        assert_eq!(c.flops, mm);
        assert_eq!(c.bytes, Some(elems_fwd(&g) * 2.0));
        let bad = OpInputs::parse(
            Some("[[2,128,8,64],[2,64,2,64],[2,64,2,64]]"),
            None,
            Some(r#"["","","","0","0","True"]"#),
        );
        assert!(cost(&bad, &layout("flash_attn::_flash_attn_forward").unwrap()).is_err());
    }
}
