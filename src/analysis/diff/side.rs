//! One side of a diff: per-key count, inclusive and self time and durations of one capture,
//! over the whole capture or the events of some steps.

use super::group::GroupKey;
use super::short::short_name;
use super::steps::{Step, StepRange, Windows, find_steps, list_numbers};
use crate::analysis::names::match_name;
use crate::analysis::stats::{
    EventKind, NO_GROUP, group_name, is_device_process, is_profiler_track,
};
use crate::model::{Capture, Category, NO_SLICE, Ps, StrId};
use rustc_hash::FxHashMap;

/// One key of one side.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SideRow {
    /// Key (name, short name, category or stream). Names are matched across captures: memory
    /// addresses read `0x…` ([`match_name`]), `ProfilerStep#N` reads `ProfilerStep*`.
    pub name: String,
    /// What its events are, for rows of names and short names (`stats`' kinds, so a host
    /// annotation and its GPU twin of one name are two rows); `None` for categories and
    /// streams.
    pub kind: Option<EventKind>,
    /// Events.
    pub count: u64,
    /// Σ duration (inclusive), ps.
    pub total_ps: Ps,
    /// Σ self time (duration − direct children on the same track), ps.
    pub self_ps: Ps,
    /// Durations of the timed events (for the median), unsorted.
    pub durs: Vec<Ps>,
    /// Some event of the key is a step or profiler span (see [`is_span`]): the key times steps,
    /// it is not work done in them, so it is no contributor to a step-time change.
    pub span: bool,
    /// Σ self time of the key's events on a step thread (a host track holding a step slice,
    /// [`Side::step_tracks`]) that start inside a step in scope, ps: these add up to the steps'
    /// total duration, so their changes add up to the step-time change.
    pub step_self_ps: Ps,
}

impl SideRow {
    /// Median duration (lower median), ps; `None` without timed events.
    pub fn p50_ps(&self) -> Option<Ps> {
        if self.durs.is_empty() {
            return None;
        }
        let mut d = self.durs.clone();
        let k = (d.len() - 1) / 2;
        let (_, m, _) = d.select_nth_unstable(k);
        Some(*m)
    }
}

/// The per-key table of one capture under a scope.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Side {
    /// Rows, in first-seen order.
    pub rows: Vec<SideRow>,
    /// Steps in scope (none when the capture has no step annotation).
    pub steps: Vec<Step>,
    /// True when the steps were found on host tracks (a slice spanning a step window exactly):
    /// then [`SideRow::step_self_ps`] adds up to the steps' duration.
    pub step_tracks: bool,
    /// Mean step duration, ps; the capture's span when it has no steps in scope.
    pub step_time_ps: Ps,
}

/// True for the profiler's own events, left out of a diff as `stats` leaves them out (Kineto's
/// `PyTorch Profiler (0)` span: the `Trace` category, the `Spans` / `Traces` processes).
pub fn is_profiler_event(c: &Capture, profiler_track: bool, i: usize) -> bool {
    profiler_track || c.slices.kind(i) == Category::Trace
}

/// Builds the table of `c` (a host slice that encloses a whole step window, or named like a
/// step or profiler span ([`is_span_name`]), marks its key as a span: [`SideRow::span`]): every slice (and, for whole captures, every aggregated XPlane
/// event), keyed by `group`. With `range`, only slices of those steps: host slices starting
/// inside a step window, device slices whose launch (same correlation id) is such a host slice,
/// and — unless `hta` (HTA's iteration rule, which leaves them out) — device slices without a
/// launch in the capture that start inside a window. `Err` when the range matches no step (it
/// lists the capture's step numbers).
/// The profiler's own events are left out unless `profiler` ([`is_profiler_event`]).
pub fn side(
    c: &Capture,
    group: GroupKey,
    range: Option<StepRange>,
    hta: bool,
    profiler: bool,
) -> Result<Side, String> {
    let all_steps = find_steps(c);
    let all_windows: Vec<(Ps, Ps)> = all_steps.iter().map(|st| (st.start, st.end)).collect();
    let s = &c.slices;
    let n = s.len();
    let (steps, keep): (Vec<Step>, Option<Vec<bool>>) = match range {
        None => (all_steps, None),
        Some(r) => {
            let (steps, keep) = select_from(c, all_steps, r, hta)?;
            (steps, Some(keep))
        }
    };
    // Σ direct children per slice, for self time.
    let mut child: Vec<Ps> = vec![0; n];
    for i in 0..n {
        let p = s.parent[i];
        if p != NO_SLICE
            && let Some(acc) = child.get_mut(p as usize)
        {
            *acc += s.dur[i];
        }
    }
    let spans = SpanTest::new(&all_windows);
    let on_step_track = spans.step_tracks(c);
    let scope_windows = Windows::of(&steps);
    let mut keys = Keys::new(c, group);
    for (t, tr) in c.tracks.iter().enumerate() {
        let (lo, hi) = (tr.slices.0 as usize, (tr.slices.1 as usize).min(n));
        let profiler_track = is_profiler_track(c, t as u32);
        let device = is_device_process(c, t as u32);
        for i in lo..hi {
            if keep.as_ref().is_some_and(|k| !k[i])
                || (!profiler && is_profiler_event(c, profiler_track, i))
            {
                continue;
            }
            let r = keys.of_slice(i, t as u32, device);
            let row = &mut keys.rows[r as usize];
            row.count += 1;
            row.total_ps += s.dur[i];
            row.self_ps += s.dur[i] - child[i];
            row.durs.push(s.dur[i]);
            if !row.span && spans.is_span(c, i) {
                row.span = true;
            }
            if on_step_track[t] && scope_windows.contains(s.start[i]) {
                row.step_self_ps += s.dur[i] - child[i];
            }
        }
    }
    if keep.is_none() {
        for a in &c.aggregated {
            if !profiler && is_profiler_track(c, a.track) {
                continue;
            }
            let r = keys.of_aggregated(a.name, a.track, is_device_process(c, a.track));
            let row = &mut keys.rows[r as usize];
            row.count += a.occurrences;
            row.total_ps += a.dur;
            row.self_ps += a.dur;
        }
    }
    let step_time_ps = if steps.is_empty() {
        c.span.1 - c.span.0
    } else {
        steps.iter().map(|st| st.end - st.start).sum::<Ps>() / steps.len() as Ps
    };
    Ok(Side {
        rows: keys.rows,
        step_tracks: !steps.is_empty() && on_step_track.iter().any(|&b| b),
        steps,
        step_time_ps,
    })
}

