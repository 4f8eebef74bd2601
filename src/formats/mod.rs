//! File formats: each loader streams one capture file into a [`CaptureBuilder`](crate::model::CaptureBuilder).
//!
//! Shared pieces first: [`source`] (the bytes of a file: mapped, or a `.gz` inflated into a
//! temporary file), [`progress`], [`error`], [`mapped`] (maps that survive the file changing),
//! [`budget`] (memory caps); then one folder per format ([`chrome`], [`xplane`]); on top [`open`]
//! (the loader chosen by file name, the capture [`cache`]). This file only lists and re-exports.

pub mod budget;
pub mod cache;
pub mod chrome;
pub mod error;
pub mod folded;
pub mod graph_capture;
pub mod mapped;
pub mod open;
pub mod pprof;
pub mod progress;
pub mod snapshot;
pub mod source;
pub mod xplane;

pub use error::{CANCELLED, LoadError, LoadErrorKind};
pub use open::{LoadFn, format_of, load, load_capped};
pub use progress::{Progress, percent};
pub use source::is_gzip;
