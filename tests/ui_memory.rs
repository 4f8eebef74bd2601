//! The memory rows in the explorer on a hand-made Kineto capture with `[memory]` events
//! (`tests/fixtures/memory/kineto_memory.json`): allocated / reserved rows per device under the
//! timeline, the peak marked and `^` jumping to it, the `[OutOfMemory]` event marked, `M` listing
//! the allocations live at the cursor (`v`: live at end, largest in the marked range; `T`: next
//! device), `Enter` jumping to the allocating op. Whole-app snapshots at 80×24 and 160×48.

use ratatui::crossterm::event::KeyCode;
use std::path::Path;
use tracetui::ui::app::{App, Mark, Row, Screen};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::views::table::TableView;

mod common;
use common::{code, key, run_cmds, screen};

const FIXTURE: &str = "tests/fixtures/memory/kineto_memory.json";
const US: i64 = 1_000_000;

fn app(w: u16, h: u16) -> App {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cap = CaptureRef::from_file(&root.join(FIXTURE), root);
    let (mut app, cmds) = App::new(vec![cap], (w, h), ColorMode::None);
    run_cmds(&mut app, cmds);
    assert_eq!(app.screen(), Screen::Timeline);
    app
}

fn table(app: &App) -> &TableView {
    app.views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<TableView>())
        .expect("table on top")
}

fn snap(name: &str, app: &App) {
    insta::assert_snapshot!(name, screen(app));
}

/// Names in the first column, in display order.
fn ops(t: &TableView) -> Vec<String> {
    t.order
        .iter()
        .map(|&i| t.rows[i].cells[0].clone())
        .collect()
}

#[test]
fn memory_rows_follow_the_model() {
    let a = app(160, 48);
    let l = a.loaded().unwrap().clone();
    let m = l.memory().expect("memory computed with the derived rows");
    let labels: Vec<String> = m.model.tracks.iter().map(|t| t.label()).collect();
    assert_eq!(labels, ["cpu", "cuda:0"]);
    // Both series of both devices, after every process row, in track order.
    let mem: Vec<Row> = a
        .rows
        .iter()
        .copied()
        .filter(|r| matches!(r, Row::Memory { .. }))
        .collect();
    assert_eq!(
        mem,
        [
            Row::Memory {
                track: 0,
                reserved: false
            },
            Row::Memory {
                track: 0,
                reserved: true
            },
            Row::Memory {
                track: 1,
                reserved: false
            },
            Row::Memory {
                track: 1,
                reserved: true
            },
        ]
    );
    assert!(matches!(a.rows.list[a.rows.len() - 4], Row::Memory { .. }));
    let s = screen(&a);
    assert!(s.contains("cuda:0 alloc ~"), "{s}");
    assert!(s.contains("cpu reserved ~"), "{s}");
    // The OOM is marked on the cuda:0 allocated row.
    let line = s
        .lines()
        .find(|l| l.contains("cuda:0 alloc ~"))
        .unwrap()
        .to_string();
    assert!(line.contains('!'), "{line}");
}

