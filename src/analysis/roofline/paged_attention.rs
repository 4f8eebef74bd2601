//! Paged attention of serving engines (vLLM `unified_attention_with_output`, AITER / SGLang
//! kernels), as TraceLens models it (`PerfModel/extensions/attention_perf_model_extensions.py`,
//! `InferenceAttention`; docs/conceptual/inference-analysis.md): the sum over every request of
//! the iteration, from the aggregates the iteration annotation carries
//! ([`crate::analysis::serving::annotation::Aggregates`]), and the head counts and head dims
//! from the op's recorded input shapes.
//!
//! - FLOPs = H_Q·[(2·c_sqsk·d_qk + 2·c_sqsk·d_v) − (c_sqsq·d_qk + c_sqsq·d_v)] (context
//!   requests: the rectangle over earlier chunks plus the causal triangle of the current chunk;
//!   with N_KV = N_Q, a first chunk, exactly half the square) + H_Q·(2·g_sqsk·d_qk +
//!   2·g_sqsk·d_v) (generation requests, not causal).
//! - Bytes = [Q read + O written + the current tokens' K, V] in the query's type + [the cached
//!   K, V: (sk − sq)·H_KV·(d_qk + d_v)] in the KV cache's type, for context and generation.

use super::cost::{Cost, Why};
use super::dtype::{bytes_per_element, precision};
use super::shapes::OpInputs;
use crate::analysis::serving::annotation::{Aggregates, Iteration};

/// Heads and head dims of one attention op.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Heads {
    /// Query heads.
    pub h_q: f64,
    /// Key / value heads.
    pub h_kv: f64,
    /// Query / key head dim.
    pub d_qk: f64,
    /// Value head dim.
    pub d_v: f64,
}

/// FLOPs of one call over the iteration's requests (`InferenceAttention.flops_func`).
pub fn flops(h: &Heads, a: &Aggregates) -> f64 {
    let (c_sqsk, c_sqsq, g_sqsk) = (a.c_sqsk as f64, a.c_sqsq as f64, a.g_sqsk as f64);
    let ctx = h.h_q * (2.0 * c_sqsk * (h.d_qk + h.d_v)) - h.h_q * (c_sqsq * (h.d_qk + h.d_v));
    let gen_ = h.h_q * (2.0 * g_sqsk * (h.d_qk + h.d_v));
    ctx + gen_
}

/// Bytes of one call (`InferenceAttention.bytes_func`, B = 1): `bpe` for Q, O and the
/// current tokens' K / V, `bpe_kv` for the cached K / V.
pub fn bytes(h: &Heads, a: &Aggregates, bpe: f64, bpe_kv: f64) -> f64 {
    let q_side = |sq: f64| sq * h.h_q * (h.d_qk + h.d_v) + sq * h.h_kv * (h.d_qk + h.d_v);
    let cached = |sk: f64, sq: f64| (sk - sq) * h.h_kv * (h.d_qk + h.d_v);
    let (c_sq, c_sk, g_sq, g_sk) = (a.c_sq as f64, a.c_sk as f64, a.g_sq as f64, a.g_sk as f64);
    (q_side(c_sq) + q_side(g_sq)) * bpe + (cached(c_sk, c_sq) + cached(g_sk, g_sq)) * bpe_kv
}

/// How one op records Q, K, V.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Q `[N_Q, H_Q, d_qk]` at 0, K `[…, N_KV, H_KV, d]` at 1 (d_v = K's last dim); types 0, 1
    /// (vLLM `unified_attention_with_output`, AITER `mha_varlen_fwd`).
    Varlen,
    /// As [`Layout::Varlen`], d_v from V at 2 (`fmha_v3_varlen_fwd`, `mha_batch_prefill`).
    VarlenV,
    /// Q at 2, paged K `[pages, page, H_KV, d]` at 3, V at 4; the KV cache in Q's type
    /// (SGLang `attention_paged_attention_ragged`).
    Ragged,
    /// Decode only: Q at 0, K cache `[blocks, H_KV, …]` at 2 in type 2, d_v = d_qk, context
    /// aggregates zeroed, a sliding window at concrete input 19 (`aiter::pa_decode_gluon`).
    GluonDecode,
}

/// The op name without SGLang's per-layer `_<index>` suffix (`sglang_profiler::…_12`).
pub fn base_name(name: &str) -> &str {
    if name.starts_with("sglang_profiler::") {
        let t = name.trim_end_matches(|c: char| c.is_ascii_digit());
        if t.len() < name.len()
            && let Some(t) = t.strip_suffix('_')
        {
            return t;
        }
    }
    name
}

