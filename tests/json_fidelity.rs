//! Issue 21: right on every real trace. One hand-made fixture per defect (tests/fixtures/fidelity,
//! see PROVENANCE.md there): device rows decided by what they hold, B/E paired by time and
//! name, repairs of trailing commas and empty values, nothing ignored silently; and issue 20 §5's
//! labels (`GPU 0 (python3)`, the rank, metadata-only device processes).

use serde_json::Value;
use std::path::{Path, PathBuf};
use tracetui::analysis::gpu::{self, GpuOptions};
use tracetui::formats::{self, LoadErrorKind, Progress};
use tracetui::model::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fidelity")
        .join(name)
}

fn load(name: &str) -> Capture {
    formats::load(&fixture(name), SourceInfo::default(), &Progress::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn warning<'a>(c: &'a Capture, kind: &str) -> Option<&'a Warning> {
    c.warnings.iter().find(|w| w.kind == kind)
}

/// (name, start µs, dur µs) of every slice, sorted.
fn slices(c: &Capture) -> Vec<(String, f64, f64)> {
    let mut v: Vec<(String, f64, f64)> = (0..c.slices.len())
        .map(|i| {
            (
                c.slice_name(i as u32).to_string(),
                c.slices.start[i] as f64 / 1e6,
                c.slices.dur[i] as f64 / 1e6,
            )
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v
}

fn track_of_slice(c: &Capture, name: &str) -> Track {
    let i = (0..c.slices.len() as u32)
        .find(|&i| c.slice_name(i) == name)
        .unwrap_or_else(|| panic!("no slice {name}"));
    c.tracks[c.track_of(i) as usize].clone()
}

fn cli(args: &[&str]) -> (i32, String) {
    let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tracetui"))
        .args(args)
        .output()
        .expect("run tracetui");
    let mut s = String::from_utf8_lossy(&out.stdout).into_owned();
    s.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), s)
}

#[test]
fn device_rows_are_decided_by_what_they_hold() {
    let c = load("device_rows.json");
    // Python frames under the GPU 0 pid: a CPU thread of that process, not a stream.
    let py = track_of_slice(&c, "train.py(10): step");
    assert_eq!(py.kind, TrackKind::Thread);
    assert_eq!(c.processes[py.process as usize].key, Key::Int(0));
    // The stream holds the kernels only; the python frame on tid 7 is a thread of its own.
    let k = track_of_slice(&c, "sgemm");
    assert_eq!(k.kind, TrackKind::GpuStream);
    assert_eq!(k.slice_count(), 2);
    let b = track_of_slice(&c, "<built-in method>");
    assert_eq!((b.kind, b.key), (TrackKind::Thread, Key::Int(7)));
    // Thread names apply to both tracks of the key.
    assert_eq!(c.strings.get(k.name), "stream 7 ");
    assert_eq!(
        c.tracks
            .iter()
            .filter(|t| t.kind == TrackKind::GpuStream)
            .count(),
        1
    );
    // The ac2g flow binds to the kernel on the stream of (0, 7).
    assert_eq!(c.flows.len(), 1);
    assert_eq!(c.slice_name(c.flows[0].from), "cudaLaunchKernel");
    assert_eq!(c.slice_name(c.flows[0].to), "sgemm");
    // GPU figures: device busy is the kernels' 150 µs, not the python frames' 4 ms.
    let r = gpu::analyze(&c, &GpuOptions::default());
    assert_eq!(r.streams.len(), 1);
    assert_eq!(r.devices.len(), 1);
    assert_eq!(r.devices[0].breakdown.busy, 150_000_000);
    assert_eq!(r.streams[0].activities, 2);
    assert_eq!(r.streams[0].unlinked, 0);
    assert_eq!(r.devices[0].device_name, "GPU 0 (python3)");
}

