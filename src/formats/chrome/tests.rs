//! Unit tests on tiny inline JSON.

use super::load_bytes;
use crate::formats::{LoadError, Progress};
use crate::model::*;

fn load(text: &str) -> Capture {
    try_load(text).unwrap_or_else(|e| panic!("load failed: {e}"))
}

fn try_load(text: &str) -> Result<Capture, LoadError> {
    load_bytes(text.as_bytes(), SourceInfo::default(), &Progress::default())
}

fn warning<'a>(c: &'a Capture, kind: &str) -> Option<&'a Warning> {
    c.warnings.iter().find(|w| w.kind == kind)
}

fn names(c: &Capture) -> Vec<&str> {
    (0..c.slices.len() as u32)
        .map(|i| c.slice_name(i))
        .collect()
}

#[test]
fn array_and_object_forms() {
    let ev = r#"{"ph":"X","name":"a","pid":1,"tid":2,"ts":1.5,"dur":2}"#;
    let a = load(&format!("\n  [{ev}]"));
    let o = load(&format!(
        "\n{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[{ev}]}}"
    ));
    for c in [&a, &o] {
        assert_eq!(c.slices.len(), 1);
        assert_eq!(c.slices.start[0], 1_500_000);
        assert_eq!(c.slices.dur[0], 2_000_000);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }
    assert_eq!(a.format, Some(Format::Chrome));
}

#[test]
fn b_e_nesting_and_unmatched() {
    let c = load(
        r#"[{"ph":"B","name":"outer","pid":1,"tid":1,"ts":0},
            {"ph":"B","name":"inner","pid":1,"tid":1,"ts":1},
            {"ph":"E","pid":1,"tid":1,"ts":2},
            {"ph":"E","pid":1,"tid":1,"ts":5},
            {"ph":"E","pid":1,"tid":1,"ts":6},
            {"ph":"B","name":"open","pid":1,"tid":1,"ts":7}]"#,
    );
    assert_eq!(names(&c), vec!["outer", "inner", "open"]);
    assert_eq!(c.slices.dur[0], 5_000_000);
    assert_eq!(c.depth(1), 1);
    assert_eq!(warning(&c, "unmatched_end").map(|w| w.count), Some(1));
    assert_eq!(warning(&c, "unmatched_begin").map(|w| w.count), Some(1));
}

#[test]
fn instants_counters_metadata() {
    let c = load(
        r#"[{"ph":"M","name":"process_name","pid":3,"args":{"name":"GPU 0"}},
            {"ph":"M","name":"process_labels","pid":3,"args":{"labels":"A100"}},
            {"ph":"M","name":"process_sort_index","pid":3,"args":{"sort_index":-2}},
            {"ph":"M","name":"thread_name","pid":3,"tid":7,"args":{"name":"stream 7 "}},
            {"ph":"M","name":"thread_sort_index","pid":3,"tid":7,"args":{"sort_index":9}},
            {"ph":"i","name":"mark","pid":1,"tid":1,"ts":3,"s":"g"},
            {"ph":"I","name":"old","pid":1,"tid":1,"ts":4},
            {"ph":"C","name":"mem","pid":1,"ts":5,"args":{"used":10,"free":"2.5"}},
            {"ph":"C","name":"mem","id":4,"pid":1,"ts":6,"args":{"used":11}},
            {"ph":"X","name":"k","cat":"misc","pid":3,"tid":7,"ts":1,"dur":1}]"#,
    );
    assert_eq!(c.instants.ts.len(), 2);
    let scopes: Vec<u8> = c.instants.scope.clone();
    assert!(scopes.contains(&b'g') && scopes.contains(&b't'));
    let series: Vec<(&str, usize)> = c
        .counters
        .iter()
        .map(|s| (c.strings.get(s.name), s.ts.len()))
        .collect();
    assert!(series.contains(&("mem used", 1)), "{series:?}");
    assert!(series.contains(&("mem free", 1)));
    assert!(series.contains(&("mem[4] used", 1)));
    let free = c
        .counters
        .iter()
        .find(|s| c.strings.get(s.name) == "mem free")
        .unwrap();
    assert_eq!(free.value[0], 2.5);
    let p = c.processes.iter().find(|p| p.key == Key::Int(3)).unwrap();
    assert_eq!(c.strings.get(p.name), "GPU 0");
    assert_eq!(c.strings.get(p.label), "A100");
    assert_eq!(p.sort_index, -2);
    assert_eq!(p.kind, ProcessKind::Gpu);
    let t = c.tracks.iter().find(|t| t.key == Key::Int(7)).unwrap();
    assert_eq!(c.strings.get(t.name), "stream 7 ");
    assert_eq!(t.sort_index, 9);
    // A `misc` event is no device activity: a CPU thread of the GPU process (issue 21), however
    // the process is named.
    assert_eq!(t.kind, TrackKind::Thread);
}

