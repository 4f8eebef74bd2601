//! XPlane decoding on small XSpaces built with the prost types: negative ids, missing ids, ref
//! values, duplicate stats, unknown fields, packed/unpacked child_id, merged lines, aggregated
//! events, flows, epoch timestamps, derived lines; and a proptest that hostile or truncated
//! input never panics.

use proptest::prelude::*;
use prost::Message;
use std::collections::HashMap;
use tracetui::formats::xplane::generated::{
    XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata, x_event, x_stat,
};
use tracetui::formats::{Progress, xplane};
use tracetui::model::{ArgValue, Capture, ProcessKind, SourceInfo, TrackKind};

fn stat(mid: i64, v: x_stat::Value) -> XStat {
    XStat {
        metadata_id: mid,
        value: Some(v),
    }
}

fn ev(mid: i64, off: i64, dur: i64, stats: Vec<XStat>) -> XEvent {
    XEvent {
        metadata_id: mid,
        duration_ps: dur,
        stats,
        data: Some(x_event::Data::OffsetPs(off)),
    }
}

fn line(id: i64, name: &str, ts_ns: i64, events: Vec<XEvent>) -> XLine {
    XLine {
        id,
        name: name.into(),
        timestamp_ns: ts_ns,
        events,
        ..XLine::default()
    }
}

fn plane(name: &str, stat_names: &[(i64, &str)], ev_names: &[(i64, &str, &str)]) -> XPlane {
    let mut p = XPlane {
        name: name.into(),
        ..XPlane::default()
    };
    for &(id, n) in stat_names {
        p.stat_metadata.insert(
            id,
            XStatMetadata {
                id,
                name: n.into(),
                description: String::new(),
            },
        );
    }
    for &(id, n, d) in ev_names {
        p.event_metadata.insert(
            id,
            XEventMetadata {
                id,
                name: n.into(),
                display_name: d.into(),
                ..XEventMetadata::default()
            },
        );
    }
    p
}

fn decode(space: &XSpace) -> Capture {
    xplane::load_bytes(
        &space.encode_to_vec(),
        SourceInfo::default(),
        &Progress::default(),
    )
    .expect("decodes")
}

fn args_of(c: &Capture, slice: usize) -> Vec<(String, String)> {
    c.args
        .iter(c.slices.args[slice], &c.strings)
        .map(|(k, v)| (c.strings.get(k).to_string(), v.display(&c.strings)))
        .collect()
}

fn find_slice(c: &Capture, name: &str) -> usize {
    (0..c.slices.len())
        .find(|&i| c.slice_name(i as u32) == name)
        .unwrap_or_else(|| panic!("no slice {name}"))
}

