//! `CaptureBuilder::finish`: the one global sort (skipped when slices arrived in order), lanes and
//! parents per track on two threads, begin/end and async pairs closed, flows resolved, spans.

use super::builder::{CaptureBuilder, FlowEnd, Open};
use super::capture::*;
use super::nesting::{LaneCols, assign_lanes_cols};
use super::order::{PARALLEL_MIN_SLICES, enclosing_slice, sort_slice_order};
use super::track_of::TrackOf;

impl CaptureBuilder {
    /// Sorts, nests and links everything into an immutable capture.
    pub fn finish(mut self, source: SourceInfo, format: Format) -> Capture {
        let mut open: Vec<(u32, Open)> = Vec::new();
        if !self.begin_end.is_empty() {
            let paired = std::mem::take(&mut self.begin_end).pair();
            for (b, end) in paired.closed {
                self.add_slice(b.track, b.ts, end - b.ts, b.name, b.cat, b.args, 0);
            }
            open.extend(paired.open.into_iter().map(|b| {
                (
                    b.track,
                    Open {
                        ts: b.ts,
                        name: b.name,
                        cat: b.cat,
                        args: b.args,
                    },
                )
            }));
            self.warn_n(
                "unmatched_end",
                format!(
                    "{} E event(s) matching no open B (of that name) on their thread skipped",
                    paired.unmatched_end
                ),
                paired.unmatched_end,
            );
            self.warn_n(
                "overlapping_begin_end",
                format!(
                    "{} E event(s) closed a slice while slices begun inside it were still open: those partly overlap it and are drawn on extra lanes (Perfetto rejects them)",
                    paired.out_of_order
                ),
                paired.out_of_order,
            );
            open.sort_by_key(|(t, o)| (*t, o.ts));
        }
        let mut async_open: Vec<(Open, u32)> = std::mem::take(&mut self.async_open)
            .into_values()
            .flatten()
            .collect();
        async_open.sort_by_key(|(o, t)| (*t, o.ts));
        // Latest time seen, to close unfinished slices (only needed when there are some).
        let mut max_t = i64::MIN;
        if !open.is_empty() || !async_open.is_empty() {
            for i in 0..self.s.start.len() {
                max_t = max_t.max(self.s.start[i] + self.s.dur[i]);
            }
            for &t in &self.inst.ts {
                max_t = max_t.max(t);
            }
            for c in &self.counters {
                for &t in &c.ts {
                    max_t = max_t.max(t);
                }
            }
            for &(_, o) in &open {
                max_t = max_t.max(o.ts);
            }
            for (o, _) in &async_open {
                max_t = max_t.max(o.ts);
            }
        }
        if !open.is_empty() {
            let n = open.len() as u64;
            self.warn_n(
                "unmatched_begin",
                format!("{n} B event(s) without E: drawn until the end of the capture"),
                n,
            );
            for (t, o) in open {
                let id = self.add_slice(t, o.ts, max_t - o.ts, o.name, o.cat, o.args, 0);
                self.s.flags[id as usize] |= slice_flags::UNFINISHED;
            }
        }
        if !async_open.is_empty() {
            let n = async_open.len() as u64;
            self.warn_n(
                "unmatched_async_begin",
                format!("{n} async begin(s) without end: drawn until the end of the capture"),
                n,
            );
            for (o, t) in async_open {
                let id = self.add_slice(t, o.ts, max_t - o.ts, o.name, o.cat, o.args, 0);
                self.s.flags[id as usize] |= slice_flags::ASYNC_UNFINISHED;
            }
        }
        crate::timings::mark("finish: begin/end");
        // Sort slices by (track, start asc, dur desc, raw id).
        let n = self.s.start.len();
        // Loaders usually push in order: skip the O(n log n) sort when nothing is out of place.
        let parallel = n >= PARALLEL_MIN_SLICES && crate::threads::cores() > 1;
        let mut ranges = None;
        if self
            .s_track
            .runs_presorted(&self.s.start, &self.s.dur, parallel)
            == Some(true)
        {
            ranges = Some(self.s_track.ranges(self.tracks.len()));
        }
        if ranges.is_none() {
            self.s_track.densify();
        }
        let presorted = ranges.is_some() || {
            let (tr, st, du) = (&*self.s_track.dense_mut(), &self.s.start, &self.s.dur);
            let in_order = |r: std::ops::Range<usize>| {
                r.into_iter().all(|i| {
                    (tr[i - 1], st[i - 1]) < (tr[i], st[i])
                        || (tr[i - 1] == tr[i] && st[i - 1] == st[i] && du[i - 1] >= du[i])
                })
            };
            if parallel {
                let mid = n / 2;
                std::thread::scope(|sc| {
                    let h = sc.spawn(|| in_order(mid.max(1)..n));
                    let a = in_order(1..mid.max(1));
                    a & h.join().unwrap_or(false)
                })
            } else {
                in_order(1..n)
            }
        };
        let order = if presorted {
            Vec::new()
        } else {
            sort_slice_order(
                self.s_track.dense_mut(),
                &self.s.start,
                &self.s.dur,
                self.tracks.len(),
            )
        };
        crate::timings::mark("finish: sort order");
        let sorted = order.windows(2).all(|w| w[0] < w[1]);
        let mut raw_to_new: Vec<u32> = Vec::new();
        if !sorted {
            raw_to_new = vec![0u32; n];
            for (new, &raw) in order.iter().enumerate() {
                raw_to_new[raw as usize] = new as u32;
            }
            fn permute<T: Copy>(v: &mut Vec<T>, order: &[u32]) {
                let out: Vec<T> = order.iter().map(|&i| v[i as usize]).collect();
                *v = out;
            }
            let s = &mut self.s;
            let s_track = self.s_track.dense_mut();
            let order = &order;
            // Column gathers are independent: split them over two threads for large captures,
            // about half the bytes each (18 and 17 bytes per slice).
            let second = |s_dur: &mut Vec<Ps>,
                          s_corr: &mut Vec<u32>,
                          s_flags: &mut Vec<u8>,
                          st: &mut Vec<u32>| {
                permute(s_dur, order);
                permute(s_corr, order);
                permute(s_flags, order);
                permute(st, order);
            };
            if n >= PARALLEL_MIN_SLICES && crate::threads::cores() > 1 {
                std::thread::scope(|sc| {
                    let (dur, corr, flags) = (&mut s.dur, &mut s.corr, &mut s.flags);
                    sc.spawn(move || second(dur, corr, flags, s_track));
                    permute(&mut s.start, order);
                    permute(&mut s.name, order);
                    permute(&mut s.class, order);
                    permute(&mut s.args, order);
                });
            } else {
                permute(&mut s.start, order);
                permute(&mut s.name, order);
                permute(&mut s.class, order);
                permute(&mut s.args, order);
                second(&mut s.dur, &mut s.corr, &mut s.flags, s_track);
            }
        }
        drop(order);
        crate::timings::mark("finish: permute");
        let map_raw = |raw: u32| -> u32 {
            if raw_to_new.is_empty() {
                raw
            } else {
                raw_to_new[raw as usize]
            }
        };
        for e in &mut self.s.corr_wide {
            e.0 = map_raw(e.0);
        }
        self.s.corr_wide.sort_unstable();
        self.s.corr_wide.shrink_to_fit();

        // Track ranges.
        let nt = self.tracks.len();
        if let Some(r) = ranges {
            for (t, r) in self.tracks.iter_mut().zip(r) {
                t.slices = r;
            }
        } else {
            let tr = self.s_track.dense_mut();
            let mut i = 0usize;
            for t in 0..nt {
                let lo = i;
                while i < n && tr[i] as usize == t {
                    i += 1;
                }
                self.tracks[t].slices = (lo as u32, i as u32);
            }
        }
        self.s_track = TrackOf::default();
        // Zeroed allocations: every element is written by `assign_lanes_cols`.
        self.s.lane = vec![0; n];
        self.s.parent = vec![0; n];
        let slice_span = self.assign_all_lanes();
        crate::timings::mark("finish: lanes");
        // Instants by (track, ts).
        let ni = self.inst.ts.len();
        let mut iorder: Vec<u32> = (0..ni as u32).collect();
        iorder.sort_by_key(|&k| (self.inst.track[k as usize], self.inst.ts[k as usize]));
        if !iorder.windows(2).all(|w| w[0] < w[1]) {
            let g = |v: &Vec<_>| -> Vec<_> { iorder.iter().map(|&k| v[k as usize]).collect() };
            let inst = &self.inst;
            let out = Instants {
                ts: g(&inst.ts),
                name: iorder.iter().map(|&k| inst.name[k as usize]).collect(),
                cat: iorder.iter().map(|&k| inst.cat[k as usize]).collect(),
                args: iorder.iter().map(|&k| inst.args[k as usize]).collect(),
                track: iorder.iter().map(|&k| inst.track[k as usize]).collect(),
                scope: iorder.iter().map(|&k| inst.scope[k as usize]).collect(),
            };
            self.inst = out;
        }
        let mut i = 0usize;
        for t in 0..nt {
            let lo = i;
            while i < ni && self.inst.track[i] as usize == t {
                i += 1;
            }
            self.tracks[t].instants = (lo as u32, i as u32);
        }
        for c in &mut self.counters {
            if !c.ts.windows(2).all(|w| w[0] <= w[1]) {
                let mut pairs: Vec<(Ps, f64)> =
                    c.ts.iter().copied().zip(c.value.iter().copied()).collect();
                pairs.sort_by_key(|p| p.0);
                c.ts = pairs.iter().map(|p| p.0).collect();
                c.value = pairs.iter().map(|p| p.1).collect();
            }
        }

        crate::timings::mark("finish: instants/counters");
        // Flows: group points by (cat, id) in file order; link consecutive points.
        let fp = std::mem::take(&mut self.flow_points);
        // Order each flow's points by time (files may list the `f` before its `s`, e.g. Kineto
        // writes GPU events first), then start before step before finish, then file order.
        let point_time = |e: FlowEnd| -> Ps {
            match e {
                FlowEnd::Slice(raw) => self
                    .s
                    .start
                    .get(map_raw(raw) as usize)
                    .copied()
                    .unwrap_or(0),
                FlowEnd::Enclosing { ts, .. } | FlowEnd::Next { ts, .. } => ts,
            }
        };
        // The other track of a thread / device-stream pair of one (process, tid): a flow point
        // given on one binds to the other when its own has no slice there.
        let sibling = |t: u32| -> Option<u32> {
            let tr = &self.tracks[t as usize];
            let other = match tr.kind {
                TrackKind::Thread => TrackKind::GpuStream,
                TrackKind::GpuStream => TrackKind::Thread,
                _ => return None,
            };
            self.find_track(tr.process, tr.key, other)
        };
        let resolve = |s: &Slices, tracks: &[Track], e: FlowEnd| -> u32 {
            let on = |track: u32| match e {
                FlowEnd::Slice(raw) => map_raw(raw),
                FlowEnd::Enclosing { ts, .. } => enclosing_slice(s, &tracks[track as usize], ts),
                FlowEnd::Next { ts, .. } => {
                    let (lo, hi) = tracks[track as usize].slices;
                    let k = lo as usize
                        + s.start[lo as usize..hi as usize].partition_point(|&x| x < ts);
                    if k < hi as usize { k as u32 } else { NO_SLICE }
                }
            };
            match e {
                FlowEnd::Slice(raw) => map_raw(raw),
                FlowEnd::Enclosing { track, .. } | FlowEnd::Next { track, .. } => {
                    let found = on(track);
                    match sibling(track) {
                        Some(o) if found == NO_SLICE => on(o),
                        _ => found,
                    }
                }
            }
        };
        let resolve_end = |e: FlowEnd| resolve(&self.s, &self.tracks, e);
        let (flows, unresolved) = super::flow_link::link(fp, &point_time, &resolve_end);
        let (ends, starts, none) = unresolved;
        crate::timings::mark("finish: flows");
        if ends + starts + none > 0 {
            let text = super::warning_text::unresolved_flows(ends, starts, none);
            self.warn_n("unresolved_flow", text, ends + starts + none);
        }
        // Span (slices' part computed with the lanes).
        let (mut lo_t, mut hi_t) = slice_span;
        if self.classes_full > 0 {
            let n = self.classes_full;
            self.warn_n(
                "categories_capped",
                "more than 65 536 distinct categories: later ones shown without category".into(),
                n,
            );
        }
        for &t in &self.inst.ts {
            lo_t = lo_t.min(t);
            hi_t = hi_t.max(t);
        }
        for c in &self.counters {
            if let (Some(&a), Some(&b)) = (c.ts.first(), c.ts.last()) {
                lo_t = lo_t.min(a);
                hi_t = hi_t.max(b);
            }
        }
        let span = if lo_t <= hi_t { (lo_t, hi_t) } else { (0, 0) };
        if self.args.dropped_blocks > 0 {
            let d = self.args.dropped_blocks;
            self.warn_n(
                "args_capped",
                "args arena over 2 GiB: args of later events not kept".into(),
                d,
            );
        }
        self.args.shrink();
        crate::timings::mark("finish: rest");
        Capture {
            source,
            format: Some(format),
            strings: self.strings,
            args: self.args,
            processes: self.processes,
            tracks: self.tracks,
            slices: self.s,
            instants: self.inst,
            counters: self.counters,
            flows,
            aggregated: self.aggregated,
            origin_epoch_ns: self.origin_epoch_ns,
            span,
            metadata: self.metadata,
            warnings: self.warnings,
            graph_replay: Default::default(),
        }
    }
}

