//! The lines XProf derives on a GPU plane, on a cut of a real JAX capture (H200, jax 0.11, XLA
//! command buffers, `StepTraceAnnotation`, three autotuned functions after the loop): per
//! derived line the event count, and per event name the count and total, equal XProf 2.24's own
//! trace viewer conversion of the same file (`jax_gpu_attn.xprof_lines.json`,
//! `jax_gpu_attn.xprof_line_names.json`, from `tools/xprof_lines.py`).

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
        &fixture("jax_gpu_attn.xplane.pb.gz"),
        SourceInfo::default(),
        &Progress::default(),
    )
    .expect("loads")
}

/// `process / line` → track ids.
fn tracks(c: &Capture) -> BTreeMap<String, Vec<usize>> {
    let mut out: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (t, tr) in c.tracks.iter().enumerate() {
        let key = format!(
            "{} / {}",
            c.process_name(tr.process),
            c.track_name(t as u32)
        );
        out.entry(key).or_default().push(t);
    }
    out
}

#[test]
fn gpu_lines_equal_xprofs() {
    let c = load();
    let ours = tracks(&c);
    let want = json("jax_gpu_attn.xprof_lines.json");
    let want = want.as_object().expect("object");
    let gpu_lines: Vec<&String> = want.keys().filter(|k| k.starts_with("/device:")).collect();
    assert_eq!(gpu_lines.len(), 7, "{gpu_lines:?}");
    for k in gpu_lines {
        let n: u64 = ours
            .get(k)
            .unwrap_or_else(|| panic!("no line {k}; have {:?}", ours.keys()))
            .iter()
            .map(|&t| {
                let (lo, hi) = c.tracks[t].slices;
                u64::from(hi - lo)
            })
            .sum();
        assert_eq!(Some(n), want[k].as_u64(), "{k}");
    }
    // No derived GPU line that XProf does not show.
    for (k, ts) in &ours {
        if ts.iter().any(|&t| c.tracks[t].kind == TrackKind::Derived) {
            assert!(want.contains_key(k), "extra derived line {k}");
        }
    }
    // Host lines: tracetui keeps the memory instants XProf's trace viewer leaves out.
    let host = |k: &str| -> u64 {
        ours[k]
            .iter()
            .map(|&t| u64::from(c.tracks[t].slices.1 - c.tracks[t].slices.0))
            .sum()
    };
    assert!(host("/host:CPU / python3") > want["/host:CPU / python3"].as_u64().unwrap_or(0));
}

#[test]
fn gpu_line_names_counts_and_totals_equal_xprofs() {
    let c = load();
    let ours = tracks(&c);
    let want = json("jax_gpu_attn.xprof_line_names.json");
    for (k, names) in want.as_object().expect("object") {
        let mut got: BTreeMap<String, (u64, i64)> = BTreeMap::new();
        for &t in &ours[k] {
            let (lo, hi) = c.tracks[t].slices;
            for i in lo..hi {
                let e = got.entry(c.slice_name(i).to_string()).or_default();
                e.0 += 1;
                e.1 += c.slices.dur[i as usize];
            }
        }
        let mut expect: BTreeMap<String, (u64, i64)> = BTreeMap::new();
        for (name, v) in names.as_object().expect("names") {
            let count = v[0].as_u64().expect("count");
            let total = v[1].as_i64().expect("total ps");
            expect.insert(name.clone(), (count, total));
        }
        assert_eq!(got, expect, "{k}");
    }
}

#[test]
fn steps_are_named_by_their_group_and_cover_the_autotune_runs() {
    let c = load();
    let ours = tracks(&c);
    let t = ours["/device:GPU:0 / Steps"][0];
    let (lo, hi) = c.tracks[t].slices;
    let names: Vec<&str> = (lo..hi).map(|i| c.slice_name(i)).collect();
    assert_eq!(
        names,
        ["train 0", "train 1", "train 2", "train 28", "train 29"]
    );
    // The autotune kernels after the loop join the last step (XProf's ungrouped-event rule).
    let last = hi as usize - 1;
    assert!(c.slices.dur[last] > 50 * c.slices.dur[lo as usize]);
}
