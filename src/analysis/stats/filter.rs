//! Which events a table covers: the category filter (kept, nesting-only or out), the track /
//! process filters, and the profiler's own events that are left out by default.

use super::{GroupBy, StatsOptions};
use crate::analysis::torch_events::{KEY_AVERAGES_CATS, is_pytorch, python_in_event_list};
use crate::model::{Capture, Category, Key, ProcessKind, StrId};

/// The options a table of `c` is computed with, when they differ from `opts`: with no
/// category filter of its own (no `cats`, no `nest_cats`, not [`StatsOptions::every`]) a
/// PyTorch capture's table is torch's `key_averages()` — the categories torch aggregates
/// ([`KEY_AVERAGES_CATS`]), and `python_function` frames nested without rows where torch's
/// event list holds them ([`python_in_event_list`]). The category grouping keeps every
/// category.
pub fn resolve(c: &Capture, opts: &StatsOptions) -> Option<StatsOptions> {
    if opts.cats.is_some()
        || !opts.nest_cats.is_empty()
        || opts.every
        || opts.group == GroupBy::Category
        || !is_pytorch(c)
    {
        return None;
    }
    let mut o = opts.clone();
    let mut cats: Vec<String> = KEY_AVERAGES_CATS.iter().map(|s| s.to_string()).collect();
    if opts.profiler {
        cats.push("Trace".to_string());
    }
    o.cats = Some(cats);
    if python_in_event_list(c) {
        o.nest_cats = vec!["python_function".to_string()];
    }
    Some(o)
}

/// Category filter state per category `StrId`: 0 unknown, 1 aggregated, 2 nesting only, 3 out.
pub(crate) struct CatFilter<'a> {
    opts: &'a StatsOptions,
    profiler: bool,
    memo: Vec<u8>,
}

impl<'a> CatFilter<'a> {
    /// A filter with an empty memo.
    pub(crate) fn new(opts: &'a StatsOptions) -> Self {
        CatFilter {
            opts,
            profiler: shows_profiler(opts),
            memo: Vec::new(),
        }
    }

    /// 1 aggregated, 2 nesting only, 3 out, for the raw category `cat`.
    pub(crate) fn class(&mut self, c: &Capture, cat: StrId) -> u8 {
        let i = cat.index();
        if i >= self.memo.len() {
            self.memo.resize(i + 1, 0);
        }
        if self.memo[i] == 0 {
            let raw = c.strings.get(cat);
            let kind = Category::from_cat(raw);
            let hit = |list: &[String]| {
                list.iter().any(|want| {
                    want == raw
                        || want == kind.canonical()
                        || raw.split(',').any(|p| p.trim() == want)
                })
            };
            self.memo[i] = match &self.opts.cats {
                _ if kind == Category::Trace && !self.profiler => 3,
                None => 1,
                Some(l) if hit(l) => 1,
                _ if hit(&self.opts.nest_cats) => 2,
                _ => 3,
            };
        }
        self.memo[i]
    }
}

/// True when the profiler's own events are part of the table: asked for with
/// [`StatsOptions::profiler`], or named by the category filter (`--cat Trace`).
pub fn shows_profiler(opts: &StatsOptions) -> bool {
    opts.profiler
        || opts
            .cats
            .as_ref()
            .is_some_and(|l| l.iter().any(|c| c == "Trace" || c == "trace"))
}

/// True when track `t` belongs to the profiler itself: Kineto's `Spans` and `Traces`
/// pseudo-processes (`PyTorch Profiler (0)`, `Iteration Start: PyTorch Profiler`).
pub fn is_profiler_track(c: &Capture, t: u32) -> bool {
    c.tracks
        .get(t as usize)
        .and_then(|tr| c.processes.get(tr.process as usize))
        .is_some_and(|p| match p.key {
            Key::Str(s) => matches!(c.strings.get(s), "Spans" | "Traces"),
            Key::Int(_) => false,
        })
}

/// The profiler's own events of a capture: what the tables leave out by default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProfilerEvents {
    /// Slices and instants.
    pub events: u64,
    /// Their distinct names, in first-seen order (at most 4).
    pub names: Vec<String>,
}

