//! The row model of the timeline body: which process headers, lanes and counters are drawn, in
//! which order, with the row cursor, scroll and folded processes.

use super::loader::Loaded;
use crate::model::{ProcessKind, TrackKind};
use rustc_hash::FxHashSet;

/// One drawn row of the timeline body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    /// A process header (fold marker, name).
    Process(u32),
    /// One lane of a slice track.
    Lane {
        /// Track id.
        track: u32,
        /// Lane within the track.
        lane: u16,
    },
    /// A counter track (sparkline).
    Counter(u32),
    /// A derived counter (`Loaded::derived[i]`: GPU queue depth with idle overlay).
    Derived(u32),
    /// The capture's training steps (`Loaded::steps`), first row when steps were found.
    Steps,
    /// The CUDA/HIP graph launches of a GPU stream (`Loaded::graphs`), above its lanes.
    Graphs(u32),
    /// A memory series (`Loaded::memory`): allocated or reserved bytes of memory track `track`.
    Memory {
        /// Memory track (device / allocator).
        track: u32,
        /// The reserved series (else allocated).
        reserved: bool,
    },
}

impl Row {
    /// Track of the row, if any.
    pub fn track(self) -> Option<u32> {
        match self {
            Row::Process(_)
            | Row::Derived(_)
            | Row::Steps
            | Row::Graphs(_)
            | Row::Memory { .. } => None,
            Row::Lane { track, .. } | Row::Counter(track) => Some(track),
        }
    }
}

/// Rows with their cursor, scroll position and folded processes.
#[derive(Debug, Default, Clone)]
pub struct Rows {
    /// Rows drawn, top to bottom.
    pub list: Vec<Row>,
    /// Row cursor.
    pub cursor: usize,
    /// First row shown.
    pub scroll: usize,
    /// Collapsed processes.
    pub collapsed: FxHashSet<u32>,
}

impl Rows {
    /// Rebuilds the list from `l` and the collapsed set, keeping the cursor in range.
    pub fn rebuild(&mut self, l: Option<&Loaded>, height: usize) {
        match l {
            Some(l) => self.list = build_rows(l, &self.collapsed),
            None => self.list.clear(),
        }
        self.cursor = self.cursor.min(self.list.len().saturating_sub(1));
        self.clamp_scroll(height);
    }

    /// Scrolls so the cursor row is inside a body of `height` rows.
    pub fn clamp_scroll(&mut self, height: usize) {
        let h = height.max(1);
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + h {
            self.scroll = self.cursor + 1 - h;
        }
        let max = self.list.len().saturating_sub(h);
        self.scroll = self.scroll.min(max.max(self.cursor.saturating_sub(h - 1)));
    }

    /// (track, lane) of the cursor row, when it is a lane.
    pub fn cursor_lane(&self) -> Option<(u32, u16)> {
        match self.list.get(self.cursor)? {
            Row::Lane { track, lane } => Some((*track, *lane)),
            _ => None,
        }
    }

    /// The first lane row whose track has slices (where the cursor starts), else the first row.
    pub fn first_busy_lane(&self, l: &Loaded) -> usize {
        self.list
            .iter()
            .position(|r| match *r {
                Row::Lane { track, lane } => {
                    l.index.lane_count(track) > lane as usize
                        && l.cap
                            .tracks
                            .get(track as usize)
                            .is_some_and(|t| t.slices.1 > t.slices.0)
                }
                _ => false,
            })
            .unwrap_or(0)
    }

    /// Row index of (track, lane).
    pub fn position_of_lane(&self, track: u32, lane: u16) -> Option<usize> {
        self.list.iter().position(
            |r| matches!(*r, Row::Lane { track: t, lane: ln } if t == track && ln == lane),
        )
    }
}

/// The stream id of a GPU stream track: the key of a Kineto stream, or `N` of an XPlane line
/// named `Stream #N(...)` / `stream N`.
pub fn stream_id(cap: &crate::model::Capture, t: u32) -> Option<i64> {
    let tr = cap.tracks.get(t as usize)?;
    if tr.kind == TrackKind::GpuStream
        && let crate::model::Key::Int(id) = tr.key
    {
        return Some(id);
    }
    let name = cap.strings.get(tr.name);
    let rest = name
        .strip_prefix("Stream #")
        .or_else(|| name.strip_prefix("stream "))?;
    let digits: &str = &rest[..rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len())];
    digits.parse().ok()
}