/// The steps `range` selects (by number, or by position with `#`) and, per slice, whether it is
/// of those steps (the rule of [`side`]; `gpu --steps` uses it too). `Err` when the range matches
/// no step; the message lists the capture's steps.
pub fn select_steps(
    c: &Capture,
    range: StepRange,
    hta: bool,
) -> Result<(Vec<Step>, Vec<bool>), String> {
    select_from(c, find_steps(c), range, hta)
}

/// [`select_steps`] over the capture's steps `all`.
fn select_from(
    c: &Capture,
    all: Vec<Step>,
    r: StepRange,
    hta: bool,
) -> Result<(Vec<Step>, Vec<bool>), String> {
    let numbers: Vec<i64> = all.iter().map(|st| st.number).collect();
    let steps = r.select(all);
    if steps.is_empty() {
        let has = format!("its steps: {}", list_numbers(&numbers));
        return Err(if r.by_position {
            format!("no step at position {r} ({} steps; {has})", numbers.len())
        } else {
            format!("no step numbered in {r} ({has}; #1..=3 selects by position)")
        });
    }
    let keep = in_steps(c, &Windows::of(&steps), hta);
    Ok((steps, keep))
}

/// Tells step and profiler spans from work: see [`is_span`].
struct SpanTest {
    /// Step windows, sorted by start.
    windows: Vec<(Ps, Ps)>,
    /// The shortest step.
    min_dur: Ps,
}

impl SpanTest {
    fn new(windows: &[(Ps, Ps)]) -> SpanTest {
        let mut w = windows.to_vec();
        w.sort_unstable();
        let min_dur = w.iter().map(|(a, b)| b - a).min().unwrap_or(Ps::MAX);
        SpanTest {
            windows: w,
            min_dur,
        }
    }

    /// Per track: true for a host track holding a slice whose window is exactly a step's.
    fn step_tracks(&self, c: &Capture) -> Vec<bool> {
        let s = &c.slices;
        let mut out = vec![false; c.tracks.len()];
        for (t, tr) in c.tracks.iter().enumerate() {
            let (lo, hi) = (tr.slices.0 as usize, (tr.slices.1 as usize).min(s.len()));
            out[t] = (lo..hi).any(|i| {
                s.dur[i] >= self.min_dur
                    && !s.kind(i).is_device()
                    && self.windows.binary_search(&(s.start[i], s.end(i))).is_ok()
            });
        }
        out
    }

    fn is_span(&self, c: &Capture, i: usize) -> bool {
        let s = &c.slices;
        if s.dur[i] >= self.min_dur && !s.kind(i).is_device() {
            let (a, b) = (s.start[i], s.end(i));
            let k = self.windows.partition_point(|w| w.0 < a);
            if self.windows.get(k).is_some_and(|w| w.1 <= b) {
                return true;
            }
        }
        is_span_name(c.strings.get(s.name[i]))
    }
}

/// A step or profiler span by its name: `ProfilerStep#N` (also its device copy), Kineto's
/// `PyTorch Profiler (N)` recording span.
pub fn is_span_name(name: &str) -> bool {
    name.starts_with("ProfilerStep#")
        || name == "ProfilerStep*"
        || name.starts_with("PyTorch Profiler (")
}

