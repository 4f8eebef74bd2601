//! `CaptureBuilder`: what every loader writes into. Loaders push events in file order; `finish`
//! sorts, nests, resolves flows and produces an immutable [`Capture`].

use super::args::{ArgsArena, ArgsRef};
use super::begin_end::BeginEndLog;
use super::capture::*;
use super::category::Category;
use super::nesting::{LaneCols, assign_lanes_cols};
use super::strings::{Interner, StrId};
use super::track_of::TrackOf;
use rustc_hash::FxHashMap;

/// A flow endpoint as read from the file, resolved to a slice in `finish`.
#[derive(Clone, Copy, Debug)]
enum FlowEnd {
    /// Bound directly to a slice (raw, pre-sort id).
    Slice(u32),
    /// Bound to the slice on `track` enclosing `ts` (`bp:"e"`, or `s`/`t` phases).
    Enclosing { track: u32, ts: Ps },
    /// Bound to the next slice on `track` starting at or after `ts`.
    Next { track: u32, ts: Ps },
}

#[derive(Clone, Copy, Debug)]
struct FlowPoint {
    id: u64,
    cat: StrId,
    end: FlowEnd,
    /// 0 = start (`s`), 1 = step (`t`), 2 = finish (`f`).
    phase: u8,
    seq: u32,
}

#[derive(Clone, Copy, Debug)]
struct Open {
    ts: Ps,
    name: StrId,
    cat: StrId,
    args: ArgsRef,
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
    processes: Vec<Process>,
    proc_map: FxHashMap<Key, u32>,
    tracks: Vec<Track>,
    track_map: FxHashMap<(u32, Key, u8), u32>,
    pub(super) s_track: TrackOf,
    /// Index of the first track run of the latest `slots` call (see `compact_slots`).
    pub(super) slot_runs: Option<usize>,
    pub(super) s: Slices,
    /// `B`/`E` events, paired in `finish`.
    begin_end: BeginEndLog,
    async_open: FxHashMap<(u32, StrId, u64), Vec<(Open, u32)>>,
    inst: Instants,
    counters: Vec<CounterSeries>,
    counter_map: FxHashMap<(u32, StrId), u32>,
    flow_points: Vec<FlowPoint>,
    aggregated: Vec<Aggregated>,
    warnings: Vec<Warning>,
    /// Wall-clock epoch ns of time 0, when known.
    pub origin_epoch_ns: Option<i64>,
    /// Trace-level metadata block.
    pub metadata: ArgsRef,
    /// Class (index into `s.classes`) of each raw category seen.
    class_map: FxHashMap<StrId, u16>,
    /// Slices whose category did not fit the class table (given class 0).
    classes_full: u64,
}

impl Default for CaptureBuilder {
    fn default() -> Self {
        Self::new()
    }
}

