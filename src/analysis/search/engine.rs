//! [`SearchEngine`]: built once per capture over its distinct event names, with per-name
//! aggregates split by (track, category class) so `track:`, `proc:` and `cat:` filters re-sum a
//! few groups instead of visiting events. Ranks by match score, then total time, then name.
//!
//! A search whose query extends the previous one (see [`Query::narrows_to`]) only re-matches the
//! previous hits. Self time follows `stats` (torch's containment rule per track, among all
//! slices); with `arg:` filters the events are visited (only those of names the text matched)
//! and self time is duration minus that of the slice's direct children (`Slices::parent`).

use super::filter::{EventFilter, NO_CLASS};
use super::matcher::{Matcher, SearchError};
use super::occurrences::NamePostings;
use super::query::Query;
use crate::analysis::nesting::ContainmentStack;
use crate::model::{Capture, Ps, StrId};
use std::cmp::Ordering;

const NONE: u32 = u32::MAX;

/// Candidate names above which a search is split over the cores.
const PARALLEL_MIN: usize = 16_384;

/// The search index of one capture: one entry per distinct slice / aggregated-event name.
#[derive(Clone, Debug, Default)]
pub struct SearchEngine {
    names: Vec<StrId>,
    count: Vec<u64>,
    total: Vec<Ps>,
    self_ps: Vec<Ps>,
    /// `group_off[e]..group_off[e + 1]`: groups of entry `e`, in track order.
    group_off: Vec<u32>,
    g_track: Vec<u32>,
    g_class: Vec<u16>,
    g_count: Vec<u64>,
    g_total: Vec<Ps>,
    g_self: Vec<Ps>,
}

/// One matching name with its aggregates over the events that pass the filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// Engine entry.
    pub entry: u32,
    /// The name.
    pub name: StrId,
    /// Match score (higher is better; 0 for regex and empty text).
    pub score: i64,
    /// The name holds the text as typed (every fuzzy word contiguous): such hits rank first.
    pub contiguous: bool,
    /// Events (aggregated XPlane events count their occurrences).
    pub count: u64,
    /// Σ duration, ps.
    pub total: Ps,
    /// Σ self time, ps.
    pub self_ps: Ps,
}

/// The outcome of one query.
#[derive(Clone, Debug, Default)]
pub struct Results {
    /// The query that produced these results.
    pub query: Query,
    /// Every matching name; `hits[..ranked()]` are in final order, the rest rank after them.
    pub hits: Vec<Hit>,
    ranked: usize,
    /// Names examined (all names, or the previous hits when narrowing).
    pub scanned: usize,
    /// The filters, resolved.
    pub filter: EventFilter,
}

impl Results {
    /// How many leading hits are in final order.
    pub fn ranked(&self) -> usize {
        self.ranked
    }

    /// Puts at least the first `n` hits in final order.
    pub fn rank_top(&mut self, cap: &Capture, n: usize) {
        let n = n.min(self.hits.len());
        if n <= self.ranked {
            return;
        }
        let rest = &mut self.hits[self.ranked..];
        let k = n - self.ranked;
        let cmp = |a: &Hit, b: &Hit| rank_cmp(cap, a, b);
        if k < rest.len() {
            rest.select_nth_unstable_by(k - 1, cmp);
            rest[..k].sort_unstable_by(cmp);
        } else {
            rest.sort_unstable_by(cmp);
        }
        self.ranked = n;
    }

    /// No name holds the text as typed: every hit is a scattered (fuzzy) one. The hits must
    /// be ranked ([`Results::rank_top`]) so the first is the best.
    pub fn only_scattered(&self) -> bool {
        self.ranked > 0 && self.hits.first().is_some_and(|h| !h.contiguous)
    }

    /// The first `n` hits in final order.
    pub fn top(&mut self, cap: &Capture, n: usize) -> &[Hit] {
        self.rank_top(cap, n);
        &self.hits[..n.min(self.hits.len())]
    }
}

/// Ranking order: contiguous matches first, then score desc, total desc, name asc, entry asc.
pub fn rank_cmp(cap: &Capture, a: &Hit, b: &Hit) -> Ordering {
    b.contiguous
        .cmp(&a.contiguous)
        .then(b.score.cmp(&a.score))
        .then(b.total.cmp(&a.total))
        .then_with(|| cap.strings.get(a.name).cmp(cap.strings.get(b.name)))
        .then(a.entry.cmp(&b.entry))
}

