//! What the loader applies once every event is read: sampled stacks, thread metadata, the time
//! origin, trace metadata, and one warning per kind of everything it counted (skipped phases,
//! bad times, missing ids, …).

use super::apply::Loader;
use super::samples::{Frame, stack_slices};
use crate::model::{ArgsRef, Key, ProcessKind, Ps, TrackKind};
use rustc_hash::FxHashMap;

impl Loader<'_> {
    /// Sampled stacks (`samples` + `stackFrames`) → one merged-slices track per sampled
    /// thread (see `samples`).
    pub(super) fn apply_samples(&mut self) {
        let sampled = std::mem::take(&mut self.sampled);
        if sampled.samples.is_empty() {
            return;
        }
        let mut tids: Vec<Key> = Vec::new();
        let mut by_tid: FxHashMap<Key, Vec<(Ps, u32)>> = FxHashMap::default();
        let mut unknown = 0u64;
        let mut stack = Vec::new();
        for s in &sampled.samples {
            let Some(ts) = self.time(s.ts) else { continue };
            sampled.stack(s.sf, &mut stack);
            if stack.is_empty() {
                unknown += 1;
                continue;
            }
            by_tid
                .entry(s.tid)
                .or_insert_with(|| {
                    tids.push(s.tid);
                    Vec::new()
                })
                .push((ts, s.sf));
        }
        for tid in tids {
            let Some(mut rows) = by_tid.remove(&tid) else {
                continue;
            };
            rows.sort_by_key(|r| r.0);
            let stacks: Vec<(Ps, Vec<Frame>)> = rows
                .iter()
                .map(|&(ts, sf)| {
                    let mut v = Vec::new();
                    sampled.stack(sf, &mut v);
                    v.reverse();
                    (ts, v)
                })
                .collect();
            let owners: Vec<u32> = (0..self.b.process_count() as u32)
                .filter(|&p| self.b.find_track(p, tid, TrackKind::Thread).is_some())
                .collect();
            let p = match owners.as_slice() {
                [p] => *p,
                _ => {
                    let key = self.b.intern("sampled stacks");
                    let p = self.b.process(Key::Str(key));
                    let pr = self.b.process_mut(p);
                    pr.name = key;
                    pr.kind = ProcessKind::Host;
                    p
                }
            };
            let tid_text = match tid {
                Key::Int(v) => v.to_string(),
                Key::Str(s) => self.b.strings.get(s).to_string(),
            };
            let key = self.b.intern(&format!("samples:{tid_text}"));
            let t = self.b.track(p, Key::Str(key), TrackKind::Thread);
            let name = self.b.intern(&format!("samples (thread {tid_text})"));
            self.b.track_mut(t).name = name;
            for sl in stack_slices(&stacks) {
                self.b
                    .add_slice(t, sl.start, sl.dur, sl.name, sl.cat, ArgsRef::NONE, 0);
            }
        }
        if unknown > 0 {
            self.b.warn_n(
                "sample_unknown_frame",
                format!(
                    "{unknown} samples whose stack frame (\"sf\") is not in \"stackFrames\" skipped"
                ),
                unknown,
            );
        }
    }

    /// True when elements were read but none has a `ph` (and some have other fields): a JSON
    /// document of something else, not a trace.
    pub fn no_phase_anywhere(&self) -> bool {
        self.with_ph == 0 && self.missing_ph > 0
    }

    /// Reports everything counted, sets origin and metadata; the builder is then ready to finish.
    pub fn finalize(&mut self) {
        let shift_ns = i64::try_from(self.shift_ps.unwrap_or(0) / 1000).unwrap_or(0);
        self.b.origin_epoch_ns = match self.base_time_ns {
            Some(base) => base.checked_add(shift_ns),
            None if shift_ns > 0 => Some(shift_ns),
            None => None,
        };
        if !self.meta.is_empty() {
            self.b.args.begin();
            for &(k, v) in &self.meta {
                self.b.args.push(k, v);
            }
            self.b.metadata = self.b.args.finish();
        }
        self.apply_samples();
        // Processes without a `process_sort_index`: in order of appearance, device processes
        // after the others (Perfetto and the trace viewer put GPU processes after the CPU one).
        let mut given = vec![false; self.b.process_count()];
        for &p in &self.sorted_processes {
            if let Some(g) = given.get_mut(p as usize) {
                *g = true;
            }
        }
        for (p, given) in given.into_iter().enumerate() {
            let pr = self.b.process_mut(p as u32);
            if !given && matches!(pr.kind, ProcessKind::Gpu | ProcessKind::Tpu) {
                pr.sort_index = pr.sort_index.saturating_add(1 << 40);
            }
            // Negative pids are profiler pseudo-processes (Kineto's `pid -1`, CUPTI Overhead),
            // whatever index they got: after the real processes, never first.
            if matches!(pr.key, Key::Int(k) if k < 0) {
                pr.sort_index = (1 << 42) + pr.sort_index.clamp(-(1 << 40), 1 << 40);
            }
        }
        // Thread metadata: names and sort indexes of the thread and the stream of each key (a
        // thread known only from metadata gets a thread track, as before).
        for (pk, tk, name, sort) in std::mem::take(&mut self.thread_meta) {
            let p = self.b.process(pk);
            let mut tracks = [
                self.b.find_track(p, tk, TrackKind::Thread),
                self.b.find_track(p, tk, TrackKind::GpuStream),
            ];
            if tracks.iter().all(Option::is_none) {
                tracks[0] = Some(self.b.track(p, tk, TrackKind::Thread));
            }
            for t in tracks.into_iter().flatten() {
                let tr = self.b.track_mut(t);
                if let Some(n) = name {
                    tr.name = n;
                }
                if let Some(i) = sort {
                    tr.sort_index = i;
                }
            }
        }
        for ph in 0..=255u8 {
            let n = self.skipped[ph as usize];
            if n > 0 {
                let c = if ph.is_ascii_graphic() {
                    ph as char
                } else {
                    '?'
                };
                self.b.warn_n(
                    skipped_kind(ph),
                    format!("skipped {n} {} events (phase {c})", phase_name(ph)),
                    n,
                );
            }
        }
        let counts = [
            (
                "missing_phase",
                self.missing_ph,
                "events without \"ph\" skipped",
            ),
            (
                "bad_timestamp",
                self.bad_time,
                "events with a missing or non-numeric ts/dur skipped",
            ),
            (
                "timestamp_out_of_range",
                self.out_of_range,
                "events whose time does not fit 64-bit picoseconds skipped",
            ),
            (
                "implausible_duration",
                self.long_durs,
                "slices longer than 7 days kept (likely CUPTI overflow)",
            ),
            (
                "missing_id",
                self.missing_id,
                "flow/async events without an id skipped",
            ),
            (
                "unknown_metadata",
                self.unknown_meta,
                "metadata (M) events of an unknown kind ignored",
            ),
            (
                "args_not_object",
                self.args_not_object,
                "\"args\" values that were not objects ignored",
            ),
        ];
        for (kind, n, msg) in counts {
            if n > 0 {
                self.b.warn_n(kind, format!("{n} {msg}"), n);
            }
        }
        if self.system_trace_events {
            self.b.warn(
                "system_trace_events",
                "\"systemTraceEvents\" (ftrace text) ignored".into(),
            );
        }
        if let Some(end) = self.record_window_end
            && self.min_ts != Ps::MAX
            && end.saturating_sub(self.min_ts) > 24 * 3600 * 1_000_000_000_000
        {
            self.b.warn(
                "implausible_record_window_end",
                "\"Record Window End\" more than 24 h after the first event (kept)".into(),
            );
        }
    }
}

/// What a skipped phase is (Trace Event Format, and Perfetto's extensions).
fn phase_name(ph: u8) -> &'static str {
    match ph {
        b'P' => "sample",
        b'N' => "object-created",
        b'O' => "object-snapshot",
        b'D' => "object-destroyed",
        b'v' | b'V' => "memory-dump",
        b'(' | b')' => "context",
        b'c' => "clock-sync",
        b'm' => "mark",
        b'T' => "Perfetto thread-state (no id)",
        _ => "unknown-phase",
    }
}

fn skipped_kind(ph: u8) -> &'static str {
    match ph {
        b'T' => "skipped_phase_T",
        b'P' => "skipped_phase_P",
        b'N' => "skipped_phase_N",
        b'O' => "skipped_phase_O",
        b'D' => "skipped_phase_D",
        b'v' => "skipped_phase_v",
        b'V' => "skipped_phase_V",
        b'(' => "skipped_phase_(",
        b')' => "skipped_phase_)",
        b'c' => "skipped_phase_c",
        b'm' => "skipped_phase_m",
        _ => "skipped_phase_other",
    }
}
