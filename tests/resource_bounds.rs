//! Resource bounds on hostile input: length fields claiming 2 GiB in a 1 KB file, deep nesting,
//! an event cap. A counting allocator records the largest single allocation while a load runs.
//! (1 M tracks, millions of names and a 100 MB string are measured by `benches/resource_bounds.rs`.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use tracetui::formats::{LoadErrorKind, Progress, chrome, xplane};
use tracetui::model::SourceInfo;

struct Counting;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only records sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LARGEST.fetch_max(l.size(), Ordering::Relaxed);
        // SAFETY: same layout, same contract.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: allocated by `alloc` above with `l`.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        LARGEST.fetch_max(n, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Tests that measure allocations run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Largest single allocation made by `f`.
fn largest_alloc<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    LARGEST.store(0, Ordering::Relaxed);
    let r = f();
    (r, LARGEST.load(Ordering::Relaxed))
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn field(num: u64, payload: &[u8], out: &mut Vec<u8>) {
    varint(num << 3 | 2, out);
    varint(payload.len() as u64, out);
    out.extend_from_slice(payload);
}

fn src(name: &str) -> SourceInfo {
    SourceInfo {
        path: name.into(),
        ..SourceInfo::default()
    }
}

const MIB: usize = 1 << 20;

#[test]
fn xplane_length_of_2gib_in_1kb_allocates_nothing_big() {
    // Top level: XSpace.planes claiming 2 GiB, then 1 KB of payload.
    let mut b = vec![0x0a];
    varint(2 << 30, &mut b);
    b.extend(std::iter::repeat_n(0x08, 1024));
    let (r, big) =
        largest_alloc(|| xplane::load_bytes(&b, src("a.xplane.pb"), &Progress::default()));
    let e = r.expect_err("must fail");
    // 2 GiB is past protobuf's message limit: corrupt, not a cut file (issue 21).
    assert_eq!(e.kind, LoadErrorKind::Corrupt, "{e}");
    assert_eq!(e.offset, Some(1));
    assert!(big < MIB, "largest allocation {big} bytes");

    // Nested: a complete plane whose event metadata's name claims 2 GiB (decoded by prost).
    let mut name = vec![0x12];
    varint(2 << 30, &mut name);
    name.extend(std::iter::repeat_n(b'x', 1000));
    let mut entry = Vec::new();
    varint(1 << 3, &mut entry); // key = 1
    entry.push(1);
    field(2, &name, &mut entry);
    let mut plane = Vec::new();
    field(2, b"/host:CPU", &mut plane);
    field(4, &entry, &mut plane);
    let mut space = Vec::new();
    field(1, &plane, &mut space);
    let (r, big) =
        largest_alloc(|| xplane::load_bytes(&space, src("b.xplane.pb"), &Progress::default()));
    let e = r.expect_err("must fail");
    assert_eq!(e.kind, LoadErrorKind::Corrupt, "{e}");
    assert!(e.offset.is_some_and(|o| o < space.len() as u64), "{e}");
    assert!(big < MIB, "largest allocation {big} bytes");
}

#[test]
fn json_huge_numbers_and_lengths_allocate_nothing_big() {
    // A number with 1e9 digits is not spelled out; a count field claiming 2^31 elements means
    // nothing to JSON: only the text's own size matters.
    let text = br#"{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":2147483648,"ts":1e300,"dur":2147483648000,"args":{"n":99999999999999999999999999999}}]}"#;
    let (r, big) = largest_alloc(|| chrome::load_bytes(text, src("c.json"), &Progress::default()));
    if let Err(e) = r {
        assert!(e.offset.is_some(), "{e}");
    }
    assert!(big < MIB, "largest allocation {big} bytes");
}

/// 100 k levels of nesting, at the top and inside `args`: an error or a load, never a stack
/// overflow (serde_json stops at depth 128).
#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let depth = 100_000;
    let top = "[".repeat(depth);
    let r = chrome::load_bytes(top.as_bytes(), src("d.json"), &Progress::default());
    let e = r.expect_err("not a trace");
    assert_eq!(e.kind, LoadErrorKind::Corrupt, "{e}");

    let mut t = String::from(
        r#"{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},{"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":1,"args":{"a":"#,
    );
    t.push_str(&"[".repeat(depth));
    t.push_str(&"]".repeat(depth));
    t.push_str("}}]}");
    match chrome::load_bytes(t.as_bytes(), src("e.json"), &Progress::default()) {
        Ok(c) => assert!(c.event_count() >= 1),
        Err(e) => assert!(e.offset.is_some(), "{e}"),
    }
    // XPlane is walked with loops, not recursion: 10 k nested messages are skipped fields.
    let mut b = Vec::new();
    for _ in 0..10_000 {
        b = {
            let mut o = Vec::new();
            field(1, &b, &mut o);
            o
        };
    }
    let r = xplane::load_bytes(&b, src("f.xplane.pb"), &Progress::default());
    assert_eq!(r.map(|c| c.event_count()).ok(), Some(0));
}