#[test]
fn flows_and_bind_ids() {
    let c = load(
        r#"[{"ph":"X","name":"launch","cat":"cuda_runtime","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":77}},
            {"ph":"s","id":77,"cat":"ac2g","name":"ac2g","pid":1,"tid":1,"ts":10},
            {"ph":"X","name":"kern","cat":"kernel","pid":0,"tid":7,"ts":20,"dur":3,"args":{"correlation":77}},
            {"ph":"f","id":77,"cat":"ac2g","name":"ac2g","pid":0,"tid":7,"ts":20,"bp":"e"},
            {"ph":"X","name":"a","pid":1,"tid":2,"ts":0,"dur":1,"bind_id":"0x10","flow_out":true},
            {"ph":"X","name":"b","pid":1,"tid":2,"ts":3,"dur":1,"bind_id":16,"flow_in":true}]"#,
    );
    assert_eq!(c.flows.len(), 2);
    let ac2g = c
        .flows
        .iter()
        .find(|f| c.strings.get(f.cat) == "ac2g")
        .unwrap();
    assert_eq!(c.slice_name(ac2g.from), "launch");
    assert_eq!(c.slice_name(ac2g.to), "kern");
    let bind = c.flows.iter().find(|f| f.id == 16).unwrap();
    assert_eq!(c.slice_name(bind.from), "a");
    assert_eq!(c.slice_name(bind.to), "b");
    let k = names(&c).iter().position(|n| *n == "kern").unwrap();
    assert_eq!(c.slices.corr[k], 77);
    assert_eq!(c.slices.kind(k), Category::Kernel);
    let tr = &c.tracks[c.track_of(k as u32) as usize];
    assert_eq!(tr.kind, TrackKind::GpuStream);
    assert_eq!(c.processes[tr.process as usize].kind, ProcessKind::Gpu);
    assert_eq!(c.format, Some(Format::Kineto));
}

#[test]
fn async_events() {
    let c = load(
        r#"[{"ph":"b","name":"req","cat":"net","id":"0x1","pid":1,"ts":1},
            {"ph":"n","name":"step","cat":"net","id":"0x1","pid":1,"ts":2},
            {"ph":"e","name":"req","cat":"net","id":"0x1","pid":1,"ts":4},
            {"ph":"S","name":"old","cat":"net","id2":{"local":"0x2"},"pid":1,"ts":5},
            {"ph":"F","name":"old","cat":"net","id2":{"local":"0x2"},"pid":1,"ts":9}]"#,
    );
    assert_eq!(names(&c), vec!["req", "old"]);
    assert_eq!(c.slices.dur[0], 3_000_000);
    assert_eq!(c.slices.dur[1], 4_000_000);
    let t = &c.tracks[c.track_of(0) as usize];
    assert_eq!(t.kind, TrackKind::Async);
    assert_eq!(c.instants.ts.len(), 1);
}

#[test]
fn skipped_phases_are_reported() {
    let c = load(
        r#"[{"ph":"P","pid":1,"tid":1,"ts":1},{"ph":"P","pid":1,"tid":1,"ts":2},
            {"ph":"O","pid":1,"ts":1,"id":"1"},{"ph":"v","pid":1,"ts":1},{}]"#,
    );
    let p = warning(&c, "skipped_phase_P").unwrap();
    assert_eq!(p.count, 2);
    assert!(p.message.contains("phase P"));
    assert_eq!(warning(&c, "skipped_phase_O").map(|w| w.count), Some(1));
    assert_eq!(warning(&c, "skipped_phase_v").map(|w| w.count), Some(1));
    assert!(
        warning(&c, "missing_phase").is_none(),
        "{{}} skipped silently"
    );
}

