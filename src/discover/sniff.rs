//! Content sniffing: does a `.json[.gz]` file look like a Chrome / Kineto trace?

use crate::model::Format;
use flate2::read::GzDecoder;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// How many (decompressed) bytes are inspected.
pub const SNIFF_BYTES: usize = 8192;

/// Reads up to [`SNIFF_BYTES`] of `path`, gunzipping when it starts with the gzip magic.
pub fn head(path: &Path) -> io::Result<Vec<u8>> {
    let mut f = File::open(path)?;
    let mut raw = Vec::with_capacity(SNIFF_BYTES);
    (&mut f).take(SNIFF_BYTES as u64).read_to_end(&mut raw)?;
    if crate::formats::is_gzip(&raw) {
        let f = File::open(path)?;
        let mut out = Vec::with_capacity(SNIFF_BYTES);
        // A gzip stream that is truncated or corrupt still yields its first bytes; errors after
        // some output are ignored (the loader reports them with an offset).
        let mut dec = GzDecoder::new(f).take(SNIFF_BYTES as u64);
        let mut buf = [0u8; 4096];
        loop {
            match dec.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if out.is_empty() => return Err(e),
                Err(_) => break,
            }
        }
        return Ok(out);
    }
    Ok(raw)
}

/// Classifies the first bytes of a JSON file: `Some(Kineto)` for Kineto keys, `Some(Chrome)` for
/// another Chrome trace, `None` when it does not look like a trace.
pub fn classify_head(head: &[u8]) -> Option<Format> {
    let mut i = 0;
    if head.starts_with(&[0xef, 0xbb, 0xbf]) {
        i = 3;
    }
    let skip_ws = |mut i: usize| {
        while i < head.len() && head[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    i = skip_ws(i);
    let rest = head.get(i..)?;
    let has = |k: &[u8]| rest.windows(k.len()).any(|w| w == k);
    match rest.first()? {
        b'{' => {
            if has(b"\"schemaVersion\"")
                || has(b"\"deviceProperties\"")
                || has(b"\"baseTimeNanoseconds\"")
            {
                Some(Format::Kineto)
            } else if has(b"\"highres-ticks\"") {
                Some(Format::XProfJson)
            } else if has(b"\"traceEvents\"") || has(b"\"displayTimeUnit\"") {
                Some(Format::Chrome)
            } else {
                None
            }
        }
        b'[' => {
            let j = skip_ws(i + 1);
            if head.get(j) == Some(&b'{') && has(b"\"ph\"") {
                Some(Format::Chrome)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Sniffs a file: `Ok(None)` when readable but not a trace.
pub fn sniff(path: &Path) -> io::Result<Option<Format>> {
    Ok(classify_head(&head(path)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognizes_trace_heads() {
        assert_eq!(
            classify_head(b" {\n \"schemaVersion\": 1, \"traceEvents\": ["),
            Some(Format::Kineto)
        );
        assert_eq!(
            classify_head(b"\xef\xbb\xbf{\"traceEvents\":[{\"ph\":\"X\"}]}"),
            Some(Format::Chrome)
        );
        assert_eq!(
            classify_head(b"{\"displayTimeUnit\":\"ns\",\"metadata\":{\"highres-ticks\":true}"),
            Some(Format::XProfJson)
        );
        assert_eq!(
            classify_head(b"[ {\"name\":\"a\",\"ph\":\"B\"}"),
            Some(Format::Chrome)
        );
        assert_eq!(
            classify_head(b"[{\"name\":\"aten::mm\",\"count\":2}]"),
            None
        );
        assert_eq!(classify_head(b"{\"/host:CPU\": {\"a\": 1}}"), None);
        assert_eq!(classify_head(b""), None);
        assert_eq!(classify_head(b"\x00\x01garbage"), None);
    }
}
