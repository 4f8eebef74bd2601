//! What the watcher reports: capture events and their kinds.

use crate::discover::CaptureFile;

/// What happened to one capture file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A capture file appeared (it may still be written: `writing` or `ready` follows).
    New,
    /// The file is being written (growing, or truncated for a rewrite): do not parse it yet.
    Writing,
    /// A new capture is complete: safe to load.
    Ready,
    /// A complete capture was rewritten and is complete again: reload it.
    Changed,
    /// The file (or its run) is gone.
    Removed,
}

impl EventKind {
    /// The lower-case name printed by `tracetui watch`.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::New => "new",
            EventKind::Writing => "writing",
            EventKind::Ready => "ready",
            EventKind::Changed => "changed",
            EventKind::Removed => "removed",
        }
    }
}

/// One capture event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureEvent {
    /// What happened.
    pub kind: EventKind,
    /// The capture as discovery names it (size and mtime as last seen).
    pub capture: CaptureFile,
}

/// What the watcher thread reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchEvent {
    /// A capture event.
    Capture(CaptureEvent),
    /// Something the user should know (fell back to polling, the watched path vanished).
    Notice(String),
}
