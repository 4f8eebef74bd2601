//! The roofline chart (`L`) on the real H200 capture (tests/fixtures/torch_gpu): one point per
//! modelled op under the H200's roof, the list sorted as `tracetui roofline`, `j` selecting the
//! next op and `Enter` making its kernels the hits and jumping to the first.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use tracetui::analysis::roofline;
use tracetui::model::Category;
use tracetui::ui::app::{App, Msg};
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::views::roofline::RooflineView;
use tracetui::ui::views::table::TableView;

mod common;
use common::{key, screen};

fn open(path: &str) -> App {
    common::open_file(path, (140, 40))
}

#[test]
fn roofline_chart_selects_ops_and_jumps_to_their_kernels() {
    let mut app = open("tests/fixtures/torch_gpu/worker0.1795774111709892780.pt.trace.json.gz");
    app.update(key('L'));
    assert_eq!(app.top(), ViewKind::Table);
    let v = app
        .views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<RooflineView>())
        .expect("roofline on top");
    let l = app.loaded().unwrap().clone();
    let want = roofline::compute(&l.cap);
    let names: Vec<&str> = v.roof.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        want.rows
            .iter()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
    );
    let s = screen(&app);
    assert!(s.contains("roofline · NVIDIA H200"), "{s}");
    assert!(s.contains("◆") && s.contains("•"), "{s}");
    assert!(s.contains("not modelled"), "{s}");
    // The selected op's details head the list.
    let first = &want.rows[0];
    assert!(s.contains(&first.name[..20]), "{s}");
    app.update(key('j'));
    let v = app
        .views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<RooflineView>())
        .unwrap();
    assert_eq!(v.selected, 1);
    let row = v.roof.rows[1].clone();
    app.update(Msg::Key(KeyEvent::from(KeyCode::Enter)));
    assert_eq!(app.top(), ViewKind::Timeline);
    let sel = app.selected.expect("jumped");
    assert_eq!(l.cap.slices.kind(sel as usize), Category::Kernel);
    // Its kernels are the ones that make the row's device time.
    let mut calls = row.slices.clone();
    calls.sort_unstable();
    let ks = roofline::attribute::activities_of(&l.cap, &calls);
    let sum: i64 = ks.iter().map(|&k| l.cap.slices.dur[k as usize]).sum();
    assert_eq!(sum, row.device_ps);
    assert!(ks.contains(&sel));
}

#[test]
fn statistics_table_toggles_the_achieved_columns() {
    let mut app = open("tests/fixtures/torch_gpu/worker0.1795774111709892780.pt.trace.json.gz");
    app.update(key('t'));
    let cols = |app: &App| -> Vec<String> {
        let t = app
            .views()
            .last()
            .and_then(|v| v.as_any().downcast_ref::<TableView>())
            .expect("table");
        t.columns.iter().map(|c| c.name.to_string()).collect()
    };
    assert!(!cols(&app).contains(&"TFLOP/s".to_string()));
    app.update(key('A'));
    let c = cols(&app);
    let at = c
        .iter()
        .position(|x| x == "TFLOP/s")
        .expect("achieved columns");
    assert_eq!(&c[at..at + 3], ["TFLOP/s", "TB/s", "% peak"]);
    // aten::mm: Σ FLOPs over Σ device time of all its roofline rows.
    let l = app.loaded().unwrap().clone();
    let roof = roofline::compute(&l.cap);
    let mm: Vec<_> = roof.rows.iter().filter(|r| r.name == "aten::mm").collect();
    let flops: f64 = mm.iter().map(|r| r.cost.flops * r.count as f64).sum();
    let ps: i64 = mm.iter().map(|r| r.device_ps).sum();
    let want = format!("{:.2}", flops / (ps as f64 * 1e-12) / 1e12);
    let t = app
        .views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<TableView>())
        .unwrap();
    let row = t
        .rows
        .iter()
        .find(|r| r.cells[0] == "aten::mm")
        .expect("mm row");
    assert_eq!(row.cells[at], want);
    // A name without a model shows no figure.
    let other = t
        .rows
        .iter()
        .find(|r| r.cells[0] == "aten::view")
        .expect("view row");
    assert_eq!(other.cells[at], "-");
    assert!(screen(&app).contains("achieved"));
    app.update(key('A'));
    assert!(!cols(&app).contains(&"TFLOP/s".to_string()));
}
