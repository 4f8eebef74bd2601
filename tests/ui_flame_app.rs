//! The flame view wired into the explorer: `F` on the timeline opens the merged tree of the
//! capture (or the marked range), its keys move, zoom, switch metric / sandwich / table, and
//! `Enter` makes the node's instances the hit list and returns to the timeline at the first.
//! Whole-app snapshots at 80×24 and 160×48 on a small Kineto fixture (alexnet, HTA).

use ratatui::crossterm::event::KeyCode;
use std::path::Path;
use tracetui::analysis::flame::{Metric, ROOT};
use tracetui::ui::app::{App, Mark, Screen};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::hits::HitList;
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::views::flame::FlameMode;
use tracetui::ui::views::flame_view::FlameView;

mod common;
use common::{code, key, run_cmds, screen};

const FIXTURE: &str = "tests/fixtures/ui/alexnet.pt.trace.json.gz";

fn app(w: u16, h: u16) -> App {
    app_of(FIXTURE, w, h)
}

fn app_of(fixture: &str, w: u16, h: u16) -> App {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cap = CaptureRef::from_file(&root.join(fixture), root);
    let (mut app, cmds) = App::new(vec![cap], (w, h), ColorMode::None);
    run_cmds(&mut app, cmds);
    assert_eq!(app.screen(), Screen::Timeline);
    assert!(app.loaded().is_some(), "fixture did not load");
    app
}

fn flame(app: &App) -> &FlameView {
    app.views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<FlameView>())
        .expect("flame view on top")
}

fn snap(name: &str, app: &App) {
    let text = screen(app);
    let re = regex::Regex::new(r"\d{4}-\d\d-\d\d \d\d:\d\d").unwrap();
    let masked = re.replace_all(&text, "[mtime]         ");
    insta::assert_snapshot!(name, masked);
}

#[test]
fn f_opens_the_flame_view_snapshots() {
    for (w, h) in [(80, 24), (160, 48)] {
        let mut a = app(w, h);
        a.update(key('F'));
        assert_eq!(a.top(), ViewKind::Flame);
        let s = screen(&a);
        assert!(
            s.contains("flame · whole capture (profiler spans left out) · total "),
            "{s}"
        );
        snap(&format!("alexnet_{w}x{h}_flame"), &a);
        a.update(key('t'));
        snap(&format!("alexnet_{w}x{h}_flame_table"), &a);
    }
}

#[test]
fn keys_move_zoom_and_switch_modes() {
    let mut a = app(120, 40);
    a.update(key('F'));
    let v = flame(&a);
    let first = v.state.selected;
    assert_ne!(first, ROOT, "starts on the widest root child");
    assert_eq!(v.tree.parent(first), ROOT);
    // `l` walks the root's children; stop at the first with children.
    let mut first = first;
    while flame(&a).tree.children(first).is_empty() {
        a.update(key('l'));
        let next = flame(&a).state.selected;
        assert_ne!(next, first, "no root child with children");
        first = next;
    }
    // Down goes to the widest child, zoom makes it the root, zoom out goes back one level.
    a.update(key('j'));
    let child = flame(&a).state.selected;
    assert_eq!(flame(&a).tree.parent(child), first);
    a.update(key('w'));
    assert_eq!(flame(&a).state.focus, child);
    assert!(screen(&a).contains(" · zoom: "), "{}", screen(&a));
    a.update(key('s'));
    assert_eq!(flame(&a).state.focus, first);
    a.update(key('s'));
    assert_eq!(flame(&a).state.focus, ROOT);
    a.update(key('m'));
    assert_eq!(flame(&a).state.metric, Metric::SelfTime);
    let s = screen(&a);
    assert!(
        s.starts_with(" flame · whole capture (profiler spans left out) · self "),
        "{s}"
    );
    a.update(key('x'));
    assert_eq!(flame(&a).state.mode, FlameMode::Sandwich);
    assert!(flame(&a).sandwich.is_some());
    assert!(screen(&a).contains("sandwich · "), "{}", screen(&a));
    a.update(key('t'));
    assert_eq!(flame(&a).state.mode, FlameMode::Table);
    assert!(!flame(&a).state.table.is_empty());
    // In the table, j / k walk the rows in table order.
    let rows = flame(&a).state.table.clone();
    let at = rows.iter().position(|&n| n == flame(&a).state.selected);
    a.update(key('j'));
    let next = rows.iter().position(|&n| n == flame(&a).state.selected);
    assert_eq!(next, at.map(|i| (i + 1).min(rows.len() - 1)));
    // `/` types a search (keys bound elsewhere in the view are text here); Enter ends it.
    a.update(key('/'));
    assert!(flame(&a).typing);
    for c in "conv".chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter));
    assert_eq!(flame(&a).state.search, "conv");
    assert!(!flame(&a).typing);
    assert!(screen(&a).contains(" · search: conv"), "{}", screen(&a));
    a.update(code(KeyCode::Esc));
    assert_eq!(a.top(), ViewKind::Timeline);
}

