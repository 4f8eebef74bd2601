//! Read-only maps of user files that survive the file being truncated, rewritten or deleted
//! while mapped.
//!
//! A plain `mmap` of a file that another process truncates raises `SIGBUS` on the next read of a
//! page past the new end: the process dies and the terminal stays raw. [`Mapped`] registers its
//! address range in a fixed-size lock-free table; a `SIGBUS` handler (installed once) maps
//! anonymous zero pages over the rest of a registered range that faults, flags it and returns,
//! so the read sees zeros. Callers ask [`Mapped::changed`] (fault seen, or the open file's
//! length, mtime or inode differ from when it was mapped) before trusting what they read.
//! Faults outside every registered range go to the previous handler (or the default action).
//! See `docs/robustness.md`, "Files that change under an open capture".
//!
//! On platforms without the handler (not Linux), and when the table is full, the file is read
//! into memory instead of mapped.

use super::error::{LoadError, LoadErrorKind};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Stat facts of the open file that change when it is modified in place (not the change time:
/// deleting the file changes it too, and leaves the bytes intact).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    len: u64,
    mtime: (i64, i64),
    ino: u64,
}

impl Stamp {
    fn of(file: &File) -> io::Result<Stamp> {
        let m = file.metadata()?;
        Ok(Self::from_meta(&m))
    }

    #[cfg(unix)]
    fn from_meta(m: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ino: m.ino(),
        }
    }

    #[cfg(not(unix))]
    fn from_meta(m: &std::fs::Metadata) -> Stamp {
        let t = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or((0, 0), |d| (d.as_secs() as i64, d.subsec_nanos() as i64));
        Stamp {
            len: m.len(),
            mtime: t,
            ino: 0,
        }
    }
}

enum Data {
    /// A guarded map and its slot in the fault table.
    #[cfg(target_os = "linux")]
    Map(memmap2::Mmap, usize),
    /// The file's bytes read into memory.
    Heap(Vec<u8>),
}

/// A read-only view of a user file's bytes (mapped when possible) that never crashes the process
/// when the file changes underneath; [`Mapped::changed`] says whether the bytes can be trusted.
pub struct Mapped {
    data: Data,
    /// Kept open: `fstat` on it tells in-place changes.
    file: File,
    stamp: Stamp,
    /// Sticky: a stat check saw a difference.
    differs: AtomicBool,
    /// Milliseconds (since [`epoch`]) of the last stat check, for [`Mapped::changed_lately`].
    checked_ms: AtomicU64,
}

impl Mapped {
    /// Maps `file` (its length now), with its pages read ahead when `populate`. Falls back to
    /// reading it into memory where maps are not guarded.
    pub fn new(file: File, populate: bool) -> io::Result<Mapped> {
        let stamp = Stamp::of(&file)?;
        let data = map_guarded(&file, stamp.len, populate)?;
        let data = match data {
            Some(d) => d,
            None => {
                let mut v = Vec::with_capacity(usize::try_from(stamp.len).unwrap_or(0));
                (&file).read_to_end(&mut v)?;
                Data::Heap(v)
            }
        };
        Ok(Mapped {
            data,
            file,
            stamp,
            differs: AtomicBool::new(false),
            checked_ms: AtomicU64::new(now_ms()),
        })
    }

    /// True when the bytes are the file's own, read through a guarded map (false: a copy in memory).
    pub fn is_mapped(&self) -> bool {
        !matches!(self.data, Data::Heap(_))
    }

    /// True once a read faulted past the end of the (truncated) file and saw zeros instead.
    pub fn faulted(&self) -> bool {
        match self.data {
            #[cfg(target_os = "linux")]
            Data::Map(_, slot) => guard::faulted(slot),
            Data::Heap(_) => false,
        }
    }

