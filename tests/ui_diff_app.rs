//! The diff in the explorer: `b` on a capture in the picker marks the baseline (A), `d` on
//! another loads both and shows B's timeline under the per-name diff table, whose figures are
//! `tracetui diff`'s; `Enter` on a row makes the name's occurrences in B the hits.
//! Snapshots at 80×24 and 160×48 on HTA's trace-diff pair.

use ratatui::crossterm::event::KeyCode;
use std::path::Path;
use std::sync::Arc;
use tracetui::analysis::diff::{DiffOptions, diff};
use tracetui::ui::app::{App, Screen};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::loader::Loaded;
use tracetui::ui::views::table::TableView;

mod common;
use common::{code, key, run_cmds, screen};

fn app(files: &[&str], w: u16, h: u16) -> App {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diff");
    let caps = files
        .iter()
        .map(|f| CaptureRef::from_file(&root.join(f), &root))
        .collect();
    let (mut app, cmds) = App::new(caps, (w, h), ColorMode::None);
    run_cmds(&mut app, cmds);
    assert_eq!(app.screen(), Screen::Picker);
    app
}

fn table(app: &App) -> &TableView {
    app.views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<TableView>())
        .expect("diff table on top")
}

/// The loaded captures of entries 0 (A) and 1 (B).
fn loaded_a_b(app: &App) -> (Arc<Loaded>, Arc<Loaded>) {
    let e = &app.entries;
    let cap = |i: usize| e.capture(e.id_of(i).unwrap()).unwrap().clone();
    (cap(0), cap(1))
}

/// Marks entry 0 as A, then diffs entry 1 (B) against it.
fn diff_0_1(a: &mut App) {
    a.update(key('b'));
    assert!(
        a.notice
            .clone()
            .unwrap_or_default()
            .starts_with("baseline A: ")
    );
    assert!(screen(a).contains("\nA "), "{}", screen(a));
    a.update(key('j'));
    let cmds = a.update(key('d'));
    run_cmds(a, cmds);
}

#[test]
fn b_then_d_shows_the_diff_of_b_against_a() {
    let mut a = app(&["hand_a.json", "hand_b.json"], 120, 30);
    diff_0_1(&mut a);
    assert_eq!(a.top(), ViewKind::Table);
    // B is the capture shown under the table.
    let shown = a.loaded().expect("B loaded").cap.source.path.clone();
    assert!(shown.ends_with("hand_b.json"), "{shown:?}");
    let t = table(&a);
    assert!(t.title.starts_with("diff · B "), "{}", t.title);
    assert!(t.title.contains("per step"), "{}", t.title);
    // The same rows, in the same order, as the library's (and so `tracetui diff`'s) answer.
    let (ca, cb) = loaded_a_b(&a);
    let d = diff(&ca.cap, &cb.cap, &DiffOptions::default()).unwrap();
    let names: Vec<&str> = t.rows.iter().map(|r| r.cells[0].as_str()).collect();
    let want: Vec<&str> = d.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, want);
    let mm = t.rows.iter().find(|r| r.cells[0] == "aten::mm").unwrap();
    assert_eq!(mm.cells[1], "slower");
    assert_eq!((mm.cells[2].as_str(), mm.cells[3].as_str()), ("2", "3"));
    assert_eq!(mm.cells[7], "+50.0%");
    let old = t.rows.iter().find(|r| r.cells[0] == "aten::old").unwrap();
    assert_eq!(old.cells[1], "removed");
    let s = screen(&a);
    assert!(s.contains("step A "), "{s}");
    // Enter on aten::mm: its 3 occurrences in B are the hits, on B's timeline.
    a.update(key('/'));
    for c in "aten::mm".chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter));
    a.update(code(KeyCode::Enter));
    assert_eq!(a.top(), ViewKind::Timeline);
    let hits = a.hits.as_ref().expect("hits");
    assert_eq!(hits.ids.len(), 3);
}

#[test]
fn diff_needs_a_baseline_and_another_capture() {
    let mut a = app(&["hand_a.json", "hand_b.json"], 100, 30);
    let cmds = a.update(key('d'));
    assert!(cmds.is_empty());
    assert!(
        a.notice
            .clone()
            .unwrap_or_default()
            .starts_with("mark the baseline first (b)"),
        "{:?}",
        a.notice
    );
    a.update(key('b'));
    let cmds = a.update(key('d'));
    assert!(cmds.is_empty());
    assert!(
        a.notice
            .clone()
            .unwrap_or_default()
            .starts_with("that is the baseline")
    );
    // b again unmarks.
    a.update(key('b'));
    assert_eq!(a.notice.as_deref(), Some("diff baseline cleared"));
}

