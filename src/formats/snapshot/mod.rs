//! torch CUDA caching-allocator snapshots (`torch.cuda.memory._dump_snapshot("snap.pickle")`):
//! the pickle read natively ([`pickle`]) into the memory model ([`crate::model::memory`]).
//!
//! `device_traces[d]` is a ring buffer of allocator actions (`alloc`, `free_requested`,
//! `free_completed`, `segment_alloc`, `segment_free`, `segment_map`, `segment_unmap`,
//! `snapshot`, `oom`); memory is released at `free_completed`. A `free_completed` without its
//! `alloc` is an allocation made before recording started (or pushed out of the ring buffer),
//! and blocks still allocated at snapshot time that the trace never allocated were too: both
//! count as allocated from the first entry on, as pytorch.org/memory_viz does. `segments` is the
//! allocator state at snapshot time (blocks with sizes, states and frames).

pub mod decode;
pub mod pickle;
pub mod types;
pub mod user_frame;

pub use types::{Block, Segment, SegmentTotals, Snapshot, folded_memory, frame_kept};
pub use user_frame::user_frame;

use crate::formats::{LoadError, LoadErrorKind};
use std::path::Path;

/// True when `bytes` start like a pickle (protocol 2 or later).
pub fn is_pickle(bytes: &[u8]) -> bool {
    bytes.len() >= 2 && bytes[0] == 0x80 && (2..=5).contains(&bytes[1])
}

/// Opens a snapshot file as a capture for the explorer: a capture without events spanning the
/// trace entries (its wall-clock origin the earliest entry), and the snapshot whose memory model
/// the explorer draws.
pub fn open(
    path: &Path,
    source: crate::model::SourceInfo,
) -> Result<(crate::model::Capture, Snapshot), LoadError> {
    let snap = load(path)?;
    let mut cap =
        crate::model::CaptureBuilder::new().finish(source, crate::model::Format::Snapshot);
    let times = snap.model.tracks.iter().flat_map(|t| {
        t.ts.first()
            .copied()
            .into_iter()
            .chain(t.ts.last().copied())
            .chain(t.ooms.iter().map(|o| o.ts))
    });
    let (lo, hi) = times.fold((i64::MAX, i64::MIN), |(lo, hi), t| (lo.min(t), hi.max(t)));
    cap.span = if lo <= hi {
        (lo, hi.max(lo + 1))
    } else {
        (0, 1)
    };
    if snap.origin_us != 0 {
        cap.origin_epoch_ns = Some(snap.origin_us.saturating_mul(1000));
    }
    Ok((cap, snap))
}

/// Reads a snapshot file.
pub fn load(path: &Path) -> Result<Snapshot, LoadError> {
    let data = std::fs::read(path).map_err(|e| LoadError::io(path, "cannot read", &e))?;
    load_bytes(&data, path)
}

/// Decodes snapshot bytes (`path` only names the file in errors). A pprof memory profile
/// (`jax.profiler.save_device_memory_profile`, gzipped protobuf) is read too
/// ([`crate::formats::pprof`]).
pub fn load_bytes(data: &[u8], path: &Path) -> Result<Snapshot, LoadError> {
    if !is_pickle(data) && crate::formats::pprof::maybe_pprof(data, path) {
        let p = crate::formats::pprof::decode(data, path)?;
        return crate::formats::pprof::to_snapshot(&p, path);
    }
    if !is_pickle(data) {
        return Err(LoadError::new(
            LoadErrorKind::NotATrace,
            path,
            Some(0),
            "not a pickle of protocol 2–5 (expected a torch.cuda.memory._dump_snapshot file) nor \
             a gzipped pprof profile (jax.profiler.save_device_memory_profile)",
        ));
    }
    let p = pickle::decode(data).map_err(|e| {
        let kind = if e.message.contains("ends inside") {
            LoadErrorKind::Truncated
        } else {
            LoadErrorKind::Corrupt
        };
        LoadError::new(kind, path, Some(e.offset), e.message)
    })?;
    decode::snapshot(&p).map_err(|m| LoadError::new(LoadErrorKind::NotATrace, path, None, m))
}