    /// True when the file changed since it was mapped: a read faulted (truncation), or the open
    /// file's length, modification time or inode differ (rewrite in place). Costs one
    /// `fstat`. Deleting or renaming the file, or replacing it with a new one, leaves the mapped
    /// bytes intact and is not a change.
    pub fn changed(&self) -> bool {
        if self.faulted() || self.differs.load(Ordering::Relaxed) {
            return true;
        }
        self.checked_ms.store(now_ms(), Ordering::Relaxed);
        let differs = match Stamp::of(&self.file) {
            Ok(s) => s != self.stamp,
            Err(_) => true,
        };
        if differs {
            self.differs.store(true, Ordering::Relaxed);
        }
        differs
    }

    /// [`Mapped::changed`] for hot paths: a fault is seen at once, an in-place rewrite within
    /// [`RECHECK_MS`] (the `fstat` is repeated at most that often).
    pub fn changed_lately(&self) -> bool {
        if self.faulted() || self.differs.load(Ordering::Relaxed) {
            return true;
        }
        let now = now_ms();
        if now.saturating_sub(self.checked_ms.load(Ordering::Relaxed)) < RECHECK_MS {
            return false;
        }
        self.changed()
    }
}

/// The load error of a file that changed on disk while it was being loaded.
pub fn changed_error(path: &Path) -> LoadError {
    LoadError::new(
        LoadErrorKind::Changed,
        path,
        None,
        "changed on disk while loading (truncated or rewritten): not loaded; load it again once it is complete",
    )
}

/// The notice for a capture whose file changed on disk after loading ([`Mapped::changed`]).
pub const CHANGED_SINCE_LOADING: &str =
    "file changed on disk since loading: details unavailable; reload";

/// How stale [`Mapped::changed_lately`] may be about in-place rewrites, ms.
pub const RECHECK_MS: u64 = 5;

fn epoch() -> Instant {
    static E: OnceLock<Instant> = OnceLock::new();
    *E.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    epoch().elapsed().as_millis() as u64
}

impl std::ops::Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.data {
            #[cfg(target_os = "linux")]
            Data::Map(m, _) => m,
            Data::Heap(v) => v,
        }
    }
}

impl std::fmt::Debug for Mapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Mapped({} bytes, {})",
            self.len(),
            if self.is_mapped() { "mapped" } else { "read" }
        )
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // Unregister before the map (a field) is unmapped.
        #[cfg(target_os = "linux")]
        if let Data::Map(_, slot) = self.data {
            guard::unregister(slot);
        }
    }
}