/// Per-track scratch while building: the group of each name in the current track.
struct Builder {
    slot: Vec<u32>,
    touched: Vec<StrId>,
    /// Next group of the same (name, track) with another class.
    chain: Vec<u32>,
    g_name: Vec<StrId>,
    g_track: Vec<u32>,
    g_class: Vec<u16>,
    g_count: Vec<u64>,
    g_total: Vec<Ps>,
    g_self: Vec<Ps>,
}

impl Builder {
    #[inline]
    fn group(&mut self, name: StrId, track: u32, class: u16) -> u32 {
        let i = name.index();
        if i >= self.slot.len() {
            self.slot.resize(i + 1, NONE);
        }
        let mut g = self.slot[i];
        while g != NONE {
            if self.g_class[g as usize] == class {
                return g;
            }
            g = self.chain[g as usize];
        }
        let g = self.g_name.len() as u32;
        self.chain.push(self.slot[i]);
        if self.slot[i] == NONE {
            self.touched.push(name);
        }
        self.slot[i] = g;
        self.g_name.push(name);
        self.g_track.push(track);
        self.g_class.push(class);
        self.g_count.push(0);
        self.g_total.push(0);
        self.g_self.push(0);
        g
    }

    fn end_track(&mut self) {
        for n in self.touched.drain(..) {
            if let Some(s) = self.slot.get_mut(n.index()) {
                *s = NONE;
            }
        }
    }
}

impl SearchEngine {
    /// Builds the engine: one pass over the slices (per track, with the containment stack for
    /// self time), the instant events (counted, no duration) and the aggregated events. O(n) time, memory O(names × tracks they occur on).
    pub fn build(cap: &Capture) -> SearchEngine {
        let s = &cap.slices;
        let mut b = Builder {
            slot: vec![NONE; cap.strings.len()],
            touched: Vec::new(),
            chain: Vec::new(),
            g_name: Vec::new(),
            g_track: Vec::new(),
            g_class: Vec::new(),
            g_count: Vec::new(),
            g_total: Vec::new(),
            g_self: Vec::new(),
        };
        let mut stack: ContainmentStack<(u32, Ps)> = ContainmentStack::new();
        let mut g_self: Vec<Ps> = Vec::new();
        let class_of = super::filter::instant_classes(cap);
        for (t, tr) in cap.tracks.iter().enumerate() {
            let t = t as u32;
            let (a, z) = (tr.slices.0 as usize, (tr.slices.1 as usize).min(s.len()));
            for i in a..z {
                let (start, dur) = (s.start[i], s.dur[i]);
                let g = b.group(s.name[i], t, s.class[i]);
                b.g_count[g as usize] += 1;
                b.g_total[g as usize] += dur;
                if g_self.len() < b.g_name.len() {
                    g_self.resize(b.g_name.len(), 0);
                }
                stack.push(
                    start,
                    start.saturating_add(dur),
                    (g, dur),
                    |(g, sp)| g_self[g as usize] += sp,
                    |p| p.1 -= dur,
                );
            }
            stack.drain(|(g, sp)| g_self[g as usize] += sp);
            // Instant events: counted, no duration.
            let inst = &cap.instants;
            let (a, z) = (
                tr.instants.0 as usize,
                (tr.instants.1 as usize).min(inst.ts.len()),
            );
            for i in a..z {
                let g = b.group(inst.name[i], t, class_of(inst.cat[i]));
                b.g_count[g as usize] += 1;
            }
            b.end_track();
        }
        g_self.resize(b.g_name.len(), 0);
        b.g_self = g_self;
        // Aggregated (untimed) events: their own class, self = total.
        let mut agg: Vec<(u32, StrId, u64, Ps)> = cap
            .aggregated
            .iter()
            .map(|x| (x.track, x.name, x.occurrences, x.dur))
            .collect();
        agg.sort_unstable_by_key(|x| x.0);
        let mut cur = NONE;
        for (t, name, n, dur) in agg {
            if t != cur {
                b.end_track();
                cur = t;
            }
            let g = b.group(name, t, NO_CLASS) as usize;
            b.g_count[g] += n;
            b.g_total[g] += dur;
            b.g_self[g] += dur;
        }
        b.end_track();
        SearchEngine::from_groups(b, cap.strings.len())
    }

