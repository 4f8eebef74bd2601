//! Convolution FLOPs and bytes, as TraceLens models them (`PerfModel/perf_model.py`: `CONV`,
//! `aten_conv`, `aten_conv_bwd`):
//!
//! - forward FLOPs = Π out · 2·Π w[1:] (transposed: Π x · 2·Π w[1:]) + Π out if bias;
//!   bytes = (Π x + Π w + C_out if bias + Π out)·bpe.
//! - backward FLOPs = Π dy · 2·Π w[1:] (input grad) + Π w · 2·N·Π dy_spatial (weight grad)
//!   + Π dy if bias; bytes = 2·(Π dy + Π w + Π x)·bpe + (Π dy + C_out)·bpe if bias.
//!
//! Differences from TraceLens: the bias is present when its dims are recorded (TraceLens
//! tests for exactly three inputs, which `aten::convolution`'s nine never are), and the bias
//! gradient's bytes are scaled by bpe.

use super::cost::{Cost, Why};
use super::dtype::{bytes_per_element, precision};
use super::shapes::{OpInputs, numel};

/// Output shape of a convolution.
pub fn out_shape(x: &[i64], w: &[i64], p: &Params) -> Result<Vec<i64>, Why> {
    if x.len() < 3 || w.len() != x.len() {
        return Err("input and weight ranks disagree");
    }
    let nd = x.len() - 2;
    let at = |v: &[i64], i: usize, dflt: i64| {
        if v.len() == 1 {
            v[0]
        } else {
            v.get(i).copied().unwrap_or(dflt)
        }
    };
    let mut out = vec![x[0], if p.transposed { w[1] * p.groups } else { w[0] }];
    for i in 0..nd {
        let (n, k) = (x[2 + i], w[2 + i]);
        let (s, pad, d) = (
            at(&p.stride, i, 1),
            at(&p.padding, i, 0),
            at(&p.dilation, i, 1),
        );
        let o = if p.transposed {
            (n - 1) * s - 2 * pad + d * (k - 1) + at(&p.output_padding, i, 0) + 1
        } else {
            if s == 0 {
                return Err("zero stride");
            }
            (n + 2 * pad - d * (k - 1) - 1) / s + 1
        };
        out.push(o.max(0));
    }
    Ok(out)
}

/// Stride, padding, dilation, transposition, output padding and groups.
#[derive(Clone, Debug, Default)]
pub struct Params {
    /// Stride per spatial dim (one value: all).
    pub stride: Vec<i64>,
    /// Padding.
    pub padding: Vec<i64>,
    /// Dilation.
    pub dilation: Vec<i64>,
    /// Transposed convolution.
    pub transposed: bool,
    /// Output padding.
    pub output_padding: Vec<i64>,
    /// Groups.
    pub groups: i64,
}

fn params(a: &OpInputs, first: usize) -> Params {
    Params {
        stride: a.int_list(first).unwrap_or_default(),
        padding: a.int_list(first + 1).unwrap_or_default(),
        dilation: a.int_list(first + 2).unwrap_or_default(),
        transposed: a.flag(first + 3).unwrap_or(false),
        output_padding: a.int_list(first + 4).unwrap_or_default(),
        groups: a.concrete(first + 5).parse().unwrap_or(1).max(1),
    }
}

/// Forward FLOPs.
pub fn flops_fwd(x: &[i64], w: &[i64], out: &[i64], bias: bool, transposed: bool) -> f64 {
    let per = 2.0 * numel(&w[1..]);
    let conv = if transposed { numel(x) } else { numel(out) } * per;
    conv + if bias { numel(out) } else { 0.0 }
}

