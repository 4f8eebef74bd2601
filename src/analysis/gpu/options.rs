//! Thresholds of the GPU analyses (HTA's defaults).

use crate::model::Ps;

/// Thresholds of the analyses (HTA's defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuOptions {
    /// A gap shorter than this is kernel wait (HTA `consecutive_kernel_delay`, 30 µs).
    pub idle_threshold: Ps,
    /// Launch runtime cut-off (HTA `runtime_cutoff`, 50 µs).
    pub runtime_cutoff: Ps,
    /// Launch delay cut-off (HTA `launch_delay_cutoff`, 100 µs).
    pub launch_delay_cutoff: Ps,
    /// Queue length that blocks the host (`CUDA_MAX_LAUNCH_QUEUE_PER_STREAM`, 1024).
    pub queue_full: i64,
    /// Reproduce HTA's preprocessing of JSON traces (ignored for XPlane): times rounded inward
    /// to whole µs (`round_down_time_stamps`), and, when the host has two or more
    /// `ProfilerStep` names, only activities launched before the last step's start
    /// (`_filter_irrelevant_gpu_kernels`).
    pub hta_compat: bool,
}

impl Default for GpuOptions {
    fn default() -> Self {
        GpuOptions {
            idle_threshold: 30_000_000,
            runtime_cutoff: 50_000_000,
            launch_delay_cutoff: 100_000_000,
            queue_full: 1024,
            hta_compat: false,
        }
    }
}