fn kind_tag(k: TrackKind) -> u8 {
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

    /// Sorts, nests and links everything into an immutable capture.
    pub fn finish(mut self, source: SourceInfo, format: Format) -> Capture {
        let mut open: Vec<(u32, Open)> = Vec::new();
        if !self.begin_end.is_empty() {
            let paired = std::mem::take(&mut self.begin_end).pair();
            for (b, end) in paired.closed {
                self.add_slice(b.track, b.ts, end - b.ts, b.name, b.cat, b.args, 0);
            }
            open.extend(paired.open.into_iter().map(|b| {
                (
                    b.track,
                    Open {
                        ts: b.ts,
                        name: b.name,
                        cat: b.cat,
                        args: b.args,
                    },
                )
            }));
            self.warn_n(
                "unmatched_end",
                format!(
                    "{} E event(s) matching no open B (of that name) on their thread skipped",
                    paired.unmatched_end
                ),
                paired.unmatched_end,
            );
            self.warn_n(
                "overlapping_begin_end",
                format!(
                    "{} E event(s) closed a slice while slices begun inside it were still open: those partly overlap it and are drawn on extra lanes (Perfetto rejects them)",
                    paired.out_of_order
                ),
                paired.out_of_order,
            );
            open.sort_by_key(|(t, o)| (*t, o.ts));
        }
        let mut async_open: Vec<(Open, u32)> = std::mem::take(&mut self.async_open)
            .into_values()
            .flatten()
            .collect();
        async_open.sort_by_key(|(o, t)| (*t, o.ts));
        // Latest time seen, to close unfinished slices (only needed when there are some).
        let mut max_t = i64::MIN;
        if !open.is_empty() || !async_open.is_empty() {
            for i in 0..self.s.start.len() {
                max_t = max_t.max(self.s.start[i] + self.s.dur[i]);
            }
            for &t in &self.inst.ts {
                max_t = max_t.max(t);
            }
            for c in &self.counters {
                for &t in &c.ts {
                    max_t = max_t.max(t);
                }
            }
            for &(_, o) in &open {
                max_t = max_t.max(o.ts);
            }
            for (o, _) in &async_open {
                max_t = max_t.max(o.ts);
            }
        }
        if !open.is_empty() {
            let n = open.len() as u64;
            self.warn_n(
                "unmatched_begin",
                format!("{n} B event(s) without E: drawn until the end of the capture"),
                n,
            );
            for (t, o) in open {
                let id = self.add_slice(t, o.ts, max_t - o.ts, o.name, o.cat, o.args, 0);
                self.s.flags[id as usize] |= slice_flags::UNFINISHED;
            }
        }
        if !async_open.is_empty() {
            let n = async_open.len() as u64;
            self.warn_n(
                "unmatched_async_begin",
                format!("{n} async begin(s) without end: drawn until the end of the capture"),
                n,
            );
            for (o, t) in async_open {
                let id = self.add_slice(t, o.ts, max_t - o.ts, o.name, o.cat, o.args, 0);
                self.s.flags[id as usize] |= slice_flags::ASYNC_UNFINISHED;
            }
        }
        // Sort slices by (track, start asc, dur desc, raw id).
        let n = self.s.start.len();
        // Loaders usually push in order: skip the O(n log n) sort when nothing is out of place.
        let parallel = n >= PARALLEL_MIN_SLICES && crate::threads::cores() > 1;
        let mut ranges = None;
        if self
            .s_track
            .runs_presorted(&self.s.start, &self.s.dur, parallel)
            == Some(true)
        {
            ranges = Some(self.s_track.ranges(self.tracks.len()));
        }
        if ranges.is_none() {
            self.s_track.densify();
        }
        let presorted = ranges.is_some() || {
            let (tr, st, du) = (&*self.s_track.dense_mut(), &self.s.start, &self.s.dur);
            let in_order = |r: std::ops::Range<usize>| {
                r.into_iter().all(|i| {
                    (tr[i - 1], st[i - 1]) < (tr[i], st[i])
                        || (tr[i - 1] == tr[i] && st[i - 1] == st[i] && du[i - 1] >= du[i])
                })
            };
            if parallel {
                let mid = n / 2;
                std::thread::scope(|sc| {
                    let h = sc.spawn(|| in_order(mid.max(1)..n));
                    let a = in_order(1..mid.max(1));
                    a & h.join().unwrap_or(false)
                })
            } else {
                in_order(1..n)
            }
        };
        let order = if presorted {
            Vec::new()
        } else {
            sort_slice_order(
                self.s_track.dense_mut(),
                &self.s.start,
                &self.s.dur,
                self.tracks.len(),
            )
        };
        let sorted = order.windows(2).all(|w| w[0] < w[1]);
        let mut raw_to_new: Vec<u32> = Vec::new();
        if !sorted {
            raw_to_new = vec![0u32; n];
            for (new, &raw) in order.iter().enumerate() {
                raw_to_new[raw as usize] = new as u32;
            }
            fn permute<T: Copy>(v: &mut Vec<T>, order: &[u32]) {
                let out: Vec<T> = order.iter().map(|&i| v[i as usize]).collect();
                *v = out;
            }
            let s = &mut self.s;
            let s_track = self.s_track.dense_mut();
            let order = &order;
            // Column gathers are independent: split them over two threads for large captures.
            let second = |s_corr: &mut Vec<u32>, s_flags: &mut Vec<u8>, st: &mut Vec<u32>| {
                permute(s_corr, order);
                permute(s_flags, order);
                permute(st, order);
            };
            if n >= PARALLEL_MIN_SLICES && crate::threads::cores() > 1 {
                std::thread::scope(|sc| {
                    let (corr, flags) = (&mut s.corr, &mut s.flags);
                    sc.spawn(move || second(corr, flags, s_track));
                    permute(&mut s.start, order);
                    permute(&mut s.dur, order);
                    permute(&mut s.name, order);
                    permute(&mut s.class, order);
                    permute(&mut s.args, order);
                });
            } else {
                permute(&mut s.start, order);
                permute(&mut s.dur, order);
                permute(&mut s.name, order);
                permute(&mut s.class, order);
                permute(&mut s.args, order);
                second(&mut s.corr, &mut s.flags, s_track);
            }
        }
        drop(order);
        let map_raw = |raw: u32| -> u32 {
            if raw_to_new.is_empty() {
                raw
            } else {
                raw_to_new[raw as usize]
            }
        };
        for e in &mut self.s.corr_wide {
            e.0 = map_raw(e.0);
        }
        self.s.corr_wide.sort_unstable();
        self.s.corr_wide.shrink_to_fit();

        // Track ranges.
        let nt = self.tracks.len();
        if let Some(r) = ranges {
            for (t, r) in self.tracks.iter_mut().zip(r) {
                t.slices = r;
            }
        } else {
            let tr = self.s_track.dense_mut();
            let mut i = 0usize;
            for t in 0..nt {
                let lo = i;
                while i < n && tr[i] as usize == t {
                    i += 1;
                }
                self.tracks[t].slices = (lo as u32, i as u32);
            }
        }
        self.s_track = TrackOf::default();
        // Zeroed allocations: every element is written by `assign_lanes_cols`.
        self.s.lane = vec![0; n];
        self.s.parent = vec![0; n];
        let slice_span = self.assign_all_lanes();
        // Instants by (track, ts).
        let ni = self.inst.ts.len();
        let mut iorder: Vec<u32> = (0..ni as u32).collect();
        iorder.sort_by_key(|&k| (self.inst.track[k as usize], self.inst.ts[k as usize]));
        if !iorder.windows(2).all(|w| w[0] < w[1]) {
            let g = |v: &Vec<_>| -> Vec<_> { iorder.iter().map(|&k| v[k as usize]).collect() };
            let inst = &self.inst;
            let out = Instants {
                ts: g(&inst.ts),
                name: iorder.iter().map(|&k| inst.name[k as usize]).collect(),
                cat: iorder.iter().map(|&k| inst.cat[k as usize]).collect(),
                args: iorder.iter().map(|&k| inst.args[k as usize]).collect(),
                track: iorder.iter().map(|&k| inst.track[k as usize]).collect(),
                scope: iorder.iter().map(|&k| inst.scope[k as usize]).collect(),
            };
            self.inst = out;
        }
        let mut i = 0usize;
        for t in 0..nt {
            let lo = i;
            while i < ni && self.inst.track[i] as usize == t {
                i += 1;
            }
            self.tracks[t].instants = (lo as u32, i as u32);
        }
        for c in &mut self.counters {
            if !c.ts.windows(2).all(|w| w[0] <= w[1]) {
                let mut pairs: Vec<(Ps, f64)> =
                    c.ts.iter().copied().zip(c.value.iter().copied()).collect();
                pairs.sort_by_key(|p| p.0);
                c.ts = pairs.iter().map(|p| p.0).collect();
                c.value = pairs.iter().map(|p| p.1).collect();
            }
        }

        // Flows: group points by (cat, id) in file order; link consecutive points.
        let mut fp = std::mem::take(&mut self.flow_points);
        // Order each flow's points by time (files may list the `f` before its `s`, e.g. Kineto
        // writes GPU events first), then start before step before finish, then file order.
        let point_time = |e: FlowEnd| -> Ps {
            match e {
                FlowEnd::Slice(raw) => self
                    .s
                    .start
                    .get(map_raw(raw) as usize)
                    .copied()
                    .unwrap_or(0),
                FlowEnd::Enclosing { ts, .. } | FlowEnd::Next { ts, .. } => ts,
            }
        };
        fp.sort_by_key(|p| (p.cat, p.id, point_time(p.end), p.phase, p.seq));
        let mut flows = Vec::new();
        let mut unresolved = 0u64;
        // The other track of a thread / device-stream pair of one (process, tid): a flow point
        // given on one binds to the other when its own has no slice there.
        let sibling = |t: u32| -> Option<u32> {
            let tr = &self.tracks[t as usize];
            let other = match tr.kind {
                TrackKind::Thread => TrackKind::GpuStream,
                TrackKind::GpuStream => TrackKind::Thread,
                _ => return None,
            };
            self.find_track(tr.process, tr.key, other)
        };
        let resolve = |s: &Slices, tracks: &[Track], e: FlowEnd| -> u32 {
            let on = |track: u32| match e {
                FlowEnd::Slice(raw) => map_raw(raw),
                FlowEnd::Enclosing { ts, .. } => enclosing_slice(s, &tracks[track as usize], ts),
                FlowEnd::Next { ts, .. } => {
                    let (lo, hi) = tracks[track as usize].slices;
                    let k = lo as usize
                        + s.start[lo as usize..hi as usize].partition_point(|&x| x < ts);
                    if k < hi as usize { k as u32 } else { NO_SLICE }
                }
            };
            match e {
                FlowEnd::Slice(raw) => map_raw(raw),
                FlowEnd::Enclosing { track, .. } | FlowEnd::Next { track, .. } => {
                    let found = on(track);
                    match sibling(track) {
                        Some(o) if found == NO_SLICE => on(o),
                        _ => found,
                    }
                }
            }
        };
        let mut k = 0;
        while k < fp.len() {
            let mut j = k;
            while j < fp.len() && fp[j].cat == fp[k].cat && fp[j].id == fp[k].id {
                j += 1;
            }
            let group = &fp[k..j];
            for w in group.windows(2) {
                if w[1].phase == 0 {
                    continue; // a new flow with a reused id starts here
                }
                let from = resolve(&self.s, &self.tracks, w[0].end);
                let to = resolve(&self.s, &self.tracks, w[1].end);
                if from == NO_SLICE || to == NO_SLICE {
                    unresolved += 1;
                }
                flows.push(Flow {
                    id: w[0].id,
                    cat: w[0].cat,
                    from,
                    to,
                });
            }
            if group.len() == 1 {
                unresolved += 1;
            }
            k = j;
        }
        if unresolved > 0 {
            self.warn_n(
                "unresolved_flow",
                "flow endpoint without a matching slice or partner".into(),
                unresolved,
            );
        }
        // Span (slices' part computed with the lanes).
        let (mut lo_t, mut hi_t) = slice_span;
        if self.classes_full > 0 {
            let n = self.classes_full;
            self.warn_n(
                "categories_capped",
                "more than 65 536 distinct categories: later ones shown without category".into(),
                n,
            );
        }
        for &t in &self.inst.ts {
            lo_t = lo_t.min(t);
            hi_t = hi_t.max(t);
        }
        for c in &self.counters {
            if let (Some(&a), Some(&b)) = (c.ts.first(), c.ts.last()) {
                lo_t = lo_t.min(a);
                hi_t = hi_t.max(b);
            }
        }
        let span = if lo_t <= hi_t { (lo_t, hi_t) } else { (0, 0) };
        if self.args.dropped_blocks > 0 {
            let d = self.args.dropped_blocks;
            self.warn_n(
                "args_capped",
                "args arena over 2 GiB: args of later events not kept".into(),
                d,
            );
        }
        self.args.shrink();
        Capture {
            source,
            format: Some(format),
            strings: self.strings,
            args: self.args,
            processes: self.processes,
            tracks: self.tracks,
            slices: self.s,
            instants: self.inst,
            counters: self.counters,
            flows,
            aggregated: self.aggregated,
            origin_epoch_ns: self.origin_epoch_ns,
            span,
            metadata: self.metadata,
            warnings: self.warnings,
        }
    }
}

