//! `CaptureBuilder`: what every loader writes into. Loaders push events in file order;
//! `finish` (in `finish.rs`) sorts, nests, resolves flows and produces an immutable [`Capture`].

use super::args::{ArgsArena, ArgsRef};
use super::begin_end::BeginEndLog;
use super::capture::*;
use super::category::Category;
use super::strings::{Interner, StrId};
use super::track_of::TrackOf;
use rustc_hash::FxHashMap;

/// A flow endpoint as read from the file, resolved to a slice in `finish`.
#[derive(Clone, Copy, Debug)]
pub(super) enum FlowEnd {
    /// Bound directly to a slice (raw, pre-sort id).
    Slice(u32),
    /// Bound to the slice on `track` enclosing `ts` (`bp:"e"`, or `s`/`t` phases).
    Enclosing { track: u32, ts: Ps },
    /// Bound to the next slice on `track` starting at or after `ts`.
    Next { track: u32, ts: Ps },
}

#[derive(Clone, Copy, Debug)]
pub(super) struct FlowPoint {
    pub(super) id: u64,
    pub(super) cat: StrId,
    pub(super) end: FlowEnd,
    /// 0 = start (`s`), 1 = step (`t`), 2 = finish (`f`).
    pub(super) phase: u8,
    pub(super) seq: u32,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Open {
    pub(super) ts: Ps,
    pub(super) name: StrId,
    pub(super) cat: StrId,
    pub(super) args: ArgsRef,
}

/// Flow phase of a Chrome `s`/`t`/`f` event or an XPlane flow stat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowPhase {
    /// Flow start.
    Start,
    /// Intermediate step.
    Step,
    /// Flow end.
    Finish,
}

/// Accumulates one capture. Slice ids returned by the `add_*` methods are raw (pre-sort) ids,
/// valid only for `bind_flow` on this builder.
pub struct CaptureBuilder {
    /// String table shared by everything in the capture.
    pub strings: Interner,
    /// Args arena; write a block with `args.begin()/push()/finish()`.
    pub args: ArgsArena,
    pub(super) processes: Vec<Process>,
    pub(super) proc_map: FxHashMap<Key, u32>,
    pub(super) tracks: Vec<Track>,
    pub(super) track_map: FxHashMap<(u32, Key, u8), u32>,
    pub(super) s_track: TrackOf,
    /// Index of the first track run of the latest `slots` call (see `compact_slots`).
    pub(super) slot_runs: Option<usize>,
    pub(super) s: Slices,
    /// `B`/`E` events, paired in `finish`.
    pub(super) begin_end: BeginEndLog,
    pub(super) async_open: FxHashMap<(u32, StrId, u64), Vec<(Open, u32)>>,
    pub(super) inst: Instants,
    pub(super) counters: Vec<CounterSeries>,
    pub(super) counter_map: FxHashMap<(u32, StrId), u32>,
    pub(super) flow_points: Vec<FlowPoint>,
    pub(super) aggregated: Vec<Aggregated>,
    pub(super) warnings: Vec<Warning>,
    /// Wall-clock epoch ns of time 0, when known.
    pub origin_epoch_ns: Option<i64>,
    /// Trace-level metadata block.
    pub metadata: ArgsRef,
    /// Class (index into `s.classes`) of each raw category seen.
    pub(super) class_map: FxHashMap<StrId, u16>,
    /// Slices whose category did not fit the class table (given class 0).
    pub(super) classes_full: u64,
}

impl Default for CaptureBuilder {
    fn default() -> Self {
        Self::new()
    }
}

pub(super) fn kind_tag(k: TrackKind) -> u8 {
    match k {
        TrackKind::Counter => 1,
        TrackKind::Async => 2,
        TrackKind::Derived => 3,
        TrackKind::GpuStream => 4,
        _ => 0,
    }
}

