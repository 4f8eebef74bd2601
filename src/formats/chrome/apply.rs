//! The last stage: one complete [`RawEvent`] → [`CaptureBuilder`] calls, by phase. [`Loader`] is
//! the capture being built plus what the earlier stages share while they fill it (interning
//! caches, scratch buffers, counts for the warnings).

use super::intern::StrCache;
use super::raw::{RawEvent, TimeVal};
use crate::formats::progress::Progress;
use crate::model::{
    ArgValue, ArgsRef, CaptureBuilder, Category, FlowPhase, Key, ProcessKind, Ps, StrId, TrackKind,
};
use rustc_hash::FxHashMap;
use std::cell::Cell;
use std::fmt::Write as _;
use std::rc::Rc;

/// Reads a whole events array into the loader, on success leaving the input at its `]`.
pub type ReadEvents<'p> = Box<dyn FnOnce(&mut Loader<'p>) -> Result<(), String> + 'p>;

/// Interned keys the loader compares against (named after the JSON keys/values they hold).
#[allow(missing_docs)]
pub struct Keys {
    pub trace_events: StrId,
    pub system_trace_events: StrId,
    pub correlation: StrId,
    pub name: StrId,
    pub labels: StrId,
    pub sort_index: StrId,
    pub base_time: StrId,
    pub record_window_end: StrId,
}

/// Seven days in ps: longer durations are CUPTI overflow garbage (kept, warned).
const MAX_PLAUSIBLE_DUR_PS: i128 = 7 * 24 * 3600 * 1_000_000_000_000;
/// Largest |time| or |duration| accepted, in ps (2^62 ≈ 53 days).
const MAX_ABS_PS: u64 = 1 << 62;
/// Timestamps beyond this magnitude (≈ 11.6 days in ps) are rebased on the first event so that
/// picoseconds stay far from the i64 limit.
const REBASE_ABOVE_PS: i128 = 1_000_000_000_000_000_000;

/// All loader state: the builder plus what is needed to finish it.
pub struct Loader<'p> {
    /// The capture being built.
    pub b: CaptureBuilder,
    /// Well-known interned keys.
    pub k: Keys,
    /// Reusable text buffer (compact JSON of nested arg values).
    pub scratch: String,
    /// Interning cache for names, categories and string values.
    pub cache: StrCache,
    /// Last key seen at each position of an `args` object (see `CachedKeySeed`).
    pub key_cache: [StrId; 32],
    /// Reusable buffer for counter series names.
    name_buf: String,
    /// Reusable buffer for counter values.
    counter_buf: Vec<(StrId, f64)>,
    /// Events seen (including skipped ones).
    pub events: u64,
    /// Address of the last borrowed string (progress offset into mapped input).
    pub last_str_addr: usize,
    /// Input slice address range, when parsing from a slice.
    pub input_range: (usize, usize),
    /// Byte counter of a streaming reader (uncompressed bytes).
    pub stream_bytes: Option<Rc<Cell<u64>>>,
    progress: &'p Progress,
    /// Set when parsing stopped because of cancellation.
    pub cancelled: bool,
    /// The `traceEvents` array (or a top-level array) was entered.
    pub saw_events: bool,
    /// Top level was an object.
    pub object_form: bool,
    /// `systemTraceEvents` was present (ignored).
    pub system_trace_events: bool,
    /// Kineto-specific keys or categories seen.
    pub kineto_hint: bool,
    /// `args` values that were not objects.
    pub args_not_object: u64,
    /// ps subtracted from every raw timestamp (decided at the first timed event; whole ns).
    shift_ps: Option<i128>,
    /// Kineto `baseTimeNanoseconds`.
    base_time_ns: Option<i64>,
    /// Top-level metadata entries, written as one args block at the end.
    meta: Vec<(StrId, ArgValue)>,
    skipped: [u64; 256],
    missing_ph: u64,
    bad_time: u64,
    out_of_range: u64,
    long_durs: u64,
    missing_id: u64,
    unknown_meta: u64,
    min_ts: Ps,
    record_window_end: Option<Ps>,
    cat_cache: FxHashMap<StrId, Category>,
    last_track: Option<(Key, Key, u32)>,
    /// Set for a chunk-parallel parse: reads the events array (whose `[` the tokenizer has just
    /// consumed) from the mapped text instead of through the deserializer. Set by the
    /// orchestration (`chunks`), called once by the tokenizer (`seed`).
    pub chunked: Option<ReadEvents<'p>>,
}