#[test]
fn peak_key_centres_the_peak_and_m_lists_what_is_live_there() {
    let mut a = app(160, 48);
    let zero = a.loaded().unwrap().cap.time_zero();
    a.update(key('^'));
    // cuda:0 has the highest peak: 6 MiB at 420 µs.
    assert_eq!(a.cursor_time(), zero + 420 * US);
    assert_eq!(
        a.rows.list[a.rows.cursor],
        Row::Memory {
            track: 1,
            reserved: false
        }
    );
    let s = screen(&a);
    assert!(s.contains("peak of cuda:0: 6.0 MiB allocated at"), "{s}");
    // Again: the next device (cpu, 64 KiB at 110 µs), then back.
    a.update(key('^'));
    assert_eq!(a.cursor_time(), zero + 110 * US);
    a.update(key('^'));
    assert_eq!(a.cursor_time(), zero + 420 * US);
    snap("kineto_memory_160x48_peak", &a);

    a.update(key('M'));
    assert_eq!(a.top(), ViewKind::Table);
    let t = table(&a);
    assert!(
        t.title
            .starts_with("memory · cuda:0 · live at +420.0 µs: 2 allocations, 6.0 MiB"),
        "{}",
        t.title
    );
    assert_eq!(ops(t), ["aten::mm", "aten::relu"]);
    assert_eq!(t.rows[t.order[0]].cells[1], "4.0 MiB");
    assert_eq!(t.rows[t.order[0]].cells[2], "220.0 µs");
    assert_eq!(
        t.rows[t.order[0]].cells[4],
        "model.py(12): forward ← train.py(40): step"
    );
    snap("kineto_memory_160x48_live", &a);
    // v: live at end (possible leaks).
    a.update(key('v'));
    let t = table(&a);
    assert!(
        t.title
            .contains("live at end (never freed): 1 allocations, 2.0 MiB"),
        "{}",
        t.title
    );
    assert_eq!(ops(t), ["aten::relu"]);
    // No range marked: v comes back to the live set; T: the next device.
    a.update(key('v'));
    assert!(table(&a).title.contains("live at +420.0 µs"));
    a.update(key('T'));
    let t = table(&a);
    assert!(
        t.title
            .starts_with("memory · cpu · live at +420.0 µs: 0 allocations"),
        "{}",
        t.title
    );
    a.update(key('v'));
    let t = table(&a);
    assert_eq!(ops(t), ["aten::relu"]);
    assert_eq!(t.rows[t.order[0]].cells[4], "data.py(7): load");
    a.update(key('T'));
    a.update(key('v'));
    // s sorts by the first column (op), Enter jumps to the allocating op.
    a.update(key('s'));
    assert_eq!(ops(table(&a)), ["aten::mm", "aten::relu"]);
    a.update(code(KeyCode::Enter));
    assert_eq!(a.top(), ViewKind::Timeline);
    let l = a.loaded().unwrap().clone();
    let sel = a.selected.expect("the op is selected");
    assert_eq!(l.cap.slice_name(sel), "aten::mm");
}

#[test]
fn largest_allocations_of_a_marked_range() {
    let mut a = app(160, 48);
    let zero = a.loaded().unwrap().cap.time_zero();
    a.update(key('^'));
    // Mark 100 … 300 µs: cuda:0 allocated 1 MiB and 4 MiB there (not the 2 MiB at 420).
    let w = 100 * US;
    let t0 = zero + 100 * US - w / 2;
    a.set_window(t0, t0 + w);
    a.update(key('m'));
    let t0 = zero + 300 * US - w / 2;
    a.set_window(t0, t0 + w);
    a.update(key('m'));
    assert!(matches!(a.mark, Mark::Range(..)));
    a.update(key('M'));
    a.update(key('v'));
    a.update(key('v'));
    let t = table(&a);
    assert!(t.title.contains("largest allocated in"), "{}", t.title);
    assert_eq!(ops(t), ["aten::mm", "aten::mm"]);
    let sizes: Vec<&str> = t
        .order
        .iter()
        .map(|&i| t.rows[i].cells[1].as_str())
        .collect();
    assert_eq!(sizes, ["4.0 MiB", "1.0 MiB"]);
    // Lifetimes: 500 µs and 130 µs.
    assert_eq!(t.rows[t.order[1]].cells[2], "130.0 µs");
}

#[test]
fn status_line_names_the_oom_and_snapshots_at_80x24() {
    let mut a = app(80, 24);
    let zero = a.loaded().unwrap().cap.time_zero();
    a.update(key('^'));
    snap("kineto_memory_80x24_peak", &a);
    // Centre on the OOM at 600 µs with the window narrow enough that its column holds only it.
    let w = 10 * US;
    a.set_window(zero + 600 * US - w / 2, zero + 600 * US - w / 2 + w);
    a.state_mut().notice = None;
    let s = screen(&a);
    assert!(s.contains("OUT OF MEMORY at +600"), "{s}");
    assert!(s.contains("requested 8.0 G"), "{s}");
    a.update(key('M'));
    snap("kineto_memory_80x24_live", &a);
    a.update(code(KeyCode::Esc));
    // The help popup at 80×24 lists the memory keys whole (scrolled to its end).
    a.update(key('?'));
    assert_eq!(a.top(), ViewKind::Help);
    for _ in 0..60 {
        a.update(key('j'));
    }
    let s = screen(&a);
    assert!(
        s.contains("memory: to the allocated peak (again: next device)"),
        "{s}"
    );
    assert!(
        s.contains("memory: allocations live at the cursor, at end, in range"),
        "{s}"
    );
    snap("kineto_memory_80x24_help_end", &a);
}

