//! The bytes flame: live allocations grouped by call stack as a merged tree. On the fixture
//! snapshots (`tests/fixtures/memory/*.pickle`) the tree at the peak holds exactly the bytes live
//! there, each under its frames (outermost first, as memory_viz formats them), and the tree of
//! the blocks at snapshot time folds back into the lines torch's `_memory_viz memory` wrote
//! (the oracle files beside the pickles, `tracetui memory --stacks`). On a Kineto capture
//! without stacks the allocations group by their enclosing op chain. In the explorer `F` in the
//! memory table opens it (whole-app snapshots at 80×24 and 160×48) and `Esc` returns.

use ratatui::crossterm::event::KeyCode;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tracetui::analysis::flame::{Metric, ROOT, TimeUnit, Unit, fold};
use tracetui::analysis::memory::stack_tree::{NO_CONTEXT, folded_tree, live_tree};
use tracetui::analysis::memory::summary::live_at;
use tracetui::formats::snapshot::frame_kept;
use tracetui::model::memory::{MemoryModel, NO_OP, NO_STACK};
use tracetui::ui::app::{App, Row, Screen};
use tracetui::ui::catalog::CaptureRef;
use tracetui::ui::colors::ColorMode;
use tracetui::ui::keymap::ViewKind;
use tracetui::ui::memory::Memory;
use tracetui::ui::views::memory_flame::{Live, MemoryFlameView};

mod common;
use common::{code, key, run_cmds, screen};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/memory")
        .join(name)
}

/// Brute force: `stack;frames bytes` summed per path, frames outermost first.
fn by_stack(m: &MemoryModel, track: usize, ids: &[u32]) -> Vec<(String, u64)> {
    let tr = &m.tracks[track];
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for &i in ids {
        let i = i as usize;
        let s = tr.allocs.stack[i];
        let frames: Vec<String> = m
            .stacks
            .get(s)
            .iter()
            .rev()
            .map(|&f| &m.stacks.frames[f as usize])
            .filter(|f| frame_kept(&f.name, &f.file))
            .map(|f| f.short().replace([' ', ';'], "_"))
            .collect();
        let path = if s == NO_STACK || frames.is_empty() {
            NO_CONTEXT.replace(' ', "_")
        } else {
            frames.join(";")
        };
        *out.entry(path).or_insert(0) += tr.allocs.bytes[i] as u64;
    }
    out.into_iter().filter(|l| l.1 > 0).collect()
}

#[test]
fn the_tree_at_the_peak_holds_the_live_bytes_by_stack() {
    for name in [
        "snap_small.pickle",
        "snap_multi.pickle",
        "snap_expandable.pickle",
    ] {
        let path = fixture(name);
        let (cap, snap) =
            tracetui::formats::snapshot::open(&path, Default::default()).expect("snapshot");
        let m = Memory::of(snap.model);
        for (i, v) in m.tracks.iter().enumerate() {
            let Some((t, peak)) = v.peak else { continue };
            let ids = live_at(&m.model.tracks[i], &v.live, t);
            let tree = live_tree(&cap, &m.model, i, &ids, &|f| frame_kept(&f.name, &f.file));
            assert_eq!(tree.tree.unit(), Unit::Bytes);
            let live: i64 = ids
                .iter()
                .map(|&k| m.model.tracks[i].allocs.bytes[k as usize])
                .sum();
            assert_eq!(live, peak, "{name} track {i}: the live set is the peak");
            assert_eq!(tree.tree.total(ROOT), live, "{name} track {i}");
            assert_eq!(tree.bytes, live);
            assert_eq!(tree.items, ids.len());
            assert_eq!(tree.tree.width(ROOT, Metric::Count), ids.len() as i64);
            let folded = fold(&tree.tree, &tree.names, Metric::SelfTime, TimeUnit::Us);
            assert_eq!(
                folded.lines,
                by_stack(&m.model, i, &ids),
                "{name} track {i}"
            );
        }
    }
}

#[test]
fn the_blocks_tree_folds_into_memory_viz_lines() {
    for name in ["snap_small", "snap_multi", "snap_expandable"] {
        let snap = tracetui::formats::snapshot::load(&fixture(&format!("{name}.pickle")))
            .expect("snapshot");
        let tree = folded_tree(&snap.folded_memory());
        // torch's `python -m torch.cuda._memory_viz memory` output, recorded beside the pickle.
        let oracle = std::fs::read_to_string(fixture(&format!("{name}.memory.txt"))).unwrap();
        let (want, bad) = tracetui::analysis::flame::folded::parse_sum(&oracle);
        assert!(bad.is_empty(), "{bad:?}");
        let want: Vec<(String, u64)> = want.into_iter().filter(|l| l.1 > 0).collect();
        let got = fold(&tree.tree, &tree.names, Metric::SelfTime, TimeUnit::Us);
        assert_eq!(got.lines, want, "{name}");
        // The same lines `tracetui memory --stacks` writes.
        let (cli, _) = tracetui::analysis::flame::folded::parse_sum(
            &snap
                .folded_memory()
                .iter()
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
        );
        let cli: Vec<(String, u64)> = cli.into_iter().filter(|l| l.1 > 0).collect();
        assert_eq!(got.lines, cli, "{name}");
        let sum: i64 = oracle
            .lines()
            .filter_map(|l| l.rsplit_once(' ')?.1.parse::<i64>().ok())
            .sum();
        assert_eq!(tree.tree.total(ROOT), sum, "{name}");
    }
}

