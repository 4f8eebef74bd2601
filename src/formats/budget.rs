//! Memory budget of a load: estimates a capture's peak memory from its file size before loading,
//! compares it with `/proc/meminfo` `MemAvailable`, and turns the result (or the user's
//! `--max-events N`) into an event cap the loaders honour and report as a `capped` warning.
//! Figures behind the estimates: docs/robustness.md "Resource bounds".

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Peak memory of a loaded capture per byte of plain (uncompressed) input, in 1/100:
/// XPlane ≈ 1.7× the file (docs/xplane.md) plus the index; JSON ≈ 0.5× the text (json-loader.md).
const XPLANE_PEAK_PCT: u64 = 200;
/// See [`XPLANE_PEAK_PCT`].
const JSON_PEAK_PCT: u64 = 60;
/// Memory one kept event costs once loaded and indexed (slice columns 37 B, args, index, strings).
pub const BYTES_PER_EVENT: u64 = 120;
/// Share of `MemAvailable` a load may use, in percent (the rest: the UI, other captures, the OS).
const USABLE_PCT: u64 = 70;

/// The `--max-events` value for this process (0 = none).
static MAX_EVENTS: AtomicU64 = AtomicU64::new(0);

/// Sets the user's cap (`--max-events N`) for every later load of this process.
pub fn set_max_events(n: Option<u64>) {
    MAX_EVENTS.store(n.unwrap_or(0), Ordering::Relaxed);
}

/// The user's cap, if any.
pub fn max_events() -> Option<u64> {
    match MAX_EVENTS.load(Ordering::Relaxed) {
        0 => None,
        n => Some(n),
    }
}

/// `MemAvailable` from `/proc/meminfo`, in bytes (`None` off Linux or when unreadable).
pub fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&text)
}

/// The `MemAvailable:` line of a meminfo text, in bytes.
pub fn parse_mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// Plain size of a file: its size, or for gzip the trailer's ISIZE (size mod 4 GiB), at least
/// 4× the compressed size (ISIZE wraps for inputs over 4 GiB).
pub fn plain_size(path: &Path, file_bytes: u64) -> u64 {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return file_bytes;
    };
    let mut magic = [0u8; 2];
    if f.read_exact(&mut magic).is_err() || !super::source::is_gzip(&magic) || file_bytes < 20 {
        return file_bytes;
    }
    let mut isize = [0u8; 4];
    if f.seek(SeekFrom::End(-4)).is_err() || f.read_exact(&mut isize).is_err() {
        return file_bytes.saturating_mul(4);
    }
    u64::from(u32::from_le_bytes(isize)).max(file_bytes.saturating_mul(4))
}

/// Estimated peak memory of loading `plain_bytes` of input of the given kind.
pub fn estimate_peak(plain_bytes: u64, xplane: bool) -> u64 {
    let pct = if xplane {
        XPLANE_PEAK_PCT
    } else {
        JSON_PEAK_PCT
    };
    plain_bytes.saturating_mul(pct) / 100
}

/// An event cap and why it applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cap {
    /// At most this many events are kept.
    pub max_events: u64,
    /// For the `capped` warning.
    pub reason: String,
}

/// The cap for a load: the user's `--max-events`, or, when the estimated peak exceeds the usable
/// share of `available` memory, the number of events that fit in it (the smaller of the two).
pub fn cap_for(peak: u64, available: Option<u64>, user: Option<u64>) -> Option<Cap> {
    let fit = available.and_then(|avail| {
        let usable = avail / 100 * USABLE_PCT;
        (peak > usable).then(|| (usable / BYTES_PER_EVENT).max(1))
    });
    match (user, fit) {
        (Some(u), Some(f)) if f < u => Some(memory_cap(f, peak, available)),
        (Some(u), _) => Some(Cap {
            max_events: u,
            reason: format!("--max-events {u}"),
        }),
        (None, Some(f)) => Some(memory_cap(f, peak, available)),
        (None, None) => None,
    }
}

fn memory_cap(n: u64, peak: u64, available: Option<u64>) -> Cap {
    let mib = |b: u64| b >> 20;
    Cap {
        max_events: n,
        reason: format!(
            "estimated {} MiB to load, {} MiB available: capped to fit (use --max-events to choose)",
            mib(peak),
            mib(available.unwrap_or(0))
        ),
    }
}

/// The cap for loading the file at `path` (`file_bytes` on disk) with this process's settings and
/// the machine's available memory.
pub fn cap_for_file(path: &Path, file_bytes: u64, xplane: bool) -> Option<Cap> {
    let peak = estimate_peak(plain_size(path, file_bytes), xplane);
    cap_for(peak, mem_available(), max_events())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_parsed() {
        let t = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(parse_mem_available(t), Some(2 << 20));
        assert_eq!(parse_mem_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn caps_from_memory_and_flag() {
        let gib = 1u64 << 30;
        // Fits: no cap unless asked.
        assert_eq!(cap_for(gib, Some(8 * gib), None), None);
        assert_eq!(
            cap_for(gib, Some(8 * gib), Some(5)).map(|c| c.max_events),
            Some(5)
        );
        // Does not fit: 70 % of 1 GiB at 120 B per event.
        let c = cap_for(4 * gib, Some(gib), None).expect("cap");
        assert_eq!(c.max_events, gib / 100 * 70 / BYTES_PER_EVENT);
        assert!(
            c.reason.contains("4096 MiB to load, 1024 MiB available"),
            "{}",
            c.reason
        );
        // The smaller of the two wins.
        assert_eq!(
            cap_for(4 * gib, Some(gib), Some(10)).map(|c| c.max_events),
            Some(10)
        );
        assert_eq!(
            cap_for(4 * gib, Some(gib), Some(u64::MAX)).map(|c| c.max_events),
            Some(c.max_events)
        );
        // Unknown memory: only the flag.
        assert_eq!(cap_for(u64::MAX, None, None), None);
    }

    #[test]
    fn gzip_plain_size_from_trailer() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("x.json.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut e, &vec![b' '; 1 << 20]).expect("gz");
        let gz = e.finish().expect("gz");
        std::fs::write(&p, &gz).expect("write");
        assert_eq!(plain_size(&p, gz.len() as u64), 1 << 20);
        let q = d.path().join("x.json");
        std::fs::write(&q, b"[]").expect("write");
        assert_eq!(plain_size(&q, 2), 2);
    }
}
