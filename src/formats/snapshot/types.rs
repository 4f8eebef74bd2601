//! The decoded snapshot: segments and blocks at snapshot time, their totals, the memory model
//! replayed from the device traces, and the folded stack lines memory_viz draws.

use crate::model::Ps;
use crate::model::memory::{MemoryModel, Stacks};
use serde::Serialize;

/// One block of a segment at snapshot time.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Size in bytes (rounded by the allocator).
    pub size: i64,
    /// Bytes requested (`requested_size`; legacy snapshots: first history entry's `real_size`).
    pub requested: i64,
    /// `active_allocated`, `active_pending_free`, `inactive`, ...
    pub state: String,
    /// Call stack id (in the model's stacks) or `NO_STACK`.
    pub stack: u32,
    /// Whether the block had a `frames` key (memory_viz reads `history` otherwise).
    pub has_frames: bool,
    /// Legacy `history` entries: (real_size, stack or `None` when the entry had no frames).
    pub history: Option<Vec<(i64, Option<u32>)>>,
}

/// One segment (a cudaMalloc'd or expandable range) at snapshot time.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// Device index.
    pub device: i64,
    /// Base address.
    pub address: u64,
    /// Total size in bytes.
    pub total_size: i64,
    /// Stream.
    pub stream: i64,
    /// `large` / `small`.
    pub segment_type: String,
    /// Expandable segment.
    pub is_expandable: bool,
    /// Its blocks in address order.
    pub blocks: Vec<Block>,
}

/// Totals of the segments at snapshot time, as `python -m torch.cuda._memory_viz stats` prints.
#[derive(Serialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentTotals {
    /// Segments.
    pub segments: usize,
    /// Σ segment sizes.
    pub total_reserved: i64,
    /// Σ requested bytes of `active_allocated` blocks.
    pub total_allocated: i64,
    /// Bytes lost to rounding inside active blocks.
    pub free_internal: i64,
    /// Bytes of blocks not active.
    pub free_external: i64,
}

/// A decoded allocator snapshot.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// One memory track per device with trace entries or segments.
    pub model: MemoryModel,
    /// Segments at snapshot time.
    pub segments: Vec<Segment>,
    /// Their totals.
    pub totals: SegmentTotals,
    /// Trace entries read, over all devices.
    pub entries: u64,
    /// `time_us` of the earliest trace entry: model time 0 (µs since the epoch, as torch records).
    pub origin_us: i64,
    /// Things the reader wants the user to know (truncated ring buffer, unknown actions, ...).
    pub notes: Vec<String>,
}

impl Snapshot {
    /// The earliest entry time (ps) over all tracks, 0 when there is none.
    pub fn time_zero(&self) -> Ps {
        self.model
            .tracks
            .iter()
            .filter_map(|t| t.ts.first().copied())
            .min()
            .unwrap_or(0)
    }

    /// The folded lines `python -m torch.cuda._memory_viz memory` writes (before flamegraph.pl):
    /// per block `stream_S;state;outer;…;inner bytes`, plus `<gaps>` lines for rounding.
    pub fn folded_memory(&self) -> Vec<String> {
        folded_memory(&self.segments, &self.model.stacks)
    }

    /// The folded lines of `_memory_viz segments`: like [`Snapshot::folded_memory`] with the
    /// segment address in the prefix.
    pub fn folded_segments(&self) -> Vec<String> {
        let mut out = Vec::new();
        for seg in &self.segments {
            let prefix = format!("stream_{};seg_{}", seg.stream, seg.address);
            write_blocks(&self.model.stacks, &mut out, &prefix, &seg.blocks);
        }
        out
    }
}

/// [`Snapshot::folded_memory`] of `segments` whose block stacks are ids in `stacks`.
pub fn folded_memory(segments: &[Segment], stacks: &Stacks) -> Vec<String> {
    let mut out = Vec::new();
    for seg in segments {
        let prefix = format!("stream_{}", seg.stream);
        write_blocks(stacks, &mut out, &prefix, &seg.blocks);
    }
    out
}

/// True for a frame of JAX's own Python modules (`…/jax/_src/…`, `…/jaxlib/…`).
pub fn jax_internal(file: &str) -> bool {
    file.contains("/jax/_src/") || file.contains("/jaxlib/")
}

/// memory_viz `_frame_filter`: frames of the interpreter and the unwinder are left out.
pub fn frame_kept(name: &str, file: &str) -> bool {
    const OMIT_FUNCTIONS: [&str; 8] = [
        "unwind::unwind",
        "CapturedTraceback::gather",
        "gather_with_cpp",
        "_start",
        "__libc_start_main",
        "PyEval_",
        "PyObject_",
        "PyFunction_",
    ];
    const OMIT_FILES: [&str; 10] = [
        "core/boxing",
        "/Register",
        "/Redispatch",
        "pythonrun.c",
        "Modules/main.c",
        "Objects/call.c",
        "Objects/methodobject.c",
        "pycore_ceval.h",
        "ceval.c",
        "cpython/abstract.h",
    ];
    !OMIT_FUNCTIONS.iter().any(|o| name.contains(o)) && !OMIT_FILES.iter().any(|o| file.contains(o))
}

fn fragment(stacks: &Stacks, stack: u32) -> String {
    let frames = stacks.get(stack);
    if frames.is_empty() {
        return "<non-python>".to_string();
    }
    let kept: Vec<String> = frames
        .iter()
        .rev()
        .filter_map(|&f| stacks.frames.get(f as usize))
        .filter(|f| frame_kept(&f.name, &f.file))
        .map(|f| {
            let file = f.file.rsplit('/').next().unwrap_or(&f.file);
            format!("{file}:{}:{}", f.line, f.name)
        })
        .collect();
    kept.join(";")
}

fn write_blocks(stacks: &Stacks, out: &mut Vec<String>, prefix: &str, blocks: &[Block]) {
    for b in blocks {
        let accounted = match &b.history {
            None => {
                out.push(format!(
                    "{prefix};{};{} {}",
                    b.state,
                    fragment(stacks, b.stack),
                    b.requested
                ));
                b.requested
            }
            Some(h) => {
                let mut acc = 0;
                for &(sz, st) in h {
                    acc += sz;
                    match st {
                        Some(st) => out.push(format!(
                            "{prefix};{};{} {sz}",
                            b.state,
                            fragment(stacks, st)
                        )),
                        None => out.push(format!("{prefix};{};<no-context> {sz}", b.state)),
                    }
                }
                acc
            }
        };
        let gaps = b.size - accounted;
        if gaps != 0 {
            out.push(format!("{prefix};{};<gaps> {gaps}", b.state));
        }
    }
}
