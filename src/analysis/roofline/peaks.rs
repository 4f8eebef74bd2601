//! Published dense peaks per precision and memory bandwidth of the devices users have.
//! Sources (vendor datasheets) are listed per device in docs/roofline.md.

pub use super::peak::Peaks;

#[allow(clippy::too_many_arguments)]
const fn gpu(
    name: &'static str,
    fp64: Option<f64>,
    fp32: Option<f64>,
    tf32: Option<f64>,
    bf16: Option<f64>,
    fp16: Option<f64>,
    fp8: Option<f64>,
    int8: Option<f64>,
    mem_tbps: f64,
) -> Peaks {
    Peaks {
        name,
        fp64,
        fp32,
        tf32,
        bf16,
        fp16,
        fp8,
        int8,
        mem_tbps,
    }
}

/// The table: (lower-case patterns any of which the device name contains, peaks). First match
/// wins, so the more specific patterns come first.
pub const TABLE: &[(&[&str], Peaks)] = &[
    (
        &["v100"],
        gpu(
            "NVIDIA V100 SXM2",
            Some(7.8),
            Some(15.7),
            None,
            None,
            Some(125.0),
            None,
            None,
            0.9,
        ),
    ),
    (
        &["a100-sxm4-40", "a100-sxm-40", "a100 40gb", "a100-pcie-40"],
        gpu(
            "NVIDIA A100 40GB",
            Some(9.7),
            Some(19.5),
            Some(156.0),
            Some(312.0),
            Some(312.0),
            None,
            Some(624.0),
            1.555,
        ),
    ),
    (
        &["a100 80gb pcie", "a100-pcie-80", "a100 pcie"],
        gpu(
            "NVIDIA A100 80GB PCIe",
            Some(9.7),
            Some(19.5),
            Some(156.0),
            Some(312.0),
            Some(312.0),
            None,
            Some(624.0),
            1.935,
        ),
    ),
    (
        &["a100"],
        gpu(
            "NVIDIA A100 80GB SXM",
            Some(9.7),
            Some(19.5),
            Some(156.0),
            Some(312.0),
            Some(312.0),
            None,
            Some(624.0),
            2.039,
        ),
    ),
    (
        &["h100 pcie", "h100-pcie"],
        gpu(
            "NVIDIA H100 PCIe",
            Some(25.6),
            Some(51.2),
            Some(378.0),
            Some(756.0),
            Some(756.0),
            Some(1513.0),
            Some(1513.0),
            2.0,
        ),
    ),
    (
        &["h100"],
        gpu(
            "NVIDIA H100 SXM",
            Some(34.0),
            Some(67.0),
            Some(494.7),
            Some(989.4),
            Some(989.4),
            Some(1978.9),
            Some(1978.9),
            3.35,
        ),
    ),
    (
        &["h200"],
        gpu(
            "NVIDIA H200 SXM",
            Some(34.0),
            Some(67.0),
            Some(494.7),
            Some(989.4),
            Some(989.4),
            Some(1978.9),
            Some(1978.9),
            4.8,
        ),
    ),
    (
        &["b200"],
        gpu(
            "NVIDIA B200",
            Some(37.0),
            None,
            Some(1100.0),
            Some(2250.0),
            Some(2250.0),
            Some(4500.0),
            Some(4500.0),
            8.0,
        ),
    ),
    (
        &["l40s"],
        gpu(
            "NVIDIA L40S",
            None,
            Some(91.6),
            Some(183.0),
            Some(362.05),
            Some(362.05),
            Some(733.0),
            Some(733.0),
            0.864,
        ),
    ),
    (
        &[" l4", "l4 "],
        gpu(
            "NVIDIA L4",
            None,
            Some(30.3),
            Some(60.0),
            Some(121.0),
            Some(121.0),
            Some(242.5),
            Some(242.5),
            0.3,
        ),
    ),
    (
        &["t4"],
        gpu(
            "NVIDIA T4",
            None,
            Some(8.1),
            None,
            None,
            Some(65.0),
            None,
            Some(130.0),
            0.32,
        ),
    ),
    (
        &["mi250"],
        gpu(
            "AMD Instinct MI250",
            Some(45.3),
            Some(45.3),
            None,
            Some(362.1),
            Some(362.1),
            None,
            Some(362.1),
            3.2768,
        ),
    ),
    (
        &["mi325"],
        gpu(
            "AMD Instinct MI325X",
            Some(81.7),
            Some(163.4),
            Some(653.7),
            Some(1307.4),
            Some(1307.4),
            Some(2614.9),
            Some(2614.9),
            6.0,
        ),
    ),
    (
        &["mi300"],
        gpu(
            "AMD Instinct MI300X",
            Some(81.7),
            Some(163.4),
            Some(653.7),
            Some(1307.4),
            Some(1307.4),
            Some(2614.9),
            Some(2614.9),
            5.3,
        ),
    ),
];

/// The peaks of a device by its reported name (case-insensitive), or `None` when unknown.
/// TPUs: [`super::tpu_peaks`].
pub fn lookup(device_name: &str) -> Option<&'static Peaks> {
    if let Some(p) = super::tpu_peaks::lookup(device_name) {
        return Some(p);
    }
    let n = format!(" {} ", device_name.to_ascii_lowercase());
    TABLE
        .iter()
        .find(|(pats, _)| pats.iter().any(|p| n.contains(p)))
        .map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::roofline::dtype::Precision;

    #[test]
    fn names_as_devices_report_them() {
        assert_eq!(
            lookup("NVIDIA H200").map(|p| p.name),
            Some("NVIDIA H200 SXM")
        );
        assert_eq!(
            lookup("NVIDIA H100 80GB HBM3").map(|p| p.name),
            Some("NVIDIA H100 SXM")
        );
        assert_eq!(
            lookup("NVIDIA H100 PCIe").map(|p| p.name),
            Some("NVIDIA H100 PCIe")
        );
        assert_eq!(
            lookup("NVIDIA A100-SXM4-80GB").map(|p| p.name),
            Some("NVIDIA A100 80GB SXM")
        );
        assert_eq!(
            lookup("NVIDIA A100-SXM4-40GB").map(|p| p.mem_tbps),
            Some(1.555)
        );
        assert_eq!(
            lookup("Tesla V100-SXM2-16GB").map(|p| p.name),
            Some("NVIDIA V100 SXM2")
        );
        assert_eq!(lookup("NVIDIA L4").map(|p| p.name), Some("NVIDIA L4"));
        assert_eq!(lookup("NVIDIA L40S").map(|p| p.name), Some("NVIDIA L40S"));
        assert_eq!(
            lookup("AMD Instinct MI300X").map(|p| p.name),
            Some("AMD Instinct MI300X")
        );
        assert_eq!(
            lookup("TPU v5 lite").map(|p| p.name),
            Some("Google TPU v5e")
        );
        assert_eq!(lookup("TPU v5p").map(|p| p.name), Some("Google TPU v5p"));
        assert!(lookup("NVIDIA GeForce RTX 4090").is_none());
        let h = lookup("NVIDIA H200").unwrap();
        assert_eq!(h.tflops(Precision::Bf16, true), Some(989.4));
        assert_eq!(h.tflops(Precision::Bf16, false), Some(67.0));
        assert_eq!(h.tflops(Precision::Fp32, true), Some(67.0));
        assert_eq!(
            h.roof(Precision::Bf16, false),
            Some((67.0, Precision::Fp32, false))
        );
        assert_eq!(h.host_link(), Some((64.0, "PCIe Gen5 x16")));
        assert_eq!(lookup("TPU v5p").and_then(|p| p.host_link()), None);
    }
}
