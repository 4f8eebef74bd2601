//! Derived lines → tracks of their own: the lines derived from each GPU plane's events and the
//! `Launch Stats` derived from the host's launches, written into the builder on all cores.

use super::dedup::Dedup;
use super::derived::{DerivedEvent, DerivedKind, DerivedLine};
use super::launch_stats::derive_launch_stats;
use super::plane::Decoder;
use crate::model::{ArgValue, ArgsArena, ArgsRef, Key, SliceSlots, StrId, TrackKind};
use rustc_hash::FxHashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Interned keys of derived events' args.
#[derive(Clone, Copy, Debug)]
struct DerivedKeys {
    group: StrId,
    step: StrId,
    long: StrId,
    n: StrId,
    max: StrId,
    avg: StrId,
    class_none: u16,
}

/// The args of derived event `i` of `line` into `buf` (cleared first).
fn derived_args(
    line: &DerivedLine,
    i: usize,
    e: &DerivedEvent,
    k: &DerivedKeys,
    step_names: &FxHashMap<i64, StrId>,
    buf: &mut Vec<(StrId, ArgValue)>,
) {
    buf.clear();
    if let Some(g) = e.group() {
        buf.push((k.group, ArgValue::I64(g)));
    }
    // Step names come from host planes, known once every plane is read.
    let long = match (line.kind, e.group()) {
        (DerivedKind::Steps, Some(g)) if e.long_name == StrId::EMPTY => {
            step_names.get(&g).copied().unwrap_or(StrId::EMPTY)
        }
        _ => e.long_name,
    };
    if long != StrId::EMPTY {
        let key = if line.kind == DerivedKind::Steps {
            k.step
        } else {
            k.long
        };
        buf.push((key, ArgValue::Str(long)));
    }
    if let Some(&(n, mx, avg)) = line.launch.get(i) {
        buf.push((k.n, ArgValue::U64(n)));
        buf.push((k.max, ArgValue::F64(mx)));
        buf.push((k.avg, ArgValue::F64(avg)));
    }
}

impl Decoder<'_> {
    /// Adds derived lines (each with the process it belongs to) as tracks of their own. The
    /// slices are written on all cores: each thread builds args in an arena of its own,
    /// appended to the capture's afterwards (derived args never inherit, so only their
    /// handles move).
    pub(super) fn push_derived(&mut self, jobs: Vec<(u32, DerivedLine)>) {
        // Plane-wide lines (Steps, Launch Stats) first, then each stream's lines in the order
        // they were derived (compute streams first), named `<line> - from #<stream id>`.
        let tracks: Vec<u32> = jobs
            .iter()
            .enumerate()
            .map(|(j, (proc_, line))| {
                let (proc_, kind) = (*proc_, line.kind);
                let (key, name, sort) = match line.from {
                    None => (
                        Key::Int(kind.line_id()),
                        self.b.intern(&kind.title()),
                        -2000 + kind.order(),
                    ),
                    Some(id) => {
                        let name = self.b.intern(&format!("{} - from #{id}", kind.name()));
                        (Key::Str(name), name, -1990 + j as i64)
                    }
                };
                let t = self.b.track(proc_, key, TrackKind::Derived);
                let tr = self.b.track_mut(t);
                tr.name = name;
                tr.sort_index = sort;
                t
            })
            .collect();
        let keys = DerivedKeys {
            group: self.b.intern("group_id"),
            step: self.b.intern("step_name"),
            long: self.k_long_name,
            n: self.b.intern("num_launches"),
            max: self.b.intern("max_launch_time_us"),
            avg: self.b.intern("avg_launch_time_us"),
            class_none: self.b.class_of(StrId::EMPTY),
        };
        let counts: Vec<usize> = jobs.iter().map(|(_, l)| l.events.len()).collect();
        self.b.reserve_slices(counts.iter().sum());
        let mut arena = std::mem::take(&mut self.b.args);
        let step_names = &self.step_names;
        let threads = self.threads.min(counts.len()).max(1);
        let slot_runs: Vec<(u32, usize)> =
            tracks.iter().copied().zip(counts.iter().copied()).collect();
        let (_, runs) = self.b.slots(&slot_runs);
        // Each line is dropped as soon as its slices are written (lower peak memory).
        let cells: Vec<Mutex<(SliceSlots<'_>, usize, Option<DerivedLine>)>> = runs
            .into_iter()
            .zip(jobs)
            .map(|(r, (_, line))| Mutex::new((r, 0, Some(line))))
            .collect();
        let mut order: Vec<usize> = (0..counts.len()).collect();
        order.sort_by_key(|&j| (std::cmp::Reverse(counts[j]), j));
        let next = AtomicUsize::new(0);
        let work = |who: usize| -> ArgsArena {
            let mut local = ArgsArena::default();
            let mut dedup = Dedup::default();
            let mut buf = Vec::new();
            while let Some(&j) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                let mut cell = cells[j].lock().unwrap_or_else(|e| e.into_inner());
                let (run, owner, line) = &mut *cell;
                *owner = who;
                let Some(line) = line.take() else { continue };
                dedup.reset();
                for (i, e) in line.events.iter().enumerate() {
                    derived_args(&line, i, e, &keys, step_names, &mut buf);
                    // Derived events of one op / module / step share their args.
                    let args = if buf.is_empty() {
                        ArgsRef::NONE
                    } else {
                        dedup.block(&mut local, &buf, ArgsRef::NONE)
                    };
                    let dur = e.dur.max(0);
                    run.push(e.start, dur, e.name, keys.class_none, args, 0);
                }
            }
            local
        };
        let locals: Vec<ArgsArena> = if threads == 1 {
            vec![work(0)]
        } else {
            std::thread::scope(|sc| {
                let hs: Vec<_> = (1..threads).map(|w| sc.spawn(move || work(w))).collect();
                let mut v = vec![work(0)];
                v.extend(hs.into_iter().map(|h| h.join().unwrap_or_default()));
                v
            })
        };
        let mut dropped = 0u64;
        let bases: Vec<Option<u32>> = locals.iter().map(|l| arena.append(l)).collect();
        for c in cells {
            let (mut run, owner, _) = c.into_inner().unwrap_or_else(|e| e.into_inner());
            let base = bases.get(owner).copied().flatten();
            for a in run.args_mut() {
                if a.is_some() {
                    match base {
                        Some(b) => a.0 += b,
                        None => {
                            *a = ArgsRef::NONE;
                            dropped += 1;
                        }
                    }
                }
            }
        }
        self.b.args = arena;
        self.b.args.dropped_blocks += dropped;
    }

    pub(super) fn finish_derived(&mut self) {
        let launches = std::mem::take(&mut self.launches);
        if !launches.is_empty() {
            let per_dev = derive_launch_stats(&launches, &mut self.b.strings, &self.step_names);
            for (dev, line) in per_dev {
                match self.gpus.get(&dev) {
                    Some(&(p, false)) => self.push_derived(vec![(p, line)]),
                    Some(&(_, true)) => {}
                    None => self.b.warn(
                        "launch_without_device",
                        format!("host launches name device_id {dev}, which has no GPU plane"),
                    ),
                }
            }
        }
    }
}
