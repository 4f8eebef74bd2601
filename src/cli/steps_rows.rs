//! The rows of `steps --json` (`captures[].steps[]`): a step's parts per device and, on serving
//! traces, the label of its iteration. Shared by `super::steps` and `super::steps_serving`.

use super::text::ns;
use crate::analysis::serving::annotation::{Aggregates, Format, Phase};
use crate::analysis::steps::DeviceParts;
use serde::Serialize;

/// The parts of one step on one device, ns (flattened into [`DeviceJson`] and [`StepJson`]).
#[derive(Serialize, Clone, Debug)]
pub struct PartsJson {
    /// |∪ compute ∩ step|.
    pub compute_ns: i64,
    /// |∪ communication ∩ step|.
    pub communication_ns: i64,
    /// Communication not overlapped by compute.
    pub exposed_communication_ns: i64,
    /// Memory not overlapped by compute or communication.
    pub memory_ns: i64,
    /// Other busy time.
    pub other_ns: i64,
    /// No activity on any stream of the device.
    pub idle_ns: i64,
    /// Idle: the next activity was not launched yet.
    pub host_wait_ns: i64,
    /// Idle: gaps below the threshold.
    pub kernel_wait_ns: i64,
    /// Idle: the rest.
    pub idle_other_ns: i64,
    /// False when the device recorded nothing during the step (the step ends before its first
    /// activity or starts after its last: its trace started late or stopped early); every
    /// figure above is then 0, and the step is left out of device averages.
    pub device_data: bool,
}

impl PartsJson {
    pub(super) fn new(p: &DeviceParts) -> PartsJson {
        PartsJson {
            compute_ns: ns(p.compute),
            communication_ns: ns(p.communication),
            exposed_communication_ns: ns(p.exposed_communication),
            memory_ns: ns(p.memory),
            other_ns: ns(p.other),
            idle_ns: ns(p.idle),
            host_wait_ns: ns(p.host_wait),
            kernel_wait_ns: ns(p.kernel_wait),
            idle_other_ns: ns(p.idle_other),
            device_data: p.has_data(),
        }
    }
}

/// One device's parts of one step (`steps[].devices[]`), ns.
#[derive(Serialize, Clone, Debug)]
pub struct DeviceJson {
    /// Device number.
    pub device: i64,
    /// Its parts.
    #[serde(flatten)]
    pub parts: PartsJson,
}

/// One step of `steps --json` (`captures[].steps[]`); device figures are the primary device's.
#[derive(Serialize, Clone, Debug)]
pub struct StepJson {
    /// Step number.
    pub step: i64,
    /// Start from the capture's zero, ns.
    pub start_ns: i64,
    /// Wall time, ns.
    pub dur_ns: i64,
    /// The primary device's parts.
    #[serde(flatten)]
    pub parts: PartsJson,
    /// Host time in input (data-loading) annotations, ns.
    pub input_ns: i64,
    /// The last step, possibly cut off by the end of recording.
    pub partial: bool,
    /// Every device.
    pub devices: Vec<DeviceJson>,
    /// Serving traces: what the iteration runs (steps from `serving_iterations`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration: Option<IterationJson>,
}

/// The label of one serving iteration (`steps[].iteration`).
#[derive(Serialize, Clone, Debug)]
pub struct IterationJson {
    /// `prefill`, `decode`, `mixed` (both in one iteration) or `other` (diffusion, empty).
    pub phase: Phase,
    /// Annotation format (`vllm_detailed`, `sglang_native`, …).
    pub format: Format,
    /// Context (prefill) requests.
    pub context_requests: u64,
    /// Generation (decode) requests.
    pub generation_requests: u64,
    /// Tokens of the context requests.
    pub context_tokens: u64,
    /// Tokens of the generation requests.
    pub generation_tokens: u64,
    /// Batch size as TraceLens counts it (tokens in the batch where the annotation says).
    pub batch_size: u64,
    /// Σ N_Q, Σ N_KV, Σ N_Q², Σ N_Q·N_KV per request group, when the annotation carries them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregates: Option<Aggregates>,
    /// In the steady-state window (the averages are over these).
    pub in_window: bool,
    /// The annotation (raw; sanitise before display).
    pub annotation: String,
}