/// Rows of a capture: the `Steps` row when the capture has steps, then visible processes by
/// (instant-only last, device activity first — every format —, sort index, name), each followed
/// by its tracks (sort index, then GPU streams by id, then counters) unless collapsed; one row
/// per lane, one per counter; then the memory rows (allocated, reserved) of each device /
/// allocator.
pub fn build_rows(l: &Loaded, collapsed: &FxHashSet<u32>) -> Vec<Row> {
    let cap = &l.cap;
    let mut procs: Vec<u32> = (0..cap.processes.len() as u32)
        .filter(|&p| !cap.processes[p as usize].hidden)
        .collect();
    let mut by_proc: Vec<Vec<u32>> = vec![Vec::new(); cap.processes.len()];
    // Processes with slices or counters; the others hold only instant marks.
    let mut substantial = vec![false; cap.processes.len()];
    // Device processes (GPU, TPU, other accelerators) with slices: what the user came for.
    let mut device_active = vec![false; cap.processes.len()];
    for (t, tr) in cap.tracks.iter().enumerate() {
        if let Some(v) = by_proc.get_mut(tr.process as usize) {
            v.push(t as u32);
        }
        if (tr.slices.1 > tr.slices.0 || tr.counter.is_some())
            && let Some(s) = substantial.get_mut(tr.process as usize)
        {
            *s = true;
        }
        if tr.slices.1 > tr.slices.0
            && let Some(pr) = cap.processes.get(tr.process as usize)
            && matches!(
                pr.kind,
                ProcessKind::Gpu | ProcessKind::Tpu | ProcessKind::Device
            )
            && let Some(d) = device_active.get_mut(tr.process as usize)
        {
            *d = true;
        }
    }
    // Processes with device activity lead (as XProf orders XPlane captures), so the first
    // screen of a GPU capture shows its streams: a PyTorch capture's CPU threads (many lanes
    // deep) and TensorFlow's thread pools would otherwise push them below the fold. Then by
    // the file's `process_sort_index` (Perfetto's order; Kineto: CPU, then GPU 0, 1, …).
    // Instant-only processes (Kineto's "Traces" markers) go last; then by name.
    procs.sort_by_cached_key(|&p| {
        (
            !substantial[p as usize],
            !device_active[p as usize],
            cap.processes[p as usize].sort_index,
            cap.process_name(p),
            p,
        )
    });
    let mut rows = Vec::new();
    if l.steps.source != crate::analysis::steps::StepSource::Whole {
        rows.push(Row::Steps);
    }
    for p in procs {
        if by_proc[p as usize].is_empty() {
            // Metadata-only processes have nothing to draw.
            continue;
        }
        rows.push(Row::Process(p));
        if collapsed.contains(&p) {
            continue;
        }
        for (i, d) in l.derived.iter().enumerate() {
            if d.process == p {
                rows.push(Row::Derived(i as u32));
            }
        }
        let mut ts = std::mem::take(&mut by_proc[p as usize]);
        // Other tracks by sort index, then GPU streams by stream id, then counters.
        ts.sort_by_cached_key(|&t| {
            let tr = &cap.tracks[t as usize];
            let order = match stream_id(cap, t) {
                Some(id) => (1, id),
                None => (0, tr.sort_index),
            };
            (tr.kind == TrackKind::Counter, order, t)
        });
        for t in ts {
            let tr = &cap.tracks[t as usize];
            if tr.kind == TrackKind::Counter {
                rows.push(Row::Counter(t));
                continue;
            }
            if !l.graphs.of_track(t).is_empty() {
                rows.push(Row::Graphs(t));
            }
            let lanes = l.index.lane_count(t).max(tr.lanes as usize).max(1);
            for lane in 0..lanes.min(u16::MAX as usize) {
                rows.push(Row::Lane {
                    track: t,
                    lane: lane as u16,
                });
            }
        }
    }
    if let Some(m) = l.memory() {
        for (i, t) in m.model.tracks.iter().enumerate() {
            let track = i as u32;
            rows.push(Row::Memory {
                track,
                reserved: false,
            });
            // CPU memory in Kineto has `Total Reserved` 0 throughout: no row for it.
            let reserved = m.tracks.get(i).and_then(|v| v.peak_reserved);
            if t.has_reserved && reserved.is_some_and(|p| p.1 > 0) {
                rows.push(Row::Memory {
                    track,
                    reserved: true,
                });
            }
        }
    }
    rows
}

impl std::ops::Deref for Rows {
    type Target = [Row];
    fn deref(&self) -> &[Row] {
        &self.list
    }
}
