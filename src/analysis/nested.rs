//! Nested-event accounting and per-function-id timing, after ejkernel's JAX `Profiler`
//! (design analysis.md §c; ejkernel `ejkernel/ops/execution/profiler.py`).
//!
//! One plane is read, as ejkernel's `profile_time_by_function_id(closure, platform, n)` reads
//! it: the first plane whose name contains the platform string ([`super::platform`]); by default
//! the kind of the capture's first device plane (`gpu`, `tpu`), `cpu` on a CPU-only XPlane, every
//! process on other formats. Only the plane's own lines count (tracetui's derived lines are not
//! in the file), in line order, stopping after `max_events` kept events (ejkernel's
//! `max_events_per_profile`, 10000). Times are whole ns, as JAX's `ProfileData` gives them.
//!
//! For every event whose unified name ([`super::unified`]) starts with a prefix (default `jit_`),
//! its *nested time* is the length of the union of the events it fully contains (any line, any
//! depth; same-unified-name events excluded) whose unified name matches a regex — or, without a
//! regex, its own duration. Events shorter than a minimum duration are ignored entirely, as
//! parents and as children. A name's value in a capture is its LAST instance's (start order; a
//! later event overwrites an earlier one in ejkernel's dict); rows also give every instance's
//! count, mean, std, min and max. Per function id (`jit_autotune_fn_<id>`), each (capture, name)
//! gives one sample, that value; more than two samples: the min and the max are dropped.
//!
//! Difference from ejkernel's code, on purpose: stats are resolved by key (ejkernel's
//! `ProfileData` path keys them by position and never finds `hlo_module`, so every name reads
//! `<event name>(None-None)` and a GPU plane has no `jit_` name at all); docs/analysis.md.
//!
//! Cost: one sort of the kept events, O(n log n), plus the candidates scanned per parent (those
//! starting inside it) — linear overall when parents do not overlap each other.

use super::platform;
use super::unified::{UnifiedKey, UnifiedKeys, render};
use crate::model::{Capture, Format, Ps, TrackKind};
use regex::Regex;
use rustc_hash::FxHashMap;

/// What to account.
#[derive(Clone, Debug)]
pub struct NestedOptions {
    /// Parents: unified names starting with this (empty: every slice).
    pub prefix: String,
    /// Children counted: unified names matching this; `None`: a parent's own duration.
    pub regex: Option<Regex>,
    /// Slices shorter than this are ignored (ejkernel's `min_duration_ns`, default 1000 ns).
    pub min_dur: Ps,
    /// Function ids: the first capture group of this on a row name.
    pub id_pattern: Regex,
    /// Plane read: the first whose name contains this, case-insensitively (ejkernel's
    /// `platform`). `None`: on XPlane the first device plane's kind, else every process.
    pub platform: Option<String>,
    /// Stop after this many kept events of the plane (ejkernel's `max_events_per_profile`);
    /// `None`: no cap. Not applied when every process is read.
    pub max_events: Option<usize>,
}

/// ejkernel's default `max_events_per_profile`.
pub const DEFAULT_MAX_EVENTS: usize = 10_000;

/// ejkernel's function-id pattern.
pub const DEFAULT_ID_PATTERN: &str = r"^jit_autotune_fn_([0-9]+)";

impl Default for NestedOptions {
    fn default() -> Self {
        NestedOptions {
            prefix: "jit_".into(),
            regex: None,
            min_dur: 1_000_000,
            // A constant pattern: compiling it cannot fail.
            id_pattern: Regex::new(DEFAULT_ID_PATTERN).unwrap_or_else(|_| unreachable!()),
            platform: None,
            max_events: Some(DEFAULT_MAX_EVENTS),
        }
    }
}

/// Per-name aggregate of nested times (ps).
#[derive(Clone, Debug, PartialEq)]
pub struct NestedRow {
    /// Unified name `N(P-S)`.
    pub name: String,
    /// Instances.
    pub count: u64,
    /// Mean nested time.
    pub mean: f64,
    /// Population standard deviation.
    pub std: f64,
    /// Shortest.
    pub min: Ps,
    /// Longest.
    pub max: Ps,
    /// The last instance's (start order): ejkernel's value of the name in this capture.
    pub last: Ps,
}

