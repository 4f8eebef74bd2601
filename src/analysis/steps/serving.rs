//! Serving iterations as steps: a vLLM / SGLang / ATOM / xDiT serving trace has no
//! `ProfilerStep#N`; its steps are the engine's iterations, marked by the `user_annotation`
//! the engine writes around each (parsed by [`crate::analysis::serving::annotation`]). As in
//! TraceLens (`split_inference/execution_roots.py`), the detailed forms (with the sq/sk
//! aggregates) are looked for first and the native forms only when there is none.
//!
//! The host annotation ends when the engine has launched the iteration's work, usually before
//! the device runs it (a FULL-graph vLLM decode: 2.4 ms of host time, 10.7 ms of kernels). As
//! TraceLens's splitter takes the device events launched inside the annotation with it, a step
//! runs from the annotation's start to the later of its end and the end of the last device
//! activity launched inside it, cut at the next iteration's start.

use super::types::Step;
use super::types::is_host_track;
use crate::analysis::serving::annotation::{self, Iteration};
use crate::model::{Capture, Category, Ps, StrId};

/// One engine iteration found in a capture.
#[derive(Clone, Debug, PartialEq)]
pub struct ServingIteration {
    /// The annotation slice.
    pub slice: u32,
    /// Its name (interned).
    pub name: StrId,
    /// Start, ps.
    pub start: Ps,
    /// End of the step, ps: the later of the annotation's end and the end of the device work
    /// launched inside it, cut at the next iteration's start.
    pub end: Ps,
    /// End of the host annotation, ps.
    pub host_end: Ps,
    /// What the annotation says.
    pub it: Iteration,
}

/// The iterations of a capture.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Iterations {
    /// In time order, none nested in another.
    pub list: Vec<ServingIteration>,
    /// Matching annotations left out because they lie inside an earlier one.
    pub nested: usize,
    /// Annotations of the native (secondary) formats ignored because detailed ones exist.
    pub secondary_ignored: usize,
}

impl Iterations {
    /// The iterations as steps numbered 0, 1, … in time order.
    pub fn steps(&self) -> Vec<Step> {
        self.list
            .iter()
            .enumerate()
            .map(|(k, s)| Step {
                number: k as i64,
                start: s.start,
                end: s.end,
                partial: false,
            })
            .collect()
    }
}

/// Parsed iteration annotation per interned name (`None`: not one). One parse per distinct
/// name that could be one (a prefix test first), not per slice.
fn parsed_names(c: &Capture) -> Vec<Option<Iteration>> {
    let mut out = vec![None; c.strings.len()];
    for (id, s) in c.strings.iter() {
        if let Some(it) = annotation::parse(s)
            && let Some(slot) = out.get_mut(id.index())
        {
            *slot = Some(it);
        }
    }
    out
}

/// The engine iterations of `c`: host `user_annotation` slices whose name is an iteration
/// annotation, the detailed formats first (TraceLens's priority tiers).
pub fn iterations(c: &Capture) -> Iterations {
    let names = parsed_names(c);
    if names.iter().all(Option::is_none) {
        return Iterations::default();
    }
    let s = &c.slices;
    let mut found: Vec<(Ps, Ps, u32, bool)> = Vec::new();
    for t in 0..c.tracks.len() {
        if !is_host_track(c, t) {
            continue;
        }
        let (a, b) = c.tracks[t].slices;
        for id in a as usize..b as usize {
            if s.kind(id) != Category::UserAnnotation {
                continue;
            }
            if let Some(Some(it)) = names.get(s.name[id].index()) {
                found.push((s.start[id], s.end(id), id as u32, it.format.primary()));
            }
        }
    }
    let any_primary = found.iter().any(|f| f.3);
    let before = found.len();
    if any_primary {
        found.retain(|f| f.3);
    }
    let mut out = Iterations {
        secondary_ignored: before - found.len(),
        ..Iterations::default()
    };
    found.sort_by_key(|f| (f.0, std::cmp::Reverse(f.1), f.2));
    for (start, end, id, _) in found {
        if out.list.last().is_some_and(|l| start < l.end) {
            out.nested += 1;
            continue;
        }
        let name = s.name[id as usize];
        let Some(Some(it)) = names.get(name.index()) else {
            continue;
        };
        out.list.push(ServingIteration {
            slice: id,
            name,
            start,
            end,
            host_end: end,
            it: it.clone(),
        });
    }
    extend_to_device_work(c, &mut out.list);
    out
}

/// Moves each iteration's end to the end of the device work launched inside its annotation
/// (device activities whose launch, by correlation id, starts in it), never past the next
/// iteration's start.
fn extend_to_device_work(c: &Capture, list: &mut [ServingIteration]) {
    if list.is_empty() {
        return;
    }
    let s = &c.slices;
    let by_corr = crate::analysis::stats::tree::launch_by_corr(c);
    let mut dev_end: Vec<Ps> = list.iter().map(|x| x.end).collect();
    for i in 0..s.len() {
        if !s.kind(i).is_device() || !s.kind(i).is_activity() {
            continue;
        }
        let Some(&l) = by_corr.get(&s.corr(i)) else {
            continue;
        };
        let t = s.start[l as usize];
        let Some(k) = list.partition_point(|x| x.start <= t).checked_sub(1) else {
            continue;
        };
        if let (Some(x), Some(e)) = (list.get(k), dev_end.get_mut(k))
            && t < x.host_end
        {
            *e = (*e).max(s.end(i));
        }
    }
    let next: Vec<Ps> = list.iter().skip(1).map(|x| x.start).collect();
    for (k, x) in list.iter_mut().enumerate() {
        let cap = next.get(k).copied().unwrap_or(Ps::MAX);
        x.end = dev_end
            .get(k)
            .copied()
            .unwrap_or(x.end)
            .min(cap)
            .max(x.host_end.min(cap));
    }
}
