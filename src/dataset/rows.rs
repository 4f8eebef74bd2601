//! The rows of one capture as Arrow record batches of bounded size: its slices (track by track),
//! instants, counter samples and flows, in that order (schema: [`super::schema`]).

use super::columns::{DictCol, json_str};
use super::keys::{CaptureKeys, self_times};
use super::schema::{COLUMNS, PartKey, file_schema};
use crate::model::{ArgValue, ArgsRef, Capture, Key, NO_SLICE, ProcessKind, Ps, StrId, TrackKind};
use arrow_array::builder::{Float64Builder, Int32Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use std::fmt::Write as _;
use std::sync::Arc;

/// Rows per record batch (the writer groups batches into row groups).
pub const BATCH_ROWS: usize = 64 * 1024;

/// Per-track strings, computed once per capture.
struct TrackInfo {
    device: String,
    device_kind: &'static str,
    track: String,
    track_kind: &'static str,
    thread_id: Option<i64>,
    thread_name: String,
    stream_id: Option<i64>,
}

fn kind_name(k: ProcessKind) -> &'static str {
    match k {
        ProcessKind::Host => "host",
        ProcessKind::Gpu => "gpu",
        ProcessKind::Tpu => "tpu",
        ProcessKind::Device => "device",
        ProcessKind::Other => "other",
    }
}

/// Builders of every column of one batch.
#[derive(Default)]
struct Builders {
    run: DictCol,
    rank: DictCol,
    host: DictCol,
    capture: DictCol,
    device: DictCol,
    device_kind: DictCol,
    track: DictCol,
    track_kind: DictCol,
    thread_id: Int64Builder,
    thread_name: DictCol,
    stream_id: Int64Builder,
    phase: DictCol,
    kind: DictCol,
    name: DictCol,
    category: DictCol,
    category_class: DictCol,
    start_ns: Int64Builder,
    end_ns: Int64Builder,
    dur_ns: Int64Builder,
    self_time_ns: Int64Builder,
    start_epoch_ns: Int64Builder,
    depth: Int32Builder,
    id: Int64Builder,
    parent_id: Int64Builder,
    correlation_id: Int64Builder,
    flow: Int64Builder,
    flow_to_id: Int64Builder,
    value: Float64Builder,
    step: Int64Builder,
    hlo_op: DictCol,
    hlo_module: DictCol,
    tf_op_name: DictCol,
    args: StringBuilder,
}

/// The columns that depend on the row's kind (after [`CaptureRows::common`]'s): what a
/// kind leaves out is null.
#[derive(Default)]
struct Tail {
    end_ns: i64,
    dur_ns: Option<i64>,
    self_time_ns: Option<i64>,
    depth: Option<i32>,
    id: Option<i64>,
    parent_id: Option<i64>,
    correlation_id: Option<i64>,
    flow: Option<i64>,
    flow_to_id: Option<i64>,
    value: Option<f64>,
}

/// What a row is.
#[derive(Clone, Copy)]
enum RowKind {
    Slice = 0,
    Instant = 1,
    Counter = 2,
    Flow = 3,
}

/// The `phase` column: what a row is in the Trace Event format's terms.
const PHASE_NAMES: [&str; 4] = ["slice", "instant", "counter", "flow"];

/// Which part of the capture the iterator is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Slices,
    Instants,
    Counters,
    Flows,
    Done,
}

/// The three args lifted into columns of their own (XProf's names).
struct LiftedKeys {
    hlo_op: Option<StrId>,
    hlo_module: Option<StrId>,
    tf_op: Option<StrId>,
}

/// Iterator over the record batches of one capture.
pub struct CaptureRows<'a> {
    c: &'a Capture,
    keys: CaptureKeys,
    schema: SchemaRef,
    with_args: bool,
    batch_rows: usize,
    tracks: Vec<TrackInfo>,
    self_ps: Arc<Vec<Ps>>,
    /// Slices `[pos, slice_end)` are this iterator's; `rest`: the instants, counter samples and
    /// flows too.
    slice_end: usize,
    rest: bool,
    lifted: LiftedKeys,
    zero: Ps,
    phase: Phase,
    pos: usize,
    sub: usize,
    track: usize,
    b: Builders,
    rows: usize,
    json: String,
    seen: Vec<StrId>,
}

