//! The flame view widget (`ui::views::flame`) drawn into a `Buffer`: the icicle layout tiles
//! each parent, labels and selection follow the timeline's rules, and insta snapshots of the
//! icicle, the table and the sandwich at 80×24 and 160×48 on a real torch capture.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use std::path::Path;
use tracetui::analysis::flame::{DeviceLinks, FlameTree, Metric, ROOT, Scope, build, sandwich};
use tracetui::formats::{self, Progress};
use tracetui::model::{
    ArgsRef, Capture, CaptureBuilder, Format, Key, SourceInfo, StrId, TrackKind,
};
use tracetui::ui::views::flame::{
    FlameMode, FlameState, FlameWidget, SortCol, layout, ordered_children,
};

fn torch_capture() -> Capture {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cli/worker0.1795311589169457977.pt.trace.json.gz");
    formats::load(&p, SourceInfo::default(), &Progress::default()).expect("fixture loads")
}

/// main [0,100) ⊃ {a [0,60) ⊃ x [0,10), b [60,90)} and a second root `c\x1b[31m` [100,110).
fn small() -> Capture {
    let mut b = CaptureBuilder::new();
    let p = b.process(Key::Int(1));
    let t = b.track(p, Key::Int(1), TrackKind::Thread);
    for (name, s, d) in [
        ("main", 0, 100),
        ("alpha", 0, 60),
        ("x", 0, 10),
        ("beta", 60, 30),
        ("c\x1b[31m", 100, 10),
    ] {
        let n = b.intern(name);
        b.add_slice(t, s * 1000, d * 1000, n, StrId::EMPTY, ArgsRef::NONE, 0);
    }
    b.finish(SourceInfo::default(), Format::Chrome)
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

fn render(c: &Capture, t: &FlameTree, st: &FlameState, w: u16, h: u16) -> Buffer {
    let sw = (st.mode == FlameMode::Sandwich).then(|| sandwich(t, t.name(st.selected)));
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    FlameWidget {
        tree: t,
        strings: &c.strings,
        state: st,
        sandwich: sw.as_ref(),
        scope: "whole capture",
        diff: None,
    }
    .draw(&mut buf, area);
    buf
}

#[test]
fn layout_tiles_parents_and_orders_widest_first() {
    let c = small();
    let t = build(&c, &Scope::all(), None);
    let bl = layout(&t, ROOT, Metric::Total, 110, 10);
    // Root full width; children tile it: main 100 cols, c 10 cols.
    assert_eq!(bl[0].w, 110);
    let kids: Vec<_> = bl.iter().filter(|b| b.row == 1).collect();
    assert_eq!(kids.iter().map(|b| b.w).sum::<u16>(), 110);
    let main = ordered_children(&t, ROOT, Metric::Total)[0];
    assert_eq!(t.name_str(main, &c.strings), "main");
    // main's children: alpha (60) left of beta (30); 10 columns of main's self time stay empty.
    let row2: Vec<_> = bl
        .iter()
        .filter(|b| b.row == 2)
        .map(|b| (b.x, b.w))
        .collect();
    assert!(
        row2.contains(&(0, 60)) && row2.contains(&(60, 30)),
        "{row2:?}"
    );
    // Too narrow to be laid out: nothing.
    assert!(layout(&t, ROOT, Metric::Total, 0, 10).is_empty());
}

#[test]
fn labels_selection_and_search_follow_the_timeline_rules() {
    let c = small();
    let t = build(&c, &Scope::all(), None);
    let mut st = FlameState::default();
    st.down(&t);
    assert_eq!(t.name_str(st.selected, &c.strings), "main");
    let buf = render(&c, &t, &st, 110, 8);
    let s = text(&buf);
    assert!(s.contains("main"), "{s}");
    assert!(s.contains("alpha") && s.contains("beta"));
    // The control character never reaches the buffer.
    assert!(!s.contains('\u{1b}'));
    // Selected node: reverse video (NO_COLOR theme labels are reversed, selection toggles).
    let y = 2;
    let cell = &buf[(5, y)];
    assert!(
        cell.modifier.contains(Modifier::REVERSED) || cell.modifier.contains(Modifier::BOLD),
        "{:?}",
        cell.modifier
    );
    // Search: hits bold+underlined, others dimmed.
    st.search = "BETA".into();
    let buf = render(&c, &t, &st, 110, 8);
    assert!(buf[(70, 3)].modifier.contains(Modifier::UNDERLINED));
    assert!(buf[(20, 3)].modifier.contains(Modifier::DIM));
    // Footer shows the selected node's figures.
    let s = text(&buf);
    assert!(s.contains("total 100.0 ns"), "{s}");
}

#[test]
fn navigation_zoom_and_metric() {
    let c = small();
    let t = build(&c, &Scope::all(), None);
    let mut st = FlameState::default();
    st.down(&t); // main
    st.down(&t); // alpha
    assert_eq!(t.name_str(st.selected, &c.strings), "alpha");
    st.sideways(&t, 1);
    assert_eq!(t.name_str(st.selected, &c.strings), "beta");
    st.sideways(&t, 1);
    assert_eq!(t.name_str(st.selected, &c.strings), "beta");
    st.zoom_in();
    assert_eq!(st.focus, st.selected);
    st.up(&t); // cannot leave the zoomed node
    assert_eq!(t.name_str(st.selected, &c.strings), "beta");
    let s = text(&render(&c, &t, &st, 80, 6));
    assert!(s.contains("zoom: beta"), "{s}");
    st.zoom_out(&t);
    assert_eq!(t.name_str(st.focus, &c.strings), "main");
    st.zoom_out(&t);
    assert_eq!(st.focus, ROOT);
    st.up(&t);
    assert_eq!(t.name_str(st.selected, &c.strings), "main");
    st.cycle_metric();
    assert_eq!(st.metric, Metric::SelfTime);
    // Self-time widths sum over the subtree: main (10 own + 60 + 30) is still 100 wide.
    assert_eq!(t.width(st.selected, Metric::SelfTime), 100_000);
    st.refresh_table(&t, &c.strings);
    let names: Vec<&str> = st
        .table
        .iter()
        .map(|&n| t.name_str(n, &c.strings))
        .collect();
    assert_eq!(names, vec!["main", "alpha", "x", "beta", "c\u{1b}[31m"]);
    st.sort = SortCol::Name;
    st.refresh_table(&t, &c.strings);
    let names: Vec<&str> = st
        .table
        .iter()
        .map(|&n| t.name_str(n, &c.strings))
        .collect();
    assert_eq!(names[0], "c\u{1b}[31m");
}

fn select_path(t: &FlameTree, c: &Capture, st: &mut FlameState, names: &[&str]) {
    let ids: Vec<StrId> = names
        .iter()
        .map(|n| c.strings.lookup(n).expect("name in capture"))
        .collect();
    st.selected = t.find_path(&ids).expect("path in tree");
}

#[test]
fn snapshots_of_a_torch_capture() {
    let c = torch_capture();
    let links = DeviceLinks::of(&c);
    let t = build(&c, &Scope::all(), Some(&links));
    let mut st = FlameState::default();
    insta::assert_snapshot!("flame_icicle_80x24", text(&render(&c, &t, &st, 80, 24)));
    select_path(&t, &c, &mut st, &["gen_torch.py(43): <module>"]);
    st.down(&t);
    st.zoom_in();
    st.down(&t);
    st.search = "aten::".into();
    insta::assert_snapshot!(
        "flame_zoom_search_160x48",
        text(&render(&c, &t, &st, 160, 48))
    );
    st.mode = FlameMode::Table;
    st.search.clear();
    st.focus = ROOT;
    st.refresh_table(&t, &c.strings);
    insta::assert_snapshot!("flame_table_80x24", text(&render(&c, &t, &st, 80, 24)));
    st.mode = FlameMode::Sandwich;
    let addmm = t.nodes_named(c.strings.lookup("aten::addmm").expect("aten::addmm"));
    st.selected = addmm[0];
    insta::assert_snapshot!("flame_sandwich_160x48", text(&render(&c, &t, &st, 160, 48)));
}