/// Nested accounting of one capture.
#[derive(Clone, Debug, Default)]
pub struct NestedReport {
    /// Rows, by mean descending then name.
    pub rows: Vec<NestedRow>,
    /// Slices ignored for being shorter than the minimum duration.
    pub short_skipped: u64,
    /// Events kept (not too short, within the cap).
    pub kept: u64,
    /// True when the `max_events` cap stopped the reading.
    pub capped: bool,
    /// The plane read (`None`: every process).
    pub plane: Option<String>,
    /// The platform string it was chosen by.
    pub platform: Option<String>,
}

/// Mean and population standard deviation (0, 0 for no values).
pub fn mean_std(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// Length of the union of intervals given sorted by start.
pub fn union_len(sorted: impl IntoIterator<Item = (Ps, Ps)>) -> Ps {
    let mut total = 0;
    let mut cur: Option<(Ps, Ps)> = None;
    for (a, b) in sorted {
        match cur {
            Some((ca, cb)) if a <= cb => cur = Some((ca, cb.max(b))),
            Some((ca, cb)) => {
                total += cb - ca;
                cur = Some((a, b));
            }
            None => cur = Some((a, b)),
        }
    }
    total + cur.map_or(0, |(a, b)| b - a)
}

/// Unified names of one capture, interned: slice → name id, name id → (text, parent?, child?).
struct Names {
    by_key: FxHashMap<UnifiedKey, u32>,
    text: Vec<String>,
    parent: Vec<bool>,
    child: Vec<bool>,
}

impl Names {
    fn id(&mut self, c: &Capture, k: UnifiedKey, o: &NestedOptions) -> u32 {
        if let Some(&i) = self.by_key.get(&k) {
            return i;
        }
        let t = render(c, k);
        let i = self.text.len() as u32;
        self.parent.push(t.starts_with(&o.prefix));
        self.child
            .push(o.regex.as_ref().is_some_and(|r| r.is_match(&t)));
        self.text.push(t);
        self.by_key.insert(k, i);
        i
    }
}

/// Nested time of every matching event of the chosen plane of `c`, aggregated per unified name.
/// Fails when a platform is asked for (or implied by an XPlane capture) and no plane matches.
pub fn compute(c: &Capture, o: &NestedOptions) -> Result<NestedReport, String> {
    let is_xplane = c.format == Some(Format::XPlane);
    let platform = o
        .platform
        .clone()
        .or_else(|| is_xplane.then(|| platform::default_platform(c)));
    let plane = match &platform {
        Some(p) => Some(platform::plane_for(c, p).ok_or_else(|| {
            format!(
                "no plane name contains '{p}' (planes: {})",
                platform::plane_names(c).join(", ")
            )
        })?),
        None => None,
    };
    let s = &c.slices;
    let keys = UnifiedKeys::new(c);
    let mut names = Names {
        by_key: FxHashMap::default(),
        text: Vec::new(),
        parent: Vec::new(),
        child: Vec::new(),
    };
    let mut rep = NestedReport {
        plane: plane.map(|p| c.strings.get(c.processes[p as usize].name).to_string()),
        platform: platform.clone(),
        ..NestedReport::default()
    };
    let cap = if plane.is_some() { o.max_events } else { None };
    // Per name id: (instance values, last value) in ps.
    let mut times: Vec<Vec<Ps>> = Vec::new();
    let mut last: Vec<Ps> = Vec::new();
    // Kept events of one process as (start, slice id, end, name id), reused per process.
    let mut ev: Vec<(Ps, u32, Ps, u32)> = Vec::new();
    let procs: Vec<u32> = match plane {
        Some(p) => vec![p],
        None => (0..c.processes.len() as u32).collect(),
    };
    for p in procs {
        ev.clear();
        'tracks: for t in c
            .tracks
            .iter()
            .filter(|t| t.process == p && t.kind != TrackKind::Derived)
        {
            for i in t.slices.0..t.slices.1 {
                if cap.is_some_and(|m| ev.len() >= m) {
                    rep.capped = true;
                    break 'tracks;
                }
                let iu = i as usize;
                let (a, d) = whole_ns(s.start[iu], s.dur[iu]);
                if d < o.min_dur {
                    rep.short_skipped += 1;
                    continue;
                }
                let n = names.id(c, keys.key(c, s.name[iu], s.args[iu]), o);
                ev.push((a, i, a + d, n));
            }
        }
        rep.kept += ev.len() as u64;
        // By start; ties in line order (slice ids follow the tracks), as ejkernel's stable sort.
        ev.sort_unstable();
        if times.len() < names.text.len() {
            times.resize(names.text.len(), Vec::new());
            last.resize(names.text.len(), 0);
        }
        for (k, &(a, _, b, n)) in ev.iter().enumerate() {
            if !names.parent[n as usize] {
                continue;
            }
            let v = if o.regex.is_some() {
                // Candidates start at or after `a` (ties before k included), stop past `b`.
                let first = ev[..k].partition_point(|e| e.0 < a);
                let kids = ev[first..]
                    .iter()
                    .take_while(|e| e.0 <= b)
                    .filter(|e| e.3 != n && e.2 <= b && names.child[e.3 as usize])
                    .map(|e| (e.0, e.2));
                // Sorted by start already (the end order within a start does not matter).
                union_len(kids)
            } else {
                b - a
            };
            times[n as usize].push(v);
            last[n as usize] = v;
        }
    }
    let mut rows: Vec<NestedRow> = times
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_empty())
        .map(|(n, v)| {
            let f: Vec<f64> = v.iter().map(|&x| x as f64).collect();
            let (mean, std) = mean_std(&f);
            NestedRow {
                name: names.text[n].clone(),
                count: v.len() as u64,
                mean,
                std,
                min: v.iter().copied().min().unwrap_or(0),
                max: v.iter().copied().max().unwrap_or(0),
                last: last[n],
            }
        })
        .collect();
    rows.sort_by(|x, y| y.mean.total_cmp(&x.mean).then_with(|| x.name.cmp(&y.name)));
    rep.rows = rows;
    Ok(rep)
}