impl<'a> CaptureRows<'a> {
    /// The rows of `c` in batches of at most `batch_rows`, for files without the columns in
    /// `parts`, with the `args` column when `with_args`.
    pub fn new(c: &'a Capture, parts: &[PartKey], with_args: bool, batch_rows: usize) -> Self {
        let all = 0..c.slices.len();
        Self::range(
            c,
            Arc::new(self_times(c)),
            all,
            true,
            parts,
            with_args,
            batch_rows,
        )
    }

    /// The rows of slices `slices` only, and, when `rest`, of the instants, counter samples and
    /// flows (a capture's rows split over several files); `self_ps` from [`self_times`].
    pub fn range(
        c: &'a Capture,
        self_ps: Arc<Vec<Ps>>,
        slices: std::ops::Range<usize>,
        rest: bool,
        parts: &[PartKey],
        with_args: bool,
        batch_rows: usize,
    ) -> Self {
        let tracks = (0..c.tracks.len() as u32)
            .map(|t| {
                let tr = &c.tracks[t as usize];
                let pk = c.processes.get(tr.process as usize).map(|p| p.kind);
                let int_key = match tr.key {
                    Key::Int(v) => Some(v),
                    Key::Str(_) => None,
                };
                TrackInfo {
                    device: c.process_title(tr.process),
                    device_kind: pk.map_or("other", kind_name),
                    track: c.track_stable_name(t),
                    track_kind: tr.kind.name(),
                    thread_id: if tr.kind == TrackKind::Counter {
                        None
                    } else {
                        int_key
                    },
                    thread_name: c.track_name(t),
                    stream_id: if tr.kind == TrackKind::GpuStream {
                        int_key
                    } else {
                        None
                    },
                }
            })
            .collect();
        CaptureRows {
            c,
            keys: CaptureKeys::of(c),
            schema: file_schema(parts, with_args),
            with_args,
            batch_rows: batch_rows.max(1),
            tracks,
            self_ps,
            slice_end: slices.end.min(c.slices.len()),
            rest,
            lifted: LiftedKeys {
                hlo_op: c.strings.lookup("hlo_op"),
                hlo_module: c.strings.lookup("hlo_module"),
                tf_op: c.strings.lookup("tf_op"),
            },
            zero: c.time_zero(),
            phase: Phase::Slices,
            pos: slices.start,
            sub: 0,
            track: 0,
            b: Builders::default(),
            rows: 0,
            json: String::new(),
            seen: Vec::new(),
        }
    }

    /// The schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The keys (run, rank, host, capture) of the capture.
    pub fn keys(&self) -> &CaptureKeys {
        &self.keys
    }

