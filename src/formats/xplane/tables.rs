//! One plane's id tables (stat and event metadata, shared by the walk and by lazy args
//! decoding afterwards), what the walk of a plane needs besides them, and how a plane's name
//! maps to a process kind.

use super::stats::{IdTable, StatTable};
use crate::model::{ArgsRef, ProcessKind, StrId};

/// Kind of process for a plane name.
pub fn plane_kind(name: &str) -> ProcessKind {
    if name.starts_with("/device:GPU:") {
        ProcessKind::Gpu
    } else if name.starts_with("/device:TPU") {
        ProcessKind::Tpu
    } else if name.starts_with("/host:") {
        ProcessKind::Host
    } else if name == "Task Environment" {
        ProcessKind::Other
    } else {
        ProcessKind::Device
    }
}

/// Planes whose facts go to the capture metadata and which are not drawn.
pub fn plane_hidden(name: &str) -> bool {
    name == "/host:metadata" || name == "Task Environment" || name == SCOPE_TREE_PLANE
}

/// The plane whose stats map each scope range id to its parent (`kScopeRangeIdTreePlaneName`).
pub const SCOPE_TREE_PLANE: &str = "/host:__ScopeRangeCallStack__";

/// Per event-metadata facts.
#[derive(Clone, Copy, Debug, Default)]
pub struct EvMeta {
    /// Display name (display_name, else name).
    pub name: StrId,
    /// Full name.
    pub full: StrId,
    /// Metadata stats (+ `long_name`), inherited by every event of this metadata.
    pub args: ArgsRef,
    pub(super) hlo_op: StrId,
    pub(super) hlo_module: StrId,
    pub(super) tf_op: StrId,
    pub(super) source: StrId,
    /// `program_id` metadata stat.
    pub(super) program_id: Option<i64>,
    pub(super) kernel: bool,
    pub(super) memcpy: bool,
    pub(super) memset: bool,
    /// The full name starts with `cu` (CUDA API calls are not launches for Launch Stats).
    pub(super) cu: bool,
}

/// One plane's id tables, shared by the walk and, afterwards, by lazy args decoding.
#[derive(Debug, Default)]
pub struct PlaneTables {
    /// Stat metadata: names and roles.
    pub stats: StatTable,
    /// Event metadata.
    pub metas: IdTable<EvMeta>,
}

/// What the walk of a plane needs besides its tables.
#[derive(Debug)]
pub(super) struct PlanePrep {
    pub(super) kind: ProcessKind,
    pub(super) proc_: u32,
    /// Collect derivation records (a GPU plane without derived lines of its own).
    pub(super) collect_dev: bool,
    /// The `/host:CPU` plane: its events with a correlation id are kernel launches.
    pub(super) launch_plane: bool,
    /// Track of each line.
    pub(super) tracks: Vec<u32>,
}
