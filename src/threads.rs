//! How many threads the parallel passes use (chunked JSON parse, XPlane planes, `finish`,
//! statistics, memory tracks): the machine's cores, capped, or an override from the environment.

/// The available cores, at most 8.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

/// The environment variable `var` when set (benchmark A/B; clamped to 1–64), else [`cores`].
pub fn from_env(var: &str) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map_or_else(cores, |n| n.clamp(1, 64))
}
