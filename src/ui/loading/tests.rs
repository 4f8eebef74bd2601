//! Unit tests of the loading screen and load bookkeeping.

use super::*;
use crate::model::{Format, SourceInfo};

fn cref(name: &str) -> CaptureRef {
    CaptureRef {
        source: SourceInfo {
            path: name.into(),
            ..SourceInfo::default()
        },
        format: None,
        modified: None,
        span: None,
    }
}

fn at(run: &str, host: &str, format: Format, secs: u64) -> CaptureRef {
    CaptureRef {
        source: SourceInfo {
            path: format!("{run}/{host}.{secs}").into(),
            run: run.into(),
            host: host.into(),
            ..SourceInfo::default()
        },
        format: Some(format),
        modified: Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs)),
        span: None,
    }
}

fn hosts(e: &Entries) -> Vec<String> {
    e.iter()
        .map(|x| format!("{}.{:?}", x.capture.source.host, x.capture.format))
        .collect()
}

#[test]
fn hosts_in_numeric_order_traces_before_memory_profiles() {
    use crate::model::Format::{Kineto, Snapshot, XPlane};
    // Text order from discovery: worker0, worker1, worker10, worker2.
    let e = Entries::new(
        ["worker0", "worker1", "worker10", "worker2"]
            .iter()
            .map(|h| at("run", h, Kineto, 10))
            .collect(),
    );
    let names: Vec<&str> = e.iter().map(|x| x.capture.source.host.as_str()).collect();
    assert_eq!(names, ["worker0", "worker1", "worker2", "worker10"]);
    // A JAX session: the memory profile written last is not the first (preselected) entry.
    let e = Entries::new(vec![
        at("s1", "vm", XPlane, 10),
        at("s1", "device_memory", Snapshot, 20),
    ]);
    assert_eq!(
        hosts(&e),
        ["vm.Some(XPlane)", "device_memory.Some(Snapshot)"]
    );
    // … also when the profile is listed in a run of its own (the log dir's root).
    let e = Entries::new(vec![
        at("", "device_memory", Snapshot, 20),
        at("s1", "vm", XPlane, 10),
    ]);
    assert_eq!(
        hosts(&e),
        ["vm.Some(XPlane)", "device_memory.Some(Snapshot)"]
    );
    assert!(natural_key("w10") > natural_key("w9"));
    assert!(natural_key("w") < natural_key("w0"));
}

#[test]
fn a_capture_added_later_goes_where_newest_first_puts_it() {
    use crate::model::Format::Kineto;
    let mut e = Entries::new(vec![
        at("old", "worker0", Kineto, 5),
        at("run", "worker0", Kineto, 10),
        at("run", "worker0", Kineto, 20),
    ]);
    e.current = Some(2);
    assert_eq!(e[2].capture.source.path, Path::new("old/worker0.5"));
    let i = e.insert(e.len(), at("run", "worker0", Kineto, 30), true);
    let moved = e.reorder();
    assert_eq!(moved[i], 0);
    let paths: Vec<String> = e
        .iter()
        .map(|x| x.capture.source.path.display().to_string())
        .collect();
    assert_eq!(
        paths,
        [
            "run/worker0.30",
            "run/worker0.20",
            "run/worker0.10",
            "old/worker0.5"
        ]
    );
    // The open entry is still the one it was.
    assert_eq!(e.current, Some(3));
}

#[test]
fn capture_ids_survive_entries_moving_around_them() {
    let mut e = Entries::new(vec![cref("a"), cref("b"), cref("c")]);
    let b = e.id_of(1).unwrap();
    let c = e.id_of(2).unwrap();
    let new = e.insert(0, cref("n"), false);
    let n = e.id_of(new).unwrap();
    assert_eq!(e.index_of(b), Some(2));
    assert!(n != b && n != c && Some(n) != e.id_of(1));
    assert!(e.remove(e.index_of(b).unwrap(), &mut Vec::new()));
    assert_eq!(e.index_of(b), None);
    assert_eq!(e.index_of(c), Some(2));
    assert_eq!(
        e.entry(c).map(|x| x.capture.source.path.clone()),
        Some("c".into())
    );
    // Nothing loaded yet: no model to draw.
    assert!(e.capture(c).is_none());
}

/// Opens entry `i` and completes its load with a demo capture.
fn load(e: &mut Entries, i: usize) {
    let (_, job) = e.open(i).unwrap();
    let j = job.unwrap();
    let l = Loaded::new(
        crate::ui::demo::capture(4, 4, false),
        std::time::Instant::now(),
    );
    assert!(e.finish(j.generation, j.entry, EntryState::Ready(Arc::new(l))));
}

#[test]
fn the_budget_drops_least_recently_used_and_spares_pinned() {
    let mut e = Entries::new(vec![cref("a"), cref("b"), cref("c")]);
    for i in 0..3 {
        load(&mut e, i);
    }
    assert_eq!(e.loaded_count(), 3);
    let one = e[0].bytes;
    assert!(one > 0);
    // Room for two: a (oldest) is pinned by a view, so b goes; c is shown.
    e.budget = 2 * one + one / 2;
    e.set_pinned(vec![e[0].id]);
    assert_eq!(e.enforce_budget(), vec![e[1].id]);
    assert!(matches!(e[1].state, EntryState::Idle) && e[1].bytes == 0);
    // Nothing pinned: a is dropped next when the budget shrinks.
    e.set_pinned(Vec::new());
    e.budget = one;
    assert_eq!(e.enforce_budget(), vec![e[0].id]);
    assert_eq!(e.current, Some(2));
    assert_eq!(e.loaded_bytes(), e[2].bytes);
}

#[test]
fn at_most_one_job_per_core_runs_at_once() {
    let mut e = Entries::new(vec![cref("a"), cref("b"), cref("c")]);
    e.max_jobs = 2;
    let (cancel, a) = e.open(0).unwrap();
    assert!(cancel.is_empty() && a.is_some());
    let (cancel, b) = e.open(1).unwrap();
    // Two cores: the first job keeps running beside the second.
    assert!(cancel.is_empty() && b.is_some());
    assert!(matches!(e[0].state, EntryState::Loading(_)));
    let (cancel, c) = e.open(2).unwrap();
    // A third: the least recently opened job (a's) is cancelled.
    assert_eq!(cancel.len(), 1);
    assert!(matches!(e[0].state, EntryState::Idle));
    assert!(matches!(e[1].state, EntryState::Loading(_)));
    // Its late result is dropped; b's still lands although c is newer.
    let (a, b, c) = (a.unwrap(), b.unwrap(), c.unwrap());
    assert!(Arc::ptr_eq(&cancel[0], &a.progress));
    assert!(!e.finish(a.generation, a.entry, EntryState::Failed("late".into())));
    assert!(e.finish(b.generation, b.entry, EntryState::Failed("x".into())));
    assert!(e.finish(c.generation, c.entry, EntryState::Failed("y".into())));
    assert!(!e.any_loading());
}
