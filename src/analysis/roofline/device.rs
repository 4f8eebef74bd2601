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
    let name = first.get("name")?.as_str()?.to_string();
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