#[test]
fn hta_pair_snapshots() {
    let re = regex::Regex::new(r"\d{4}-\d\d-\d\d \d\d:\d\d").unwrap();
    for (w, h) in [(80, 24), (160, 48)] {
        let mut a = app(&["hta_control.json.gz", "hta_test.json.gz"], w, h);
        diff_0_1(&mut a);
        assert_eq!(a.top(), ViewKind::Table);
        let text = screen(&a);
        insta::assert_snapshot!(
            format!("hta_diff_{w}x{h}"),
            re.replace_all(&text, "[mtime]")
        );
    }
}

#[test]
fn the_flame_view_of_b_is_coloured_by_its_delta_against_a() {
    use tracetui::analysis::flame::{Metric, ROOT};
    use tracetui::ui::views::flame_view::FlameView;
    let mut a = app(&["hand_a.json", "hand_b.json"], 160, 30);
    diff_0_1(&mut a);
    a.update(code(KeyCode::Esc));
    assert_eq!(a.top(), ViewKind::Timeline);
    a.update(key('F'));
    let v = a
        .views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<FlameView>())
        .expect("flame view");
    let d = v.diff.as_ref().expect("diff against A");
    assert!(d.per_step());
    let cap = &a.loaded().unwrap().cap;
    // The steps merge into one `ProfilerStep*` node in each tree, matched across captures.
    let step = v.tree.children(ROOT)[0];
    assert_eq!(v.tree.name_str(step, &cap.strings), "ProfilerStep*");
    let mm = v
        .tree
        .children(step)
        .iter()
        .copied()
        .find(|&n| v.tree.name_str(n, &cap.strings) == "aten::mm")
        .expect("aten::mm under the steps");
    // Per step: B 3 × 30 µs / 3 = 30 µs, A 2 × 20 µs / 2 = 20 µs.
    assert_eq!(d.delta(&v.tree, mm, Metric::Total), 10e6);
    // `aten::old` and `kernel_v1` are gone in B.
    assert_eq!(d.removed.len(), 2);
    let s = screen(&a);
    assert!(s.contains("diff vs A per step"), "{s}");
    assert!(s.contains("2 paths gone in B"), "{s}");
}

/// `v` regroups the table's rows as `tracetui diff --group-by` does (name → short → category →
/// stream → name), `%` walks the noise thresholds; each table equals the library's answer.
#[test]
fn v_regroups_and_percent_changes_the_threshold() {
    use tracetui::analysis::diff::GroupKey;
    use tracetui::ui::views::diff_table::THRESHOLDS;
    let mut a = app(&["hand_a.json", "hand_b.json"], 120, 30);
    diff_0_1(&mut a);
    let (ca, cb) = loaded_a_b(&a);
    let rows_of = |t: &TableView| -> Vec<(String, String)> {
        let mut v: Vec<_> = t
            .rows
            .iter()
            .map(|r| (r.cells[0].clone(), r.cells[1].clone()))
            .collect();
        v.sort();
        v
    };
    let want = |opts: &DiffOptions| -> Vec<(String, String)> {
        let d = diff(&ca.cap, &cb.cap, opts).unwrap();
        let mut v: Vec<_> = d
            .rows
            .iter()
            .map(|r| {
                let name = tracetui::ui::text::sanitize(&r.name).into_owned();
                (name, r.status.name().to_string())
            })
            .collect();
        v.sort();
        v
    };
    let mut opts = DiffOptions::default();
    for g in [
        GroupKey::Short,
        GroupKey::Category,
        GroupKey::Stream,
        GroupKey::Name,
    ] {
        a.update(key('v'));
        opts.group = g;
        let t = table(&a);
        assert_eq!(t.columns[0].name, g.name());
        assert_eq!(rows_of(t), want(&opts), "grouped by {}", g.name());
    }
    assert!(
        table(&a).title.contains("same: |Δ| < 2%"),
        "{}",
        table(&a).title
    );
    for &(pct, ps) in THRESHOLDS.iter().skip(1) {
        a.update(key('%'));
        (opts.threshold_pct, opts.threshold_ps) = (pct, ps);
        assert_eq!(rows_of(table(&a)), want(&opts), "threshold {pct}%");
    }
    // No threshold: every row whose figures moved at all is slower or faster, none `same`.
    let t = table(&a);
    assert!(t.title.contains("same: Δ = 0"), "{}", t.title);
    let d = diff(&ca.cap, &cb.cap, &opts).unwrap();
    assert!(
        d.rows
            .iter()
            .all(|r| r.status.name() != "same" || r.delta == 0.0)
    );
}