#[test]
fn begin_end_pair_by_time_and_name() {
    let c = load("begin_end_order.json");
    let s = slices(&c);
    let find = |n: &str| s.iter().filter(|x| x.0 == n).cloned().collect::<Vec<_>>();
    // E listed before B: 9 µs each.
    assert_eq!(find("alpha"), vec![("alpha".into(), 1.0, 9.0)]);
    assert_eq!(find("beta"), vec![("beta".into(), 11.0, 9.0)]);
    // A zero-length C does not close A.
    assert_eq!(find("A"), vec![("A".into(), 0.0, 10.0)]);
    assert_eq!(find("C"), vec![("C".into(), 2.0, 0.0)]);
    // `E outer` closes outer with inner still open; the unnamed E closes inner.
    assert_eq!(find("outer"), vec![("outer".into(), 0.0, 8.0)]);
    assert_eq!(find("inner"), vec![("inner".into(), 5.0, 7.0)]);
    assert_eq!(warning(&c, "unmatched_end").map(|w| w.count), Some(1));
    assert_eq!(
        warning(&c, "overlapping_begin_end").map(|w| w.count),
        Some(1)
    );
    // inner partly overlaps outer: an extra lane.
    assert_eq!(track_of_slice(&c, "outer").group_bases.len(), 2);
}

#[test]
fn trailing_commas_and_empty_values_are_repaired() {
    let c = load("repairs.json");
    let names: Vec<String> = slices(&c).into_iter().map(|s| s.0).collect();
    assert_eq!(names, ["first", "fourth", "second", "third"]);
    let w = warning(&c, "repaired").expect("repaired warning");
    assert!(
        w.message.contains("dropped 4 trailing comma(s)")
            && w.message.contains("read 1 empty value(s) as null"),
        "{}",
        w.message
    );
    let second = (0..c.slices.len() as u32)
        .find(|&i| c.slice_name(i) == "second")
        .unwrap();
    let k = c.strings.lookup("Process Group Description").unwrap();
    assert_eq!(
        c.args.get(c.slices.args[second as usize], k, &c.strings),
        Some(ArgValue::Null)
    );
}

#[test]
fn counter_series_keep_string_ids_as_written() {
    let c = load("counter_ids.json");
    let mut names: Vec<&str> = c.counters.iter().map(|s| c.strings.get(s.name)).collect();
    names.sort_unstable();
    assert_eq!(names, ["Ctr v", "Ctr[0x10] v", "Ctr[7] v", "Ctr[grp] v"]);
}

#[test]
fn sampled_stacks_become_a_track_of_merged_frames() {
    let c = load("sampled_stacks.json");
    let t = track_of_slice(&c, "b");
    assert_eq!(c.strings.get(t.name), "samples (thread 9)");
    // In the process of thread 9 (pid 5).
    assert_eq!(c.processes[t.process as usize].key, Key::Int(5));
    let on = |tr: &Track| -> Vec<(String, f64, f64)> {
        let mut v: Vec<(String, f64, f64)> = (tr.slices.0..tr.slices.1)
            .map(|i| {
                (
                    c.slice_name(i).to_string(),
                    c.slices.start[i as usize] as f64 / 1e6,
                    c.slices.dur[i as usize] as f64 / 1e6,
                )
            })
            .collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v
    };
    // main>a>b @0, main>a>c @10, main>d @20 and @30 (the last lasts the previous interval).
    assert_eq!(
        on(&t),
        vec![
            ("a".into(), 0.0, 20.0),
            ("b".into(), 0.0, 10.0),
            ("c".into(), 10.0, 10.0),
            ("d".into(), 20.0, 20.0),
            ("main".into(), 0.0, 40.0),
        ]
    );
    // Thread 44 runs in no process: its track goes to "sampled stacks"; one sample of an
    // unknown frame is counted.
    let t44 = c
        .tracks
        .iter()
        .find(|t| c.strings.get(t.name) == "samples (thread 44)")
        .expect("thread 44 samples");
    assert_eq!(c.process_name(t44.process), "sampled stacks");
    assert_eq!(
        warning(&c, "sample_unknown_frame").map(|w| w.count),
        Some(1)
    );
    assert_eq!(
        c.slices.cat(t.slices.0 as usize),
        c.strings.lookup("app").unwrap()
    );
}

#[test]
fn events_without_tid_and_skipped_phases() {
    let c = load("no_tid_and_phases.json");
    let a = track_of_slice(&c, "no_tid");
    let b = track_of_slice(&c, "on_33");
    assert_eq!((a.key, b.key), (Key::Int(33), Key::Int(33)));
    assert_eq!(a.slices, b.slices, "one thread tid = pid");
    assert_eq!(c.strings.get(a.name), "main of 33");
    let t = warning(&c, "skipped_phase_T").expect("T counted");
    assert_eq!(t.count, 2);
    assert!(t.message.contains("Perfetto thread-state"), "{}", t.message);
    assert!(warning(&c, "missing_id").is_none());
    let o = warning(&c, "skipped_phase_O").expect("O counted");
    assert!(o.message.contains("object-snapshot"), "{}", o.message);
}

