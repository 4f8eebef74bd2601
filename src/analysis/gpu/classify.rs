//! HTA's kernel classification (`get_kernel_type`, `hta/utils/utils.py`): communication, memory,
//! computation or other, decided from the kernel name alone.

/// What a GPU activity does, by HTA's name rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum KernelClass {
    /// Matrix math, elementwise, ... (everything not excluded by name).
    Compute,
    /// NCCL / RCCL / HCCL collectives (and, as in HTA, every `hip*` name).
    Communication,
    /// `Memcpy*`, `Memset*`, `dma*`.
    Memory,
    /// Names HTA excludes from compute without calling them communication or memory
    /// (synchronisation, launches recorded on the device, ...).
    Other,
}

impl KernelClass {
    /// Lower-case name used in JSON and text output.
    pub fn name(self) -> &'static str {
        match self {
            KernelClass::Compute => "compute",
            KernelClass::Communication => "communication",
            KernelClass::Memory => "memory",
            KernelClass::Other => "other",
        }
    }
}

/// Names that keep a kernel out of COMPUTATION when they start the name (HTA's `re.match`
/// anchors at the start).
const NOT_COMPUTE_PREFIXES: &[&str] = &[
    "nccl",
    "Stream Wait Event",
    "runFunction",
    "hip",
    "job_exe",
    "packet",
    "pe_exe",
    "cpum_exe_subgraph",
    "hccl",
    "collective_subgraph_execution",
];

/// Names that keep a kernel out of COMPUTATION anywhere in the name (`.*X` patterns).
const NOT_COMPUTE_ANYWHERE: &[&str] = &["Memcpy", "Memset", "dma", "Sync"];

/// Classifies a kernel name with HTA's patterns, in HTA's order:
/// 1. communication `^nccl|^hip|^hccl|.*ncclKernel`;
/// 2. memory `^(hip)?Memcpy|^(hip)?Memset|^dma` (never reached for `hip*`, as in HTA);
/// 3. computation unless the name matches the exclusion list;
/// 4. other.
pub fn classify(name: &str) -> KernelClass {
    if name.starts_with("nccl")
        || name.starts_with("hip")
        || name.starts_with("hccl")
        || name.contains("ncclKernel")
    {
        return KernelClass::Communication;
    }
    if name.starts_with("Memcpy")
        || name.starts_with("hipMemcpy")
        || name.starts_with("Memset")
        || name.starts_with("hipMemset")
        || name.starts_with("dma")
    {
        return KernelClass::Memory;
    }
    let excluded = NOT_COMPUTE_PREFIXES.iter().any(|p| name.starts_with(p))
        || NOT_COMPUTE_ANYWHERE.iter().any(|p| name.contains(p))
        // `cuda.*LaunchKernel`, anchored at the start.
        || name
            .strip_prefix("cuda")
            .is_some_and(|rest| rest.contains("LaunchKernel"));
    if excluded {
        KernelClass::Other
    } else {
        KernelClass::Compute
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hta_examples() {
        use KernelClass::*;
        let cases = [
            ("ncclKernel_AllReduce_RING_LL_Sum_float", Communication),
            ("ncclDevKernel_AllGather_RING_LL", Communication),
            ("void ncclKernel_x<1>()", Communication),
            ("hipMemcpyAsync", Communication), // `^hip` wins, as in HTA
            ("hccl_allreduce", Communication),
            ("Memcpy HtoD (Pageable -> Device)", Memory),
            ("Memset (Device)", Memory),
            ("MemcpyH2D", Memory),
            ("dma_copy", Memory),
            ("ampere_sgemm_128x64_tn", Compute),
            (
                "void at::native::vectorized_elementwise_kernel<4>()",
                Compute,
            ),
            ("Context Sync", Other),
            ("Stream Wait Event", Other),
            ("cudaLaunchKernel", Other),
            ("runFunction - job_prep", Other),
            ("my_dma_kernel", Other),
            ("fused_Memcpy_like", Other),
            ("xcudaLaunchKernel", Compute), // `cuda.*LaunchKernel` is anchored
        ];
        for (n, want) in cases {
            assert_eq!(classify(n), want, "{n}");
        }
    }
}
