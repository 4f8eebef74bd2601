//! Chrome Trace Event JSON and PyTorch Kineto JSON loader.

use super::{LoadError, Progress};
use crate::model::{Capture, SourceInfo};
use std::path::Path;

/// Loads a Chrome/Kineto JSON file (plain or gzip).
pub fn load(path: &Path, _source: SourceInfo, _progress: &Progress) -> Result<Capture, LoadError> {
    Err(LoadError::new(
        path,
        None,
        "Chrome JSON loader not built yet",
    ))
}
