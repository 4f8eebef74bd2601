//! Rebuilding the replay capture with the capture-time slices grafted in: every original slice
//! keeps its id (matched kernels get the fresh correlation id of their capture-time launch
//! call), and the kept slices of each matched capture window go, mapped affinely from the
//! window onto the graph launch's span, to a synthetic thread track beside the launching thread
//! (`<thread> · graph bs=32 FULL (captured ops)`), flagged `CAPTURED`.

use super::template::Template;
use crate::model::{
    Capture, CaptureBuilder, Format, Key, NO_SLICE, Ps, StrId, TrackKind, slice_flags,
};
use rustc_hash::FxHashMap;

/// One graph launch to graft a capture window into.
pub struct Graft<'a> {
    /// The graph launch slice.
    pub launch: u32,
    /// Its track.
    pub track: u32,
    /// The capture window.
    pub template: &'a Template,
    /// Label of the capture, `bs=32 FULL`.
    pub label: String,
    /// (capture call index, replayed slice id) pairs.
    pub pairs: Vec<(u32, u32)>,
}

/// True when `c`'s tracks can be rebuilt one for one (no two share a builder key).
pub fn rebuildable(c: &Capture) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    c.tracks.iter().all(|t| {
        seen.insert((
            t.process,
            t.key,
            matches!(t.kind, TrackKind::Thread | TrackKind::XLine),
            t.kind == TrackKind::Counter,
            t.kind == TrackKind::Async,
            t.kind == TrackKind::Derived,
        ))
    })
}

/// Maps `t` from `[ws, we]` onto `[ls, le]`.
fn affine(t: Ps, (ws, we): (Ps, Ps), (ls, le): (Ps, Ps)) -> Ps {
    if we <= ws {
        return ls;
    }
    let r = i128::from(t - ws) * i128::from(le - ls) / i128::from(we - ws);
    ls + r as Ps
}

