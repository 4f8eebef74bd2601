//! Names of one pattern walked as one: when the best matches of a query are many names that
//! differ only in their numbers (`ProfilerStep#1009` … `ProfilerStep#1014`), the user meant
//! all of them, so their occurrences form one hit list in time order. Also the first
//! occurrences of some names with instant events among them ([`first_of_names`]).

use super::engine::Hit;
use super::filter::{EventFilter, instant_classes};
use super::occurrences::{NamePostings, first_occurrences};
use crate::model::{Capture, Ps, StrId};

/// The pattern of a name: each run of ASCII digits becomes `N` (`ProfilerStep#1009` →
/// `ProfilerStep#N`); `None` for a name without digits.
pub fn pattern_key(name: &str) -> Option<String> {
    if !name.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut in_digits = false;
    for ch in name.chars() {
        if ch.is_ascii_digit() {
            if !in_digits {
                out.push('N');
            }
            in_digits = true;
        } else {
            out.push(ch);
            in_digits = false;
        }
    }
    Some(out)
}

/// Names of one pattern among the hits of a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternGroup {
    /// The pattern ([`pattern_key`]).
    pub pattern: String,
    /// Its names among the hits, in hit order.
    pub names: Vec<StrId>,
    /// Their events.
    pub count: u64,
    /// Σ duration, ps.
    pub total: Ps,
}

/// The pattern group of ranked `hits` (best first): among the hits of the best score, the
/// pattern shared by the most names, when at least two share it and they are more than half of
/// that tier — then every hit of that pattern (`ProfilerStep#1009` … `#1014` for
/// "ProfilerStep", also when `PyTorch Profiler (0)` scores as well).
pub fn pattern_group(cap: &Capture, hits: &[Hit]) -> Option<PatternGroup> {
    let first = hits.first()?;
    let best = first.score;
    let tier: Vec<Option<String>> = hits
        .iter()
        .take_while(|h| h.score == best && h.contiguous == first.contiguous)
        .map(|h| pattern_key(cap.strings.get(h.name)))
        .collect();
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for p in tier.iter().flatten() {
        match counts.iter_mut().find(|(x, _)| *x == p.as_str()) {
            Some((_, n)) => *n += 1,
            None => counts.push((p.as_str(), 1)),
        }
    }
    let (pattern, strong) = counts.into_iter().max_by_key(|&(_, n)| n)?;
    if strong < 2 || strong * 2 <= tier.len() {
        return None;
    }
    let mut g = PatternGroup {
        pattern: pattern.to_string(),
        names: Vec::new(),
        count: 0,
        total: 0,
    };
    for h in hits {
        if pattern_key(cap.strings.get(h.name)).as_deref() == Some(g.pattern.as_str()) {
            g.names.push(h.name);
            g.count += h.count;
            g.total += h.total;
        }
    }
    Some(g)
}

/// One occurrence: a slice, or an instant event (`dur` 0, `slice` `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occurrence {
    /// Its track.
    pub track: u32,
    /// Start (model time, ps).
    pub start: Ps,
    /// Duration, ps.
    pub dur: Ps,
    /// The slice id, for slices.
    pub slice: Option<u32>,
}

/// The first `k` occurrences of any of `names` passing `filter` (instant events included,
/// except under `arg:` filters, which test slices), in time order.
pub fn first_of_names(
    cap: &Capture,
    postings: &dyn NamePostings,
    names: &[StrId],
    filter: &EventFilter,
    k: usize,
) -> Vec<Occurrence> {
    let s = &cap.slices;
    let mut out: Vec<Occurrence> = Vec::new();
    for &n in names {
        for id in first_occurrences(cap, postings, n, filter, k) {
            let i = id as usize;
            out.push(Occurrence {
                track: cap.track_of(id),
                start: s.start[i],
                dur: s.dur[i],
                slice: Some(id),
            });
        }
    }
    if !filter.has_args() {
        let inst = &cap.instants;
        let class_of = instant_classes(cap);
        for i in 0..inst.ts.len() {
            if names.contains(&inst.name[i])
                && filter.track_ok(inst.track[i])
                && filter.class_ok(class_of(inst.cat[i]))
            {
                out.push(Occurrence {
                    track: inst.track[i],
                    start: inst.ts[i],
                    dur: 0,
                    slice: None,
                });
            }
        }
    }
    out.sort_by_key(|o| (o.start, o.track, o.slice));
    out.truncate(k);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;

    fn hit(name: StrId, score: i64, count: u64) -> Hit {
        Hit {
            entry: 0,
            name,
            score,
            contiguous: true,
            count,
            total: 10 * count as Ps,
            self_ps: 0,
        }
    }

    #[test]
    fn patterns_of_the_best_tier() {
        assert_eq!(
            pattern_key("ProfilerStep#1009").as_deref(),
            Some("ProfilerStep#N")
        );
        assert_eq!(pattern_key("gemm_128x64").as_deref(), Some("gemm_NxN"));
        assert_eq!(pattern_key("aten::mm"), None);
        let mut b = CaptureBuilder::new();
        let [s1, s2, s3, prof, kern] = [
            "ProfilerStep#1",
            "ProfilerStep#2",
            "ProfilerStep#3",
            "PyTorch Profiler (0)",
            "void profile_kernel<1>",
        ]
        .map(|n| b.intern(n));
        let c = b.finish(SourceInfo::default(), Format::Kineto);
        let hits = [
            hit(prof, 200, 1),
            hit(s1, 200, 1),
            hit(s2, 200, 1),
            hit(s3, 200, 1),
            hit(kern, 50, 9),
        ];
        let g = pattern_group(&c, &hits).expect("group");
        assert_eq!(g.pattern, "ProfilerStep#N");
        assert_eq!((g.names, g.count, g.total), (vec![s1, s2, s3], 3, 30));
        // One name of a pattern, or no majority in the best tier: no group.
        assert!(pattern_group(&c, &[hit(s1, 9, 1), hit(s2, 5, 1)]).is_none());
        assert!(pattern_group(&c, &[hit(prof, 9, 1), hit(kern, 9, 1), hit(s1, 9, 1)]).is_none());
    }
}
