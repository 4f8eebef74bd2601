//! Structure-aware XPlane: `arbitrary` builds a small XSpace whose ids, names and stat names are
//! drawn from the values the loader and the derivation look for (plane and line names, group_id,
//! correlation_id, hlo_op, flow, ...), encoded with prost. Reaches derivation and stat decoding
//! that random bytes almost never do.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use prost::Message;
use std::path::PathBuf;
use tracetui::formats::xplane::generated as pb;
use tracetui::formats::{Progress, xplane};
use tracetui::model::SourceInfo;

const PLANES: &[&str] = &[
    "/host:CPU",
    "/device:GPU:0",
    "/device:TPU:0",
    "/device:TPU:0 SparseCore 0",
    "Task Environment",
    "/host:metadata",
    "",
];
const LINES: &[&str] = &[
    "Steps",
    "XLA Ops",
    "XLA Modules",
    "TensorFlow Ops",
    "Framework Name Scope",
    "python3",
    "Stream #13(MemcpyH2D)",
    "",
];
const STATS: &[&str] = &[
    "group_id",
    "step_name",
    "step_num",
    "correlation_id",
    "hlo_op",
    "hlo_module",
    "program_id",
    "run_id",
    "tf_op",
    "flow",
    "_r",
    "_ct",
    "_pt",
    "_cct",
    "_src",
    "kernel_details",
    "scope_range_id",
    "long_name",
    "profile_start_time",
    "tf_function_call",
];
const NAMES: &[&str] = &[
    "ProfilerStep#1",
    "jit_f(1)",
    "fusion.1",
    "%fusion.1 = f32[8] fusion()",
    "ExecutorState::Process",
    "Conv2D:Conv2D",
    "train_step",
    "",
];

#[derive(Arbitrary, Debug)]
struct Space {
    planes: Vec<Plane>,
    errors: Vec<String>,
}

#[derive(Arbitrary, Debug)]
struct Plane {
    name: u8,
    lines: Vec<Line>,
    event_md: Vec<(u8, u8, Vec<Stat>)>,
    stat_md: Vec<(u8, u8)>,
    stats: Vec<Stat>,
}

#[derive(Arbitrary, Debug)]
struct Line {
    id: i8,
    display_id: i8,
    name: u8,
    timestamp_ns: i64,
    big_ts: bool,
    duration_ps: i64,
    events: Vec<Event>,
}

#[derive(Arbitrary, Debug)]
struct Event {
    md: u8,
    offset_ps: u32,
    duration_ps: u32,
    aggregated: Option<i64>,
    stats: Vec<Stat>,
}

#[derive(Arbitrary, Debug)]
enum Val {
    F(f64),
    U(u64),
    I(i64),
    S(String),
    B(Vec<u8>),
    Ref(u8),
    Gz(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
struct Stat {
    md: u8,
    v: Option<Val>,
}

fn pick<'a>(t: &[&'a str], i: u8) -> &'a str {
    t[usize::from(i) % t.len()]
}

fn stat(s: &Stat) -> pb::XStat {
    use pb::x_stat::Value;
    pb::XStat {
        metadata_id: i64::from(s.md % 24),
        value: s.v.as_ref().map(|v| match v {
            Val::F(x) => Value::DoubleValue(*x),
            Val::U(x) => Value::Uint64Value(*x),
            Val::I(x) => Value::Int64Value(*x),
            Val::S(x) => Value::StrValue(x.clone()),
            Val::B(x) => Value::BytesValue(x.clone()),
            Val::Ref(x) => Value::RefValue(u64::from(*x % 24)),
            Val::Gz(x) => Value::CompressedStrValue(x.clone()),
        }),
    }
}

fn build(s: &Space) -> pb::XSpace {
    let planes = s
        .planes
        .iter()
        .take(8)
        .map(|p| pb::XPlane {
            id: 0,
            name: pick(PLANES, p.name).into(),
            lines: p
                .lines
                .iter()
                .take(16)
                .map(|l| pb::XLine {
                    id: i64::from(l.id),
                    display_id: i64::from(l.display_id),
                    name: pick(LINES, l.name).into(),
                    display_name: String::new(),
                    timestamp_ns: if l.big_ts {
                        1_700_000_000_000_000_000 + (l.timestamp_ns & 0xffff_ffff)
                    } else {
                        l.timestamp_ns
                    },
                    duration_ps: l.duration_ps,
                    events: l
                        .events
                        .iter()
                        .map(|e| pb::XEvent {
                            metadata_id: i64::from(e.md % 16),
                            duration_ps: i64::from(e.duration_ps),
                            stats: e.stats.iter().map(stat).collect(),
                            data: Some(match e.aggregated {
                                Some(n) => pb::x_event::Data::NumOccurrences(n),
                                None => pb::x_event::Data::OffsetPs(i64::from(e.offset_ps)),
                            }),
                        })
                        .collect(),
                })
                .collect(),
            event_metadata: p
                .event_md
                .iter()
                .map(|(id, name, st)| {
                    let id = i64::from(*id % 16);
                    (
                        id,
                        pb::XEventMetadata {
                            id,
                            name: pick(NAMES, *name).into(),
                            display_name: String::new(),
                            metadata: Vec::new(),
                            stats: st.iter().map(stat).collect(),
                            child_id: Vec::new(),
                        },
                    )
                })
                .collect(),
            stat_metadata: p
                .stat_md
                .iter()
                .map(|(id, name)| {
                    let id = i64::from(*id % 24);
                    (
                        id,
                        pb::XStatMetadata {
                            id,
                            name: pick(STATS, *name).into(),
                            description: String::new(),
                        },
                    )
                })
                .collect(),
            stats: p.stats.iter().map(stat).collect(),
        })
        .collect();
    pb::XSpace {
        planes,
        errors: s.errors.clone(),
        warnings: Vec::new(),
        hostnames: Vec::new(),
    }
}

fuzz_target!(|s: Space| {
    let bytes = build(&s).encode_to_vec();
    let src = SourceInfo {
        path: PathBuf::from("fuzz.xplane.pb"),
        ..SourceInfo::default()
    };
    let r = xplane::load_bytes_threads(&bytes, src, &Progress::default(), 2);
    std::hint::black_box(tracetui_fuzz::check(r, bytes.len()));
});
