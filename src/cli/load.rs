//! Loads captures on a small pool of threads, one capture per thread at a time, and turns each into
//! a small report right away so at most `threads` captures are in memory.

use crate::discover::CaptureFile;
use crate::formats::{LoadError, Progress};
use crate::model::Capture;
use crate::ui::loader::Loaded;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, RwLock};

/// Where [`map_loaded`] and [`with_loaded`] get a capture from instead of loading it:
/// `tracetui mcp` keeps loaded captures (the explorer's [`Loaded`]) across calls and hands each
/// command a shared reference, never a copy (see src/cli/mcp/).
pub type Provider = Box<dyn Fn(&CaptureFile) -> Result<Arc<Loaded>, LoadError> + Send + Sync>;

static PROVIDER: RwLock<Option<Provider>> = RwLock::new(None);

/// Makes every later [`map_loaded`] take its captures from `p` (the MCP server's capture set).
pub fn set_provider(p: Provider) {
    if let Ok(mut g) = PROVIDER.write() {
        *g = Some(p);
    }
}

/// The capture from the provider, when one is set.
fn provided(cap: &CaptureFile) -> Option<Result<Arc<Loaded>, LoadError>> {
    let g = PROVIDER.read().ok()?;
    g.as_ref().map(|p| p(cap))
}
use std::sync::atomic::{AtomicUsize, Ordering};

/// Loads every capture with `threads` workers and maps each result with `f`; results keep the
/// order of `caps`. A capture whose file fails is loaded from its first working alternate (with a
/// warning). A loader panic becomes a load error instead of aborting the other captures.
pub fn map_loaded<T, F>(caps: &[&CaptureFile], threads: usize, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(&CaptureFile, Result<Arc<Capture>, LoadError>) -> T + Sync,
{
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<T>>> = Mutex::new((0..caps.len()).map(|_| None).collect());
    let threads = threads.clamp(1, caps.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(cap) = caps.get(i) else { break };
                    let mut from_provider = false;
                    let loaded = catch_unwind(AssertUnwindSafe(|| {
                        provided(cap).map_or_else(
                            || cap.load_or_alternate(&Progress::default()).map(Arc::new),
                            |l| {
                                from_provider = true;
                                l.map(|l| Arc::clone(&l.cap))
                            },
                        )
                    }))
                    .unwrap_or_else(|_| {
                        Err(LoadError::new(
                            crate::formats::LoadErrorKind::Internal,
                            &cap.path,
                            None,
                            "internal error: the loader panicked (please report this file)",
                        ))
                    });
                    // Big JSON captures are cached for the next command on the same file.
                    if let Ok(c) = &loaded
                        && !from_provider
                    {
                        crate::formats::cache::store(&cap.path, c);
                    }
                    let r = f(cap, loaded);
                    if let Ok(mut v) = out.lock()
                        && let Some(slot) = v.get_mut(i)
                    {
                        *slot = Some(r);
                    }
                }
            });
        }
    });
    out.into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

/// One capture with the explorer's index and partner tables ([`Loaded`]): from the provider
/// when one is set (kept across calls), else loaded here (and cached like [`map_loaded`] does).
/// A loader panic becomes a load error.
pub fn with_loaded(cap: &CaptureFile) -> Result<Arc<Loaded>, LoadError> {
    catch_unwind(AssertUnwindSafe(|| {
        if let Some(l) = provided(cap) {
            return l;
        }
        let c = cap.load_or_alternate(&Progress::default())?;
        crate::formats::cache::store(&cap.path, &c);
        Ok(Arc::new(Loaded::new_deferred(c, std::time::Instant::now())))
    }))
    .unwrap_or_else(|_| {
        Err(LoadError::new(
            crate::formats::LoadErrorKind::Internal,
            &cap.path,
            None,
            "internal error: the loader panicked (please report this file)",
        ))
    })
}
