//! The explorer's attention view (`!`, issue 56 §3) on the H200 PyTorch eager capture: the
//! findings ranked with their saving, the selected one's fix and threshold, the load warnings
//! below; the status-line hint on the first screen; `Enter` → the evidence in its step, `n`/`N`
//! through it; the critical-path table's line about the selected row. Fixture:
//! tests/fixtures/torch_gpu (see its PROVENANCE.md).

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Rect;
use tracetui::ui::app::App;
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::msg::View;
use tracetui::ui::views::findings::{AttentionView, marker};

mod common;
use common::{code, key, screen};

const H200: &str = "tests/fixtures/torch_gpu/worker0.1795774111709892780.pt.trace.json.gz";

/// The app on the H200 capture with the findings computed (the loader thread does it in the
/// explorer; `load_sync` leaves them to the caller).
fn open(size: (u16, u16)) -> App {
    let app = common::open_file(H200, size);
    let n = app.loaded().expect("loaded").findings().len();
    assert!(n >= 4, "{n} findings");
    app
}

fn text(buf: &Buffer) -> String {
    let mut s = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            s.push_str(buf[(x, y)].symbol());
        }
        s.push('\n');
    }
    s
}

fn snap(name: &str, app: &App) {
    let text = screen(app);
    // File sizes and paths differ between checkouts only in the path's prefix: mask it.
    let re = regex::Regex::new(r"/\S*tests/fixtures").expect("regex");
    insta::assert_snapshot!(name, re.replace_all(&text, "…/tests/fixtures"));
}

#[test]
fn widget_lists_the_findings_ranked_with_the_selected_ones_fix() {
    let app = open((100, 30));
    let fs = app.loaded().expect("loaded").findings().to_vec();
    let mut buf = Buffer::empty(Rect::new(0, 0, 100, 30));
    let v = AttentionView::default();
    v.draw(&app, &mut buf, Rect::new(0, 0, 100, 30), &mut Vec::new());
    let t = text(&buf);
    assert!(t.contains("attention: ▸findings "), "{t}");
    // One row per finding, in rank order, with its rule and saving in %.
    let mut at = 0;
    for f in &fs {
        let p = t[at..]
            .find(f.rule)
            .unwrap_or_else(|| panic!("{} in\n{t}", f.rule));
        at += p;
    }
    let pct = 100.0 * fs[0].saving as f64 / fs[0].step as f64;
    assert!(t.contains(&format!("{pct:.1} %")), "{t}");
    // The first finding is selected: its fix and threshold are shown.
    assert!(t.contains("try: "), "{t}");
    assert!(t.contains("fired: "), "{t}");
    // The load warnings are the second tab, said on the first.
    assert!(t.contains("⚠ 1 load warning (Tab)"), "{t}");
}

#[test]
fn first_screen_offers_the_view_and_bang_opens_it() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut app = open((w, h));
        assert_eq!(app.top(), ViewKind::Timeline);
        // The hint: the top finding (host-bound, > 90 % of a step) and the key.
        let m = marker(&app).expect("marker");
        assert!(m.starts_with("⚑ ") && m.ends_with("(!)"), "{m}");
        let first = screen(&app);
        assert!(first.contains("(!)"), "{first}");
        app.update(key('!'));
        assert_ne!(app.top(), ViewKind::Timeline);
        snap(&format!("attention_{w}x{h}"), &app);
        // Esc closes it.
        app.update(code(KeyCode::Esc));
        assert_eq!(app.top(), ViewKind::Timeline);
    }
}

#[test]
fn enter_shows_the_evidence_in_its_step_and_n_walks_it() {
    let mut app = open((120, 40));
    let l = app.loaded().expect("loaded").clone();
    let fs = l.findings();
    // The first finding with several events.
    let k = fs
        .iter()
        .position(|f| f.event_ids.len() >= 3)
        .expect("a finding with events");
    let f = &fs[k];
    app.update(key('!'));
    for _ in 0..k {
        app.update(key('j'));
    }
    app.update(code(KeyCode::Enter));
    assert_eq!(app.top(), ViewKind::Timeline);
    let first = f.event_ids[0];
    assert_eq!(app.selected, Some(first));
    let h = app.hits.as_ref().expect("hits");
    assert!(
        h.dim && h.ordered,
        "evidence dimmed, in the finding's order"
    );
    assert_eq!(h.ids, f.event_ids);
    // The window is the step the first event starts in.
    let t = l.cap.slices.start[first as usize];
    let s = l
        .steps
        .steps
        .iter()
        .find(|s| s.start <= t && t < s.end)
        .expect("a step");
    assert_eq!((app.vp.t0, app.vp.t1), (s.start, s.end));
    // n / N through the evidence.
    app.update(key('n'));
    assert_eq!(app.selected, Some(f.event_ids[1]));
    app.update(key('n'));
    assert_eq!(app.selected, Some(f.event_ids[2]));
    app.update(key('N'));
    assert_eq!(app.selected, Some(f.event_ids[1]));
}

#[test]
fn critical_path_table_says_which_finding_concerns_the_row() {
    let mut app = open((140, 40));
    app.update(key('W'));
    assert_eq!(app.top(), ViewKind::Table);
    // The first row of the path is host work of a host-bound step.
    let s = screen(&app);
    let line = s
        .lines()
        .find(|l| l.contains("(up to"))
        .unwrap_or_else(|| panic!("no finding line in\n{s}"));
    assert!(line.contains("⚑ ") && line.contains("! for all"), "{line}");
}
