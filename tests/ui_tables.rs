//! Table views on a real capture: the statistics table (`t`) matches `analysis::stats`, sorts,
//! filters, is scoped to a marked range, and `Enter` makes the row's name the hits.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use std::sync::Arc;
use tracetui::analysis::stats::{StatsOptions, compute};
use tracetui::model::Category;
use tracetui::ui::app::{App, Cmd, Msg};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::loader::{self, LoadDone};
use tracetui::ui::views::table::{Key, TableView};

mod common;
use common::{key, screen};

fn open(path: &str) -> App {
    let p = std::path::Path::new(path);
    let cap = CaptureRef::from_file(p, p.parent().unwrap());
    let (mut app, cmds) = App::new(vec![cap], (140, 40), ColorMode::None);
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
    app
}

fn table(app: &App) -> &TableView {
    app.views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<TableView>())
        .expect("table on top")
}

#[test]
fn stats_table_matches_the_analysis_sorts_filters_and_jumps() {
    let mut app = open("tests/fixtures/ui/alexnet.pt.trace.json.gz");
    app.update(key('t'));
    assert_eq!(app.top(), ViewKind::Table);
    let l = app.loaded().unwrap().clone();
    let want = compute(&l.cap, &StatsOptions::default());
    let t = table(&app);
    assert_eq!(t.rows.len(), want.rows.len());
    // Sorted by self time, largest first.
    let selfs: Vec<f64> = t
        .order
        .iter()
        .map(|&i| match t.rows[i].keys[3] {
            Key::Num(x) => x,
            _ => f64::NAN,
        })
        .collect();
    assert!(selfs.windows(2).all(|w| w[0] >= w[1]));
    // `s` moves the sort to the next column (avg), `S` reverses it.
    app.update(key('s'));
    assert_eq!(table(&app).sort, Some((4, false)));
    app.update(key('S'));
    assert_eq!(table(&app).sort, Some((4, true)));
    // Filter to conv2d rows.
    app.update(key('/'));
    for c in "conv2d".chars() {
        app.update(key(c));
    }
    app.update(Msg::Key(KeyEvent::from(KeyCode::Enter)));
    let t = table(&app);
    assert!(!t.order.is_empty());
    // Fuzzy: every name containing it is kept, most others are not.
    let literal = t
        .rows
        .iter()
        .filter(|r| r.cells[0].contains("conv2d"))
        .count();
    let kept = t
        .order
        .iter()
        .filter(|&&i| t.rows[i].cells[0].contains("conv2d"))
        .count();
    assert_eq!(kept, literal);
    assert!(
        t.order.len() < t.rows.len() / 2,
        "{} of {}",
        t.order.len(),
        t.rows.len()
    );
    let first = t.rows[t.order[0]].cells[0].clone();
    app.update(Msg::Key(KeyEvent::from(KeyCode::Enter)));
    assert_eq!(app.top(), ViewKind::Timeline);
    let sel = app.selected.expect("jumped");
    assert_eq!(l.cap.slice_name(sel), first);
    let hits = app.hits.as_ref().expect("hits set");
    let n = (0..l.cap.slices.len() as u32)
        .filter(|&i| l.cap.slice_name(i) == first)
        .count();
    assert_eq!(hits.ids.len(), n);
}

#[test]
fn stats_table_is_scoped_to_the_marked_range() {
    let mut app = open("tests/fixtures/ui/alexnet.pt.trace.json.gz");
    let l = app.loaded().unwrap().clone();
    let (a, b) = l.cap.span;
    let mid = a + (b - a) / 2;
    app.state_mut().mark = tracetui::ui::app::Mark::Range(a, mid, Default::default());
    app.update(key('t'));
    let t = table(&app);
    assert!(t.title.contains("range"), "{}", t.title);
    let total = common::column_sum(t, 1);
    // Every event starting inside, but the profiler's own span (left out by default, issue 22)
    // and with the instant events (counted, no duration).
    let c = &l.cap;
    let profiler = |t: u32| tracetui::analysis::stats::is_profiler_track(c, t);
    let starting_inside = (0..c.slices.len())
        .filter(|&i| c.slices.start[i] >= a && c.slices.start[i] < mid)
        .filter(|&i| !profiler(c.track_of(i as u32)) && c.slices.kind(i) != Category::Trace)
        .count()
        + (0..c.instants.ts.len())
            .filter(|&i| c.instants.ts[i] >= a && c.instants.ts[i] < mid)
            .filter(|&i| !profiler(c.instants.track[i]))
            .count();
    assert_eq!(total as usize, starting_inside);
}