    /// Appends the columns shared by every row kind.
    fn common(&mut self, kind: RowKind, track: Option<usize>, name: StrId, cat: StrId, t: Ps) {
        let b = &mut self.b;
        let k = &self.keys;
        b.run.push(0, || k.run.as_str());
        b.rank.push(0, || k.rank.as_str());
        b.host.push(0, || k.host.as_str());
        b.capture.push(0, || k.capture.as_str());
        match track.and_then(|t| self.tracks.get(t).map(|i| (t, i))) {
            Some((t, i)) => {
                let p = self.c.tracks[t].process;
                b.device.push(p, || i.device.as_str());
                b.device_kind.push(p, || i.device_kind);
                b.track.push(t as u32, || i.track.as_str());
                b.track_kind.push(t as u32, || i.track_kind);
                b.thread_id.append_option(i.thread_id);
                b.thread_name.push(t as u32, || i.thread_name.as_str());
                b.stream_id.append_option(i.stream_id);
            }
            None => {
                // Ids one past the last process / track: `DictCol` maps ids through a dense
                // table, so a sentinel near u32::MAX would size it to 16 GiB.
                let np = self.c.processes.len() as u32;
                let nt = self.c.tracks.len() as u32;
                b.device.push(np, || "");
                b.device_kind.push(np, || "other");
                b.track.push(nt, || "");
                b.track_kind.push(nt, || "");
                b.thread_id.append_null();
                b.thread_name.push(nt, || "");
                b.stream_id.append_null();
            }
        }
        b.phase.push(kind as u32, || PHASE_NAMES[kind as usize]);
        let strings = &self.c.strings;
        // `kind`: the vocabulary of `stats` and `search` (cpu_op, kernel, runtime, …) for slices;
        // the phase for the rest (ids just past the string ids: `DictCol`'s table stays dense).
        match kind {
            RowKind::Slice => b.kind.push(cat.0, || {
                crate::analysis::stats::EventKind::of_category(crate::model::Category::from_cat(
                    strings.get(cat),
                ))
                .name()
            }),
            other => b.kind.push(strings.len() as u32 + other as u32, || {
                PHASE_NAMES[other as usize]
            }),
        }
        b.name.push(name.0, || strings.get(name));
        b.category.push(cat.0, || strings.get(cat));
        b.category_class.push(cat.0, || {
            crate::model::Category::from_cat(strings.get(cat)).canonical()
        });
        let start = (t - self.zero).div_euclid(1000);
        b.start_ns.append_value(start);
        b.start_epoch_ns.append_option(
            self.c
                .origin_epoch_ns
                .map(|o| o.saturating_add(t.div_euclid(1000))),
        );
        b.step.append_null();
        self.rows += 1;
    }

    /// Appends the args columns of block `r`: the lifted `hlo_op`, `hlo_module`, `tf_op_name`
    /// and the JSON text of every entry (own entries first; an inherited key already given is
    /// skipped, as [`crate::model::ArgsArena::get`] reads it).
    fn args(&mut self, r: ArgsRef) {
        let c = self.c;
        let (mut op, mut module, mut tf) = (None, None, None);
        self.json.clear();
        self.seen.clear();
        if r.is_some() {
            let mut first = true;
            for (k, v) in c.args.iter(r, &c.strings) {
                if let ArgValue::Str(s) = v {
                    let key = Some(k);
                    if key == self.lifted.hlo_op && op.is_none() {
                        op = Some(s);
                    } else if key == self.lifted.hlo_module && module.is_none() {
                        module = Some(s);
                    } else if key == self.lifted.tf_op && tf.is_none() {
                        tf = Some(s);
                    }
                }
                if !self.with_args || self.seen.contains(&k) {
                    continue;
                }
                self.seen.push(k);
                self.json.push(if first { '{' } else { ',' });
                first = false;
                json_str(&mut self.json, c.strings.get(k));
                self.json.push(':');
                write_value(&mut self.json, &v, c);
            }
            if !first {
                self.json.push('}');
            }
        }
        let b = &mut self.b;
        for (col, v) in [
            (&mut b.hlo_op, op),
            (&mut b.hlo_module, module),
            (&mut b.tf_op_name, tf),
        ] {
            match v {
                Some(s) => col.push(s.0, || c.strings.get(s)),
                None => col.push_null(),
            }
        }
        if self.with_args {
            if self.json.is_empty() {
                b.args.append_null();
            } else {
                b.args.append_value(&self.json);
            }
        }
    }

    /// Appends the kind-dependent columns of one row.
    fn tail(&mut self, t: Tail) {
        let b = &mut self.b;
        b.end_ns.append_value(t.end_ns);
        b.dur_ns.append_option(t.dur_ns);
        b.self_time_ns.append_option(t.self_time_ns);
        b.depth.append_option(t.depth);
        b.id.append_option(t.id);
        b.parent_id.append_option(t.parent_id);
        b.correlation_id.append_option(t.correlation_id);
        b.flow.append_option(t.flow);
        b.flow_to_id.append_option(t.flow_to_id);
        b.value.append_option(t.value);
    }