impl<'p> Loader<'p> {
    /// A loader reporting to `progress`.
    pub fn new(progress: &'p Progress) -> Self {
        let mut b = CaptureBuilder::new();
        let k = Keys {
            trace_events: b.intern("traceEvents"),
            system_trace_events: b.intern("systemTraceEvents"),
            correlation: b.intern("correlation"),
            name: b.intern("name"),
            labels: b.intern("labels"),
            sort_index: b.intern("sort_index"),
            base_time: b.intern("baseTimeNanoseconds"),
            record_window_end: b.intern("Record Window End"),
        };
        Loader {
            b,
            k,
            scratch: String::new(),
            cache: StrCache::default(),
            key_cache: [StrId::EMPTY; 32],
            name_buf: String::new(),
            counter_buf: Vec::new(),
            events: 0,
            last_str_addr: 0,
            input_range: (0, 0),
            stream_bytes: None,
            progress,
            cancelled: false,
            saw_events: false,
            object_form: false,
            system_trace_events: false,
            kineto_hint: false,
            args_not_object: 0,
            shift_ps: None,
            base_time_ns: None,
            meta: Vec::new(),
            skipped: [0; 256],
            missing_ph: 0,
            bad_time: 0,
            out_of_range: 0,
            long_durs: 0,
            missing_id: 0,
            unknown_meta: 0,
            min_ts: Ps::MAX,
            record_window_end: None,
            cat_cache: FxHashMap::default(),
            last_track: None,
            chunked: None,
        }
    }

