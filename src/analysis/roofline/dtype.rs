//! Element types as PyTorch records them (`Input type`): bytes per element and the precision
//! whose peak applies.

/// Precision class a peak is published for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// IEEE double.
    Fp64,
    /// IEEE single (CUDA cores / vector units; torch's default matmul does not use TF32).
    Fp32,
    /// TensorFloat-32 (tensor cores).
    Tf32,
    /// bfloat16.
    Bf16,
    /// IEEE half.
    Fp16,
    /// 8-bit floats (e4m3 / e5m2).
    Fp8,
    /// 8-bit integers.
    Int8,
}

impl Precision {
    /// Short lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp64 => "fp64",
            Precision::Fp32 => "fp32",
            Precision::Tf32 => "tf32",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
            Precision::Fp8 => "fp8",
            Precision::Int8 => "int8",
        }
    }
}

/// Bytes per element of a recorded type name — TraceLens's `name2bpe` (PerfModel/utils.py),
/// case-insensitive; `None` for types it does not know (then bytes are not modelled).
pub fn bytes_per_element(name: &str) -> Option<u32> {
    let n = name.trim().to_ascii_lowercase();
    Some(match n.as_str() {
        "double" | "long int" => 8,
        "float" | "scalar" | "int" => 4,
        "c10::half" | "c10::bfloat16" => 2,
        "c10::float8_e4m3fnuz"
        | "c10::float8_e4m3fn"
        | "c10::float8_e5m2"
        | "c10::float8_e5m2fnuz"
        | "c10::float8_e8m0fnu"
        | "unsigned char"
        | "signed char"
        | "fp8"
        | "c10::float4_e2m1fn_x2"
        | "fp4" => 1,
        _ => return None,
    })
}

/// The precision of a recorded type name (`None`: not a floating/int8 compute type).
pub fn precision(name: &str) -> Option<Precision> {
    let n = name.trim().to_ascii_lowercase();
    Some(match n.as_str() {
        "double" => Precision::Fp64,
        "float" => Precision::Fp32,
        "c10::half" => Precision::Fp16,
        "c10::bfloat16" => Precision::Bf16,
        "unsigned char" | "signed char" => Precision::Int8,
        _ if n.starts_with("c10::float8") || n == "fp8" => Precision::Fp8,
        _ => return None,
    })
}

/// The recorded type name of a c10 `ScalarType` code, as a `dtype` concrete input records it
/// (`aten::_to_copy(x, dtype=15)` → `c10::BFloat16`; `c10/core/ScalarType.h` order); `None` for
/// codes without a size here (complex, quantized, bit types).
pub fn scalar_type_name(code: i64) -> Option<&'static str> {
    Some(match code {
        0 => "unsigned char",
        1 => "signed char",
        3 => "int",
        4 => "long int",
        5 => "c10::Half",
        6 => "float",
        7 => "double",
        15 => "c10::BFloat16",
        23 => "c10::Float8_e5m2",
        24 => "c10::Float8_e4m3fn",
        25 => "c10::Float8_e5m2fnuz",
        26 => "c10::Float8_e4m3fnuz",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracelens_bytes_per_element() {
        assert_eq!(bytes_per_element("float"), Some(4));
        assert_eq!(bytes_per_element("c10::BFloat16"), Some(2));
        assert_eq!(bytes_per_element("long int"), Some(8));
        assert_eq!(bytes_per_element("Scalar"), Some(4));
        assert_eq!(bytes_per_element("c10::Float8_e4m3fn"), Some(1));
        assert_eq!(bytes_per_element("bool"), None);
        assert_eq!(precision("c10::Half"), Some(Precision::Fp16));
        assert_eq!(precision("c10::Float8_e5m2"), Some(Precision::Fp8));
        assert_eq!(precision("long int"), None);
        assert_eq!(scalar_type_name(15), Some("c10::BFloat16"));
        assert_eq!(scalar_type_name(6), Some("float"));
        assert_eq!(scalar_type_name(9), None);
    }
}
