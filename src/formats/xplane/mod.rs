//! XPlane (XSpace protobuf) loader.

use super::{LoadError, Progress};
use crate::model::{Capture, SourceInfo};
use std::path::Path;

/// Loads an `.xplane.pb` / `.xplane.pb.gz` file.
pub fn load(path: &Path, _source: SourceInfo, _progress: &Progress) -> Result<Capture, LoadError> {
    Err(LoadError::new(path, None, "XPlane loader not built yet"))
}