    /// Orders groups by entry (stable, so each entry's groups stay in track order).
    fn from_groups(b: Builder, strings: usize) -> SearchEngine {
        let mut entry_of = vec![NONE; strings];
        let mut names: Vec<StrId> = Vec::new();
        let mut sizes: Vec<u32> = Vec::new();
        for &n in &b.g_name {
            let i = n.index();
            if i >= entry_of.len() {
                entry_of.resize(i + 1, NONE);
            }
            if entry_of[i] == NONE {
                entry_of[i] = names.len() as u32;
                names.push(n);
                sizes.push(0);
            }
            sizes[entry_of[i] as usize] += 1;
        }
        let mut group_off = Vec::with_capacity(names.len() + 1);
        group_off.push(0u32);
        for &k in &sizes {
            let last = group_off.last().copied().unwrap_or(0);
            group_off.push(last + k);
        }
        let mut fill: Vec<u32> = group_off[..names.len()].to_vec();
        let ng = b.g_name.len();
        let mut perm = vec![0u32; ng];
        for (g, &n) in b.g_name.iter().enumerate() {
            let e = entry_of[n.index()] as usize;
            perm[fill[e] as usize] = g as u32;
            fill[e] += 1;
        }
        let pick = |v: &[Ps]| perm.iter().map(|&g| v[g as usize]).collect::<Vec<Ps>>();
        let g_total = pick(&b.g_total);
        let g_self = pick(&b.g_self);
        let g_count: Vec<u64> = perm.iter().map(|&g| b.g_count[g as usize]).collect();
        let g_track: Vec<u32> = perm.iter().map(|&g| b.g_track[g as usize]).collect();
        let g_class: Vec<u16> = perm.iter().map(|&g| b.g_class[g as usize]).collect();
        let mut count = vec![0u64; names.len()];
        let mut total = vec![0 as Ps; names.len()];
        let mut self_ps = vec![0 as Ps; names.len()];
        for (e, w) in group_off.windows(2).enumerate() {
            for g in w[0] as usize..w[1] as usize {
                count[e] += g_count[g];
                total[e] += g_total[g];
                self_ps[e] += g_self[g];
            }
        }
        SearchEngine {
            names,
            count,
            total,
            self_ps,
            group_off,
            g_track,
            g_class,
            g_count,
            g_total,
            g_self,
        }
    }

    /// Number of distinct names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when the capture has no named events.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Name of entry `e`.
    pub fn name(&self, e: u32) -> StrId {
        self.names.get(e as usize).copied().unwrap_or(StrId::EMPTY)
    }

    fn groups(&self, e: u32) -> std::ops::Range<usize> {
        let e = e as usize;
        match (self.group_off.get(e), self.group_off.get(e + 1)) {
            (Some(&a), Some(&b)) => a as usize..b as usize,
            _ => 0..0,
        }
    }