#[test]
fn exact_ns_from_decimal_us_and_absolute_origin() {
    let c = load(
        r#"[{"ph":"X","name":"a","pid":"25738","tid":"25738","ts":1712195495521131.125,"dur":0.5},
            {"ph":"X","name":"b","pid":25738,"tid":25738,"ts":1712195495521132.126,"dur":1}]"#,
    );
    assert_eq!(c.origin_epoch_ns, Some(1_712_195_495_521_131_125));
    assert_eq!(c.slices.start, vec![0, 1_001_000]);
    assert_eq!(c.slices.dur[0], 500_000);
    // Numeric-string pid/tid and integers are the same thread.
    assert_eq!(c.tracks.len(), 1);
    assert_eq!(c.processes[0].key, Key::Int(25738));
}

#[test]
fn base_time_after_trace_events() {
    let c = load(
        r#"{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":100.001,"dur":1}],
            "displayTimeUnit":"ms","baseTimeNanoseconds":1700000000000000000,"traceName":"x"}"#,
    );
    assert_eq!(c.origin_epoch_ns, Some(1_700_000_000_000_000_000));
    assert_eq!(c.slices.start[0], 100_001_000);
    assert_eq!(c.format, Some(Format::Kineto));
    let k = c.strings.lookup("traceName").unwrap();
    let v = c.args.get(c.metadata, k, &c.strings).unwrap();
    assert_eq!(v.display(&c.strings), "x");
}

#[test]
fn large_ints_exact() {
    let c = load(
        r#"[{"ph":"X","name":"a","pid":1,"tid":18446744073709551615,"ts":0,"dur":1,
             "args":{"big":9223372036854775807,"huge":18446744073709551615,"f":1.5,"s":"x","arr":[[1,2],[3]],"obj":{"k":"v"},"n":null,"t":true}}]"#,
    );
    assert_eq!(c.tracks.len(), 1);
    let key = c.tracks[0].key;
    match key {
        Key::Str(s) => assert_eq!(c.strings.get(s), "18446744073709551615"),
        Key::Int(_) => panic!("u64 tid must stay exact"),
    }
    let a = c.slices.args[0];
    let get = |k: &str| {
        c.args
            .get(a, c.strings.lookup(k).unwrap(), &c.strings)
            .unwrap()
    };
    assert_eq!(get("big"), ArgValue::I64(i64::MAX));
    assert_eq!(get("huge"), ArgValue::U64(u64::MAX));
    assert_eq!(get("f"), ArgValue::F64(1.5));
    assert_eq!(get("arr").display(&c.strings), "[[1,2],[3]]");
    assert_eq!(get("obj").display(&c.strings), r#"{"k":"v"}"#);
    assert_eq!(get("n"), ArgValue::Null);
    assert_eq!(get("t"), ArgValue::Bool(true));
}

#[test]
fn truncated_array_and_object() {
    let full = r#"
{"schemaVersion":1,"traceEvents":[
{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},
{"ph":"X","name":"b","pid":1,"tid":1,"ts":3,"dur":1},
{"ph":"X","name":"c","pid":1,"tid":1,"ts":5,"dur":1}
]}"#;
    let cut = full.find("\"c\"").unwrap();
    let c = load(&full[..cut]);
    assert_eq!(names(&c), vec!["a", "b"]);
    let w = warning(&c, "truncated").unwrap();
    assert!(w.message.contains(&format!("byte {cut}")), "{}", w.message);
    // Unterminated array with a trailing comma.
    let c = load("[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},\n");
    assert_eq!(names(&c), vec!["a"]);
    assert!(warning(&c, "truncated").is_some());
}

#[test]
fn xprof_trailing_placeholder() {
    let c = load(
        r#"{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[
            {"ph":"M","pid":701,"name":"process_name","args":{"name":"/host:CPU"}},
            {"ph":"X","pid":701,"tid":1,"ts":0.000001,"dur":1e-06,"name":"op","args":{"long_name":"op.1"}},{}]}"#,
    );
    assert_eq!(c.slices.len(), 1);
    assert_eq!(c.slices.dur[0], 1);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(c.processes[0].kind, ProcessKind::Host);
}

