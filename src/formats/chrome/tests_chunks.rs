//! The chunk-parallel parse against the sequential one: generated Kineto traces, B/E pairs cut
//! by tiny chunks, every fixture, defects that must make it decline.

use super::chunks::MIN_BYTES;
use super::load::{load_bytes, load_bytes_chunked};
use crate::formats::progress::Progress;
use crate::model::SourceInfo;
use std::io::Read;

/// Sequential and chunked loads of `text` (chunked forced with `chunk` bytes, `threads`).
fn both(text: &[u8], chunk: usize, threads: usize) -> (String, Option<String>) {
    let src = SourceInfo::default();
    let p = Progress::default();
    let seq = load_bytes(text, src.clone(), &p).unwrap();
    let par = load_bytes_chunked(text, src, &p, chunk, threads);
    (format!("{seq:?}"), par.map(|c| format!("{c:?}")))
}

fn assert_same(text: &[u8], chunk: usize, threads: usize) {
    let (seq, par) = both(text, chunk, threads);
    let par = par.unwrap_or_else(|| panic!("chunked path declined (chunk {chunk})"));
    assert!(
        seq == par,
        "chunked capture differs (chunk {chunk}, {threads} threads)"
    );
}

#[test]
fn generated_kineto_identical() {
    for seed in [1u64, 7, 42] {
        let mut v = Vec::new();
        crate::synth::kineto::write_kineto_trace(&mut v, 3000, seed).unwrap();
        for (chunk, threads) in [(1 << 20, 2), (4096, 2), (777, 3), (100, 1)] {
            assert_same(&v, chunk, threads);
        }
    }
}

#[test]
fn seeded_chunks_identical() {
    // Chunks parsed after a replay start from the loader's strings: a first part whose strings
    // all repeat (chunks with no new string append their args arena as it is), then one where
    // every event brings new names, keys and values (the ids past the seed are mapped).
    let mut t = String::from("{\"traceEvents\":[\n");
    for i in 0..3000u32 {
        let fresh = i >= 2000;
        let name = if fresh {
            format!("new{i}")
        } else {
            format!("op{}", i % 7)
        };
        let key = if fresh && i % 3 == 0 {
            format!("k{i}")
        } else {
            "External id".into()
        };
        t.push_str(&format!(
            "{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"{name}\",\"pid\":1,\"tid\":{},\"ts\":{}.5,\"dur\":1,\"args\":{{\"{key}\":{i},\"s\":\"v{}\",\"f\":0.25}}}},\n",
            i % 2,
            10 * i,
            if fresh { i } else { i % 5 }
        ));
    }
    t.push_str("{}]}");
    for (chunk, threads) in [(2000, 2), (9000, 2), (30_000, 3)] {
        assert_same(t.as_bytes(), chunk, threads);
    }
}

#[test]
fn repeated_args_objects_identical() {
    // Several `args` objects in one event (the last wins, as in serde): the later ones relearn
    // key gaps the earlier ones' keys were read in, which must not give a key another's id.
    let mut t = String::from("{\"traceEvents\":[\n");
    for i in 0..2000u32 {
        let args = match i % 4 {
            0 => "\"args\": {\"a\": 1}, \"args\": {\"bb\": 2}, \"args\": {\"ccc\": 3}".to_string(),
            1 => "\"args\": {\"ccc\": 4}, \"args\": {\"a\": 5}".to_string(),
            2 => format!("\"args\": {{\"a\": {i}, \"bb\": \"x\"}}"),
            _ => "\"args\": {\"bb\": 6}, \"args\": {}, \"args\": {\"a\": 7}".to_string(),
        };
        t.push_str(&format!(
            "{{\"ph\": \"X\", \"name\": \"n{}\", \"pid\": 1, \"tid\": 1, \"ts\": {i}, \"dur\": 1, {args}}},\n",
            i % 3
        ));
    }
    t.push_str("{}]}");
    for (chunk, threads) in [(3000, 2), (20_000, 2), (1 << 20, 2)] {
        assert_same(t.as_bytes(), chunk, threads);
    }
}

