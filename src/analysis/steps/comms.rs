//! NCCL / RCCL collectives of one capture: which kernels are collectives (every name generation),
//! what they move (Kineto's `Collective name`, `In/Out msg nelems`, `dtype`, `Group size`,
//! `Process Group Name`, `Seq` args, on the kernel or on the enclosing `record_param_comms`), and
//! nccl-tests' bandwidth factors.

use crate::analysis::gpu::streams::GpuStreams;
use crate::model::{ArgsRef, Capture, NO_SLICE, Ps, StrId};

/// True for NCCL / RCCL collective kernels of every generation: `ncclKernel_*`,
/// `ncclDevKernel_*`, `ncclKernel_*_RING_LL_*`, `void ncclKernel…<…>`, RCCL's `rccl*` and
/// `ncclDevKernel_Generic*`, and anything else starting with `nccl` (HTA only knows
/// `ncclKernel*`, HTA#360).
pub fn is_collective_kernel(name: &str) -> bool {
    let n = name.strip_prefix("void ").unwrap_or(name).trim_start();
    n.starts_with("nccl")
        || n.starts_with("rccl")
        || n.contains("ncclKernel")
        || n.contains("ncclDevKernel")
        || n.contains("rcclKernel")
}

/// Which collective an operation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CollKind {
    /// All-reduce.
    AllReduce,
    /// All-gather.
    AllGather,
    /// Reduce-scatter.
    ReduceScatter,
    /// All-to-all.
    AllToAll,
    /// Broadcast.
    Broadcast,
    /// Reduce.
    Reduce,
    /// Send / receive (point to point).
    SendRecv,
    /// Not known from the name.
    Unknown,
}

impl CollKind {
    /// Lower-case name used in output.
    pub fn name(self) -> &'static str {
        match self {
            CollKind::AllReduce => "all_reduce",
            CollKind::AllGather => "all_gather",
            CollKind::ReduceScatter => "reduce_scatter",
            CollKind::AllToAll => "all_to_all",
            CollKind::Broadcast => "broadcast",
            CollKind::Reduce => "reduce",
            CollKind::SendRecv => "send_recv",
            CollKind::Unknown => "unknown",
        }
    }

    /// From PyTorch's `Collective name` arg (`allreduce`, `_allgather_base`,
    /// `reduce_scatter_tensor_coalesced`, `all_to_all`, `send`, …) or a kernel name
    /// (`ncclKernel_AllReduce_RING_LL_Sum_float`, `ncclDevKernel_AllGather_RING_LL`, …).
    pub fn parse(s: &str) -> CollKind {
        let l: String = s
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        let l = l
            .strip_prefix("voidnccldevkernel")
            .or_else(|| l.strip_prefix("voidncclkernel"))
            .or_else(|| l.strip_prefix("nccldevkernel"))
            .or_else(|| l.strip_prefix("ncclkernel"))
            .or_else(|| l.strip_prefix("rcclkernel"))
            .unwrap_or(&l);
        let l = l.trim_start_matches("nccl");
        let has = |p: &str| l.starts_with(p) || (l.len() < 40 && l.contains(p));
        if has("allreduce") {
            CollKind::AllReduce
        } else if has("allgather") {
            CollKind::AllGather
        } else if has("reducescatter") {
            CollKind::ReduceScatter
        } else if has("alltoall") {
            CollKind::AllToAll
        } else if has("broadcast") {
            CollKind::Broadcast
        } else if has("sendrecv") || l.starts_with("send") || l.starts_with("recv") {
            CollKind::SendRecv
        } else if l.starts_with("reduce") {
            CollKind::Reduce
        } else {
            CollKind::Unknown
        }
    }

    /// nccl-tests' size S in elements for a per-rank `count` and `n` ranks:
    /// count × n for all-gather, reduce-scatter and all-to-all, count otherwise.
    pub fn size_factor(self, n: u64) -> u64 {
        match self {
            CollKind::AllGather | CollKind::ReduceScatter | CollKind::AllToAll => n,
            _ => 1,
        }
    }

    /// nccl-tests' bus-bandwidth factor: 2(n−1)/n for all-reduce, (n−1)/n for all-gather,
    /// reduce-scatter and all-to-all, 1 otherwise.
    pub fn bus_factor(self, n: u64) -> f64 {
        let n = n.max(1) as f64;
        match self {
            CollKind::AllReduce => 2.0 * (n - 1.0) / n,
            CollKind::AllGather | CollKind::ReduceScatter | CollKind::AllToAll => (n - 1.0) / n,
            _ => 1.0,
        }
    }
}