#[test]
fn bare_na_control_chars_invalid_utf8() {
    let text = b"[{\"ph\":\"X\",\"name\":\"a\x01b\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"x\":N/A,\"y\":\"\xffz\"}}]";
    let c = load_bytes(text, SourceInfo::default(), &Progress::default()).unwrap();
    assert_eq!(c.slices.len(), 1);
    assert_eq!(c.slice_name(0), "a\u{1}b");
    let a = c.slices.args[0];
    let x = c
        .args
        .get(a, c.strings.lookup("x").unwrap(), &c.strings)
        .unwrap();
    assert_eq!(x.display(&c.strings), "N/A");
    let y = c
        .args
        .get(a, c.strings.lookup("y").unwrap(), &c.strings)
        .unwrap();
    assert_eq!(y.display(&c.strings), "\u{fffd}z");
    let w = warning(&c, "repaired").unwrap();
    assert!(w.message.contains("1 bare"), "{}", w.message);
}

#[test]
fn not_a_trace_is_an_error_with_offset() {
    let e = try_load("hello").unwrap_err();
    assert_eq!(e.offset, Some(0));
    assert_eq!(e.kind, crate::formats::LoadErrorKind::NotATrace);
    let e = try_load("").unwrap_err();
    assert!(e.message.contains("empty file"), "{}", e.message);
    assert_eq!(e.kind, crate::formats::LoadErrorKind::NotATrace);
    let e = try_load("{\"a\":1}").unwrap_err();
    assert!(e.message.contains("traceEvents"), "{}", e.message);
    let e = try_load("[1,2]").unwrap_err();
    assert!(e.offset.is_some());
    let e = try_load("\n\n  {\"traceEvents\": [ {\"ph\": @}]}").unwrap_err();
    assert_eq!(e.offset, Some(29), "{e}");
}

#[test]
fn implausible_durations_and_record_window_end() {
    let c = load(
        r#"[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":700000000000},
            {"ph":"i","name":"Record Window End","s":"g","pid":"","tid":"","ts":90000000000}]"#,
    );
    assert_eq!(c.slices.len(), 1);
    assert_eq!(
        warning(&c, "implausible_duration").map(|w| w.count),
        Some(1)
    );
    assert!(warning(&c, "implausible_record_window_end").is_some());
}

#[test]
fn cancel_stops_loading() {
    let mut text = String::from("[");
    for i in 0..10_000 {
        text.push_str(&format!(
            "{{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":{i},\"dur\":1}},"
        ));
    }
    let p = Progress::default();
    p.cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    let e = load_bytes(text.as_bytes(), SourceInfo::default(), &p).unwrap_err();
    assert!(e.is_cancelled(), "{e}");
}

#[test]
fn gzip_stream_and_truncated_gzip() {
    use std::io::Write;
    let mut text = String::from("{\"traceEvents\":[");
    for i in 0..3000 {
        text.push_str(&format!(
            "{{\"ph\":\"X\",\"name\":\"n{}\",\"pid\":1,\"tid\":1,\"ts\":{i}.5,\"dur\":0.25}},",
            i % 7
        ));
    }
    text.push_str("{}]}");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let c = load_bytes(&gz, SourceInfo::default(), &Progress::default()).unwrap();
    assert_eq!(c.slices.len(), 3000);
    assert_eq!(c.slices.start[1], 1_500_000);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let cut = &gz[..gz.len() / 2];
    let c = load_bytes(cut, SourceInfo::default(), &Progress::default()).unwrap();
    assert!(!c.slices.is_empty() && c.slices.len() < 3000);
    assert!(warning(&c, "truncated").is_some(), "{:?}", c.warnings);
}

#[test]
fn repair_works_on_gzip_stream_too() {
    use std::io::Write;
    let text = b"[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"v\":N/A}},\n{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1}]";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text).unwrap();
    let gz = gz.finish().unwrap();
    let c = load_bytes(&gz, SourceInfo::default(), &Progress::default()).unwrap();
    assert_eq!(names(&c), vec!["a", "b"]);
    assert!(warning(&c, "repaired").is_some());
}

