//! FLOPs per call against torch's own FLOP counter (`torch/utils/flop_counter.py`, torch
//! 2.15): the expected values below are what its formulas return on these shapes (run with
//! docs/oracle/torch_flop_counter.py's loader), most taken from the shared H200 capture. Where
//! TraceLens (and so tracetui) counts differently, the difference is asserted as documented in
//! docs/roofline.md: the bias term, the causal halving, 4 vs 5 products in the backward and the
//! GQA head reduction.

use super::ops::lookup;
use super::shapes::OpInputs;

fn flops(name: &str, dims: &str, types: &str, concrete: &str) -> f64 {
    let a = OpInputs::parse(Some(dims), Some(types), Some(concrete));
    lookup(name)
        .expect("model")
        .cost(name, &a)
        .expect("cost")
        .flops
}

const F3: &str = r#"["float","float","float","float"]"#;

#[test]
fn gemms() {
    // torch: mm_flop(a, b) = 2·M·N·K.
    assert_eq!(
        flops("aten::mm", "[[512,384],[384,128]]", F3, "[]"),
        50_331_648.0
    );
    assert_eq!(
        flops("aten::mm", "[[16,10],[10,4096]]", F3, "[]"),
        1_310_720.0
    );
    // torch's addmm_flop leaves the bias out: 16_777_216; TraceLens adds M·N.
    let addmm = flops("aten::addmm", "[[128],[512,128],[128,128],[],[]]", F3, "[]");
    assert_eq!(addmm, 16_777_216.0 + 512.0 * 128.0);
    assert_eq!(
        flops("aten::bmm", "[[3,64,32],[3,32,16]]", F3, "[]"),
        196_608.0
    );
    let baddbmm = flops("aten::baddbmm", "[[3,64,16],[3,64,32],[3,32,16]]", F3, "[]");
    assert_eq!(baddbmm, 196_608.0 + 3.0 * 64.0 * 16.0);
}

#[test]
fn convolutions() {
    let t = r#"["float","float","float","ScalarList","ScalarList","ScalarList","Scalar","ScalarList","Scalar"]"#;
    // torch: conv_flop_count([8,3,32,32], [16,3,3,3], [8,16,32,32]) = 7_077_888, no bias.
    let c = flops(
        "aten::convolution",
        "[[8,3,32,32],[16,3,3,3],[16],[],[],[],[],[],[]]",
        t,
        r#"["","","","[1, 1]","[1, 1]","[1, 1]","False","[0, 0]","1"]"#,
    );
    assert_eq!(c, 7_077_888.0 + 8.0 * 16.0 * 32.0 * 32.0);
    // Transposed, no bias: torch 2_592.
    let c = flops(
        "aten::convolution",
        "[[1,4,3,4],[4,3,3,3],[],[],[],[],[],[],[]]",
        t,
        r#"["","","","[2, 2]","[0, 0]","[1, 1]","True","[0, 0]","2"]"#,
    );
    assert_eq!(c, 2_592.0);
}

#[test]
fn attention() {
    let t = r#"["float","float","float","float"]"#;
    // The H200 capture's efficient attention: torch sdpa_flop_count = 8_388_608.
    let f = flops(
        "aten::_scaled_dot_product_efficient_attention",
        "[[16,4,32,32],[16,4,32,32],[16,4,32,32],[],[],[],[],[]]",
        t,
        r#"["","","","","True","0.1","False",""]"#,
    );
    assert_eq!(f, 8_388_608.0);
    // Its backward: torch counts 5 products (20_971_520); TraceLens 4 for the efficient kernel.
    let b = flops(
        "aten::_scaled_dot_product_efficient_attention_backward",
        "[[16,4,32,32],[16,4,32,32],[16,4,32,32],[16,4,32,32],[],[16,4,32,32],[16,4,32]]",
        t,
        r#"["","","","","","","","","","0.1","[True, True, True, False]","False",""]"#,
    );
    assert_eq!(b, 20_971_520.0 * 4.0 / 5.0);
    // GQA forward (h_q 8, h_kv 2): torch 67_108_864; causal is halved here, not in torch.
    let dims = "[[2,8,128,64],[2,2,128,64],[2,2,128,64]]";
    let f = flops(
        "aten::_scaled_dot_product_flash_attention",
        dims,
        t,
        r#"["","","","0.0","False"]"#,
    );
    assert_eq!(f, 67_108_864.0);
    let f = flops(
        "aten::_scaled_dot_product_flash_attention",
        dims,
        t,
        r#"["","","","0.0","True"]"#,
    );
    assert_eq!(f, 67_108_864.0 / 2.0);
    // Flash backward: torch 167_772_160 (5 products); TraceLens adds the GQA reduction of dK
    // and dV, B·N_KV·d·(H_Q/H_KV − 1) each.
    let b = flops(
        "aten::_scaled_dot_product_flash_attention_backward",
        "[[2,8,128,64],[2,8,128,64],[2,2,128,64],[2,2,128,64]]",
        t,
        r#"["","","","","","","","","","","0.0","False"]"#,
    );
    assert_eq!(b, 167_772_160.0 + 2.0 * (2.0 * 128.0 * 64.0 * 3.0));
}
