//! The roofline on a real TPU capture (4 v6e TensorCores, JAX inference with host offload
//! copies; openxla/xprof test data, `tpu_inference_2.xplane.pb.gz`) equals XProf 2.24.2's
//! `roofline_model` and `op_profile` (`docs/oracle/xprof_tpu_roofline.py`): per (op, program)
//! its occurrences, time (`device_duration_ps`), FLOPs and bytes, the v6e peaks, the bound and
//! the share of peak; the async copies are transfers with their bytes, never a rate. A copy
//! without `/host:metadata` gives the same roofline; a copy whose HLO op metadata is stripped
//! still loads, with a load warning and a roofline note of what could not be computed.

use flate2::read::GzDecoder;
use prost::Message;
use std::io::Read;
use std::path::Path;
use tracetui::analysis::roofline::{self, Bound, Link, Roofline, xla};
use tracetui::formats::xplane::generated::XSpace;
use tracetui::formats::{Progress, xplane};
use tracetui::model::{Capture, SourceInfo};

fn space() -> XSpace {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/xplane/tpu_inference_2.xplane.pb.gz");
    let mut bytes = Vec::new();
    GzDecoder::new(std::fs::File::open(path).expect("fixture"))
        .read_to_end(&mut bytes)
        .expect("gzip");
    XSpace::decode(bytes.as_slice()).expect("an XSpace")
}

fn load(space: &XSpace) -> Capture {
    xplane::load_bytes(
        &space.encode_to_vec(),
        SourceInfo::default(),
        &Progress::default(),
    )
    .expect("loads")
}

/// One row as compared: (program, op, count, device ps, Σ FLOPs, Σ bytes, bound, % of peak).
type RowFigures = (String, String, u64, i64, f64, f64, Option<Bound>, f64);

/// The rows by (program, op).
fn rows(r: &Roofline) -> Vec<RowFigures> {
    let mut v: Vec<_> = r
        .rows
        .iter()
        .map(|x| {
            let n = x.count as f64;
            (
                x.input_dims.clone(),
                x.name.clone(),
                x.count,
                x.device_ps,
                x.cost.flops * n,
                x.cost.bytes.unwrap_or(0.0) * n,
                x.bound(),
                x.peak_pct().unwrap_or(0.0),
            )
        })
        .collect();
    v.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    v
}

