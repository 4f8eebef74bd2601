//! The memory budget of the loaded captures: how many bytes of models, indexes and derived
//! tables the explorer keeps in memory before it drops the least recently used capture.
//! Precedence: `$TRACETUI_MEMORY_MB`, then `[memory] budget_mb` in config.toml, then half of
//! the machine's available memory (`MemAvailable` in `/proc/meminfo`), else 4 GiB.

/// Environment variable overriding the budget, in MiB.
pub const ENV: &str = "TRACETUI_MEMORY_MB";

/// Used when the machine's memory cannot be read.
const FALLBACK: u64 = 4 << 30;

/// The budget in bytes: `$TRACETUI_MEMORY_MB`, else `config_mb`, else the machine default.
pub fn resolve(config_mb: Option<u64>) -> u64 {
    std::env::var(ENV)
        .ok()
        .and_then(|v| parse_mb(&v))
        .or(config_mb.map(|m| m << 20))
        .unwrap_or_else(machine_default)
}

/// A MiB count (`"512"`) as bytes; `None` when not a number.
pub fn parse_mb(v: &str) -> Option<u64> {
    v.trim()
        .parse::<u64>()
        .ok()
        .map(|m| m.saturating_mul(1 << 20))
}

/// Half of `MemAvailable`, else 4 GiB.
pub fn machine_default() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| mem_available(&t))
        .map_or(FALLBACK, |b| (b / 2).max(256 << 20))
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mem_available_and_megabytes() {
        let t = "MemTotal:       16000000 kB\nMemAvailable:    8000000 kB\n";
        assert_eq!(mem_available(t), Some(8_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(parse_mb(" 512 "), Some(512 << 20));
        assert_eq!(parse_mb("lots"), None);
    }
}
