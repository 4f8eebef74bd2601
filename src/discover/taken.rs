//! When a capture was taken, from the trace itself rather than the file's modification time
//! (copied files all show the copy time): for the picker's time column and its sort order,
//! before the capture is loaded. Loaded captures know it exactly
//! ([`Capture::zero_epoch_ns`](crate::model::Capture::zero_epoch_ns)); this is the cheap probe.
//!
//! - Chrome / Kineto JSON: the first event time in the first 8 KiB — absolute epoch µs in
//!   older Kineto files, else relative µs plus `baseTimeNanoseconds` (read from the head, or
//!   from the last 4 KiB of the file, where newer Kineto writes it; gzip files up to 8 MiB).
//! - XPlane: the XProf session directory name (`plugins/profile/2026_11_22_01_25_12/`).

use super::CaptureFile;
use crate::model::Format;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Epoch µs values from here on are absolute (2001-09-09); smaller ones are relative.
const EPOCH_US_MIN: f64 = 1e15;

/// Wall-clock epoch ns at which `cap` was taken, when its file says; `None` otherwise.
pub fn capture_time(cap: &CaptureFile) -> Option<i64> {
    time_of(&cap.path, cap.format)
}

/// [`capture_time`] of the file at `path` in `format`.
pub fn time_of(path: &Path, format: Format) -> Option<i64> {
    match format {
        Format::XPlane => session_time(path),
        _ => json_time(path).or_else(|| session_time(path)),
    }
}

/// The rank of a distributed run's capture (Kineto `distributedInfo.rank`, written near the
/// top of the file), when its first 8 KiB say; the loaded capture knows it for sure
/// ([`Capture::rank`](crate::model::Capture::rank)).
pub fn rank_of(path: &Path, format: Format) -> Option<i64> {
    if format == Format::XPlane {
        return None;
    }
    let head = super::sniff::head(path).ok()?;
    let at = find(&head, b"\"distributedInfo\"")?;
    let info = &head[at..];
    // Only within the distributedInfo object.
    let end = info.iter().position(|&b| b == b'}').unwrap_or(info.len());
    let r = number_after(&info[..end], b"\"rank\"")?;
    (r.fract() == 0.0 && r >= 0.0).then_some(r as i64)
}

/// The first event time of a JSON trace (see the module doc).
fn json_time(path: &Path) -> Option<i64> {
    let head = super::sniff::head(path).ok()?;
    let ts = first_ts(&head)?;
    if ts >= EPOCH_US_MIN {
        return Some((ts * 1e3) as i64);
    }
    let base = number_after(&head, b"\"baseTimeNanoseconds\"").or_else(|| {
        let tail = tail(path, 4096)?;
        number_after(&tail, b"\"baseTimeNanoseconds\"")
    })?;
    Some(base as i64 + (ts * 1e3) as i64)
}

/// Gzip files up to this size are inflated to read their tail (newer Kineto writes
/// `baseTimeNanoseconds` last); bigger ones are not probed that way.
const GZIP_TAIL_MAX: u64 = 8 << 20;

/// The last `n` bytes of a file (inflated for a gzip file of at most [`GZIP_TAIL_MAX`] bytes).
fn tail(path: &Path, n: u64) -> Option<Vec<u8>> {
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let mut magic = [0u8; 2];
    f.read_exact(&mut magic).ok()?;
    if crate::formats::is_gzip(&magic) {
        if len > GZIP_TAIL_MAX {
            return None;
        }
        f.seek(SeekFrom::Start(0)).ok()?;
        let mut dec = flate2::read::MultiGzDecoder::new(f);
        let mut ring: Vec<u8> = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match dec.read(&mut buf) {
                Ok(0) => break,
                Ok(k) => {
                    ring.extend_from_slice(&buf[..k]);
                    if ring.len() as u64 > 2 * n {
                        ring.drain(..ring.len() - n as usize);
                    }
                }
                Err(_) => break,
            }
        }
        return Some(ring);
    }
    f.seek(SeekFrom::Start(len.saturating_sub(n))).ok()?;
    let mut out = Vec::new();
    f.take(n).read_to_end(&mut out).ok()?;
    Some(out)
}

/// The first positive `"ts"` value in `buf` (metadata events carry `"ts": 0`).
fn first_ts(buf: &[u8]) -> Option<f64> {
    let key = b"\"ts\"";
    let mut from = 0;
    while let Some(k) = find(&buf[from..], key) {
        let at = from + k + key.len();
        if let Some(v) = number_at(buf, at).filter(|&v| v > 0.0) {
            return Some(v);
        }
        from = at;
    }
    None
}

/// The number after `key` (and its colon) in `buf`.
fn number_after(buf: &[u8], key: &[u8]) -> Option<f64> {
    let k = find(buf, key)?;
    number_at(buf, k + key.len())
}

/// Parses `: 123.4` / `:"123.4"` starting at `at`.
fn number_at(buf: &[u8], at: usize) -> Option<f64> {
    let rest = buf.get(at..)?;
    let mut i = 0;
    while i < rest.len() && (rest[i].is_ascii_whitespace() || rest[i] == b':' || rest[i] == b'"') {
        i += 1;
    }
    let start = i;
    while i < rest.len() && (rest[i].is_ascii_digit() || rest[i] == b'.') {
        i += 1;
    }
    std::str::from_utf8(&rest[start..i]).ok()?.parse().ok()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The time in an XProf session directory name `YYYY_MM_DD_HH_MM_SS` (taken as UTC).
fn session_time(path: &Path) -> Option<i64> {
    let name = path.parent()?.file_name()?.to_str()?;
    let parts: Vec<i64> = name
        .split('_')
        .map(|p| p.parse::<i64>().ok())
        .collect::<Option<Vec<_>>>()?;
    let [y, mo, d, h, mi, s] = parts.as_slice() else {
        return None;
    };
    if !(1970..=9999).contains(y) || !(1..=12).contains(mo) || !(1..=31).contains(d) {
        return None;
    }
    let days = days_from_civil(*y, *mo, *d);
    Some(((days * 86_400 + h * 3600 + mi * 60 + s) * 1_000_000_000).max(0))
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_heads_and_session_names() {
        let abs = br#"{"traceEvents":[{"ph":"M","ts":0},{"ph":"X","ts": 1623143093496523,"dur":1}"#;
        assert_eq!(first_ts(abs), Some(1623143093496523.0));
        let rel = br#"{"baseTimeNanoseconds": 1700000000000000000, "traceEvents":[{"ts":"12.5"}"#;
        assert_eq!(first_ts(rel), Some(12.5));
        assert_eq!(number_after(rel, b"\"baseTimeNanoseconds\""), Some(1.7e18));
        let p = Path::new("/logs/plugins/profile/2026_11_22_01_25_12/vm.xplane.pb");
        // 2026-11-22 01:25:12 UTC
        let want = crate::model::clock::format_clock(session_time(p).unwrap_or(0));
        assert_eq!(want, "2026-11-22 01:25:12.000");
        assert_eq!(session_time(Path::new("/logs/run1/vm.xplane.pb")), None);
        assert_eq!(days_from_civil(1970, 1, 1), 0);
    }
}
