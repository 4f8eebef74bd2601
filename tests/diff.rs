//! Comparing two captures (`tracetui diff`, `analysis::diff`): hand-made pairs with known answers,
//! the HTA fixture pair with figures from HTA's TraceDiff, and properties of the join.

use proptest::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tracetui::analysis::diff::steps::Step;
use tracetui::analysis::diff::{self, DiffOptions, GroupKey, Side, SideRow, Status, StepRange};
use tracetui::analysis::stats::EventKind;
use tracetui::formats::{self, Progress};
use tracetui::model::{Capture, SourceInfo};

mod common;
use common::run_cli as run;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/diff")
        .join(rel)
}

fn load(rel: &str) -> Capture {
    formats::load(&fixture(rel), SourceInfo::default(), &Progress::default()).expect("load")
}

fn row<'a>(d: &'a diff::Diff, name: &str) -> &'a diff::DiffRow {
    d.rows
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

const US: f64 = 1e6;

#[test]
fn hand_pair_whole_captures_per_step() {
    let (a, b) = (load("hand_a.json"), load("hand_b.json"));
    let d = diff::diff(&a, &b, &DiffOptions::default()).expect("diff");
    assert!(d.per_step);
    assert_eq!((d.steps_a, d.steps_b), (2, 3));
    assert_eq!((d.step_time_a, d.step_time_b), (100_000_000, 100_000_000));
    let mm = row(&d, "aten::mm");
    assert_eq!((mm.count_a, mm.count_b), (2, 3));
    assert_eq!((mm.total_a, mm.total_b), (20.0 * US, 30.0 * US));
    assert_eq!(mm.delta, 10.0 * US);
    assert_eq!(mm.delta_pct, Some(50.0));
    assert_eq!(mm.status, Status::Slower);
    assert_eq!((mm.p50_a, mm.p50_b), (Some(20_000_000), Some(30_000_000)));
    let old = row(&d, "aten::old");
    assert_eq!(
        (old.status, old.count_b, old.delta),
        (Status::Removed, 0, -10.0 * US)
    );
    let new = row(&d, "aten::new");
    assert_eq!(
        (new.status, new.count_a, new.delta_pct),
        (Status::Added, 0, None)
    );
    assert_eq!(new.total_b, 8.0 * US);
    assert_eq!(row(&d, "aten::add").status, Status::Same);
    assert_eq!(row(&d, "aten::add").delta, 0.0);
    // A rename is a removal plus an addition.
    assert_eq!(row(&d, "kernel_v1").status, Status::Removed);
    assert_eq!(row(&d, "kernel_v2").status, Status::Added);
    let step = row(&d, "ProfilerStep*");
    assert_eq!(
        (step.count_a, step.count_b, step.status),
        (2, 3, Status::Same)
    );
    assert_eq!((step.self_a, step.self_b), (55.0 * US, 47.0 * US));
    assert_eq!(d.rows.len(), 7);
    // Sorted by |Δ|: mm (+10) and old (-10) lead, tie by name.
    let order: Vec<&str> = d.rows.iter().take(2).map(|r| r.name.as_str()).collect();
    assert_eq!(order, ["aten::mm", "aten::old"]);
}

#[test]
fn hand_pair_one_step_and_thresholds() {
    let (a, b) = (load("hand_a.json"), load("hand_b.json"));
    let opts = DiffOptions {
        steps: Some(StepRange::parse("2").expect("range")),
        ..DiffOptions::default()
    };
    let d = diff::diff(&a, &b, &opts).expect("diff");
    assert_eq!((d.steps_a, d.steps_b), (1, 1));
    let mm = row(&d, "aten::mm");
    assert_eq!((mm.count_a, mm.count_b, mm.delta), (1, 1, 10.0 * US));
    // Within the noise threshold: same.
    for (pct, us) in [(2.0, 20.0), (50.0, 5.0)] {
        let o = DiffOptions {
            threshold_pct: pct,
            threshold_ps: us * US,
            ..opts
        };
        let d = diff::diff(&a, &b, &o).expect("diff");
        assert_eq!(row(&d, "aten::mm").status, Status::Same, "{pct}% {us}µs");
    }
    // A step B has and A lacks is an error naming the side.
    let o = DiffOptions {
        steps: Some(StepRange::parse("3").expect("range")),
        ..opts
    };
    let e = diff::diff(&a, &b, &o).expect_err("A has no step 3");
    assert!(e.starts_with("A: no step numbered in 3"), "{e}");
}