/// Bytes of one element of a PyTorch / NCCL dtype name (`Float`, `BFloat16`, `float`, `f32`…).
pub fn dtype_bytes(s: &str) -> Option<u64> {
    let l = s.trim().to_ascii_lowercase();
    Some(match l.as_str() {
        "double" | "float64" | "f64" | "long" | "int64" | "uint64" | "complexfloat" | "i64"
        | "u64" => 8,
        "float" | "float32" | "f32" | "int" | "int32" | "uint32" | "i32" | "u32" => 4,
        "half" | "float16" | "bfloat16" | "f16" | "bf16" | "short" | "int16" | "uint16" => 2,
        "byte" | "char" | "bool" | "int8" | "uint8" | "i8" | "u8" | "int8_t" | "uint8_t" => 1,
        l if l.starts_with("float8") || l.starts_with("f8") => 1,
        _ => return None,
    })
}

/// What nccl-tests' formulas need about one collective on one rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CollSize {
    /// `In msg nelems`.
    pub in_elems: Option<u64>,
    /// `Out msg nelems`.
    pub out_elems: Option<u64>,
    /// Bytes per element from `dtype`.
    pub elem_bytes: Option<u64>,
    /// `Group size`.
    pub group_size: Option<u64>,
}

impl CollSize {
    /// nccl-tests' S in bytes: the per-rank count (in for all-gather, out for reduce-scatter,
    /// in/n for all-to-all whose `In msg nelems` is the whole send buffer, else in) times
    /// [`CollKind::size_factor`] times the element size.
    pub fn bytes(&self, kind: CollKind) -> Option<u64> {
        let n = self.group_size.unwrap_or(1).max(1);
        let count = match kind {
            CollKind::ReduceScatter => self.out_elems.or(self.in_elems.map(|i| i / n))?,
            CollKind::AllToAll => self.in_elems.map(|i| i / n)?,
            _ => self.in_elems.or(self.out_elems)?,
        };
        Some(count * kind.size_factor(n) * self.elem_bytes?)
    }
}

/// One collective kernel on one rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Collective {
    /// Kernel name (interned in the capture).
    pub kernel: StrId,
    /// Which collective.
    pub kind: CollKind,
    /// GPU stream number.
    pub stream: i64,
    /// Kernel start and end, ps from the capture origin.
    pub start: Ps,
    /// End.
    pub end: Ps,
    /// Start of the host launch, if linked.
    pub launch: Option<Ps>,
    /// `Process Group Name` (interned), if given.
    pub group: Option<StrId>,
    /// `Seq` (per process group sequence number), if given.
    pub seq: Option<i64>,
    /// Sizes for the bandwidth formulas.
    pub size: CollSize,
}

struct Keys {
    coll: Option<StrId>,
    in_n: Option<StrId>,
    out_n: Option<StrId>,
    dtype: Option<StrId>,
    gsize: Option<StrId>,
    pg: Option<StrId>,
    seq: Option<StrId>,
    rpc: Option<StrId>,
}

impl Keys {
    fn new(c: &Capture) -> Keys {
        let l = |s: &str| c.strings.lookup(s);
        Keys {
            coll: l("Collective name"),
            in_n: l("In msg nelems"),
            out_n: l("Out msg nelems"),
            dtype: l("dtype"),
            gsize: l("Group size"),
            pg: l("Process Group Name"),
            seq: l("Seq"),
            rpc: l("record_param_comms"),
        }
    }
}

fn arg_u64(c: &Capture, r: ArgsRef, k: Option<StrId>) -> Option<u64> {
    let v = c.args.get(r, k?, &c.strings)?.as_i64(&c.strings)?;
    u64::try_from(v).ok()
}

fn arg_str(c: &Capture, r: ArgsRef, k: Option<StrId>) -> Option<StrId> {
    match c.args.get(r, k?, &c.strings)? {
        crate::model::ArgValue::Str(s) => Some(s),
        v => Some(c.strings.lookup(&v.display(&c.strings))?),
    }
}

/// The args block describing a collective: the kernel's own when it has `Collective name` or
/// `In msg nelems`, else the enclosing `record_param_comms` of its launch (up to 8 levels up).
fn describing_args(c: &Capture, k: &Keys, kernel: usize, launch: u32) -> ArgsRef {
    let own = c.slices.args[kernel];
    let has = |r: ArgsRef| {
        [k.coll, k.in_n]
            .iter()
            .any(|key| key.is_some_and(|key| c.args.get(r, key, &c.strings).is_some()))
    };
    if has(own) || launch == NO_SLICE {
        return own;
    }
    for p in c.ancestors(launch).take(8) {
        let i = p as usize;
        if Some(c.slices.name[i]) == k.rpc && has(c.slices.args[i]) {
            return c.slices.args[i];
        }
    }
    own
}

