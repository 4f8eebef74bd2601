//! Per-rank step summaries for the run overview (issue 23): one small
//! [`RankSummary`](crate::analysis::ranks::RankSummary) per capture, computed on a background
//! thread — from the loaded model when the capture is in memory, else by loading the file and
//! dropping the model right after — and kept for the session (a few KB each), while the models
//! themselves stay under the capture set's budget. At most one job per core runs at once; the
//! rest wait in order.

use super::catalog::{self, CaptureRef};
use super::loader::Loaded;
use super::loading::CaptureId;
use crate::analysis::ranks::{RankSummary, summarize};
use crate::analysis::steps::StepOptions;
use crate::formats::Progress;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::mpsc::Sender;

/// One track of a rank kept for the aligned multi-rank timeline (one of its busiest device
/// tracks, [`RankTracks`]), as disjoint busy intervals in model time (an interval overlapping
/// the previous one is merged into it) with the category palette slot of each and prefix sums
/// of busy time — 24 bytes per interval.
#[derive(Debug, Clone, Default)]
pub struct StreamTrack {
    /// Track name (`stream 7`, `Stream #20(...)`), with its process title.
    pub name: String,
    /// Interval starts, ps, sorted.
    pub start: Vec<crate::model::Ps>,
    /// Interval ends, ps.
    pub end: Vec<crate::model::Ps>,
    /// Palette slot of each interval (its first slice's category).
    pub slot: Vec<u8>,
    /// `busy_before[i]` = Σ (end − start) of intervals `..i` (one more entry than intervals).
    pub busy_before: Vec<crate::model::Ps>,
}

/// How many of a rank's busiest device tracks are kept for the aligned timeline.
pub const KEPT_TRACKS: usize = 3;

/// The tracks of one rank kept for the aligned timeline: its [`KEPT_TRACKS`] busiest device
/// tracks (GPU streams / XPlane device lines; without a device, its busiest tracks), busiest
/// first, and how many candidate tracks it had.
#[derive(Debug, Clone, Default)]
pub struct RankTracks {
    /// The kept tracks, busiest first.
    pub tracks: Vec<StreamTrack>,
    /// Candidate tracks of the rank (device tracks, else slice tracks) with any busy time.
    pub candidates: usize,
}

impl RankTracks {
    /// The busiest device tracks of `c` (else its busiest slice tracks).
    pub fn of(c: &crate::model::Capture) -> RankTracks {
        use crate::model::{NO_SLICE, ProcessKind, TrackKind};
        let s = &c.slices;
        let busy = |t: usize| -> crate::model::Ps {
            let (a, b) = c.tracks[t].slices;
            (a as usize..b as usize)
                .filter(|&i| s.parent[i] == NO_SLICE)
                .map(|i| s.dur[i])
                .sum()
        };
        let device = |t: usize| {
            let tr = &c.tracks[t];
            tr.kind == TrackKind::GpuStream
                || matches!(
                    c.processes[tr.process as usize].kind,
                    ProcessKind::Gpu | ProcessKind::Tpu
                ) && tr.kind != TrackKind::Counter
        };
        let ranked = |dev: bool| {
            let mut v: Vec<(crate::model::Ps, usize)> = (0..c.tracks.len())
                .filter(|&t| c.tracks[t].kind != TrackKind::Counter && device(t) == dev)
                .map(|t| (busy(t), t))
                .filter(|b| b.0 > 0)
                .collect();
            v.sort_by_key(|&(b, t)| (std::cmp::Reverse(b), t));
            v
        };
        let mut v = ranked(true);
        if v.is_empty() {
            v = ranked(false);
        }
        RankTracks {
            candidates: v.len(),
            tracks: v
                .iter()
                .take(KEPT_TRACKS)
                .map(|&(_, t)| StreamTrack::of_track(c, t))
                .collect(),
        }
    }

    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.tracks.iter().map(StreamTrack::heap_bytes).sum()
    }
}

impl StreamTrack {
    /// Track `t` of `c` as merged busy intervals of its top-level slices.
    pub fn of_track(c: &crate::model::Capture, t: usize) -> StreamTrack {
        use crate::model::NO_SLICE;
        let s = &c.slices;
        let tr = &c.tracks[t];
        let mut out = StreamTrack {
            name: format!(
                "{} · {}",
                c.track_name(t as u32),
                c.process_title(tr.process)
            ),
            busy_before: vec![0],
            ..StreamTrack::default()
        };
        for i in tr.slices.0 as usize..tr.slices.1 as usize {
            if s.parent[i] != NO_SLICE {
                continue;
            }
            let (a, b) = (s.start[i], s.end(i));
            match out.end.last_mut() {
                Some(e) if a < *e => *e = (*e).max(b),
                _ => {
                    out.start.push(a);
                    out.end.push(b);
                    out.slot.push(super::colors::category_slot(s.kind(i)) as u8);
                }
            }
        }
        let mut acc = 0;
        for k in 0..out.start.len() {
            acc += out.end[k] - out.start[k];
            out.busy_before.push(acc);
        }
        out
    }