#[test]
fn a_capture_without_memory_events_says_so() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cap = CaptureRef::from_file(&root.join("tests/fixtures/gpu/hand_two_streams.json"), root);
    let (mut a, cmds) = App::new(vec![cap], (120, 30), ColorMode::None);
    run_cmds(&mut a, cmds);
    assert!(!a.rows.iter().any(|r| matches!(r, Row::Memory { .. })));
    a.update(key('^'));
    assert!(screen(&a).contains("no memory events"));
    a.update(key('M'));
    assert_eq!(a.top(), ViewKind::Timeline);
    assert!(screen(&a).contains("no memory events"));
}

/// An app showing the allocator snapshot `name` of the fixtures.
fn snapshot_app(name: &str, w: u16, h: u16) -> App {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cap = CaptureRef::from_file(&root.join("tests/fixtures/memory").join(name), root);
    assert_eq!(cap.format, Some(tracetui::model::Format::Snapshot));
    let (mut app, cmds) = App::new(vec![cap], (w, h), ColorMode::None);
    run_cmds(&mut app, cmds);
    assert_eq!(app.screen(), Screen::Timeline);
    app
}

#[test]
fn an_allocator_snapshot_opens_with_its_memory_rows() {
    for (w, h) in [(80, 24), (160, 48)] {
        let mut a = snapshot_app("snap_multi.pickle", w, h);
        let l = a.loaded().unwrap().clone();
        let m = l.memory().expect("the snapshot's model");
        assert_eq!(m.model.tracks.len(), 3);
        let mem = a
            .rows
            .iter()
            .filter(|r| matches!(r, Row::Memory { .. }))
            .count();
        assert_eq!(mem, 6, "allocated and reserved of 3 devices");
        let s = screen(&a);
        assert!(s.contains("cuda:1 alloc ~"), "{s}");
        snap(&format!("snap_multi_{w}x{h}"), &a);
        // The peak of cuda:0 once every entry of its time is applied (the model's first-sample
        // peak, 27 MiB at 0, is between entries of one timestamp).
        let l = a.loaded().unwrap().clone();
        let (pt, pb) = l.memory().unwrap().tracks[0].peak.unwrap();
        a.update(key('^'));
        assert_eq!(a.cursor_time(), pt);
        a.update(key('M'));
        let t = table(&a);
        assert!(
            t.title
                .starts_with("memory · cuda:0 caching allocator · live at "),
            "{}",
            t.title
        );
        assert!(!t.order.is_empty());
        let total = common::column_sum(t, 1);
        assert_eq!(total, pb as f64, "the live set is the peak");
        snap(&format!("snap_multi_{w}x{h}_live"), &a);
        // Enter on an allocation with a stack shows it (no op encloses a snapshot's allocation).
        let with_stack = t
            .order
            .iter()
            .position(|&i| !t.rows[i].cells[4].is_empty())
            .expect("an allocation with frames");
        for _ in 0..with_stack {
            a.update(key('j'));
        }
        a.update(code(KeyCode::Enter));
        let stack = a
            .views()
            .last()
            .and_then(|v| {
                v.as_any()
                    .downcast_ref::<tracetui::ui::views::memory::StackView>()
            })
            .expect("the stack popup");
        assert!(
            stack.frames.iter().any(|f| f.starts_with("model.py:")),
            "{stack:?}"
        );
        snap(&format!("snap_multi_{w}x{h}_stack"), &a);
        a.update(code(KeyCode::Esc));
        assert_eq!(a.top(), ViewKind::Table);
    }
}

/// A JAX device memory profile (pprof) opens like a snapshot: a track per (device, buffer kind),
/// the live buffers with their allocation stacks.
#[test]
fn a_jax_pprof_memory_profile_opens_with_its_memory_rows() {
    let mut a = snapshot_app("jax_cpu.memory.prof", 120, 40);
    let l = a.loaded().unwrap().clone();
    let m = l.memory().expect("the profile's model");
    let labels: Vec<String> = m.model.tracks.iter().map(|t| t.label()).collect();
    assert_eq!(labels, ["cpu:0 buffer", "(no device label) executable"]);
    assert!(a.rows.iter().any(|r| matches!(r, Row::Memory { .. })));
    a.update(key('M'));
    let t = table(&a);
    assert!(t.title.starts_with("memory · cpu:0 buffer"), "{}", t.title);
    assert_eq!(common::column_sum(t, 1), 528_288.0, "every live buffer");
}

