//! The watcher thread: owns the `notify` watcher (inotify, or `PollWatcher` as the fallback),
//! classifies raw notifications, rediscovers the log dir when names change, and feeds the
//! [`Tracker`] that decides when files are complete. Events go to a caller-supplied sink.

use super::events::{CaptureEvent, WatchEvent};
use super::settle::{Stat, Tracker};
use crate::discover::{self, Catalog, DiscoverError, NameKind, classify};
use notify::event::{AccessKind, AccessMode, MetadataKind, ModifyKind, RenameMode};
use notify::{EventKind as K, RecursiveMode, Watcher as _};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant, SystemTime};

/// How often pending files are checked while some are settling.
const TICK: Duration = Duration::from_millis(100);
/// Rescans (full rediscovery) are at most this frequent.
const MIN_RESCAN: Duration = Duration::from_millis(100);

/// Which notification source is in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The platform's native watcher (inotify on Linux): blocks while nothing changes.
    Native,
    /// `notify::PollWatcher`: rescans metadata every poll interval.
    Poll,
}

impl Backend {
    /// Short name for messages and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Native => "inotify",
            Backend::Poll => "poll",
        }
    }
}

/// Watcher settings.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    /// A file not closed after its last write is complete after keeping its size and mtime
    /// this long.
    pub settle: Duration,
    /// Poll interval of the polling fallback.
    pub poll_interval: Duration,
    /// Poll even where inotify works (tests, network file systems).
    pub force_poll: bool,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            settle: Duration::from_millis(1000),
            poll_interval: Duration::from_millis(500),
            force_poll: false,
        }
    }
}

/// What the watcher thread receives.
enum Raw {
    Fs(notify::Result<notify::Event>),
    Stop,
}

/// A running watcher; dropping it stops the thread.
#[derive(Debug)]
pub struct Watcher {
    tx: Sender<Raw>,
    backend: Backend,
}

impl std::fmt::Debug for Raw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Raw::Fs(e) => write!(f, "Fs({e:?})"),
            Raw::Stop => f.write_str("Stop"),
        }
    }
}

impl Watcher {
    /// The notification source in use when the watcher started.
    pub fn backend(&self) -> Backend {
        self.backend
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.tx.send(Raw::Stop);
    }
}

/// Starts watching `root` (a log dir, recursively, or one capture file). Returns the watcher
/// and the catalog discovered once the watch was in place (nothing written after it is missed).
/// Events go to `sink` on the watcher thread; the thread ends when `sink` returns false or the
/// watcher is dropped. A fallback to polling is reported as a first [`WatchEvent::Notice`].
pub fn start(
    root: &Path,
    opts: &WatchOptions,
    mut sink: impl FnMut(WatchEvent) -> bool + Send + 'static,
) -> std::io::Result<(Watcher, Catalog)> {
    let meta = std::fs::metadata(root).map_err(|e| {
        let d = if e.kind() == std::io::ErrorKind::NotFound {
            DiscoverError::NotFound(root.to_path_buf())
        } else {
            DiscoverError::Unreadable(root.to_path_buf(), e)
        };
        std::io::Error::other(d.to_string())
    })?;
    let scope = if meta.is_dir() {
        Scope::Dir
    } else {
        Scope::File(
            root.file_name()
                .map(|n| n.to_os_string())
                .unwrap_or_default(),
        )
    };
    let (tx, rx) = mpsc::channel::<Raw>();
    let (backend_w, backend, notice) = open_backend(root, &scope, opts, &tx, opts.force_poll)?;
    let cat = discover(root).map_err(|e| std::io::Error::other(e.to_string()))?;
    let now = Instant::now();
    let tracker = Tracker::new(&cat, opts.settle, now);
    let mut state = Worker {
        root: root.to_path_buf(),
        scope,
        opts: opts.clone(),
        tx: tx.clone(),
        _backend: backend_w,
        backend,
        tracker,
        dirty: false,
        // The first change rescans at once.
        last_rescan: now.checked_sub(MIN_RESCAN).unwrap_or(now),
        root_gone: false,
    };
    if let Some(n) = notice
        && !sink(WatchEvent::Notice(n))
    {
        return Ok((Watcher { tx, backend }, cat));
    }
    std::thread::Builder::new()
        .name("tracetui-watch".into())
        .spawn(move || state.run(rx, &mut sink))?;
    Ok((Watcher { tx, backend }, cat))
}