    /// The progress this loader reports to.
    pub fn progress(&self) -> &'p Progress {
        self.progress
    }

    /// True once the UI asked to stop.
    pub fn progress_cancelled(&self) -> bool {
        self.progress().cancelled()
    }

    /// Byte offset of the parser, best effort (last borrowed string, or stream bytes read).
    pub fn byte_offset(&self) -> u64 {
        if let Some(c) = &self.stream_bytes {
            return c.get();
        }
        let (lo, hi) = self.input_range;
        if self.last_str_addr >= lo && self.last_str_addr <= hi {
            (self.last_str_addr - lo) as u64
        } else {
            0
        }
    }

    /// Publishes bytes and events done.
    pub fn report_progress(&self) {
        self.progress().update(self.byte_offset(), self.events);
    }

    /// A top-level key other than `traceEvents`: kept as trace metadata.
    pub fn top_key(&mut self, k: StrId, v: ArgValue) {
        if k == self.k.base_time {
            if let Some(ns) = v.as_i64(&self.b.strings) {
                self.base_time_ns = Some(ns);
            }
            self.kineto_hint = true;
        }
        let ks = self.b.strings.get(k);
        if matches!(ks, "schemaVersion" | "deviceProperties" | "distributedInfo") {
            self.kineto_hint = true;
        }
        // `displayTimeUnit` is display-only: kept as metadata, never rescales.
        self.meta.push((k, v));
    }

    fn category(&mut self, cat: StrId) -> Category {
        if let Some(&c) = self.cat_cache.get(&cat) {
            return c;
        }
        let s = self.b.strings.get(cat);
        let c = Category::from_cat(s);
        if matches!(
            s,
            "cpu_op"
                | "cuda_runtime"
                | "kernel"
                | "python_function"
                | "gpu_memcpy"
                | "gpu_memset"
                | "ac2g"
                | "Operator"
                | "Runtime"
                | "Kernel"
        ) {
            self.kineto_hint = true;
        }
        self.cat_cache.insert(cat, c);
        c
    }

    /// Raw ps → ps from the origin; `None` (counted) when out of range.
    fn ps(&mut self, raw: i128) -> Option<Ps> {
        let shift = match self.shift_ps {
            Some(s) => s,
            None => {
                let s = if raw.abs() > REBASE_ABOVE_PS {
                    raw - raw % 1000
                } else {
                    0
                };
                self.shift_ps = Some(s);
                s
            }
        };
        // |ps| < 2^62 keeps every later `a - b` and `start + dur` inside i64.
        match i64::try_from(raw - shift) {
            Ok(p) if p.unsigned_abs() < MAX_ABS_PS => Some(p),
            _ => {
                self.out_of_range += 1;
                None
            }
        }
    }

    fn time(&mut self, t: TimeVal) -> Option<Ps> {
        match t {
            Some(Ok(raw)) => {
                let p = self.ps(raw)?;
                self.min_ts = self.min_ts.min(p);
                Some(p)
            }
            _ => {
                self.bad_time += 1;
                None
            }
        }
    }

    fn key_or_empty(k: Option<Key>) -> Key {
        k.unwrap_or(Key::Str(StrId::EMPTY))
    }

    /// Thread (or stream) track of (pid, tid); device categories make it a GPU stream.
    fn thread_track(&mut self, pid: Option<Key>, tid: Option<Key>, device: bool) -> u32 {
        let (pk, tk) = (Self::key_or_empty(pid), Self::key_or_empty(tid));
        if let Some((lp, lt, t)) = self.last_track
            && lp == pk
            && lt == tk
            && !device
        {
            return t;
        }
        let p = self.b.process(pk);
        let t = self.b.track(p, tk, TrackKind::Thread);
        let pr = self.b.process_mut(p);
        if device {
            if pr.kind != ProcessKind::Gpu {
                pr.kind = ProcessKind::Gpu;
            }
            let tr = self.b.track_mut(t);
            tr.kind = TrackKind::GpuStream;
        } else if pr.kind == ProcessKind::Other && matches!(pk, Key::Int(_)) {
            pr.kind = ProcessKind::Host;
        }
        self.last_track = Some((pk, tk, t));
        t
    }

    /// Applies one complete event.
    pub fn apply(&mut self, ev: &RawEvent) {
        self.events += 1;
        match ev.ph {
            b'X' => self.complete(ev),
            b'B' => {
                let Some(ts) = self.time(ev.ts) else { return };
                let dev = self.category(ev.cat).is_device();
                let t = self.thread_track(ev.pid, ev.tid, dev);
                self.b.begin_slice(t, ts, ev.name, ev.cat, ev.args);
            }
            b'E' => {
                let Some(ts) = self.time(ev.ts) else { return };
                let t = self.thread_track(ev.pid, ev.tid, false);
                self.b.end_slice(t, ts);
            }
            b'i' | b'I' | b'R' => {
                let Some(ts) = self.time(ev.ts) else { return };
                let dev = self.category(ev.cat).is_device();
                let t = self.thread_track(ev.pid, ev.tid, dev);
                let scope = match ev.scope {
                    b'g' => b'g',
                    b'p' => b'p',
                    _ => b't',
                };
                if ev.name == self.k.record_window_end {
                    self.record_window_end = Some(ts);
                }
                self.b.add_instant(t, ts, ev.name, ev.cat, ev.args, scope);
            }
            b'C' => self.counter(ev),
            b's' | b't' | b'f' => {
                let Some(ts) = self.time(ev.ts) else { return };
                let Some(id) = ev.id else {
                    self.missing_id += 1;
                    return;
                };
                self.category(ev.cat);
                let t = self.thread_track(ev.pid, ev.tid, false);
                let (phase, enclosing) = match ev.ph {
                    b's' => (FlowPhase::Start, true),
                    b't' => (FlowPhase::Step, true),
                    _ => (FlowPhase::Finish, ev.bp_e),
                };
                self.b.flow_point(phase, id, ev.cat, t, ts, enclosing);
            }
            b'b' | b'e' | b'n' | b'S' | b'F' | b'T' | b'p' => self.async_event(ev),
            b'M' => self.metadata(ev),
            0 if ev.fields == 0 => {} // XProf's trailing `{}` placeholder
            0 => self.missing_ph += 1,
            other => self.skipped[other as usize] += 1,
        }
    }

    fn complete(&mut self, ev: &RawEvent) {
        let Some(ts) = self.time(ev.ts) else { return };
        let dur = match ev.dur {
            None => 0,
            Some(Ok(d)) => d,
            Some(Err(())) => {
                self.bad_time += 1;
                return;
            }
        };
        if dur > MAX_PLAUSIBLE_DUR_PS {
            self.long_durs += 1;
        }
        let dur = match i64::try_from(dur) {
            Ok(d) if d.unsigned_abs() < MAX_ABS_PS => d,
            _ => {
                self.out_of_range += 1;
                return;
            }
        };
        let cat = self.category(ev.cat);
        let t = self.thread_track(ev.pid, ev.tid, cat.is_device());
        let corr = ev.facts.correlation.unwrap_or(0);
        let raw = self.b.add_slice(t, ts, dur, ev.name, ev.cat, ev.args, corr);
        if ev.flow_in || ev.flow_out {
            if let Some(id) = ev.bind_id.or(ev.id) {
                let phase = match (ev.flow_in, ev.flow_out) {
                    (true, true) => FlowPhase::Step,
                    (true, false) => FlowPhase::Finish,
                    _ => FlowPhase::Start,
                };
                let c = self.b.intern("bind_id");
                self.b.flow_slice(phase, id, c, raw);
            } else {
                self.missing_id += 1;
            }
        }
    }

    fn counter(&mut self, ev: &RawEvent) {
        let Some(ts) = self.time(ev.ts) else { return };
        let p = self.b.process(Self::key_or_empty(ev.pid));
        let mut vals = std::mem::take(&mut self.counter_buf);
        vals.clear();
        for (k, v) in self.b.args.iter(ev.args, &self.b.strings) {
            let x = match v {
                ArgValue::I64(i) => i as f64,
                ArgValue::U64(u) => u as f64,
                ArgValue::F64(f) => f,
                ArgValue::Bool(b) => f64::from(u8::from(b)),
                ArgValue::Str(s) => match self.b.strings.get(s).trim().parse::<f64>() {
                    Ok(f) => f,
                    Err(_) => continue,
                },
                _ => continue,
            };
            vals.push((k, x));
        }
        for &(k, x) in &vals {
            self.name_buf.clear();
            self.name_buf.push_str(self.b.strings.get(ev.name));
            if let Some(id) = ev.id {
                let _ = write!(self.name_buf, "[{id}]");
            }
            self.name_buf.push(' ');
            self.name_buf.push_str(self.b.strings.get(k));
            let series = self.b.strings.intern(&self.name_buf);
            self.b.add_counter(p, series, ts, x);
        }
        self.counter_buf = vals;
    }

    fn async_event(&mut self, ev: &RawEvent) {
        let Some(ts) = self.time(ev.ts) else { return };
        let Some(id) = ev.id else {
            self.missing_id += 1;
            return;
        };
        let p = self.b.process(Self::key_or_empty(ev.pid));
        match ev.ph {
            b'b' | b'S' => {
                let t = self.b.track(p, Key::Str(ev.cat), TrackKind::Async);
                self.b.track_mut(t).name = ev.cat;
                self.b.async_begin(t, ev.cat, id, ts, ev.name, ev.args);
            }
            b'e' | b'F' => {
                self.b.async_end(p, ev.cat, id, ts);
            }
            _ => {
                let t = self.b.track(p, Key::Str(ev.cat), TrackKind::Async);
                self.b.track_mut(t).name = ev.cat;
                self.b.add_instant(t, ts, ev.name, ev.cat, ev.args, b't');
            }
        }
    }

    fn arg_str(&self, args: ArgsRef, key: StrId) -> Option<StrId> {
        match self.b.args.get(args, key, &self.b.strings)? {
            ArgValue::Str(s) | ArgValue::Json(s) => Some(s),
            _ => None,
        }
    }

    fn metadata(&mut self, ev: &RawEvent) {
        let name = self.b.strings.get(ev.name);
        let pk = Self::key_or_empty(ev.pid);
        match name {
            "process_name" | "process_labels" => {
                let key = if name == "process_name" {
                    self.k.name
                } else {
                    self.k.labels
                };
                let is_name = name == "process_name";
                let Some(v) = self.arg_str(ev.args, key) else {
                    return;
                };
                let text = self.b.strings.get(v);
                let kind = if text.contains("GPU") {
                    Some(ProcessKind::Gpu)
                } else if text.contains("TPU") {
                    Some(ProcessKind::Tpu)
                } else if text.contains("/host:") || text == "CPU" {
                    Some(ProcessKind::Host)
                } else {
                    None
                };
                let p = self.b.process(pk);
                let pr = self.b.process_mut(p);
                if is_name {
                    pr.name = v;
                } else {
                    pr.label = v;
                }
                if let Some(k) = kind {
                    pr.kind = k;
                }
            }
            "process_sort_index" => {
                let v = self.b.args.get(ev.args, self.k.sort_index, &self.b.strings);
                if let Some(i) = v.and_then(|v| v.as_i64(&self.b.strings)) {
                    let p = self.b.process(pk);
                    self.b.process_mut(p).sort_index = i;
                }
            }
            "thread_name" => {
                let Some(v) = self.arg_str(ev.args, self.k.name) else {
                    return;
                };
                let p = self.b.process(pk);
                let t = self
                    .b
                    .track(p, Self::key_or_empty(ev.tid), TrackKind::Thread);
                self.b.track_mut(t).name = v;
            }
            "thread_sort_index" => {
                let v = self.b.args.get(ev.args, self.k.sort_index, &self.b.strings);
                if let Some(i) = v.and_then(|v| v.as_i64(&self.b.strings)) {
                    let p = self.b.process(pk);
                    let t = self
                        .b
                        .track(p, Self::key_or_empty(ev.tid), TrackKind::Thread);
                    self.b.track_mut(t).sort_index = i;
                }
            }
            _ => self.unknown_meta += 1,
        }
    }

    /// Reports everything counted, sets origin and metadata; the builder is then ready to finish.
    pub fn finalize(&mut self) {
        let shift_ns = i64::try_from(self.shift_ps.unwrap_or(0) / 1000).unwrap_or(0);
        self.b.origin_epoch_ns = match self.base_time_ns {
            Some(base) => base.checked_add(shift_ns),
            None if shift_ns > 0 => Some(shift_ns),
            None => None,
        };
        if !self.meta.is_empty() {
            self.b.args.begin();
            for &(k, v) in &self.meta {
                self.b.args.push(k, v);
            }
            self.b.metadata = self.b.args.finish();
        }
        // GPU processes: their thread tracks are streams.
        let gpu: Vec<bool> = (0..self.b.process_count() as u32)
            .map(|p| self.b.process_mut(p).kind == ProcessKind::Gpu)
            .collect();
        for t in 0..self.b.track_count() as u32 {
            let tr = self.b.track_mut(t);
            if tr.kind == TrackKind::Thread && gpu.get(tr.process as usize) == Some(&true) {
                tr.kind = TrackKind::GpuStream;
            }
        }
        for ph in 0..=255u8 {
            let n = self.skipped[ph as usize];
            if n > 0 {
                let c = if ph.is_ascii_graphic() {
                    ph as char
                } else {
                    '?'
                };
                self.b.warn_n(
                    skipped_kind(ph),
                    format!("skipped {n} events of phase {c}"),
                    n,
                );
            }
        }
        let counts = [
            (
                "missing_phase",
                self.missing_ph,
                "events without \"ph\" skipped",
            ),
            (
                "bad_timestamp",
                self.bad_time,
                "events with a missing or non-numeric ts/dur skipped",
            ),
            (
                "timestamp_out_of_range",
                self.out_of_range,
                "events whose time does not fit 64-bit picoseconds skipped",
            ),
            (
                "implausible_duration",
                self.long_durs,
                "slices longer than 7 days kept (likely CUPTI overflow)",
            ),
            (
                "missing_id",
                self.missing_id,
                "flow/async events without an id skipped",
            ),
            (
                "unknown_metadata",
                self.unknown_meta,
                "metadata (M) events of an unknown kind ignored",
            ),
            (
                "args_not_object",
                self.args_not_object,
                "\"args\" values that were not objects ignored",
            ),
        ];
        for (kind, n, msg) in counts {
            if n > 0 {
                self.b.warn_n(kind, format!("{n} {msg}"), n);
            }
        }
        if self.system_trace_events {
            self.b.warn(
                "system_trace_events",
                "\"systemTraceEvents\" (ftrace text) ignored".into(),
            );
        }
        if let Some(end) = self.record_window_end
            && self.min_ts != Ps::MAX
            && end.saturating_sub(self.min_ts) > 24 * 3600 * 1_000_000_000_000
        {
            self.b.warn(
                "implausible_record_window_end",
                "\"Record Window End\" more than 24 h after the first event (kept)".into(),
            );
        }
    }
}

fn skipped_kind(ph: u8) -> &'static str {
    match ph {
        b'P' => "skipped_phase_P",
        b'N' => "skipped_phase_N",
        b'O' => "skipped_phase_O",
        b'D' => "skipped_phase_D",
        b'v' => "skipped_phase_v",
        b'V' => "skipped_phase_V",
        b'(' => "skipped_phase_(",
        b')' => "skipped_phase_)",
        b'c' => "skipped_phase_c",
        b'm' => "skipped_phase_m",
        _ => "skipped_phase_other",
    }
}