#[test]
fn rank_view_lists_the_ranking_and_n_walks_it_in_rank_order() {
    let mut app = open("tests/fixtures/ui/alexnet.pt.trace.json.gz");
    app.update(key('o'));
    assert_eq!(app.top(), ViewKind::Table);
    let l = app.loaded().unwrap().clone();
    let r = l.ranking();
    let want: Vec<u32> = r.ranked().map(|(id, _, _)| id).collect();
    assert!(!want.is_empty(), "alexnet has GPU kernels to rank");
    let t = table(&app);
    assert_eq!(t.rows.len(), want.len());
    assert!(t.title.contains("kernels"), "{}", t.title);
    // Enter on the first row: jump to the best event; n walks the ranking in rank order.
    app.update(Msg::Key(KeyEvent::from(KeyCode::Enter)));
    assert_eq!(app.selected, Some(want[0]));
    for &id in want.iter().skip(1).take(3) {
        app.update(key('n'));
        assert_eq!(app.selected, Some(id));
    }
    app.update(key('N'));
    assert_eq!(app.selected, Some(want[want.len().min(4) - 2]));
}

#[test]
fn gpu_view_has_one_row_per_stream_and_enter_goes_to_it() {
    let mut app = open("tests/fixtures/ui/alexnet.pt.trace.json.gz");
    app.update(key('b'));
    assert_eq!(app.top(), ViewKind::Table);
    let l = app.loaded().unwrap().clone();
    let rep = tracetui::analysis::gpu::analyze(&l.cap, &Default::default());
    let t = table(&app);
    assert_eq!(t.rows.len(), rep.streams.len());
    assert!(!t.rows.is_empty(), "alexnet ran kernels");
    let track = rep.streams[0].info.track;
    app.update(Msg::Key(KeyEvent::from(KeyCode::Enter)));
    assert_eq!(app.top(), ViewKind::Timeline);
    let row = app.rows.list[app.rows.cursor];
    assert_eq!(row.track(), Some(track));
}

#[test]
fn gpu_queue_depth_is_a_row_under_the_device() {
    let app = open("tests/fixtures/ui/alexnet.pt.trace.json.gz");
    let l = app.loaded().unwrap().clone();
    assert!(!l.derived.is_empty(), "alexnet links launches to kernels");
    let d = &l.derived[0];
    assert!(d.max >= 1.0);
    assert!(!d.marks.is_empty(), "the GPU idles somewhere");
    let pos = app
        .rows
        .iter()
        .position(|r| *r == tracetui::ui::app::Row::Derived(0))
        .expect("derived row");
    // Right under its process header.
    assert_eq!(
        app.rows.list[pos - 1],
        tracetui::ui::app::Row::Process(d.process)
    );
}

