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
    let want: Vec<u32> = path_events(&p).iter().map(|e| e.0).collect();
    assert!(want.len() > 100, "{}", want.len());
    app.update(key('W'));
    assert_eq!(app.top(), ViewKind::Table);
    let t = table(&app);
    assert!(t.title.starts_with("critical path · step "), "{}", t.title);
    assert!(t.legend.starts_with("host-bound: "), "{}", t.legend);
    assert_eq!(t.rows.len(), want.len());
    assert_eq!(t.rows[0].cells[1], "1");
    assert_eq!(
        t.columns[0].name, "name",
        "the name leads and takes the spare width"
    );
    app.update(Msg::Key(KeyEvent::from(KeyCode::Enter)));
    assert_eq!(app.top(), ViewKind::Timeline);
    assert_eq!(app.selected, Some(want[0]));
    let h = app.hits.as_ref().expect("hits");
    assert!(h.dim && h.ordered);
    assert_eq!(h.ids.len(), want.len());
    for &id in want.iter().skip(1).take(3) {
        app.update(key('n'));
        assert_eq!(app.selected, Some(id));
    }
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
