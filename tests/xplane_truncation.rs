//! Property tests on the real XPlane fixtures: a cut at any byte never panics and keeps exactly
//! the complete XPlanes before the cut (the decodable prefix, with a `truncated` warning); byte
//! flips never panic, every error names an offset inside the file, and every lazily decoded stat
//! of a successful load can be read.

use proptest::prelude::*;
use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;
use tracetui::formats::xplane::{self, scan};
use tracetui::formats::{LoadErrorKind, Progress};
use tracetui::model::*;

fn fixture(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/xplane")
        .join(name);
    let raw = std::fs::read(p).expect("fixture");
    if name.ends_with(".gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .expect("gunzip");
        out
    } else {
        raw
    }
}

struct Full {
    bytes: Vec<u8>,
    /// End offset of each top-level XPlane.
    ends: Vec<usize>,
}

fn vm() -> &'static Full {
    static F: OnceLock<Full> = OnceLock::new();
    F.get_or_init(|| {
        let bytes = fixture("vm.xplane.pb");
        let ends = scan::scan_space(&bytes)
            .expect("scan")
            .planes
            .iter()
            .map(|p| p.end)
            .collect();
        Full { bytes, ends }
    })
}

fn load(b: &[u8]) -> Result<Capture, tracetui::formats::LoadError> {
    let src = SourceInfo {
        path: "cut.xplane.pb".into(),
        ..SourceInfo::default()
    };
    xplane::load_bytes(b, src, &Progress::default())
}

fn slice_set(c: &Capture) -> Vec<(String, Ps, Ps)> {
    let mut v: Vec<_> = (0..c.slices.len())
        .map(|i| {
            (
                c.slice_name(i as u32).to_string(),
                c.slices.start[i],
                c.slices.dur[i],
            )
        })
        .collect();
    v.sort();
    v
}

/// Reads every slice's args (the lazy XPlane stats); returns how many were read.
fn read_all_args(c: &Capture) -> usize {
    c.slices
        .args
        .iter()
        .map(|&r| c.args.iter(r, &c.strings).count())
        .sum()
}

#[test]
fn fixture_has_several_planes() {
    let f = vm();
    assert!(f.ends.len() >= 3, "{:?}", f.ends);
    assert_eq!(f.ends[0], 199_372);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn cut_keeps_the_complete_planes(frac in 0.0f64..1.0) {
        let f = vm();
        let cut = (f.bytes.len() as f64 * frac) as usize;
        let kept = f.ends.iter().rev().find(|&&e| e <= cut).copied();
        match (load(&f.bytes[..cut]), kept) {
            (Ok(c), Some(k)) => {
                let exact = load(&f.bytes[..k]).expect("prefix of complete planes");
                prop_assert_eq!(slice_set(&c), slice_set(&exact));
                if cut > k {
                    let w = c.warnings.iter().find(|w| w.kind == "truncated");
                    prop_assert!(w.is_some_and(|w| w.message.contains("complete XPlanes")));
                }
                read_all_args(&c);
            }
            (Err(e), None) => {
                let want = if cut == 0 { LoadErrorKind::NotATrace } else { LoadErrorKind::Truncated };
                prop_assert_eq!(e.kind, want, "{}", e);
                prop_assert!(e.offset.is_some_and(|o| o <= cut as u64), "{}", e);
            }
            (r, k) => prop_assert!(false, "cut {cut}: {:?} with kept {:?}", r.err(), k),
        }
    }

    #[test]
    fn byte_flips_never_panic(flips in proptest::collection::vec((0.0f64..1.0, 1u8..=255), 1..8)) {
        let mut b = vm().bytes.clone();
        for &(at, x) in &flips {
            let i = ((b.len() as f64) * at) as usize;
            b[i] ^= x;
        }
        match load(&b) {
            Ok(c) => {
                read_all_args(&c);
            }
            Err(e) => {
                prop_assert!(e.offset.is_none_or(|o| o <= b.len() as u64), "{}", e);
                prop_assert!(!e.message.is_empty());
            }
        }
    }
}

/// The gzipped BERT capture and the corrupted TPU head: cuts and flips at a few places.
#[test]
fn other_fixtures_cut_and_flipped() {
    for name in [
        "tf_bert_gpu.xplane.pb.gz",
        "tpu_inference_2.corrupted.head64k.xplane.pb",
    ] {
        let b = fixture(name);
        for k in [
            0,
            1,
            2,
            10,
            100,
            1000,
            b.len() / 3,
            b.len() / 2,
            b.len() - 1,
        ] {
            let k = k.min(b.len());
            if let Err(e) = load(&b[..k]) {
                assert!(
                    e.offset.is_none_or(|o| o <= k as u64),
                    "{name} cut {k}: {e}"
                );
            }
            let mut f = b.clone();
            f[k.min(b.len() - 1)] ^= 0x5a;
            if let Ok(c) = load(&f) {
                read_all_args(&c);
            }
        }
    }
}

/// A cut `.xplane.pb.gz` on disk: the inflated prefix is decoded, the gzip error reported.
#[test]
fn cut_gzip_file_keeps_what_inflated() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/xplane/tf_bert_gpu.xplane.pb.gz");
    let raw = std::fs::read(p).expect("fixture");
    let d = tempfile::tempdir().expect("tempdir");
    let f = d.path().join("cut.xplane.pb.gz");
    std::fs::write(&f, &raw[..raw.len() * 9 / 10]).expect("write");
    match xplane::load(&f, SourceInfo::default(), &Progress::default()) {
        Ok(c) => {
            let w = c
                .warnings
                .iter()
                .find(|w| w.kind == "truncated")
                .expect("warning");
            assert!(
                w.message.contains("gzip") || w.message.contains("at byte"),
                "{}",
                w.message
            );
        }
        Err(e) => assert!(
            matches!(e.kind, LoadErrorKind::Truncated | LoadErrorKind::Corrupt),
            "{e}"
        ),
    }
}
