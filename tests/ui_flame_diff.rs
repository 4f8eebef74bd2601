//! The diff flame widget (`ui::views::flame` with a `TreeDiff`) drawn into a `Buffer`: a path
//! only in A is a node of the diff tree, drawn hatched (`╱`, label struck through) at A's width
//! in its place, reached with the arrow keys like any node, zoomable, with A's figures and
//! "gone in B" in the footer; the header says which widths are drawn.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use tracetui::analysis::flame::{FlameTree, Metric, ROOT, Scope, Shape, TreeDiff, build};
use tracetui::model::{
    ArgsRef, Capture, CaptureBuilder, Format, Key, SourceInfo, StrId, TrackKind,
};
use tracetui::ui::action::Action;
use tracetui::ui::views::flame::{FlameState, FlameWidget, layout};

/// One thread of `(name, start µs, duration µs)` slices.
fn capture(slices: &[(&str, i64, i64)]) -> Capture {
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(1));
    let t = b.track(p, Key::Int(1), TrackKind::Thread);
    for &(name, s, d) in slices {
        let n = b.intern(name);
        b.add_slice(
            t,
            s * 1_000_000,
            d * 1_000_000,
            n,
            StrId::EMPTY,
            ArgsRef::NONE,
            0,
        );
    }
    b.finish(SourceInfo::default(), Format::Chrome)
}

/// A: main [0,100) ⊃ {alpha [0,40), old [40,80) ⊃ inner [40,60)}.
/// B: main [0,100) ⊃ {alpha [0,50), beta [50,70)}: `old` and `inner` are gone in B.
fn pair() -> (Capture, Capture) {
    let a = capture(&[
        ("main", 0, 100),
        ("alpha", 0, 40),
        ("old", 40, 40),
        ("inner", 40, 20),
    ]);
    let b = capture(&[("main", 0, 100), ("alpha", 0, 50), ("beta", 50, 20)]);
    (a, b)
}

fn text(buf: &Buffer) -> String {
    let a = buf.area;
    let mut s = String::new();
    for y in a.y..a.y + a.height {
        for x in a.x..a.x + a.width {
            s.push_str(buf[(x, y)].symbol());
        }
        s.push('\n');
    }
    s
}

fn row(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
}

fn render(b: &Capture, t: &FlameTree, d: &TreeDiff, st: &FlameState, w: u16, h: u16) -> Buffer {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    FlameWidget {
        tree: t,
        strings: &b.strings,
        state: st,
        sandwich: None,
        scope: "whole capture",
        diff: Some(d),
    }
    .draw(&mut buf, area);
    buf
}

fn find(t: &FlameTree, c: &Capture, path: &[&str]) -> u32 {
    let ids: Vec<_> = path.iter().map(|p| c.strings.lookup(p).unwrap()).collect();
    t.find_path(&ids).unwrap()
}

