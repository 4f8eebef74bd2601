//! The settle state machine: per capture file, decides when it is complete (safe to parse) from
//! what the watcher saw (modified, closed after write, renamed in) and the file's size and mtime
//! over time. Pure: time and `stat` are passed in, so tests drive it without a file system.
//!
//! A file is complete when it is non-empty and either was closed after its last write (inotify
//! `IN_CLOSE_WRITE`), arrived by rename (Kineto writes `.tmp` then renames), or kept the same size
//! and mtime for the settle window. A shrinking file (truncated for a rewrite) starts over.

use super::events::{CaptureEvent, EventKind};
use crate::discover::{CaptureFile, Catalog};
use rustc_hash::{FxHashMap, FxHashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Size and modification time of a file.
pub type Stat = (u64, SystemTime);

/// One known capture file.
#[derive(Debug)]
struct Tracked {
    cap: CaptureFile,
    /// Waiting to settle (new, or touched since it was last complete).
    pending: bool,
    /// Size and mtime last seen.
    seen: Stat,
    /// When `seen` last changed.
    changed_at: Instant,
    /// Closed after write (or renamed in) since the last modification.
    closed: bool,
    /// Size and mtime when it was last complete (`None`: never complete yet).
    ready: Option<Stat>,
    /// A `writing` event was emitted for the current pending period.
    told_writing: bool,
}

/// Every capture file below the watched path with its settle state.
#[derive(Debug)]
pub struct Tracker {
    files: FxHashMap<PathBuf, Tracked>,
    /// Closed / renamed-in paths not (yet) known as captures: applied when a rescan adds them.
    closed_unknown: FxHashSet<PathBuf>,
    settle: Duration,
}

impl Tracker {
    /// Starts from `cat`: its captures are taken as complete.
    pub fn new(cat: &Catalog, settle: Duration, now: Instant) -> Tracker {
        let files = cat
            .captures()
            .map(|c| {
                let st = (c.bytes, c.mtime);
                let t = Tracked {
                    cap: c.clone(),
                    pending: false,
                    seen: st,
                    changed_at: now,
                    closed: true,
                    ready: Some(st),
                    told_writing: false,
                };
                (c.path.clone(), t)
            })
            .collect();
        Tracker {
            files,
            closed_unknown: FxHashSet::default(),
            settle,
        }
    }

    /// Number of known captures.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// True when no capture is known.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// True while some file waits to settle (the watcher then ticks).
    pub fn has_pending(&self) -> bool {
        self.files.values().any(|t| t.pending)
    }

    /// Records a write (`closed == false`) or a close-after-write / rename-in (`closed == true`)
    /// on `path`. Returns false when `path` is not a known capture (the caller rescans).
    pub fn touched(&mut self, path: &Path, closed: bool) -> bool {
        match self.files.get_mut(path) {
            Some(t) => {
                t.pending = true;
                t.closed = closed;
                true
            }
            None => {
                if closed {
                    self.closed_unknown.insert(path.to_path_buf());
                } else {
                    self.closed_unknown.remove(path);
                }
                false
            }
        }
    }

    /// Applies a fresh discovery: captures gone are `removed`, captures not known before are
    /// `new` (and wait to settle); known ones take the new names / alternates.
    pub fn rescan(&mut self, cat: &Catalog, now: Instant, out: &mut Vec<CaptureEvent>) {
        let mut seen: FxHashSet<&Path> = FxHashSet::default();
        for c in cat.captures() {
            seen.insert(c.path.as_path());
            if let Some(t) = self.files.get_mut(&c.path) {
                if t.cap.run != c.run || t.cap.host != c.host || t.cap.alternates != c.alternates {
                    t.cap.run.clone_from(&c.run);
                    t.cap.host.clone_from(&c.host);
                    t.cap.alternates.clone_from(&c.alternates);
                }
                continue;
            }
            let closed = self.closed_unknown.remove(&c.path);
            out.push(CaptureEvent {
                kind: EventKind::New,
                capture: c.clone(),
            });
            self.files.insert(
                c.path.clone(),
                Tracked {
                    cap: c.clone(),
                    pending: true,
                    seen: (c.bytes, c.mtime),
                    changed_at: now,
                    closed,
                    ready: None,
                    told_writing: false,
                },
            );
        }
        let mut gone: Vec<PathBuf> = self
            .files
            .keys()
            .filter(|p| !seen.contains(p.as_path()))
            .cloned()
            .collect();
        gone.sort();
        for p in gone {
            if let Some(t) = self.files.remove(&p) {
                out.push(CaptureEvent {
                    kind: EventKind::Removed,
                    capture: t.cap,
                });
            }
        }
        self.closed_unknown.clear();
    }

    /// Checks every pending file with `stat`: complete ones become `ready` (first time) or
    /// `changed` (rewritten); the others get one `writing` event. Returns true when a pending
    /// file could not be read (vanished: the caller rescans).
    pub fn settle(
        &mut self,
        now: Instant,
        mut stat: impl FnMut(&Path) -> Option<Stat>,
        out: &mut Vec<CaptureEvent>,
    ) -> bool {
        let mut missing = false;
        let mut order: Vec<PathBuf> = self
            .files
            .iter()
            .filter(|(_, t)| t.pending)
            .map(|(p, _)| p.clone())
            .collect();
        order.sort();
        for p in order {
            let Some(t) = self.files.get_mut(&p) else {
                continue;
            };
            let Some(st) = stat(&p) else {
                missing = true;
                continue;
            };
            if st != t.seen {
                if st.0 < t.seen.0 {
                    // Truncated (a rewrite started): whatever closed before does not count.
                    t.closed = false;
                }
                t.seen = st;
                t.changed_at = now;
            }
            t.cap.bytes = st.0;
            t.cap.mtime = st.1;
            if t.ready == Some(st) {
                // Touched but not changed (opened for write and closed, or a spurious event).
                t.pending = false;
                t.told_writing = false;
                continue;
            }
            let stable = now.duration_since(t.changed_at) >= self.settle;
            if st.0 > 0 && (t.closed || stable) {
                let kind = if t.ready.is_some() {
                    EventKind::Changed
                } else {
                    EventKind::Ready
                };
                t.ready = Some(st);
                t.pending = false;
                t.told_writing = false;
                out.push(CaptureEvent {
                    kind,
                    capture: t.cap.clone(),
                });
            } else if !t.told_writing {
                t.told_writing = true;
                out.push(CaptureEvent {
                    kind: EventKind::Writing,
                    capture: t.cap.clone(),
                });
            }
        }
        missing
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::{Run, RunKind};
    use crate::model::Format;

    fn cap(name: &str, bytes: u64) -> CaptureFile {
        CaptureFile {
            path: PathBuf::from("/logs").join(name),
            run: "logs".into(),
            host: name.split('.').next().unwrap_or("").into(),
            format: Format::Kineto,
            span: None,
            alternates: Vec::new(),
            bytes,
            mtime: SystemTime::UNIX_EPOCH,
        }
    }

    fn catalog(caps: Vec<CaptureFile>) -> Catalog {
        Catalog {
            root: "/logs".into(),
            runs: vec![Run {
                name: "logs".into(),
                dir: "/logs".into(),
                kind: RunKind::PyTorch,
                captures: caps,
                newest_mtime: SystemTime::UNIX_EPOCH,
            }],
            problems: Vec::new(),
        }
    }

    fn kinds(out: &[CaptureEvent]) -> Vec<(EventKind, String)> {
        out.iter()
            .map(|e| (e.kind, e.capture.file_name()))
            .collect()
    }

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn renamed_in_file_is_new_and_ready_at_once() {
        let t0 = Instant::now();
        let mut tr = Tracker::new(&catalog(vec![]), Duration::from_secs(1), t0);
        assert!(!tr.touched(Path::new("/logs/w.pt.trace.json"), true));
        let mut out = Vec::new();
        tr.rescan(&catalog(vec![cap("w.pt.trace.json", 10)]), t0, &mut out);
        tr.settle(t0, |_| Some((10, at(5))), &mut out);
        use EventKind::*;
        assert_eq!(
            kinds(&out),
            vec![
                (New, "w.pt.trace.json".into()),
                (Ready, "w.pt.trace.json".into())
            ]
        );
        assert!(!tr.has_pending());
    }

    #[test]
    fn growing_file_writes_until_closed_or_stable() {
        use EventKind::*;
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut tr = Tracker::new(&catalog(vec![]), ms(1000), t0);
        let mut out = Vec::new();
        tr.touched(Path::new("/logs/w.pt.trace.json"), false);
        tr.rescan(&catalog(vec![cap("w.pt.trace.json", 0)]), t0, &mut out);
        tr.settle(t0, |_| Some((0, at(1))), &mut out);
        // Grows: still writing, told once.
        tr.touched(Path::new("/logs/w.pt.trace.json"), false);
        tr.settle(t0 + ms(300), |_| Some((100, at(2))), &mut out);
        tr.settle(t0 + ms(900), |_| Some((100, at(2))), &mut out);
        assert_eq!(
            kinds(&out),
            vec![
                (New, "w.pt.trace.json".into()),
                (Writing, "w.pt.trace.json".into())
            ]
        );
        // Stable for the settle window: ready.
        out.clear();
        tr.settle(t0 + ms(1300), |_| Some((100, at(2))), &mut out);
        assert_eq!(kinds(&out), vec![(Ready, "w.pt.trace.json".into())]);
        // Rewritten in place: truncated, regrown, closed → writing, then changed.
        out.clear();
        tr.touched(Path::new("/logs/w.pt.trace.json"), false);
        tr.settle(t0 + ms(1400), |_| Some((3, at(3))), &mut out);
        tr.touched(Path::new("/logs/w.pt.trace.json"), true);
        tr.settle(t0 + ms(1500), |_| Some((120, at(4))), &mut out);
        assert_eq!(
            kinds(&out),
            vec![
                (Writing, "w.pt.trace.json".into()),
                (Changed, "w.pt.trace.json".into())
            ]
        );
        assert_eq!(out[1].capture.bytes, 120);
    }

    #[test]
    fn empty_closed_file_is_not_ready_and_untouched_content_is_quiet() {
        use EventKind::*;
        let t0 = Instant::now();
        let mut tr = Tracker::new(
            &catalog(vec![cap("a.pt.trace.json", 7)]),
            Duration::from_millis(500),
            t0,
        );
        let mut out = Vec::new();
        // Opened for write and closed with the same content: nothing to say.
        tr.touched(Path::new("/logs/a.pt.trace.json"), true);
        tr.settle(t0, |_| Some((7, SystemTime::UNIX_EPOCH)), &mut out);
        assert!(out.is_empty() && !tr.has_pending());
        // A new empty file closed: writing, not ready, even after the window.
        tr.touched(Path::new("/logs/b.pt.trace.json"), true);
        tr.rescan(
            &catalog(vec![cap("a.pt.trace.json", 7), cap("b.pt.trace.json", 0)]),
            t0,
            &mut out,
        );
        tr.settle(t0 + Duration::from_secs(2), |_| Some((0, at(1))), &mut out);
        assert_eq!(
            kinds(&out),
            vec![
                (New, "b.pt.trace.json".into()),
                (Writing, "b.pt.trace.json".into())
            ]
        );
        // Deleted: removed; a vanished pending file asks for a rescan.
        out.clear();
        assert!(tr.settle(t0 + Duration::from_secs(3), |_| None, &mut out));
        tr.rescan(&catalog(vec![cap("a.pt.trace.json", 7)]), t0, &mut out);
        assert_eq!(kinds(&out), vec![(Removed, "b.pt.trace.json".into())]);
        assert_eq!(tr.len(), 1);
    }
}
