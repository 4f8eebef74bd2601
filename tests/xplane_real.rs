//! Real captures: per-line event counts equal the independent `*.line_counts.json` walk, derived
//! lines appear on GPU planes, the corrupted XPlane fails cleanly with a byte offset.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tracetui::formats::{Progress, xplane};
use tracetui::model::{Capture, ProcessKind, SourceInfo, TrackKind};

type Counts = BTreeMap<(String, String), u64>;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/xplane")
        .join(name)
}

fn expected(name: &str) -> Counts {
    let text = std::fs::read_to_string(fixture(name)).expect("line counts json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid json");
    let mut out = Counts::new();
    for (plane, lines) in v.as_object().expect("object of planes") {
        for (line, n) in lines.as_object().expect("object of lines") {
            out.insert((plane.clone(), line.clone()), n.as_u64().expect("count"));
        }
    }
    out
}

fn load(name: &str) -> Capture {
    let path = fixture(name);
    xplane::load(&path, SourceInfo::default(), &Progress::default()).expect("loads")
}

/// Per (plane, track title): slices + aggregated events.
fn model_counts(c: &Capture) -> Counts {
    let mut out = Counts::new();
    for (t, tr) in c.tracks.iter().enumerate() {
        let plane = c.process_name(tr.process);
        let name = c.track_name(t as u32);
        let agg = c.aggregated.iter().filter(|a| a.track == t as u32).count() as u64;
        *out.entry((plane, name)).or_default() += tr.slice_count() as u64 + agg;
    }
    out
}

fn check_counts(file: &str, json: &str) -> Capture {
    let want = expected(json);
    let bytes = std::fs::read(fixture(file)).expect("fixture");
    let walked: Counts = xplane::line_event_counts(&bytes)
        .expect("walk")
        .into_iter()
        .map(|(p, l, n)| ((p, l), n))
        .collect();
    assert_eq!(walked, want, "line_event_counts of {file}");
    let c = load(file);
    let got = model_counts(&c);
    for (k, n) in &want {
        assert_eq!(got.get(k), Some(n), "{file}: events of {k:?} in the model");
    }
    // Everything else in the model is a line tracetui derived.
    for (k, n) in &got {
        if !want.contains_key(k) {
            let t = c
                .tracks
                .iter()
                .enumerate()
                .find(|(t, tr)| c.process_name(tr.process) == k.0 && c.track_name(*t as u32) == k.1)
                .map(|(_, tr)| tr.kind);
            assert_eq!(
                t,
                Some(TrackKind::Derived),
                "{file}: unexpected track {k:?} ({n} events)"
            );
        }
    }
    c
}

#[test]
fn jax_cpu_counts_and_metadata() {
    let c = check_counts("vm.xplane.pb", "vm.line_counts.json");
    // hidden planes keep their facts
    let hidden: Vec<String> = c
        .processes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.hidden)
        .map(|(i, _)| c.process_name(i as u32))
        .collect();
    assert!(hidden.contains(&"/host:metadata".to_string()), "{hidden:?}");
    assert!(
        hidden.contains(&"Task Environment".to_string()),
        "{hidden:?}"
    );
    let meta: Vec<(String, String)> = c
        .args
        .iter(c.metadata, &c.strings)
        .map(|(k, v)| (c.strings.get(k).to_string(), v.display(&c.strings)))
        .collect();
    assert!(
        meta.iter().any(|(k, _)| k == "profile_start_time"),
        "{meta:?}"
    );
    assert!(
        meta.iter()
            .any(|(k, v)| k.starts_with("hlo_module:") && v.starts_with("jit_")),
        "{meta:?}"
    );
    assert!(
        c.origin_epoch_ns
            .is_some_and(|t| t > 1_000_000_000_000_000_000)
    );
    let host = c
        .processes
        .iter()
        .position(|p| p.kind == ProcessKind::Host && !p.hidden)
        .expect("host plane");
    assert_eq!(c.process_name(host as u32), "/host:CPU");
    // hlo_module / program_id / run_id stats are available as args on XLA CPU thunks
    let k = c.strings.lookup("hlo_module").expect("hlo_module stat");
    let with_module = (0..c.slices.len())
        .filter(|&i| c.args.get(c.slices.args[i], k, &c.strings).is_some())
        .count();
    assert!(with_module > 0);
    // nesting was computed
    assert!(c.tracks.iter().any(|t| t.max_depth > 0));
}

#[test]
fn tf_gpu_counts_and_derived_lines() {
    let c = check_counts("tf_bert_gpu.xplane.pb.gz", "tf_bert_gpu.line_counts.json");
    // the file's own derived lines are Derived tracks and not derived twice
    for (t, tr) in c.tracks.iter().enumerate() {
        let name = c.track_name(t as u32);
        if ["Steps", "TensorFlow Ops", "TensorFlow Name Scope"].contains(&name.as_str()) {
            assert_eq!(tr.kind, TrackKind::Derived, "{name}");
        }
        assert!(
            name != "Framework Ops" && name != "XLA Ops",
            "derived twice: {name}"
        );
    }
    // derived lines exist on GPU planes
    let derived_on_gpu = c
        .tracks
        .iter()
        .filter(|t| {
            t.kind == TrackKind::Derived && c.processes[t.process as usize].kind == ProcessKind::Gpu
        })
        .count();
    assert!(derived_on_gpu >= 6, "{derived_on_gpu}");
    // relative timestamps, no Task Environment: origin unknown
    assert_eq!(c.origin_epoch_ns, None);
    // kernels categorized, correlation ids kept
    assert!((0..c.slices.len()).any(|i| c.slices.kind(i).is_device()));
    assert!(c.slices.corr.iter().any(|&x| x != 0));
}