#[test]
fn snapshots_in_a_log_dir_are_offered_beside_the_traces() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/memory");
    let (caps, problems) = tracetui::ui::catalog::scan_all(&dir).unwrap();
    let snaps: Vec<String> = caps
        .iter()
        .filter(|c| c.format == Some(tracetui::model::Format::Snapshot))
        .map(|c| {
            c.source
                .path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    // The picker's format label tells a pprof profile from a torch pickle.
    let labels: Vec<&str> = caps
        .iter()
        .filter(|c| c.format == Some(tracetui::model::Format::Snapshot))
        .map(|c| tracetui::formats::pprof::format_label(c.format.unwrap(), &c.source.path))
        .collect();
    assert_eq!(
        labels,
        [
            "torch-snapshot",
            "pprof",
            "torch-snapshot",
            "torch-snapshot",
            "torch-snapshot"
        ]
    );
    assert_eq!(
        snaps,
        [
            "h200_snapshot_cut.pickle",
            "jax_cpu.memory.prof",
            "snap_expandable.pickle",
            "snap_multi.pickle",
            "snap_small.pickle"
        ]
    );
    assert!(
        caps.iter()
            .any(|c| c.source.path.ends_with("kineto_memory.json"))
    );
    assert!(
        !problems
            .iter()
            .any(|(p, _)| p.extension().is_some_and(|e| e == "pickle"))
    );
    assert!(
        !problems
            .iter()
            .any(|(p, _)| p.extension().is_some_and(|e| e == "prof"))
    );
    // A snapshot alone: one capture, no problem.
    let (caps, problems) = tracetui::ui::catalog::scan_all(&dir.join("snap_small.pickle")).unwrap();
    assert_eq!(caps.len(), 1);
    assert!(problems.is_empty(), "{problems:?}");
}

/// The app drawn into a buffer.
fn buffer(app: &App) -> ratatui::buffer::Buffer {
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(app.size.0, app.size.1))
        .expect("terminal");
    t.draw(|f| tracetui::ui::draw::draw(app, f)).expect("draw");
    t.backend().buffer().clone()
}

#[test]
fn the_peak_column_is_reversed_on_its_row_only() {
    use ratatui::style::Modifier;
    let mut a = app(160, 48);
    a.update(key('^'));
    let buf = buffer(&a);
    let ar = a.areas();
    let row_y = |label: &str| {
        (0..buf.area.height)
            .find(|&y| {
                (0..ar.gutter.width)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .contains(label)
            })
            .unwrap_or_else(|| panic!("no row {label}"))
    };
    let y = row_y("cuda:0 alloc ~");
    let zero = a.loaded().unwrap().cap.time_zero();
    let cols = usize::from(ar.lanes.width);
    let k = tracetui::ui::timeline::column_at(a.vp.t0, a.vp.t1, cols, zero + 420 * US);
    let reversed: Vec<usize> = (0..cols)
        .filter(|&c| {
            buf[(ar.lanes.x + c as u16, y)]
                .modifier
                .contains(Modifier::REVERSED)
                && buf[(ar.lanes.x + c as u16, y)].symbol() != "!"
        })
        .collect();
    assert_eq!(reversed, [k], "only the peak's column");
    // The OOM column: a bold reversed `!`.
    let ko = tracetui::ui::timeline::column_at(a.vp.t0, a.vp.t1, cols, zero + 600 * US);
    let c = &buf[(ar.lanes.x + ko as u16, y)];
    assert_eq!(c.symbol(), "!");
    assert!(c.modifier.contains(Modifier::BOLD | Modifier::REVERSED));
}