    /// Busy time within `[a, b)` and the slot of the longest interval part there.
    pub fn busy(&self, a: crate::model::Ps, b: crate::model::Ps) -> (crate::model::Ps, Option<u8>) {
        let i = self.end.partition_point(|&e| e <= a);
        let j = self.start.partition_point(|&s| s < b);
        if i >= j {
            return (0, None);
        }
        let full = self.busy_before[j] - self.busy_before[i];
        let head = (a - self.start[i]).max(0);
        let tail = (self.end[j - 1] - b).max(0);
        // The longest part: the clipped ends or (when many) the first full one.
        let mut best = (0, None);
        for k in [i, j - 1, (i + j) / 2] {
            let len = self.end[k].min(b) - self.start[k].max(a);
            if len > best.0 {
                best = (len, self.slot.get(k).copied());
            }
        }
        (full - head - tail, best.1)
    }

    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.start.capacity() * 8
            + self.end.capacity() * 8
            + self.slot.capacity()
            + self.busy_before.capacity() * 8
    }
}

/// What a summary job yields: the rank's step summary and its busiest device tracks.
pub type SummaryResult = Result<(RankSummary, RankTracks), String>;

/// Where one capture's summary is.
#[derive(Debug, Clone)]
pub enum SummaryState {
    /// Waiting for a free core.
    Queued,
    /// Being computed.
    Running(Arc<Progress>),
    /// Done.
    Ready(Arc<RankSummary>),
    /// The capture could not be loaded.
    Failed(String),
}

/// A summary to compute: from `loaded` when given, else by loading `capture`.
#[derive(Debug)]
pub struct SummaryJob {
    /// The capture's id.
    pub id: CaptureId,
    /// What to load.
    pub capture: CaptureRef,
    /// The model, when in memory.
    pub loaded: Option<Arc<Loaded>>,
    /// Progress and cancel flag.
    pub progress: Arc<Progress>,
}

/// The summaries known, queued and running.
#[derive(Debug, Default)]
pub struct Summaries {
    by_id: BTreeMap<CaptureId, SummaryState>,
    /// The busiest device track of each summarized capture (aligned timeline).
    tracks: BTreeMap<CaptureId, Arc<RankTracks>>,
    /// Jobs waiting, in request order (the model when it was in memory at request time).
    queue: Vec<(CaptureId, CaptureRef, Option<Arc<Loaded>>)>,
    /// Bumped whenever a summary lands (views rebuild what they derived from them).
    pub version: u64,
}

impl Summaries {
    /// State of capture `id`'s summary.
    pub fn get(&self, id: CaptureId) -> Option<&SummaryState> {
        self.by_id.get(&id)
    }

    /// The busiest device tracks of `id` when its summary is ready.
    pub fn track(&self, id: CaptureId) -> Option<&Arc<RankTracks>> {
        self.tracks.get(&id)
    }

    /// The summary of `id` when ready.
    pub fn ready(&self, id: CaptureId) -> Option<&Arc<RankSummary>> {
        match self.by_id.get(&id)? {
            SummaryState::Ready(s) => Some(s),
            _ => None,
        }
    }

    fn running(&self) -> usize {
        self.by_id
            .values()
            .filter(|s| matches!(s, SummaryState::Running(_)))
            .count()
    }

    /// Asks for the summaries of `wanted` (those not known yet are queued) and returns the jobs
    /// to start now, at most `max_jobs` running at once.
    pub fn request(
        &mut self,
        wanted: Vec<(CaptureId, CaptureRef, Option<Arc<Loaded>>)>,
        max_jobs: usize,
    ) -> Vec<SummaryJob> {
        for (id, c, l) in wanted {
            if let std::collections::btree_map::Entry::Vacant(v) = self.by_id.entry(id) {
                v.insert(SummaryState::Queued);
                self.queue.push((id, c, l));
            }
        }
        self.start(max_jobs)
    }

    fn start(&mut self, max_jobs: usize) -> Vec<SummaryJob> {
        let mut out = Vec::new();
        while self.running() < max_jobs.max(1) && !self.queue.is_empty() {
            let (id, capture, loaded) = self.queue.remove(0);
            let progress = Arc::new(Progress::default());
            self.by_id
                .insert(id, SummaryState::Running(progress.clone()));
            out.push(SummaryJob {
                id,
                capture,
                loaded,
                progress,
            });
        }
        out
    }