    fn slice_row(&mut self, i: usize) {
        let c = self.c;
        let s = &c.slices;
        while self.track + 1 < c.tracks.len() && c.tracks[self.track].slices.1 as usize <= i {
            self.track += 1;
        }
        let t = self.track;
        self.common(RowKind::Slice, Some(t), s.name[i], s.cat(i), s.start[i]);
        let start = (s.start[i] - self.zero).div_euclid(1000);
        let end = (s.start[i] + s.dur[i] - self.zero).div_euclid(1000);
        let corr = s.corr(i);
        self.tail(Tail {
            end_ns: end,
            dur_ns: Some(end - start),
            self_time_ns: Some(self.self_ps.get(i).map_or(0, |v| v.div_euclid(1000))),
            depth: Some(i32::from(
                c.tracks.get(t).map_or(0, |tr| tr.depth_of_lane(s.lane[i])),
            )),
            id: Some(i as i64),
            parent_id: (s.parent[i] != NO_SLICE).then_some(i64::from(s.parent[i])),
            correlation_id: (corr != 0).then_some(corr as i64),
            ..Tail::default()
        });
        self.args(s.args[i]);
    }

    fn instant_row(&mut self, i: usize) {
        let c = self.c;
        let n = &c.instants;
        let t = n.track[i] as usize;
        self.common(RowKind::Instant, Some(t), n.name[i], n.cat[i], n.ts[i]);
        self.tail(Tail {
            end_ns: (n.ts[i] - self.zero).div_euclid(1000),
            dur_ns: Some(0),
            ..Tail::default()
        });
        self.args(n.args[i]);
    }

    fn counter_row(&mut self, series: usize, k: usize) {
        let c = self.c;
        let cs = &c.counters[series];
        let ts = cs.ts[k];
        self.common(
            RowKind::Counter,
            Some(cs.track as usize),
            cs.name,
            StrId::EMPTY,
            ts,
        );
        self.tail(Tail {
            end_ns: (ts - self.zero).div_euclid(1000),
            value: Some(cs.value[k]),
            ..Tail::default()
        });
        self.args(ArgsRef::NONE);
    }

    fn flow_row(&mut self, i: usize) {
        let c = self.c;
        let f = c.flows[i];
        let s = &c.slices;
        let at = |id: u32| (id != NO_SLICE && (id as usize) < s.len()).then_some(id as usize);
        let (from, to) = (at(f.from), at(f.to));
        let anchor = from.or(to);
        let t0 = anchor.map_or(self.zero, |a| s.start[a]);
        let t1 = to.map_or(t0, |b| s.start[b]);
        let track = anchor.map(|a| c.track_of(a as u32) as usize);
        self.common(RowKind::Flow, track, f.cat, f.cat, t0);
        let end = (t1 - self.zero).div_euclid(1000);
        // A flow is an arrow, not a span: `end_ns` is where it lands, and it has no duration
        // (a `sum(dur_ns)` over all rows must not add the arrows' lengths).
        self.tail(Tail {
            end_ns: end,
            dur_ns: None,
            id: from.map(|v| v as i64),
            flow: Some(f.id as i64),
            flow_to_id: to.map(|v| v as i64),
            ..Tail::default()
        });
        self.args(ArgsRef::NONE);
    }

    /// Fills the builders with up to `batch_rows` rows; false when there are none left.
    fn fill(&mut self) -> bool {
        let c = self.c;
        while self.rows < self.batch_rows {
            match self.phase {
                Phase::Slices if self.pos < self.slice_end => {
                    self.slice_row(self.pos);
                    self.pos += 1;
                }
                Phase::Instants if self.pos < c.instants.ts.len() => {
                    self.instant_row(self.pos);
                    self.pos += 1;
                }
                Phase::Counters if self.pos < c.counters.len() => {
                    if self.sub < c.counters[self.pos].ts.len() {
                        self.counter_row(self.pos, self.sub);
                        self.sub += 1;
                    } else {
                        self.pos += 1;
                        self.sub = 0;
                    }
                }
                Phase::Flows if self.pos < c.flows.len() => {
                    self.flow_row(self.pos);
                    self.pos += 1;
                }
                Phase::Done => break,
                Phase::Slices if !self.rest => self.phase = Phase::Done,
                p => {
                    self.phase = match p {
                        Phase::Slices => Phase::Instants,
                        Phase::Instants => Phase::Counters,
                        Phase::Counters => Phase::Flows,
                        _ => Phase::Done,
                    };
                    self.pos = 0;
                    self.sub = 0;
                }
            }
        }
        self.rows > 0
    }

