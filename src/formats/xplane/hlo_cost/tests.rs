//! Unit tests of the HLO cost table.

use super::*;

use prost::encoding::encode_varint;

fn len_field(out: &mut Vec<u8>, field: u32, body: &[u8]) {
    crate::synth::xplane::put_len_field(field, body, out);
}

fn int_field(out: &mut Vec<u8>, field: u32, v: u64) {
    crate::synth::xplane::put_varint_field(field, v, out);
}

fn packed(out: &mut Vec<u8>, field: u32, vs: &[u64]) {
    let mut b = Vec::new();
    for &v in vs {
        encode_varint(v, &mut b);
    }
    len_field(out, field, &b);
}

const F32: u32 = 11;

/// `HloInstructionProto`: (name, opcode, f32 dims, id, operand ids, called ids).
fn instr(name: &str, op: &str, dims: &[u64], id: u64, ops: &[u64], called: &[u64]) -> Vec<u8> {
    let mut shape = Vec::new();
    int_field(&mut shape, 2, u64::from(F32));
    packed(&mut shape, 3, dims);
    let mut i = Vec::new();
    len_field(&mut i, 1, name.as_bytes());
    len_field(&mut i, 2, op.as_bytes());
    len_field(&mut i, 3, &shape);
    int_field(&mut i, 35, id);
    if !ops.is_empty() {
        packed(&mut i, 36, ops);
    }
    if !called.is_empty() {
        packed(&mut i, 38, called);
    }
    i
}

fn comp(name: &str, id: u64, root: u64, instrs: &[Vec<u8>]) -> Vec<u8> {
    let mut c = Vec::new();
    len_field(&mut c, 1, name.as_bytes());
    for i in instrs {
        len_field(&mut c, 2, i);
    }
    int_field(&mut c, 5, id);
    int_field(&mut c, 6, root);
    c
}

fn proto(comps: &[Vec<u8>]) -> Vec<u8> {
    let mut m = Vec::new();
    len_field(&mut m, 1, b"jit_f");
    for c in comps {
        len_field(&mut m, 3, c);
    }
    let mut p = Vec::new();
    len_field(&mut p, 1, &m);
    p
}

/// main: a[4,8] · b[8,16] (dot), and a softmax-like fusion over x[64,16]: e = exp(x),
/// r = reduce-sum(e) over dim 1, div = e / broadcast(r).
fn module() -> Vec<u8> {
    let add = comp(
        "add",
        1,
        12,
        &[
            instr("p", "parameter", &[], 10, &[], &[]),
            instr("q", "parameter", &[], 11, &[], &[]),
            instr("s", "add", &[], 12, &[10, 11], &[]),
        ],
    );
    let fused = comp(
        "fused",
        2,
        26,
        &[
            instr("x", "parameter", &[64, 16], 20, &[], &[]),
            instr("zero", "constant", &[], 21, &[], &[]),
            instr("e", "exponential", &[64, 16], 22, &[20], &[]),
            instr("r", "reduce", &[64], 23, &[22, 21], &[1]),
            instr("b", "broadcast", &[64, 16], 24, &[23], &[]),
            instr("unused", "parameter", &[64, 16], 25, &[], &[]),
            instr("div", "divide", &[64, 16], 26, &[22, 24], &[]),
        ],
    );
    let mut dot = instr("dot.1", "dot", &[4, 16], 33, &[30, 31], &[]);
    let mut dnums = Vec::new();
    packed(&mut dnums, 1, &[1]);
    packed(&mut dnums, 2, &[0]);
    len_field(&mut dot, 30, &dnums);
    let main = comp(
        "main",
        3,
        34,
        &[
            instr("a", "parameter", &[4, 8], 30, &[], &[]),
            instr("b", "parameter", &[8, 16], 31, &[], &[]),
            instr("x", "parameter", &[64, 16], 32, &[], &[]),
            dot,
            instr("fusion.1", "fusion", &[64, 16], 34, &[32, 32], &[2]),
        ],
    );
    proto(&[add, fused, main])
}

#[test]
fn dot_and_fusion_costs_by_hand() {
    let m = Module::decode(&module()).expect("decodes");
    let costs: Vec<(String, Option<OpCost>)> = m
        .costs()
        .into_iter()
        .map(|(i, c)| (i.name.clone(), c))
        .collect();
    // Only the ops of the entry computation (not the fused body or the reducer), less
    // parameters.
    let names: Vec<&str> = costs.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(names, ["dot.1", "fusion.1"]);
    // dot: 2 · 4·16 · 8; bytes (4·8 + 8·16 + 4·16) · 4.
    let dot = costs[0].1.expect("dot");
    assert_eq!(
        (dot.flops, dot.bytes, dot.element_type),
        (1024.0, 896.0, F32)
    );
    // fusion: divide (not in sm_86's profile: 3/element, utilization 1) + reduce
    // ((1024 − 64) · add 3, utilization 1) + exponential (sm_86 f32: 86/element) used by
    // the divide and by the reduce: utilization 2.
    let n = 1024.0;
    let want = 3.0 * n + (n - 64.0) * 3.0 + 2.0 * 86.0 * n;
    let f = costs[1].1.expect("fusion");
    assert_eq!(f.flops, want);
    // Bytes: x read once (utilization 2 capped at 1), the unused parameter not at all,
    // plus the result.
    assert_eq!(f.bytes, 4096.0 + 4096.0);
}

#[test]
fn malformed_and_opaque_are_not_costed() {
    let mut h = HloCosts::default();
    h.add(1, &[0x0a, 0xff, 0x01]);
    assert_eq!((h.malformed, h.tables.len()), (1, 0));
    h.add(2, &module());
    assert_eq!(h.tables.len(), 1);
    assert_eq!(h.tables[0].1.lines().count(), 2);
    // An opaque custom call (no cuBLAS target) has no model.
    let cc = proto(&[comp(
        "main",
        1,
        2,
        &[
            instr("p", "parameter", &[4], 1, &[], &[]),
            instr("custom-call.7", "custom-call", &[4], 2, &[1], &[]),
        ],
    )]);
    let m = Module::decode(&cc).expect("decodes");
    let c = m.costs();
    assert_eq!((c.len(), c[0].1), (1, None));
}

#[test]
fn concatenate_as_the_gpu_analysis() {
    let cat = |d0: u64, dim: u64| {
        let mut c = instr(
            "concatenate.1",
            "concatenate",
            &[8, 2 * d0],
            3,
            &[1, 2],
            &[],
        );
        packed(&mut c, 14, &[dim]);
        let p = proto(&[comp(
            "main",
            1,
            3,
            &[
                instr("a", "parameter", &[8, d0], 1, &[], &[]),
                instr("b", "parameter", &[8, d0], 2, &[], &[]),
                c,
            ],
        )]);
        let m = Module::decode(&p).expect("decodes");
        m.costs()[0].1.expect("costed").flops
    };
    // 8 × 64 results: 6 each; along dim 1 with 20-wide operands (not a warp multiple): 400.
    assert_eq!(cat(32, 1), 6.0 * 8.0 * 64.0);
    assert_eq!(cat(20, 1), 400.0 * 8.0 * 40.0);
    assert_eq!(cat(20, 0), 6.0 * 8.0 * 40.0);
}

#[test]
fn json_dims_of_a_gemm_config() {
    let cfg = r#"{"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1","2"],"rhs_contracting_dimensions":["0"]}}}"#;
    assert_eq!(
        json_ints(cfg, "lhs_contracting_dimensions"),
        Some(vec![1, 2])
    );
    assert_eq!(json_ints(cfg, "missing"), None);
}