/// `replay` rebuilt with `grafts` (see the module doc); `kernel_launch` is stored as
/// [`GraphReplay::kernel_launch`](crate::model::GraphReplay) and `notes` beside it. `b` already
/// holds the replay's strings and args and the templates' copies.
pub fn rebuild(
    mut b: CaptureBuilder,
    replay: Capture,
    grafts: &[Graft],
    kernel_launch: Vec<(u32, u32)>,
    notes: Vec<String>,
) -> Capture {
    let Capture {
        source,
        format,
        processes,
        tracks,
        slices,
        instants,
        counters,
        flows,
        aggregated,
        origin_epoch_ns,
        metadata,
        warnings,
        ..
    } = replay;
    b.origin_epoch_ns = origin_epoch_ns;
    b.metadata = metadata;
    for w in &warnings {
        b.warn_n(w.kind, w.message.clone(), w.count);
    }
    for p in &processes {
        let id = b.process(p.key);
        *b.process_mut(id) = p.clone();
    }
    for t in &tracks {
        let id = b.track(t.process, t.key, t.kind);
        let m = b.track_mut(id);
        m.name = t.name;
        m.sort_index = t.sort_index;
    }
    // Fresh correlation ids, above every id of the replay.
    let mut next = (0..slices.len()).map(|i| slices.corr(i)).max().unwrap_or(0) + 1;
    let mut kernel_corr: FxHashMap<u32, u64> = FxHashMap::default();
    let mut call_corr: Vec<FxHashMap<u32, u64>> = Vec::with_capacity(grafts.len());
    for g in grafts {
        let mut m = FxHashMap::default();
        for &(ci, k) in &g.pairs {
            kernel_corr.insert(k, next);
            if let Some(&s) = g.template.calls.get(ci as usize) {
                m.insert(s, next);
            }
            next += 1;
        }
        call_corr.push(m);
    }
    let n_orig = slices.len();
    b.reserve_slices(
        n_orig
            + grafts
                .iter()
                .map(|g| g.template.slices.len())
                .sum::<usize>(),
    );
    for (t, tr) in tracks.iter().enumerate() {
        for i in tr.slices.0..tr.slices.1 {
            let iu = i as usize;
            let corr = kernel_corr
                .get(&i)
                .copied()
                .unwrap_or_else(|| slices.corr(iu));
            b.add_slice(
                t as u32,
                slices.start[iu],
                slices.dur[iu],
                slices.name[iu],
                slices.cat(iu),
                slices.args[iu],
                corr,
            );
        }
    }
    // Grafted slices, on one synthetic track per (launching track, capture, capture thread).
    let mut synth: FxHashMap<(u32, StrId, u32), u32> = FxHashMap::default();
    for (g, cc) in grafts.iter().zip(&call_corr) {
        let tr = &tracks[g.track as usize];
        let (ls, le) = (
            slices.start[g.launch as usize],
            slices.end(g.launch as usize),
        );
        let label = b.intern(&g.label);
        let mut track_of_thread: Vec<u32> = Vec::with_capacity(g.template.threads.len());
        for (k, &th) in g.template.threads.iter().enumerate() {
            let key = (g.track, label, k as u32);
            let id = match synth.get(&key) {
                Some(&id) => id,
                None => {
                    let base = b.strings.get(tr.name).to_string();
                    let base = if base.is_empty() {
                        match tr.key {
                            Key::Int(v) => format!("thread {v}"),
                            Key::Str(s) => b.strings.get(s).to_string(),
                        }
                    } else {
                        base
                    };
                    let extra = if g.template.threads.len() > 1 {
                        format!(" [{}]", b.strings.get(th))
                    } else {
                        String::new()
                    };
                    let name =
                        b.intern(&format!("{base} · graph {}{extra} (captured ops)", g.label));
                    let kname = b.intern(&format!("graph-capture:{}:{}:{k}", g.track, g.label));
                    let id = b.track(tr.process, Key::Str(kname), TrackKind::Thread);
                    let m = b.track_mut(id);
                    m.name = name;
                    m.sort_index = tr.sort_index;
                    synth.insert(key, id);
                    id
                }
            };
            track_of_thread.push(id);
        }
        for (k, s) in g.template.slices.iter().enumerate() {
            let st = affine(s.start, g.template.window, (ls, le));
            let en = affine(s.end, g.template.window, (ls, le)).max(st);
            let corr = cc.get(&(k as u32)).copied().unwrap_or(0);
            b.add_slice(
                track_of_thread[s.thread as usize],
                st,
                en - st,
                s.name,
                s.cat,
                s.args,
                corr,
            );
        }
    }
    for k in 0..instants.ts.len() {
        b.add_instant(
            instants.track[k],
            instants.ts[k],
            instants.name[k],
            instants.cat[k],
            instants.args[k],
            instants.scope[k],
        );
    }
    for s in &counters {
        let p = tracks.get(s.track as usize).map_or(0, |t| t.process);
        for (&ts, &v) in s.ts.iter().zip(&s.value) {
            b.add_counter(p, s.name, ts, v);
        }
    }
    for a in &aggregated {
        b.add_aggregated(a.track, a.name, a.occurrences, a.dur);
    }
    let mut cap = b.finish(source, format.unwrap_or(Format::Kineto));
    for i in 0..cap.slices.len() {
        cap.slices.flags[i] = if i < n_orig {
            slices.flags[i]
        } else {
            cap.slices.flags[i] | slice_flags::CAPTURED
        };
    }
    // The launch → kernel flows of matched kernels start at their capture-time call.
    let mut call_of_corr: FxHashMap<u64, u32> = FxHashMap::default();
    for i in n_orig..cap.slices.len() {
        let c = cap.slices.corr(i);
        if c != 0 {
            call_of_corr.insert(c, i as u32);
        }
    }
    cap.flows = flows;
    for f in &mut cap.flows {
        if f.to == NO_SLICE {
            continue;
        }
        if let Some(call) = kernel_corr.get(&f.to).and_then(|c| call_of_corr.get(c)) {
            f.from = *call;
        }
    }
    cap.graph_replay.kernel_launch = kernel_launch;
    cap.graph_replay.notes = notes;
    cap
}
