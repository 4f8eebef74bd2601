//! Step boundaries of one capture, from the first source that has any (docs/steps.md):
//! `--step-regex`, Kineto `ProfilerStep#N`, XPlane host events with a `step_num` stat, XPlane
//! `Steps` lines; else the whole capture is one step.

use super::types::{Step, StepOptions, StepSource, Steps};
use crate::model::{Capture, NO_SLICE, Ps, StrId, TrackKind};
use regex::Regex;

pub(crate) use super::types::is_host_track;

/// Per interned name: `Some(number)` when the name marks a step (`i64::MIN` = a step without
/// a number), `None` otherwise. One regex run per distinct name, not per slice.
fn name_table(c: &Capture, re: &Regex) -> Vec<Option<i64>> {
    let mut out = vec![None; c.strings.len()];
    for (id, s) in c.strings.iter() {
        if let Some(m) = re.captures(s) {
            let n = m
                .get(1)
                .and_then(|g| g.as_str().trim().parse::<i64>().ok())
                .unwrap_or(i64::MIN);
            if let Some(slot) = out.get_mut(id.index()) {
                *slot = Some(n);
            }
        }
    }
    out
}

/// Raw (number, start, end) marks of host slices whose name is in `table`.
fn host_marks(c: &Capture, table: &[Option<i64>]) -> Vec<(i64, Ps, Ps)> {
    let mut out = Vec::new();
    for t in 0..c.tracks.len() {
        if !is_host_track(c, t) {
            continue;
        }
        let (a, b) = c.tracks[t].slices;
        for id in a as usize..b as usize {
            if let Some(Some(n)) = table.get(c.slices.name[id].index()) {
                out.push((*n, c.slices.start[id], c.slices.end(id)));
            }
        }
    }
    out
}

/// Turns raw marks into steps: marks with the same number merge (earliest start, latest end);
/// marks without a number are numbered by time order, a mark inside the previous one dropped.
fn to_steps(mut marks: Vec<(i64, Ps, Ps)>) -> Vec<Step> {
    let unnumbered = marks.iter().any(|m| m.0 == i64::MIN);
    let mut steps: Vec<Step> = Vec::new();
    if unnumbered {
        marks.sort_by_key(|m| (m.1, std::cmp::Reverse(m.2)));
        for (_, s, e) in marks {
            if steps.last().is_some_and(|l| s < l.end) {
                continue;
            }
            steps.push(Step {
                number: steps.len() as i64,
                start: s,
                end: e,
                partial: false,
            });
        }
        return steps;
    }
    marks.sort_unstable();
    for (n, s, e) in marks {
        match steps.last_mut() {
            Some(l) if l.number == n => {
                l.start = l.start.min(s);
                l.end = l.end.max(e);
            }
            _ => steps.push(Step {
                number: n,
                start: s,
                end: e,
                partial: false,
            }),
        }
    }
    steps.sort_by_key(|s| (s.start, s.number));
    steps
}

/// Host root events carrying a `step_num` stat (XPlane `StepTraceAnnotation`). The stat is
/// looked up once per distinct root name (the annotation's name is fixed per loop).
fn step_num_marks(c: &Capture) -> Vec<(i64, Ps, Ps)> {
    let Some(key) = c.strings.lookup("step_num") else {
        return Vec::new();
    };
    let mut has: Vec<u8> = vec![0; c.strings.len()]; // 0 unknown, 1 no, 2 yes
    let mut out = Vec::new();
    for t in 0..c.tracks.len() {
        if !is_host_track(c, t) {
            continue;
        }
        let (a, b) = c.tracks[t].slices;
        for id in a as usize..b as usize {
            if c.slices.parent[id] != NO_SLICE {
                continue;
            }
            let name = c.slices.name[id].index();
            let Some(state) = has.get_mut(name) else {
                continue;
            };
            if *state == 1 {
                continue;
            }
            let n = c
                .args
                .get(c.slices.args[id], key, &c.strings)
                .and_then(|v| v.as_i64(&c.strings));
            if *state == 0 {
                *state = if n.is_some() { 2 } else { 1 };
            }
            if let Some(n) = n {
                out.push((n, c.slices.start[id], c.slices.end(id)));
            }
        }
    }
    out
}

