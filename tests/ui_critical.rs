//! The explorer's critical path (`W`) on the H200 capture: one row per path event in path order,
//! the "bounds" sentence as legend; `Enter` makes the path the dimmed hit list and `n` walks it.
//! And the optimizable view (`o`), empty on this capture, says why and gives the path's answer.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use tracetui::ui::app::{App, Msg};
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::views::critical::{path_at, path_events};
use tracetui::ui::views::table::TableView;

mod common;
use common::key;

const H200: &str = "tests/fixtures/torch_gpu/worker0.1795774111709892780.pt.trace.json.gz";

fn open(path: &str) -> App {
    common::open_file(path, (140, 40))
}

fn table(app: &App) -> &TableView {
    common::top_table(app)
}

#[test]
fn w_lists_the_path_and_enter_walks_it_dimmed() {
    let mut app = open(H200);
    let l = app.loaded().unwrap().clone();
    let p = path_at(&l.cap, &l.steps, app.cursor_time()).expect("a path");
    let events = path_events(&l.cap, &p);
    assert!(events.len() > 100, "{}", events.len());
    // The hits: the distinct events of the rows, in path order (gap rows around no slice and
    // repeated frames add none).
    let mut want: Vec<u32> = Vec::new();
    for e in &events {
        if e.0 != tracetui::model::NO_SLICE && !want.contains(&e.0) {
            want.push(e.0);
        }
    }
    app.update(key('W'));
    assert_eq!(app.top(), ViewKind::Table);
    let t = table(&app);
    assert!(t.title.starts_with("critical path · step "), "{}", t.title);
    assert!(t.legend.starts_with("host-bound: "), "{}", t.legend);
    assert_eq!(t.rows.len(), events.len());
    assert_eq!(t.rows[0].cells[1], "1");
    assert_eq!(
        t.columns[0].name, "name",
        "the name leads and takes the spare width"
    );
    // Enter on the first row that is not a gap jumps to its event.
    let first = events
        .iter()
        .position(|e| e.2 != "gap")
        .expect("an event row");
    for _ in 0..first {
        app.update(Msg::Key(KeyEvent::from(KeyCode::Down)));
    }
    app.update(Msg::Key(KeyEvent::from(KeyCode::Enter)));
    assert_eq!(app.top(), ViewKind::Timeline);
    let at = want
        .iter()
        .position(|&x| x == events[first].0)
        .expect("in hits");
    assert_eq!(app.selected, Some(want[at]));
    let h = app.hits.as_ref().expect("hits");
    assert!(h.dim && h.ordered);
    assert_eq!(h.ids, want);
    for &id in want.iter().skip(at + 1).take(3) {
        app.update(key('n'));
        assert_eq!(app.selected, Some(id));
    }
}

/// A gap row's start is the gap's own (issue 52 §6), and `Enter` on it shows the gap.
#[test]
fn w_gap_rows_start_at_the_gap() {
    let mut app = open(H200);
    let l = app.loaded().unwrap().clone();
    let p = path_at(&l.cap, &l.steps, app.cursor_time()).expect("a path");
    let rows = p.rows(&l.cap);
    let k = rows
        .iter()
        .position(|r| r.is_gap() && r.event != tracetui::model::NO_SLICE)
        .expect("a gap in a frame");
    let g = &rows[k];
    assert!(p.step.start <= g.start && g.end <= p.step.end);
    app.update(key('W'));
    let z = l.cap.time_zero();
    let t = table(&app);
    assert_eq!(t.rows[k].cells[4], "gap");
    assert_eq!(
        t.rows[k].cells[6],
        tracetui::ui::ruler::format_dur(g.start - z)
    );
    for _ in 0..k {
        app.update(Msg::Key(KeyEvent::from(KeyCode::Down)));
    }
    app.update(Msg::Key(KeyEvent::from(KeyCode::Enter)));
    assert_eq!(app.top(), ViewKind::Timeline);
    let (a, b) = (app.vp.t0, app.vp.t1);
    assert!(
        a <= g.start && g.end <= b && b - a <= 4 * (g.end - g.start),
        "[{a}, {b})"
    );
}

#[test]
fn empty_optimizable_view_says_why_and_offers_the_path() {
    let mut app = open(H200);
    app.update(key('o'));
    let t = table(&app);
    assert!(t.rows.is_empty());
    assert!(t.legend.starts_with("0 candidates: "), "{}", t.legend);
    assert!(t.note.contains("critical path of step"), "{}", t.note);
    assert!(t.note.contains("W: show the path"), "{}", t.note);
}