/// What is watched: every capture below a dir, or one file (its dir is watched).
enum Scope {
    Dir,
    File(std::ffi::OsString),
}

impl Scope {
    fn covers(&self, p: &Path) -> bool {
        match self {
            Scope::Dir => true,
            Scope::File(name) => p.file_name() == Some(name.as_os_str()),
        }
    }
}

type Backing = Box<dyn notify::Watcher + Send>;

/// The native watcher, else a poll watcher (with the reason as a notice).
fn open_backend(
    root: &Path,
    scope: &Scope,
    opts: &WatchOptions,
    tx: &Sender<Raw>,
    force_poll: bool,
) -> std::io::Result<(Backing, Backend, Option<String>)> {
    let (target, mode) = match scope {
        Scope::Dir => (root.to_path_buf(), RecursiveMode::Recursive),
        Scope::File(_) => (
            root.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_path_buf(),
            RecursiveMode::NonRecursive,
        ),
    };
    let mut why = None;
    if !force_poll {
        let t = tx.clone();
        match notify::recommended_watcher(move |e| {
            let _ = t.send(Raw::Fs(e));
        }) {
            Ok(mut w) => match w.watch(&target, mode) {
                Ok(()) => return Ok((Box::new(w), Backend::Native, None)),
                Err(e) => why = Some(e.to_string()),
            },
            Err(e) => why = Some(e.to_string()),
        }
    }
    let t = tx.clone();
    let cfg = notify::Config::default().with_poll_interval(opts.poll_interval);
    let mut w = notify::PollWatcher::new(
        move |e| {
            let _ = t.send(Raw::Fs(e));
        },
        cfg,
    )
    .map_err(|e| std::io::Error::other(e.to_string()))?;
    w.watch(&target, mode)
        .map_err(|e| std::io::Error::other(format!("{}: {e}", target.display())))?;
    let notice = why.map(|w| {
        format!(
            "file notifications unavailable ({w}): polling every {} ms",
            opts.poll_interval.as_millis()
        )
    });
    Ok((Box::new(w), Backend::Poll, notice))
}

/// The watcher thread's state.
struct Worker {
    root: PathBuf,
    scope: Scope,
    opts: WatchOptions,
    tx: Sender<Raw>,
    /// Kept alive: dropping it stops notifications.
    _backend: Backing,
    backend: Backend,
    tracker: Tracker,
    /// Names may have changed: rediscover.
    dirty: bool,
    last_rescan: Instant,
    /// The watched path vanished (said once).
    root_gone: bool,
}

