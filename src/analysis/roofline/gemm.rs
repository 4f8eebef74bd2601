//! GEMM FLOPs and bytes, as TraceLens models them (`PerfModel/perf_model.py`: `GEMM`,
//! `aten_mm`, `aten_addmm`, `aten_bmm`, `aten_baddbmm`, `aten_scaled_mm`, `GroupedGemm`):
//! FLOPs = B·(2·M·N·K + M·N if bias); bytes = B·(M·K + K·N + M·N + N if bias)·bpe, one element
//! size (the first matrix's) for every operand. `aten::matmul` / `aten::linear` (not in
//! TraceLens: they decompose into the ops above) use the same formula on their own shapes.

use super::cost::{Cost, Why};
use super::dtype::{bytes_per_element, precision};
use super::shapes::{OpInputs, numel};

/// One (batched) GEMM: FLOPs and bytes with element size `bpe` for inputs and `out_bpe` for
/// the output.
pub fn gemm(
    b: f64,
    m: f64,
    n: f64,
    k: f64,
    bias: bool,
    bpe: Option<u32>,
    out_bpe: Option<u32>,
) -> (f64, Option<f64>) {
    let flops = b * (2.0 * m * n * k + if bias { m * n } else { 0.0 });
    let bytes = bpe.zip(out_bpe).map(|(e, o)| {
        let (e, o) = (f64::from(e), f64::from(o));
        b * ((m * k + k * n + if bias { n } else { 0.0 }) * e + m * n * o)
    });
    (flops, bytes)
}

fn cost(b: f64, m: f64, n: f64, k: f64, bias: bool, ty: &str) -> Cost {
    let bpe = bytes_per_element(ty);
    let (flops, bytes) = gemm(b, m, n, k, bias, bpe, bpe);
    Cost {
        flops,
        bytes,
        precision: precision(ty),
        matrix: true,
    }
}

fn dim(s: &[i64], i: usize) -> Result<f64, Why> {
    s.get(i)
        .map(|&d| d.max(0) as f64)
        .ok_or("matrix of unexpected rank")
}

/// `aten::mm(A[M,K], B[K,N])`.
pub fn mm(a: &OpInputs) -> Result<Cost, Why> {
    let (x, y) = (a.tensor(0).ok_or("no A")?, a.tensor(1).ok_or("no B")?);
    Ok(cost(
        1.0,
        dim(x, 0)?,
        dim(y, 1)?,
        dim(x, 1)?,
        false,
        a.ty(0),
    ))
}

/// `aten::addmm(C, A[M,K], B[K,N])`.
pub fn addmm(a: &OpInputs) -> Result<Cost, Why> {
    let (x, y) = (a.tensor(1).ok_or("no A")?, a.tensor(2).ok_or("no B")?);
    Ok(cost(1.0, dim(x, 0)?, dim(y, 1)?, dim(x, 1)?, true, a.ty(1)))
}

/// `aten::bmm(A[B,M,K], B[B,K,N])`.
pub fn bmm(a: &OpInputs) -> Result<Cost, Why> {
    let (x, y) = (a.tensor(0).ok_or("no A")?, a.tensor(1).ok_or("no B")?);
    Ok(cost(
        dim(x, 0)?,
        dim(x, 1)?,
        dim(y, 2)?,
        dim(x, 2)?,
        false,
        a.ty(0),
    ))
}

/// `aten::baddbmm(C, A[B,M,K], B[B,K,N])`.
pub fn baddbmm(a: &OpInputs) -> Result<Cost, Why> {
    let (x, y) = (a.tensor(1).ok_or("no A")?, a.tensor(2).ok_or("no B")?);
    Ok(cost(
        dim(x, 0)?,
        dim(x, 1)?,
        dim(y, 2)?,
        dim(x, 2)?,
        true,
        a.ty(1),
    ))
}