/// Events of every track named `Steps` (XPlane, given or derived), numbered by the number that
/// ends their name (`train 3`, or the group id `3`).
fn steps_line_marks(c: &Capture) -> Vec<(i64, Ps, Ps)> {
    let Some(steps_name) = c.strings.lookup("Steps") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for tr in &c.tracks {
        if tr.name != steps_name || !matches!(tr.kind, TrackKind::Derived | TrackKind::XLine) {
            continue;
        }
        for id in tr.slices.0 as usize..tr.slices.1 as usize {
            // XProf names a step by its group (`train 3`), older files by the group id (`3`).
            let n = c
                .strings
                .get(c.slices.name[id])
                .trim()
                .rsplit(' ')
                .next()
                .and_then(|x| x.parse().ok())
                .unwrap_or(i64::MIN);
            out.push((n, c.slices.start[id], c.slices.end(id)));
        }
    }
    out
}

/// Regex of Kineto's step annotations (HTA's `ProfilerStep\s*#\s*(\d+)`, anchored).
fn profiler_step_regex() -> Option<Regex> {
    Regex::new(r"^ProfilerStep\s*#\s*(\d+)").ok()
}

/// Finds the steps of `c` (see the module doc). The last of two or more steps is marked partial
/// when it ends within 1 µs of the capture's end (recording stopped inside it).
pub fn find(c: &Capture, opts: &StepOptions) -> Steps {
    let mut found: Option<(StepSource, Vec<Step>)> = None;
    if let Some(re) = &opts.regex {
        found = Some((
            StepSource::Regex,
            to_steps(host_marks(c, &name_table(c, re))),
        ));
    } else {
        if let Some(re) = profiler_step_regex() {
            let marks = host_marks(c, &name_table(c, &re));
            if !marks.is_empty() {
                found = Some((StepSource::ProfilerStep, to_steps(marks)));
            }
        }
        if found.is_none() {
            let its = super::serving::iterations(c);
            if !its.list.is_empty() {
                found = Some((StepSource::Serving, its.steps()));
            }
        }
        if found.is_none() {
            let marks = step_num_marks(c);
            if !marks.is_empty() {
                found = Some((StepSource::StepNum, to_steps(marks)));
            }
        }
        if found.is_none() {
            let marks = steps_line_marks(c);
            if !marks.is_empty() {
                found = Some((StepSource::StepsLine, to_steps(marks)));
            }
        }
    }
    let (source, mut steps) = match found {
        Some((s, v)) if !v.is_empty() => (s, v),
        _ => (
            StepSource::Whole,
            vec![Step {
                number: 0,
                start: c.span.0,
                end: c.span.1.max(c.span.0),
                partial: false,
            }],
        ),
    };
    if source != StepSource::Whole
        && steps.len() >= 2
        && let Some(last) = steps.last_mut()
    {
        last.partial = last.end >= c.span.1 - 1_000_000;
    }
    Steps { source, steps }
}

/// Interned ids of names matching `re` (for callers that test many slices).
pub(crate) fn matching_names(c: &Capture, re: &Regex) -> Vec<bool> {
    let mut out = vec![false; c.strings.len()];
    for (id, s) in c.strings.iter() {
        if re.is_match(s)
            && let Some(slot) = out.get_mut(id.index())
        {
            *slot = true;
        }
    }
    out
}

/// True when `id`'s flag is set in a table from [`matching_names`].
#[inline]
pub(crate) fn flagged(table: &[bool], id: StrId) -> bool {
    table.get(id.index()).copied().unwrap_or(false)
}
