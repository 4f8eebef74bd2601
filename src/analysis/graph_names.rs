//! Names around CUDA/HIP graphs, shared by the graph analysis ([`super::graphs`]) and the
//! flame (a leaf, so the flame need not import the graph analysis that reads its links).

/// True for the name of a host call that replays a whole graph: `cudaGraphLaunch`
/// (`_v10000`, `_ptsz` variants), `cuGraphLaunch`, `hipGraphLaunch`.
pub fn is_graph_launch_name(name: &str) -> bool {
    let n = name.trim_start_matches('_');
    ["cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"]
        .iter()
        .any(|p| n.starts_with(p))
}

/// `graph (N kernels)`: the name of a graph's node in trees and tables.
pub fn graph_node_name(kernels: usize) -> String {
    format!(
        "graph ({kernels} kernel{})",
        if kernels == 1 { "" } else { "s" }
    )
}
