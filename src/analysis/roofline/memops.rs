//! Memory-bound op families, as TraceLens models them (`PerfModel/perf_model.py`):
//!
//! - unary elementwise (`UnaryElementwise`): FLOPs = n; bytes = n·bpe_in + n·bpe_out (the
//!   second argument's type when it is a tensor, e.g. `copy_`'s source, else the input's).
//! - binary elementwise (`BinaryElementwise`): FLOPs = n_out (the broadcast shape); bytes =
//!   n1·bpe1 + n2·bpe2 + n_out·bpe_out (a scalar counts as one element; bpe_out = the wider
//!   input when both are tensors, else the first's).
//! - reduction (`Reduce`): FLOPs = n_in; bytes = n_in·bpe + n_out·bpe.
//! - layer norm (`Normalization` / `LayerNorm` / `LayerNormBwd`) and softmax (`Softmax`).
//! - dropout (not in TraceLens): input and output plus a one-byte mask.

use super::cost::{Cost, Why, bytes_of};
use super::dtype::{bytes_per_element, precision, scalar_type_name};
use super::shapes::{OpInputs, numel};

fn vector(flops: f64, bytes: Option<f64>, ty: &str) -> Cost {
    Cost {
        flops,
        bytes,
        precision: precision(ty),
        matrix: false,
    }
}

/// Unary elementwise / copy. Each side is counted at its own element size: the output's type
/// is the second argument's when it is a tensor (`copy_`'s source), the `dtype` concrete input
/// of a conversion (`_to_copy(x, dtype=15)`: float → bf16 is 4 + 2 bytes per element, not 8),
/// else the input's.
pub fn unary(name: &str, a: &OpInputs) -> Result<Cost, Why> {
    let s = a.shape(0).ok_or("no input shape")?;
    let n = numel(s);
    let t_in = a.ty(0);
    let converted = (name == "aten::_to_copy")
        .then(|| a.concrete(1).parse::<i64>().ok())
        .flatten()
        .and_then(scalar_type_name);
    let t_out = if a.tensor(1).is_some() {
        a.ty(1)
    } else {
        converted.unwrap_or(t_in)
    };
    let bytes = bytes_of(n, t_in)
        .zip(bytes_of(n, t_out))
        .map(|(x, y)| x + y);
    Ok(vector(n, bytes, t_in))
}

/// Write-only fills (`fill_`, `zero_`; not in TraceLens): no FLOPs, n·bpe bytes.
pub fn fill(a: &OpInputs) -> Result<Cost, Why> {
    let n = numel(a.shape(0).ok_or("no input shape")?);
    Ok(vector(0.0, bytes_of(n, a.ty(0)), a.ty(0)))
}

/// Broadcast shape of two shapes (`None` when they do not broadcast).
pub fn broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let n = a.len().max(b.len());
    let at = |s: &[i64], i: usize| {
        if i + s.len() < n {
            1
        } else {
            s[i + s.len() - n]
        }
    };
    (0..n)
        .map(|i| {
            let (x, y) = (at(a, i), at(b, i));
            (x == y || x == 1 || y == 1).then_some(x.max(y))
        })
        .collect()
}

/// Binary elementwise.
pub fn binary(a: &OpInputs) -> Result<Cost, Why> {
    let (s1, s2) = (
        a.shape(0).ok_or("no input shape")?,
        a.shape(1).unwrap_or(&[]),
    );
    let out = broadcast(s1, s2).ok_or("shapes do not broadcast")?;
    let (n1, n2, n) = (numel(s1), numel(s2), numel(&out));
    let (b1, b2) = (bytes_per_element(a.ty(0)), bytes_per_element(a.ty(1)));
    let b_out = if a.tensor(2).is_some() {
        bytes_per_element(a.ty(2))
    } else if !s1.is_empty() && !s2.is_empty() {
        b1.zip(b2).map(|(x, y)| x.max(y))
    } else {
        b1
    };
    let bytes = match (b1, b2, b_out) {
        (Some(x), Some(y), Some(o)) => {
            Some(n1 * f64::from(x) + n2 * f64::from(y) + n * f64::from(o))
        }
        _ => None,
    };
    Ok(vector(n, bytes, a.ty(0)))
}

/// Reduction over `dim` (concrete input 1; none = all) with `keepdim` (the next `True` /
/// `False`); `cumsum`/`cumprod` keep the shape. TraceLens reads the concrete inputs as typed
/// values, but the trace records strings, so it always counts one output element; here the
/// recorded dims are used.
pub fn reduce(name: &str, a: &OpInputs) -> Result<Cost, Why> {
    let s = a.shape(0).ok_or("no input shape")?;
    let n_in = numel(s);
    let n_out = if name.contains("cumsum") || name.contains("cumprod") {
        n_in
    } else {
        match a.int_list(1).filter(|d| !d.is_empty()) {
            Some(dims) => {
                let keep =
                    (2..a.concrete.len()).any(|i| a.concrete(i).eq_ignore_ascii_case("true"));
                let r = s.len() as i64;
                let mut out = Vec::with_capacity(s.len());
                for (i, &d) in s.iter().enumerate() {
                    let reduced = dims
                        .iter()
                        .any(|&x| (if x < 0 { r + x } else { x }) == i as i64);
                    if !reduced {
                        out.push(d);
                    } else if keep {
                        out.push(1);
                    }
                }
                numel(&out)
            }
            None => 1.0,
        }
    };
    let t = a.ty(0);
    let bytes = bytes_of(n_in, t)
        .zip(bytes_of(n_out, t))
        .map(|(x, y)| x + y);
    Ok(vector(n_in, bytes, t))
}