/// (start, duration) cut to whole ns, as JAX's `ProfileData` gives them (`offset_ps / 1000`
/// and `duration_ps / 1000` in integers; ejkernel multiplies back by 1000).
#[inline]
pub fn whole_ns(start: Ps, dur: Ps) -> (Ps, Ps) {
    (start - start.rem_euclid(1000), dur - dur.rem_euclid(1000))
}

/// Nested time of one slice (the explorer's details), from candidate slice ids (for instance
/// every slice overlapping it, from the index; those of other planes are ignored). `None` when
/// the slice is not a parent (name without the prefix, or shorter than the minimum).
pub fn nested_time_of(
    c: &Capture,
    o: &NestedOptions,
    id: u32,
    candidates: impl IntoIterator<Item = u32>,
) -> Option<Ps> {
    match &o.regex {
        Some(re) => merged_children(c, o, id, candidates, Some(re)),
        None => merged_children(c, o, id, [], None).map(|_| c.slices.dur[id as usize]),
    }
}

/// Like [`nested_time_of`] with every contained child counted, whatever the regex: the union of
/// all the slices of its plane the parent fully contains.
pub fn contained_time_of(
    c: &Capture,
    o: &NestedOptions,
    id: u32,
    candidates: impl IntoIterator<Item = u32>,
) -> Option<Ps> {
    merged_children(c, o, id, candidates, None)
}

fn merged_children(
    c: &Capture,
    o: &NestedOptions,
    id: u32,
    candidates: impl IntoIterator<Item = u32>,
    re: Option<&Regex>,
) -> Option<Ps> {
    // Regex verdict per unified key: each distinct name rendered once.
    let mut seen: FxHashMap<UnifiedKey, bool> = FxHashMap::default();
    let s = &c.slices;
    let i = id as usize;
    if i >= s.len() || s.dur[i] < o.min_dur {
        return None;
    }
    let keys = UnifiedKeys::new(c);
    let own = keys.key(c, s.name[i], s.args[i]);
    if !render(c, own).starts_with(&o.prefix) {
        return None;
    }
    let (a, b) = (s.start[i], s.end(i));
    let plane = |k: usize| c.tracks[c.track_of(k as u32) as usize].process;
    let own_plane = plane(i);
    let mut kids: Vec<(Ps, Ps)> = candidates
        .into_iter()
        .map(|k| k as usize)
        .filter(|&k| {
            k < s.len()
                && s.dur[k] >= o.min_dur
                && s.start[k] >= a
                && s.end(k) <= b
                && plane(k) == own_plane
                && {
                    let kk = keys.key(c, s.name[k], s.args[k]);
                    kk != own
                        && re.is_none_or(|re| {
                            *seen
                                .entry(kk)
                                .or_insert_with(|| re.is_match(&render(c, kk)))
                        })
                }
        })
        .map(|k| (s.start[k], s.end(k)))
        .collect();
    kids.sort_unstable();
    Some(union_len(kids))
}