#[test]
fn without_stacks_allocations_group_by_their_op_chain() {
    let path = fixture("kineto_memory.json");
    let cap = tracetui::formats::load(
        &path,
        tracetui::model::SourceInfo::default(),
        &Default::default(),
    )
    .expect("fixture");
    let m = Memory::build(&cap);
    let mut checked = 0;
    for (i, v) in m.tracks.iter().enumerate() {
        let Some((t, _)) = v.peak else { continue };
        let tr = &m.model.tracks[i];
        let ids = live_at(tr, &v.live, t);
        let tree = live_tree(&cap, &m.model, i, &ids, &|f| frame_kept(&f.name, &f.file));
        let live: i64 = ids.iter().map(|&k| tr.allocs.bytes[k as usize]).sum();
        assert_eq!(tree.tree.total(ROOT), live);
        // Each allocation without a call stack ends under its op, below the op's enclosing ops.
        for &k in &ids {
            if tr.allocs.stack[k as usize] != NO_STACK {
                continue;
            }
            checked += 1;
            let op = tr.allocs.op[k as usize];
            let mut names = Vec::new();
            let mut o = op;
            while o != NO_OP {
                names.push(cap.slice_name(o).to_string());
                o = cap.slices.parent[o as usize];
            }
            names.reverse();
            if names.is_empty() {
                names.push(NO_CONTEXT.to_string());
            }
            let ids: Vec<_> = names
                .iter()
                .map(|n| tree.names.lookup(n).expect("name interned"))
                .collect();
            let node = tree.tree.find_path(&ids).expect("path of the allocation");
            assert!(tree.tree.instances(node).contains(&k));
        }
    }
    assert!(checked > 0, "the fixture has allocations without a stack");
}

fn snapshot_app(name: &str, w: u16, h: u16) -> App {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cap = CaptureRef::from_file(&fixture(name), root);
    let (mut app, cmds) = App::new(vec![cap], (w, h), ColorMode::None);
    run_cmds(&mut app, cmds);
    assert_eq!(app.screen(), Screen::Timeline);
    app
}

fn flame(app: &App) -> &MemoryFlameView {
    app.views()
        .last()
        .and_then(|v| v.as_any().downcast_ref::<MemoryFlameView>())
        .expect("the bytes flame on top")
}

#[test]
fn f_in_the_memory_table_opens_the_bytes_flame_at_the_peak() {
    for (w, h) in [(80, 24), (160, 48)] {
        let mut a = snapshot_app("snap_multi.pickle", w, h);
        let l = a.loaded().unwrap().clone();
        let (_, peak) = l.memory().unwrap().tracks[0].peak.unwrap();
        a.update(key('M'));
        assert_eq!(a.top(), ViewKind::Table);
        a.update(key('F'));
        let f = flame(&a);
        assert_eq!(f.live, Live::Peak);
        assert_eq!(f.track, 0);
        assert_eq!(f.tree.tree.total(ROOT), peak);
        let s = screen(&a);
        assert!(s.contains("MiB"), "{s}");
        insta::assert_snapshot!(format!("bytes_flame_{w}x{h}"), s);
        // The table of the tree, in bytes.
        a.update(key('t'));
        insta::assert_snapshot!(format!("bytes_flame_{w}x{h}_table"), screen(&a));
        a.update(key('t'));
        // `c`: live at the cursor, then the blocks at snapshot time.
        a.update(key('c'));
        assert!(matches!(flame(&a).live, Live::At(_)));
        a.update(key('c'));
        assert_eq!(flame(&a).live, Live::Blocks);
        assert!(screen(&a).contains("blocks at snapshot time"));
        a.update(code(KeyCode::Esc));
        assert_eq!(a.top(), ViewKind::Table);
    }
}

#[test]
fn f_on_a_memory_row_of_the_timeline_opens_that_devices_bytes_flame() {
    let mut a = snapshot_app("snap_multi.pickle", 100, 30);
    let l = a.loaded().unwrap().clone();
    let m = l.memory().unwrap();
    // `^` puts the cursor on the allocated row of the device with the highest peak.
    a.update(key('^'));
    let Row::Memory { track, .. } = a.rows.list[a.rows.cursor] else {
        panic!("the cursor is on a memory row");
    };
    a.update(key('F'));
    let f = flame(&a);
    assert_eq!((f.track, f.live), (track as usize, Live::Peak));
    let (_, peak) = m.tracks[track as usize].peak.unwrap();
    assert_eq!(f.tree.tree.total(ROOT), peak);
    a.update(code(KeyCode::Esc));
    assert_eq!(a.top(), ViewKind::Timeline);
}