impl CaptureBuilder {
    /// Lanes, depths and parents of every track, the tracks split over two threads (at a track
    /// boundary near the middle slice) for large captures.
    /// Returns the slices' (earliest start, latest end), `(i64::MAX, i64::MIN)` when none.
    fn assign_all_lanes(&mut self) -> (Ps, Ps) {
        let n = self.s.start.len();
        let tracks = &mut self.tracks;
        let Slices {
            start,
            dur,
            lane,
            parent,
            ..
        } = &mut self.s;
        let run = |tracks: &mut [Track],
                   start: &[Ps],
                   dur: &[Ps],
                   lane: &mut [u16],
                   parent: &mut [u32],
                   first: usize| {
            let (mut lo_t, mut hi_t) = (i64::MAX, i64::MIN);
            for t in tracks {
                let (lo, hi) = (t.slices.0 as usize - first, t.slices.1 as usize - first);
                let cols = LaneCols {
                    start: &start[lo..hi],
                    dur: &dur[lo..hi],
                    lane: &mut lane[lo..hi],
                    parent: &mut parent[lo..hi],
                };
                let laid = assign_lanes_cols(cols, t.slices.0);
                t.lanes = laid.lanes;
                t.max_depth = laid.max_depth;
                t.group_bases = laid.group_bases;
                if let Some(&s0) = start.get(lo)
                    && lo < hi
                {
                    lo_t = lo_t.min(s0);
                    let end = start[lo..hi]
                        .iter()
                        .zip(&dur[lo..hi])
                        .map(|(s, d)| s + d)
                        .max()
                        .unwrap_or(s0);
                    hi_t = hi_t.max(end);
                }
            }
            (lo_t, hi_t)
        };
        // First track ending past the middle: tracks before it go to the second thread.
        let k = tracks.partition_point(|t| (t.slices.1 as usize) <= n / 2);
        let cut = tracks.get(k).map_or(n, |t| t.slices.0 as usize);
        if n < PARALLEL_MIN_SLICES || crate::threads::cores() < 2 || k == 0 {
            return run(tracks, start, dur, lane, parent, 0);
        }
        let (ta, tb) = tracks.split_at_mut(k);
        let (la, lb) = lane.split_at_mut(cut);
        let (pa, pb) = parent.split_at_mut(cut);
        let (start, dur) = (&start[..], &dur[..]);
        std::thread::scope(|sc| {
            let h = sc.spawn(|| run(ta, start, dur, la, pa, 0));
            let (lo_b, hi_b) = run(tb, &start[cut..], &dur[cut..], lb, pb, cut);
            let (lo_a, hi_a) = h.join().unwrap_or((i64::MAX, i64::MIN));
            (lo_a.min(lo_b), hi_a.max(hi_b))
        })
    }
}