    fn finish_batch(&mut self) -> Result<RecordBatch, String> {
        self.rows = 0;
        let b = &mut self.b;
        let mut cols: Vec<(&str, ArrayRef)> = vec![
            ("run", b.run.finish()),
            ("rank", b.rank.finish()),
            ("host", b.host.finish()),
            ("capture", b.capture.finish()),
            ("device", b.device.finish()),
            ("device_kind", b.device_kind.finish()),
            ("track", b.track.finish()),
            ("track_kind", b.track_kind.finish()),
            ("thread_id", Arc::new(b.thread_id.finish())),
            ("thread_name", b.thread_name.finish()),
            ("stream_id", Arc::new(b.stream_id.finish())),
            ("phase", b.phase.finish()),
            ("kind", b.kind.finish()),
            ("name", b.name.finish()),
            ("category", b.category.finish()),
            ("category_class", b.category_class.finish()),
            ("start_ns", Arc::new(b.start_ns.finish())),
            ("end_ns", Arc::new(b.end_ns.finish())),
            ("dur_ns", Arc::new(b.dur_ns.finish())),
            ("self_time_ns", Arc::new(b.self_time_ns.finish())),
            ("start_epoch_ns", Arc::new(b.start_epoch_ns.finish())),
            ("depth", Arc::new(b.depth.finish())),
            ("id", Arc::new(b.id.finish())),
            ("parent_id", Arc::new(b.parent_id.finish())),
            ("correlation_id", Arc::new(b.correlation_id.finish())),
            ("flow", Arc::new(b.flow.finish())),
            ("flow_to_id", Arc::new(b.flow_to_id.finish())),
            ("value", Arc::new(b.value.finish())),
            ("step", Arc::new(b.step.finish())),
            ("hlo_op", b.hlo_op.finish()),
            ("hlo_module", b.hlo_module.finish()),
            ("tf_op_name", b.tf_op_name.finish()),
        ];
        if self.with_args {
            cols.push(("args", Arc::new(b.args.finish())));
        }
        debug_assert_eq!(cols.len(), COLUMNS.len() - usize::from(!self.with_args));
        let arrays: Vec<ArrayRef> = self
            .schema
            .fields()
            .iter()
            .filter_map(|f| {
                cols.iter()
                    .find(|(n, _)| *n == f.name())
                    .map(|(_, a)| a.clone())
            })
            .collect();
        RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| e.to_string())
    }
}

impl Iterator for CaptureRows<'_> {
    type Item = Result<RecordBatch, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.fill() {
            return None;
        }
        Some(self.finish_batch())
    }
}

/// Appends one arg value as JSON (strings quoted; `Json` values as their JSON text; opaque
/// bytes as a `"<opaque N bytes>"` string; non-finite floats as null).
fn write_value(out: &mut String, v: &ArgValue, c: &Capture) {
    match *v {
        ArgValue::Null => out.push_str("null"),
        ArgValue::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        ArgValue::I64(x) => {
            let _ = write!(out, "{x}");
        }
        ArgValue::U64(x) => {
            let _ = write!(out, "{x}");
        }
        ArgValue::F64(x) if x.is_finite() => {
            let _ = write!(out, "{x:?}");
        }
        ArgValue::F64(_) => out.push_str("null"),
        ArgValue::Str(s) => json_str(out, c.strings.get(s)),
        ArgValue::Json(s) => {
            // The loaders write these as compact JSON from parsed input: embedded as is when
            // they have the shape of an array or object, else quoted.
            let t = c.strings.get(s);
            let b = t.as_bytes();
            let framed = matches!(
                (b.first(), b.last()),
                (Some(b'['), Some(b']')) | (Some(b'{'), Some(b'}'))
            );
            if framed {
                out.push_str(t);
            } else {
                json_str(out, t);
            }
        }
        ArgValue::Bytes(n) => {
            let _ = write!(out, "\"<opaque {n} bytes>\"");
        }
    }
}
