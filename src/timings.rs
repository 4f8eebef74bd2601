//! Opt-in phase timings for profiling the loaders: with `TRACETUI_TIMINGS=1` in the environment,
//! [`mark`] prints `phase <name>: <ms since the previous mark> ms (at <ms since the first>)` to
//! stderr. Off (the default) it is one relaxed atomic load per call.

use std::sync::Mutex;
use std::sync::OnceLock;
use std::time::Instant;

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("TRACETUI_TIMINGS").is_some_and(|v| v != "0"))
}

/// Ends the phase called `name` (prints its duration when timings are on).
pub fn mark(name: &str) {
    if !enabled() {
        return;
    }
    static LAST: Mutex<Option<(Instant, Instant)>> = Mutex::new(None);
    let now = Instant::now();
    let mut g = LAST.lock().unwrap_or_else(|e| e.into_inner());
    let (first, last) = g.unwrap_or((now, now));
    eprintln!(
        "phase {name}: {:.1} ms (at {:.1} ms)",
        (now - last).as_secs_f64() * 1e3,
        (now - first).as_secs_f64() * 1e3
    );
    *g = Some((first, now));
}