/// The layout of a paged-attention op name (TraceLens's `pseudo_ops_perf_utils.py` table).
pub fn layout(name: &str) -> Option<Layout> {
    Some(match base_name(name) {
        "vllm::unified_attention_with_output"
        | "vllm::unified_mla_attention_with_output"
        | "aiter::mha_varlen_fwd"
        | "pseudo_mla_decode_fwd" => Layout::Varlen,
        "aiter::fmha_v3_varlen_fwd" | "aiter::mha_batch_prefill" | "pseudo_mla_prefill_fwd" => {
            Layout::VarlenV
        }
        "sglang_profiler::attention_paged_attention_ragged" => Layout::Ragged,
        "aiter::pa_decode_gluon" => Layout::GluonDecode,
        _ => return None,
    })
}

fn three(a: &OpInputs, i: usize) -> Result<[f64; 3], Why> {
    match a.tensor(i) {
        Some(&[x, y, z]) => Ok([x, y, z].map(|d| d.max(0) as f64)),
        _ => Err("query not [tokens, heads, head dim]"),
    }
}

fn last(a: &OpInputs, i: usize, from_end: usize) -> Result<f64, Why> {
    a.tensor(i)
        .and_then(|s| s.len().checked_sub(from_end).and_then(|k| s.get(k)))
        .map(|&d| d.max(0) as f64)
        .ok_or("key / value shape not recorded")
}