#[test]
fn begin_end_across_chunks_identical() {
    // Nested B/E on 3 threads with counters, flows and instants; small chunks cut pairs.
    let mut t = String::from("{\"traceEvents\":[");
    let mut ts = 0u64;
    for i in 0..400 {
        let tid = i % 3;
        for d in 0..3 {
            ts += 1;
            t.push_str(&format!(
                "{{\"ph\":\"B\",\"name\":\"f{d}_{}\",\"cat\":\"c\",\"pid\":1,\"tid\":{tid},\"ts\":{ts},\"args\":{{\"k{d}\":\"v{i}\",\"n\":[1,{{\"x\":{i}}}]}}}},",
                i % 17
            ));
        }
        t.push_str(&format!(
            "{{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":{ts},\"args\":{{\"bytes\":{i}}}}},\n"
        ));
        t.push_str(&format!(
            "{{\"ph\":\"s\",\"id\":{i},\"name\":\"fl\",\"cat\":\"ac2g\",\"pid\":1,\"tid\":{tid},\"ts\":{ts}}},"
        ));
        for _ in 0..3 {
            ts += 2;
            t.push_str(&format!(
                "{{\"ph\":\"E\",\"pid\":1,\"tid\":{tid},\"ts\":{ts}}},"
            ));
        }
        t.push_str(&format!(
            "{{\"ph\":\"i\",\"name\":\"m{i}\",\"s\":\"g\",\"pid\":\"{}\",\"tid\":\"x\",\"ts\":{ts}}},",
            100 + i % 2
        ));
    }
    t.push_str("{\"ph\":\"E\",\"pid\":1,\"tid\":9,\"ts\":1},{\"ph\":\"B\",\"name\":\"open\",\"pid\":1,\"tid\":0,\"ts\":5},{\"ph\":\"Q\"}],\"baseTimeNanoseconds\":1000}");
    for (chunk, threads) in [(64, 2), (500, 2), (3000, 3), (1 << 20, 2)] {
        assert_same(t.as_bytes(), chunk, threads);
    }
}

#[test]
fn fixtures_identical() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chrome");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let name = path.to_string_lossy().to_string();
        let mut bytes = std::fs::read(&path).unwrap();
        if name.ends_with(".gz") {
            let mut v = Vec::new();
            flate2::read::MultiGzDecoder::new(&bytes[..])
                .read_to_end(&mut v)
                .unwrap();
            bytes = v;
        } else if !name.ends_with(".json") {
            continue;
        }
        let (seq, par) = both(&bytes, 1000, 2);
        if let Some(par) = par {
            assert!(seq == par, "{name}: chunked capture differs");
            n += 1;
        }
    }
    assert!(n >= 8, "chunked path ran on only {n} fixtures");
}

#[test]
fn fidelity_fixtures_identical() {
    // Counter ids as written, B/E out of order, sampled stacks, device rows (issue 21).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fidelity");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let p = Progress::default();
        let Ok(seq) = load_bytes(&bytes, SourceInfo::default(), &p) else {
            continue;
        };
        for chunk in [40, 300] {
            if let Some(par) = load_bytes_chunked(&bytes, SourceInfo::default(), &p, chunk, 2) {
                assert!(
                    format!("{seq:?}") == format!("{par:?}"),
                    "{}: chunked capture differs",
                    path.display()
                );
                n += 1;
            }
        }
    }
    assert!(n >= 10, "chunked path ran {n} times");
}

#[test]
fn defects_fall_back() {
    // A "},{" inside a string picked as a boundary, truncation, syntax errors, repairable
    // tokens, an empty array: the chunked path declines; the sequential path decides.
    let mut t = String::from("[");
    for i in 0..200 {
        t.push_str(&format!(
            "{{\"ph\":\"X\",\"name\":\"a}},{{b{i}\",\"pid\":1,\"tid\":1,\"ts\":{i},\"dur\":1}},"
        ));
    }
    t.push_str("{}]");
    let (_, par) = both(t.as_bytes(), 10, 2);
    assert!(par.is_none());
    let cut = &t.as_bytes()[..t.len() / 2];
    let p = Progress::default();
    assert!(load_bytes_chunked(cut, SourceInfo::default(), &p, 100, 2).is_none());
    for bad in [
        "[{\"ph\":\"X\",\"ts\":1},{\"ph\":\"X\",\"ts\":N/A},{\"ph\":\"i\",\"ts\":1}]",
        "[{\"ph\":\"X\",\"ts\":1},,{\"ph\":\"i\",\"ts\":1}]",
        "[{\"ph\":\"X\",\"ts\":1},{\"ph\":\"i\",\"ts\":1},]",
        "{\"traceEvents\":[]}",
        "{\"traceEvents\":{}}",
    ] {
        assert!(
            load_bytes_chunked(bad.as_bytes(), SourceInfo::default(), &p, 1, 2).is_none(),
            "{bad}"
        );
    }
}

#[test]
fn default_path_on_big_input_matches_streaming_parse() {
    // Above MIN_BYTES `load_bytes` takes the parallel path (or its fallback, for the cut
    // text); gzip input goes through the sequential reader path: both must agree.
    use std::io::Write as _;
    let mut v = Vec::new();
    crate::synth::kineto::write_kineto_trace(&mut v, 34_000, 9).unwrap();
    assert!(v.len() > MIN_BYTES, "{}", v.len());
    for text in [&v[..], &v[..v.len() * 2 / 3]] {
        let p = Progress::default();
        let fast = load_bytes(text, SourceInfo::default(), &p).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text).unwrap();
        let gz = gz.finish().unwrap();
        let slow = load_bytes(&gz, SourceInfo::default(), &p).unwrap();
        assert!(format!("{fast:?}") == format!("{slow:?}"));
        assert_eq!(
            fast.warnings.iter().any(|w| w.kind == "truncated"),
            text.len() < v.len()
        );
    }
}
