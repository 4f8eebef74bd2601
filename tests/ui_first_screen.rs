//! The first screen a new user meets (issue 22 §3, §4, §6, §7; issue 20 §5 labels).

use ratatui::crossterm::event::KeyCode;
use tracetui::ui::app::{App, Row};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;

mod common;
use common::{code, key, run_cmds, screen};

const BERT: &str = "tests/fixtures/xplane/tf_bert_gpu.xplane.pb.gz";
const ALEXNET: &str = "tests/fixtures/ui/alexnet.pt.trace.json.gz";

fn open_file(path: &str, w: u16, h: u16) -> App {
    let p = std::path::Path::new(path);
    let cap = CaptureRef::from_file(p, p.parent().unwrap());
    let (mut app, cmds) = App::new(vec![cap], (w, h), ColorMode::None);
    run_cmds(&mut app, cmds);
    assert!(app.loaded().is_some(), "{path} did not load");
    app
}

/// The track of the cursor row, when it is a lane with slices.
fn cursor_on_busy_lane(app: &App) -> bool {
    let l = app.loaded().unwrap();
    match app.rows.get(app.rows.cursor) {
        Some(Row::Lane { track, .. }) => {
            let t = &l.cap.tracks[*track as usize];
            t.slices.1 > t.slices.0
        }
        _ => false,
    }
}

#[test]
fn the_bert_capture_shows_its_gpus_first_and_the_cursor_on_a_busy_lane() {
    let app = open_file(BERT, 160, 48);
    let s = screen(&app);
    let body: Vec<&str> = s
        .lines()
        .skip(2)
        .take(app.areas().lanes.height as usize)
        .collect();
    let gpus = body
        .iter()
        .filter(|l| l.starts_with("▾ /device:GPU:"))
        .count();
    assert!(gpus >= 3, "GPUs on the first screen:\n{s}");
    assert!(
        body.iter().any(|l| l.starts_with(" Stream #")),
        "GPU streams on the first screen:\n{s}"
    );
    // The GPUs lead: no host process header before the first GPU.
    let l = app.loaded().unwrap();
    let first = app.rows.iter().find_map(|r| match r {
        Row::Process(p) => Some(l.cap.process_name(*p)),
        _ => None,
    });
    assert!(first.unwrap().starts_with("/device:GPU:"), "{s}");
    assert!(s.contains("▾ /host:CPU") || app.rows.iter().any(|r| matches!(r, Row::Process(_))));
    assert!(cursor_on_busy_lane(&app), "cursor row {}", app.rows.cursor);
    let app = open_file(BERT, 80, 24);
    assert!(cursor_on_busy_lane(&app));
}

#[test]
fn the_cursor_starts_on_the_first_busy_lane_and_l_takes_the_first_slice_in_the_window() {
    for f in [BERT, ALEXNET] {
        let mut app = open_file(f, 160, 48);
        assert!(cursor_on_busy_lane(&app), "{f}");
        let first_busy = app.rows.iter().position(|r| match r {
            Row::Lane { track, .. } => {
                let t = &app.loaded().unwrap().cap.tracks[*track as usize];
                t.slices.1 > t.slices.0
            }
            _ => false,
        });
        assert_eq!(Some(app.rows.cursor), first_busy, "{f}");
        // Zoom in and pan so the window starts inside the capture, then `l`.
        for _ in 0..3 {
            app.update(key('w'));
        }
        app.update(key('d'));
        let (t0, t1) = (app.vp.t0, app.vp.t1);
        let l = app.loaded().unwrap().clone();
        let Some(Row::Lane { track, lane }) = app.rows.get(app.rows.cursor).copied() else {
            panic!("{f}: cursor not on a lane")
        };
        // Brute force: the slice of the lane covering t0, else the first starting after it.
        let s = &l.cap.slices;
        let on_lane: Vec<u32> = (0..s.len() as u32)
            .filter(|&i| l.cap.track_of(i) == track && s.lane[i as usize] == lane)
            .collect();
        let want = on_lane
            .iter()
            .copied()
            .find(|&i| s.start[i as usize] <= t0 && s.end(i as usize) > t0)
            .or_else(|| {
                on_lane
                    .iter()
                    .copied()
                    .filter(|&i| s.start[i as usize] >= t0)
                    .min_by_key(|&i| s.start[i as usize])
            });
        app.update(key('l'));
        assert_eq!(app.selected, want, "{f}: window {t0}..{t1}");
        if let Some(id) = want {
            assert!(s.end(id as usize) > t0, "{f}");
        }
    }
}

