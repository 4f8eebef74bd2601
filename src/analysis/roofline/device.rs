//! Which device a capture ran on: Kineto's `deviceProperties` (name, compute capability, SMs)
//! or, for XPlane, the device plane's label (its `device_name` / device type stats); then its
//! peaks from [`super::peaks`].

use super::peaks::{self, Peaks};
use crate::model::{ArgValue, Capture, ProcessKind};

/// The device of a capture.
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    /// Name as the trace reports it (raw; sanitise before display).
    pub name: String,
    /// Where it came from (`deviceProperties`, `xplane`).
    pub source: &'static str,
    /// Compute capability `major.minor`, when reported.
    pub compute_capability: Option<String>,
    /// Multiprocessors, when reported.
    pub sms: Option<i64>,
    /// Published peaks, `None` for a device not in the table.
    pub peaks: Option<&'static Peaks>,
}

/// Detects the device (the first one the trace lists; `None` when it lists none).
pub fn detect(c: &Capture) -> Option<Device> {
    kineto(c).or_else(|| xplane(c))
}

fn kineto(c: &Capture) -> Option<Device> {
    let key = c.strings.lookup("deviceProperties")?;
    let v = c.args.get(c.metadata, key, &c.strings)?;
    let (ArgValue::Json(t) | ArgValue::Str(t)) = v else {
        return None;
    };
    let list: serde_json::Value = serde_json::from_str(c.strings.get(t)).ok()?;
    let first = list.as_array()?.first()?;
    let mut name = first.get("name")?.as_str()?.to_string();
    if name.trim().is_empty()
        && let Some(n) = unnamed_amd(first)
    {
        name = n.to_string();
    }
    let cc = first.get("computeMajor").and_then(|m| m.as_i64()).map(|m| {
        format!(
            "{m}.{}",
            first
                .get("computeMinor")
                .and_then(|x| x.as_i64())
                .unwrap_or(0)
        )
    });
    Some(Device {
        peaks: peaks::lookup(&name),
        name,
        source: "deviceProperties",
        compute_capability: cc,
        sms: first.get("numSms").and_then(|x| x.as_i64()),
    })
}

/// A ROCm device the trace leaves unnamed (vLLM's ROCm traces write `"name": ""`), told by
/// its architecture, compute units and memory: gfx942 (`computeMajor` 9, `computeMinor` 4) with
/// 304 CUs and 192 GiB is an MI300X (MI300A: 228 CUs, 128 GB shared; MI325X: 256 GB).
fn unnamed_amd(p: &serde_json::Value) -> Option<&'static str> {
    let int = |k: &str| p.get(k).and_then(serde_json::Value::as_i64);
    let gib = int("totalGlobalMem")? as f64 / f64::from(1u32 << 30);
    (int("computeMajor")? == 9 && int("computeMinor")? == 4 && int("numSms")? == 304)
        .then_some(())
        .filter(|_| (180.0..=200.0).contains(&gib))
        .map(|_| "AMD Instinct MI300X (unnamed in the trace: gfx942, 304 CUs, 192 GiB)")
}

/// XPlane device stats, kept as capture metadata `"<plane>: <stat>"`: `gpu_device_name`
/// (GPU), `device_type_string` / `device_name` (TPU), `compute_cap_major` / `_minor`,
/// `core_count`; else a device plane's label.
fn xplane(c: &Capture) -> Option<Device> {
    let mut name = None;
    let (mut major, mut minor, mut cores) = (None, None, None);
    for (k, v) in c.args.iter(c.metadata, &c.strings) {
        let k = c.strings.get(k);
        let Some((plane, stat)) = k.split_once(": ") else {
            continue;
        };
        if !plane.starts_with("/device:") {
            continue;
        }
        match stat {
            "gpu_device_name" | "device_type_string" | "device_name" if name.is_none() => {
                if let ArgValue::Str(s) = v {
                    name = Some(c.strings.get(s).to_string());
                }
            }
            "compute_cap_major" if major.is_none() => major = v.as_i64(&c.strings),
            "compute_cap_minor" if minor.is_none() => minor = v.as_i64(&c.strings),
            "core_count" if cores.is_none() => cores = v.as_i64(&c.strings),
            _ => {}
        }
    }
    let name = name.or_else(|| {
        c.processes
            .iter()
            .find(|p| {
                matches!(
                    p.kind,
                    ProcessKind::Gpu | ProcessKind::Tpu | ProcessKind::Device
                ) && !c.strings.get(p.label).is_empty()
            })
            .map(|p| c.strings.get(p.label).to_string())
    })?;
    Some(Device {
        peaks: peaks::lookup(&name),
        name,
        source: "xplane",
        compute_capability: major.map(|m| format!("{m}.{}", minor.unwrap_or(0))),
        sms: cores,
    })
}