#[test]
fn steps_draw_the_largest_value_of_each_column() {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::{Modifier, Style};
    use tracetui::ui::timeline::StepSeries;
    // 0..40 in 4 columns of 10: samples 10 @0, 40 @10, 20 @15, 0 @30; max 80.
    let ts = [0i64, 10, 15, 30];
    let v = [10.0, 40.0, 20.0, 0.0];
    let mut buf = Buffer::empty(Rect::new(0, 0, 4, 1));
    StepSeries {
        window: (0, 40),
        max: 80.0,
        style: Style::default(),
    }
    .draw(
        &mut buf,
        (0, 0, 4),
        |a, b| tracetui::ui::timeline::max_in(&ts, &v, a, b),
        |a, _| a >= 30,
    );
    let s: String = (0..4).map(|x| buf[(x, 0)].symbol().to_string()).collect();
    // ▂ (10/80), ▅ (40/80: the max of 40 and 20), ▃ (20), and the marked empty column.
    assert_eq!(s, "▂▅▃▁");
    assert!(buf[(3, 0)].modifier.contains(Modifier::REVERSED));
    assert!(!buf[(1, 0)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn a_snapshots_segment_map_and_its_blocks() {
    let mut a = snapshot_app("snap_multi.pickle", 120, 40);
    a.update(key('M'));
    // `v` cycles live at the cursor → live at end → the segment map (no range marked).
    a.update(key('v'));
    a.update(key('v'));
    let t = table(&a);
    assert!(
        t.title
            .starts_with("segments at snapshot time: 4 segments, "),
        "{}",
        t.title
    );
    // The snapshot's segment totals (what `tracetui memory` and `_memory_viz stats` print —
    // snap_multi.stats.txt: 62.0 MiB reserved, 14.0 MiB allocated).
    let snap = tracetui::formats::snapshot::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/memory/snap_multi.pickle"),
    )
    .expect("snapshot");
    let sum = |c: usize| common::column_sum(t, c);
    assert_eq!(sum(4), snap.totals.total_reserved as f64);
    assert_eq!(sum(5), snap.totals.total_allocated as f64);
    assert_eq!(sum(4), 62.0 * 1024.0 * 1024.0);
    assert!(t.rows.iter().all(|r| r.bar.is_some()));
    let s = screen(&a);
    assert!(s.contains("segments at snapshot time"), "{s}");
    // Enter lists the blocks of the segment under the cursor, which add up to its size.
    let first = &t.rows[t.order[0]];
    let size = common::num(first.keys.get(4));
    a.update(code(KeyCode::Enter));
    let b = table(&a);
    assert!(b.title.starts_with("segment 0x"), "{}", b.title);
    let blocks = common::column_sum(b, 1);
    assert_eq!(blocks, size);
    // Esc goes back to the segment map; `v` again comes back to the live allocations.
    a.update(code(KeyCode::Esc));
    assert!(table(&a).title.starts_with("segments at snapshot time"));
    a.update(key('v'));
    assert!(
        table(&a).title.starts_with("memory · "),
        "{}",
        table(&a).title
    );
}

/// The real H200 capture cut (tests/fixtures/gpu/PROVENANCE.md): at the cuda:0 peak the live
/// list totals less than the allocator's counter, and the title says what the gap is; the
/// detail column holds the allocating op's inputs (`record_shapes`), named for what it holds.
#[test]
fn live_at_the_peak_says_what_was_allocated_before_the_capture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cap = CaptureRef::from_file(
        &root.join("tests/fixtures/gpu/h200_torch_cut.pt.trace.json.gz"),
        root,
    );
    let (mut a, cmds) = App::new(vec![cap], (160, 48), ColorMode::None);
    run_cmds(&mut a, cmds);
    a.update(key('^'));
    a.update(key('M'));
    let t = table(&a);
    assert!(
        t.title.starts_with("memory · cuda:0 · live at"),
        "{}",
        t.title
    );
    assert!(
        t.title.contains(" allocated; ")
            && t.title
                .ends_with("allocated before the capture began (not listed)"),
        "{}",
        t.title
    );
    assert_eq!(t.columns[3].name, "op inputs · dtype");
    assert!(
        t.rows
            .iter()
            .any(|r| r.cells[3].contains("] c10::BFloat16") || r.cells[3].contains("] float")),
        "{:?}",
        t.rows.iter().map(|r| &r.cells[3]).collect::<Vec<_>>()
    );
}