/// Slice counts from which `finish` sorts and permutes on several threads.
const PARALLEL_MIN_SLICES: usize = 1 << 16;

/// Raw slice ids ordered by (track, start asc, dur desc, raw id): a counting sort by track
/// (stable, so ids stay ascending within a track), then each track's bucket sorted on packed
/// keys (no indirection in the comparisons) unless already in order; tracks are spread over
/// threads for large captures. Same result as one comparison sort on the whole key.
pub fn sort_slice_order(track: &[u32], start: &[Ps], dur: &[Ps], ntracks: usize) -> Vec<u32> {
    let n = track.len();
    let nt = ntracks.max(track.iter().map(|&t| t as usize + 1).max().unwrap_or(0));
    let mut bounds = vec![0usize; nt + 1];
    for &t in track {
        bounds[t as usize + 1] += 1;
    }
    for t in 0..nt {
        bounds[t + 1] += bounds[t];
    }
    let mut fill = bounds.clone();
    let mut order = vec![0u32; n];
    for (i, &t) in track.iter().enumerate() {
        order[fill[t as usize]] = i as u32;
        fill[t as usize] += 1;
    }
    drop(fill);
    let sort_buckets = |part: &mut [u32], base: usize, tracks: std::ops::Range<usize>| {
        let mut keys: Vec<(Ps, std::cmp::Reverse<Ps>, u32)> = Vec::new();
        for t in tracks {
            let (lo, hi) = (bounds[t] - base, bounds[t + 1] - base);
            let ids = &mut part[lo..hi];
            let key = |i: u32| (start[i as usize], std::cmp::Reverse(dur[i as usize]), i);
            if ids.windows(2).all(|w| key(w[0]) < key(w[1])) {
                continue;
            }
            keys.clear();
            keys.extend(ids.iter().map(|&i| key(i)));
            keys.sort_unstable();
            for (dst, k) in ids.iter_mut().zip(&keys) {
                *dst = k.2;
            }
        }
    };
    let threads = crate::threads::cores();
    if n < PARALLEL_MIN_SLICES || threads < 2 || nt < 2 {
        sort_buckets(&mut order, 0, 0..nt);
        return order;
    }
    // Contiguous track groups of about n / threads slices each.
    let mut cuts = vec![0usize];
    for (t, &b) in bounds.iter().enumerate().take(nt).skip(1) {
        let want = cuts.len() * n / threads;
        if b >= want && cuts.len() < threads {
            cuts.push(t);
        }
    }
    cuts.push(nt);
    std::thread::scope(|sc| {
        let mut rest: &mut [u32] = &mut order;
        let mut taken = 0usize;
        for w in cuts.windows(2) {
            let (t0, t1) = (w[0], w[1]);
            let len = bounds[t1] - bounds[t0];
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(len);
            rest = tail;
            let base = taken;
            taken += len;
            let sb = &sort_buckets;
            sc.spawn(move || sb(part, base, t0..t1));
        }
    });
    order
}