/// `aten::_scaled_mm(A[M,K], B[K,N], scale_a, scale_b, bias?, …)`: fp8 inputs write a 2-byte
/// output (TraceLens's assumption), wider inputs their own size.
pub fn scaled_mm(a: &OpInputs) -> Result<Cost, Why> {
    let (x, y) = (a.tensor(0).ok_or("no A")?, a.tensor(1).ok_or("no B")?);
    let bias = a.tensor(4).is_some();
    let bpe = bytes_per_element(a.ty(0));
    let out = match bpe {
        Some(1) => Some(2),
        Some(b @ (2 | 4)) => Some(b),
        _ => None,
    };
    let (flops, bytes) = gemm(1.0, dim(x, 0)?, dim(y, 1)?, dim(x, 1)?, bias, bpe, out);
    Ok(Cost {
        flops,
        bytes,
        precision: precision(a.ty(0)),
        matrix: true,
    })
}

/// `aten::matmul(A, B)` with torch's broadcasting: A[…,M,K] · B[…,K,N] (a 1-D operand is a
/// vector); batch = the broadcast leading dims.
pub fn matmul(a: &OpInputs) -> Result<Cost, Why> {
    let (x, y) = (a.tensor(0).ok_or("no A")?, a.tensor(1).ok_or("no B")?);
    let (m, k, xb) = match x.len() {
        1 => (1.0, dim(x, 0)?, &x[..0]),
        r => (dim(x, r - 2)?, dim(x, r - 1)?, &x[..r - 2]),
    };
    let (n, yb) = match y.len() {
        1 => (1.0, &y[..0]),
        r => (dim(y, r - 1)?, &y[..r - 2]),
    };
    let b = broadcast_numel(xb, yb).ok_or("batch dims do not broadcast")?;
    Ok(cost(b, m, n, k, false, a.ty(0)))
}

/// `aten::linear(input[…,K], weight[N,K], bias[N]?)`: M = Π input's leading dims.
pub fn linear(a: &OpInputs) -> Result<Cost, Why> {
    let (x, w) = (
        a.tensor(0).ok_or("no input")?,
        a.tensor(1).ok_or("no weight")?,
    );
    let k = dim(x, x.len() - 1)?;
    let m = numel(&x[..x.len() - 1]);
    let n = if w.len() == 2 { dim(w, 0)? } else { 1.0 };
    Ok(cost(1.0, m, n, k, a.tensor(2).is_some(), a.ty(0)))
}

/// `aten::_grouped_mm(A, B, offs?, bias?, out_dtype?)`: A[M,K]·B[G,K,N] (rows split into G
/// groups), A[G,M,K]·B[G,K,N] (a batch), or A[M,K]·B[K,N] with K split into G groups
/// (G outputs [M,N]); G = the length of `offs`.
pub fn grouped_mm(a: &OpInputs) -> Result<Cost, Why> {
    let (x, y) = (a.tensor(0).ok_or("no A")?, a.tensor(1).ok_or("no B")?);
    let ty = a.ty(0);
    let bpe = bytes_per_element(ty).map(f64::from);
    let (flops, elems) = match (x.len(), y.len()) {
        (2, 3) => {
            let (m, k, g, n) = (dim(x, 0)?, dim(x, 1)?, dim(y, 0)?, dim(y, 2)?);
            (2.0 * m * n * k, m * k + g * k * n + m * n)
        }
        (3, 3) => {
            let (g, m, k, n) = (dim(x, 0)?, dim(x, 1)?, dim(x, 2)?, dim(y, 2)?);
            (g * 2.0 * m * n * k, g * (m * k + k * n + m * n))
        }
        (2, 2) => {
            let g = a.tensor(2).map_or(Ok(1.0), |o| dim(o, 0))?;
            let (m, k, n) = (dim(x, 0)?, dim(x, 1)?, dim(y, 1)?);
            (2.0 * m * n * k, m * k + k * n + g * m * n)
        }
        _ => return Err("grouped GEMM of unexpected ranks"),
    };
    Ok(Cost {
        flops,
        bytes: bpe.map(|b| elems * b),
        precision: precision(ty),
        matrix: true,
    })
}