/// Every collective kernel of `c` (activities of `g`), by stream then start.
pub fn collect(c: &Capture, g: &GpuStreams) -> Vec<Collective> {
    let keys = Keys::new(c);
    let a = &g.acts;
    let mut is_coll: rustc_hash::FxHashMap<StrId, bool> = Default::default();
    let mut out = Vec::new();
    for s in &g.streams {
        for i in s.rows.0..s.rows.1 {
            let slice = a.slice[i] as usize;
            let name = c.slices.name[slice];
            if !*is_coll
                .entry(name)
                .or_insert_with(|| is_collective_kernel(c.strings.get(name)))
            {
                continue;
            }
            let args = describing_args(c, &keys, slice, a.launch[i]);
            let coll_name = arg_str(c, args, keys.coll);
            let kind = match coll_name.map(|n| CollKind::parse(c.strings.get(n))) {
                Some(k) if k != CollKind::Unknown => k,
                _ => CollKind::parse(c.strings.get(name)),
            };
            let size = CollSize {
                in_elems: arg_u64(c, args, keys.in_n),
                out_elems: arg_u64(c, args, keys.out_n),
                elem_bytes: arg_str(c, args, keys.dtype)
                    .and_then(|d| dtype_bytes(c.strings.get(d))),
                group_size: arg_u64(c, args, keys.gsize),
            };
            out.push(Collective {
                kernel: name,
                kind,
                stream: s.stream,
                start: a.start[i],
                end: a.end[i],
                launch: (a.launch[i] != NO_SLICE).then(|| g.host_span(c, a.launch[i]).0),
                group: arg_str(c, args, keys.pg),
                seq: c
                    .args
                    .get(args, keys.seq.unwrap_or(StrId::EMPTY), &c.strings)
                    .filter(|_| keys.seq.is_some())
                    .and_then(|v| v.as_i64(&c.strings)),
                size,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_generation_is_a_collective() {
        for n in [
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
            "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            "void ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)",
            "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)",
            "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
            "rcclGenericKernel<1>",
        ] {
            assert!(is_collective_kernel(n), "{n}");
        }
        for n in ["ampere_sgemm_128x64_tn", "Memcpy DtoD", "my_nccl_wrapper"] {
            assert!(!is_collective_kernel(n), "{n}");
        }
    }

    #[test]
    fn kinds_from_names_and_args() {
        use CollKind::*;
        let cases = [
            (
                "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
                AllReduce,
            ),
            ("ncclDevKernel_AllGather_RING_LL(x)", AllGather),
            (
                "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)",
                ReduceScatter,
            ),
            (
                "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)",
                SendRecv,
            ),
            (
                "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*)",
                Broadcast,
            ),
            ("ncclDevKernel_Reduce_Sum_f32_RING_LL(x)", Reduce),
            ("ncclDevKernel_Generic_4(x)", Unknown),
            ("allreduce", AllReduce),
            ("_allgather_base", AllGather),
            ("reduce_scatter_tensor_coalesced", ReduceScatter),
            ("all_to_all", AllToAll),
            ("alltoall_base", AllToAll),
            ("broadcast", Broadcast),
            ("send", SendRecv),
            ("recv", SendRecv),
            ("reduce", Reduce),
        ];
        for (n, k) in cases {
            assert_eq!(CollKind::parse(n), k, "{n}");
        }
    }

    #[test]
    fn nccl_tests_sizes() {
        let s = |i, o, n| CollSize {
            in_elems: Some(i),
            out_elems: Some(o),
            elem_bytes: Some(4),
            group_size: Some(n),
        };
        // all-reduce of 1000 floats: S = 4000 B; busbw factor 2(n-1)/n.
        assert_eq!(s(1000, 1000, 8).bytes(CollKind::AllReduce), Some(4000));
        assert!((CollKind::AllReduce.bus_factor(8) - 1.75).abs() < 1e-12);
        // all-gather: 1000 per rank in, 8000 out: S = count × n × size = 32000 B.
        assert_eq!(s(1000, 8000, 8).bytes(CollKind::AllGather), Some(32000));
        // reduce-scatter: 8000 in, 1000 out: S = 1000 × 8 × 4.
        assert_eq!(s(8000, 1000, 8).bytes(CollKind::ReduceScatter), Some(32000));
        // all-to-all: 8000 in total (1000 per peer): S = 1000 × 8 × 4.
        assert_eq!(s(8000, 8000, 8).bytes(CollKind::AllToAll), Some(32000));
        assert_eq!(s(10, 10, 2).bytes(CollKind::Broadcast), Some(40));
        assert!((CollKind::AllGather.bus_factor(4) - 0.75).abs() < 1e-12);
        assert_eq!(CollKind::SendRecv.bus_factor(2), 1.0);
        assert_eq!(dtype_bytes("BFloat16"), Some(2));
        assert_eq!(dtype_bytes("Float"), Some(4));
        assert_eq!(dtype_bytes("weird"), None);
        let none = CollSize::default();
        assert_eq!(none.bytes(CollKind::AllReduce), None);
    }
}