/// When the baseline's file is deleted while the table is open (the live watcher drops its
/// entry), `v` and `%` say why the table cannot be recomputed, and the table stays as it was
/// (grouping and threshold unchanged, so the next press starts from the shown state).
#[test]
fn regrouping_after_the_baseline_is_gone_says_why() {
    use tracetui::live::{CaptureEvent, EventKind, WatchEvent};
    use tracetui::ui::msg::Msg;
    let mut a = app(&["hand_a.json", "hand_b.json"], 120, 30);
    diff_0_1(&mut a);
    let before = (table(&a).title.clone(), table(&a).rows.len());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diff");
    let cat = tracetui::discover::discover(&root).expect("fixtures");
    let capture = cat
        .captures()
        .find(|c| c.path.ends_with("hand_a.json"))
        .expect("A")
        .clone();
    let cmds = a.update(Msg::Watch(WatchEvent::Capture(CaptureEvent {
        kind: EventKind::Removed,
        capture,
    })));
    run_cmds(&mut a, cmds);
    assert_eq!(a.entries.len(), 1, "A's entry dropped");
    for k in ['v', '%'] {
        a.update(key(k));
        let n = a.notice.clone().unwrap_or_default();
        assert!(n.contains("no longer loaded"), "{k}: {n:?}");
        let t = table(&a);
        assert_eq!((t.title.clone(), t.rows.len()), before, "{k}");
        assert_eq!(t.columns[0].name, "name", "{k}");
    }
}

/// The paths only in A are drawn in the diff flame, hatched at A's width beside B's nodes:
/// `aten::old` and `kernel_v1` under `ProfilerStep*`. The arrow keys reach them, the footer
/// gives A's figures and "gone in B", `Enter` and the sandwich say why they have nothing in B,
/// and the table lists them with A's figures.
#[test]
fn gone_paths_are_drawn_and_selectable_in_the_diff_flame() {
    use tracetui::ui::views::flame_view::FlameView;
    for (w, h) in [(80, 24), (160, 48)] {
        let mut a = app(&["hand_a.json", "hand_b.json"], w, h);
        diff_0_1(&mut a);
        a.update(code(KeyCode::Esc));
        a.update(key('F'));
        // ProfilerStep* → aten::mm (widest) → aten::add → aten::old (A's 10 µs, tied with
        // add's 10 µs, after it).
        for k in ['j', 'l', 'l'] {
            a.update(key(k));
        }
        let v = a
            .views()
            .last()
            .and_then(|v| v.as_any().downcast_ref::<FlameView>())
            .expect("flame view");
        let d = v.diff.as_ref().expect("diff against A");
        assert!(d.is_gone(v.state.selected));
        assert_eq!(d.gone_count(), 2);
        let s = screen(&a);
        assert!(s.contains("aten::old · gone in B"), "{s}");
        assert!(s.contains("╱"), "{s}");
        insta::assert_snapshot!(format!("hand_diff_flame_gone_{w}x{h}"), s);
        a.update(code(KeyCode::Enter));
        assert!(
            a.notice
                .clone()
                .unwrap_or_default()
                .contains("is gone in B"),
            "{:?}",
            a.notice
        );
        a.update(key('x'));
        let s = screen(&a);
        assert!(s.contains("is gone in B: no occurrence in B"), "{s}");
        // The table lists the gone paths too, with A's (whole-capture) figures, marked `╱`;
        // the cursor stays on aten::old.
        a.update(key('t'));
        let s = screen(&a);
        let row = s
            .lines()
            .find(|l| l.contains("╱ aten::old"))
            .unwrap_or_else(|| panic!("{s}"));
        assert!(row.contains("20.00 µs"), "{row}");
        // (At 80 columns the table's last column is cut, as in every flame table.)
        assert!(w == 80 || row.trim_end().ends_with("gone"), "{row}");
        assert!(s.contains("╱ kernel_v1"), "{s}");
        assert!(s.contains("aten::old · gone in B"), "{s}");
        if w == 80 {
            insta::assert_snapshot!("hand_diff_flame_table_80x24", s);
        }
    }
}