#[test]
fn stats_table_groups_and_filters_by_category_track_and_process() {
    use tracetui::analysis::stats::GroupBy;
    let mut app = open("tests/fixtures/ui/alexnet.pt.trace.json.gz");
    let l = app.loaded().unwrap().clone();
    app.update(key('t'));
    let counts = |t: &TableView| -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = t
            .rows
            .iter()
            .map(|r| (r.cells[0].clone(), r.cells[1].parse().unwrap()))
            .collect();
        v.sort();
        v
    };
    let want = |opts: StatsOptions| -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = compute(&l.cap, &opts)
            .rows
            .into_iter()
            .map(|r| (r.name, r.count))
            .collect();
        v.sort();
        v
    };
    // `v`: by category, sort kept.
    app.update(key('v'));
    let t = table(&app);
    assert_eq!(t.columns[0].name, "category");
    assert_eq!(t.sort, Some((3, false)));
    let by_cat = StatsOptions {
        group: GroupBy::Category,
        ..Default::default()
    };
    assert_eq!(counts(t), want(by_cat.clone()));
    assert!(t.title.contains("categories"), "{}", t.title);
    insta::assert_snapshot!("stats_by_category_140x40", screen(&app));
    // `c`: only the first category of the capture.
    // `c` (issue 22): the category with the most events first — never an empty table.
    app.update(key('c'));
    let cats = tracetui::analysis::stats::categories(&l.cap);
    let first = cats[0].0.clone();
    let t = table(&app);
    assert!(!t.rows.is_empty());
    assert!(
        t.title.contains(&format!("category {first}")),
        "{}",
        t.title
    );
    assert_eq!(
        counts(t),
        want(StatsOptions {
            cats: Some(vec![first]),
            ..by_cat.clone()
        })
    );
    // Cycling past the last category goes back to all.
    for _ in 0..cats.len() {
        app.update(key('c'));
    }
    assert_eq!(counts(table(&app)), want(by_cat.clone()));
    // `P`: the cursor's process (or the first); `T`: a track of it.
    app.update(key('P'));
    let t = table(&app);
    assert!(t.title.contains("process"), "{}", t.title);
    let p = l.cap.tracks[app.rows.cursor_lane().map_or(0, |c| c.0) as usize].process;
    let got: u64 = counts(t).iter().map(|r| r.1).sum();
    let n = (0..l.cap.tracks.len())
        .filter(|&k| l.cap.tracks[k].process == p)
        .map(|k| (l.cap.tracks[k].slices.1 - l.cap.tracks[k].slices.0) as u64)
        .sum::<u64>();
    assert_eq!(got, n);
    app.update(key('T'));
    let t = table(&app);
    assert!(t.title.contains("track"), "{}", t.title);
    // Back to names: three more `v` presses.
    for _ in 0..3 {
        app.update(key('v'));
    }
    assert_eq!(table(&app).columns[0].name, "name");
}

#[test]
fn enter_on_a_category_row_makes_its_slices_the_hits() {
    let mut app = open("tests/fixtures/ui/alexnet.pt.trace.json.gz");
    let l = app.loaded().unwrap().clone();
    app.update(key('t'));
    app.update(key('v'));
    // The second row by self time (cpu_op on this capture: hundreds of events; the profiler's
    // own `Trace` span that came first is left out since issue 22).
    app.update(key('j'));
    let t = table(&app);
    let row = &t.rows[t.order[t.selected]];
    let (cat, count): (String, usize) = (row.cells[0].clone(), row.cells[1].parse().unwrap());
    app.update(Msg::Key(KeyEvent::from(KeyCode::Enter)));
    assert_eq!(app.top(), ViewKind::Timeline);
    let hits = app.hits.as_ref().expect("hits set");
    assert_eq!(hits.ids.len(), count);
    assert!(count > 100, "{cat}: {count}");
    assert!(
        hits.ids
            .iter()
            .all(|&i| l.cap.strings.get(l.cap.slices.cat(i as usize)) == cat)
    );
    assert_eq!(app.selected, hits.ids.first().copied());
}

/// On a PyTorch capture the explorer's table is `tracetui stats`'s default: torch's
/// `key_averages()` event set, said in the title (issue 52 §2).
#[test]
fn stats_table_of_a_torch_capture_is_torchs_table() {
    let mut app = open("tests/fixtures/cli/worker0.1795311589169457977.pt.trace.json.gz");
    app.update(key('t'));
    let t = table(&app);
    assert!(t.title.contains("torch key_averages()"), "{}", t.title);
    let want = compute(&app.loaded().unwrap().cap, &StatsOptions::default());
    let every = compute(
        &app.loaded().unwrap().cap,
        &StatsOptions {
            every: true,
            ..StatsOptions::default()
        },
    );
    assert_eq!(t.rows.len(), want.rows.len());
    assert!(
        every.rows.len() > want.rows.len(),
        "python frames are rows of their own"
    );
    let step = want
        .rows
        .iter()
        .find(|r| r.name == "ProfilerStep*")
        .expect("ProfilerStep* row");
    // torch's own self CPU of ProfilerStep* in this capture (key_averages.json beside it).
    let torch: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            "tests/fixtures/cli/worker0.1795311589169457977.key_averages.json",
        )
        .unwrap(),
    )
    .unwrap();
    let torch_self = torch
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "ProfilerStep*")
        .and_then(|r| r["self_cpu_us"].as_f64())
        .unwrap();
    assert!((step.self_ps as f64 / 1e6 - torch_self).abs() < 0.01 * torch_self);
}