#[test]
fn host_plane_ids_names_stats_and_time() {
    let mut p = plane(
        "/host:CPU",
        &[
            (1, "run_id"),
            (2, "hlo_module"),
            (3, "_src"),
            (4, "blob"),
            (500, "jit_f"),
        ],
        &[(1, "outer_full", "outer"), (-7, "inner", "")],
    );
    p.event_metadata.get_mut(&1).unwrap().stats =
        vec![stat(3, x_stat::Value::StrValue("meta.cc".into()))];
    // a negative 64-bit line id, two XLines with the same id (merged), events out of order
    let id = -7463936026403061607i64;
    p.lines.push(line(
        id,
        "worker",
        1000,
        vec![ev(
            -7,
            2_000,
            500,
            vec![
                stat(1, x_stat::Value::Int64Value(-783796365)),
                stat(2, x_stat::Value::RefValue(500)),
                stat(3, x_stat::Value::StrValue("a.cc".into())),
                stat(3, x_stat::Value::StrValue("b.cc".into())),
                stat(4, x_stat::Value::BytesValue(vec![0; 9])),
                stat(99, x_stat::Value::DoubleValue(2.5)),
            ],
        )],
    ));
    p.lines
        .push(line(id, "worker", 1000, vec![ev(1, 1_000, 10_000, vec![])]));
    let space = XSpace {
        planes: vec![p],
        ..XSpace::default()
    };
    let c = decode(&space);
    assert_eq!(c.processes.len(), 1);
    assert_eq!(c.processes[0].kind, ProcessKind::Host);
    let tracks: Vec<_> = c
        .tracks
        .iter()
        .filter(|t| t.kind == TrackKind::XLine)
        .collect();
    assert_eq!(tracks.len(), 1, "same line id merges");
    assert_eq!(tracks[0].slice_count(), 2);
    assert_eq!(tracks[0].max_depth, 1, "inner nests in outer");
    // time: line ts ns * 1000 + offset ps (relative capture: origin 0)
    let outer = find_slice(&c, "outer");
    let inner = find_slice(&c, "inner");
    assert_eq!(c.slices.start[outer], 1_000_000 + 1_000);
    assert_eq!(c.slices.start[inner], 1_000_000 + 2_000);
    assert_eq!(c.slices.dur[inner], 500);
    assert_eq!(c.origin_epoch_ns, None);
    // stats: negative int, ref resolved, duplicates kept in order, bytes as length, unknown stat
    // metadata id gives an empty name
    let a = args_of(&c, inner);
    assert_eq!(a[0], ("run_id".into(), "-783796365".into()));
    assert_eq!(a[1], ("hlo_module".into(), "jit_f".into()));
    assert_eq!(a[2], ("_src".into(), "a.cc".into()));
    assert_eq!(a[3], ("_src".into(), "b.cc".into()));
    assert_eq!(a[4], ("blob".into(), "<opaque 9 bytes>".into()));
    assert_eq!(a[5], ("".into(), "2.5".into()));
    // metadata stats + long_name inherited by the event
    let a = args_of(&c, outer);
    assert!(a.contains(&("_src".into(), "meta.cc".into())), "{a:?}");
    assert!(
        a.contains(&("long_name".into(), "outer_full".into())),
        "{a:?}"
    );
}

#[test]
fn epoch_timestamps_task_environment_and_metadata_plane() {
    let epoch_ns = 1_763_000_000_000_000_000i64;
    let mut host = plane("/host:CPU", &[], &[(1, "a", "")]);
    host.lines
        .push(line(1, "t", epoch_ns + 10, vec![ev(1, 5, 1, vec![])]));
    host.lines
        .push(line(2, "u", epoch_ns, vec![ev(1, 0, 1, vec![])]));
    let mut meta = plane(
        "/host:metadata",
        &[(1, "program_id"), (2, "Hlo Proto")],
        &[(7, "jit_step(3)", "")],
    );
    meta.event_metadata.get_mut(&7).unwrap().stats = vec![
        stat(1, x_stat::Value::Int64Value(42)),
        stat(2, x_stat::Value::BytesValue(vec![1, 2, 3])),
    ];
    let mut env = plane("Task Environment", &[(1, "profile_start_time")], &[]);
    env.stats = vec![stat(1, x_stat::Value::Uint64Value(epoch_ns as u64))];
    let c = decode(&XSpace {
        planes: vec![host, meta, env],
        hostnames: vec!["vm".into()],
        errors: vec!["boom".into()],
        ..XSpace::default()
    });
    assert_eq!(c.origin_epoch_ns, Some(epoch_ns));
    let t = find_slice(&c, "a");
    let starts: Vec<i64> = c.slices.start.clone();
    assert!(
        starts.contains(&(10_000 + 5)) && starts.contains(&0),
        "{starts:?} {t}"
    );
    let hidden: Vec<bool> = c.processes.iter().map(|p| p.hidden).collect();
    assert_eq!(hidden, vec![false, true, true]);
    let md: HashMap<String, String> = c
        .args
        .iter(c.metadata, &c.strings)
        .map(|(k, v)| (c.strings.get(k).to_string(), v.display(&c.strings)))
        .collect();
    assert_eq!(
        md.get("hlo_module:42").map(String::as_str),
        Some("jit_step(3)")
    );
    assert_eq!(md.get("hostnames").map(String::as_str), Some("vm"));
    assert!(md.contains_key("profile_start_time"));
    assert!(c.warnings.iter().any(|w| w.kind == "xspace_error"));
}