/// Layer norm forward: `(input, normalized_shape, weight?, bias?, eps)`, training.
/// FLOPs = 3·C + 3·n + 3·C + 2·n; bytes = n·(bpe_in + bpe_out) + (2 + affine + bias + 2)·C·bpe.
pub fn layer_norm(a: &OpInputs) -> Result<Cost, Why> {
    let n = numel(a.shape(0).ok_or("no input shape")?);
    let c = numel(&a.int_list(1).ok_or("no normalized_shape")?);
    let (affine, bias) = (a.tensor(2).is_some(), a.tensor(3).is_some());
    let flops = c * 3.0 + n * 3.0 + c * 3.0 + 2.0 * n;
    let weights =
        2.0 + if affine {
            1.0 + if bias { 1.0 } else { 0.0 }
        } else {
            0.0
        } + 2.0;
    let t = a.ty(0);
    let bytes = bytes_per_element(t).map(|b| {
        let b = f64::from(b);
        2.0 * n * b + weights * c * b
    });
    Ok(vector(flops, bytes, t))
}

/// Layer norm backward: `(grad_out, input, normalized_shape, mean, rstd, weight, bias,
/// output_mask)`, training. FLOPs = C·(4·n/C + 5·n/C if mask[0] else 2·n/C); bytes =
/// n·bpe + n·bpe·(2 if mask[0] else 1) + C·bpe + (affine: C·bpe + C·bpe·(2 if bias else 1)).
pub fn layer_norm_bwd(a: &OpInputs) -> Result<Cost, Why> {
    let n = numel(a.shape(1).ok_or("no input shape")?);
    let c = numel(&a.int_list(2).ok_or("no normalized_shape")?);
    if c == 0.0 {
        return Err("empty normalized_shape");
    }
    let mask = a
        .bool_list(7)
        .filter(|m| m.len() == 3)
        .ok_or("no output_mask")?;
    let per = n / c;
    let flops = c * (4.0 * per + if mask[0] { 5.0 * per } else { 2.0 * per });
    let t = a.ty(1);
    let bytes = bytes_per_element(t).map(|b| {
        let b = f64::from(b);
        let mut x = n * b + n * b * if mask[0] { 2.0 } else { 1.0 } + c * b;
        if mask[1] {
            x += c * b + c * b * if mask[2] { 2.0 } else { 1.0 };
        }
        x
    });
    Ok(vector(flops, bytes, t))
}

/// Softmax forward `(input, dim, half_to_float)`: FLOPs = 3·n, bytes = 2·n·bpe; backward
/// `(grad_output, output, dim, input_dtype)`: twice both (TraceLens's `Softmax`).
pub fn softmax(a: &OpInputs, bwd: bool) -> Result<Cost, Why> {
    let n = numel(a.shape(0).ok_or("no input shape")?);
    let t = a.ty(0);
    let k = if bwd { 2.0 } else { 1.0 };
    Ok(vector(k * 3.0 * n, bytes_of(2.0 * k * n, t), t))
}