    /// Records a finished job and returns the next jobs to start.
    pub fn finish(
        &mut self,
        id: CaptureId,
        result: SummaryResult,
        max_jobs: usize,
    ) -> Vec<SummaryJob> {
        if matches!(self.by_id.get(&id), Some(SummaryState::Running(_))) {
            self.by_id.insert(
                id,
                match result {
                    Ok((s, t)) => {
                        self.tracks.insert(id, Arc::new(t));
                        SummaryState::Ready(Arc::new(s))
                    }
                    Err(e) => SummaryState::Failed(e),
                },
            );
            self.version += 1;
        }
        self.start(max_jobs)
    }

    /// Forgets capture `id`'s summary (its file changed); a running job's result is dropped.
    pub fn forget(&mut self, id: CaptureId) -> Option<Arc<Progress>> {
        self.queue.retain(|q| q.0 != id);
        self.tracks.remove(&id);
        if self.by_id.contains_key(&id) {
            self.version += 1;
        }
        match self.by_id.remove(&id) {
            Some(SummaryState::Running(p)) => Some(p),
            _ => None,
        }
    }

    /// (done, total) among `ids` (failed ones count as done).
    pub fn progress(&self, ids: &[CaptureId]) -> (usize, usize) {
        let done = ids
            .iter()
            .filter(|id| {
                matches!(
                    self.by_id.get(id),
                    Some(SummaryState::Ready(_) | SummaryState::Failed(_))
                )
            })
            .count();
        (done, ids.len())
    }
}

/// Computes one summary on the calling thread (what the background job runs).
pub fn compute(job: &SummaryJob) -> SummaryResult {
    let opts = StepOptions::default();
    if let Some(l) = &job.loaded {
        return Ok((summarize(&l.cap, &opts), RankTracks::of(&l.cap)));
    }
    let cap = catalog::load(&job.capture, &job.progress).map_err(|e| e.to_string())?;
    Ok((summarize(&cap, &opts), RankTracks::of(&cap)))
}

/// Runs `job` on a new thread and sends `wrap(id, result)` through `tx`.
pub fn spawn<M: Send + 'static>(
    job: SummaryJob,
    tx: Sender<M>,
    wrap: fn(CaptureId, SummaryResult) -> M,
) {
    let r = std::thread::Builder::new()
        .name("tracetui-summary".into())
        .spawn(move || {
            let result = compute(&job);
            let _ = tx.send(wrap(job.id, result));
        });
    if let Err(e) = r {
        eprintln!("tracetui: cannot start summary thread: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SourceInfo;

    fn cref(n: &str) -> CaptureRef {
        CaptureRef {
            source: SourceInfo {
                path: n.into(),
                ..SourceInfo::default()
            },
            format: None,
            modified: None,
            span: None,
        }
    }

    #[test]
    fn stream_track_busy_matches_brute_force() {
        let iv = [(10, 20), (20, 35), (50, 51), (70, 100)];
        let mut t = StreamTrack {
            busy_before: vec![0],
            ..StreamTrack::default()
        };
        let mut acc = 0;
        for (k, &(a, b)) in iv.iter().enumerate() {
            t.start.push(a);
            t.end.push(b);
            t.slot.push(k as u8);
            acc += b - a;
            t.busy_before.push(acc);
        }
        for a in 0..110 {
            for b in a + 1..111 {
                let brute: i64 = iv.iter().map(|&(s, e)| (e.min(b) - s.max(a)).max(0)).sum();
                let (busy, slot) = t.busy(a, b);
                assert_eq!(busy, brute, "[{a}, {b})");
                assert_eq!(slot.is_some(), brute > 0, "[{a}, {b})");
            }
        }
    }

    #[test]
    fn bounded_jobs_in_order_kept_and_forgotten() {
        let mut s = Summaries::default();
        let want: Vec<_> = (0..3).map(|i| (CaptureId(i), cref("x"), None)).collect();
        let jobs = s.request(want.clone(), 2);
        assert_eq!(
            jobs.iter().map(|j| j.id).collect::<Vec<_>>(),
            [CaptureId(0), CaptureId(1)]
        );
        // Asking again starts nothing new.
        assert!(s.request(want, 2).is_empty());
        let next = s.finish(
            CaptureId(0),
            Ok((RankSummary::default(), RankTracks::default())),
            2,
        );
        assert_eq!(next.len(), 1);
        assert_eq!(next[0].id, CaptureId(2));
        s.finish(CaptureId(1), Err("bad".into()), 2);
        assert_eq!(
            s.progress(&[CaptureId(0), CaptureId(1), CaptureId(2)]),
            (2, 3)
        );
        assert!(s.ready(CaptureId(0)).is_some() && s.ready(CaptureId(1)).is_none());
        assert_eq!(s.version, 2);
        assert!(s.forget(CaptureId(2)).is_some());
        assert_eq!(s.version, 3);
        // A forgotten job's late result is dropped.
        s.finish(
            CaptureId(2),
            Ok((RankSummary::default(), RankTracks::default())),
            2,
        );
        assert!(s.get(CaptureId(2)).is_none());
    }
}
