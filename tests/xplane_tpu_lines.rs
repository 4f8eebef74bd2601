//! The lines XProf derives on a TPU TensorCore plane, on a real TPU inference capture (4 cores,
//! v6e, host offload copies; openxla/xprof test data): `Framework Name Scope`, `Framework Ops`
//! and `Source code` equal XProf 2.24.2's own trace viewer conversion per line (event count)
//! and per event name (count and total), on every core (`tpu_inference_2.xprof_line_names.json`,
//! from `tools/xprof_lines.py`). The raw lines stay raw: every event of the file is kept.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tracetui::formats::{Progress, xplane};
use tracetui::model::{Capture, SourceInfo, TrackKind};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/xplane")
        .join(name)
}

fn json(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(fixture(name)).expect("json fixture");
    serde_json::from_str(&text).expect("valid json")
}

fn load() -> Capture {
    xplane::load(
        &fixture("tpu_inference_2.xplane.pb.gz"),
        SourceInfo::default(),
        &Progress::default(),
    )
    .expect("loads")
}

/// Per event name: (count, total ps).
type Names = BTreeMap<String, (u64, i64)>;

/// `process / line` → (track kind, its names).
fn lines(c: &Capture) -> BTreeMap<String, (TrackKind, Names)> {
    let mut out: BTreeMap<String, (TrackKind, Names)> = BTreeMap::new();
    for (t, tr) in c.tracks.iter().enumerate() {
        let key = format!(
            "{} / {}",
            c.process_name(tr.process),
            c.track_name(t as u32)
        );
        let e = out.entry(key).or_insert((tr.kind, BTreeMap::new()));
        let (lo, hi) = tr.slices;
        for i in lo..hi {
            let n = e.1.entry(c.slice_name(i).to_string()).or_default();
            n.0 += 1;
            n.1 += c.slices.dur[i as usize];
        }
    }
    out
}

#[test]
fn framework_and_source_lines_equal_xprofs_on_every_core() {
    let c = load();
    let ours = lines(&c);
    let want = json("tpu_inference_2.xprof_line_names.json");
    let mut checked = 0;
    for (k, names) in want.as_object().expect("object") {
        let line = k.split(" / ").nth(1).unwrap_or("");
        if !matches!(
            line,
            "Framework Name Scope" | "Framework Ops" | "Source code"
        ) {
            continue;
        }
        let (kind, got) = ours
            .get(k)
            .unwrap_or_else(|| panic!("no line {k}; have {:?}", ours.keys()));
        assert_eq!(*kind, TrackKind::Derived, "{k}");
        let names = names.as_object().expect("names");
        assert_eq!(got.len(), names.len(), "{k}: {got:?}");
        for (name, v) in names {
            let count = v[0].as_u64().expect("count");
            // XProf's totals are ps rounded from its µs floats: equal within 1 ns.
            let total = v[1].as_i64().expect("total ps");
            let (gc, gt) = got.get(name).copied().unwrap_or_default();
            assert_eq!(gc, count, "{k} | {name}");
            assert!((gt - total).abs() <= 1000, "{k} | {name}: {gt} vs {total}");
        }
        checked += 1;
    }
    assert_eq!(checked, 12, "3 lines on each of 4 cores");
}

#[test]
fn raw_tpu_lines_keep_every_event_and_offloads_pair_starts_with_dones() {
    let c = load();
    let ours = lines(&c);
    let count = |k: &str| -> u64 {
        ours.get(k)
            .map_or(0, |(_, n)| n.values().map(|v| v.0).sum())
    };
    // Lines of the file: XProf draws 45 zero-duration XLA Ops of TPU:0 as instants and the
    // `_a` events of Async XLA Ops as async pairs; tracetui keeps them on their lines.
    assert_eq!(count("/device:TPU:0 / XLA Ops"), 1504);
    assert_eq!(count("/device:TPU:0 / Async XLA Ops"), 600);
    assert_eq!(ours["/device:TPU:0 / XLA Ops"].0, TrackKind::Derived);
    // Host offload transfers: one per copy-start/copy-done pair of host memory (S(5)), on
    // every core, none overlapping another of its row.
    for core in 0..4 {
        let rows: Vec<usize> = c
            .tracks
            .iter()
            .enumerate()
            .filter(|(t, tr)| {
                c.process_name(tr.process) == format!("/device:TPU:{core}")
                    && c.track_name(*t as u32).starts_with("Host Offload Ops row ")
            })
            .map(|(t, _)| t)
            .collect();
        assert!(!rows.is_empty(), "TPU:{core}");
        let mut n = 0;
        for &t in &rows {
            let (lo, hi) = c.tracks[t].slices;
            n += hi - lo;
            let mut end = i64::MIN;
            for i in lo..hi {
                let s = c.slices.start[i as usize];
                assert!(s >= end, "TPU:{core} row {t}: overlap at {s}");
                end = s + c.slices.dur[i as usize];
                assert!(c.slice_name(i).starts_with("offload-copy."));
            }
        }
        // 6 transfers per run of the 100-run loop, as XProf.
        assert_eq!(n, 600, "TPU:{core}");
    }
}

/// `tracetui stats FILE --plane TPU --group-by hlo_op [--line L] --json`: name → (count,
/// total ns, self ns).
fn hlo_rows(line: Option<&str>) -> BTreeMap<String, (u64, i64, i64)> {
    let path = fixture("tpu_inference_2.xplane.pb.gz");
    let mut args = vec![
        "stats".to_string(),
        path.display().to_string(),
        "--plane".into(),
        "TPU".into(),
        "--group-by".into(),
        "hlo_op".into(),
        "--json".into(),
    ];
    if let Some(l) = line {
        args.extend(["--line".to_string(), l.to_string()]);
    }
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .args(&args)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = v["captures"][0]["stats"].as_array().expect("rows").clone();
    rows.iter()
        .map(|r| {
            let name = r["name"].as_str().unwrap_or_default().to_string();
            let n = |k: &str| r[k].as_i64().unwrap_or(-1);
            (name, (n("count") as u64, n("total_ns"), n("self_ns")))
        })
        .collect()
}

#[test]
fn hlo_op_stats_equal_xprofs_hlo_stats() {
    let want = json("tpu_inference_2.xprof_hlo_stats.json");
    let want = want["rows"].as_array().expect("rows");
    assert_eq!(want.len(), 17);
    for line in [Some("^XLA Ops$"), None] {
        let got = hlo_rows(line);
        for w in want {
            let name = w["hlo_op_name"].as_str().expect("name");
            let us = |k: &str| w[k].as_f64().expect("number");
            let (count, total, self_ns) = got
                .get(name)
                .copied()
                .unwrap_or_else(|| panic!("no row {name}: {got:?}"));
            // Occurrences over the four TensorCores; times: Σ device_duration_ps, and an op's
            // self time is its time (XProf's µs, within 1 ns).
            assert_eq!(count, us("occurrences") as u64, "{name}");
            assert!(
                (total as f64 - us("total_time") * 1e3).abs() <= 1.0,
                "{name}: {total}"
            );
            assert!(
                (self_ns as f64 - us("total_self_time") * 1e3).abs() <= 1.0,
                "{name}"
            );
        }
        // Every other event of the TPU planes (modules, async transfers, TraceMe) is `(none)`.
        assert_eq!(
            got.len(),
            want.len() + usize::from(line.is_none()),
            "{got:?}"
        );
    }
}
