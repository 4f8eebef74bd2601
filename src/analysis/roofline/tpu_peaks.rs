//! Google TPU peaks per generation (v4, v5e, v5p, v6e, TPU7x), selected from the device name
//! a TPU plane records (`device_type_string`, XProf's `TPU v6 Lite`). Figures per chip from the
//! Google Cloud TPU system architecture pages (docs/roofline.md lists them); the peaks a row is
//! measured against are per XLA device, so a generation whose chip is two devices (TPU7x: two
//! chiplets, one TensorCore each) divides them by two.
//!
//! A TPU has one compute peak per precision on its matrix units (MXU) and no separate vector
//! figure: XProf measures every op against the chip's one `peak_flop_rate` (BF16), which is
//! what the cost-stat rows use ([`super::xla`]).

use super::peak::Peaks;

/// One TPU generation, per chip, as Google Cloud's documentation gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TpuChip {
    /// Display name.
    pub name: &'static str,
    /// Lower-case patterns any of which the padded device name (` tpu v6 lite `) contains.
    pub patterns: &'static [&'static str],
    /// BF16 peak per chip, TFLOP/s.
    pub bf16: f64,
    /// INT8 peak per chip, TOP/s (`None`: not published).
    pub int8: Option<f64>,
    /// FP8 peak per chip, TFLOP/s (`None`: no FP8 units or not published).
    pub fp8: Option<f64>,
    /// HBM bandwidth per chip, GB/s.
    pub hbm_gbps: f64,
    /// XLA devices (profile planes) per chip: 2 on TPU7x (two chiplets), else 1 (v4 and v5p
    /// join their two TensorCores into one megacore device).
    pub devices_per_chip: u32,
}

impl TpuChip {
    /// The peaks of one XLA device of this chip.
    pub const fn device_peaks(&self) -> Peaks {
        let d = self.devices_per_chip as f64;
        Peaks {
            name: self.name,
            fp64: None,
            fp32: None,
            tf32: None,
            bf16: Some(self.bf16 / d),
            fp16: None,
            fp8: match self.fp8 {
                Some(f) => Some(f / d),
                None => None,
            },
            int8: match self.int8 {
                Some(f) => Some(f / d),
                None => None,
            },
            mem_tbps: self.hbm_gbps / 1000.0 / d,
        }
    }
}

/// The generations, more specific patterns first (`tpu v5 lite` before `tpu v5`).
pub const CHIPS: &[TpuChip] = &[
    TpuChip {
        name: "Google TPU v4",
        patterns: &["tpu v4", "tpu_v4", "tpuv4"],
        bf16: 275.0,
        int8: Some(275.0),
        fp8: None,
        hbm_gbps: 1200.0,
        devices_per_chip: 1,
    },
    TpuChip {
        name: "Google TPU v5e",
        patterns: &[
            "tpu v5 lite",
            "tpu v5e",
            "tpu_v5e",
            "tpu v5litepod",
            "v5lite",
        ],
        bf16: 197.0,
        int8: Some(394.0),
        fp8: None,
        hbm_gbps: 819.0,
        devices_per_chip: 1,
    },
    TpuChip {
        name: "Google TPU v5p",
        patterns: &["tpu v5p", "tpu_v5p", "tpu v5"],
        bf16: 459.0,
        int8: Some(918.0),
        fp8: None,
        hbm_gbps: 2765.0,
        devices_per_chip: 1,
    },
    TpuChip {
        name: "Google TPU v6e",
        patterns: &["tpu v6", "tpu_v6", "trillium"],
        bf16: 918.0,
        int8: Some(1836.0),
        fp8: None,
        hbm_gbps: 1638.0,
        devices_per_chip: 1,
    },
    TpuChip {
        name: "Google TPU7x (Ironwood)",
        patterns: &["tpu7x", "tpu 7x", "tpu v7", "tpu_v7", "tpu7", "ironwood"],
        bf16: 2307.0,
        int8: None,
        fp8: Some(4614.0),
        hbm_gbps: 7380.0,
        devices_per_chip: 2,
    },
];

/// Per-device peaks of [`CHIPS`], in the same order.
static DEVICE_PEAKS: [Peaks; 5] = [
    CHIPS[0].device_peaks(),
    CHIPS[1].device_peaks(),
    CHIPS[2].device_peaks(),
    CHIPS[3].device_peaks(),
    CHIPS[4].device_peaks(),
];

/// The chip whose patterns the device name (case-insensitive) contains, with its index.
pub fn chip(device_name: &str) -> Option<(usize, &'static TpuChip)> {
    let n = format!(" {} ", device_name.to_ascii_lowercase());
    CHIPS
        .iter()
        .enumerate()
        .find(|(_, c)| c.patterns.iter().any(|p| n.contains(p)))
}

/// The per-device peaks of a TPU by its reported name, `None` when it names no TPU generation.
pub fn lookup(device_name: &str) -> Option<&'static Peaks> {
    chip(device_name).and_then(|(i, _)| DEVICE_PEAKS.get(i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::roofline::dtype::Precision;

    #[test]
    fn generations_by_the_names_planes_record() {
        let name = |n: &str| lookup(n).map(|p| p.name);
        assert_eq!(name("TPU v6 Lite"), Some("Google TPU v6e"));
        assert_eq!(name("TPU v5 lite"), Some("Google TPU v5e"));
        assert_eq!(name("TPU v5"), Some("Google TPU v5p"));
        assert_eq!(name("TPU v5p"), Some("Google TPU v5p"));
        assert_eq!(name("TPU v4"), Some("Google TPU v4"));
        assert_eq!(name("TPU7x"), Some("Google TPU7x (Ironwood)"));
        assert_eq!(name("NVIDIA H100"), None);
        assert_eq!(DEVICE_PEAKS.len(), CHIPS.len());
    }

    #[test]
    fn peaks_per_device() {
        let v6 = lookup("TPU v6 Lite").expect("v6e");
        // XProf 2.24.2 on a v6e: peak_flop_rate 918000 GFLOP/s, peak_hbm_bw 1525.5 GiB/s.
        assert_eq!(v6.tflops(Precision::Bf16, true), Some(918.0));
        assert!((v6.mem_tbps * 1e12 / (1u64 << 30) as f64 - 1525.5).abs() < 0.1);
        assert_eq!(v6.tflops(Precision::Int8, true), Some(1836.0));
        // TPU7x: one device is one of the chip's two chiplets.
        let v7 = lookup("TPU7x").expect("v7");
        assert_eq!(v7.tflops(Precision::Bf16, true), Some(1153.5));
        assert_eq!(v7.tflops(Precision::Fp8, true), Some(2307.0));
        assert!((v7.mem_tbps - 3.69).abs() < 1e-12);
        assert_eq!(v7.host_link(), None);
    }
}