/// XPlane captures have steps too (JAX `StepTraceAnnotation`'s `step_num`, as the step finder
/// reads them): a step range diffs their windows, and times are per step.
#[test]
fn xplane_step_num_steps_are_diffed() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/xplane/vm.xplane.pb");
    let c = formats::load(&path, SourceInfo::default(), &Progress::default()).expect("load");
    let whole = diff::diff(&c, &c, &DiffOptions::default()).expect("whole");
    assert_eq!((whole.steps_a, whole.steps_b), (5, 5));
    assert!(whole.per_step);
    let o = DiffOptions {
        steps: Some(StepRange::parse("1..=2").expect("range")),
        ..DiffOptions::default()
    };
    let d = diff::diff(&c, &c, &o).expect("steps 1..=2");
    assert_eq!((d.steps_a, d.steps_b), (2, 2));
    let count = |d: &diff::Diff| d.rows.iter().map(|r| r.count_a).sum::<u64>();
    assert!(
        0 < count(&d) && count(&d) < count(&whole),
        "{} of {}",
        count(&d),
        count(&whole)
    );
    let o = DiffOptions {
        steps: Some(StepRange::parse("9").expect("range")),
        ..DiffOptions::default()
    };
    let e = diff::diff(&c, &c, &o).expect_err("no step 9");
    assert!(e.starts_with("A: no step numbered in 9"), "{e}");
}

#[test]
fn groupings() {
    let (a, b) = (load("hand_a.json"), load("hand_b.json"));
    for (g, rows) in [(GroupKey::Category, 2), (GroupKey::Stream, 1)] {
        let d = diff::diff(
            &a,
            &b,
            &DiffOptions {
                group: g,
                ..DiffOptions::default()
            },
        )
        .expect("diff");
        assert_eq!(d.rows.len(), rows, "{g:?}");
    }
    let d = diff::diff(
        &a,
        &b,
        &DiffOptions {
            group: GroupKey::Category,
            ..DiffOptions::default()
        },
    )
    .expect("diff");
    let cpu = row(&d, "cpu_op");
    assert_eq!((cpu.total_a, cpu.total_b), (45.0 * US, 53.0 * US));
}

#[test]
fn capture_against_itself_is_all_same() {
    let a = load("hta_control.json.gz");
    for group in GroupKey::ALL {
        let d = diff::diff(
            &a,
            &a,
            &DiffOptions {
                group,
                ..DiffOptions::default()
            },
        )
        .expect("diff");
        assert!(!d.rows.is_empty());
        assert!(
            d.rows
                .iter()
                .all(|r| r.status == Status::Same && r.delta == 0.0)
        );
        assert!(d.contributors.is_empty());
    }
}

/// Figures of HTA's TraceDiff.compare_traces on the same files (docs/oracle/hta_trace_diff.py:
/// 432 of 432 names equal).
#[test]
fn hta_pair_matches_trace_diff() {
    let (a, b) = (load("hta_control.json.gz"), load("hta_test.json.gz"));
    let opts = DiffOptions {
        steps: Some(StepRange::parse("1009").expect("range")),
        hta: true,
        ..DiffOptions::default()
    };
    let d = diff::diff(&a, &b, &opts).expect("diff");
    assert_eq!(d.rows.len(), 432);
    let count: (u64, u64) = d
        .rows
        .iter()
        .fold((0, 0), |s, r| (s.0 + r.count_a, s.1 + r.count_b));
    assert_eq!(count, (12101, 11187));
    let dur: (f64, f64) = d
        .rows
        .iter()
        .fold((0.0, 0.0), |s, r| (s.0 + r.total_a, s.1 + r.total_b));
    assert_eq!(
        ((dur.0 / US).round(), (dur.1 / US).round()),
        (411779.0, 673157.0)
    );
    let m = row(&d, "Memcpy DtoD (Device -> Device)");
    assert_eq!(
        (m.count_a, m.count_b, m.total_a, m.total_b),
        (3, 768, 455.0 * US, 15355.0 * US)
    );
    // tracetui's default keeps device events without a launch that run in the step.
    let d = diff::diff(&a, &b, &DiffOptions { hta: false, ..opts }).expect("diff");
    let m = row(&d, "Memcpy DtoD (Device -> Device)");
    assert_eq!((m.count_a, m.count_b), (3, 805));
    // Headline: the step got slower and cudaMemcpyAsync explains it.
    assert!(d.step_time_b > d.step_time_a);
    assert_eq!(
        d.contributors.first().map(|c| c.name.as_str()),
        Some("cudaMemcpyAsync")
    );
    assert!(d.explained_pct >= 80.0);
}