#[test]
fn legacy_kineto_2021_shapes() {
    let c = load(
        r#"{"schemaVersion":1,"traceEvents":[
            {"ph":"X","cat":"Operator","name":"aten::mm","pid":25738,"tid":"25738","ts":1623142623531625,"dur":20,"args":{"external id":5}},
            {"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":25738,"tid":"25738","ts":1623142623531630,"dur":5,"args":{"correlation":9,"external id":5}},
            {"ph":"X","cat":"Kernel","name":"sgemm","pid":0,"tid":"stream 7","ts":1623142623531650,"dur":10,"args":{"correlation":9,"external id":5,"stream":7}},
            {"ph":"s","cat":"async","id":9,"pid":25738,"tid":25738,"ts":1623142623531630},
            {"ph":"f","cat":"async","id":9,"pid":0,"tid":"stream 7","ts":1623142623531650,"bp":"e"}]}"#,
    );
    assert_eq!(c.format, Some(Format::Kineto));
    assert_eq!(c.origin_epoch_ns, Some(1_623_142_623_531_625_000));
    let host = c
        .processes
        .iter()
        .position(|p| p.key == Key::Int(25738))
        .unwrap();
    // String tid "25738" and int 25738 are one thread.
    assert_eq!(
        c.tracks
            .iter()
            .filter(|t| t.process as usize == host)
            .count(),
        1
    );
    let k = names(&c).iter().position(|n| *n == "sgemm").unwrap();
    assert_eq!(c.slices.kind(k), Category::Kernel);
    assert_eq!(c.slices.corr[k], 9);
    let tr = &c.tracks[c.track_of(k as u32) as usize];
    assert_eq!(tr.kind, TrackKind::GpuStream);
    assert_eq!(c.flows.len(), 1);
    assert_eq!(c.slice_name(c.flows[0].from), "cudaLaunchKernel");
    assert_eq!(c.slice_name(c.flows[0].to), "sgemm");
}

#[test]
fn extreme_times_are_skipped_not_overflowed() {
    let c = load(
        r#"[{"ph":"X","name":"c","pid":1,"tid":1,"ts":2,"dur":1},
            {"ph":"B","name":"a","pid":1,"tid":1,"ts":-5000000000000},
            {"ph":"E","pid":1,"tid":1,"ts":5000000000000},
            {"ph":"X","name":"b","pid":1,"tid":1,"ts":1,"dur":9e30}]"#,
    );
    assert_eq!(names(&c), vec!["c"]);
    assert_eq!(
        warning(&c, "timestamp_out_of_range").map(|w| w.count),
        Some(2)
    );
    assert_eq!(warning(&c, "bad_timestamp").map(|w| w.count), Some(1));
}

/// Fuzz find: invalid UTF-8 makes the repair pass lengthen the text (U+FFFD is 3 bytes), and an
/// error of the repaired parse was reported at an offset past the end of the file.
#[test]
fn error_after_repair_points_into_the_file() {
    let mut t = br#"[{"name": "a", "ph": "X", "pid": 1, "ts": 1, "cat": "x", "n[me": "g"#.to_vec();
    t.extend(std::iter::repeat_n(0xff, 120));
    t.extend_from_slice(br#"uce", "pid": 1074, , "ts": 9560, "ph": "E"}]"#);
    let e = load_bytes(&t, SourceInfo::default(), &Progress::default()).unwrap_err();
    assert!(e.offset.is_some_and(|o| o <= t.len() as u64), "{e}");
}

#[test]
fn preview_keeps_the_complete_events_of_a_prefix() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chrome");
    for (name, prefix) in [
        ("alexnet_cuda_sync.json.gz", 20_000),
        ("tall_trace.json", 1500),
    ] {
        let path = dir.join(name);
        let whole = super::load(&path, SourceInfo::default(), &Progress::default()).unwrap();
        let part = super::preview::preview_with(&path, SourceInfo::default(), 0, prefix).unwrap();
        assert!(
            !part.slices.is_empty() && part.slices.len() < whole.slices.len(),
            "{name}"
        );
        assert!(
            part.warnings.iter().any(|w| w.kind == "truncated"),
            "{name}"
        );
        // Small files get no preview at the real threshold.
        assert!(super::preview(&path, SourceInfo::default()).is_none());
    }
}