#[test]
fn gpu_plane_gets_derived_lines_launch_stats_flows_and_aggregates() {
    let sn = [
        (1, "correlation_id"),
        (2, "hlo_op"),
        (3, "hlo_module"),
        (4, "kernel_details"),
        (5, "group_id"),
        (6, "flow"),
        (7, "device_id"),
        (8, "step_name"),
        (100, "fusion.1"),
        (101, "outer::inner"),
        (102, "jit_train"),
    ];
    let mut gpu = plane(
        "/device:GPU:0",
        &sn,
        &[(1, "kernel_a", ""), (2, "kernel_b", ""), (3, "memcpy", "")],
    );
    let k = |mid, off, dur, op: u64, corr: u64| {
        ev(
            mid,
            off,
            dur,
            vec![
                stat(1, x_stat::Value::Uint64Value(corr)),
                stat(2, x_stat::Value::RefValue(op)),
                stat(3, x_stat::Value::RefValue(102)),
                stat(4, x_stat::Value::StrValue("regs:32".into())),
                stat(5, x_stat::Value::Int64Value(9)),
            ],
        )
    };
    let flow_in = (77u64 << 2) | 1;
    let mut k3 = k(1, 300, 100, 101, 3);
    k3.stats.push(stat(6, x_stat::Value::Uint64Value(flow_in)));
    gpu.lines.push(line(
        134,
        "Stream #134(Compute)",
        0,
        vec![
            k(1, 0, 100, 100, 1),
            k(2, 150, 100, 100, 2),
            k3,
            ev(3, 500, 10, vec![stat(5, x_stat::Value::Int64Value(9))]),
            XEvent {
                metadata_id: 1,
                duration_ps: 1000,
                stats: vec![],
                data: Some(x_event::Data::NumOccurrences(5)),
            },
        ],
    ));
    let mut host = plane(
        "/host:CPU",
        &sn,
        &[(1, "cudaLaunchKernel", "launch"), (2, "Op", "")],
    );
    let flow_out = (77u64 << 2) | 2;
    host.lines.push(line(
        1,
        "python",
        0,
        vec![
            ev(
                2,
                0,
                10,
                vec![
                    stat(5, x_stat::Value::Int64Value(9)),
                    stat(8, x_stat::Value::StrValue("train_step".into())),
                ],
            ),
            ev(
                1,
                0,
                3_000_000,
                vec![
                    stat(1, x_stat::Value::Uint64Value(1)),
                    stat(5, x_stat::Value::Int64Value(9)),
                    stat(7, x_stat::Value::Int64Value(0)),
                    stat(6, x_stat::Value::Uint64Value(flow_out)),
                ],
            ),
        ],
    ));
    let c = decode(&XSpace {
        planes: vec![host, gpu],
        ..XSpace::default()
    });
    let track = |name: &str| {
        c.tracks
            .iter()
            .enumerate()
            .find(|(t, _)| c.track_name(*t as u32) == name)
            .map(|(_, tr)| tr.clone())
            .unwrap_or_else(|| panic!("no track {name}"))
    };
    let names = |name: &str| -> Vec<(String, i64, i64)> {
        let (lo, hi) = track(name).slices;
        (lo..hi)
            .map(|i| {
                (
                    c.slice_name(i).to_string(),
                    c.slices.start[i as usize],
                    c.slices.dur[i as usize],
                )
            })
            .collect()
    };
    // XProf 2.24 derives per stream: `<line> - from #<stream id>`; a step is named by its
    // step name.
    assert_eq!(track("XLA Ops - from #134").kind, TrackKind::Derived);
    assert_eq!(
        names("XLA Ops - from #134"),
        vec![
            ("fusion.1".into(), 0, 250),
            ("outer".into(), 300, 100),
            ("inner".into(), 300, 100)
        ]
    );
    assert_eq!(
        names("XLA Modules - from #134"),
        vec![("jit_train".into(), 0, 400)]
    );
    assert_eq!(names("Steps"), vec![("train_step".into(), 0, 510)]);
    let (lo, _) = track("Steps").slices;
    assert!(args_of(&c, lo as usize).contains(&("step_name".into(), "train_step".into())));
    // no Launch Stats: the only host event with device_id is named `cu…` (skipped, as upstream)
    assert!(
        c.tracks
            .iter()
            .all(|t| c.strings.get(t.name) != "Launch Stats")
    );
    // aggregated event listed, not drawn
    assert_eq!(c.aggregated.len(), 1);
    assert_eq!(c.aggregated[0].occurrences, 5);
    // categories and correlation
    let ka = find_slice(&c, "kernel_a");
    assert_eq!(c.slices.corr[ka], 1);
    assert!(c.slices.kind(ka).is_device());
    // flow: host launch (out) → kernel (in)
    assert_eq!(c.flows.len(), 1);
    let f = c.flows[0];
    assert_eq!(f.id, 77);
    assert_eq!(c.slice_name(f.from), "launch");
    assert_eq!(c.slice_name(f.to), "kernel_a");
    // the args value for the ref stat is a string
    let k = c.strings.lookup("hlo_op").unwrap();
    assert!(matches!(
        c.args.get(c.slices.args[ka], k, &c.strings),
        Some(ArgValue::Str(_))
    ));
}

