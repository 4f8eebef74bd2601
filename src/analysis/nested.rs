//! Nested-event accounting and per-function-id timing, after ejkernel's JAX `Profiler`
//! (design analysis.md §c).
//!
//! For every slice whose unified name ([`super::unified`]) starts with a prefix (default `jit_`),
//! its *nested time* is the length of the union of the slices it fully contains (same process,
//! any track, any depth; same-unified-name slices excluded) whose unified name matches a regex —
//! or, without a regex, its own duration. Slices shorter than a minimum duration are ignored
//! entirely, as parents and as children. Instances are aggregated per unified name; names that
//! match an id pattern (`jit_autotune_fn_<id>`) are aggregated per id across captures.
//!
//! Differences from ejkernel, on purpose: times are absolute (ejkernel's raw-proto path uses
//! line-relative offsets, so children on lines with another timestamp are misplaced); stats are
//! resolved by key (ejkernel's `ProfileData` path never finds `hlo_module`); every plane is
//! read, each slice's children taken from its own plane; every instance counts (ejkernel keeps
//! the last instance per name) and a capture contributes its per-name mean as one sample.
//!
//! Cost: one sort of the kept slices per process, O(n log n), plus the candidates scanned per
//! parent (those starting inside it) — linear overall when parents do not overlap each other.

use super::unified::{UnifiedKey, UnifiedKeys, render};
use crate::model::{Capture, Ps};
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
}

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
}

/// Nested accounting of one capture.
#[derive(Clone, Debug, Default)]
pub struct NestedReport {
    /// Rows, by mean descending then name.
    pub rows: Vec<NestedRow>,
    /// Slices ignored for being shorter than the minimum duration.
    pub short_skipped: u64,
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

/// Nested time of every matching slice of `c`, aggregated per unified name.
pub fn compute(c: &Capture, o: &NestedOptions) -> NestedReport {
    let s = &c.slices;
    let keys = UnifiedKeys::new(c);
    let mut names = Names {
        by_key: FxHashMap::default(),
        text: Vec::new(),
        parent: Vec::new(),
        child: Vec::new(),
    };
    let mut short_skipped = 0u64;
    // Per name id: nested times (ps) of its instances.
    let mut times: Vec<Vec<Ps>> = Vec::new();
    // Kept slices of one process as (start, end, slice id, name id), reused per process.
    let mut ev: Vec<(Ps, Ps, u32, u32)> = Vec::new();
    for p in 0..c.processes.len() {
        ev.clear();
        for (_, t) in c
            .tracks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.process as usize == p)
        {
            for i in t.slices.0..t.slices.1 {
                let iu = i as usize;
                if s.dur[iu] < o.min_dur {
                    short_skipped += 1;
                    continue;
                }
                let n = names.id(c, keys.key(c, s.name[iu], s.args[iu]), o);
                ev.push((s.start[iu], s.end(iu), i, n));
            }
        }
        ev.sort_unstable();
        if times.len() < names.text.len() {
            times.resize(names.text.len(), Vec::new());
        }
        for (k, &(a, b, _, n)) in ev.iter().enumerate() {
            if !names.parent[n as usize] {
                continue;
            }
            let v = if o.regex.is_some() {
                // Candidates start at or after `a` (ties before k included), stop past `b`.
                let first = ev[..k].partition_point(|e| e.0 < a);
                let kids = ev[first..]
                    .iter()
                    .take_while(|e| e.0 <= b)
                    .filter(|e| e.3 != n && e.1 <= b && names.child[e.3 as usize])
                    .map(|e| (e.0, e.1));
                union_len(kids)
            } else {
                b - a
            };
            times[n as usize].push(v);
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
            }
        })
        .collect();
    rows.sort_by(|x, y| y.mean.total_cmp(&x.mean).then_with(|| x.name.cmp(&y.name)));
    NestedReport {
        rows,
        short_skipped,
    }
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
/// sample, the row's mean. With more than two samples the min and the max are dropped.
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
            match by.iter_mut().find(|(k, _)| k == id.as_str()) {
                Some((_, v)) => v.push(row.mean),
                None => by.push((id.as_str().to_string(), vec![row.mean])),
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

    /// Plane 1: `jit_a` [0, 100) µs and [200, 230) µs on line 1; on line 2 fusions overlapping
    /// each other [10, 30) + [20, 50), a dot [60, 70), a copy [75, 80) (not matching the
    /// regex), a short fusion [80, 80.5) (under 1 µs), a fusion [90, 120) only partly inside,
    /// a dot [205, 215). Plane 2: a fusion [0, 99) µs that must not count (another plane).
    fn capture() -> Capture {
        let mut b = CaptureBuilder::new();
        let p1 = b.process(Key::Int(1));
        let p2 = b.process(Key::Int(2));
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
        let r = compute(&c, &opts(Some("^(fusion|dot)")));
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
            }]
        );
        assert_eq!(r.short_skipped, 1);
        // Only dots: 10 µs each.
        let r = compute(&c, &opts(Some("^dot")));
        assert_eq!((r.rows[0].mean, r.rows[0].std), ((10 * US) as f64, 0.0));
    }

    #[test]
    fn own_duration_without_regex_and_min_dur() {
        let c = capture();
        let r = compute(&c, &opts(None));
        assert_eq!(r.rows.len(), 1);
        assert_eq!((r.rows[0].min, r.rows[0].max), (30 * US, 100 * US));
        assert_eq!(r.rows[0].mean, (65 * US) as f64);
        // 50 µs minimum: the 30 µs instance goes, and every child but none is a parent.
        let mut o = opts(None);
        o.min_dur = 50 * US;
        let r = compute(&c, &o);
        assert_eq!((r.rows[0].count, r.rows[0].max), (1, 100 * US));
        assert_eq!(r.short_skipped, 8);
        // Empty prefix: every kept slice is a parent.
        o.prefix = String::new();
        o.min_dur = 0;
        assert_eq!(compute(&c, &o).rows.len(), 4);
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
                })
                .collect(),
            short_skipped: 0,
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