#[test]
fn gutter_labels_keep_what_tells_rows_apart_at_80x24() {
    let app = open_file(BERT, 80, 24);
    let s = screen(&app);
    let gutter = app.areas().gutter.width as usize;
    let labels: Vec<String> = s
        .lines()
        .skip(2)
        .take(app.areas().lanes.height as usize)
        .map(|l| l.chars().take(gutter).collect::<String>())
        .filter(|l| l.starts_with(" queu"))
        .collect();
    assert!(labels.len() >= 2, "{s}");
    let mut uniq = labels.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), labels.len(), "queue rows told apart:\n{s}");
    // The stream number stays whole.
    assert!(labels.iter().any(|l| l.contains("134")), "{labels:?}");
    assert!(labels.iter().any(|l| l.contains("123")), "{labels:?}");
    // Kineto devices are titled as the CLI titles them (issue 20 §5).
    let s = screen(&open_file(ALEXNET, 160, 48));
    assert!(s.contains("▾ GPU 0 (python3.10)"), "{s}");
    assert!(s.contains("▾ CPU (python3.10)"), "{s}");
    assert!(!s.contains(" · python3.10"), "{s}");
}

#[test]
fn the_help_popup_fits_80x24_without_cutting_a_line() {
    let mut app = open_file(ALEXNET, 80, 24);
    app.update(key('?'));
    let rows = app
        .keymap
        .help_rows(tracetui::ui::keymap::ViewKind::Timeline);
    // Scroll through the whole popup, collecting what it shows.
    let mut seen = String::new();
    for _ in 0..rows.len() * 2 {
        let s = screen(&app);
        // The popup is 76 wide, centred: its inside is columns 3..77.
        for l in s.lines() {
            let c: Vec<char> = l.chars().collect();
            if c.get(2) != Some(&'│') {
                continue;
            }
            let inside: String = c[3..77].iter().collect();
            assert!(!inside.contains('…'), "a help line is cut:\n{s}");
            seen.push_str(&inside);
            seen.push(' ');
        }
        app.update(key('j'));
    }
    let squash = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let seen = squash(&seen.replace('│', " "));
    for (_, what) in &rows {
        let first = squash(what)
            .split(' ')
            .take(3)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(seen.contains(&first), "{what:?} not shown");
    }
    let _ = code(KeyCode::Esc);
}

#[test]
fn the_picker_shows_and_sorts_by_when_each_capture_was_taken_and_its_rank() {
    use tracetui::ui::catalog;
    let dir = tempfile::tempdir().unwrap();
    // Three captures whose file times say the opposite of their trace times (copied files).
    let runs = [
        (
            "old-run",
            "tests/fixtures/ui/alexnet.pt.trace.json.gz",
            3_000,
        ),
        (
            "new-run",
            "assets/sample/torch-cnn/worker0.1795311589169457977.pt.trace.json.gz",
            1_000,
        ),
    ];
    for (run, from, mtime) in runs {
        let d = dir.path().join(run);
        std::fs::create_dir_all(&d).unwrap();
        let to = d.join(std::path::Path::new(from).file_name().unwrap());
        std::fs::copy(from, &to).unwrap();
        let f = std::fs::File::options().write(true).open(&to).unwrap();
        f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(mtime))
            .unwrap();
    }
    // A rank-3 capture of a distributed run.
    let ranked = dir.path().join("ranked");
    std::fs::create_dir_all(&ranked).unwrap();
    std::fs::copy(
        "tests/fixtures/fidelity/labels_rank.json",
        ranked.join("labels_rank.json"),
    )
    .unwrap();
    let caps = catalog::scan(dir.path()).unwrap();
    let (app, _) = App::new(caps, (160, 24), ColorMode::None);
    let runs: Vec<&str> = app
        .entries
        .iter()
        .map(|e| e.capture.source.run.as_str())
        .collect();
    let new = runs.iter().position(|r| *r == "new-run").unwrap();
    let old = runs.iter().position(|r| *r == "old-run").unwrap();
    assert!(new < old, "newest taken first: {runs:?}");
    let s = screen(&app);
    assert!(s.contains("taken (UTC)"), "{s}");
    // The trace's own times, not the files' (1970).
    assert!(s.contains("2026-11-22 01:39"), "{s}");
    assert!(s.contains("2023-09-27"), "{s}");
    assert!(!s.contains("1970-01-01"), "{s}");
    assert!(s.contains(" rank "), "{s}");
    let line = s.lines().find(|l| l.contains("ranked")).unwrap();
    let ranked_entry = app
        .entries
        .iter()
        .find(|e| e.capture.source.run == "ranked")
        .unwrap();
    let want = ranked_entry.rank.expect("rank probed from the file head");
    assert_eq!(want, 3);
    assert!(line.contains(&format!(" {want} ")), "{line}");
}