#[test]
fn launch_stats_from_host_launches() {
    // Launches nested in a step root (`_r`, as JAX's StepTraceAnnotation writes) are grouped
    // by it; Launch Stats count them per device and group.
    let sn = [
        (1, "correlation_id"),
        (5, "step_num"),
        (7, "device_id"),
        (9, "_r"),
    ];
    let gpu = {
        let mut g = plane("/device:GPU:0", &sn, &[(1, "k", "")]);
        g.lines
            .push(line(1, "Stream #1", 0, vec![ev(1, 0, 5, vec![])]));
        g
    };
    let mut host = plane(
        "/host:CPU",
        &sn,
        &[(1, "LaunchKernel", ""), (2, "train", "")],
    );
    let launch = |off, dur| {
        ev(
            1,
            off,
            dur,
            vec![
                stat(1, x_stat::Value::Uint64Value(1)),
                stat(7, x_stat::Value::Uint64Value(0)),
            ],
        )
    };
    let root = ev(
        2,
        0,
        10_000_000,
        vec![
            stat(9, x_stat::Value::Int64Value(1)),
            stat(5, x_stat::Value::Int64Value(3)),
        ],
    );
    host.lines.push(line(
        1,
        "t",
        0,
        vec![root, launch(0, 2_000_000), launch(5_000_000, 4_000_000)],
    ));
    let c = decode(&XSpace {
        planes: vec![gpu, host],
        ..XSpace::default()
    });
    let (t, tr) = c
        .tracks
        .iter()
        .enumerate()
        .find(|(t, _)| c.track_name(*t as u32) == "Launch Stats")
        .expect("Launch Stats line");
    assert_eq!(tr.kind, TrackKind::Derived);
    assert_eq!(c.processes[tr.process as usize].kind, ProcessKind::Gpu);
    let s = tr.slices.0 as usize;
    assert_eq!(c.slice_name(s as u32), "Launch Stats for train 3");
    assert_eq!((c.slices.start[s], c.slices.dur[s]), (0, 9_000_000));
    let a = args_of(&c, s);
    assert!(
        a.contains(&("num_launches".into(), "2".into())),
        "{a:?} {t}"
    );
    assert!(
        a.contains(&("avg_launch_time_us".into(), "3".into())),
        "{a:?}"
    );
}

