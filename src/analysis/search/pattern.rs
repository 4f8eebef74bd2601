//! Names of one pattern walked as one: when the best matches of a query are many names that
//! differ only in their numbers (`ProfilerStep#1009` … `ProfilerStep#1014`), the user meant
//! all of them, so their occurrences form one hit list in time order. Also the first
//! occurrences of some names with instant events among them ([`first_of_names`]).

use super::engine::Hit;
use super::filter::{EventFilter, NO_CLASS};
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

/// The pattern group of ranked `hits` (best first): when the best hit's name has digits and at
/// least one other hit of the same (best) score shares its pattern, every hit of that pattern.
pub fn pattern_group(cap: &Capture, hits: &[Hit]) -> Option<PatternGroup> {
    let best = hits.first()?;
    let pattern = pattern_key(cap.strings.get(best.name))?;
    let strong = hits
        .iter()
        .take_while(|h| h.score == best.score)
        .filter(|h| pattern_key(cap.strings.get(h.name)).as_deref() == Some(pattern.as_str()))
        .count();
    if strong < 2 {
        return None;
    }
    let mut g = PatternGroup {
        pattern,
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

/// Maps an instant's category to the slice class with the same raw category ([`NO_CLASS`]
/// when no slice has it), so `cat:` filters test instants as they test slices.
pub fn instant_classes(cap: &Capture) -> impl Fn(StrId) -> u16 + '_ {
    let mut by: rustc_hash::FxHashMap<StrId, u16> = rustc_hash::FxHashMap::default();
    for (k, &(raw, _)) in cap.slices.classes.iter().enumerate().rev() {
        by.insert(raw, k.min(usize::from(NO_CLASS - 1)) as u16);
    }
    move |cat: StrId| by.get(&cat).copied().unwrap_or(NO_CLASS)
}