    /// Distinct tracks on which entry `e` has events passing `filter`'s track and category
    /// tests (arg tests are not applied here), ascending.
    pub fn tracks(&self, e: u32, filter: &EventFilter) -> Vec<u32> {
        let mut out: Vec<u32> = self
            .groups(e)
            .filter(|&g| filter.track_ok(self.g_track[g]) && filter.class_ok(self.g_class[g]))
            .map(|g| self.g_track[g])
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Runs `query`. When `prev` holds the results of a query that `query` extends (see
    /// [`Query::narrows_to`]), only its hits are re-examined. The top `top` hits come back
    /// ranked ([`Results::rank_top`] ranks more).
    pub fn search(
        &self,
        cap: &Capture,
        postings: &dyn NamePostings,
        query: &Query,
        prev: Option<&Results>,
        top: usize,
    ) -> Result<Results, SearchError> {
        let matcher = Matcher::new(query)?;
        let filter = EventFilter::new(cap, &query.filters);
        let mut hits: Vec<Hit> = Vec::new();
        let mut scanned = 0usize;
        if !filter.impossible() {
            // Candidates in entry order: names are then read in interning order (sequential
            // memory) — 3–5× faster than visiting the previous hits in rank order.
            let cands: Vec<u32> = match prev {
                Some(p) if p.query.narrows_to(query) => {
                    let mut seen = vec![0u64; self.names.len().div_ceil(64)];
                    for h in &p.hits {
                        if let Some(w) = seen.get_mut(h.entry as usize / 64) {
                            *w |= 1 << (h.entry % 64);
                        }
                    }
                    let mut out = Vec::with_capacity(p.hits.len());
                    for (wi, &w) in seen.iter().enumerate() {
                        let mut bits = w;
                        while bits != 0 {
                            out.push(wi as u32 * 64 + bits.trailing_zeros());
                            bits &= bits - 1;
                        }
                    }
                    out
                }
                _ => (0..self.names.len() as u32).collect(),
            };
            scanned = cands.len();
            let scan = |m: &Matcher, part: &[u32], out: &mut Vec<Hit>| {
                for &e in part {
                    let name = self.name(e);
                    if let Some((score, contiguous)) = m.score_contiguous(cap.strings.get(name))
                        && let Some(mut h) = self.aggregate(cap, postings, &filter, e, name, score)
                    {
                        h.contiguous = contiguous;
                        out.push(h);
                    }
                }
            };
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
            if threads > 1 && cands.len() >= PARALLEL_MIN {
                // Scoring dominates long patterns: split the candidates over the cores, one
                // matcher each, and concatenate in entry order (the ranking is deterministic).
                let chunk = cands.len().div_ceil(threads);
                let parts: Vec<Vec<Hit>> = std::thread::scope(|sc| {
                    let handles: Vec<_> = cands
                        .chunks(chunk)
                        .skip(1)
                        .map(|part| {
                            sc.spawn(move || {
                                let mut out = Vec::new();
                                if let Ok(m) = Matcher::new(query) {
                                    scan(&m, part, &mut out);
                                }
                                out
                            })
                        })
                        .collect();
                    let mut first = Vec::new();
                    scan(&matcher, &cands[..chunk.min(cands.len())], &mut first);
                    let mut all = vec![first];
                    for h in handles {
                        all.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
                    }
                    all
                });
                hits = parts.concat();
            } else {
                scan(&matcher, &cands, &mut hits);
            }
        }
        let mut r = Results {
            query: query.clone(),
            hits,
            ranked: 0,
            scanned,
            filter,
        };
        r.rank_top(cap, top);
        Ok(r)
    }

    /// Aggregates of entry `e` over the events passing `filter`; `None` when none pass.
    fn aggregate(
        &self,
        cap: &Capture,
        postings: &dyn NamePostings,
        filter: &EventFilter,
        e: u32,
        name: StrId,
        score: i64,
    ) -> Option<Hit> {
        let mut h = Hit {
            entry: e,
            name,
            score,
            contiguous: true,
            count: 0,
            total: 0,
            self_ps: 0,
        };
        let ei = e as usize;
        if filter.is_empty() {
            h.count = self.count[ei];
            h.total = self.total[ei];
            h.self_ps = self.self_ps[ei];
            return (h.count > 0).then_some(h);
        }
        let mut any = false;
        for g in self.groups(e) {
            if filter.track_ok(self.g_track[g]) && filter.class_ok(self.g_class[g]) {
                any = true;
                h.count += self.g_count[g];
                h.total += self.g_total[g];
                h.self_ps += self.g_self[g];
            }
        }
        if !any {
            return None;
        }
        if filter.has_args() {
            // Aggregated events have no args: only slices can pass.
            h.count = 0;
            h.total = 0;
            h.self_ps = 0;
            let s = &cap.slices;
            let mut buf = String::new();
            for &id in postings.occurrences(name) {
                let t = cap.track_of(id);
                if filter.slice_ok(cap, id, t, &mut buf) {
                    let dur = s.dur[id as usize];
                    h.count += 1;
                    h.total += dur;
                    h.self_ps += dur - children_time(cap, id, t);
                }
            }
            if h.count == 0 {
                return None;
            }
        }
        Some(h)
    }
}

/// Σ duration of the direct children of slice `id` (slices whose `parent` is `id`): they follow
/// it on its track and start before it ends.
fn children_time(cap: &Capture, id: u32, track: u32) -> Ps {
    let s = &cap.slices;
    let end = s.end(id as usize);
    let last = cap
        .tracks
        .get(track as usize)
        .map_or(id + 1, |t| t.slices.1)
        .min(s.len() as u32);
    let mut sum = 0;
    for j in id + 1..last {
        let j = j as usize;
        if s.start[j] >= end {
            break;
        }
        if s.parent[j] == id {
            sum += s.dur[j];
        }
    }
    sum
}