impl CaptureBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        CaptureBuilder {
            strings: Interner::new(),
            args: ArgsArena::default(),
            processes: Vec::new(),
            proc_map: FxHashMap::default(),
            tracks: Vec::new(),
            track_map: FxHashMap::default(),
            s_track: TrackOf::default(),
            slot_runs: None,
            s: Slices::default(),
            begin_end: BeginEndLog::default(),
            async_open: FxHashMap::default(),
            inst: Instants::default(),
            counters: Vec::new(),
            counter_map: FxHashMap::default(),
            flow_points: Vec::new(),
            aggregated: Vec::new(),
            warnings: Vec::new(),
            origin_epoch_ns: None,
            metadata: ArgsRef::NONE,
            class_map: FxHashMap::default(),
            classes_full: 0,
        }
    }

    /// Interns a string.
    #[inline]
    pub fn intern(&mut self, s: &str) -> StrId {
        self.strings.intern(s)
    }

    /// The process for `key`, created on first use (kind `Other`, no name).
    pub fn process(&mut self, key: Key) -> u32 {
        if let Some(&p) = self.proc_map.get(&key) {
            return p;
        }
        let p = self.processes.len() as u32;
        self.processes.push(Process {
            key,
            name: StrId::EMPTY,
            label: StrId::EMPTY,
            sort_index: i64::from(p),
            kind: ProcessKind::Other,
            hidden: false,
        });
        self.proc_map.insert(key, p);
        p
    }

    /// Mutable access to a process (name, label, sort index, kind, hidden).
    pub fn process_mut(&mut self, p: u32) -> &mut Process {
        &mut self.processes[p as usize]
    }

    /// Number of processes so far.
    pub fn process_count(&self) -> usize {
        self.processes.len()
    }

    /// The track `key` of process `p`, created on first use. Counter, async, derived and
    /// device-stream tracks live in their own key spaces (a CPU thread and the device stream
    /// of the same tid are two tracks).
    pub fn track(&mut self, p: u32, key: Key, kind: TrackKind) -> u32 {
        let k = (p, key, kind_tag(kind));
        if let Some(&t) = self.track_map.get(&k) {
            return t;
        }
        let t = self.tracks.len() as u32;
        let sort_index = match key {
            Key::Int(v) => v,
            Key::Str(_) => i64::MAX / 2,
        };
        self.tracks.push(Track {
            process: p,
            key,
            name: StrId::EMPTY,
            kind,
            sort_index,
            slices: (0, 0),
            instants: (0, 0),
            counter: None,
            lanes: 0,
            max_depth: 0,
            group_bases: Vec::new(),
        });
        self.track_map.insert(k, t);
        t
    }

    /// The track `key` of process `p` of this kind (key space), when it exists.
    pub fn find_track(&self, p: u32, key: Key, kind: TrackKind) -> Option<u32> {
        self.track_map.get(&(p, key, kind_tag(kind))).copied()
    }

    /// Mutable access to a track (name, kind, sort index).
    pub fn track_mut(&mut self, t: u32) -> &mut Track {
        &mut self.tracks[t as usize]
    }

    /// Number of tracks so far.
    pub fn track_count(&self) -> usize {
        self.tracks.len()
    }

    /// Reserves room for `n` more slices (loaders that know their event count up front).
    pub fn reserve_slices(&mut self, n: usize) {
        self.s_track.reserve(n);
        self.s.start.reserve_exact(n);
        self.s.dur.reserve_exact(n);
        self.s.name.reserve_exact(n);
        self.s.class.reserve_exact(n);
        self.s.args.reserve_exact(n);
        self.s.corr.reserve_exact(n);
        self.s.flags.reserve_exact(n);
    }

    /// Number of slices so far (progress reporting).
    pub fn slice_count(&self) -> usize {
        self.s.start.len()
    }

    /// The category enum of raw category `cat`.
    pub fn category(&mut self, cat: StrId) -> Category {
        let c = self.class_of(cat);
        self.s.classes[usize::from(c)].1
    }

    /// The class of raw category `cat` (see `Slices::class`), added on first sight; class 0
    /// (empty category) once 65 536 classes exist, counted and reported by `finish`.
    pub fn class_of(&mut self, cat: StrId) -> u16 {
        if let Some(&c) = self.class_map.get(&cat) {
            return c;
        }
        if self.s.classes.is_empty() {
            let empty = Category::from_cat("");
            self.s.classes.push((StrId::EMPTY, empty));
            self.class_map.insert(StrId::EMPTY, 0);
            if cat == StrId::EMPTY {
                return 0;
            }
        }
        let Ok(c) = u16::try_from(self.s.classes.len()) else {
            self.classes_full += 1;
            return 0;
        };
        self.s
            .classes
            .push((cat, Category::from_cat(self.strings.get(cat))));
        self.class_map.insert(cat, c);
        c
    }

    /// Adds a complete slice; returns its raw id. Negative durations are clamped to 0 with a warning.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn add_slice(
        &mut self,
        track: u32,
        start: Ps,
        mut dur: Ps,
        name: StrId,
        cat: StrId,
        args: ArgsRef,
        corr: u64,
    ) -> u32 {
        if dur < 0 {
            self.warn(
                "negative_duration",
                "slice with negative duration clamped to 0".into(),
            );
            dur = 0;
        }
        let class = self.class_of(cat);
        let id = self.s.start.len() as u32;
        self.s_track.push(track);
        self.s.start.push(start);
        self.s.dur.push(dur);
        self.s.name.push(name);
        self.s.class.push(class);
        self.s.args.push(args);
        self.s.corr.push(narrow_corr(corr).unwrap_or_else(|| {
            self.s.corr_wide.push((id, corr));
            CORR_WIDE
        }));
        self.s.flags.push(0);
        id
    }

    /// Logs a `B` drawn on `track`; paired with its `E` in `finish` (see `begin_end`): `B`s
    /// and `E`s pair within a thread, the tracks of one (process, key) — a thread and the
    /// device stream of the same tid — being one thread.
    pub fn begin_slice(&mut self, track: u32, ts: Ps, name: StrId, cat: StrId, args: ArgsRef) {
        let tr = &self.tracks[track as usize];
        let thread = (tr.process, tr.key);
        self.begin_end.begin(thread, track, ts, name, cat, args);
    }

    /// Logs an `E` of the thread of `track`: it closes the innermost open `B` named `name`
    /// (any open `B` when `name` is `StrId::EMPTY`) at `ts`; one that matches nothing is
    /// skipped with an `unmatched_end` warning.
    pub fn end_slice(&mut self, track: u32, ts: Ps, name: StrId) {
        let tr = &self.tracks[track as usize];
        let thread = (tr.process, tr.key);
        self.begin_end.end(thread, ts, name);
    }

    /// [`CaptureBuilder::end_slice`] for the thread `key` of process `p` (no track needed).
    pub fn end_slice_of(&mut self, p: u32, key: Key, ts: Ps, name: StrId) {
        self.begin_end.end((p, key), ts, name);
    }

    /// Opens an async slice keyed by (process, category, id) on `track`.
    #[allow(clippy::too_many_arguments)]
    pub fn async_begin(
        &mut self,
        track: u32,
        cat: StrId,
        id: u64,
        ts: Ps,
        name: StrId,
        args: ArgsRef,
    ) {
        let p = self.tracks[track as usize].process;
        self.async_open.entry((p, cat, id)).or_default().push((
            Open {
                ts,
                name,
                cat,
                args,
            },
            track,
        ));
    }

    /// Closes the innermost open async slice with this key; warns when none is open.
    pub fn async_end(&mut self, p: u32, cat: StrId, id: u64, ts: Ps) -> Option<u32> {
        match self.async_open.get_mut(&(p, cat, id)).and_then(|v| v.pop()) {
            Some((o, track)) => {
                Some(self.add_slice(track, o.ts, ts - o.ts, o.name, o.cat, o.args, 0))
            }
            None => {
                self.warn(
                    "unmatched_async_end",
                    "async end without a matching begin".into(),
                );
                None
            }
        }
    }

    /// Adds an instant event. `scope` is b't', b'p' or b'g'.
    pub fn add_instant(
        &mut self,
        track: u32,
        ts: Ps,
        name: StrId,
        cat: StrId,
        args: ArgsRef,
        scope: u8,
    ) {
        self.inst.ts.push(ts);
        self.inst.name.push(name);
        self.inst.cat.push(cat);
        self.inst.args.push(args);
        self.inst.track.push(track);
        self.inst.scope.push(scope);
    }

    /// Adds a counter sample to series `name` of process `p` (one track per series).
    pub fn add_counter(&mut self, p: u32, name: StrId, ts: Ps, value: f64) {
        let c = match self.counter_map.get(&(p, name)) {
            Some(&c) => c,
            None => {
                let t = self.track(p, Key::Str(name), TrackKind::Counter);
                self.tracks[t as usize].name = name;
                let c = self.counters.len() as u32;
                self.counters.push(CounterSeries {
                    track: t,
                    name,
                    ts: Vec::new(),
                    value: Vec::new(),
                });
                self.tracks[t as usize].counter = Some(c);
                self.counter_map.insert((p, name), c);
                c
            }
        };
        let s = &mut self.counters[c as usize];
        s.ts.push(ts);
        s.value.push(value);
    }

    /// Records a flow point bound to the enclosing slice (`bind_enclosing`) or the next slice
    /// starting at or after `ts` on `track`.
    pub fn flow_point(
        &mut self,
        phase: FlowPhase,
        id: u64,
        cat: StrId,
        track: u32,
        ts: Ps,
        bind_enclosing: bool,
    ) {
        let end = if bind_enclosing {
            FlowEnd::Enclosing { track, ts }
        } else {
            FlowEnd::Next { track, ts }
        };
        self.push_flow_point(phase, id, cat, end);
    }

    /// Records a flow point bound to a slice directly (Chrome `bind_id`/`flow_in`/`flow_out`, XPlane `flow`).
    pub fn flow_slice(&mut self, phase: FlowPhase, id: u64, cat: StrId, raw_slice: u32) {
        self.push_flow_point(phase, id, cat, FlowEnd::Slice(raw_slice));
    }

    fn push_flow_point(&mut self, phase: FlowPhase, id: u64, cat: StrId, end: FlowEnd) {
        let phase = match phase {
            FlowPhase::Start => 0,
            FlowPhase::Step => 1,
            FlowPhase::Finish => 2,
        };
        let seq = self.flow_points.len() as u32;
        self.flow_points.push(FlowPoint {
            id,
            cat,
            end,
            phase,
            seq,
        });
    }

    /// Adds an aggregated (untimed) event.
    pub fn add_aggregated(&mut self, track: u32, name: StrId, occurrences: u64, dur: Ps) {
        self.aggregated.push(Aggregated {
            track,
            name,
            occurrences,
            dur,
        });
    }

    /// Records a warning; repeated kinds are counted, the first message kept.
    pub fn warn(&mut self, kind: &'static str, message: String) {
        self.warn_n(kind, message, 1);
    }

    /// Records `n` occurrences of a warning.
    pub fn warn_n(&mut self, kind: &'static str, message: String, n: u64) {
        if n == 0 {
            return;
        }
        if let Some(w) = self.warnings.iter_mut().find(|w| w.kind == kind) {
            w.count += n;
        } else {
            self.warnings.push(Warning {
                kind,
                count: n,
                message,
            });
        }
    }
}