/// Counts the profiler's own events of `c`: slices of the Kineto `Trace` category and every
/// event on the `Spans` / `Traces` processes.
pub fn profiler_events(c: &Capture) -> ProfilerEvents {
    let mut out = ProfilerEvents::default();
    let s = &c.slices;
    let add = |out: &mut ProfilerEvents, name: StrId| {
        out.events += 1;
        let n = c.strings.get(name);
        if out.names.len() < 4 && !out.names.iter().any(|x| x == n) {
            out.names.push(n.to_string());
        }
    };
    for (t, tr) in c.tracks.iter().enumerate() {
        let whole = is_profiler_track(c, t as u32);
        let (lo, hi) = (tr.slices.0 as usize, (tr.slices.1 as usize).min(s.len()));
        for i in lo..hi {
            if whole || s.kind(i) == Category::Trace {
                add(&mut out, s.name[i]);
            }
        }
        if whole {
            let (a, b) = (
                tr.instants.0 as usize,
                (tr.instants.1 as usize).min(c.instants.name.len()),
            );
            for i in a..b {
                add(&mut out, c.instants.name[i]);
            }
        }
    }
    out
}

/// True when the process / track pass the track, process, `--plane` / `--line` filters (and
/// are not the profiler's own, unless asked for).
pub fn track_selected(c: &Capture, t: u32, opts: &StatsOptions) -> bool {
    let Some(tr) = c.tracks.get(t as usize) else {
        return false;
    };
    if opts.track.is_some_and(|want| want != t) || opts.process.is_some_and(|p| p != tr.process) {
        return false;
    }
    if !shows_profiler(opts) && is_profiler_track(c, t) {
        return false;
    }
    if let Some(re) = &opts.plane
        && !re.is_match(&c.process_name(tr.process))
        && !re.is_match(&c.process_stable_name(tr.process))
    {
        return false;
    }
    if let Some(re) = &opts.line
        && !re.is_match(&c.track_name(t))
        && !re.is_match(&c.track_stable_name(t))
    {
        return false;
    }
    true
}

/// True when track `t` belongs to a GPU / TPU / other accelerator process.
pub(crate) fn is_device_process(c: &Capture, t: u32) -> bool {
    c.tracks
        .get(t as usize)
        .and_then(|tr| c.processes.get(tr.process as usize))
        .is_some_and(|p| {
            matches!(
                p.kind,
                ProcessKind::Gpu | ProcessKind::Tpu | ProcessKind::Device
            )
        })
}

/// The categories of a capture's events (slices and instants, the profiler's own left out)
/// with their event counts, most events first — what `--cat` accepts and what the table's
/// category key cycles through (so its first press never gives an empty table).
pub fn categories(c: &Capture) -> Vec<(String, u64)> {
    let s = &c.slices;
    let mut per_class: Vec<u64> = vec![0; s.classes.len()];
    let mut by: rustc_hash::FxHashMap<StrId, u64> = rustc_hash::FxHashMap::default();
    for (t, tr) in c.tracks.iter().enumerate() {
        if is_profiler_track(c, t as u32) {
            continue;
        }
        let (lo, hi) = (tr.slices.0 as usize, (tr.slices.1 as usize).min(s.len()));
        for &k in s.class.get(lo..hi).unwrap_or(&[]) {
            if let Some(n) = per_class.get_mut(usize::from(k)) {
                *n += 1;
            }
        }
        let (a, b) = (
            tr.instants.0 as usize,
            (tr.instants.1 as usize).min(c.instants.cat.len()),
        );
        for &cat in c.instants.cat.get(a..b).unwrap_or(&[]) {
            *by.entry(cat).or_default() += 1;
        }
    }
    for (&(raw, kind), &n) in s.classes.iter().zip(&per_class) {
        if n > 0 && kind != Category::Trace {
            *by.entry(raw).or_default() += n;
        }
    }
    let mut out: Vec<(String, u64)> = by
        .into_iter()
        .map(|(cat, n)| (c.strings.get(cat).to_string(), n))
        .collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}
