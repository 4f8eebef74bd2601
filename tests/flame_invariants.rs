//! The flame counts no nanosecond twice (issue 52 §1): per track, the roots of the merged tree
//! add up to exactly the time the track is busy (the union of its slices, the profiler's own
//! spans left out), and no node's children add up to more than the node.
//!
//! Checked on random tracks with partial overlaps (against a brute-force union), with and
//! without a range, and on every capture in `tests/fixtures` the loader reads.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use tracetui::analysis::flame::{DEVICE, FlameTree, ROOT, Scope, build};
use tracetui::analysis::stats::is_profiler_track;
use tracetui::model::{
    ArgsRef, Capture, CaptureBuilder, Category, Format, Key, Ps, SourceInfo, TrackKind,
};

/// Σ of the top-level nodes' totals (the `(device)` root stands for its children).
fn roots_total(t: &FlameTree) -> Ps {
    let mut sum = 0;
    for &n in t.children(ROOT) {
        if t.name(n) == DEVICE {
            sum += t.children(n).iter().map(|&k| t.total(k)).sum::<Ps>();
        } else {
            sum += t.total(n);
        }
    }
    sum
}

/// Every node's children add up to at most the node (self time never negative).
fn children_fit(t: &FlameTree) -> Result<(), String> {
    for n in t.nodes() {
        if n == ROOT || t.name(n) == DEVICE {
            continue;
        }
        let kids: Ps = t.children(n).iter().map(|&k| t.total(k)).sum();
        if kids > t.total(n) || t.self_time(n) < 0 {
            return Err(format!(
                "node {n}: total {} < children {kids} (self {})",
                t.total(n),
                t.self_time(n)
            ));
        }
    }
    Ok(())
}

/// Measure of the union of `iv`, clipped to `[a, z)`.
fn union(mut iv: Vec<(Ps, Ps)>, a: Ps, z: Ps) -> Ps {
    iv.sort_unstable();
    let (mut sum, mut cur_s, mut cur_e) = (0, Ps::MIN, Ps::MIN);
    for (s, e) in iv {
        let (s, e) = (s.max(a), e.min(z));
        if e <= s {
            continue;
        }
        if s > cur_e {
            sum += (cur_e - cur_s).max(0);
            (cur_s, cur_e) = (s, e);
        } else {
            cur_e = cur_e.max(e);
        }
    }
    sum + (cur_e - cur_s).max(0)
}

/// The counted slices of track `t`: the profiler's own (`Trace` category, `Spans` process)
/// left out, as the flame does by default.
fn track_intervals(c: &Capture, t: u32) -> Vec<(Ps, Ps)> {
    if is_profiler_track(c, t) {
        return Vec::new();
    }
    let s = &c.slices;
    let tr = &c.tracks[t as usize];
    (tr.slices.0 as usize..tr.slices.1 as usize)
        .filter(|&i| s.kind(i) != Category::Trace)
        .map(|i| (s.start[i], s.end(i)))
        .collect()
}

fn check_track(c: &Capture, t: u32, range: Option<(Ps, Ps)>) -> Result<(), String> {
    let mut scope = Scope::tracks(vec![t]);
    scope.range = range;
    let tree = build(c, &scope, None);
    children_fit(&tree)?;
    let (a, z) = range.unwrap_or((Ps::MIN, Ps::MAX));
    let want = union(track_intervals(c, t), a, z);
    let got = roots_total(&tree);
    if got != want {
        return Err(format!(
            "track {t} ({}): roots add up to {got} ps, the track is busy {want} ps",
            c.track_name(t)
        ));
    }
    Ok(())
}

