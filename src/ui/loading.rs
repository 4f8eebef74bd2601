//! The captures offered and their load states: which one is open, which job is current (by
//! generation, so late results of cancelled jobs are dropped), one capture in memory at a time.

use super::catalog::CaptureRef;
use super::loader::Loaded;
use crate::formats::Progress;
use std::sync::Arc;

/// Load state of one catalog entry.
#[derive(Debug, Clone)]
pub enum EntryState {
    /// Not loaded.
    Idle,
    /// Being loaded.
    Loading(Arc<Progress>),
    /// Ready to draw.
    Ready(Arc<Loaded>),
    /// Could not be loaded (the error shown in the picker).
    Failed(String),
}

/// One capture in the picker.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The capture.
    pub capture: CaptureRef,
    /// Its load state.
    pub state: EntryState,
}

/// A load to start on a background thread.
#[derive(Debug)]
pub struct LoadJob {
    /// Generation of the job.
    pub generation: u64,
    /// Entry index.
    pub entry: usize,
    /// What to load.
    pub capture: CaptureRef,
    /// Shared progress.
    pub progress: Arc<Progress>,
}

/// Every entry, the open one and the newest job's generation. Derefs to the entry slice.
#[derive(Debug, Default)]
pub struct Entries {
    list: Vec<Entry>,
    /// Entry shown in the timeline.
    pub current: Option<usize>,
    /// Generation of the newest load job.
    pub generation: u64,
}

impl std::ops::Deref for Entries {
    type Target = [Entry];
    fn deref(&self) -> &[Entry] {
        &self.list
    }
}

impl Entries {
    /// Idle entries for `captures`.
    pub fn new(captures: Vec<CaptureRef>) -> Entries {
        Entries {
            list: captures
                .into_iter()
                .map(|capture| Entry {
                    capture,
                    state: EntryState::Idle,
                })
                .collect(),
            current: None,
            generation: 0,
        }
    }

    /// The open capture, when loaded.
    pub fn loaded(&self) -> Option<&Arc<Loaded>> {
        match &self.list.get(self.current?)?.state {
            EntryState::Ready(l) => Some(l),
            _ => None,
        }
    }

    /// True while any job runs.
    pub fn any_loading(&self) -> bool {
        self.list
            .iter()
            .any(|e| matches!(e.state, EntryState::Loading(_)))
    }

    /// Makes `i` the open entry: frees the other captures, returns the jobs to cancel and the
    /// load to start (when `i` is idle or failed). `None` when `i` is out of range.
    pub fn open(&mut self, i: usize) -> Option<(Vec<Arc<Progress>>, Option<LoadJob>)> {
        if i >= self.list.len() {
            return None;
        }
        let mut cancel = Vec::new();
        if self.current == Some(i) && !matches!(self.list[i].state, EntryState::Failed(_)) {
            return Some((cancel, None));
        }
        self.current = Some(i);
        for (j, e) in self.list.iter_mut().enumerate() {
            if j == i {
                continue;
            }
            match &e.state {
                EntryState::Loading(p) => {
                    cancel.push(p.clone());
                    e.state = EntryState::Idle;
                }
                EntryState::Ready(_) => e.state = EntryState::Idle,
                _ => {}
            }
        }
        let job = match &self.list[i].state {
            EntryState::Ready(_) | EntryState::Loading(_) => None,
            EntryState::Idle | EntryState::Failed(_) => {
                self.generation += 1;
                let progress = Arc::new(Progress::default());
                progress.bytes_total.store(
                    self.list[i].capture.source.file_bytes,
                    std::sync::atomic::Ordering::Relaxed,
                );
                self.list[i].state = EntryState::Loading(progress.clone());
                Some(LoadJob {
                    generation: self.generation,
                    entry: i,
                    capture: self.list[i].capture.clone(),
                    progress,
                })
            }
        };
        Some((cancel, job))
    }

    /// Cancels the open entry's running load: returns its progress (to signal the thread).
    pub fn cancel_current(&mut self) -> Option<Arc<Progress>> {
        let i = self.current?;
        let EntryState::Loading(p) = &self.list[i].state else {
            return None;
        };
        let p = p.clone();
        self.list[i].state = EntryState::Idle;
        self.generation += 1;
        self.current = None;
        Some(p)
    }

    /// Records a finished job; false when it is stale (a newer job started since) or unknown.
    pub fn finish(&mut self, generation: u64, entry: usize, state: EntryState) -> bool {
        if generation != self.generation {
            return false;
        }
        match self.list.get_mut(entry) {
            Some(e) => {
                e.state = state;
                true
            }
            None => false,
        }
    }
}
