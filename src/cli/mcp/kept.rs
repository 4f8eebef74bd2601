//! The captures the server keeps loaded across calls: the explorer's [`Loaded`] (model, index,
//! partner tables) behind an `Arc`, least recently used dropped first within the explorer's
//! memory budget; each command gets a shared reference through [`super::super::load`]'s
//! provider, and a first call on a capture reports its load as MCP progress.

use super::rpc::send;
use crate::discover::CaptureFile;
use crate::formats::{LoadError, Progress};
use crate::model::Capture;
use crate::ui::loader::Loaded;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Loaded captures kept across calls (the explorer's [`Loaded`]: model, index, partner tables),
/// least recently used first, within the explorer's memory budget ([`crate::ui::budget`]) and
/// `--keep`. Calls share them through `Arc`: no call copies a capture.
pub(super) struct Kept {
    pub(super) keep: usize,
    pub(super) budget: u64,
    /// (file, capture, its heap bytes when loaded).
    list: VecDeque<(PathBuf, Arc<Loaded>, u64)>,
}

pub(super) static KEPT: Mutex<Kept> = Mutex::new(Kept {
    keep: 4,
    budget: u64::MAX,
    list: VecDeque::new(),
});

/// The capture at `cap.path`, loaded once and kept (a shared reference, not a copy).
fn provide(cap: &CaptureFile) -> Result<Arc<Loaded>, LoadError> {
    // A capture found below a root through a symlink that leads outside is not read.
    let inside = std::fs::canonicalize(&cap.path).is_ok_and(|c| {
        ROOTS
            .lock()
            .is_ok_and(|r| r.iter().any(|root| c.starts_with(root)))
    });
    if !inside {
        return Err(LoadError::new(
            crate::formats::LoadErrorKind::Io,
            &cap.path,
            None,
            "outside the server's roots (through a symlink): not read",
        ));
    }
    if let Ok(mut k) = KEPT.lock()
        && let Some(i) = k.list.iter().position(|(p, _, _)| p == &cap.path)
        && let Some(e) = k.list.remove(i)
    {
        let l = Arc::clone(&e.1);
        k.list.push_back(e);
        return Ok(l);
    }
    let loaded = load_with_progress(cap)?;
    // Big JSON captures: the model is cached for the next start, as the commands do.
    crate::formats::cache::store(&cap.path, &loaded);
    let l = Arc::new(Loaded::new_deferred(loaded, std::time::Instant::now()));
    let bytes = l.heap_bytes() as u64;
    if let Ok(mut k) = KEPT.lock() {
        k.list.push_back((cap.path.clone(), Arc::clone(&l), bytes));
        // The least recently used go first; the one just loaded always stays.
        while k.list.len() > 1
            && (k.list.len() > k.keep || k.list.iter().map(|e| e.2).sum::<u64>() > k.budget)
        {
            k.list.pop_front();
        }
    }
    Ok(l)
}

/// Paths and heap bytes of the captures kept loaded, least recently used first.
pub(super) fn kept() -> Vec<(PathBuf, u64)> {
    KEPT.lock()
        .map(|k| k.list.iter().map(|(p, _, b)| (p.clone(), *b)).collect())
        .unwrap_or_default()
}

/// The server's roots, canonical: the provider reads nothing else.
pub(super) static ROOTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Makes `roots` the roots and the kept captures the source of every command's captures.
pub(super) fn install(roots: &[PathBuf]) {
    if let Ok(mut r) = ROOTS.lock() {
        *r = roots.to_vec();
    }
    crate::cli::load::set_provider(Box::new(provide));
}

/// The `progressToken` of the call in progress (its `_meta`), when the client asked for progress.
pub(super) static PROGRESS_TOKEN: Mutex<Option<Value>> = Mutex::new(None);

/// Loads `cap`; while it loads, sends `notifications/progress` (bytes read of the file) every
/// 200 ms when the call has a progress token.
fn load_with_progress(cap: &CaptureFile) -> Result<Capture, LoadError> {
    let token = PROGRESS_TOKEN.lock().ok().and_then(|g| g.clone());
    let Some(token) = token else {
        return cap.load_or_alternate(&Progress::default());
    };
    let progress = Progress::default();
    let done = AtomicBool::new(false);
    let notify = |done_bytes: u64, total: u64, events: u64| {
        let mut p = json!({
            "progressToken": token,
            "progress": done_bytes,
            "message": format!("loading {}: {events} events", cap.path.display()),
        });
        if total > 0 {
            p["total"] = Value::from(total);
        }
        send(&json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": p}));
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            notify(0, cap.bytes, 0);
            let (mut last, mut ticks) = (0, 0u32);
            // 20 ms steps: the call does not wait long for this thread once the load is done.
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(20));
                ticks += 1;
                let b = progress.bytes_done.load(Ordering::Relaxed);
                if ticks % 10 == 0 && b > last && !done.load(Ordering::Relaxed) {
                    last = b;
                    let total = progress.bytes_total.load(Ordering::Relaxed);
                    notify(b, total, progress.events.load(Ordering::Relaxed));
                }
            }
        });
        let r = cap.load_or_alternate(&progress);
        done.store(true, Ordering::Relaxed);
        r
    })
}