/// Π of the broadcast of two batch shapes (`None` when they do not broadcast).
fn broadcast_numel(a: &[i64], b: &[i64]) -> Option<f64> {
    let n = a.len().max(b.len());
    let at = |s: &[i64], i: usize| {
        if i + s.len() < n {
            1
        } else {
            s[i + s.len() - n]
        }
    };
    let mut p = 1.0;
    for i in 0..n {
        let (x, y) = (at(a, i), at(b, i));
        if x != y && x != 1 && y != 1 {
            return None;
        }
        p *= x.max(y).max(0) as f64;
    }
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(dims: &str, types: &str) -> OpInputs {
        OpInputs::parse(Some(dims), Some(types), None)
    }

    #[test]
    fn addmm_of_the_h200_capture_by_hand() {
        // aten::addmm [[128],[512,128],[128,128]] float: 2·512·128·128 + 512·128.
        let c = addmm(&args(
            "[[128],[512,128],[128,128],[],[]]",
            r#"["float","float","float","Scalar","Scalar"]"#,
        ))
        .unwrap();
        assert_eq!(c.flops, (2 * 512 * 128 * 128 + 512 * 128) as f64);
        assert_eq!(
            c.bytes,
            Some(((512 * 128 + 128 * 128 + 512 * 128 + 128) * 4) as f64)
        );
        assert!(c.matrix);
    }

    #[test]
    fn mm_bmm_baddbmm_linear_matmul_agree_on_one_product() {
        let t = r#"["c10::BFloat16","c10::BFloat16","c10::BFloat16"]"#;
        let mm = mm(&args("[[64,32],[32,16]]", t)).unwrap();
        assert_eq!(mm.flops, 2.0 * 64.0 * 16.0 * 32.0);
        assert_eq!(mm.bytes, Some(((64 * 32 + 32 * 16 + 64 * 16) * 2) as f64));
        let b = bmm(&args("[[3,64,32],[3,32,16]]", t)).unwrap();
        assert_eq!(b.flops, 3.0 * mm.flops);
        assert_eq!(b.bytes, mm.bytes.map(|x| 3.0 * x));
        let bb = baddbmm(&args("[[3,64,16],[3,64,32],[3,32,16]]", t)).unwrap();
        assert_eq!(bb.flops, 3.0 * (mm.flops + 64.0 * 16.0));
        let mt = matmul(&args("[[4,16,32],[32,16]]", t)).unwrap();
        assert_eq!(mt.flops, 4.0 * 2.0 * 16.0 * 16.0 * 32.0);
        let mt = matmul(&args("[[5,1,16,32],[3,32,16]]", t)).unwrap();
        assert_eq!(mt.flops, 15.0 * 2.0 * 16.0 * 16.0 * 32.0);
        assert!(matmul(&args("[[2,16,32],[3,32,16]]", t)).is_err());
        // linear(x[32,16,128], w[384,128], b[384]) = addmm(M = 512).
        let l = linear(&args(
            "[[32,16,128],[384,128],[384]]",
            r#"["float","float","float"]"#,
        ))
        .unwrap();
        assert_eq!(l.flops, 2.0 * 512.0 * 384.0 * 128.0 + 512.0 * 384.0);
        let l = linear(&args("[[512,128],[384,128],[]]", r#"["float","float",""]"#)).unwrap();
        assert_eq!(l.flops, 2.0 * 512.0 * 384.0 * 128.0);
    }

    #[test]
    fn scaled_and_grouped() {
        let s = scaled_mm(&args(
            "[[16,32],[32,8],[],[],[],[]]",
            r#"["c10::Float8_e4m3fn","c10::Float8_e4m3fn"]"#,
        ))
        .unwrap();
        assert_eq!(
            s.bytes,
            Some((16 * 32 + 32 * 8) as f64 + (16 * 8 * 2) as f64)
        );
        let g = grouped_mm(&args(
            "[[100,64],[4,64,32],[4]]",
            r#"["c10::BFloat16","c10::BFloat16","int"]"#,
        ))
        .unwrap();
        assert_eq!(g.flops, 2.0 * 100.0 * 32.0 * 64.0);
        assert_eq!(
            g.bytes,
            Some(((100 * 64 + 4 * 64 * 32 + 100 * 32) * 2) as f64)
        );
        let g = grouped_mm(&args(
            "[[16,96],[96,8],[3]]",
            r#"["c10::BFloat16","c10::BFloat16","int"]"#,
        ))
        .unwrap();
        assert_eq!(g.bytes, Some(((16 * 96 + 96 * 8 + 3 * 16 * 8) * 2) as f64));
    }
}
