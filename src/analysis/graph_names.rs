//! Names around CUDA/HIP graphs, shared by the graph analysis ([`super::graphs`]) and the
//! flame (a leaf, so the flame need not import the graph analysis that reads its links). The
//! launch-name rule lives in the model, which the capture merge (`formats::graph_capture`) reads too.

pub use crate::model::graph_replay::is_graph_launch_name;

/// `graph (N kernels)`: the name of a graph's node in trees and tables.
pub fn graph_node_name(kernels: usize) -> String {
    format!(
        "graph ({kernels} kernel{})",
        if kernels == 1 { "" } else { "s" }
    )
}
