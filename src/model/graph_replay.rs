//! What the graph-capture merge (`formats::graph_capture`, docs/graphs.md) leaves in a capture
//! besides its slices: which graph launch each replayed kernel came from, and one line per
//! graph saying how well it matched its capture.

/// The graph side table of a capture; empty unless capture traces were merged into it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GraphReplay {
    /// (replayed device slice id, id of the `cudaGraphLaunch`/`hipGraphLaunch` slice that ran
    /// it), sorted by device slice. The merge gives a matched kernel the correlation id of its
    /// capture-time launch call, so this table is the only way back to its graph.
    pub kernel_launch: Vec<(u32, u32)>,
    /// One line per replayed graph launch merged, e.g. `hipGraphLaunch at 1.234 ms: bs=32 FULL
    /// (graph_capture_rank_0….json.gz), 421/421 kernels matched (exact)`.
    pub notes: Vec<String>,
}

impl GraphReplay {
    /// True when nothing was merged.
    pub fn is_empty(&self) -> bool {
        self.kernel_launch.is_empty() && self.notes.is_empty()
    }

    /// The graph launch slice of replayed device slice `kernel`, if it was merged.
    pub fn launch_of(&self, kernel: u32) -> Option<u32> {
        self.kernel_launch
            .binary_search_by_key(&kernel, |e| e.0)
            .ok()
            .map(|k| self.kernel_launch[k].1)
    }
}

/// True for the name of a host call that replays a whole graph: `cudaGraphLaunch`
/// (`_v10000`, `_ptsz` variants), `cuGraphLaunch`, `hipGraphLaunch`.
pub fn is_graph_launch_name(name: &str) -> bool {
    let n = name.trim_start_matches('_');
    ["cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"]
        .iter()
        .any(|p| n.starts_with(p))
}