/// One thread of random slices (any overlap) and a profiler span over all of them.
fn random_capture(iv: &[(i64, i64)]) -> Capture {
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(1));
    let th = b.track(p, Key::Int(1), TrackKind::Thread);
    let op = b.intern("cpu_op");
    let trace = b.intern("Trace");
    let names: Vec<_> = (0..4).map(|k| b.intern(&format!("n{k}"))).collect();
    let prof = b.intern("PyTorch Profiler (0)");
    b.add_slice(th, -5, 10_000, prof, trace, ArgsRef::NONE, 0);
    for (k, &(s, d)) in iv.iter().enumerate() {
        b.add_slice(th, s, d, names[k % 4], op, ArgsRef::NONE, 0);
    }
    b.finish(SourceInfo::default(), Format::Chrome)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn roots_add_up_to_the_busy_time(
        iv in proptest::collection::vec((0i64..400, 0i64..200), 1..40),
        ra in 0i64..300,
        rl in 1i64..300,
    ) {
        let c = random_capture(&iv);
        for t in 0..c.tracks.len() as u32 {
            prop_assert_eq!(check_track(&c, t, None), Ok(()));
            prop_assert_eq!(check_track(&c, t, Some((ra, ra + rl))), Ok(()));
        }
    }
}

/// The partial overlap of the issue: a step annotation that starts inside a short python frame
/// and outlives it is not a second root, and counts only its time after the frame.
#[test]
fn a_partly_overlapping_range_is_a_sibling_counted_once() {
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(1));
    let th = b.track(p, Key::Int(1), TrackKind::Thread);
    let (py, ann) = (b.intern("python_function"), b.intern("user_annotation"));
    let (module, step_fn, step) = (
        b.intern("gen.py(1): <module>"),
        b.intern("profiler.py(894): step"),
        b.intern("ProfilerStep#2"),
    );
    let train = b.intern("gen.py(45): train_step");
    b.add_slice(th, 0, 1000, module, py, ArgsRef::NONE, 0);
    b.add_slice(th, 10, 40, step_fn, py, ArgsRef::NONE, 0);
    b.add_slice(th, 30, 900, step, ann, ArgsRef::NONE, 0);
    b.add_slice(th, 100, 500, train, py, ArgsRef::NONE, 0);
    let c = b.finish(SourceInfo::default(), Format::Chrome);
    let tree = build(&c, &Scope::all(), None);
    assert_eq!(tree.children(ROOT).len(), 1, "one root: <module>");
    let m = tree.children(ROOT)[0];
    assert_eq!(tree.total(m), 1000);
    let kids: Vec<(String, Ps)> = tree
        .children(m)
        .iter()
        .map(|&k| (tree.name_str(k, &c.strings).to_string(), tree.total(k)))
        .collect();
    // The step counts [50, 930): from the end of the frame it overlaps.
    assert!(
        kids.contains(&("ProfilerStep*".to_string(), 880)),
        "{kids:?}"
    );
    assert!(
        kids.contains(&("profiler.py(894): step".to_string(), 40)),
        "{kids:?}"
    );
    assert_eq!(check_track(&c, 0, None), Ok(()));
}

fn fixture_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            fixture_files(&p, out);
            continue;
        }
        let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let trace = n.ends_with(".xplane.pb")
            || ((n.ends_with(".json") || n.ends_with(".json.gz"))
                && !n.contains("key_averages")
                && !n.contains("line_counts")
                && !n.contains("xprof"));
        if trace {
            out.push(p);
        }
    }
}

/// Every trace fixture the loader reads: per track, roots = busy time, children fit.
#[test]
fn every_fixture_counts_each_nanosecond_once() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files = Vec::new();
    fixture_files(&root, &mut files);
    files.sort();
    let mut checked = 0;
    let mut bad = Vec::new();
    for f in &files {
        let Ok(c) = tracetui::formats::load(f, SourceInfo::default(), &Default::default()) else {
            continue;
        };
        checked += 1;
        for t in 0..c.tracks.len() as u32 {
            if let Err(e) = check_track(&c, t, None) {
                bad.push(format!("{}: {e}", f.display()));
            }
        }
    }
    assert!(checked >= 20, "only {checked} fixtures loaded");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