/// Which slices the step windows cover (see [`side`]).
fn in_steps(c: &Capture, w: &Windows, hta: bool) -> Vec<bool> {
    let s = &c.slices;
    let mut keep = vec![false; s.len()];
    let mut launches: FxHashMap<u64, bool> = FxHashMap::default();
    for (i, k) in keep.iter_mut().enumerate() {
        if s.kind(i).is_device() {
            continue;
        }
        *k = w.contains(s.start[i]);
        let corr = s.corr(i);
        if corr != 0 {
            let e = launches.entry(corr).or_insert(false);
            *e |= *k;
        }
    }
    for (i, k) in keep.iter_mut().enumerate() {
        if !s.kind(i).is_device() {
            continue;
        }
        *k = match launches.get(&s.corr(i)) {
            Some(&launched_in) if s.corr(i) != 0 => launched_in,
            _ => !hta && w.contains(s.start[i]),
        };
    }
    keep
}

const UNSET: u32 = u32::MAX;

/// Maps events to rows by the grouping and kind, memoised per name id (or track) — the row of
/// the first kind seen in a vector, those of other kinds in a map — without per-event
/// allocation.
struct Keys<'c> {
    c: &'c Capture,
    group: GroupKey,
    memo: Vec<u32>,
    memo_kind: FxHashMap<(u32, Option<EventKind>), u32>,
    by_text: FxHashMap<(Option<EventKind>, String), u32>,
    rows: Vec<SideRow>,
}

impl<'c> Keys<'c> {
    fn new(c: &'c Capture, group: GroupKey) -> Self {
        Keys {
            c,
            group,
            memo: Vec::new(),
            memo_kind: FxHashMap::default(),
            by_text: FxHashMap::default(),
            rows: Vec::new(),
        }
    }

    fn named(&mut self, kind: Option<EventKind>, text: &str) -> u32 {
        if let Some(&r) = self.by_text.get(&(kind, text.to_string())) {
            return r;
        }
        let r = self.rows.len() as u32;
        self.rows.push(SideRow {
            name: text.to_string(),
            kind,
            ..SideRow::default()
        });
        self.by_text.insert((kind, text.to_string()), r);
        r
    }

    fn memoised(
        &mut self,
        i: usize,
        kind: Option<EventKind>,
        text: impl FnOnce(&Capture) -> String,
    ) -> u32 {
        let first = self.memo.get(i).copied().unwrap_or(UNSET);
        if first != UNSET {
            if self
                .rows
                .get(first as usize)
                .is_some_and(|r| r.kind == kind)
            {
                return first;
            }
            if let Some(&r) = self.memo_kind.get(&(i as u32, kind)) {
                return r;
            }
        }
        let t = text(self.c);
        let r = self.named(kind, &t);
        if first == UNSET {
            if i >= self.memo.len() {
                self.memo.resize(i + 1, UNSET);
            }
            self.memo[i] = r;
        } else {
            self.memo_kind.insert((i as u32, kind), r);
        }
        r
    }

    fn of_name(&mut self, name: StrId, kind: EventKind) -> u32 {
        let group = self.group;
        self.memoised(name.index(), Some(kind), |c| {
            let raw = match_name(group_name(c.strings.get(name)));
            match group {
                GroupKey::Short => short_name(&raw).into_owned(),
                _ => raw.into_owned(),
            }
        })
    }

    fn of_track(&mut self, t: u32) -> u32 {
        self.memoised(t as usize, None, |c| stream_name(c, t))
    }

    fn of_slice(&mut self, i: usize, t: u32, device: bool) -> u32 {
        match self.group {
            GroupKey::Name | GroupKey::Short => {
                let kind = EventKind::of_event(self.c.slices.kind(i), device);
                self.of_name(self.c.slices.name[i], kind)
            }
            GroupKey::Category => {
                let cat = self.c.slices.cat(i);
                self.memoised(cat.index(), None, |c| {
                    let raw = c.strings.get(cat);
                    if raw.is_empty() {
                        NO_GROUP.to_string()
                    } else {
                        raw.to_string()
                    }
                })
            }
            GroupKey::Stream => self.of_track(t),
        }
    }

    fn of_aggregated(&mut self, name: StrId, t: u32, device: bool) -> u32 {
        match self.group {
            GroupKey::Name | GroupKey::Short => {
                self.of_name(name, EventKind::of_event(Category::Other, device))
            }
            GroupKey::Category => self.named(None, NO_GROUP),
            GroupKey::Stream => self.of_track(t),
        }
    }
}

/// `process / track` as the explorer titles them (`GPU 0 (python) / stream 7`): display names,
/// not pids, so two runs match.
pub fn stream_name(c: &Capture, t: u32) -> String {
    match c.tracks.get(t as usize) {
        Some(tr) => format!("{} / {}", c.process_title(tr.process), c.track_name(t)),
        None => String::new(),
    }
}