/// Issue 38 §4: step and profiler spans are no contributors (they time the steps: `ProfilerStep*`
/// self time grows when its ops shrink), and the contributors, taken from the step thread, add up
/// with the rest to the step-time change — on the whole HTA pair, with every row per step.
#[test]
fn contributors_are_work_and_add_up_to_the_change() {
    let (a, b) = (load("hta_control.json.gz"), load("hta_test.json.gz"));
    let d = diff::diff(&a, &b, &DiffOptions::default()).expect("diff");
    let change = (d.step_time_b - d.step_time_a) as f64;
    assert!(change > 40e9, "{change}");
    assert!(row(&d, "ProfilerStep*").span);
    assert!(d.contributors.iter().all(|c| c.name != "ProfilerStep*"));
    // The profiler's own span is no row (as in `stats`) unless asked for; then it is a span.
    assert!(d.rows.iter().all(|r| r.name != "PyTorch Profiler (0)"));
    let with = DiffOptions {
        profiler: true,
        ..DiffOptions::default()
    };
    let dp = diff::diff(&a, &b, &with).expect("diff");
    assert!(row(&dp, "PyTorch Profiler (0)").span);
    assert!(
        dp.contributors
            .iter()
            .all(|c| c.name != "PyTorch Profiler (0)")
    );
    // Without the span rule `ProfilerStep*` and `PyTorch Profiler (0)` top the Δ total column.
    assert!(d.rows[..3].iter().any(|r| r.span));
    let listed: f64 = d.contributors.iter().map(|c| c.delta_self).sum();
    let rest = d
        .rest
        .expect("steps are host spans: contributors from the step thread");
    assert!(
        (listed + rest - change).abs() < 1.0,
        "{listed} + {rest} vs {change}"
    );
    let shares: f64 = d.contributors.iter().map(|c| c.share_pct).sum();
    assert!((shares - d.explained_pct).abs() < 1e-9);
    assert!((shares - listed * 100.0 / change).abs() < 1e-6);
    // The step thread's self times add up to its steps: Σ over every key = the change.
    let all: f64 = d.rows.iter().map(|r| r.step_self_b - r.step_self_a).sum();
    assert!((all - change).abs() < 1e3, "{all} vs {change}");
    let both = |r: &diff::DiffRow| (r.step_self_a, r.step_self_b);
    let steps_thread: f64 = d.rows.iter().map(|r| both(r).0).sum();
    assert!((steps_thread - d.step_time_a as f64).abs() < 1e3);
}

/// Issue 38 §4: `--steps '#1..=2'` compares each side's first two steps whatever their numbers.
#[test]
fn steps_by_position() {
    let (a, b) = (load("hand_a.json"), load("hand_b.json"));
    let by_pos = |r: &str| {
        let o = DiffOptions {
            steps: Some(StepRange::parse(r).expect("range")),
            ..DiffOptions::default()
        };
        diff::diff(&a, &b, &o)
    };
    let d = by_pos("#2..").expect("positions");
    assert_eq!(
        (d.step_numbers_a.as_slice(), d.step_numbers_b.as_slice()),
        (&[2][..], &[2, 3][..])
    );
    // Positions of B past A's last step: A has none there, and the reason lists A's steps.
    let e = by_pos("#3").expect_err("A has 2 steps");
    assert_eq!(e, "A: no step at position #3 (2 steps; its steps: 1, 2)");
    // Positions equal numbers here (steps 1, 2, 3): the same rows.
    assert_eq!(
        by_pos("#1..=2").expect("pos").rows,
        by_pos("1..=2").expect("num").rows
    );
}

