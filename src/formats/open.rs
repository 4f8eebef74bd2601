//! Opening a capture file: the loader chosen by file name, the memory budget, the capture cache.

use super::error::{LoadError, LoadErrorKind};
use super::progress::Progress;
use super::{budget, cache, chrome, folded, graph_capture, xplane};
use crate::model::{Capture, Format, SourceInfo};
use std::path::Path;
use std::sync::atomic::Ordering;

/// Guesses the format of a file from its name (and for generic JSON, its content).
pub fn format_of(path: &Path) -> Option<Format> {
    let name = path.file_name()?.to_str()?;
    if name.ends_with(".xplane.pb") || name.ends_with(".xplane.pb.gz") {
        Some(Format::XPlane)
    } else if folded::is_folded_name(name) {
        Some(Format::Folded)
    } else if name.ends_with(".pt.trace.json") || name.ends_with(".pt.trace.json.gz") {
        Some(Format::Kineto)
    } else if name.ends_with(".trace.json.gz") || name == "perfetto_trace.json.gz" {
        Some(Format::XProfJson)
    } else if name.ends_with(".json") || name.ends_with(".json.gz") {
        Some(Format::Chrome)
    } else {
        None
    }
}

/// A loader of one file format.
pub type LoadFn = fn(&Path, SourceInfo, &Progress) -> Result<Capture, LoadError>;

/// Runs `load` under the memory budget: when `--max-events` is set or the estimated peak memory
/// of the file exceeds what the machine has available ([`budget`]), the loader keeps at most that
/// many events and its `capped` warning says why.
pub fn load_capped(
    path: &Path,
    source: SourceInfo,
    progress: &Progress,
    xplane: bool,
    load: LoadFn,
) -> Result<Capture, LoadError> {
    let bytes = match source.file_bytes {
        0 => std::fs::metadata(path).map_or(0, |m| m.len()),
        n => n,
    };
    let cap = budget::cap_for_file(path, bytes, xplane);
    if let Some(c) = &cap {
        let n = progress
            .max_events()
            .map_or(c.max_events, |m| m.min(c.max_events));
        progress.max_events.store(n, Ordering::Relaxed);
    }
    let mut r = load(path, source, progress);
    if let (Ok(c), Some(cap)) = (&mut r, &cap)
        && let Some(w) = c.warnings.iter_mut().find(|w| w.kind == "capped")
    {
        w.message = format!("{} ({})", w.message, cap.reason);
    }
    r
}

/// Loads one capture file, choosing the loader by file name (under the memory budget, see
/// [`load_capped`]).
pub fn load(path: &Path, source: SourceInfo, progress: &Progress) -> Result<Capture, LoadError> {
    match format_of(path) {
        Some(Format::XPlane) => load_capped(path, source, progress, true, xplane::load),
        Some(Format::Folded) => folded::load(path, source, progress),
        Some(_) if graph_capture::capture_dir_for(path).is_some() => {
            // Graph capture traces to merge: never from or into the cache (`cache::store`).
            let c = load_capped(path, source, progress, false, chrome::load)?;
            Ok(graph_capture::merge_beside(path, c))
        }
        Some(_) => {
            // The cache holds whole captures only: not when this load would be capped
            // (`--max-events`, or too little memory for the whole file).
            let bytes = match source.file_bytes {
                0 => std::fs::metadata(path).map_or(0, |m| m.len()),
                n => n,
            };
            let uncapped = progress.max_events().is_none()
                && budget::cap_for_file(path, bytes, false).is_none();
            if uncapped && let Some(c) = cache::lookup(path, &source) {
                progress.update(c.source.file_bytes, c.event_count());
                return Ok(c);
            }
            load_capped(path, source, progress, false, chrome::load)
        }
        None => Err(LoadError::new(
            LoadErrorKind::NotATrace,
            path,
            None,
            "not a known trace file (expected .xplane.pb or Chrome trace .json[.gz])",
        )),
    }
}
