//! Aligned timelines of a diff (issue 26 §4): `a` in the diff table opens one stream of A over
//! its partner in B, aligned by name sequence. A widget test on a hand-made pair (slower, removed,
//! added events) checks glyphs and positions; snapshots of HTA's trace-diff pair at 80×24 and
//! 160×48.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Rect;
use std::path::Path;
use tracetui::analysis::diff::align::Op;
use tracetui::ui::app::{App, Screen};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::views::View;
use tracetui::ui::views::diff_align::{ADDED, BODY, DiffAlignView, REMOVED};

mod common;
use common::{code, key, run_cmds, screen};

fn app_in(root: &Path, files: &[&str], w: u16, h: u16) -> App {
    let caps = files
        .iter()
        .map(|f| CaptureRef::from_file(&root.join(f), root))
        .collect();
    let (mut app, cmds) = App::new(caps, (w, h), ColorMode::None);
    run_cmds(&mut app, cmds);
    assert_eq!(app.screen(), Screen::Picker);
    app
}

/// Marks entry 0 as A, diffs entry 1 (B) against it, then opens the aligned timelines.
fn open_aligned(a: &mut App) {
    a.update(key('b'));
    a.update(key('j'));
    let cmds = a.update(key('d'));
    run_cmds(a, cmds);
    assert_eq!(a.top(), ViewKind::Table);
    a.update(key('a'));
    assert_eq!(a.top(), ViewKind::DiffAlign, "{:?}", a.notice);
}

fn view(app: &App) -> &DiffAlignView {
    app.views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<DiffAlignView>())
        .expect("aligned view on top")
}

/// One thread of top-level ops: `(name, start µs, dur µs)`.
fn trace(events: &[(&str, u32, u32)]) -> String {
    let ev: Vec<String> = events
        .iter()
        .map(|(n, ts, d)| {
            format!(
                r#"{{"ph":"X","name":"{n}","cat":"cpu_op","ts":{ts},"dur":{d},"pid":1,"tid":1}}"#
            )
        })
        .collect();
    format!("{{\"traceEvents\":[{}]}}", ev.join(","))
}

#[test]
fn hand_made_pair_draws_slower_removed_and_added_events() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A: k1 k2 k3 k4, 10 µs each. B: k2 twice as long, k3 gone, kN (5 µs) added before k4.
    let a = trace(&[
        ("k1", 0, 10),
        ("k2", 10, 10),
        ("k3", 20, 10),
        ("k4", 30, 10),
    ]);
    let b = trace(&[("k1", 0, 10), ("k2", 10, 20), ("kN", 30, 5), ("k4", 35, 10)]);
    std::fs::write(dir.path().join("a.json"), a).expect("write a");
    std::fs::write(dir.path().join("b.json"), b).expect("write b");
    // 84 columns: 80 for the lanes, two per µs of A's 40 µs.
    let mut app = app_in(dir.path(), &["a.json", "b.json"], 84, 12);
    open_aligned(&mut app);
    let v = view(&app);
    let ops: Vec<Op> = v.sa.al.ops().collect();
    assert_eq!(
        ops,
        vec![
            Op::Match(0, 0),
            Op::Match(1, 1),
            Op::Delete(2),
            Op::Insert(2),
            Op::Match(3, 3),
        ]
    );
    // Per status: same, slower, faster, only.
    assert_eq!(v.lanes.a.totals(), [2, 1, 0, 1]);
    assert_eq!(v.lanes.b.totals(), [2, 1, 0, 1]);
    assert_eq!((v.vp.t0, v.vp.t1), (0, 40_000_000));
    let area = Rect::new(0, 0, 84, 12);
    let mut buf = Buffer::empty(area);
    v.draw(&app, &mut buf, area, &mut Vec::new());
    let at = |c: u16, y: u16| buf[(4 + c, y)].symbol().to_string();
    // Lanes (one row each at 12 rows): A on row 2 (its marks on 3), B on row 4 (marks on 5),
    // from column 4. A name covers the 2nd and 3rd column of an event that overlaps neither
    // neighbour.
    let (ya, yb) = (2, 4);
    let label = [1u16, 2, 21, 22, 41, 42, 61, 62];
    for c in (0..80u16).filter(|c| !label.contains(c)) {
        let want = if (40..60).contains(&c) { REMOVED } else { BODY };
        assert_eq!(at(c, ya), want, "A col {c}");
    }
    for c in 0..80u16 {
        let want = if (40..60).contains(&c) { REMOVED } else { " " };
        assert_eq!(at(c, ya + 1), want, "A mark col {c}");
    }
    assert_eq!(at(1, ya), "k");
    // B: k2 from A's k2 start with its own 20 µs (cols 20..60), kN added at 60..70 over k4
    // (60..80, at A's k4): overlapping events get no name.
    let label = [1u16, 2, 21, 22];
    for c in (0..80u16).filter(|c| !label.contains(c)) {
        let want = if (60..70).contains(&c) { ADDED } else { BODY };
        assert_eq!(at(c, yb), want, "B col {c}");
    }
    for c in 0..80u16 {
        let want = if (60..70).contains(&c) { ADDED } else { " " };
        assert_eq!(at(c, yb + 1), want, "B mark col {c}");
    }
    // The lane names.
    assert_eq!(buf[(1, ya)].symbol(), "A");
    assert_eq!(buf[(1, yb)].symbol(), "B");
    // Cursor on k1; n goes to the first difference (k2, slower) and the details say so.
    let mut app = app;
    app.update(key('n'));
    let s = screen(&app);
    assert!(s.contains("pair 2 of 5 · slower · k2"), "{s}");
    assert!(
        s.contains("A 10.00 µs · B 20.00 µs · Δ +10.00 µs (+100.0%)"),
        "{s}"
    );
    app.update(key('n'));
    assert!(screen(&app).contains("pair 3 of 5 · removed (A only) · k3"));
    app.update(key('n'));
    assert!(screen(&app).contains("pair 4 of 5 · added (B only) · kN"));
    // Overlay: B at its own times, kN at 30..35 and k4 at 35..45.
    app.update(key('m'));
    let v = view(&app);
    assert!(v.lanes.overlay);
    assert_eq!(v.lanes.b.pos, vec![0, 10_000_000, 30_000_000, 35_000_000]);
    app.update(code(KeyCode::Esc));
    assert_eq!(app.top(), ViewKind::Table);
}