/// The deepest slice of `track` (finished: lanes assigned) with `start <= ts < end`, or a
/// zero-length slice starting exactly at `ts`; `NO_SLICE` when none.
pub fn enclosing_slice(s: &Slices, track: &Track, ts: Ps) -> u32 {
    let (lo, hi) = (track.slices.0 as usize, track.slices.1 as usize);
    // Last slice starting at or before ts; walk up its parent chain until one contains ts.
    let k = lo + s.start[lo..hi].partition_point(|&x| x <= ts);
    let mut best = NO_SLICE;
    let mut best_depth = -1i32;
    // Scan backwards over a bounded number of candidates (slices on other lanes may overlap).
    let mut i = k;
    let mut steps = 0;
    while i > lo && steps < 64 {
        i -= 1;
        steps += 1;
        let (st, en) = (s.start[i], s.start[i] + s.dur[i]);
        if (st <= ts && ts < en) || (s.dur[i] == 0 && st == ts) {
            let d = i32::from(track.depth_of_lane(s.lane[i]));
            if d > best_depth {
                best = i as u32;
                best_depth = d;
            }
        }
    }
    if best == NO_SLICE && k > lo {
        // Long-running ancestors: follow the parent chain of the nearest earlier slice.
        let mut p = (k - 1) as u32;
        while p != NO_SLICE {
            let pi = p as usize;
            if s.start[pi] <= ts && ts < s.start[pi] + s.dur[pi] {
                return p;
            }
            p = s.parent[pi];
        }
    }
    best
}

