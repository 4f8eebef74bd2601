//! Whole-event shapes ([`super::shape`]) against serde: events of a few fixed layouts whose
//! values vary — mostly in the form the layout was learned with, sometimes any edge case
//! (another type, escapes, exponents, `-0`, huge integers) — and whose whitespace sometimes
//! changes. The chunked load (shapes first, then the field-by-field scanner, then serde) must
//! build exactly the capture of the sequential serde load.

use super::apply::Loader;
use super::raw::RawEvent;
use super::scan::{Plan, event};
use super::tests_scan::{chunked_equals_serde, value};
use crate::formats::progress::Progress;
use proptest::prelude::*;

/// Layouts with `@` for each value; `~` is replaced by the event's whitespace variant.
const LAYOUTS: [&str; 5] = [
    "{~\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": @, \"pid\": @, \"tid\": @,\n    \"ts\": @, \"dur\": @,\n    \"args\": {\n      \"External id\": @,\"Ev Idx\": @\n    }\n  }",
    "{~\"ph\": \"f\", \"id\": @, \"pid\": @, \"tid\": @, \"ts\": @, \"cat\": \"ac2g\", \"name\": @, \"bp\": \"e\"}",
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": @, \"pid\": @, \"tid\": @, \"ts\": @, \"dur\": @,~\"args\": {\"correlation\": @, \"stream\": @, \"kernel name\": @}}",
    "{\"ph\": \"C\", \"name\": @, \"pid\": @, \"id\": @, \"ts\": @, \"args\": {~\"v\": @}}",
    "{\"ph\": \"s\", \"bind_id\": @, \"flow_out\": true, \"pid\": @, \"tid\": @, \"ts\": @,~\"args\": {}}",
];

/// What a `@` of a layout holds.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Name,
    Int,
    Ts,
    Dur,
}

/// The slot after `before` (a layout's text up to a `@`), by the key that ends it.
fn slot(before: &str) -> Slot {
    let key = before.rsplit('"').nth(1).unwrap_or("");
    match key {
        "ts" => Slot::Ts,
        "dur" => Slot::Dur,
        k if k.ends_with("name") => Slot::Name,
        _ => Slot::Int,
    }
}

/// A value in the layout's usual form, or (one time in seven) any edge case.
fn typical(slot: Slot) -> BoxedStrategy<String> {
    let usual = match slot {
        Slot::Name => prop_oneof![
            Just("\"aten::mm\"".to_string()),
            Just("\"ac2g\"".to_string()),
            "[a-z:_]{0,30}".prop_map(|s| format!("\"{s}\"")),
        ]
        .boxed(),
        Slot::Int => prop_oneof![Just(1102u64), 0u64..100_000, 1u64..10]
            .prop_map(|v| v.to_string())
            .boxed(),
        Slot::Ts => (1_712_195_495_000_000u64..1_712_195_496_000_000, 0u32..1000)
            .prop_map(|(a, b)| format!("{a}.{b:03}"))
            .boxed(),
        Slot::Dur => prop_oneof![
            (0u32..100_000, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b:03}")),
            (0u32..1000).prop_map(|a| a.to_string()),
        ]
        .boxed(),
    };
    prop_oneof![6 => usual, 1 => value()].boxed()
}

/// One event: a layout, its values, its whitespace variant.
fn event_text() -> impl Strategy<Value = String> {
    (0..LAYOUTS.len(), 0..8u8).prop_flat_map(|(l, w)| {
        let parts: Vec<&str> = LAYOUTS[l].split('@').collect();
        let values: Vec<BoxedStrategy<String>> = parts
            .iter()
            .take(parts.len() - 1)
            .map(|before| typical(slot(before)))
            .collect();
        values.prop_map(move |vals| {
            // Mostly the usual whitespace; sometimes none or more.
            let ws = match w {
                0 => "",
                1 => "  ",
                _ => " ",
            };
            let mut out = String::new();
            let mut vals = vals.iter();
            for part in LAYOUTS[l].replace('~', ws).split('@').enumerate() {
                if part.0 > 0 {
                    out.push_str(vals.next().map_or("0", |v| v.as_str()));
                }
                out.push_str(part.1);
            }
            out
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn shapes_build_what_serde_builds(events in proptest::collection::vec(event_text(), 1..60)) {
        // One chunk (shapes learned once, matched by every later event of the layout), and
        // small chunks (shapes learned anew in each).
        chunked_equals_serde(&events, &[(1 << 20, 1), (400, 2)])?;
    }
}

/// Runs the scanner over `events` (joined by `, `) with one plan: the ends it returned, and
/// how many events shapes took and how many shapes were learned.
fn scan_all(events: &[&str]) -> (Vec<usize>, u64, u64) {
    let text = format!("{}{}", events.join(", "), " ".repeat(64));
    let b = text.as_bytes();
    let p = Progress::default();
    let mut ld = Loader::new(&p);
    let mut plan = Plan::default();
    let mut ev = RawEvent::default();
    let mut ends = Vec::new();
    let mut i = 0;
    for e in events {
        let end = event(&mut ld, &mut plan, &mut ev, b, i).unwrap_or(0);
        ends.push(end.saturating_sub(i));
        i += e.len() + 2;
    }
    (ends, plan.shapes.hits, plan.shapes.learned)
}

#[test]
fn repeated_layouts_are_read_as_shapes() {
    let x = r#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 10.5, "dur": 3, "args": {"correlation": 7}}"#;
    let x2 = r#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 3, "ts": 1234.25, "dur": 30, "args": {"correlation": 1234567}}"#;
    let s =
        r#"{"ph": "s", "id": 7, "pid": 1, "tid": 2, "ts": 10.5, "cat": "ac2g", "name": "ac2g"}"#;
    // Another value type at `pid`, an escape in `name`, an exponent in `dur`, one more space:
    // each read field by field (and each a new shape).
    let pid_str = r#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": "p", "tid": 2, "ts": 10.5, "dur": 3, "args": {"correlation": 7}}"#;
    let escaped = r#"{"ph": "X", "cat": "cuda_runtime", "name": "cuda\"x", "pid": 1, "tid": 2, "ts": 10.5, "dur": 3, "args": {"correlation": 7}}"#;
    let exp = r#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 10.5, "dur": 3e2, "args": {"correlation": 7}}"#;
    let spaced = r#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 10.5, "dur": 3,  "args": {"correlation": 7}}"#;
    let events = [x, s, x2, s, x, pid_str, escaped, exp, spaced, x2];
    let (ends, hits, learned) = scan_all(&events);
    // Every event read, to its end (the escaped one is left to serde).
    let want: Vec<usize> = events
        .iter()
        .map(|e| if *e == escaped { 0 } else { e.len() })
        .collect();
    assert_eq!(ends, want);
    // x2, s, x and the last x2 matched a shape; the first two and the four odd ones did not.
    assert_eq!(hits, 4);
    // x, s and the spaced one became shapes; the other odd ones cannot be matched as shapes.
    assert_eq!(learned, 3);
}