#[test]
fn a_path_gone_in_b_is_drawn_hatched_at_a_width_and_selectable() {
    let (ca, cb) = pair();
    let (ta, tb) = (
        build(&ca, &Scope::all(), None),
        build(&cb, &Scope::all(), None),
    );
    let d = TreeDiff::new(ta.clone(), &ca.strings, &tb, &cb.strings, (0, 0));
    assert_eq!(d.gone_count(), 2);
    let old = d.gone_node_of_a(find(&ta, &ca, &["main", "old"])).unwrap();
    let inner = d
        .gone_node_of_a(find(&ta, &ca, &["main", "old", "inner"]))
        .unwrap();
    let main = find(&tb, &cb, &["main"]);
    let shape = d.over(&tb);
    assert_eq!(shape.parent(old), main);
    assert_eq!(shape.parent(inner), old);

    // Widths: main is B's 100 µs plus old's 40 µs from A; old sits beside alpha and beta.
    let blocks = layout(&shape, ROOT, Metric::Total, 140, 6);
    let at = |n: u32| blocks.iter().find(|b| b.node == n).copied().unwrap();
    assert_eq!(at(main).w, 140);
    assert_eq!(at(old).w, 40);
    assert_eq!(at(inner).w, 20);
    assert_eq!(at(inner).x, at(old).x);
    // B's own figures stay B's: alpha 50 + beta 20 (+ old 40 of A) tile main's 140 columns.
    let alpha = find(&tb, &cb, &["main", "alpha"]);
    assert_eq!(at(alpha).w, 50);

    let mut st = FlameState {
        selected: main,
        ..FlameState::default()
    };
    let buf = render(&cb, &tb, &d, &st, 140, 8);
    let s = text(&buf);
    let head = row(&buf, 0);
    assert!(head.contains("B total 100.0 µs"), "{head}");
    assert!(
        head.contains("1 path gone in B (−40.00 µs) drawn ╱ at A's width"),
        "{head}"
    );
    // Row 2 (the children of main): `old` hatched, its label struck through.
    let y = 3;
    let ob = at(old);
    assert_eq!(buf[(ob.x + 10, y)].symbol(), "╱", "{s}");
    let lx = (ob.x + 1..ob.x + ob.w)
        .find(|&x| buf[(x, y)].symbol() == "o")
        .expect("old's label");
    assert!(row(&buf, y).contains("old"), "{s}");
    assert!(buf[(lx, y)].modifier.contains(Modifier::CROSSED_OUT));
    // B's own nodes are not hatched.
    assert_ne!(buf[(at(alpha).x + 10, y)].symbol(), "╱");

    // The arrow keys reach it: down to the widest child (alpha), then across to old.
    st.on_action(Action::Down, &shape);
    assert_eq!(st.selected, alpha);
    // Widest first: alpha (50), old (40 in A), beta (20).
    st.on_action(Action::NextSlice, &shape);
    assert_eq!(st.selected, old);
    st.on_action(Action::NextSlice, &shape);
    assert_eq!(st.selected, find(&tb, &cb, &["main", "beta"]));
    st.on_action(Action::PrevSlice, &shape);
    assert_eq!(st.selected, old);
    st.on_action(Action::Down, &shape);
    assert_eq!(st.selected, inner);
    st.on_action(Action::Up, &shape);
    let buf = render(&cb, &tb, &d, &st, 140, 8);
    let foot = row(&buf, 7);
    assert!(foot.contains("old · gone in B"), "{foot}");
    assert!(foot.contains("total A 40.00 µs → B 0"), "{foot}");
    assert!(foot.contains("A: total 40.00 µs · self 20.00 µs"), "{foot}");
    // Selection shows in reverse video on the hatched node.
    assert!(buf[(ob.x + 10, 3)].modifier.contains(Modifier::REVERSED));

    // Zoom into the gone node: its subtree at A's widths fills the view.
    st.on_action(Action::ZoomIn, &shape);
    let buf = render(&cb, &tb, &d, &st, 140, 8);
    assert!(row(&buf, 0).contains("zoom: old"), "{}", row(&buf, 0));
    assert_eq!(buf[(70, 1)].symbol(), "╱");
    assert_eq!(buf[(30, 2)].symbol(), "╱", "inner is the left half of old");
    assert_eq!(buf[(100, 2)].symbol(), " ");
    st.on_action(Action::ZoomOut, &shape);
    assert_eq!(st.focus, main);
}

#[test]
fn a_capture_against_itself_draws_nothing_gone() {
    let (ca, _) = pair();
    let t = build(&ca, &Scope::all(), None);
    let d = TreeDiff::new(t.clone(), &ca.strings, &t, &ca.strings, (0, 0));
    assert_eq!(d.gone_count(), 0);
    let st = FlameState::default();
    let buf = render(&ca, &t, &d, &st, 100, 6);
    let s = text(&buf);
    assert!(!s.contains('╱'), "{s}");
    assert!(
        row(&buf, 0).contains("B total 100.0 µs · 4 nodes · diff vs A: Δ +0"),
        "{s}"
    );
}
