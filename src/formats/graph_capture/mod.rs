//! Graph-mode inference: merging the traces recorded while CUDA/HIP graphs were captured
//! (`capture_traces/`, written by vLLM, SGLang, ATOM and xDiT) into the trace of their replay,
//! so every replayed kernel belongs to the op, Python stack and input shapes that launched it
//! at capture time (docs/graphs.md).
//!
//! Stages: `details` (the folder's `execution_details.json`, iteration annotations → batch
//! size) → `replay` (graph launches, their kernels, the iterations holding them) → `template`
//! (capture windows of a capture trace, copied into the replay's builder) → `align` (capture
//! launch calls ↔ replayed kernels by name) → `graft` (the capture rebuilt with the windows
//! grafted in and the kernels re-linked). `merge` holds the entry points and the matching; this file only lists.

pub mod align;
pub mod details;
mod graft;
mod merge;
pub mod replay;
pub mod template;

pub use merge::{FOLDER, capture_dir_for, merge, merge_beside, set_capture_dir};