#[test]
fn tpu_roofline_equals_xprofs_roofline_model() {
    let c = load(&space());
    let r = roofline::compute(&c);
    let dev = r.device.as_ref().expect("a device");
    assert_eq!(dev.name, "TPU v6 Lite");
    let p = dev.peaks.expect("v6e peaks");
    // XProf: peak_flop_rate 918000 GFLOP/s, peak_hbm_bw 1525.5 GiB/s.
    assert_eq!((p.name, p.bf16), ("Google TPU v6e", Some(918.0)));
    assert!((p.mem_tbps * 1e12 / f64::from(1u32 << 30) - 1525.5).abs() < 0.1);
    let jit_f = "jit_f(12190760917235803885)";
    // XProf 2.24.2 roofline_model (Total rows): occurrences, total time (ps), FLOP/s and GiB/s
    // times that time, roofline efficiency.
    let want = [
        (
            jit_f,
            "broadcast_add_fusion",
            400,
            3_190_582_365_000i64,
            0.821822,
        ),
        (
            jit_f,
            "broadcast_add_fusion.1",
            400,
            3_262_107_413_750,
            0.803803,
        ),
        (
            jit_f,
            "broadcast_add_fusion.2",
            400,
            3_167_203_858_750,
            0.827888,
        ),
        (
            "jit__psum(9646411105960254074)",
            "all-reduce",
            12,
            1_460_345_258_750,
            0.0538658,
        ),
        (
            "jit_broadcast_in_dim(11287434908481120160)",
            "broadcast.2",
            1,
            4_443_766_250,
            0.737576,
        ),
    ];
    let got = rows(&r);
    assert_eq!(got.len(), want.len(), "{got:?}");
    let mut want = want.to_vec();
    want.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    for (g, w) in got.iter().zip(&want) {
        assert_eq!((g.0.as_str(), g.1.as_str(), g.2, g.3), (w.0, w.1, w.2, w.3));
        assert_eq!(g.6, Some(Bound::Memory), "{}: HBM bound", g.1);
        assert!(
            (g.7 / 100.0 - w.4).abs() <= 0.01 * w.4,
            "{}: {}% against XProf's {}",
            g.1,
            g.7,
            w.4 * 100.0
        );
    }
    // op_profile's raw figures: each fusion 1.342 GFLOP and 10.737 GB per call.
    let fusion = got
        .iter()
        .find(|g| g.1 == "broadcast_add_fusion")
        .expect("row");
    assert_eq!(
        (fusion.4, fusion.5),
        (536_870_912_000.0, 4_294_967_296_000.0)
    );
    let ar = got.iter().find(|g| g.1 == "all-reduce").expect("row");
    assert_eq!((ar.4, ar.5), (16_106_127_360.0, 128_849_018_880.0));
    // The copies: 2 400 starts and 2 400 dones (6 ops × 100 runs × 4 cores), transfers with
    // XProf's bytes (6 × 2 GiB per run and core), no rate, no saving.
    type TransferFigures<'a> = (&'a str, Link, u64, Option<f64>, Option<f64>);
    let t: Vec<TransferFigures> = r
        .transfers
        .iter()
        .map(|t| (t.name.as_str(), t.link, t.count, t.bytes, t.gbps()))
        .collect();
    let b = Some(12_884_901_888_000.0);
    assert_eq!(
        t,
        [
            ("copy-done", Link::Async, 2400, b, None),
            ("copy-start", Link::Async, 2400, b, None)
        ]
    );
    assert_eq!(r.transfers[0].device_ps, 304_033_212_062_500);
    assert_eq!(
        r.modelled_ps() + r.transfer_ps() + r.unmodelled_ps(),
        r.total_device_ps
    );
    for row in &r.rows {
        assert!(!row.beyond_peak() && row.saved_ps() <= row.device_ps as f64);
    }
}

#[test]
fn without_host_metadata_the_tpu_roofline_is_the_same() {
    let full = space();
    let mut stripped = full.clone();
    stripped.planes.retain(|p| p.name != "/host:metadata");
    assert_eq!(stripped.planes.len() + 1, full.planes.len());
    let (a, b) = (load(&full), load(&stripped));
    let (ra, rb) = (roofline::compute(&a), roofline::compute(&b));
    assert_eq!(rows(&ra), rows(&rb));
    assert_eq!(ra.transfers, rb.transfers);
    assert!(b.warnings.iter().all(|w| w.kind != "tpu_no_hlo_metadata"));
}

#[test]
fn tpu_plane_without_hlo_op_metadata_loads_and_says_what_is_missing() {
    let mut s = space();
    // Strip every TPU plane's event metadata stats (flops, bytes_accessed, tf_op, source, …)
    // and the HLO modules: what a capture written without HLO metadata holds.
    s.planes.retain(|p| p.name != "/host:metadata");
    for p in s
        .planes
        .iter_mut()
        .filter(|p| p.name.starts_with("/device:TPU:"))
    {
        for m in p.event_metadata.values_mut() {
            m.stats.clear();
        }
    }
    let c = load(&s);
    let w = c
        .warnings
        .iter()
        .find(|w| w.kind == "tpu_no_hlo_metadata")
        .expect("a load warning");
    assert_eq!(w.count, 4, "one per TensorCore");
    assert!(w.message.contains("Framework Ops"), "{}", w.message);
    // The raw lines are all there.
    let ops: usize = c
        .tracks
        .iter()
        .enumerate()
        .filter(|(t, _)| c.track_name(*t as u32) == "XLA Ops")
        .map(|(_, tr)| (tr.slices.1 - tr.slices.0) as usize)
        .sum();
    assert_eq!(ops, 1504 + 1503 + 1503 + 1503);
    assert!(
        !(0..c.tracks.len()).any(|t| c.track_name(t as u32) == "Framework Ops"),
        "no framework line without tf_op"
    );
    let r = roofline::compute(&c);
    assert!(r.rows.is_empty());
    assert_eq!(r.note, Some(xla::NOTE_NO_TPU_COSTS));
}