/// Appends raw unknown fields and a packed/unpacked child_id to encoded messages.
#[test]
fn unknown_fields_and_child_id_encodings() {
    let mut p = plane("/device:CUSTOM:X", &[(1, "s")], &[]);
    // metadata with unpacked child_id written by hand: field 6 varint twice + unknown field 15
    let mut meta_bytes = XEventMetadata {
        id: 1,
        name: "m".into(),
        ..XEventMetadata::default()
    }
    .encode_to_vec();
    meta_bytes.extend_from_slice(&[0x30, 0x05, 0x30, 0x06, 0x78, 0x01]);
    let decoded = XEventMetadata::decode(meta_bytes.as_slice()).expect("unpacked child_id");
    assert_eq!(decoded.child_id, vec![5, 6]);
    let packed = XEventMetadata {
        child_id: vec![-1, 2],
        ..decoded.clone()
    };
    assert_eq!(
        XEventMetadata::decode(packed.encode_to_vec().as_slice())
            .unwrap()
            .child_id,
        vec![-1, 2]
    );
    p.event_metadata.insert(1, decoded);
    p.lines.push(line(
        -5,
        "",
        0,
        vec![ev(
            1,
            0,
            1,
            vec![stat(1, x_stat::Value::CompressedStrValue(vec![1, 2]))],
        )],
    ));
    let mut bytes = XSpace {
        planes: vec![p],
        ..XSpace::default()
    }
    .encode_to_vec();
    // unknown XSpace fields: 9 (varint) and 10 (length-delimited)
    bytes.extend_from_slice(&[0x48, 0x01, 0x52, 0x02, 0xaa, 0xbb]);
    let c = xplane::load_bytes(&bytes, SourceInfo::default(), &Progress::default()).unwrap();
    assert_eq!(c.processes[0].kind, ProcessKind::Device);
    assert_eq!(c.slices.len(), 1);
    assert_eq!(
        args_of(&c, 0),
        vec![("s".into(), "<opaque 2 bytes>".into())]
    );
    // the unnamed line keeps a key-based name
    assert_eq!(c.track_name(0), "thread -5");
}

#[test]
fn gzip_input_and_errors() {
    let mut p = plane("/host:CPU", &[], &[(1, "a", "")]);
    p.lines.push(line(1, "t", 0, vec![ev(1, 0, 1, vec![])]));
    let bytes = XSpace {
        planes: vec![p],
        ..XSpace::default()
    }
    .encode_to_vec();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &bytes).unwrap();
    let gz = gz.finish().unwrap();
    let c = xplane::load_bytes(&gz, SourceInfo::default(), &Progress::default()).unwrap();
    assert_eq!(c.slices.len(), 1);
    let e = xplane::load_bytes(
        b"{\"traceEvents\":[]}",
        SourceInfo::default(),
        &Progress::default(),
    )
    .unwrap_err();
    assert_eq!(e.offset, Some(0));
    let e = xplane::load_bytes(
        &bytes[..bytes.len() - 3],
        SourceInfo::default(),
        &Progress::default(),
    )
    .unwrap_err();
    assert!(e.message.contains("past the end"), "{e}");
}