impl Worker {
    fn run(&mut self, rx: Receiver<Raw>, sink: &mut dyn FnMut(WatchEvent) -> bool) {
        let mut out: Vec<CaptureEvent> = Vec::new();
        let mut notices: Vec<String> = Vec::new();
        loop {
            // Block while nothing is pending: no CPU when nothing changes.
            let first = if self.dirty || self.tracker.has_pending() {
                match rx.recv_timeout(TICK) {
                    Ok(r) => Some(r),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            } else {
                match rx.recv() {
                    Ok(r) => Some(r),
                    Err(_) => return,
                }
            };
            let mut batch = first
                .into_iter()
                .chain(std::iter::from_fn(|| rx.try_recv().ok()));
            for raw in batch.by_ref() {
                match raw {
                    Raw::Stop => return,
                    Raw::Fs(Ok(ev)) => self.classify(&ev),
                    Raw::Fs(Err(e)) => self.on_error(e, &mut notices),
                }
            }
            let now = Instant::now();
            if self.dirty && now.duration_since(self.last_rescan) >= MIN_RESCAN {
                self.rescan(now, &mut out, &mut notices);
            }
            if self.tracker.settle(now, stat, &mut out) {
                self.dirty = true;
            }
            for n in notices.drain(..) {
                if !sink(WatchEvent::Notice(n)) {
                    return;
                }
            }
            for e in out.drain(..) {
                if !sink(WatchEvent::Capture(e)) {
                    return;
                }
            }
        }
    }

    fn rescan(&mut self, now: Instant, out: &mut Vec<CaptureEvent>, notices: &mut Vec<String>) {
        self.dirty = false;
        self.last_rescan = now;
        let cat = match discover(&self.root) {
            Ok(c) => {
                self.root_gone = false;
                c
            }
            Err(e) => {
                if !self.root_gone {
                    notices.push(e.to_string());
                    self.root_gone = true;
                }
                Catalog {
                    root: self.root.clone(),
                    runs: Vec::new(),
                    problems: Vec::new(),
                }
            }
        };
        self.tracker.rescan(&cat, now, out);
    }

    /// Inotify ran out of watches (or failed): switch to polling once.
    fn on_error(&mut self, e: notify::Error, notices: &mut Vec<String>) {
        if self.backend == Backend::Poll {
            notices.push(format!("watch error: {e}"));
            return;
        }
        match open_backend(&self.root, &self.scope, &self.opts, &self.tx, true) {
            Ok((w, b, _)) => {
                self._backend = w;
                self.backend = b;
                self.dirty = true;
                notices.push(format!(
                    "file notifications failed ({e}): polling every {} ms",
                    self.opts.poll_interval.as_millis()
                ));
            }
            Err(e2) => notices.push(format!("watch error: {e}; polling failed too: {e2}")),
        }
    }

    /// Turns one notification into tracker input or a rescan request.
    fn classify(&mut self, ev: &notify::Event) {
        if ev.need_rescan() {
            self.dirty = true;
        }
        for p in &ev.paths {
            if !self.scope.covers(p) {
                continue;
            }
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            // `.tmp` files and hidden entries are never captures; their rename is seen on the
            // final name.
            let skipped = name.starts_with('.') || name.ends_with(".tmp");
            let capture_name = classify(&name) != NameKind::Ignored || is_snapshot_name(&name);
            let structural = matches!(
                ev.kind,
                K::Create(_) | K::Remove(_) | K::Modify(ModifyKind::Name(_))
            );
            if structural {
                if skipped {
                    continue;
                }
                self.dirty = true;
                // Renamed in: complete on arrival; created: being written.
                let renamed_in = ev.kind == K::Modify(ModifyKind::Name(RenameMode::To));
                if capture_name && (renamed_in || matches!(ev.kind, K::Create(_))) {
                    self.tracker.touched(p, renamed_in);
                }
                continue;
            }
            let closed = match ev.kind {
                K::Modify(ModifyKind::Metadata(m)) if m != MetadataKind::WriteTime => continue,
                K::Modify(_) => false,
                K::Access(AccessKind::Close(AccessMode::Write)) => true,
                _ => continue,
            };
            if capture_name && !self.tracker.touched(p, closed) {
                self.dirty = true;
            }
        }
    }
}

/// A name an allocator snapshot may have (`*.pickle`, `*.pkl`; the content is checked on
/// discovery).
fn is_snapshot_name(name: &str) -> bool {
    name.ends_with(".pickle") || name.ends_with(".pkl")
}

/// Discovery of `root` with its allocator snapshots (`*.pickle`) as captures.
fn discover(root: &Path) -> Result<Catalog, DiscoverError> {
    let mut cat = discover::discover(root)?;
    super::snapshots::add_snapshots(&mut cat);
    Ok(cat)
}

fn stat(p: &Path) -> Option<Stat> {
    let m = std::fs::metadata(p).ok()?;
    Some((m.len(), m.modified().unwrap_or(SystemTime::UNIX_EPOCH)))
}
