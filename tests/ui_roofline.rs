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
    assert_eq!(app.top(), ViewKind::Roofline);
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

/// The bf16 CUDA-graph capture (tests/fixtures/torch_gpu): bf16 GEMMs and fp32 vector ops.
const BF16: &str = "tests/fixtures/torch_gpu/worker0.1795882105227733644.pt.trace.json.gz";

fn roofline_view(app: &App) -> &RooflineView {
    app.views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<RooflineView>())
        .expect("roofline on top")
}

#[test]
fn every_precision_gets_its_labelled_roof_and_no_point_sits_above_its_own() {
    for size in [(80, 24), (120, 40)] {
        let mut app = common::open_file(BF16, size);
        app.update(key('L'));
        let v = roofline_view(&app);
        let roofs = v.roofs();
        let labels: Vec<&str> = roofs.iter().map(|r| r.label.as_str()).collect();
        assert!(
            labels.contains(&"bf16 matrix") && labels.contains(&"fp32 vector"),
            "{labels:?}"
        );
        // Every point's own roof is drawn, and the point is under it (rows above their peak
        // are flagged instead).
        for r in &v.roof.rows {
            let (Some(x), Some(y), Some(label)) = (r.intensity(), r.tflops(), r.roof_label())
            else {
                continue;
            };
            let roof = roofs
                .iter()
                .find(|f| f.label == label)
                .expect("its roof drawn");
            let at = roof.tflops.min(roof.tbps * x);
            assert!(
                y <= at * 1.000_001 || r.beyond_peak(),
                "{} {}: {y} above {at}",
                r.name,
                r.input_dims
            );
            if r.dtype == "c10::BFloat16" && r.cost.matrix {
                assert_eq!(label, "bf16 matrix");
            }
        }
        let s = screen(&app);
        // Labelled roofs, which roofs the chart shows, and the view's keys.
        assert!(
            s.contains("bf16 matrix 989") && s.contains("fp32 vector 67"),
            "{s}"
        );
        assert!(s.contains("roofs: every precision present"), "{s}");
        assert!(s.contains("j/k") && s.contains("? help"), "{s}");
        insta::assert_snapshot!(format!("roofline_{}x{}", size.0, size.1), s);
    }
}

#[test]
fn m_shows_the_selected_ops_roof_and_question_mark_lists_the_keys() {
    let mut app = common::open_file(BF16, (120, 40));
    app.update(key('L'));
    app.update(key('m'));
    let v = roofline_view(&app);
    assert!(!v.all_roofs);
    let sel = v.roof.rows[v.selected].roof_label().expect("a roof");
    assert_eq!(v.roofs().len(), 1);
    let s = screen(&app);
    assert!(
        s.contains(&format!("roof: the selected op's ({sel})")),
        "{s}"
    );
    app.update(key('m'));
    assert!(roofline_view(&app).all_roofs);
    app.update(key('?'));
    assert_eq!(app.top(), ViewKind::Help);
    let s = screen(&app);
    for k in [
        "next op",
        "roofs: every precision present / the selected op's only",
        "back to the timeline",
    ] {
        assert!(s.contains(k), "{k}: {s}");
    }
    insta::assert_snapshot!("roofline_help_120x40", s);
    // Any key closes the help; back on the chart.
    app.update(key('x'));
    assert_eq!(app.top(), ViewKind::Roofline);
}