impl CaptureBuilder {
    /// Lanes, depths and parents of every track, the tracks split over two threads (at a track
    /// boundary near the middle slice) for large captures.
    /// Returns the slices' (earliest start, latest end), `(i64::MAX, i64::MIN)` when none.
    fn assign_all_lanes(&mut self) -> (Ps, Ps) {
        let n = self.s.start.len();
        let tracks = &mut self.tracks;
        let Slices {
            start,
            dur,
            lane,
            parent,
            ..
        } = &mut self.s;
        let run = |tracks: &mut [Track],
                   start: &[Ps],
                   dur: &[Ps],
                   lane: &mut [u16],
                   parent: &mut [u32],
                   first: usize| {
            let (mut lo_t, mut hi_t) = (i64::MAX, i64::MIN);
            for t in tracks {
                let (lo, hi) = (t.slices.0 as usize - first, t.slices.1 as usize - first);
                let cols = LaneCols {
                    start: &start[lo..hi],
                    dur: &dur[lo..hi],
                    lane: &mut lane[lo..hi],
                    parent: &mut parent[lo..hi],
                };
                let laid = assign_lanes_cols(cols, t.slices.0);
                t.lanes = laid.lanes;
                t.max_depth = laid.max_depth;
                t.group_bases = laid.group_bases;
                if let Some(&s0) = start.get(lo)
                    && lo < hi
                {
                    lo_t = lo_t.min(s0);
                    let end = start[lo..hi]
                        .iter()
                        .zip(&dur[lo..hi])
                        .map(|(s, d)| s + d)
                        .max()
                        .unwrap_or(s0);
                    hi_t = hi_t.max(end);
                }
            }
            (lo_t, hi_t)
        };
        // First track ending past the middle: tracks before it go to the second thread.
        let k = tracks.partition_point(|t| (t.slices.1 as usize) <= n / 2);
        let cut = tracks.get(k).map_or(n, |t| t.slices.0 as usize);
        if n < PARALLEL_MIN_SLICES || crate::threads::cores() < 2 || k == 0 {
            return run(tracks, start, dur, lane, parent, 0);
        }
        let (ta, tb) = tracks.split_at_mut(k);
        let (la, lb) = lane.split_at_mut(cut);
        let (pa, pb) = parent.split_at_mut(cut);
        let (start, dur) = (&start[..], &dur[..]);
        std::thread::scope(|sc| {
            let h = sc.spawn(|| run(ta, start, dur, la, pa, 0));
            let (lo_b, hi_b) = run(tb, &start[cut..], &dur[cut..], lb, pb, cut);
            let (lo_a, hi_a) = h.join().unwrap_or((i64::MAX, i64::MIN));
            (lo_a.min(lo_b), hi_a.max(hi_b))
        })
    }
}
