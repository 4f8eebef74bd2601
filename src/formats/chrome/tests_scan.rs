//! The scanner against serde on generated events full of edge cases: the chunked load (scanner
//! first, serde for what it declines) must build exactly the capture of the sequential serde
//! load, or both must decline/fail alike.

use super::load::{load_bytes, load_bytes_chunked};
use crate::formats::progress::Progress;
use crate::model::SourceInfo;
use proptest::prelude::*;

pub(super) fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_string()),
        Just("-0".to_string()),
        Just("-7".to_string()),
        Just("1.5".to_string()),
        Just("2e3".to_string()),
        Just("-1.25E-2".to_string()),
        Just("18446744073709551615".to_string()),
        Just("18446744073709551616".to_string()),
        Just("9223372036854775808".to_string()),
        Just("-9223372036854775808".to_string()),
        Just("-9223372036854775809".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        Just("null".to_string()),
        Just("\"\"".to_string()),
        Just("\"x\"".to_string()),
        Just("\"42\"".to_string()),
        Just("\" 7 \"".to_string()),
        Just("\"0x1F\"".to_string()),
        Just("\"caf\u{e9} \u{2603}\"".to_string()),
        Just("\"tab\\there\"".to_string()),
        Just("\"q\\\"uote\"".to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just("[1, [2, \"a b\"], {\"k\": null}]".to_string()),
        Just("[1.5, 2]".to_string()),
        Just("{\"local\": 5}".to_string()),
        Just("[ [ [ ] ] ]".to_string()),
        "[a-z]{0,12}".prop_map(|s| format!("\"{s}\"")),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        (0u64..1 << 53, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b:03}")),
    ]
}

fn key() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("ph"),
        Just("name"),
        Just("cat"),
        Just("pid"),
        Just("tid"),
        Just("ts"),
        Just("dur"),
        Just("id"),
        Just("id2"),
        Just("s"),
        Just("bp"),
        Just("bind_id"),
        Just("flow_in"),
        Just("flow_out"),
        Just("other"),
    ]
}

fn event() -> impl Strategy<Value = String> {
    let ph = prop_oneof![
        Just("X"),
        Just("B"),
        Just("E"),
        Just("i"),
        Just("C"),
        Just("s"),
        Just("f"),
        Just("b"),
        Just("M"),
        Just("")
    ];
    let extra = proptest::collection::vec((key(), value()), 0..4);
    let args = proptest::collection::vec(
        (
            prop_oneof![
                Just("correlation"),
                Just("External id"),
                Just("name"),
                Just("a"),
                Just("b")
            ],
            value(),
        ),
        0..5,
    );
    let ws = prop_oneof![Just(""), Just(" "), Just("\n    ")];
    // Values that repeat from event to event (kept by the scanner after their gaps) beside
    // ones that differ in one byte or in length; times of 6, 13 and 16 integer digits.
    let cat = prop_oneof![
        Just("kernel"),
        Just("cpu_op"),
        Just("cuda_runtime"),
        Just("gpu_user_annotation"),
        Just("a_category_longer_than_24_bytes"),
        Just("kernel2"),
    ];
    let base = prop_oneof![
        Just(0u64),
        Just(4_917_085_587_000),
        Just(1_712_195_495_000_000)
    ];
    let pid = prop_oneof![
        Just(1u64),
        Just(1102),
        Just(11020),
        Just(123_456_789_012_345_678)
    ];
    (
        (ph, 0u64..1_000_000, 0u64..500, extra, proptest::option::of(args), ws),
        (cat, base, pid),
    )
        .prop_map(|((ph, ts, dur, extra, args, w), (cat, base, pid))| {
            let mut e = format!(
                "{{{w}\"ph\":{w}\"{ph}\", \"name\": \"n{}\", \"cat\": \"{cat}\", \"pid\": {pid}, \"tid\": {}, \"ts\": {}.{:03}, \"dur\": {dur}",
                ts % 7,
                ts % 3,
                base + ts,
                ts % 1000
            );
            for (k, v) in extra {
                e.push_str(&format!(",{w}\"{k}\":{w}{v}"));
            }
            if let Some(args) = args {
                e.push_str(", \"args\": {");
                for (i, (k, v)) in args.iter().enumerate() {
                    if i > 0 {
                        e.push(',');
                    }
                    e.push_str(&format!("{w}\"{k}\": {v}"));
                }
                e.push('}');
            }
            e.push('}');
            e
        })
}

