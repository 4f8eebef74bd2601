//! Analyses over a loaded capture: statistics tables, range aggregates, search and rankings.
//! Pure functions over [`Capture`](crate::model::Capture); no terminal code.

pub mod advise;
pub mod critical;
pub mod diff;
pub mod flame;
pub mod gpu;
pub mod graph_names;
pub mod graphs;
pub mod launch_link;
pub mod launchers;
pub mod memory;
pub mod names;
pub mod nested;
pub mod nesting;
pub mod platform;
pub mod range;
pub mod rank;
pub mod ranks;
pub mod roofline;
pub mod search;
pub mod serving;
pub mod stats;
pub mod stats_index;
pub mod steps;
pub mod torch_events;
pub mod unified;