/// FLOPs and bytes of one call with inputs `a` inside iteration `it`.
pub fn cost(l: Layout, a: &OpInputs, it: Option<&Iteration>) -> Result<Cost, Why> {
    let it = it.ok_or("no enclosing serving-iteration annotation")?;
    if !it.has_sqsk {
        return Err("the iteration annotation has no sq/sk aggregates");
    }
    let mut agg = it.agg;
    let (heads, ty_q, ty_kv) = match l {
        Layout::Varlen | Layout::VarlenV => {
            let [_, h_q, d_qk] = three(a, 0)?;
            if a.tensor(1).is_none_or(|k| k.len() < 3) {
                return Err("key not [.., tokens, heads, head dim]");
            }
            let mut d_v = last(a, 1, 1)?;
            if l == Layout::VarlenV && a.tensor(2).is_some() {
                d_v = last(a, 2, 1)?;
            }
            let h = Heads {
                h_q,
                h_kv: last(a, 1, 2)?,
                d_qk,
                d_v,
            };
            let kv = if a.types.len() > 1 { a.ty(1) } else { a.ty(0) };
            (h, a.ty(0), kv)
        }
        Layout::Ragged => {
            let [_, h_q, d_qk] = three(a, 2)?;
            let h = Heads {
                h_q,
                h_kv: last(a, 3, 2)?,
                d_qk,
                d_v: last(a, 4, 1)?,
            };
            (h, a.ty(2), a.ty(2))
        }
        Layout::GluonDecode => {
            let q = a
                .tensor(0)
                .filter(|q| q.len() >= 3)
                .ok_or("query not 3-D")?;
            let (h_q, d_qk) = (q[1].max(0) as f64, q[2].max(0) as f64);
            let h_kv = a
                .tensor(2)
                .and_then(|k| k.get(1))
                .map(|&d| d.max(0) as f64)
                .ok_or("key cache shape not recorded")?;
            agg.c_sq = 0;
            agg.c_sk = 0;
            agg.c_sqsq = 0;
            agg.c_sqsk = 0;
            let w: i64 = a.concrete(19).parse().unwrap_or(0);
            if w > 0 && agg.g_sq > 0 {
                let cap = agg.g_sq.saturating_mul(w as u64);
                agg.g_sqsk = agg.g_sqsk.min(cap);
                agg.g_sk = agg.g_sk.min(cap);
            }
            let kv = if a.types.len() > 2 { a.ty(2) } else { a.ty(0) };
            let h = Heads {
                h_q,
                h_kv,
                d_qk,
                d_v: d_qk,
            };
            (h, a.ty(0), kv)
        }
    };
    if agg.c_sq == 0 && agg.g_sq == 0 {
        return Err("the iteration has no query tokens");
    }
    let bpe = bytes_per_element(ty_q).map_or(2.0, f64::from);
    let bpe_kv = bytes_per_element(ty_kv).map_or(bpe, f64::from);
    Ok(Cost {
        flops: flops(&heads, &agg),
        bytes: Some(bytes(&heads, &agg, bpe, bpe_kv)),
        precision: precision(ty_q),
        matrix: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::serving::annotation::parse;

    #[test]
    fn prefill_first_chunk_is_half_the_square() {
        // One request, 1024 tokens, no cache: N_KV = N_Q, causal.
        let h = Heads {
            h_q: 32.0,
            h_kv: 8.0,
            d_qk: 128.0,
            d_v: 128.0,
        };
        let n = 1024u64;
        let a = Aggregates {
            c_sq: n,
            c_sk: n,
            c_sqsq: n * n,
            c_sqsk: n * n,
            ..Aggregates::default()
        };
        let full = 32.0 * (2.0 * (n * n) as f64 * 128.0 * 2.0);
        assert_eq!(flops(&h, &a), full / 2.0);
        // Q + O (32 heads) + K + V (8 heads), 2 bytes each; nothing cached.
        let e = n as f64 * (32.0 * 256.0 + 8.0 * 256.0);
        assert_eq!(bytes(&h, &a, 2.0, 2.0), e * 2.0);
    }

    #[test]
    fn chunked_prefill_is_rectangle_plus_triangle() {
        // Second chunk of 512 tokens over 1536 cached: N_Q = 512, N_KV = 2048.
        let h = Heads {
            h_q: 8.0,
            h_kv: 2.0,
            d_qk: 64.0,
            d_v: 64.0,
        };
        let (q, kv) = (512u64, 2048u64);
        let a = Aggregates {
            c_sq: q,
            c_sk: kv,
            c_sqsq: q * q,
            c_sqsk: q * kv,
            ..Aggregates::default()
        };
        let per = |n: f64| 8.0 * 2.0 * n * 128.0; // H_Q·2·n·(d_qk + d_v)
        let rect = per((q * (kv - q)) as f64);
        let tri = per((q * q) as f64) / 2.0;
        assert_eq!(flops(&h, &a), rect + tri);
        // Cached K, V in fp8 (1 byte), the rest in bf16.
        let cur = q as f64 * (8.0 * 128.0 + 2.0 * 128.0);
        let cached = (kv - q) as f64 * 2.0 * 128.0;
        assert_eq!(bytes(&h, &a, 2.0, 1.0), cur * 2.0 + cached);
    }

    #[test]
    fn decode_row_of_tracelens_vllm_decode_full() {
        // perf_csvs/InferenceAttention_fwd.csv: GFLOPS 0.902529024, 108.08984375 MB.
        let it = parse(
            "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",
        );
        let a = OpInputs::parse(
            Some("[[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]"),
            Some(
                r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "", "", "c10::BFloat16"]"#,
            ),
            None,
        );
        let l = layout("vllm::unified_attention_with_output").unwrap();
        let c = cost(l, &a, it.as_ref()).unwrap();
        assert_eq!(c.flops, 902_529_024.0);
        assert_eq!(c.bytes, Some(108.08984375 * 1024.0 * 1024.0));
        assert!(cost(l, &a, None).is_err());
        let native = parse("execute_context_0(0)_generation_32(32)");
        assert!(cost(l, &a, native.as_ref()).is_err());
    }

    #[test]
    fn sglang_ragged_decode_row() {
        // sglang_decode perf_csvs: GFLOPS 0.53714944, 128.56640625 MB.
        let it = parse(
            "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)",
        );
        let a = OpInputs::parse(
            Some(
                "[[32, 32, 128], [10905190400], [32, 32, 128], [835874, 1, 8, 128], [835874, 1, 8, 128], [33], [20971520], [4096], [], [1], [1], []]",
            ),
            Some(
                r#"["c10::BFloat16", "unsigned char", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "int", "int", "int", "", "float", "float", ""]"#,
            ),
            None,
        );
        let l = layout("sglang_profiler::attention_paged_attention_ragged_17").unwrap();
        assert_eq!(l, Layout::Ragged);
        let c = cost(l, &a, it.as_ref()).unwrap();
        assert_eq!(c.flops, 537_149_440.0);
        assert_eq!(c.bytes, Some(128.56640625 * 1024.0 * 1024.0));
    }

    #[test]
    fn names() {
        assert_eq!(
            base_name("sglang_profiler::mha__mha_batch_prefill_167"),
            "sglang_profiler::mha__mha_batch_prefill"
        );
        assert_eq!(
            base_name("aiter::mha_batch_prefill"),
            "aiter::mha_batch_prefill"
        );
        assert_eq!(layout("aiter::mha_batch_prefill"), Some(Layout::VarlenV));
        assert_eq!(layout("aten::mm"), None);
    }
}