fn sample_bytes() -> Vec<u8> {
    let mut p = plane(
        "/device:GPU:0",
        &[(1, "hlo_op"), (2, "kernel_details"), (3, "x")],
        &[(1, "k", "kk")],
    );
    let evs = (0..20)
        .map(|i| {
            ev(
                1,
                i * 10,
                7,
                vec![
                    stat(1, x_stat::Value::StrValue(format!("op{}", i / 3))),
                    stat(2, x_stat::Value::RefValue(3)),
                    stat(3, x_stat::Value::Int64Value(-i)),
                ],
            )
        })
        .collect();
    p.lines.push(line(-3, "Stream #1", 5, evs));
    XSpace {
        planes: vec![p],
        ..XSpace::default()
    }
    .encode_to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = xplane::load_bytes(&bytes, SourceInfo::default(), &Progress::default());
        let _ = xplane::line_event_counts(&bytes);
    }

    #[test]
    fn truncated_or_flipped_valid_file_never_panics(cut in 0usize..2000, flip in 0usize..2000, bit in 0u8..8) {
        let mut bytes = sample_bytes();
        let cut = cut % (bytes.len() + 1);
        let whole = xplane::load_bytes(&bytes, SourceInfo::default(), &Progress::default());
        prop_assert!(whole.is_ok());
        let t = xplane::load_bytes(&bytes[..cut], SourceInfo::default(), &Progress::default());
        if let Err(e) = &t {
            prop_assert!(e.offset.is_some_and(|o| o as usize <= cut));
        }
        let i = flip % bytes.len();
        bytes[i] ^= 1 << bit;
        let _ = xplane::load_bytes(&bytes, SourceInfo::default(), &Progress::default());
        let _ = xplane::line_event_counts(&bytes);
    }
}

#[test]
fn extreme_times_are_clamped_with_a_warning() {
    let mut p = plane("/device:GPU:0", &[(1, "kernel_details")], &[(1, "k", "")]);
    p.lines.push(line(
        1,
        "s",
        i64::MAX / 2,
        vec![
            ev(
                1,
                i64::MAX,
                i64::MAX,
                vec![stat(1, x_stat::Value::StrValue("x".into()))],
            ),
            ev(1, i64::MIN, -5, vec![]),
        ],
    ));
    let c = decode(&XSpace {
        planes: vec![p],
        ..XSpace::default()
    });
    assert!(c.warnings.iter().any(|w| w.kind == "time_out_of_range"));
    assert!(c.slices.dur.iter().all(|&d| d >= 0));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Shared args blocks (repeated stat values after the last correlation id) read back exactly
    /// as each event's own stats in file order, then its metadata's.
    #[test]
    fn shared_args_blocks_read_back_in_file_order(
        events in prop::collection::vec(
            (1i64..=2, prop::collection::vec((0usize..4, 0i64..3), 0..5)),
            1..60,
        ),
    ) {
        // stat metadata: 1 correlation_id, 2 a, 3 b, 4 flow
        let names = [(1, "correlation_id"), (2, "a"), (3, "b"), (4, "flow")];
        let mut p = plane("/host:CPU", &names, &[(1, "e1", ""), (2, "e2", "")]);
        if let Some(m) = p.event_metadata.get_mut(&2) {
            m.stats.push(stat(3, x_stat::Value::Int64Value(7)));
        }
        let mut want = Vec::new();
        let mut evs = Vec::new();
        for (i, (mid, stats)) in events.iter().enumerate() {
            let mut st = Vec::new();
            let mut w = Vec::new();
            for (j, &(k, v)) in stats.iter().enumerate() {
                // correlation ids and flows unique per event, the others repeat
                let v = if k == 0 || k == 3 { (i * 10 + j) as i64 + 1 } else { v };
                st.push(stat(k as i64 + 1, x_stat::Value::Int64Value(v)));
                w.push((names[k].1.to_string(), v.to_string()));
            }
            if *mid == 2 {
                w.push(("b".to_string(), "7".to_string()));
            }
            want.push(w);
            evs.push(ev(*mid, i as i64 * 1000, 10, st));
        }
        p.lines.push(line(1, "l", 0, evs));
        let space = XSpace { planes: vec![p], ..XSpace::default() };
        let c = decode(&space);
        prop_assert_eq!(c.slices.len(), want.len());
        for (i, w) in want.iter().enumerate() {
            prop_assert_eq!(&args_of(&c, i), w, "slice {}", i);
        }
    }
}
