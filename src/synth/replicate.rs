//! Real-shaped big traces: a real Kineto/Chrome JSON capture replicated in time to a target size.
//!
//! The synthetic generator ([`super::kineto`]) is regular; real traces carry arg-heavy CPU ops
//! (`Input Dims`, `Input type`, `External id`), python_function stacks, `ac2g` flows, many short
//! kernels and pretty-printed multi-line events. [`replicate`] keeps every event's text as the
//! profiler wrote it and appends shifted copies: copy *k* moves `ts` by *k* × (span + 1 µs) and
//! offsets the ids that link events (`correlation`, `External id`, flow `id`/`bind_id`) by
//! *k* × a power of ten above the largest id, so launches still meet their own kernels. Metadata
//! events (`ph: "M"`) are written once. Top-level keys other than `traceEvents` are kept.

use regex::bytes::{Captures, Regex};
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// What [`replicate`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replicated {
    /// Copies of the source events written.
    pub copies: u64,
    /// Events written.
    pub events: u64,
    /// Bytes written.
    pub bytes: u64,
}

#[derive(serde::Deserialize)]
struct Times {
    ts: Option<f64>,
    dur: Option<f64>,
    ph: Option<String>,
}

fn bad(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

/// Writes `source` (a Chrome/Kineto JSON document, object form) replicated in time until at
/// least `target_bytes` are written.
pub fn replicate(source: &[u8], target_bytes: u64, out: &mut impl Write) -> io::Result<Replicated> {
    let mut top: BTreeMap<String, Box<RawValue>> = serde_json::from_slice(source).map_err(bad)?;
    let events = top
        .remove("traceEvents")
        .ok_or_else(|| bad("no traceEvents"))?;
    let events: Vec<&RawValue> = serde_json::from_str(events.get()).map_err(bad)?;
    let (mut lo, mut hi) = (f64::MAX, f64::MIN);
    let mut meta = vec![false; events.len()];
    for (e, m) in events.iter().zip(&mut meta) {
        let t: Times = serde_json::from_str(e.get()).unwrap_or(Times {
            ts: None,
            dur: None,
            ph: None,
        });
        *m = t.ph.as_deref() == Some("M");
        if let Some(ts) = t.ts.filter(|_| !*m) {
            lo = lo.min(ts);
            hi = hi.max(ts + t.dur.unwrap_or(0.0).max(0.0));
        }
    }
    let period = if hi >= lo {
        (hi - lo).ceil() as i64 + 1
    } else {
        1
    };
    let ts_re = Regex::new(r#""ts"(\s*:\s*)(-?\d+)"#).map_err(bad)?;
    let id_re =
        Regex::new(r#""(correlation|External id|id|bind_id)"(\s*:\s*)(\d+)"#).map_err(bad)?;
    let mut max_id = 0u64;
    for e in &events {
        for c in id_re.captures_iter(e.get().as_bytes()) {
            let v = std::str::from_utf8(&c[3]).ok().and_then(|s| s.parse().ok());
            max_id = max_id.max(v.unwrap_or(0));
        }
    }
    let id_step = 10u64.pow((max_id.max(1) as f64).log10().floor() as u32 + 1);

    let mut w = Counted { out, n: 0 };
    w.write_all(b"{\n")?;
    for (k, v) in &top {
        let key = serde_json::to_string(k).map_err(bad)?;
        writeln!(w, "  {key}: {},", v.get())?;
    }
    w.write_all(b"  \"traceEvents\": [\n")?;
    let mut copies = 0u64;
    let mut written = 0u64;
    let mut buf = Vec::new();
    while copies == 0 || w.n < target_bytes {
        let dt = copies as i64 * period;
        let did = copies * id_step;
        for (e, &m) in events.iter().zip(&meta) {
            if m && copies > 0 {
                continue;
            }
            buf.clear();
            let text = e.get().as_bytes();
            let shifted = ts_re.replace_all(text, |c: &Captures| {
                let v: i64 = std::str::from_utf8(&c[2])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                let gap = String::from_utf8_lossy(&c[1]).into_owned();
                format!("\"ts\"{gap}{}", v + dt).into_bytes()
            });
            let shifted = id_re.replace_all(&shifted, |c: &Captures| {
                let v: u64 = std::str::from_utf8(&c[3])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                let key = String::from_utf8_lossy(&c[1]).into_owned();
                let gap = String::from_utf8_lossy(&c[2]).into_owned();
                format!("\"{key}\"{gap}{}", v + did).into_bytes()
            });
            if written > 0 {
                buf.extend_from_slice(b",\n");
            }
            buf.extend_from_slice(b"  ");
            buf.extend_from_slice(&shifted);
            w.write_all(&buf)?;
            written += 1;
        }
        copies += 1;
    }
    w.write_all(b"\n  ]\n}\n")?;
    Ok(Replicated {
        copies,
        events: written,
        bytes: w.n,
    })
}

struct Counted<'a, W> {
    out: &'a mut W,
    n: u64,
}

impl<W: Write> Write for Counted<'_, W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let k = self.out.write(b)?;
        self.n += k as u64;
        Ok(k)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{Progress, chrome};
    use crate::model::SourceInfo;

    #[test]
    fn copies_shift_times_and_ids() {
        let src = br#"{"schemaVersion": 1, "traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2,
   "ts": 100.5, "dur": 4, "args": {"correlation": 7, "External id": 3}},
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
   "ts": 110.25, "dur": 10, "args": {"correlation": 7}}
]}"#;
        let mut out = Vec::new();
        let r = replicate(src, 1, &mut out).unwrap();
        assert_eq!((r.copies, r.events), (1, 3));
        let mut out = Vec::new();
        let r = replicate(src, 900, &mut out).unwrap();
        assert!(r.copies >= 3 && r.bytes == out.len() as u64, "{r:?}");
        assert_eq!(r.events, 1 + 2 * r.copies);
        let cap = chrome::load_bytes(&out, SourceInfo::default(), &Progress::default()).unwrap();
        assert_eq!(cap.slices.len() as u64, 2 * r.copies);
        // Span 100.5 .. 120.25 → period 21 µs; ids step by 10.
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(r#""ts": 121.5"#), "{text}");
        assert!(text.contains(r#""correlation": 17"#));
        assert_eq!(text.matches("process_name").count(), 1);
        assert!(cap.warnings.is_empty(), "{:?}", cap.warnings);
    }
}
