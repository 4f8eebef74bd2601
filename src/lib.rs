//! tracetui: a terminal explorer for ML profiler traces.
//!
//! The pipeline, one folder per stage: [`discover`] finds captures in a log dir, [`formats`]
//! parses them into the columnar [`model`], [`index`] builds the per-lane interval index with
//! level of detail, [`analysis`] computes statistics, [`live`] watches a log dir for new and
//! changed captures, [`capture`] records new ones from running programs, [`cli`] prints headless reports and [`ui`]
//! draws the terminal explorer. Everything but `ui` is free of terminal code.

pub mod analysis;
pub mod capture;
pub mod cli;
pub mod discover;
pub mod formats;
pub mod index;
pub mod live;
pub mod model;
pub mod synth;
pub mod text;
pub mod threads;
pub mod timings;
pub mod ui;
// Parquet export and SQL (issue 28).
#[cfg(feature = "export")]
pub mod dataset;
pub mod remote;