#[test]
fn cli_steps_by_position_on_captures_numbered_apart() {
    // B's steps renumbered 11, 12, 13: by number nothing matches, by position step by step.
    let dir = tempfile::tempdir().expect("tmp");
    let text = std::fs::read_to_string(fixture("hand_b.json")).expect("B");
    let renumbered = text
        .replace("ProfilerStep#1", "ProfilerStep#11")
        .replace("ProfilerStep#2", "ProfilerStep#12")
        .replace("ProfilerStep#3", "ProfilerStep#13");
    assert_ne!(renumbered, text);
    let b = dir.path().join("b.json");
    std::fs::write(&b, renumbered).expect("write");
    let a = fixture("hand_a.json");
    let (a, b) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    let (code, _, err) = run(&["diff", a, b, "--steps", "1..=2"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("(its steps: 11..=13; #1..=3 selects by position)"),
        "{err}"
    );
    let (code, out, err) = run(&["diff", a, b, "--steps", "#1..=2"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "scope: step positions #1..=2 (A 2 steps: 1, 2; B 2 steps: 11, 12); times per step"
        ),
        "{out}"
    );
    // Units in the heads.
    for h in [
        "COUNT A/ALL",
        "TOTAL A/STEP",
        "SELF B/STEP",
        "P50 A/EVENT",
        "DELTA/STEP",
    ] {
        assert!(out.contains(h), "{h}: {out}");
    }
    let (code, out, _) = run(&["diff", a, b, "--steps", "#1..=2", "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["step_range"]["by"], "position");
    assert_eq!(v["step_numbers_b"], serde_json::json!([11, 12]));
    // Same with the same numbers given as numbers: equal rows.
    let (_, same, _) = run(&[
        "diff",
        a,
        fixture("hand_b.json").to_str().expect("utf-8"),
        "--steps",
        "1..=2",
        "--json",
    ]);
    let w: Value = serde_json::from_str(&same).expect("JSON");
    assert_eq!(v["rows"], w["rows"]);
}

#[test]
fn cli_json_and_text() {
    let (a, b) = (fixture("hand_a.json"), fixture("hand_b.json"));
    let (a, b) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    let (code, out, err) = run(&["diff", a, b, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["scope"], "whole");
    assert_eq!(
        (v["steps_a"].as_u64(), v["steps_b"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(v["step_time_a_ns"], 100000.0);
    assert_eq!(v["per_step"], true);
    let r = &v["rows"][0];
    assert_eq!(r["name"], "aten::mm");
    assert_eq!(
        (r["total_a_ns"].as_f64(), r["total_b_ns"].as_f64()),
        (Some(20000.0), Some(30000.0))
    );
    assert_eq!(
        (r["delta_ns"].as_f64(), r["status"].as_str()),
        (Some(10000.0), Some("slower"))
    );
    for k in ["count_a", "count_b", "self_a_ns", "self_b_ns", "delta_pct"] {
        assert!(r.get(k).is_some(), "{k}");
    }
    assert_eq!(
        (v["added"].as_u64(), v["removed"].as_u64()),
        (Some(2), Some(2))
    );
    let (code, out, _) = run(&["diff", a, b, "--steps", "1..=2", "--group-by", "short"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("scope: steps 1..=2 (A 2 steps: 1, 2; B 2 steps: 1, 2); times per step"),
        "{out}"
    );
    assert!(
        out.contains("7 rows: 2 added, 2 removed, 1 slower, 0 faster, 2 same"),
        "{out}"
    );
    let (code, _, err) = run(&["diff", a, b, "--steps", "7"]);
    assert_eq!(code, 1);
    // Each side's reason, listing its steps.
    assert!(
        err.contains("no step numbered in 7 (its steps: 1, 2;"),
        "{err}"
    );
    assert!(err.contains("(its steps: 1..=3;"), "{err}");
    let (code, _, err) = run(&["diff", a, b, "--steps", "x"]);
    assert_eq!(code, 2, "{err}");
    // A dir with several captures must name one.
    let dir = fixture("");
    let (code, _, err) = run(&["diff", dir.to_str().expect("utf-8"), b]);
    assert_eq!(code, 1);
    assert!(err.contains("captures; name one file"), "{err}");
}

fn arb_side() -> impl Strategy<Value = Side> {
    // Two kinds per name: a host annotation and its device twin are two rows.
    let kinds = [EventKind::Annotation, EventKind::GpuAnnotation];
    let row = (
        0usize..6,
        0usize..2,
        1u64..5,
        0i64..1_000_000_000,
        0i64..1_000_000,
    )
        .prop_map(move |(n, k, count, total, slf)| SideRow {
            name: format!("op{n}"),
            kind: Some(kinds[k]),
            count,
            total_ps: total,
            self_ps: slf.min(total),
            durs: vec![total / count as i64; count as usize],
            span: false,
            step_self_ps: slf.min(total),
        });
    (
        proptest::collection::vec(row, 0..6),
        0usize..3,
        1i64..1_000_000_000,
    )
        .prop_map(|(rows, steps, step_time)| {
            let mut seen = std::collections::HashSet::new();
            let rows = rows
                .into_iter()
                .filter(|r| seen.insert((r.name.clone(), r.kind)))
                .collect();
            Side {
                rows,
                steps: (0..steps as i64)
                    .map(|n| Step {
                        number: n,
                        start: 0,
                        end: step_time,
                        partial: false,
                    })
                    .collect(),
                step_tracks: steps > 0,
                step_time_ps: step_time,
            }
        })
}

proptest! {
    #[test]
    fn diff_with_itself_is_zero(a in arb_side()) {
        let d = diff::join(&a, &a, &DiffOptions::default());
        prop_assert_eq!(d.rows.len(), a.rows.len());
        for r in &d.rows {
            prop_assert_eq!(r.delta, 0.0);
            prop_assert_eq!(r.status, Status::Same);
            prop_assert_eq!(r.count_a, r.count_b);
        }
    }

    #[test]
    fn diff_is_antisymmetric(a in arb_side(), b in arb_side(), pct in 0.0f64..10.0, us in 0.0f64..10.0) {
        let o = DiffOptions { threshold_pct: pct, threshold_ps: us * US, ..DiffOptions::default() };
        let ab = diff::join(&a, &b, &o);
        let ba = diff::join(&b, &a, &o);
        prop_assert_eq!(ab.rows.len(), ba.rows.len());
        for r in &ab.rows {
            let m = ba
                .rows
                .iter()
                .find(|m| m.name == r.name && m.kind == r.kind)
                .expect("the same row");
            prop_assert_eq!(r.delta, -m.delta);
            prop_assert_eq!(r.status, m.status.mirrored());
            prop_assert_eq!((r.count_a, r.count_b), (m.count_b, m.count_a));
            prop_assert_eq!((r.total_a, r.self_a), (m.total_b, m.self_b));
        }
        prop_assert_eq!((ab.steps_a, ab.step_time_a), (ba.steps_b, ba.step_time_b));
    }
}

/// Issue 52 §4 on two H200 captures of one model (fp32 eager, bf16 with a side stream): a
/// name's host annotation and its GPU twin are two rows (as `stats` keeps them), the profiler's
/// own span is no row, and Python frames that differ only in object addresses match.
#[test]
fn torch_gpu_pair_compares_like_with_like() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/torch_gpu");
    let load = |f: &str| {
        formats::load(&dir.join(f), SourceInfo::default(), &Progress::default()).expect("load")
    };
    let a = load("worker0.1795774111709892780.pt.trace.json.gz");
    let b = load("worker0.1795887060116290334.pt.trace.json.gz");
    let d = diff::diff(&a, &b, &DiffOptions::default()).expect("diff");
    assert!(d.per_step && (d.steps_a, d.steps_b) == (2, 3));
    let of = |name: &str, kind: EventKind| {
        d.rows
            .iter()
            .find(|r| r.name == name && r.kind == Some(kind))
            .unwrap_or_else(|| panic!("no {name} {kind:?}"))
    };
    // One host annotation per step, whose time per step is the step time.
    let host = of("ProfilerStep*", EventKind::Annotation);
    assert_eq!((host.count_a, host.count_b), (2, 3));
    assert!(
        (host.total_a - d.step_time_a as f64).abs() < 1e3,
        "{host:?}"
    );
    assert!(
        (host.total_b - d.step_time_b as f64).abs() < 1e3,
        "{host:?}"
    );
    let dev = of("ProfilerStep*", EventKind::GpuAnnotation);
    assert!(dev.count_a > 0 && dev.count_b > 0);
    assert!(d.rows.iter().all(|r| r.name != "PyTorch Profiler (0)"));
    // Addresses: none left in a row name, and the frames of both runs meet in one row.
    let address = regex::Regex::new(r"0x[0-9a-fA-F]{6,}").expect("regex");
    assert!(d.rows.iter().all(|r| !address.is_match(&r.name)));
    let append = of(
        "<built-in method append of list object at 0x…>",
        EventKind::Python,
    );
    assert!(append.count_a > 0 && append.count_b > 0);
    let one_sided = d
        .rows
        .iter()
        .filter(|r| matches!(r.status, Status::Added | Status::Removed))
        .filter(|r| r.name.contains("object at 0x…"))
        .count();
    let matched = d
        .rows
        .iter()
        .filter(|r| r.name.contains("object at 0x…") && r.count_a > 0 && r.count_b > 0)
        .count();
    assert!(
        matched > 20 && one_sided < matched,
        "{one_sided} vs {matched}"
    );
    // --profiler brings the span back, as `stats --profiler` does.
    let o = DiffOptions {
        profiler: true,
        ..DiffOptions::default()
    };
    let dp = diff::diff(&a, &b, &o).expect("diff");
    assert!(
        dp.rows
            .iter()
            .any(|r| r.name == "PyTorch Profiler (0)" && r.span)
    );
    // The CLI: a KIND column and `kind` in the JSON.
    let (f, g) = (
        dir.join("worker0.1795774111709892780.pt.trace.json.gz"),
        dir.join("worker0.1795887060116290334.pt.trace.json.gz"),
    );
    let (f, g) = (f.to_str().expect("utf-8"), g.to_str().expect("utf-8"));
    let (code, out, err) = run(&["diff", f, g, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    let steps: Vec<&Value> = v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["name"] == "ProfilerStep*")
        .collect();
    let kinds: Vec<&str> = steps.iter().filter_map(|r| r["kind"].as_str()).collect();
    assert_eq!(steps.len(), 2, "{kinds:?}");
    assert!(kinds.contains(&"annotation") && kinds.contains(&"gpu_annotation"));
    let (code, out, _) = run(&["diff", f, g, "--limit", "5"]);
    assert_eq!(code, 0);
    assert!(out.contains(" KIND "), "{out}");
}

/// Invariant on every capture fixture the diff reads (torch GPU, HTA pair, hand pair, XPlane):
/// each event is in exactly one row — Σ counts of a capture diffed with itself = its events less
/// the profiler's own — rows of one name are apart only by kind, and no name keeps an address.
#[test]
fn every_event_is_in_one_row_and_no_address_is_left() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let address = regex::Regex::new(r"0x[0-9a-fA-F]{6,}\b").expect("regex");
    let mut files: Vec<PathBuf> = ["diff", "torch_gpu"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).expect("dir"))
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".json") || n.ends_with(".trace.json.gz") || n.ends_with("json.gz")
        })
        .filter(|p| !p.to_string_lossy().contains("key_averages"))
        .collect();
    files.push(root.join("xplane/h200_jax_gpu_attn.xplane.pb.gz"));
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    for f in &files {
        let c = formats::load(f, SourceInfo::default(), &Progress::default()).expect("load");
        let d = diff::diff(&c, &c, &DiffOptions::default()).expect("diff");
        let mut want: u64 = c
            .aggregated
            .iter()
            .filter(|a| !tracetui::analysis::stats::is_profiler_track(&c, a.track))
            .map(|a| a.occurrences)
            .sum();
        for (t, tr) in c.tracks.iter().enumerate() {
            let prof = tracetui::analysis::stats::is_profiler_track(&c, t as u32);
            for i in tr.slices.0 as usize..tr.slices.1 as usize {
                if !diff::side::is_profiler_event(&c, prof, i) {
                    want += 1;
                }
            }
        }
        let got: u64 = d.rows.iter().map(|r| r.count_a).sum();
        assert_eq!(got, want, "{}", f.display());
        let mut seen = std::collections::HashSet::new();
        for r in &d.rows {
            assert!(r.kind.is_some(), "{}: {r:?}", f.display());
            assert!(
                seen.insert((r.name.clone(), r.kind)),
                "{}: {r:?}",
                f.display()
            );
            assert!(!address.is_match(&r.name), "{}: {}", f.display(), r.name);
        }
    }
}
