//! Analyses over a loaded capture: statistics tables and (later) rankings. Pure functions over
//! [`Capture`](crate::model::Capture); no terminal code.

pub mod gpu;
pub mod nesting;
pub mod stats;
pub mod unified;