#[test]
fn hta_pair_aligns_the_busiest_stream() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diff");
    let re = regex::Regex::new(r"\d{4}-\d\d-\d\d \d\d:\d\d").unwrap();
    for (w, h) in [(80, 24), (160, 48)] {
        let mut a = app_in(&root, &["hta_control.json.gz", "hta_test.json.gz"], w, h);
        open_aligned(&mut a);
        let v = view(&a);
        assert!(v.sa.pair.device, "{}", v.sa.pair.title);
        assert!(
            v.sa.pair.title.ends_with("/ stream 7"),
            "{}",
            v.sa.pair.title
        );
        let al = &v.sa.al;
        assert_eq!(al.matched + al.deleted, v.sa.a_ids.len());
        assert_eq!(al.matched + al.inserted, v.sa.b_ids.len());
        assert!(al.matched > 0);
        let text = screen(&a);
        insta::assert_snapshot!(
            format!("hta_diff_align_{w}x{h}"),
            re.replace_all(&text, "[mtime]")
        );
        if w == 80 {
            // The help of the view and of the diff table fit 80×24 without scrolling.
            a.update(key('?'));
            let s = screen(&a);
            assert!(s.contains("plain overlay from a common zero"), "{s}");
            assert!(!s.contains("j/k scroll"), "{s}");
            a.update(code(KeyCode::Esc));
            a.update(code(KeyCode::Esc));
            assert_eq!(a.top(), ViewKind::Table);
            a.update(key('?'));
            let s = screen(&a);
            assert!(
                s.contains("aligned timelines of A's and B's busiest"),
                "{s}"
            );
            assert!(s.contains("compare a step range"), "{s}");
            assert!(!s.contains("j/k scroll"), "{s}");
            a.update(code(KeyCode::Esc));
            a.update(key('a'));
            assert_eq!(a.top(), ViewKind::DiffAlign);
        }
        let v = view(&a);
        // Tab: the next pair; m: the overlay.
        let first = v.sa.pair.clone();
        a.update(code(KeyCode::Tab));
        assert_ne!(view(&a).sa.pair, first);
        a.update(key('m'));
        assert!(view(&a).lanes.overlay);
    }
}
