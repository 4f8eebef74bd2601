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
        result: Result<RankSummary, String>,
        max_jobs: usize,
    ) -> Vec<SummaryJob> {
        if matches!(self.by_id.get(&id), Some(SummaryState::Running(_))) {
            self.by_id.insert(
                id,
                match result {
                    Ok(s) => SummaryState::Ready(Arc::new(s)),
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
pub fn compute(job: &SummaryJob) -> Result<RankSummary, String> {
    let opts = StepOptions::default();
    if let Some(l) = &job.loaded {
        return Ok(summarize(&l.cap, &opts));
    }
    let cap = catalog::load(&job.capture, &job.progress).map_err(|e| e.to_string())?;
    Ok(summarize(&cap, &opts))
}

/// Runs `job` on a new thread and sends `wrap(id, result)` through `tx`.
pub fn spawn<M: Send + 'static>(
    job: SummaryJob,
    tx: Sender<M>,
    wrap: fn(CaptureId, Result<RankSummary, String>) -> M,
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
        let next = s.finish(CaptureId(0), Ok(RankSummary::default()), 2);
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
        // A forgotten job's late result is dropped.
        s.finish(CaptureId(2), Ok(RankSummary::default()), 2);
        assert!(s.get(CaptureId(2)).is_none());
    }
}