#[test]
fn enter_makes_the_instances_the_hits_and_n_walks_them() {
    let mut a = app(120, 40);
    a.update(key('F'));
    a.update(key('j'));
    let v = flame(&a);
    let n = v.state.selected;
    let mut want = v.tree.instances(n).to_vec();
    assert!(!want.is_empty());
    a.update(code(KeyCode::Enter));
    assert_eq!(a.top(), ViewKind::Timeline);
    let hits = a.hits.as_ref().expect("hits set");
    let cap = &a.loaded().unwrap().cap;
    want.sort_unstable_by_key(|&id| (cap.slices.start[id as usize], id));
    assert_eq!(hits.ids, want);
    assert_eq!(a.selected, Some(want[0]));
    assert!(hits.label.starts_with("flame “"), "{}", hits.label);
    if want.len() > 1 {
        a.update(key('n'));
        assert_ne!(a.selected, Some(want[0]));
        assert!(want.contains(&a.selected.unwrap()));
    }
}

#[test]
fn a_marked_range_scopes_the_tree() {
    let mut a = app(120, 40);
    a.update(key('F'));
    let whole = flame(&a).tree.width(ROOT, Metric::Total);
    a.update(code(KeyCode::Esc));
    // Mark from the window's centre to a quarter window right of it.
    a.update(key('0'));
    a.update(key('m'));
    a.update(key('d'));
    a.update(key('m'));
    assert!(matches!(a.mark, Mark::Range(..)), "{:?}", a.mark);
    a.update(key('F'));
    let v = flame(&a);
    assert!(v.scope.starts_with("range of "), "{}", v.scope);
    assert!(v.tree.width(ROOT, Metric::Total) < whole);
    let s = screen(&a);
    assert!(s.contains("flame · range of "), "{s}");
}

#[test]
fn c_cycles_the_scope_through_step_process_track_and_hits() {
    // A real torch capture with `ProfilerStep#N` annotations.
    let mut a = app_of(
        "tests/fixtures/flame/worker0.1795536379695100043.pt.trace.json.gz",
        120,
        40,
    );
    // Select a step's slice (cursor on its lane, cursor time inside the step) and make the
    // `aten::` ops the hits.
    let (step, ops) = {
        let cap = &a.loaded().unwrap().cap;
        let n = cap.slices.len() as u32;
        let step = (0..n)
            .find(|&i| cap.slice_name(i).starts_with("ProfilerStep#"))
            .expect("a ProfilerStep slice");
        let ops: Vec<u32> = (0..n)
            .filter(|&i| cap.slice_name(i) == "aten::conv2d")
            .collect();
        (step, HitList::new(cap, "conv".to_string(), ops))
    };
    a.select(step);
    a.state_mut().hits = Some(ops);
    a.update(key('F'));
    let whole = flame(&a).tree.width(ROOT, Metric::Total);
    assert!(flame(&a).scope.starts_with("whole capture"));
    let mut seen = Vec::new();
    for _ in 0..6 {
        a.update(key('c'));
        let v = flame(&a);
        seen.push(v.scope.clone());
        // Every narrower scope merges at most the whole capture's time.
        assert!(v.tree.width(ROOT, Metric::Total) <= whole, "{}", v.scope);
        assert_eq!(v.state.focus, ROOT);
    }
    let has = |p: &str| seen.iter().any(|s| s.starts_with(p));
    assert!(has("step "), "{seen:?}");
    assert!(has("process "), "{seen:?}");
    assert!(has("track "), "{seen:?}");
    assert!(seen.iter().any(|s| s.contains(" hits of conv")), "{seen:?}");
    // The cycle comes back round to the whole capture.
    assert!(
        seen.iter().any(|s| s.starts_with("whole capture")),
        "{seen:?}"
    );
    let s = screen(&a);
    assert!(s.contains("flame · "), "{s}");
}

#[test]
fn a_folded_stacks_file_opens_straight_into_the_flame_view() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("app.folded");
    std::fs::write(&p, "main;parse;lex 30\nmain;parse 10\nmain;eval 60\n").expect("write");
    let cap = CaptureRef::from_file(&p, dir.path());
    let (mut a, cmds) = App::new(vec![cap], (100, 30), ColorMode::None);
    run_cmds(&mut a, cmds);
    assert_eq!(a.top(), ViewKind::Flame);
    let v = flame(&a);
    // 100 µs in all, `eval` (the widest child of `main`) first.
    assert_eq!(v.tree.width(ROOT, Metric::Total), 100_000_000);
    let s = screen(&a);
    assert!(s.contains("main"), "{s}");
    assert!(s.contains("eval"), "{s}");
    // Enter on a node shows its instances on the laid-out timeline; Esc comes back here.
    a.update(key('j'));
    a.update(code(KeyCode::Enter));
    assert_eq!(a.top(), ViewKind::Timeline);
    assert!(a.selected.is_some());
    a.update(code(KeyCode::Esc)); // clears the selection
    a.update(code(KeyCode::Esc));
    assert_eq!(a.top(), ViewKind::Flame);
}