#[test]
fn json_without_phases_is_not_a_trace() {
    let e = formats::load(
        &fixture("not_a_trace.json"),
        SourceInfo::default(),
        &Progress::default(),
    )
    .expect_err("not a trace");
    assert_eq!(e.kind, LoadErrorKind::NotATrace);
    assert!(e.to_string().contains("\"ph\""), "{e}");
}

#[test]
fn xplane_claiming_terabytes_is_corrupt() {
    let e = formats::load(
        &fixture("huge_first_field.xplane.pb"),
        SourceInfo::default(),
        &Progress::default(),
    )
    .expect_err("corrupt");
    assert_eq!(e.kind, LoadErrorKind::Corrupt, "{e}");
    assert!(e.to_string().contains("28000000000000"), "{e}");
}

#[test]
fn hta_rounding_never_makes_a_part_exceed_busy() {
    let c = load("hta_inverted_memcpy.json");
    let opts = GpuOptions {
        hta_compat: true,
        ..GpuOptions::default()
    };
    let r = gpu::analyze(&c, &opts);
    for b in r
        .streams
        .iter()
        .map(|s| s.breakdown)
        .chain(r.devices.iter().map(|d| d.breakdown))
    {
        assert_eq!(b.compute, 19_000_000);
        assert_eq!(b.busy, 19_000_000, "{b:?}");
        assert_eq!(b.memory, 0);
        assert_eq!(b.compute + b.communication + b.memory + b.other, b.busy);
    }
    let (code, text) = cli(&[
        "gpu",
        "--hta",
        fixture("hta_inverted_memcpy.json").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("-0.0%"), "{text}");
}

#[test]
fn hta_window_ends_at_the_last_step_on_either_side() {
    // HTA counts the device's `gpu_user_annotation` ProfilerStep#2 (it has no `stream` arg) as
    // a CPU event: the window ends at its start, 130 µs, not at the host step's 100 µs. The
    // launch at 120 µs (k2) is kept, the one at 150 µs (k3) is not.
    let c = load("hta_window_device_step.json");
    let opts = GpuOptions {
        hta_compat: true,
        ..GpuOptions::default()
    };
    let r = gpu::analyze(&c, &opts);
    assert_eq!(r.window_dropped, 1);
    let d = r.devices[0].breakdown;
    // k1 at 60 µs to k2's end at 140 µs; k1 and k2 busy.
    assert_eq!(
        (d.window.1 - d.window.0, d.busy),
        (80_000_000, 20_000_000),
        "{d:?}"
    );
}

#[test]
fn labels_lead_and_metadata_only_devices_are_summarized() {
    let c = load("labels_rank.json");
    assert_eq!(c.rank(), Some(3));
    let k = track_of_slice(&c, "sgemm");
    assert_eq!(c.process_title(k.process), "GPU 0 (python3)");
    let h = track_of_slice(&c, "aten::mm");
    assert_eq!(c.process_title(h.process), "CPU (python3)");
    let path = fixture("labels_rank.json");
    let (code, text) = cli(&["summary", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("rank 3"), "{text}");
    assert!(text.contains("GPU 0 (python3)"), "{text}");
    assert!(
        text.contains("7 device processes without events (GPU 1–7)"),
        "{text}"
    );
    assert!(!text.contains("(unnamed)"), "{text}");
    assert!(text.contains("global instants"), "{text}");
    let (_, json) = cli(&["summary", "--json", path.to_str().unwrap()]);
    let v: Value = serde_json::from_str(&json).expect("JSON");
    let s = &v["captures"][0];
    assert_eq!(s["rank"], 3);
    let tracks = s["tracks"].as_array().unwrap();
    let procs: Vec<&str> = tracks
        .iter()
        .map(|t| t["process"].as_str().unwrap())
        .collect();
    // CPU (sort index 4242) before GPU 0 (5000000), as the trace orders them.
    let cpu = procs.iter().position(|p| *p == "CPU (python3)").unwrap();
    let gpu = procs.iter().position(|p| *p == "GPU 0 (python3)").unwrap();
    assert!(cpu < gpu, "{procs:?}");
    assert_eq!(s["empty_device_processes"].as_array().unwrap().len(), 7);
}
