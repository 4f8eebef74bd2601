//! Per-event handling: one parsed event (all fields collected) → builder calls, by phase.

use super::args::ArgFacts;
use super::seed::TimeVal;
use crate::formats::Progress;
use crate::model::{
    ArgValue, ArgsRef, CaptureBuilder, Category, FlowPhase, Key, ProcessKind, Ps, StrId, TrackKind,
};
use rustc_hash::FxHashMap;
use std::cell::Cell;
use std::fmt::Write as _;
use std::rc::Rc;

/// A flow / async id.
pub type IdVal = u64;

/// The fields of one event, as read (applied once the object is complete).
#[derive(Default, Clone, Copy)]
pub struct RawEvent {
    /// First byte of `ph` (0 = absent).
    pub ph: u8,
    /// Interned `name`.
    pub name: StrId,
    /// Interned `cat`.
    pub cat: StrId,
    /// `pid`.
    pub pid: Option<Key>,
    /// `tid`.
    pub tid: Option<Key>,
    /// `ts` in ns (raw, not yet shifted).
    pub ts: TimeVal,
    /// `dur` in ns.
    pub dur: TimeVal,
    /// Args block.
    pub args: ArgsRef,
    /// Values found in args.
    pub facts: ArgFacts,
    /// `id` / `id2`.
    pub id: Option<IdVal>,
    /// The `id` / `id2` text as written when it was a string, for `C` events only (counter
    /// series are named with it); `StrId::EMPTY` otherwise.
    pub id_text: StrId,
    /// `bind_id`.
    pub bind_id: Option<IdVal>,
    /// First byte of `s` (instant scope).
    pub scope: u8,
    /// `bp == "e"`.
    pub bp_e: bool,
    /// `flow_in`.
    pub flow_in: bool,
    /// `flow_out`.
    pub flow_out: bool,
    /// Number of keys seen.
    pub fields: u32,
}

impl RawEvent {
    /// Resets every field.
    #[inline]
    pub fn clear(&mut self) {
        *self = RawEvent {
            args: ArgsRef::NONE,
            ..RawEvent::default()
        };
    }
}

/// Interned keys the loader compares against (named after the JSON keys/values they hold).
#[allow(missing_docs)]
pub struct Keys {
    pub trace_events: StrId,
    pub system_trace_events: StrId,
    pub correlation: StrId,
    pub stream: StrId,
    pub name: StrId,
    pub labels: StrId,
    pub sort_index: StrId,
    pub base_time: StrId,
    pub record_window_end: StrId,
    pub samples: StrId,
    pub stack_frames: StrId,
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
    pub cache: super::args::StrCache,
    /// Last key seen at each position of an `args` object (see `CachedKeySeed`).
    pub key_cache: [StrId; 32],
    /// Object-form `stackFrames` / `samples` (sampled CPU stacks), applied by `finalize`.
    pub sampled: super::samples::Sampled,
    /// Reusable buffer for counter series names.
    name_buf: String,
    /// The current event's string `id` / `id2`, as written (see `RawEvent::id_text`).
    pub id_text: String,
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
    /// Elements that had a `ph`.
    with_ph: u64,
    bad_time: u64,
    out_of_range: u64,
    long_durs: u64,
    missing_id: u64,
    unknown_meta: u64,
    min_ts: Ps,
    record_window_end: Option<Ps>,
    cat_cache: FxHashMap<StrId, Category>,
    last_track: Option<(Key, Key, bool, u32)>,
    /// `thread_name` / `thread_sort_index` metadata by (pid, tid), applied by `finalize` to
    /// the thread and the device stream of that key (whichever exist).
    thread_meta: Vec<(Key, Key, Option<StrId>, Option<i64>)>,
    /// Processes given a `process_sort_index`.
    sorted_processes: Vec<u32>,
    /// Set for a chunk-parallel parse: the events array is read from the mapped text by
    /// [`super::parallel::run`] instead of through the deserializer.
    pub chunked: Option<super::parallel::Chunked<'p>>,
}