#[test]
fn event_cap_keeps_the_first_events_and_says_so() {
    let mut t = String::from("[");
    for i in 0..1000 {
        if i > 0 {
            t.push(',');
        }
        t.push_str(&format!(
            r#"{{"ph":"X","name":"n{}","pid":1,"tid":{},"ts":{i},"dur":1}}"#,
            i % 7,
            i % 3
        ));
    }
    t.push(']');
    let p = Progress::default();
    p.max_events.store(100, Ordering::Relaxed);
    let c = chrome::load_bytes(t.as_bytes(), src("g.json"), &p).expect("load");
    assert_eq!(c.slices.len(), 100);
    let w = c
        .warnings
        .iter()
        .find(|w| w.kind == "capped")
        .expect("capped warning");
    assert_eq!(w.count, 900);
    assert!(
        w.message
            .contains("kept the first 100 events of 1000 (10.0%)"),
        "{}",
        w.message
    );
    // Exactly at the cap: nothing left out, no warning.
    p.max_events.store(1000, Ordering::Relaxed);
    let c = chrome::load_bytes(t.as_bytes(), src("g.json"), &p).expect("load");
    assert_eq!(c.slices.len(), 1000);
    assert!(c.warnings.iter().all(|w| w.kind != "capped"));

    // XPlane: whole lines in file order.
    let vm = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/xplane/vm.xplane.pb"),
    )
    .expect("fixture");
    let full = xplane::load_bytes(&vm, src("vm.xplane.pb"), &Progress::default()).expect("load");
    let p = Progress::default();
    p.max_events.store(1000, Ordering::Relaxed);
    let c = xplane::load_bytes(&vm, src("vm.xplane.pb"), &p).expect("load");
    let w = c
        .warnings
        .iter()
        .find(|w| w.kind == "capped")
        .expect("capped warning");
    assert!(w.message.contains("whole XLines"), "{}", w.message);
    assert!(c.slices.len() < full.slices.len());
}

/// Peak resident memory of this process so far (`VmHWM`), bytes.
fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// Loads `text`, printing time, events and the peak RSS; returns the capture's event count.
fn measure(what: &str, text: &[u8]) -> u64 {
    // Reset the peak to the current RSS (Linux: "5" to clear_refs) so each figure is its own.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let t = std::time::Instant::now();
    let before = peak_rss();
    let c = chrome::load_bytes(text, src("big.json"), &Progress::default()).expect("load");
    let n = c.event_count();
    println!(
        "{what}: {} MB of JSON, {n} events, {} tracks, {:.2} s, peak RSS {} MB (was {} MB)",
        text.len() >> 20,
        c.tracks.len(),
        t.elapsed().as_secs_f64(),
        peak_rss() >> 20,
        before >> 20
    );
    n
}

/// 1 M tracks (one event per thread id). `cargo test --release --test resource_bounds -- --ignored --nocapture`
#[test]
#[ignore = "big: run by hand for the figures in docs/robustness.md"]
fn one_million_tracks() {
    let mut t = String::from("[");
    for i in 0..1_000_000u32 {
        if i > 0 {
            t.push(',');
        }
        t.push_str(&format!(
            r#"{{"ph":"X","name":"a","pid":1,"tid":{i},"ts":{i},"dur":1}}"#
        ));
    }
    t.push(']');
    assert_eq!(measure("1M tracks", t.as_bytes()), 1_000_000);
}

/// Millions of distinct names (`TRACETUI_NAMES`, default 2 M; 10 M needs ≈ 5 GB free).
#[test]
#[ignore = "big: run by hand for the figures in docs/robustness.md"]
fn millions_of_distinct_names() {
    let n: u32 = std::env::var("TRACETUI_NAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let mut t = String::from("[");
    for i in 0..n {
        if i > 0 {
            t.push(',');
        }
        t.push_str(&format!(
            r#"{{"ph":"X","name":"kernel_{i:08x}","pid":1,"tid":1,"ts":{i},"dur":1}}"#
        ));
    }
    t.push(']');
    assert_eq!(measure("distinct names", t.as_bytes()), u64::from(n));
}

/// One 100 MB event name.
#[test]
#[ignore = "big: run by hand for the figures in docs/robustness.md"]
fn one_hundred_megabyte_string() {
    let mut t = String::from(r#"[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":""#);
    t.push_str(&"x".repeat(100 << 20));
    t.push_str(r#""}]"#);
    assert_eq!(measure("100 MB name", t.as_bytes()), 1);
}