/// A Chrome trace with a deep chain of long-named parents and an op with many args and a long
/// `Call stack`.
fn deep_capture(dir: &std::path::Path) -> std::path::PathBuf {
    let mut ev = Vec::new();
    let names = [
        "ProfilerStep#7",
        "nn.Module: TransformerEncoderWithAVeryLongName_0",
        "nn.Module: TransformerEncoderLayerWithAnotherLongName_3",
        "nn.Module: MultiheadSelfAttentionBlockWithALongName_1",
        "aten::linear",
        "aten::addmm",
    ];
    for (d, n) in names.iter().enumerate() {
        let d = d as i64;
        let mut args = serde_json::json!({});
        if d == 5 {
            for k in 0..12 {
                args[format!("arg number {k}")] = format!("value {k}").into();
            }
            let frames: Vec<String> = (0..30)
                .map(|k| {
                    format!(
                        "/home/user/project/model/layer_{k}.py({}): forward_{k}",
                        10 + k
                    )
                })
                .collect();
            args["Call stack"] = frames.join(";").into();
        }
        ev.push(serde_json::json!({
            "ph": "X", "name": n, "cat": "cpu_op", "pid": 1, "tid": 1,
            "ts": 1000 + d * 10, "dur": 1000 - d * 20, "args": args
        }));
    }
    let p = dir.join("deep.json");
    std::fs::write(&p, serde_json::json!({ "traceEvents": ev }).to_string()).unwrap();
    p
}