/// `aten::convolution(input, weight, bias?, stride, padding, dilation, transposed,
/// output_padding, groups)` or, `bwd`, `aten::convolution_backward(grad_output, input, weight,
/// bias_sizes, stride, padding, dilation, transposed, output_padding, groups, output_mask)`.
pub fn cost(a: &OpInputs, bwd: bool) -> Result<Cost, Why> {
    let ty = if bwd { a.ty(1) } else { a.ty(0) };
    let bpe = bytes_per_element(ty).map(f64::from);
    let (flops, elems) = if bwd {
        let dy = a.tensor(0).ok_or("no grad_output")?;
        let x = a.tensor(1).ok_or("no input")?;
        let w = a.tensor(2).ok_or("no weight")?;
        if w.len() < 2 || dy.len() < 2 {
            return Err("weight of unexpected rank");
        }
        let p = params(a, 4);
        let bias = a.bool_list(10).is_some_and(|m| m.get(2) == Some(&true));
        let input_grad = flops_fwd(dy, w, x, false, !p.transposed);
        let spatial = numel(&dy[2..]) * dy[0].max(0) as f64;
        let weight_grad = numel(w) * 2.0 * spatial;
        let flops = input_grad + weight_grad + if bias { numel(dy) } else { 0.0 };
        let elems = 2.0 * (numel(dy) + numel(w) + numel(x))
            + if bias {
                numel(dy) + dy[1].max(0) as f64
            } else {
                0.0
            };
        (flops, elems)
    } else {
        let x = a.tensor(0).ok_or("no input")?;
        let w = a.tensor(1).ok_or("no weight")?;
        // The output's size needs the stride and padding: a trace without `Concrete Inputs`
        // (before torch 2.1) does not say them, and a stride-2 layer counted at stride 1
        // reads 4× its FLOPs (ResNet-50's 7×7 stem at 301 % of the V100's peak).
        if a.int_list(3).is_none() || a.int_list(4).is_none() {
            return Err("stride / padding not recorded (no Concrete Inputs): output size unknown");
        }
        let p = params(a, 3);
        let out = out_shape(x, w, &p)?;
        let bias = a.tensor(2).is_some();
        let flops = flops_fwd(x, w, &out, bias, p.transposed);
        let elems =
            numel(x) + numel(w) + numel(&out) + if bias { out[1].max(0) as f64 } else { 0.0 };
        (flops, elems)
    };
    Ok(Cost {
        flops,
        bytes: bpe.map(|b| elems * b),
        precision: precision(ty),
        matrix: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forward_without_stride_is_not_costed() {
        // ResNet-50's stem as a 2021 Kineto trace records it: no Concrete Inputs.
        let a = OpInputs::parse(
            Some("[[32,3,224,224],[64,3,7,7],[],[],[],[],[],[],[]]"),
            Some(
                r#"["float","float","","GenericList","GenericList","GenericList","Bool","GenericList","Int"]"#,
            ),
            None,
        );
        assert!(cost(&a, false).is_err());
    }

    #[test]
    fn conv2d_by_hand() {
        // x[8,3,32,32] w[16,3,3,3] b[16], stride 1, pad 1 → out [8,16,32,32].
        let a = OpInputs::parse(
            Some("[[8,3,32,32],[16,3,3,3],[16],[],[],[],[],[],[]]"),
            Some(
                r#"["float","float","float","ScalarList","ScalarList","ScalarList","Scalar","ScalarList","Scalar"]"#,
            ),
            Some(r#"["","","","[1, 1]","[1, 1]","[1, 1]","False","[0, 0]","1"]"#),
        );
        let c = cost(&a, false).unwrap();
        let out = 8.0 * 16.0 * 32.0 * 32.0;
        assert_eq!(c.flops, out * 2.0 * 27.0 + out);
        assert_eq!(
            c.bytes,
            Some((8.0 * 3.0 * 1024.0 + 16.0 * 27.0 + 16.0 + out) * 4.0)
        );
        let p = Params {
            stride: vec![2],
            padding: vec![0],
            dilation: vec![1],
            groups: 1,
            ..Params::default()
        };
        assert_eq!(
            out_shape(&[1, 3, 7, 9], &[4, 3, 3, 3], &p).unwrap(),
            vec![1, 4, 3, 4]
        );
        let t = Params {
            transposed: true,
            groups: 2,
            ..p
        };
        assert_eq!(
            out_shape(&[1, 4, 3, 4], &[4, 3, 3, 3], &t).unwrap(),
            vec![1, 6, 7, 9]
        );
    }

    #[test]
    fn conv2d_backward_by_hand() {
        let a = OpInputs::parse(
            Some("[[8,16,32,32],[8,3,32,32],[16,3,3,3],[],[],[],[],[],[],[],[]]"),
            Some(r#"["c10::BFloat16","c10::BFloat16","c10::BFloat16"]"#),
            Some(
                r#"["","","","[16]","[1, 1]","[1, 1]","[1, 1]","False","[0, 0]","1","[True, True, True]"]"#,
            ),
        );
        let c = cost(&a, true).unwrap();
        let dy = 8.0 * 16.0 * 1024.0;
        assert_eq!(c.flops, dy * 54.0 + 432.0 * 2.0 * 8.0 * 1024.0 + dy);
        assert_eq!(
            c.bytes,
            Some((2.0 * (dy + 432.0 + 8.0 * 3.0 * 1024.0) + dy + 16.0) * 2.0)
        );
    }
}