/// One function id aggregated across captures (seconds-free: ps as f64).
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionTime {
    /// The captured id text.
    pub id: String,
    /// Samples collected (before trimming).
    pub samples: usize,
    /// Mean after dropping the min and the max when there are more than two samples.
    pub mean: f64,
    /// Population std of the same values.
    pub std: f64,
}

/// Aggregates per function id: each (capture, row) whose name matches `id_pattern` gives one
/// sample, the row's last value (ejkernel's). With more than two samples the min and the max
/// are dropped. Ids of digits are compared as numbers (`01` is `1`), as ejkernel's `int()`.
pub fn by_function_id<'a>(
    reports: impl IntoIterator<Item = &'a NestedReport>,
    id_pattern: &Regex,
) -> Vec<FunctionTime> {
    let mut by: Vec<(String, Vec<f64>)> = Vec::new();
    for r in reports {
        for row in &r.rows {
            let Some(id) = id_pattern
                .captures(&row.name)
                .and_then(|m| m.get(1).or_else(|| m.get(0)))
            else {
                continue;
            };
            let id = match id.as_str().parse::<u64>() {
                Ok(n) if id.as_str().bytes().all(|b| b.is_ascii_digit()) => n.to_string(),
                _ => id.as_str().to_string(),
            };
            let v = row.last as f64;
            match by.iter_mut().find(|(k, _)| *k == id) {
                Some((_, s)) => s.push(v),
                None => by.push((id, vec![v])),
            }
        }
    }
    let mut out: Vec<FunctionTime> = by
        .into_iter()
        .map(|(id, mut v)| {
            let samples = v.len();
            v.sort_by(f64::total_cmp);
            let kept = if samples > 2 {
                &v[1..samples - 1]
            } else {
                &v[..]
            };
            let (mean, std) = mean_std(kept);
            FunctionTime {
                id,
                samples,
                mean,
                std,
            }
        })
        .collect();
    // Numeric ids in numeric order, others after, by text.
    out.sort_by(|x, y| {
        let (a, b) = (x.id.parse::<u64>().ok(), y.id.parse::<u64>().ok());
        match (a, b) {
            (Some(a), Some(b)) => a.cmp(&b),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => x.id.cmp(&y.id),
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;

    const US: Ps = 1_000_000;

    /// Plane 1 (`/device:GPU:0`): `jit_a` [0, 100) µs and [200, 230) µs on line 1; on line 2 fusions overlapping
    /// each other [10, 30) + [20, 50), a dot [60, 70), a copy [75, 80) (not matching the
    /// regex), a short fusion [80, 80.5) (under 1 µs), a fusion [90, 120) only partly inside,
    /// a dot [205, 215). Plane 2 (`/host:CPU`): a fusion [0, 99) µs that must not count (another
    /// plane).
    fn capture() -> Capture {
        let mut b = CaptureBuilder::new();
        let (g, h) = (b.intern("/device:GPU:0"), b.intern("/host:CPU"));
        let p1 = b.process(Key::Str(g));
        let p2 = b.process(Key::Str(h));
        for (p, n, i) in [(p1, g, 0), (p2, h, 1)] {
            let pr = b.process_mut(p);
            pr.name = n;
            pr.sort_index = i;
        }
        let l1 = b.track(p1, Key::Int(1), TrackKind::XLine);
        let l2 = b.track(p1, Key::Int(2), TrackKind::XLine);
        let l3 = b.track(p2, Key::Int(1), TrackKind::XLine);
        let (jit, fusion, dot, copy) = (
            b.intern("jit_a"),
            b.intern("fusion"),
            b.intern("dot"),
            b.intern("copy"),
        );
        let e = StrId::EMPTY;
        let n = ArgsRef::NONE;
        b.add_slice(l1, 0, 100 * US, jit, e, n, 0);
        b.add_slice(l1, 200 * US, 30 * US, jit, e, n, 0);
        for (s, d, name) in [
            (10 * US, 20 * US, fusion),
            (20 * US, 30 * US, fusion),
            (60 * US, 10 * US, dot),
            (75 * US, 5 * US, copy),
            (80 * US, US / 2, fusion),
            (90 * US, 30 * US, fusion),
            (205 * US, 10 * US, dot),
        ] {
            b.add_slice(l2, s, d, name, e, n, 0);
        }
        b.add_slice(l3, 0, 99 * US, fusion, e, n, 0);
        b.finish(SourceInfo::default(), Format::XPlane)
    }

    fn opts(regex: Option<&str>) -> NestedOptions {
        NestedOptions {
            regex: regex.map(|r| Regex::new(r).unwrap()),
            ..NestedOptions::default()
        }
    }

    #[test]
    fn merged_contained_children_matching_the_regex() {
        let c = capture();
        let r = compute(&c, &opts(Some("^(fusion|dot)"))).unwrap();
        // instance 1: [10,50) ∪ [60,70) = 50 µs; instance 2: 10 µs.
        assert_eq!(
            r.rows,
            vec![NestedRow {
                name: "jit_a(None-None)".into(),
                count: 2,
                mean: (30 * US) as f64,
                std: (20 * US) as f64,
                min: 10 * US,
                max: 50 * US,
                last: 10 * US,
            }]
        );
        assert_eq!(r.short_skipped, 1);
        // Only dots: 10 µs each.
        let r = compute(&c, &opts(Some("^dot"))).unwrap();
        assert_eq!((r.rows[0].mean, r.rows[0].std), ((10 * US) as f64, 0.0));
    }

    #[test]
    fn own_duration_without_regex_and_min_dur() {
        let c = capture();
        let r = compute(&c, &opts(None)).unwrap();
        assert_eq!(r.rows.len(), 1);
        assert_eq!((r.rows[0].min, r.rows[0].max), (30 * US, 100 * US));
        assert_eq!(r.rows[0].mean, (65 * US) as f64);
        // 50 µs minimum: the 30 µs instance goes, and every child but none is a parent.
        let mut o = opts(None);
        o.min_dur = 50 * US;
        let r = compute(&c, &o).unwrap();
        assert_eq!((r.rows[0].count, r.rows[0].max), (1, 100 * US));
        assert_eq!(r.short_skipped, 8);
        // Empty prefix: every kept slice is a parent.
        o.prefix = String::new();
        o.min_dur = 0;
        assert_eq!(compute(&c, &o).unwrap().rows.len(), 4);
    }

    #[test]
    fn single_event_matches_the_batch() {
        let c = capture();
        let o = opts(Some("^(fusion|dot)"));
        let all = 0..c.slices.len() as u32;
        let jit = (0..c.slices.len() as u32)
            .find(|&i| c.slice_name(i) == "jit_a" && c.slices.start[i as usize] == 0);
        let jit = jit.unwrap();
        assert_eq!(nested_time_of(&c, &o, jit, all.clone()), Some(50 * US));
        let dot = all.clone().find(|&i| c.slice_name(i) == "dot").unwrap();
        assert_eq!(nested_time_of(&c, &o, dot, all.clone()), None);
        // Every contained child of its plane, copy included: [10,50) ∪ [60,70) ∪ [75,80).
        assert_eq!(contained_time_of(&c, &o, jit, all.clone()), Some(55 * US));
        assert_eq!(nested_time_of(&c, &opts(None), jit, all), Some(100 * US));
    }

    #[test]
    fn one_plane_by_platform_last_value_and_cap() {
        let c = capture();
        // Default on XPlane: the first device plane (`gpu`); the last instance is the value.
        let r = compute(&c, &opts(None)).unwrap();
        assert_eq!(r.plane.as_deref(), Some("/device:GPU:0"));
        assert_eq!(r.platform.as_deref(), Some("gpu"));
        assert_eq!((r.rows[0].last, r.kept, r.capped), (30 * US, 8, false));
        // `cpu`: the host plane only, its 99 µs fusion.
        let mut o = opts(None);
        o.platform = Some("CPU".into());
        o.prefix = String::new();
        let r = compute(&c, &o).unwrap();
        assert_eq!(r.rows.len(), 1);
        assert_eq!(
            (r.rows[0].name.as_str(), r.rows[0].last),
            ("fusion(None-None)", 99 * US)
        );
        // No such plane: an error naming the planes.
        o.platform = Some("tpu".into());
        let e = compute(&c, &o).unwrap_err();
        assert!(
            e.contains("'tpu'") && e.contains("/device:GPU:0, /host:CPU"),
            "{e}"
        );
        // The cap stops after N kept events, in line order: line 1's two `jit_a` first.
        let mut o = opts(None);
        o.max_events = Some(1);
        let r = compute(&c, &o).unwrap();
        assert_eq!(
            (r.rows[0].count, r.rows[0].last, r.capped),
            (1, 100 * US, true)
        );
        o.max_events = Some(2);
        let r = compute(&c, &o).unwrap();
        assert_eq!((r.rows[0].count, r.kept), (2, 2));
    }

    #[test]
    fn whole_ns_and_every_process_off_xplane() {
        assert_eq!(whole_ns(1_500, 2_999), (1_000, 2_000));
        assert_eq!(whole_ns(-1_500, 999), (-2_000, 0));
        // A JSON capture without --platform: every process, each slice's children its own.
        let mut b = CaptureBuilder::new();
        let (jit, fusion) = (b.intern("jit_f"), b.intern("fusion"));
        for pid in [1, 2] {
            let p = b.process(Key::Int(pid));
            let t = b.track(p, Key::Int(1), TrackKind::Thread);
            b.add_slice(t, 0, 10 * US, jit, StrId::EMPTY, ArgsRef::NONE, 0);
            b.add_slice(t, US, 2 * US * pid, fusion, StrId::EMPTY, ArgsRef::NONE, 0);
        }
        let c = b.finish(SourceInfo::default(), Format::Chrome);
        let r = compute(&c, &opts(Some("^fusion"))).unwrap();
        assert_eq!((r.plane.clone(), r.rows[0].count), (None, 2));
        assert_eq!((r.rows[0].min, r.rows[0].max), (2 * US, 4 * US));
    }

    fn report(rows: &[(&str, f64)]) -> NestedReport {
        NestedReport {
            rows: rows
                .iter()
                .map(|&(n, m)| NestedRow {
                    name: n.into(),
                    count: 1,
                    mean: m,
                    std: 0.0,
                    min: 0,
                    max: 0,
                    last: m as Ps,
                })
                .collect(),
            ..NestedReport::default()
        }
    }

    #[test]
    fn function_ids_drop_min_and_max_above_two_samples() {
        let reps = [
            report(&[
                ("jit_autotune_fn_1(3-None)", 10.0),
                ("jit_autotune_fn_2(4-None)", 4.0),
            ]),
            report(&[
                ("jit_autotune_fn_1(3-None)", 20.0),
                ("jit_autotune_fn_2(4-None)", 8.0),
            ]),
            report(&[
                ("jit_autotune_fn_1(3-None)", 30.0),
                ("jit_other(1-None)", 1.0),
            ]),
            report(&[("jit_autotune_fn_1(3-None)", 100.0)]),
        ];
        let o = NestedOptions::default();
        let f = by_function_id(&reps, &o.id_pattern);
        assert_eq!(
            f,
            vec![
                FunctionTime {
                    id: "1".into(),
                    samples: 4,
                    mean: 25.0,
                    std: 5.0
                },
                FunctionTime {
                    id: "2".into(),
                    samples: 2,
                    mean: 6.0,
                    std: 2.0
                },
            ]
        );
        // Ids of digits are numbers: `01` is `1`.
        let more = [report(&[("jit_autotune_fn_01(3-None)", 40.0)])];
        let f = by_function_id(reps.iter().chain(&more), &o.id_pattern);
        assert_eq!((f[0].id.as_str(), f[0].samples), ("1", 5));
        // A custom pattern with its own group.
        let f = by_function_id(&reps, &Regex::new(r"^jit_(other)").unwrap());
        assert_eq!((f.len(), f[0].id.as_str(), f[0].mean), (1, "other", 1.0));
    }

    proptest::proptest! {
        #[test]
        fn union_len_matches_brute_force(mut v in proptest::collection::vec((0i64..60, 0i64..15), 0..20)) {
            let mut iv: Vec<(Ps, Ps)> = v.drain(..).map(|(a, d)| (a, a + d)).collect();
            iv.sort_unstable();
            let brute = (0..80).filter(|&t| iv.iter().any(|&(a, b)| a <= t && t < b)).count();
            proptest::prop_assert_eq!(union_len(iv.iter().copied()), brute as Ps);
        }
    }
}