#[cfg(test)]
mod sort_tests {
    use super::*;

    #[test]
    fn sort_order_matches_comparison_sort() {
        // Pseudo-random tracks/starts/durs with many ties; big enough for the threaded path.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for n in [0usize, 1, 5, 1000, PARALLEL_MIN_SLICES + 777] {
            let nt = 1 + n / 300;
            let tr: Vec<u32> = (0..n).map(|_| next(nt as u64) as u32).collect();
            let st: Vec<Ps> = (0..n).map(|_| next(50) as Ps).collect();
            let du: Vec<Ps> = (0..n).map(|_| next(4) as Ps).collect();
            let mut want: Vec<u32> = (0..n as u32).collect();
            want.sort_by_key(|&i| {
                let i = i as usize;
                (tr[i], st[i], std::cmp::Reverse(du[i]), i)
            });
            assert_eq!(sort_slice_order(&tr, &st, &du, nt), want, "n = {n}");
            // Already sorted within tracks: still grouped by track correctly.
            let st2: Vec<Ps> = (0..n as Ps).collect();
            let mut want2: Vec<u32> = (0..n as u32).collect();
            want2.sort_by_key(|&i| (tr[i as usize], i));
            assert_eq!(sort_slice_order(&tr, &st2, &du, nt), want2);
        }
    }
}
