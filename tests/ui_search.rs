//! The search prompt in the explorer: typing ranks every name of the capture, Enter jumps to the
//! first occurrence, `n` / `N` step through all occurrences in time order, regex errors show
//! inline, the history recalls earlier queries.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::sync::Arc;
use tracetui::ui::app::{App, Cmd, Msg};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::loader::{self, LoadDone};
use tracetui::ui::views::search::SearchView;

mod common;
use common::{code, key, screen};

fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        app.update(key(c));
    }
}

fn open(path: &str, w: u16, h: u16) -> App {
    let p = std::path::Path::new(path);
    let cap = CaptureRef::from_file(p, p.parent().unwrap());
    let (mut app, cmds) = App::new(vec![cap], (w, h), ColorMode::None);
    for c in cmds {
        if let Cmd::Load {
            generation,
            entry,
            capture,
            progress,
        } = c
        {
            let result = loader::load_sync(&capture, &progress).map(Arc::new);
            app.update(Msg::Load(LoadDone::finished(generation, entry, result)));
        }
    }
    assert!(app.loaded().is_some());
    app
}

fn search_view(app: &App) -> &SearchView {
    app.views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<SearchView>())
        .expect("search view on top")
}

const ALEXNET: &str = "tests/fixtures/ui/alexnet.pt.trace.json.gz";

#[test]
fn typing_ranks_names_and_enter_jumps_then_n_steps_in_time_order() {
    let mut app = open(ALEXNET, 140, 40);
    app.update(key('/'));
    assert_eq!(app.top(), ViewKind::Search);
    typed(&mut app, "aten::conv2d");
    let v = search_view(&app);
    let res = v.results.as_ref().unwrap();
    let l = app.loaded().unwrap().clone();
    let first = res.hits[0];
    assert_eq!(l.cap.strings.get(first.name), "aten::conv2d");
    // Exact count against a brute-force scan.
    let n = (0..l.cap.slices.len() as u32)
        .filter(|&i| l.cap.slice_name(i) == "aten::conv2d")
        .count() as u64;
    assert_eq!(first.count, n);
    assert!(n >= 2, "fixture has several convolutions");
    let s = screen(&app);
    assert!(s.contains("/ aten::conv2d"), "{s}");
    assert!(s.contains("names match"), "{s}");
    app.update(code(KeyCode::Enter));
    assert_eq!(app.top(), ViewKind::Timeline);
    let sel = app.selected.expect("selected");
    assert_eq!(l.cap.slice_name(sel), "aten::conv2d");
    // The first occurrence in time.
    let s0 = &l.cap.slices;
    let mut occ: Vec<u32> = (0..s0.len() as u32)
        .filter(|&i| l.cap.slice_name(i) == "aten::conv2d")
        .collect();
    occ.sort_by_key(|&i| (s0.start[i as usize], i));
    assert_eq!(sel, occ[0]);
    let i = sel as usize;
    assert!(
        s0.start[i] >= app.vp.t0 && s0.end(i) <= app.vp.t1,
        "visible"
    );
    assert!(screen(&app).contains(&format!("1/{n}")));
    // n walks every occurrence in time order; N walks back.
    for want in &occ[1..] {
        app.update(key('n'));
        assert_eq!(app.selected, Some(*want));
    }
    app.update(key('n'));
    assert_eq!(
        app.selected,
        Some(*occ.last().unwrap()),
        "stays at the last"
    );
    app.update(key('N'));
    assert_eq!(app.selected, Some(occ[occ.len() - 2]));
    assert!(screen(&app).contains(&format!("{}/{n}", occ.len() - 1)));
}

#[test]
fn regex_errors_show_inline_and_keep_the_last_results() {
    let mut app = open(ALEXNET, 140, 40);
    app.update(key('/'));
    app.update(ctrl('r'));
    typed(&mut app, "^aten::(relu");
    let v = search_view(&app);
    assert!(
        v.error.as_deref().unwrap_or("").contains("regex"),
        "{:?}",
        v.error
    );
    let kept = v.results.as_ref().unwrap().hits.len();
    assert!(kept > 0, "last good results kept");
    let s = screen(&app);
    assert!(s.contains("error:"), "{s}");
    typed(&mut app, ")");
    let v = search_view(&app);
    assert!(v.error.is_none());
    let l = app.loaded().unwrap().clone();
    for h in &v.results.as_ref().unwrap().hits {
        assert!(l.cap.strings.get(h.name).starts_with("aten::relu"));
    }
}

#[test]
fn editing_keys_and_history() {
    let mut app = open(ALEXNET, 140, 40);
    app.update(key('/'));
    typed(&mut app, "cat:kernel gemm");
    app.update(ctrl('w'));
    assert_eq!(search_view(&app).input, "cat:kernel ");
    app.update(code(KeyCode::Home));
    app.update(key('x'));
    assert_eq!(search_view(&app).input, "xcat:kernel ");
    app.update(ctrl('u'));
    assert_eq!(
        search_view(&app).input,
        "cat:kernel ",
        "Ctrl-U deletes before the cursor"
    );
    app.update(code(KeyCode::End));
    app.update(ctrl('u'));
    assert_eq!(search_view(&app).input, "");
    typed(&mut app, "relu");
    app.update(code(KeyCode::Enter));
    // Reopen: ↑ in the empty prompt recalls the last query.
    app.update(key('/'));
    app.update(code(KeyCode::Up));
    assert_eq!(search_view(&app).input, "relu");
    app.update(code(KeyCode::Esc));
    assert_eq!(app.top(), ViewKind::Timeline);
}

#[test]
fn prompt_with_results_snapshot() {
    let mut app = open(ALEXNET, 120, 30);
    app.update(key('/'));
    typed(&mut app, "relu");
    insta::assert_snapshot!("search_prompt_relu_120x30", screen(&app));
}
