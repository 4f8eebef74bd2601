//! A binary snapshot of a loaded [`Capture`]: every column written as little-endian arrays, read
//! back without parsing. Used by the capture cache (`formats::cache`) so that reopening a
//! multi-GB JSON trace costs a copy of its model instead of a parse.
//!
//! Layout: magic `TTSNAP`, a format version, then the capture's parts in a fixed order; every
//! length is checked against the bytes left before anything is allocated, and every id is checked
//! against its table, so a corrupt or truncated snapshot is an error, never a panic or a huge
//! allocation. Captures with lazily read args (XPlane) are not snapshotted.
//!
//! `codec` holds the byte layout (checksum, writer, checked reader, enum codes); `encode` and
//! `decode` walk the capture's parts in the same order. This file lists and re-exports, and holds
//! the round-trip tests.

mod codec;
mod decode;
mod encode;

pub use codec::{SnapshotError, VERSION};
pub use decode::decode;
pub use encode::{encode, encode_to, supported};

/// Round trips of real and generated captures, and damaged snapshots that must fail cleanly.
#[cfg(test)]
mod tests {
    use super::codec::checksum;
    use super::decode::decode;
    use super::encode::encode;
    use crate::formats::{Progress, chrome};
    use crate::model::capture::{Capture, SourceInfo};

    /// Every part of two captures, compared through their debug text (the interner by content).
    fn same(a: &Capture, b: &Capture) -> bool {
        let strs = |c: &Capture| {
            c.strings
                .iter()
                .map(|(_, s)| s.to_string())
                .collect::<Vec<_>>()
        };
        strs(a) == strs(b)
            && format!(
                "{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}",
                a.format,
                a.args,
                a.processes,
                a.tracks,
                a.slices,
                a.instants,
                a.counters,
                a.flows,
                a.aggregated,
                (a.origin_epoch_ns, a.span, a.metadata),
                a.warnings,
                a.source
            ) == format!(
                "{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}",
                b.format,
                b.args,
                b.processes,
                b.tracks,
                b.slices,
                b.instants,
                b.counters,
                b.flows,
                b.aggregated,
                (b.origin_epoch_ns, b.span, b.metadata),
                b.warnings,
                b.source
            )
    }

    fn fixtures() -> Vec<Capture> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chrome");
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.to_string_lossy().to_string();
            if name.ends_with(".json") || name.ends_with(".json.gz") {
                let src = SourceInfo {
                    path: p.clone(),
                    ..SourceInfo::default()
                };
                out.push(chrome::load(&p, src, &Progress::default()).unwrap());
            }
        }
        out
    }

    #[test]
    fn round_trip_of_every_fixture() {
        let caps = fixtures();
        assert!(caps.len() >= 10);
        for c in &caps {
            let snap = encode(c).unwrap();
            let back = decode(&snap, c.source.clone()).unwrap();
            assert!(same(c, &back), "{}", c.source.path.display());
        }
    }

    #[test]
    fn corrupt_or_cut_snapshots_are_errors() {
        let caps = fixtures();
        let c = caps
            .iter()
            .max_by_key(|c| c.slices.len())
            .expect("a fixture");
        let snap = encode(c).unwrap();
        // Every cut fails cleanly.
        for cut in (0..snap.len()).step_by((snap.len() / 300).max(1)) {
            assert!(
                decode(&snap[..cut], SourceInfo::default()).is_err(),
                "cut {cut}"
            );
        }
        // Flipped bytes never panic (most fail; some only change a value).
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut bad = snap.clone();
            let i = (x as usize) % bad.len();
            bad[i] ^= (x >> 32) as u8 | 1;
            let _ = decode(&bad, SourceInfo::default());
        }
        let mut wrong = snap.clone();
        wrong[6] ^= 1;
        assert_eq!(
            decode(&wrong, SourceInfo::default()).unwrap_err().expected,
            "a matching checksum"
        );
        // Past the checksum, the parser's own checks hold (a snapshot with a valid sum but a
        // wrong version or cut body).
        let body = &snap[..snap.len() - 8];
        let mut v = body.to_vec();
        v[6] ^= 1;
        let resum = |v: &[u8]| {
            let mut w = v.to_vec();
            w.extend_from_slice(&checksum(v).to_le_bytes());
            w
        };
        assert_eq!(
            decode(&resum(&v), SourceInfo::default())
                .unwrap_err()
                .expected,
            "this tracetui's snapshot version"
        );
        for cut in (0..body.len()).step_by((body.len() / 300).max(1)) {
            assert!(
                decode(&resum(&body[..cut]), SourceInfo::default()).is_err(),
                "cut {cut}"
            );
        }
    }
}
