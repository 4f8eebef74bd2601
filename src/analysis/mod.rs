//! Analyses over a loaded capture: statistics tables and optimizable-event rankings. Pure
//! functions over [`Capture`](crate::model::Capture); no terminal code.

pub mod nesting;
pub mod rank;
pub mod stats;
pub mod unified;
