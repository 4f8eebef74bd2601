//! XLA's GPU op profile: which HLO opcodes are elementwise, and the measured clock cycles per
//! element of one, per element type: the FLOPs `GpuHloCostAnalysis` charges
//! (`FlopsPerElement`).

/// FLOPs per result element of an elementwise op: the clock cycles of XLA's GPU op profile
/// (`xla/service/gpu/model/hlo_op_profiles_data.h`), 3 for a pair it does not list. XProf
/// runs the analysis without a device description, so XLA takes its default profile, sm_86's,
/// whatever the GPU (checked against XProf 2.24.2 on an H200 capture: docs/roofline.md).
pub fn flops_per_element(op: &str, element_type: u32) -> f64 {
    SM86.iter()
        .find(|&&(o, t, _)| o == op && t == element_type)
        .map_or(3.0, |&(_, _, c)| f64::from(c))
}

/// The elementwise opcodes (`HloInstruction::IsElementwise`, less `copy`: data movement, no
/// FLOPs), as `HloInstructionProto.opcode` spells them.
pub fn is_elementwise(op: &str) -> bool {
    ELEMENTWISE.binary_search(&op).is_ok()
}

/// Sorted.
const ELEMENTWISE: &[&str] = &[
    "abs",
    "add",
    "and",
    "atan2",
    "cbrt",
    "ceil",
    "clamp",
    "compare",
    "complex",
    "convert",
    "cosine",
    "count-leading-zeros",
    "divide",
    "erf",
    "exponential",
    "exponential-minus-one",
    "floor",
    "imag",
    "is-finite",
    "log",
    "log-plus-one",
    "logistic",
    "maximum",
    "minimum",
    "multiply",
    "negate",
    "not",
    "or",
    "popcnt",
    "power",
    "real",
    "reduce-precision",
    "remainder",
    "round-nearest-afz",
    "round-nearest-even",
    "rsqrt",
    "select",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "sign",
    "sine",
    "sqrt",
    "stochastic-convert",
    "subtract",
    "tan",
    "tanh",
    "xor",
];

/// (opcode, `PrimitiveType`, clock cycles) of XLA's `sm_86` op profile.
#[rustfmt::skip]
const SM86: &[(&str, u32, u16)] = &[
    ("add", 12, 97),
    ("add", 18, 97),
    ("atan2", 10, 482),
    ("atan2", 11, 486),
    ("atan2", 12, 3747),
    ("atan2", 15, 5353),
    ("atan2", 18, 39027),
    ("cbrt", 10, 925),
    ("cbrt", 11, 867),
    ("cbrt", 12, 6339),
    ("cosine", 10, 691),
    ("cosine", 11, 662),
    ("cosine", 12, 1717),
    ("cosine", 18, 6613),
    ("divide", 2, 370),
    ("divide", 3, 367),
    ("divide", 4, 306),
    ("divide", 5, 918),
    ("divide", 6, 306),
    ("divide", 7, 302),
    ("divide", 8, 115),
    ("divide", 9, 838),
    ("divide", 12, 2016),
    ("divide", 15, 687),
    ("divide", 18, 7941),
    ("exponential", 10, 108),
    ("exponential", 11, 86),
    ("exponential", 12, 1652),
    ("exponential", 15, 1360),
    ("exponential", 18, 4028),
    ("exponential-minus-one", 10, 396),
    ("exponential-minus-one", 11, 381),
    ("exponential-minus-one", 12, 1900),
    ("exponential-minus-one", 15, 1400),
    ("exponential-minus-one", 18, 4161),
    ("log", 10, 266),
    ("log", 11, 244),
    ("log", 12, 608),
    ("log", 15, 950),
    ("log", 18, 7599),
    ("log-plus-one", 10, 284),
    ("log-plus-one", 11, 262),
    ("log-plus-one", 12, 2073),
    ("log-plus-one", 15, 842),
    ("log-plus-one", 18, 6962),
    ("logistic", 10, 226),
    ("logistic", 11, 176),
    ("logistic", 12, 2412),
    ("multiply", 12, 97),
    ("multiply", 18, 270),
    ("power", 2, 392),
    ("power", 3, 396),
    ("power", 5, 601),
    ("power", 6, 388),
    ("power", 7, 399),
    ("power", 9, 604),
    ("power", 10, 975),
    ("power", 11, 925),
    ("power", 12, 5511),
    ("power", 15, 3351),
    ("power", 18, 18205),
    ("rsqrt", 10, 97),
    ("rsqrt", 11, 75),
    ("rsqrt", 12, 698),
    ("rsqrt", 15, 2383),
    ("rsqrt", 18, 11318),
    ("sine", 11, 662),
    ("sine", 12, 1789),
    ("sine", 18, 5878),
    ("sqrt", 10, 97),
    ("sqrt", 11, 75),
    ("sqrt", 12, 986),
    ("sqrt", 15, 3193),
    ("sqrt", 18, 15606),
    ("subtract", 12, 97),
    ("subtract", 18, 97),
    ("tanh", 10, 212),
    ("tanh", 11, 190),
    ("tanh", 12, 1609),
    ("tanh", 18, 9939),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_lookup_and_default() {
        assert_eq!(flops_per_element("exponential", 11), 86.0);
        assert_eq!(flops_per_element("add", 11), 3.0);
        assert_eq!(flops_per_element("add", 12), 97.0);
    }

    #[test]
    fn elementwise_table_is_sorted_and_uses_hlo_spellings() {
        assert!(ELEMENTWISE.windows(2).all(|w| w[0] < w[1]));
        assert!(is_elementwise("cosine") && is_elementwise("exponential"));
        assert!(!is_elementwise("cos") && !is_elementwise("broadcast") && !is_elementwise("copy"));
        // Every opcode of the profile is elementwise.
        assert!(SM86.iter().all(|&(o, _, _)| is_elementwise(o)), "{SM86:?}");
    }
}