/// `r` in the diff table prompts for the steps to compare (the syntax of `--steps`): a valid
/// range recomputes the table over those steps (the library's rows, the scope in the title), a
/// bad one or one a capture lacks is refused with the reason in the status line and the prompt
/// left open, `Esc` cancels, empty compares all steps again.
#[test]
fn r_prompts_for_a_step_range() {
    use tracetui::analysis::diff::StepRange;
    let mut a = app(&["hand_a.json", "hand_b.json"], 120, 30);
    diff_0_1(&mut a);
    let (ca, cb) = loaded_a_b(&a);
    let names = |t: &TableView| -> Vec<(String, String, String)> {
        t.rows
            .iter()
            .map(|r| (r.cells[0].clone(), r.cells[1].clone(), r.cells[5].clone()))
            .collect()
    };
    let type_str = |a: &mut App, s: &str| {
        for c in s.chars() {
            a.update(key(c));
        }
    };
    assert!(
        table(&a).title.contains("all steps (2 vs 3)"),
        "{}",
        table(&a).title
    );
    let all = names(table(&a));

    // A valid range: step 2 of each.
    a.update(key('r'));
    assert!(table(&a).prompt.is_some());
    let s = screen(&a);
    assert!(
        s.contains("steps (N, A..=B, A..; #N: by position; empty: all): ▏"),
        "{s}"
    );
    type_str(&mut a, "2..3");
    a.update(code(KeyCode::Enter));
    let t = table(&a);
    assert!(t.prompt.is_none());
    assert!(t.title.contains("steps 2 (1 vs 1)"), "{}", t.title);
    let opts = DiffOptions {
        steps: Some(StepRange::numbers(2, 2)),
        ..DiffOptions::default()
    };
    let d = diff(&ca.cap, &cb.cap, &opts).unwrap();
    let want: Vec<String> = d.rows.iter().map(|r| r.name.clone()).collect();
    let got: Vec<String> = t.rows.iter().map(|r| r.cells[0].clone()).collect();
    assert_eq!(got, want);
    assert_eq!(a.notice, None);

    // Invalid text: the reason in the status line, the prompt still open with the text.
    a.update(key('r'));
    assert_eq!(
        table(&a).prompt.as_ref().unwrap().text,
        "2",
        "starts from the range"
    );
    a.update(code(KeyCode::Backspace));
    type_str(&mut a, "x..y");
    a.update(code(KeyCode::Enter));
    let n = a.notice.clone().unwrap_or_default();
    assert!(n.starts_with("steps: invalid step range `x..y`"), "{n}");
    let s = screen(&a);
    let status = s.lines().last().unwrap_or_default();
    assert!(status.contains("steps: invalid step range `x..y`"), "{s}");
    assert_eq!(table(&a).prompt.as_ref().unwrap().text, "x..y");
    // … and on the prompt line, until the text changes.
    assert!(s.contains("x..y▏ · steps: invalid step range"), "{s}");
    // A range A does not have: refused, the table stays at step 2.
    for _ in 0..4 {
        a.update(code(KeyCode::Backspace));
    }
    type_str(&mut a, "3");
    a.update(code(KeyCode::Enter));
    let n = a.notice.clone().unwrap_or_default();
    assert_eq!(
        n,
        "diff: A: no step numbered in 3 (its steps: 1, 2; #1..=3 selects by position)"
    );
    assert!(table(&a).title.contains("steps 2 (1 vs 1)"));
    // Esc cancels; `v` and `%` keep the range.
    a.update(code(KeyCode::Esc));
    assert!(table(&a).prompt.is_none());
    a.update(key('%'));
    assert!(
        table(&a).title.contains("steps 2 (1 vs 1)"),
        "{}",
        table(&a).title
    );
    a.update(key('%'));
    a.update(key('%'));
    // Empty: all steps again, the same table as at first.
    a.update(key('r'));
    a.update(code(KeyCode::Backspace));
    a.update(code(KeyCode::Enter));
    assert!(table(&a).title.contains("all steps (2 vs 3)"));
    assert_eq!(names(table(&a)), all);
}

/// The header of the diff table over a step range of HTA's pair, at 80×24.
#[test]
fn hta_pair_step_range_header_snapshot() {
    let re = regex::Regex::new(r"\d{4}-\d\d-\d\d \d\d:\d\d").unwrap();
    let mut a = app(&["hta_control.json.gz", "hta_test.json.gz"], 80, 24);
    diff_0_1(&mut a);
    a.update(key('r'));
    for c in "1010..1013".chars() {
        a.update(key(c));
    }
    let prompt = screen(&a);
    a.update(code(KeyCode::Enter));
    assert_eq!(a.notice, None);
    let t = table(&a);
    assert!(
        t.title.contains("steps 1010..=1012 (3 vs 3)"),
        "{}",
        t.title
    );
    let text = screen(&a);
    let head: Vec<&str> = prompt
        .lines()
        .skip(2)
        .take(2)
        .chain(text.lines().skip(2).take(4))
        .collect();
    insta::assert_snapshot!(
        "hta_diff_steps_header_80x24",
        re.replace_all(&head.join("\n"), "[mtime]")
    );
}