/// A guarded map of the first `len` bytes of `file`; `None` when maps cannot be guarded here
/// (or the table is full, or the file is empty).
#[cfg(target_os = "linux")]
fn map_guarded(file: &File, len: u64, populate: bool) -> io::Result<Option<Data>> {
    if len == 0 || !guard::install() {
        return Ok(None);
    }
    let Ok(len) = usize::try_from(len) else {
        return Ok(None);
    };
    let Some(slot) = guard::claim() else {
        return Ok(None);
    };
    let mut opts = memmap2::MmapOptions::new();
    opts.len(len);
    if populate {
        opts.populate();
    }
    // SAFETY: read-only map; reads past a later truncation are caught by the SIGBUS handler as
    // soon as the range is registered, which happens before any read (populate does not fault).
    match unsafe { opts.map(file) } {
        Ok(m) => {
            guard::activate(slot, m.as_ptr() as usize, m.len());
            Ok(Some(Data::Map(m, slot)))
        }
        Err(e) => {
            guard::unregister(slot);
            Err(e)
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn map_guarded(_file: &File, _len: u64, _populate: bool) -> io::Result<Option<Data>> {
    Ok(None)
}

/// The fault table and the `SIGBUS` handler. Only async-signal-safe work in the handler: atomic
/// loads and stores, `mmap`, `sigaction`.
#[cfg(target_os = "linux")]
mod guard {
    use std::cell::UnsafeCell;
    use std::sync::Once;
    use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

    /// Maps guarded at once; further files are read into memory.
    pub const SLOTS: usize = 128;

    const FREE: u8 = 0;
    const CLAIMED: u8 = 1;
    const ACTIVE: u8 = 2;

    struct Slot {
        state: AtomicU8,
        start: AtomicUsize,
        end: AtomicUsize,
        faulted: AtomicBool,
    }

    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: Slot = Slot {
        state: AtomicU8::new(FREE),
        start: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
        faulted: AtomicBool::new(false),
    };

    static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    static ONCE: Once = Once::new();

    /// The handler found before ours, written once before ours is installed.
    struct Previous(UnsafeCell<Option<libc::sigaction>>);
    // SAFETY: written once inside `ONCE` before the handler that reads it is installed.
    unsafe impl Sync for Previous {}
    static PREVIOUS: Previous = Previous(UnsafeCell::new(None));

    /// Installs the handler (once); false when it could not be installed.
    pub fn install() -> bool {
        ONCE.call_once(|| {
            // SAFETY: plain libc calls; `PREVIOUS` is written before the handler exists.
            unsafe {
                let page = libc::sysconf(libc::_SC_PAGESIZE);
                if page <= 0 {
                    return;
                }
                PAGE.store(page as usize, Ordering::Relaxed);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) != 0 {
                    return;
                }
                *PREVIOUS.0.get() = Some(old);
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
                sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut sa.sa_mask);
                if libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut()) == 0 {
                    INSTALLED.store(true, Ordering::Release);
                }
            }
        });
        INSTALLED.load(Ordering::Acquire)
    }

    /// Reserves a free slot.
    pub fn claim() -> Option<usize> {
        TABLE.iter().position(|s| {
            s.state
                .compare_exchange(FREE, CLAIMED, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })
    }

    /// Publishes the range of a claimed slot to the handler.
    pub fn activate(slot: usize, start: usize, len: usize) {
        let s = &TABLE[slot];
        s.faulted.store(false, Ordering::Relaxed);
        s.start.store(start, Ordering::Relaxed);
        s.end.store(start + len, Ordering::Relaxed);
        s.state.store(ACTIVE, Ordering::Release);
    }

    /// Frees a slot (before its range is unmapped).
    pub fn unregister(slot: usize) {
        TABLE[slot].state.store(FREE, Ordering::Release);
    }

    /// The faulted flag of a slot.
    pub fn faulted(slot: usize) -> bool {
        TABLE[slot].faulted.load(Ordering::Acquire)
    }

    extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
        let addr = unsafe { (*info).si_addr() } as usize;
        let page = PAGE.load(Ordering::Relaxed);
        for s in &TABLE {
            if s.state.load(Ordering::Acquire) != ACTIVE {
                continue;
            }
            let (start, end) = (
                s.start.load(Ordering::Relaxed),
                s.end.load(Ordering::Relaxed),
            );
            if addr < start || addr >= end {
                continue;
            }
            let from = addr & !(page - 1);
            let to = (end + page - 1) & !(page - 1);
            // SAFETY: replaces pages of our own registered read-only map with zero pages.
            let p = unsafe {
                libc::mmap(
                    from as *mut libc::c_void,
                    to - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                s.faulted.store(true, Ordering::Release);
                return;
            }
            break;
        }
        // Not ours (or no memory for zero pages): hand over to the previous handler, or restore
        // the default action so that the access faults again and the process dies as before.
        // SAFETY: `PREVIOUS` was written before this handler was installed.
        unsafe {
            if let Some(old) = &*PREVIOUS.0.get() {
                let h = old.sa_sigaction;
                if h != libc::SIG_DFL && h != libc::SIG_IGN {
                    if old.sa_flags & libc::SA_SIGINFO != 0 {
                        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                            std::mem::transmute(h);
                        f(sig, info, ctx);
                    } else {
                        let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
                        f(sig);
                    }
                    return;
                }
            }
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests;