#[test]
fn gz_inflated_while_parsed_equals_the_plain_parse() {
    use std::io::{Read, Write};
    let mut v = Vec::new();
    crate::synth::kineto::write_kineto_trace(&mut v, 40_000, 3).unwrap();
    let d = tempfile::tempdir().unwrap();
    let gz_path = d.path().join("t.pt.trace.json.gz");
    // Stored blocks: the compressed file is as big as the text, above the overlap threshold.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
    enc.write_all(&v).unwrap();
    let gz = enc.finish().unwrap();
    std::fs::write(&gz_path, &gz).unwrap();
    let src = SourceInfo::default();
    let p = Progress::default();
    let plain = load_bytes(&v, src.clone(), &p).unwrap();
    let over = super::load::load_gz_overlapped(&gz_path, &src, None, &p, gz.len() as u64)
        .expect("overlapped path taken")
        .unwrap();
    assert_eq!(format!("{:?}", plain.slices), format!("{:?}", over.slices));
    assert_eq!(format!("{:?}", plain.flows), format!("{:?}", over.flows));
    assert_eq!(plain.warnings, over.warnings);
    // A cut gzip: what inflated is parsed (truncated), plus the gzip error.
    let cut = &gz[..gz.len() * 2 / 3];
    std::fs::write(&gz_path, cut).unwrap();
    let mut prefix = Vec::new();
    let _ = flate2::read::MultiGzDecoder::new(cut).read_to_end(&mut prefix);
    let want = load_bytes(&prefix, src.clone(), &p).unwrap();
    let got = super::load::load_gz_overlapped(&gz_path, &src, None, &p, cut.len() as u64)
        .expect("overlapped path taken")
        .unwrap();
    assert_eq!(format!("{:?}", want.slices), format!("{:?}", got.slices));
    assert!(got.warnings.iter().any(|w| w.kind == "gzip_error"));
    assert!(got.warnings.iter().any(|w| w.kind == "truncated"));
}

#[test]
fn chunked_parse_of_a_growing_input_equals_the_sequential_parse() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let mut v = Vec::new();
    crate::synth::kineto::write_kineto_trace(&mut v, 3000, 5).unwrap();
    let p = Progress::default();
    let seq = load_bytes(&v, SourceInfo::default(), &p).unwrap();
    for (grow, chunk) in [(997usize, 4096usize), (50_000, 20_000), (3001, 100_000)] {
        // Each look reveals `grow` more bytes, as an inflating writer would.
        let seen = AtomicUsize::new(0);
        let avail = || {
            let n = seen.fetch_add(grow, Ordering::Relaxed) + grow;
            (n.min(v.len()), n >= v.len())
        };
        let par =
            super::chunks::parse(&v, &SourceInfo::default(), None, &p, chunk, 2, Some(&avail))
                .expect("chunked path declined");
        assert!(
            format!("{seq:?}") == format!("{par:?}"),
            "grow {grow}, chunk {chunk}"
        );
    }
}

#[test]
fn negative_pid_goes_after_the_real_processes() {
    // Kineto's `pid -1` (CUPTI Overhead) first in the file, with and without a sort index.
    for meta in [
        "",
        r#"{"ph":"M","name":"process_sort_index","pid":-1,"args":{"sort_index":-1}},"#,
    ] {
        let text = format!(
            r#"[{{"ph":"M","name":"process_name","pid":-1,"args":{{"name":"CUPTI Overhead"}}}},
                {meta}
                {{"ph":"X","name":"Activity Buffer Request","cat":"overhead","pid":-1,"tid":0,"ts":1,"dur":1}},
                {{"ph":"M","name":"process_sort_index","pid":571,"args":{{"sort_index":571}}}},
                {{"ph":"X","name":"step","cat":"cpu_op","pid":571,"tid":571,"ts":2,"dur":5}},
                {{"ph":"M","name":"process_labels","pid":0,"args":{{"labels":"GPU 0"}}}},
                {{"ph":"M","name":"process_sort_index","pid":0,"args":{{"sort_index":5000000}}}},
                {{"ph":"X","name":"k","cat":"kernel","pid":0,"tid":7,"ts":3,"dur":1}}]"#
        );
        let c = load(&text);
        let mut order: Vec<&crate::model::Process> = c.processes.iter().collect();
        order.sort_by_key(|p| p.sort_index);
        let keys: Vec<Key> = order.iter().map(|p| p.key).collect();
        assert_eq!(keys, [Key::Int(571), Key::Int(0), Key::Int(-1)], "{meta}");
    }
}
