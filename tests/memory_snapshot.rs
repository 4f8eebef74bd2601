//! Allocator snapshots (`torch.cuda.memory._dump_snapshot` pickles) against torch's own
//! `_memory_viz` output on the same files (tests/fixtures/memory, made and checked by
//! docs/oracle/memory_snapshot.py): the folded lines of `memory` and `segments`, the totals of
//! `stats`; the replayed device traces; and the pickle reader on hand-written and hostile bytes.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use tracetui::formats::snapshot::{self, pickle};
use tracetui::model::memory::LIVE_AT_END;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/memory")
        .join(name)
}

fn lines(name: &str) -> Vec<String> {
    std::fs::read_to_string(fixture(name))
        .expect("expected output")
        .lines()
        .map(str::to_string)
        .collect()
}

/// memory_viz `_format_size`.
fn format_size(n: i64) -> String {
    let mut v = n as f64;
    for unit in ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi"] {
        if v.abs() < 1024.0 {
            return format!("{v:.1}{unit}B");
        }
        v /= 1024.0;
    }
    format!("{v:.1}YiB")
}

#[test]
fn folded_lines_and_totals_equal_memory_viz() {
    for stem in ["snap_multi", "snap_expandable", "snap_small"] {
        let s = snapshot::load(&fixture(&format!("{stem}.pickle"))).expect("loads");
        assert_eq!(
            s.folded_memory(),
            lines(&format!("{stem}.memory.txt")),
            "{stem}"
        );
        assert_eq!(
            s.folded_segments(),
            lines(&format!("{stem}.segments.txt")),
            "{stem}"
        );
        let stats = lines(&format!("{stem}.stats.txt"));
        let t = &s.totals;
        for want in [
            format!("segments: {}", t.segments),
            format!("total_reserved: {}", format_size(t.total_reserved)),
            format!("total_allocated: {}", format_size(t.total_allocated)),
        ] {
            assert!(stats.contains(&want), "{stem}: {want} not in {stats:?}");
        }
        assert_eq!(
            t.free_internal + t.free_external + t.total_allocated,
            t.total_reserved
        );
    }
}

#[test]
fn device_traces_replay() {
    let s = snapshot::load(&fixture("snap_multi.pickle")).expect("loads");
    let devs: Vec<&str> = s.model.tracks.iter().map(|t| t.device.as_str()).collect();
    assert_eq!(devs, vec!["cuda:0", "cuda:1", "cuda:2"]);
    let d0 = &s.model.tracks[0];
    // Figures of the independent replay in docs/oracle/memory_snapshot.py.
    assert_eq!(d0.peak_allocated().map(|p| p.1), Some(28_317_184));
    assert_eq!(d0.peak_reserved().map(|p| p.1), Some(41_943_040));
    assert_eq!(
        (d0.counts.allocs, d0.counts.frees, d0.counts.unmatched_frees),
        (49, 50, 11)
    );
    assert_eq!(d0.ooms.len(), 1);
    assert_eq!(d0.ooms[0].bytes, 40 << 30);
    assert_eq!(d0.ooms[0].device_free, Some(123 << 20));
    // What is live at the end is what the segments hold as active blocks, per device.
    for tr in &s.model.tracks {
        let dev: i64 = tr.device["cuda:".len()..].parse().expect("index");
        let active: i64 = s
            .segments
            .iter()
            .filter(|g| g.device == dev)
            .flat_map(|g| &g.blocks)
            .filter(|b| b.state.starts_with("active"))
            .map(|b| b.size)
            .sum();
        assert_eq!(tr.live_at_end().1, active, "{}", tr.device);
        assert_eq!(*tr.allocated.last().expect("samples"), active);
        assert!(tr.allocs.start.windows(2).all(|w| w[0] <= w[1]));
        assert!(
            tr.allocs
                .end
                .iter()
                .zip(&tr.allocs.start)
                .all(|(&e, &st)| e == LIVE_AT_END || e >= st)
        );
    }
    let e = snapshot::load(&fixture("snap_expandable.pickle")).expect("loads");
    assert!(e.segments.iter().all(|g| g.is_expandable));
    assert_eq!(
        e.model.tracks[0].peak_allocated().map(|p| p.1),
        Some(46_159_872)
    );
    assert_eq!(
        e.model.tracks[0].peak_reserved().map(|p| p.1),
        Some(62_914_560)
    );
}

#[test]
fn pickle_values() {
    // protocol 4: {'a': [1, -2, 2**64 - 1, 2**63, -2**70, 1.5, None, True, 'é'], 'b': <memo a's list>}
    let bytes: &[u8] = &[
        0x80, 4, 0x95, 0, 0, 0, 0, 0, 0, 0, 0, b'}', 0x94, b'(', 0x8c, 1, b'a', 0x94, b']', 0x94,
        b'(', b'K', 1, b'J', 0xfe, 0xff, 0xff, 0xff, 0x8a, 9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0x00, 0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x00, 0x8a, 9, 0, 0, 0, 0, 0, 0, 0,
        0, 0xc0, b'G', 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, b'N', 0x88, 0x8c, 2, 0xc3, 0xa9, b'e', 0x8c,
        1, b'b', b'h', 2, b'u', b'.',
    ];
    let p = pickle::decode(bytes).expect("decodes");
    let a = p.get(p.root, "a").expect("a");
    let items = p.items(a);
    assert_eq!(items.len(), 9);
    assert_eq!(p.int(items[0]), Some(1));
    assert_eq!(p.int(items[1]), Some(-2));
    assert_eq!(p.uint(items[2]), Some(u64::MAX));
    assert_eq!(p.uint(items[3]), Some(1 << 63));
    assert_eq!(p.val(items[4]), pickle::Val::BigInt(-(2f64.powi(70))));
    assert_eq!(p.val(items[5]), pickle::Val::Float(1.5));
    assert_eq!(p.val(items[6]), pickle::Val::None);
    assert_eq!(p.val(items[7]), pickle::Val::Bool(true));
    assert_eq!(p.str(items[8]).as_deref(), Some("é"));
    assert_eq!(
        p.get(p.root, "b"),
        Some(a),
        "memo reference to the same list"
    );
}

#[test]
fn bad_pickles_fail_with_offset() {
    let e = pickle::decode(&[0x80, 4, b'X', 10, 0, 0, 0, b'a']).expect_err("truncated");
    assert_eq!(e.offset, 2);
    assert!(e.message.contains("ends inside"), "{}", e.message);
    let e = pickle::decode(&[0x80, 4, b'}', 0xff]).expect_err("unknown op");
    assert_eq!(e.offset, 3);
    assert!(e.message.contains("0xff"), "{}", e.message);
    let e = snapshot::load_bytes(&[0x80, 4, b'K', 1, b'.'], Path::new("x.pickle"))
        .expect_err("not a snapshot");
    assert!(e.to_string().contains("not an allocator snapshot"), "{e}");
    let e = snapshot::load_bytes(b"{}", Path::new("x.pickle")).expect_err("not a pickle");
    assert_eq!(e.kind.name(), "not_a_trace");
}

proptest! {
    #[test]
    fn hostile_bytes_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut b = vec![0x80, 4];
        b.extend(tail);
        let _ = snapshot::load_bytes(&b, Path::new("x.pickle"));
    }

    #[test]
    fn truncated_fixture_never_panics(cut in 0usize..11636) {
        let b = std::fs::read(fixture("snap_multi.pickle")).expect("fixture");
        let _ = snapshot::load_bytes(&b[..cut.min(b.len())], Path::new("x.pickle"));
    }
}
