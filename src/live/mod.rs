//! Live watching of a log dir: a background thread turns file-system notifications (`notify`:
//! inotify, or polling where inotify is unavailable or its limits are hit) into capture events
//! — `new`, `writing`, `ready`, `changed`, `removed` — per capture file, using the discovery
//! rules of [`crate::discover`] to decide what is a capture and how its run and host are named.
//!
//! A capture is only announced `ready` / `changed` once it is complete (see [`settle`]), so a
//! consumer never parses a half-written file. With inotify the thread blocks until something
//! happens (no CPU while idle); it ticks every 100 ms only while a file is settling.

pub mod events;
pub mod settle;
mod snapshots;
mod watcher;

pub use events::{CaptureEvent, EventKind, WatchEvent};
pub use watcher::{Backend, WatchOptions, Watcher, start};