#[test]
fn formats_load_dispatches_gzipped_xplane() {
    let path = fixture("tf_bert_gpu.xplane.pb.gz");
    let c = tracetui::formats::load(&path, SourceInfo::default(), &Progress::default())
        .expect("loads through formats::load");
    assert_eq!(c.format, Some(tracetui::model::Format::XPlane));
    assert_eq!(c.source.path, path);
    assert!(c.source.file_bytes > 0);
    // Stats are read lazily from the inflated temporary file the capture keeps mapped: they
    // match a decode from memory.
    let bytes = std::fs::read(&path).expect("fixture");
    let mem =
        xplane::load_bytes(&bytes, SourceInfo::default(), &Progress::default()).expect("decode");
    let args = |c: &Capture| -> Vec<String> {
        (0..c.slices.len())
            .flat_map(|i| {
                c.args
                    .iter(c.slices.args[i], &c.strings)
                    .map(|(k, v)| format!("{}={}", c.strings.get(k), v.display(&c.strings)))
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let (a, b) = (args(&c), args(&mem));
    assert!(
        a.iter().any(|x| x.starts_with("correlation_id=")),
        "lazy stats read"
    );
    assert!(a == b, "mapped and in-memory stats differ");
}

#[test]
fn corrupted_xplane_fails_with_offset() {
    let path = fixture("tpu_inference_2.corrupted.head64k.xplane.pb");
    let e = xplane::load(&path, SourceInfo::default(), &Progress::default())
        .expect_err("corrupted file must fail");
    assert!(e.offset.is_some(), "{e}");
    let s = e.to_string();
    assert!(s.contains("at byte"), "{s}");
    assert!(xplane::line_event_counts(&std::fs::read(&path).expect("read")).is_err());
}

#[test]
#[ignore = "prints a summary of the fixtures; run by hand"]
fn dump_fixture_summary() {
    for f in ["vm.xplane.pb", "tf_bert_gpu.xplane.pb.gz"] {
        let c = load(f);
        for (t, tr) in c.tracks.iter().enumerate() {
            let (lo, hi) = tr.slices;
            let first: Vec<String> = (lo..hi.min(lo + 3))
                .map(|i| {
                    let args: Vec<String> = c
                        .args
                        .iter(c.slices.args[i as usize], &c.strings)
                        .map(|(k, v)| format!("{}={}", c.strings.get(k), v.display(&c.strings)))
                        .collect();
                    format!(
                        "{} [{}] {:?}",
                        c.slice_name(i),
                        c.slices.dur[i as usize],
                        args
                    )
                })
                .collect();
            println!(
                "{} | {} | {:?} | {} slices depth {} | {:?}",
                c.process_name(tr.process),
                c.track_name(t as u32),
                tr.kind,
                tr.slice_count(),
                tr.max_depth,
                first
            );
        }
        println!(
            "warnings {:?} flows {} span {:?}",
            c.warnings,
            c.flows.len(),
            c.span
        );
    }
}

/// Every column, track, flow, warning and args list of a capture, for equality checks.
fn fingerprint(c: &Capture) -> String {
    use std::fmt::Write;
    let s = &c.slices;
    let mut out = String::new();
    for t in &c.tracks {
        let _ = writeln!(
            out,
            "track {} {:?} {:?} {:?} {} {}",
            c.strings.get(t.name),
            t.key,
            t.kind,
            t.slices,
            t.lanes,
            t.max_depth
        );
    }
    for i in 0..s.len() {
        let args: Vec<String> = c
            .args
            .iter(s.args[i], &c.strings)
            .map(|(k, v)| format!("{}={}", c.strings.get(k), v.display(&c.strings)))
            .collect();
        let _ = writeln!(
            out,
            "{} {} {} {} {:?} {} {} {} {} {}",
            s.start[i],
            s.dur[i],
            c.strings.get(s.name[i]),
            c.strings.get(s.cat(i)),
            s.kind(i),
            c.depth(i as u32),
            s.lane[i],
            s.parent[i],
            s.corr[i],
            args.join(",")
        );
    }
    for f in &c.flows {
        let _ = writeln!(out, "flow {} {} {}", f.id, f.from, f.to);
    }
    for w in &c.warnings {
        let _ = writeln!(out, "warning {} {} {}", w.kind, w.count, w.message);
    }
    out
}

/// Decodes with the given number of walking threads.
fn decode_with(bytes: &[u8], threads: usize) -> Capture {
    xplane::load_bytes_threads(bytes, SourceInfo::default(), &Progress::default(), threads)
        .expect("decode")
}

#[test]
fn thread_count_does_not_change_the_capture() {
    // Real TF capture (8 GPU planes), a real JAX GPU capture whose lines are derived (step
    // roots, launches, ungrouped autotune runs: grouping and each plane's derivation run on
    // whichever thread completes their inputs) and a synthetic one with derived lines on 2 GPUs.
    let tf_plain = std::fs::read(fixture("tf_bert_gpu.xplane.pb.gz")).expect("fixture");
    let jax_gpu = std::fs::read(fixture("jax_gpu_attn.xplane.pb.gz")).expect("fixture");
    let cfg = tracetui::synth::xplane::XPlaneSynth {
        events_per_line: 3000,
        ..Default::default()
    };
    let mut synth = Vec::new();
    tracetui::synth::xplane::write_xspace(&cfg, &mut synth).expect("synth");
    for bytes in [&tf_plain, &jax_gpu, &synth] {
        let one = fingerprint(&decode_with(bytes, 1));
        assert!(one.contains("correlation_id="), "lazy args are read");
        for n in [2, 3, 8] {
            assert!(
                one == fingerprint(&decode_with(bytes, n)),
                "{n} threads differ"
            );
        }
    }
}
