//! Event categories: modern and 2021-legacy Kineto `cat` strings mapped to one enum.

/// What kind of activity an event records. The raw category string is kept beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Category {
    /// CPU operator (`cpu_op`, legacy `Operator`).
    CpuOp,
    /// `record_function` / user annotation on the CPU.
    UserAnnotation,
    /// User annotation range on a GPU stream.
    GpuUserAnnotation,
    /// GPU kernel (`kernel`, legacy `Kernel`).
    Kernel,
    /// GPU memory copy.
    Memcpy,
    /// GPU memset.
    Memset,
    /// CUDA/HIP runtime API call (`cuda_runtime`, legacy `Runtime`).
    Runtime,
    /// CUDA driver API call.
    Driver,
    /// Python frame (`python_function`).
    PythonFunction,
    /// CPU instant event (`cpu_instant_event`, memory events).
    CpuInstant,
    /// Profiler overhead.
    Overhead,
    /// Profiler markers (`Trace`).
    Trace,
    /// Synchronization (`cuda_sync`, `xpu_sync`).
    Sync,
    /// Collective communication.
    Collective,
    /// Flow categories (`ac2g`, `fwdbwd`, `async`).
    Flow,
    /// Anything else (XPlane events, unknown categories).
    Other,
}

impl Category {
    /// Maps a raw `cat` string. Comma-separated lists use their first element.
    pub fn from_cat(cat: &str) -> Category {
        let c = cat.split(',').next().unwrap_or("").trim();
        match c {
            "cpu_op" | "Operator" | "operator" => Category::CpuOp,
            "user_annotation" => Category::UserAnnotation,
            "gpu_user_annotation" => Category::GpuUserAnnotation,
            "kernel" | "Kernel" => Category::Kernel,
            "gpu_memcpy" | "Memcpy" => Category::Memcpy,
            "gpu_memset" | "Memset" => Category::Memset,
            "cuda_runtime"
            | "Runtime"
            | "xpu_runtime"
            | "mtia_runtime"
            | "privateuse1_runtime"
            | "glow_runtime" => Category::Runtime,
            "cuda_driver" | "xpu_driver" | "privateuse1_driver" => Category::Driver,
            "python_function" => Category::PythonFunction,
            "cpu_instant_event" => Category::CpuInstant,
            "overhead" => Category::Overhead,
            "Trace" => Category::Trace,
            "cuda_sync" | "xpu_sync" | "cuda_event" => Category::Sync,
            "collective_comm" => Category::Collective,
            "ac2g" | "fwdbwd" | "async" | "launch" | "async_cpu_to_gpu" | "async_gpu" => {
                Category::Flow
            }
            _ => Category::Other,
        }
    }

    /// Canonical lower-case name, used for `--cat` filters (`cpu_op` matches legacy `Operator` too).
    pub fn canonical(self) -> &'static str {
        match self {
            Category::CpuOp => "cpu_op",
            Category::UserAnnotation => "user_annotation",
            Category::GpuUserAnnotation => "gpu_user_annotation",
            Category::Kernel => "kernel",
            Category::Memcpy => "gpu_memcpy",
            Category::Memset => "gpu_memset",
            Category::Runtime => "cuda_runtime",
            Category::Driver => "cuda_driver",
            Category::PythonFunction => "python_function",
            Category::CpuInstant => "cpu_instant_event",
            Category::Overhead => "overhead",
            Category::Trace => "Trace",
            Category::Sync => "cuda_sync",
            Category::Collective => "collective_comm",
            Category::Flow => "flow",
            Category::Other => "other",
        }
    }

    /// True for the device activities that do work: kernels, copies and sets (not GPU user
    /// annotations, which only span them).
    pub fn is_activity(self) -> bool {
        matches!(self, Category::Kernel | Category::Memcpy | Category::Memset)
    }

    /// True for activities that run on a device (GPU/TPU) rather than the host.
    pub fn is_device(self) -> bool {
        matches!(
            self,
            Category::Kernel | Category::Memcpy | Category::Memset | Category::GpuUserAnnotation
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_both_generations() {
        assert_eq!(Category::from_cat("cpu_op"), Category::CpuOp);
        assert_eq!(Category::from_cat("Operator"), Category::CpuOp);
        assert_eq!(Category::from_cat("Kernel"), Category::Kernel);
        assert_eq!(Category::from_cat("kernel"), Category::Kernel);
        assert_eq!(Category::from_cat("Runtime"), Category::Runtime);
        assert_eq!(Category::from_cat("gpu_memcpy"), Category::Memcpy);
        assert_eq!(Category::from_cat("weird"), Category::Other);
        assert!(Category::Kernel.is_device());
        assert!(!Category::CpuOp.is_device());
    }
}