impl<'p> Loader<'p> {
    /// A loader reporting to `progress`.
    pub fn new(progress: &'p Progress) -> Self {
        let mut b = CaptureBuilder::new();
        let k = Keys {
            trace_events: b.intern("traceEvents"),
            system_trace_events: b.intern("systemTraceEvents"),
            correlation: b.intern("correlation"),
            stream: b.intern("stream"),
            name: b.intern("name"),
            labels: b.intern("labels"),
            sort_index: b.intern("sort_index"),
            base_time: b.intern("baseTimeNanoseconds"),
            record_window_end: b.intern("Record Window End"),
            samples: b.intern("samples"),
            stack_frames: b.intern("stackFrames"),
        };
        Loader {
            b,
            k,
            scratch: String::new(),
            cache: super::args::StrCache::default(),
            key_cache: [StrId::EMPTY; 32],
            sampled: Default::default(),
            name_buf: String::new(),
            id_text: String::new(),
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
            with_ph: 0,
            bad_time: 0,
            out_of_range: 0,
            long_durs: 0,
            missing_id: 0,
            unknown_meta: 0,
            min_ts: Ps::MAX,
            record_window_end: None,
            cat_cache: FxHashMap::default(),
            last_track: None,
            thread_meta: Vec::new(),
            sorted_processes: Vec::new(),
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

    /// The process key of an event: its `pid`, else 0 (as in Perfetto).
    fn pid_key(pid: Option<Key>) -> Key {
        pid.unwrap_or(Key::Int(0))
    }

    /// The thread key of an event: its `tid`, else its `pid` (an event without `tid` belongs
    /// to the thread `tid = pid`, as in Perfetto; without either, thread 0 of process 0).
    fn tid_key(pid: Option<Key>, tid: Option<Key>) -> Key {
        tid.unwrap_or_else(|| Self::pid_key(pid))
    }

    /// True when the event is a device activity: a device category (Kineto `kernel`,
    /// `gpu_memcpy`, `gpu_memset`, `gpu_user_annotation`, `cuda_sync`, legacy
    /// `Kernel`/`Memcpy`/`Memset`), or an unknown category with a `stream` arg. Host
    /// categories (`cpu_op`, `python_function`, ...) never are, whatever their process.
    fn device_event(&mut self, ev: &RawEvent) -> bool {
        let c = self.category(ev.cat);
        c.is_device() || c == Category::Sync || (c == Category::Other && ev.facts.stream)
    }

    /// Thread track of (pid, tid), or its device stream when `device`: a track is a stream
    /// because of what it holds, never because of its process's name or label (a device
    /// process's CPU events stay on a CPU thread of that process).
    fn thread_track(&mut self, pid: Option<Key>, tid: Option<Key>, device: bool) -> u32 {
        let (pk, tk) = (Self::pid_key(pid), Self::tid_key(pid, tid));
        if let Some((lp, lt, ld, t)) = self.last_track
            && lp == pk
            && lt == tk
            && ld == device
        {
            return t;
        }
        let p = self.b.process(pk);
        let kind = if device {
            TrackKind::GpuStream
        } else {
            TrackKind::Thread
        };
        let t = self.b.track(p, tk, kind);
        let pr = self.b.process_mut(p);
        if device {
            if pr.kind != ProcessKind::Gpu {
                pr.kind = ProcessKind::Gpu;
            }
        } else if pr.kind == ProcessKind::Other && matches!(pk, Key::Int(_)) {
            pr.kind = ProcessKind::Host;
        }
        self.last_track = Some((pk, tk, device, t));
        t
    }

    /// The track a flow point of (pid, tid) binds to: the thread, or the device stream when
    /// only that exists so far (the builder tries the other one of the pair when resolving).
    fn flow_track(&mut self, pid: Option<Key>, tid: Option<Key>) -> u32 {
        let (pk, tk) = (Self::pid_key(pid), Self::tid_key(pid, tid));
        let p = self.b.process(pk);
        let stream = self.b.find_track(p, tk, TrackKind::GpuStream);
        match (self.b.find_track(p, tk, TrackKind::Thread), stream) {
            (None, Some(s)) => s,
            _ => self.thread_track(pid, tid, false),
        }
    }

    /// Names the process and track of global instants without a pid (`global` / `global
    /// instants`) unless the trace named them.
    fn name_global(&mut self, t: u32) {
        let p = self.b.track_mut(t).process;
        if self.b.process_mut(p).name == StrId::EMPTY {
            let n = self.b.intern("global");
            self.b.process_mut(p).name = n;
        }
        if self.b.track_mut(t).name == StrId::EMPTY {
            let n = self.b.intern("global instants");
            self.b.track_mut(t).name = n;
        }
    }

    /// Applies one complete event.
    pub fn apply(&mut self, ev: &RawEvent) {
        self.events += 1;
        self.with_ph += u64::from(ev.ph != 0);
        match ev.ph {
            b'X' => self.complete(ev),
            b'B' => {
                let Some(ts) = self.time(ev.ts) else { return };
                let dev = self.device_event(ev);
                let t = self.thread_track(ev.pid, ev.tid, dev);
                self.b.begin_slice(t, ts, ev.name, ev.cat, ev.args);
            }
            b'E' => {
                let Some(ts) = self.time(ev.ts) else { return };
                let (pk, tk) = (Self::pid_key(ev.pid), Self::tid_key(ev.pid, ev.tid));
                match self.last_track {
                    // Same thread as the previous event (a thread's stream shares its B/E).
                    Some((lp, lt, _, t)) if lp == pk && lt == tk => {
                        self.b.end_slice(t, ts, ev.name);
                    }
                    _ => {
                        let p = self.b.process(pk);
                        self.b.end_slice_of(p, tk, ts, ev.name);
                    }
                }
            }
            b'i' | b'I' | b'R' => {
                let Some(ts) = self.time(ev.ts) else { return };
                let dev = self.device_event(ev);
                let t = self.thread_track(ev.pid, ev.tid, dev);
                let scope = match ev.scope {
                    b'g' => b'g',
                    b'p' => b'p',
                    _ => b't',
                };
                if ev.name == self.k.record_window_end {
                    self.record_window_end = Some(ts);
                }
                if scope == b'g' && ev.pid == Some(Key::Str(StrId::EMPTY)) {
                    // A global instant outside any process (Kineto's `Record Window End`):
                    // named, not an "(unnamed)" process and track.
                    self.name_global(t);
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
                let t = self.flow_track(ev.pid, ev.tid);
                let (phase, enclosing) = match ev.ph {
                    b's' => (FlowPhase::Start, true),
                    b't' => (FlowPhase::Step, true),
                    _ => (FlowPhase::Finish, ev.bp_e),
                };
                self.b.flow_point(phase, id, ev.cat, t, ts, enclosing);
            }
            // `T` without an id: Perfetto's thread-state extension, not a legacy async step.
            b'T' if ev.id.is_none() => self.skipped[usize::from(b'T')] += 1,
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
        let dev = self.device_event(ev);
        let t = self.thread_track(ev.pid, ev.tid, dev);
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
        let p = self.b.process(Self::pid_key(ev.pid));
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
            if ev.id_text != StrId::EMPTY {
                let _ = write!(self.name_buf, "[{}]", self.b.strings.get(ev.id_text));
            } else if let Some(id) = ev.id {
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
        let p = self.b.process(Self::pid_key(ev.pid));
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
        let pk = Self::pid_key(ev.pid);
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
                    self.sorted_processes.push(p);
                }
            }
            "thread_name" => {
                let Some(v) = self.arg_str(ev.args, self.k.name) else {
                    return;
                };
                let tk = Self::tid_key(ev.pid, ev.tid);
                self.thread_meta.push((pk, tk, Some(v), None));
            }
            "thread_sort_index" => {
                let v = self.b.args.get(ev.args, self.k.sort_index, &self.b.strings);
                if let Some(i) = v.and_then(|v| v.as_i64(&self.b.strings)) {
                    let tk = Self::tid_key(ev.pid, ev.tid);
                    self.thread_meta.push((pk, tk, None, Some(i)));
                }
            }
            _ => self.unknown_meta += 1,
        }
    }

    /// Sampled stacks (`samples` + `stackFrames`) → one merged-slices track per sampled
    /// thread (see `samples`).
    fn apply_samples(&mut self) {
        let sampled = std::mem::take(&mut self.sampled);
        if sampled.samples.is_empty() {
            return;
        }
        let mut tids: Vec<Key> = Vec::new();
        let mut by_tid: FxHashMap<Key, Vec<(Ps, u32)>> = FxHashMap::default();
        let mut unknown = 0u64;
        let mut stack = Vec::new();
        for s in &sampled.samples {
            let Some(ts) = self.time(s.ts) else { continue };
            sampled.stack(s.sf, &mut stack);
            if stack.is_empty() {
                unknown += 1;
                continue;
            }
            by_tid
                .entry(s.tid)
                .or_insert_with(|| {
                    tids.push(s.tid);
                    Vec::new()
                })
                .push((ts, s.sf));
        }
        for tid in tids {
            let Some(mut rows) = by_tid.remove(&tid) else {
                continue;
            };
            rows.sort_by_key(|r| r.0);
            let stacks: Vec<(Ps, Vec<super::samples::Frame>)> = rows
                .iter()
                .map(|&(ts, sf)| {
                    let mut v = Vec::new();
                    sampled.stack(sf, &mut v);
                    v.reverse();
                    (ts, v)
                })
                .collect();
            let owners: Vec<u32> = (0..self.b.process_count() as u32)
                .filter(|&p| self.b.find_track(p, tid, TrackKind::Thread).is_some())
                .collect();
            let p = match owners.as_slice() {
                [p] => *p,
                _ => {
                    let key = self.b.intern("sampled stacks");
                    let p = self.b.process(Key::Str(key));
                    let pr = self.b.process_mut(p);
                    pr.name = key;
                    pr.kind = ProcessKind::Host;
                    p
                }
            };
            let tid_text = match tid {
                Key::Int(v) => v.to_string(),
                Key::Str(s) => self.b.strings.get(s).to_string(),
            };
            let key = self.b.intern(&format!("samples:{tid_text}"));
            let t = self.b.track(p, Key::Str(key), TrackKind::Thread);
            let name = self.b.intern(&format!("samples (thread {tid_text})"));
            self.b.track_mut(t).name = name;
            for sl in super::samples::stack_slices(&stacks) {
                self.b
                    .add_slice(t, sl.start, sl.dur, sl.name, sl.cat, ArgsRef::NONE, 0);
            }
        }
        if unknown > 0 {
            self.b.warn_n(
                "sample_unknown_frame",
                format!(
                    "{unknown} samples whose stack frame (\"sf\") is not in \"stackFrames\" skipped"
                ),
                unknown,
            );
        }
    }

    /// True when elements were read but none has a `ph` (and some have other fields): a JSON
    /// document of something else, not a trace.
    pub fn no_phase_anywhere(&self) -> bool {
        self.with_ph == 0 && self.missing_ph > 0
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
        self.apply_samples();
        // Processes without a `process_sort_index`: in order of appearance, device processes
        // after the others (Perfetto and the trace viewer put GPU processes after the CPU one).
        let mut given = vec![false; self.b.process_count()];
        for &p in &self.sorted_processes {
            if let Some(g) = given.get_mut(p as usize) {
                *g = true;
            }
        }
        for (p, given) in given.into_iter().enumerate() {
            let pr = self.b.process_mut(p as u32);
            if !given && matches!(pr.kind, ProcessKind::Gpu | ProcessKind::Tpu) {
                pr.sort_index = pr.sort_index.saturating_add(1 << 40);
            }
        }
        // Thread metadata: names and sort indexes of the thread and the stream of each key (a
        // thread known only from metadata gets a thread track, as before).
        for (pk, tk, name, sort) in std::mem::take(&mut self.thread_meta) {
            let p = self.b.process(pk);
            let mut tracks = [
                self.b.find_track(p, tk, TrackKind::Thread),
                self.b.find_track(p, tk, TrackKind::GpuStream),
            ];
            if tracks.iter().all(Option::is_none) {
                tracks[0] = Some(self.b.track(p, tk, TrackKind::Thread));
            }
            for t in tracks.into_iter().flatten() {
                let tr = self.b.track_mut(t);
                if let Some(n) = name {
                    tr.name = n;
                }
                if let Some(i) = sort {
                    tr.sort_index = i;
                }
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
                    format!("skipped {n} {} events (phase {c})", phase_name(ph)),
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

/// What a skipped phase is (Trace Event Format, and Perfetto's extensions).
fn phase_name(ph: u8) -> &'static str {
    match ph {
        b'P' => "sample",
        b'N' => "object-created",
        b'O' => "object-snapshot",
        b'D' => "object-destroyed",
        b'v' | b'V' => "memory-dump",
        b'(' | b')' => "context",
        b'c' => "clock-sync",
        b'm' => "mark",
        b'T' => "Perfetto thread-state (no id)",
        _ => "unknown-phase",
    }
}

fn skipped_kind(ph: u8) -> &'static str {
    match ph {
        b'T' => "skipped_phase_T",
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
