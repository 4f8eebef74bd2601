//! Memory analysis: per-(device, allocator) tracks of allocated / reserved bytes and allocations
//! built from a loaded capture ([`tracks::build`]), report figures ([`summary`]) and torch's
//! per-op memory columns of `key_averages()` ([`key_averages`]), and live bytes by call stack
//! as a flame tree ([`stack_tree`]). The model types live in
//! [`crate::model::memory`]; see docs/memory.md.

pub mod events;
pub mod key_averages;
pub mod stack_tree;
pub mod summary;
pub mod tracks;

pub use tracks::build;