#[test]
fn the_details_panel_wraps_and_i_opens_the_full_details() {
    let dir = tempfile::tempdir().unwrap();
    let path = deep_capture(dir.path());
    let mut app = open_file(path.to_str().unwrap(), 100, 40);
    let l = app.loaded().unwrap().clone();
    let op = (0..l.cap.slices.len() as u32)
        .find(|&i| l.cap.slice_name(i) == "aten::addmm")
        .unwrap();
    app.state_mut().selected = Some(op);
    let s = screen(&app);
    let details: Vec<&str> = s
        .lines()
        .skip(app.areas().details.y as usize)
        .take(app.areas().details.height as usize)
        .collect();
    // The breadcrumb keeps the nearest parents whole and shortens the far ones, in one line.
    let crumb = details
        .iter()
        .find(|l| l.contains("› aten::addmm"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(crumb.contains("aten::linear › aten::addmm"), "{crumb}");
    assert!(crumb.contains('…'), "{crumb}");
    // Args wrap over the lines the panel has, and a last line names the full-details key.
    assert!(
        details.iter().any(|l| l.contains("arg number 0=value 0")),
        "{s}"
    );
    assert!(
        details
            .last()
            .unwrap()
            .contains("more lines — i: full details"),
        "{s}"
    );
    app.update(key('i'));
    assert_eq!(app.top(), tracetui::ui::keymap::ViewKind::Details);
    let s = screen(&app);
    assert!(s.contains("parents (root first):"), "{s}");
    assert!(
        s.contains("nn.Module: TransformerEncoderWithAVeryLongName_0"),
        "the full breadcrumb:\n{s}"
    );
    assert!(s.contains("arg number 11 = value 11"), "every arg:\n{s}");
    assert!(
        s.contains("    /home/user/project/model/layer_0.py(10): forward_0"),
        "{s}"
    );
    // The whole call stack is reached by scrolling.
    assert!(!s.contains("layer_29.py"), "{s}");
    app.update(key('G'));
    let s = screen(&app);
    assert!(
        s.contains("    /home/user/project/model/layer_29.py(39): forward_29"),
        "{s}"
    );
    app.update(code(KeyCode::Esc));
    assert_eq!(app.top(), tracetui::ui::keymap::ViewKind::Timeline);
    // Without a selection `i` says what to do.
    app.state_mut().selected = None;
    app.update(key('i'));
    assert_eq!(app.top(), tracetui::ui::keymap::ViewKind::Timeline);
    // At 80x24 the full view fits and scrolls too.
    app.state_mut().selected = Some(op);
    app.state_mut().size = (80, 24);
    app.update(key('i'));
    let s = screen(&app);
    assert!(s.contains("more rows"), "{s}");
}

#[test]
fn the_ranking_says_what_its_score_means_is_sorted_and_has_track_and_source() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("synth.pt.trace.json");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    tracetui::synth::kineto::write_kineto_trace(&mut f, 20_000, 7).unwrap();
    drop(f);
    let mut app = open_file(path.to_str().unwrap(), 160, 48);
    app.update(key('o'));
    let s = screen(&app);
    assert!(s.contains("score = z(idle fraction)"), "{s}");
    assert!(s.contains("sorted by score"), "{s}");
    let head = s
        .lines()
        .find(|l| l.contains("rank") && l.contains("track"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(head.contains("score▼") && head.contains("source"), "{head}");
    let t = app
        .views()
        .last()
        .and_then(|v| {
            v.as_any()
                .downcast_ref::<tracetui::ui::views::table::TableView>()
        })
        .unwrap();
    assert!(!t.order.is_empty(), "{s}");
    // Sorted by score, best first: the rank column counts up.
    let ranks: Vec<usize> = t
        .order
        .iter()
        .map(|&r| t.rows[r].cells[1].parse().unwrap())
        .collect();
    assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
    // Every ranked event names its track and a source (python frame, else the innermost user
    // frame of the `Call stack` arg: the synthetic trace has only the latter).
    for &r in &t.order {
        let row = &t.rows[r];
        assert!(row.cells[7].starts_with("thread"), "{:?}", row.cells);
        assert!(row.cells[8].contains(".py("), "{:?}", row.cells);
    }
    // The best-ranked event's details say what each figure was measured over.
    app.update(code(KeyCode::Enter));
    assert_eq!(app.top(), tracetui::ui::keymap::ViewKind::Timeline);
    assert!(app.selected.is_some());
    let s = screen(&app);
    assert!(
        s.contains("deep at its start") && s.contains("GPU idle") && s.contains(" of its "),
        "{s}"
    );
    assert!(s.contains("optimizable #1"), "{s}");
}

/// A Chrome trace of `n` back-to-back 1 ms slices starting at `first_us`.
fn slices_at(first_us: i64, n: i64) -> String {
    let ev: Vec<serde_json::Value> = (0..n)
        .map(|k| {
            serde_json::json!({"ph": "X", "name": format!("step{k}"), "cat": "cpu_op",
                "pid": 1, "tid": 1, "ts": first_us + k * 1000, "dur": 900})
        })
        .collect();
    serde_json::json!({ "traceEvents": ev }).to_string()
}

/// The header's window start (`@ …`) and the ruler line.
fn header_and_ruler(app: &App) -> (String, String) {
    let s = screen(app);
    let mut l = s.lines();
    let head = l.next().unwrap_or_default();
    let at = head
        .rsplit_once(" @ ")
        .map_or("", |x| x.1)
        .trim()
        .to_string();
    (at, l.next().unwrap_or_default().to_string())
}

#[test]
fn no_time_is_negative_and_the_zero_is_kept_across_reloads() {
    use tracetui::live::{CaptureEvent, EventKind, WatchEvent};
    use tracetui::ui::app::Msg;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    std::fs::write(&path, slices_at(10_000, 20)).unwrap();
    let caps = tracetui::ui::catalog::scan(dir.path()).unwrap();
    let (mut app, cmds) = App::new(caps, (100, 30), ColorMode::None);
    run_cmds(&mut app, cmds);
    let zero = {
        let l = app.loaded().unwrap().clone();
        app.time_zero(&l)
    };
    assert_eq!(zero, 10_000 * 1_000_000, "the earliest event");
    // Pan and zoom out as far as the keys go: the window never starts before the zero.
    for k in ['s', 's', 's', 'a', 'a', 'a', 'a'] {
        app.update(key(k));
        let (at, ruler) = header_and_ruler(&app);
        assert!(!at.starts_with('-'), "{at}");
        assert!(!ruler.contains('-'), "{ruler}");
        assert!(app.vp.t0 >= zero);
    }
    // `f` on the first slice (with its margin) does not go before the zero either.
    app.update(key('0'));
    app.update(code(KeyCode::Enter));
    app.update(key('f'));
    let (at, ruler) = header_and_ruler(&app);
    assert!(app.selected.is_some());
    assert!(!at.starts_with('-') && !ruler.contains('-'), "{at} {ruler}");

    // The file is rewritten without its first 5 slices: the zero stays where it was, so the
    // same event keeps its time (`step5` at +5 ms).
    std::fs::write(&path, {
        let v: Vec<serde_json::Value> = (5..20)
            .map(|k| {
                serde_json::json!({"ph": "X", "name": format!("step{k}"), "cat": "cpu_op",
                "pid": 1, "tid": 1, "ts": 10_000 + k * 1000, "dur": 900})
            })
            .collect();
        serde_json::json!({ "traceEvents": v }).to_string()
    })
    .unwrap();
    let reload = |app: &mut App| {
        let cat = tracetui::discover::discover(dir.path()).unwrap();
        let capture = cat.captures().next().unwrap().clone();
        let cmds = app.update(Msg::Watch(WatchEvent::Capture(CaptureEvent {
            kind: EventKind::Changed,
            capture,
        })));
        run_cmds(app, cmds);
    };
    reload(&mut app);
    let l = app.loaded().unwrap().clone();
    assert_eq!(l.cap.slices.len(), 15, "reloaded");
    assert_eq!(app.time_zero(&l), zero, "zero kept across the reload");
    app.update(key('0'));
    let (at, _) = header_and_ruler(&app);
    assert!(
        at.starts_with("+5") || at.starts_with('5'),
        "window starts 5 ms after the zero: {at}"
    );
    // A version with an event before the old zero moves the zero back to it (never negative).
    std::fs::write(&path, slices_at(9_000, 3)).unwrap();
    reload(&mut app);
    let l = app.loaded().unwrap().clone();
    assert_eq!(app.time_zero(&l), 9_000 * 1_000_000);
    let (at, ruler) = header_and_ruler(&app);
    assert!(!at.starts_with('-') && !ruler.contains('-'), "{at} {ruler}");
}

#[test]
fn first_screen_snapshots() {
    let snap = |name: &str, app: &App| insta::assert_snapshot!(name, screen(app));
    snap("bert_160x48_first", &open_file(BERT, 160, 48));
    snap("bert_80x24_first", &open_file(BERT, 80, 24));
    let dir = tempfile::tempdir().unwrap();
    let path = deep_capture(dir.path());
    let mut app = open_file(path.to_str().unwrap(), 80, 24);
    let l = app.loaded().unwrap().clone();
    let op = (0..l.cap.slices.len() as u32)
        .find(|&i| l.cap.slice_name(i) == "aten::addmm")
        .unwrap();
    app.state_mut().selected = Some(op);
    app.update(key('i'));
    snap("full_details_80x24", &app);
}