/// A small real-shaped trace, mutated byte by byte below.
fn base_trace() -> Vec<u8> {
    let mut v = Vec::new();
    crate::synth::kineto::write_kineto_trace(&mut v, 60, 11).unwrap();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]
    /// Differential fuzzing: damaged traces never panic either path, and whenever the chunked
    /// path (scanner first) accepts one, it builds exactly what serde builds.
    #[test]
    fn mutated_traces_agree_or_decline(
        edits in proptest::collection::vec(
            (any::<proptest::sample::Index>(), proptest::sample::select(
                &b"\"\\{}[],:0-.eE+ \n\x01\x7f\xc3\xa9\xffatfnx"[..],
            )),
            1..6,
        )
    ) {
        let mut text = base_trace();
        for (at, byte) in edits {
            let i = at.index(text.len());
            text[i] = byte;
        }
        let p = Progress::default();
        let seq = load_bytes(&text, SourceInfo::default(), &p)
            .map(|s| format!("{s:?}"))
            .map_err(|e| e.to_string());
        // 700-byte chunks on two threads, and one chunk (the scanner's learned key layouts
        // reused across the whole text).
        for (chunk, threads) in [(700, 2), (1 << 20, 1)] {
            if let Some(c) = load_bytes_chunked(&text, SourceInfo::default(), &p, chunk, threads) {
                prop_assert!(seq.is_ok(), "chunks loaded, serde failed: {seq:?}");
                if let Ok(s) = &seq {
                    prop_assert!(*s == format!("{c:?}"), "chunked capture differs (chunk {chunk})");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn scanner_builds_what_serde_builds(events in proptest::collection::vec(event(), 1..40)) {
        // Small chunks (a fresh scanner every event or two) and one chunk (the scanner's learned
        // key layouts reused, and relearned where the whitespace changes).
        chunked_equals_serde(&events, &[(200, 2), (1 << 20, 1)])?;
    }
}

/// The chunked load of `events` (a `traceEvents` array) with each (chunk bytes, threads) of
/// `configs` builds exactly the capture of the sequential serde load, or both fail.
pub(super) fn chunked_equals_serde(
    events: &[String],
    configs: &[(usize, usize)],
) -> Result<(), TestCaseError> {
    let text = format!("{{\"traceEvents\": [\n  {}\n]}}", events.join(",\n  "));
    let p = Progress::default();
    let seq = load_bytes(text.as_bytes(), SourceInfo::default(), &p)
        .map(|s| format!("{s:?}"))
        .map_err(|e| e.to_string());
    for &(chunk, threads) in configs {
        let par = load_bytes_chunked(text.as_bytes(), SourceInfo::default(), &p, chunk, threads);
        match (&seq, par) {
            (Ok(s), Some(c)) => prop_assert!(*s == format!("{c:?}"), "chunk {chunk}: {text}"),
            (Ok(_), None) => prop_assert!(false, "chunked path declined valid input: {text}"),
            (Err(_), None) => {}
            (Err(e), Some(_)) => {
                prop_assert!(false, "serde failed ({e}) but chunks loaded: {text}")
            }
        }
    }
    Ok(())
}

/// Integer `ts` read whole by the scanner keeps serde's limit (at most i64::MAX µs).
#[test]
fn whole_integer_times_at_the_limit() {
    for ts in [
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "12",
    ] {
        let text = format!(
            "{{\"traceEvents\": [\n  {{\"ph\":\"X\", \"name\": \"n\", \"pid\": 1, \"tid\": 0, \"ts\": 0.5, \"dur\": 1, \"ts\": {ts}}},\n  {{\"ph\":\"X\", \"name\": \"m\", \"pid\": 1, \"tid\": 0, \"ts\": 3, \"dur\": 2.25}}\n]}}"
        );
        let p = Progress::default();
        let seq = load_bytes(text.as_bytes(), SourceInfo::default(), &p).unwrap();
        let par = load_bytes_chunked(text.as_bytes(), SourceInfo::default(), &p, 60, 2).unwrap();
        assert_eq!(format!("{seq:?}"), format!("{par:?}"), "{ts}");
    }
}
