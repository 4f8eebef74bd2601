//! How the critical path is computed, and what a step's graph could not join.

/// Which rules build the graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// tracetui's rules: thread waits, device waits of blocking calls, gaps on the path.
    #[default]
    Full,
    /// HTA's rules (`hta/analyzers/critical_path_analysis.py`).
    Hta,
}

/// How the path is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// The rules.
    pub mode: Mode,
    /// HTA's `CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE`: a zero-weight launch → activity edge
    /// where no launch delay edge was added (HTA mode).
    pub zero_weight_launch_edges: bool,
    /// Events kept in each step's top list.
    pub top: usize,
}

/// What a step's graph could not join, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    /// Device activities whose launch was not found on a host thread.
    pub unlaunched: u64,
    /// Device activities (HTA mode) joined by neither a launch nor a previous kernel.
    pub unlinked_kernels: u64,
    /// `Event Sync` / `Stream Wait Event` markers (HTA mode; not modelled).
    pub event_syncs: u64,
    /// Edges whose negative weight was raised to 0.
    pub negative_edges: u64,
    /// Nodes on cycles (left out of the path).
    pub cyclic_nodes: u64,
}