/// Dropout (not in TraceLens): forward `(input, p, train)` reads n, writes n and an n-byte
/// mask; backward `(grad, mask, scale)` reads n and the mask, writes n. FLOPs = n.
pub fn dropout(a: &OpInputs) -> Result<Cost, Why> {
    let n = numel(a.shape(0).ok_or("no input shape")?);
    let t = a.ty(0);
    Ok(vector(n, bytes_of(2.0 * n, t).map(|b| b + n), t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(d: &str, t: &str, c: &str) -> OpInputs {
        OpInputs::parse(Some(d), Some(t), Some(c))
    }

    #[test]
    fn elementwise_by_hand() {
        // copy_ [32,16,128] float ← float.
        let c = unary(
            "aten::copy_",
            &args(
                "[[32,16,128],[32,16,128],[]]",
                r#"["float","float","Scalar"]"#,
                "[]",
            ),
        )
        .unwrap();
        assert_eq!((c.flops, c.bytes), (65536.0, Some(65536.0 * 8.0)));
        // copy_ bf16 ← float: 2 + 4 bytes per element.
        let c = unary(
            "aten::copy_",
            &args(
                "[[4],[4],[]]",
                r#"["c10::BFloat16","float","Scalar"]"#,
                "[]",
            ),
        )
        .unwrap();
        assert_eq!(c.bytes, Some(24.0));
        // _to_copy(x float[8,512,1024], dtype=15): 4 read + 2 written per element, as the
        // side-stream capture's autocast casts record it.
        let to_bf16 = args(
            "[[8, 512, 1024], [], [], [], [], [], []]",
            r#"["float", "Scalar", "", "", "", "Scalar", ""]"#,
            r#"["", "15", "", "", "", "False", ""]"#,
        );
        let n = 8.0 * 512.0 * 1024.0;
        assert_eq!(
            unary("aten::_to_copy", &to_bf16).unwrap().bytes,
            Some(n * 6.0)
        );
        // No dtype (a device move): the input's type both ways.
        let to_dev = args(
            "[[4], [], [], []]",
            r#"["c10::BFloat16", "", "", ""]"#,
            "[]",
        );
        assert_eq!(unary("aten::_to_copy", &to_dev).unwrap().bytes, Some(16.0));
        // add_(x[32,16,384], bias[384], alpha): broadcast, out = wider.
        let c = binary(&args(
            "[[32,16,384],[384],[]]",
            r#"["float","float","Scalar"]"#,
            "[]",
        ))
        .unwrap();
        assert_eq!(c.flops, 196608.0);
        assert_eq!(c.bytes, Some(196608.0 * 4.0 + 384.0 * 4.0 + 196608.0 * 4.0));
        // add(x, 0-d long tensor, alpha): a scalar counts once, out = the first's type.
        let c = binary(&args(
            "[[16,32,128],[],[]]",
            r#"["float","long int","Scalar"]"#,
            "[]",
        ))
        .unwrap();
        assert_eq!(c.bytes, Some(65536.0 * 4.0 + 8.0 + 65536.0 * 4.0));
        assert!(binary(&args("[[3,4],[5]]", r#"["float","float"]"#, "[]")).is_err());
        let c = fill(&args("[[10]]", r#"["c10::Half"]"#, "[]")).unwrap();
        assert_eq!((c.flops, c.bytes), (0.0, Some(20.0)));
    }

    #[test]
    fn reductions_by_hand() {
        let c = reduce(
            "aten::sum",
            &args(
                "[[512,128],[],[],[]]",
                r#"["float","ScalarList","Scalar",""]"#,
                r#"["","[0]","True",""]"#,
            ),
        )
        .unwrap();
        assert_eq!(
            (c.flops, c.bytes),
            (65536.0, Some(65536.0 * 4.0 + 128.0 * 4.0))
        );
        let c = reduce(
            "aten::sum",
            &args("[[32,16,384],[],[],[]]", "[]", r#"["","[0, 1]","True",""]"#),
        )
        .unwrap();
        assert_eq!(c.bytes, None);
        let a = args(
            "[[16,32,4,32],[],[],[]]",
            r#"["float","ScalarList","Scalar",""]"#,
            r#"["","[-1]","False",""]"#,
        );
        assert_eq!(
            reduce("aten::sum", &a).unwrap().bytes,
            Some(65536.0 * 4.0 + 2048.0 * 4.0)
        );
        let a = args("[[8,4]]", r#"["float"]"#, r#"[""]"#);
        assert_eq!(
            reduce("aten::sum", &a).unwrap().bytes,
            Some(32.0 * 4.0 + 4.0)
        );
        assert_eq!(reduce("aten::cumsum", &a).unwrap().bytes, Some(64.0 * 4.0));
    }

    #[test]
    fn norms_softmax_dropout_by_hand() {
        let c = layer_norm(&args(
            "[[16,32,128],[],[128],[128],[]]",
            r#"["float","ScalarList","float","float","Scalar"]"#,
            r#"["","[128]","","","1e-05"]"#,
        ))
        .unwrap();
        let (n, ch) = (65536.0, 128.0);
        assert_eq!(c.flops, ch * 6.0 + n * 5.0);
        assert_eq!(c.bytes, Some(n * 8.0 + 6.0 * ch * 4.0));
        let c = layer_norm_bwd(&args(
            "[[16,32,128],[16,32,128],[],[16,32,1],[16,32,1],[128],[128],[]]",
            r#"["float","float","ScalarList","float","float","float","float","ScalarList"]"#,
            r#"["","","[128]","","","","","[True, True, True]"]"#,
        ))
        .unwrap();
        assert_eq!(c.flops, 9.0 * n);
        assert_eq!(c.bytes, Some(n * 4.0 * 3.0 + ch * 4.0 * 4.0));
        let c = softmax(&args("[[4,8],[],[]]", r#"["c10::BFloat16"]"#, "[]"), true).unwrap();
        // 32 elements: forward 3·32 FLOPs and 2·32·2 bytes, backward twice both.
        assert_eq!((c.flops, c.bytes), (192.0, Some(256.0)));
        let c = dropout(&args(
            "[[16,32,128],[],[]]",
            r#"["float","Scalar","Scalar"]"#,
            "[]",
        ))
        .unwrap();
        assert_eq!(c.bytes, Some(n * 9.0));
    }
}
