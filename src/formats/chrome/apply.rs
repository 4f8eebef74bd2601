//! The last stage: one complete [`RawEvent`] → [`CaptureBuilder`] calls, by phase. [`Loader`] is
//! the capture being built plus what the earlier stages share while they fill it (interning
//! caches, scratch buffers, counts for the warnings).

use super::intern::StrCache;
use super::raw::{RawEvent, TimeVal};
use crate::formats::progress::Progress;
use crate::model::{
    ArgValue, CaptureBuilder, Category, FlowPhase, Key, ProcessKind, Ps, StrId, TrackKind,
};
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
pub(super) const MAX_PLAUSIBLE_DUR_PS: i128 = 7 * 24 * 3600 * 1_000_000_000_000;
/// Largest |time| or |duration| accepted, in ps (2^62 ≈ 53 days).
pub(super) const MAX_ABS_PS: u64 = 1 << 62;
/// Timestamps beyond this magnitude (≈ 11.6 days in ps) are rebased on the first event so that
/// picoseconds stay far from the i64 limit.
pub(super) const REBASE_ABOVE_PS: i128 = 1_000_000_000_000_000_000;

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
    /// Object-form `stackFrames` / `samples` (sampled CPU stacks), applied by `finalize`.
    pub sampled: super::samples::Sampled,
    /// Reusable buffer for counter series names.
    pub(super) name_buf: String,
    /// The current event's string `id` / `id2`, as written (see `RawEvent::id_text`).
    pub id_text: String,
    /// Reusable buffer for counter values.
    pub(super) counter_buf: Vec<(StrId, f64)>,
    /// Events seen (including skipped ones).
    pub events: u64,
    /// Address of the last borrowed string (progress offset into mapped input).
    pub last_str_addr: usize,
    /// Input slice address range, when parsing from a slice.
    pub input_range: (usize, usize),
    /// Byte counter of a streaming reader (uncompressed bytes).
    pub stream_bytes: Option<Rc<Cell<u64>>>,
    pub(super) progress: &'p Progress,
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
    pub(super) shift_ps: Option<i128>,
    /// Kineto `baseTimeNanoseconds`.
    pub(super) base_time_ns: Option<i64>,
    /// Top-level metadata entries, written as one args block at the end.
    pub(super) meta: Vec<(StrId, ArgValue)>,
    pub(super) skipped: [u64; 256],
    pub(super) missing_ph: u64,
    /// Elements that had a `ph`.
    pub(super) with_ph: u64,
    pub(super) bad_time: u64,
    pub(super) out_of_range: u64,
    pub(super) long_durs: u64,
    pub(super) missing_id: u64,
    pub(super) unknown_meta: u64,
    pub(super) min_ts: Ps,
    pub(super) record_window_end: Option<Ps>,
    /// The category of each category string seen, by its id.
    pub(super) cat_cache: Vec<Option<Category>>,
    pub(super) last_track: Option<(Key, Key, bool, u32)>,
    /// Recent [`Loader::flow_track`] answers: (pid, tid, track count then, track); an answer
    /// holds while no track is added (launch and kernel flow points alternate two threads).
    flow_cache: [Option<(Key, Key, usize, u32)>; 2],
    /// `thread_name` / `thread_sort_index` metadata by (pid, tid), applied by `finalize` to
    /// the thread and the device stream of that key (whichever exist).
    pub(super) thread_meta: Vec<(Key, Key, Option<StrId>, Option<i64>)>,
    /// Processes given a `process_sort_index`.
    pub(super) sorted_processes: Vec<u32>,
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
            cache: StrCache::default(),
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
            cat_cache: Vec::new(),
            last_track: None,
            flow_cache: [None; 2],
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

    pub(super) fn category(&mut self, cat: StrId) -> Category {
        if let Some(&Some(c)) = self.cat_cache.get(cat.index()) {
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
        let i = cat.index();
        if self.cat_cache.len() <= i {
            self.cat_cache.resize(i + 1, None);
        }
        self.cat_cache[i] = Some(c);
        c
    }

    /// Raw ps → ps from the origin; `None` (counted) when out of range.
    pub(super) fn ps(&mut self, raw: i128) -> Option<Ps> {
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

    pub(super) fn time(&mut self, t: TimeVal) -> Option<Ps> {
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
    pub(super) fn pid_key(pid: Option<Key>) -> Key {
        pid.unwrap_or(Key::Int(0))
    }

    /// The thread key of an event: its `tid`, else its `pid` (an event without `tid` belongs
    /// to the thread `tid = pid`, as in Perfetto; without either, thread 0 of process 0).
    pub(super) fn tid_key(pid: Option<Key>, tid: Option<Key>) -> Key {
        tid.unwrap_or_else(|| Self::pid_key(pid))
    }

    /// True when the event is a device activity: a device category (Kineto `kernel`,
    /// `gpu_memcpy`, `gpu_memset`, `gpu_user_annotation`, `cuda_sync`, legacy
    /// `Kernel`/`Memcpy`/`Memset`), or an unknown category with a `stream` arg. Host
    /// categories (`cpu_op`, `python_function`, ...) never are, whatever their process.
    pub(super) fn device_event(&mut self, ev: &RawEvent) -> bool {
        let c = self.category(ev.cat);
        c.is_device() || c == Category::Sync || (c == Category::Other && ev.facts.stream)
    }

    /// Thread track of (pid, tid), or its device stream when `device`: a track is a stream
    /// because of what it holds, never because of its process's name or label (a device
    /// process's CPU events stay on a CPU thread of that process).
    pub(super) fn thread_track(&mut self, pid: Option<Key>, tid: Option<Key>, device: bool) -> u32 {
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
    pub(super) fn flow_track(&mut self, pid: Option<Key>, tid: Option<Key>) -> u32 {
        let (pk, tk) = (Self::pid_key(pid), Self::tid_key(pid, tid));
        let n = self.b.track_count();
        for &(cp, ct, cn, t) in self.flow_cache.iter().flatten() {
            if cn == n && cp == pk && ct == tk {
                return t;
            }
        }
        let p = self.b.process(pk);
        let stream = self.b.find_track(p, tk, TrackKind::GpuStream);
        let t = match (self.b.find_track(p, tk, TrackKind::Thread), stream) {
            (None, Some(s)) => s,
            _ => self.thread_track(pid, tid, false),
        };
        self.flow_cache[1] = self.flow_cache[0];
        self.flow_cache[0] = Some((pk, tk, self.b.track_count(), t));
        t
    }

    /// Forgets the [`Loader::flow_track`] answers (metadata may change a process's kind, which
    /// the uncached path keeps up to date).
    pub(super) fn forget_flow_tracks(&mut self) {
        self.flow_cache = [None; 2];
    }

    /// Names the process and track of global instants without a pid (`global` / `global
    /// instants`) unless the trace named them.
    pub(super) fn name_global(&mut self, t: u32) {
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
                let Some(ts) = self.time(ev.ts()) else { return };
                let dev = self.device_event(ev);
                let t = self.thread_track(ev.pid, ev.tid, dev);
                self.b.begin_slice(t, ts, ev.name, ev.cat, ev.args);
            }
            b'E' => {
                let Some(ts) = self.time(ev.ts()) else { return };
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
                let Some(ts) = self.time(ev.ts()) else { return };
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
                let Some(ts) = self.time(ev.ts()) else { return };
                let Some(id) = ev.id() else {
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
            b'T' if ev.id().is_none() => self.skipped[usize::from(b'T')] += 1,
            b'b' | b'e' | b'n' | b'S' | b'F' | b'T' | b'p' => self.async_event(ev),
            b'M' => {
                self.forget_flow_tracks();
                self.metadata(ev);
            }
            0 if ev.fields == 0 => {} // XProf's trailing `{}` placeholder
            0 => self.missing_ph += 1,
            other => self.skipped[other as usize] += 1,
        }
    }

    pub(super) fn complete(&mut self, ev: &RawEvent) {
        let Some(ts) = self.time(ev.ts()) else { return };
        let dur = match ev.dur() {
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
        let corr = ev.facts.correlation;
        let raw = self.b.add_slice(t, ts, dur, ev.name, ev.cat, ev.args, corr);
        if ev.flow_in || ev.flow_out {
            if let Some(id) = ev.bind_id().or(ev.id()) {
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

    pub(super) fn counter(&mut self, ev: &RawEvent) {
        let Some(ts) = self.time(ev.ts()) else { return };
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
            } else if let Some(id) = ev.id() {
                let _ = write!(self.name_buf, "[{id}]");
            }
            self.name_buf.push(' ');
            self.name_buf.push_str(self.b.strings.get(k));
            let series = self.b.strings.intern(&self.name_buf);
            self.b.add_counter(p, series, ts, x);
        }
        self.counter_buf = vals;
    }

    pub(super) fn async_event(&mut self, ev: &RawEvent) {
        let Some(ts) = self.time(ev.ts()) else { return };
        let Some(id) = ev.id() else {
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
}
