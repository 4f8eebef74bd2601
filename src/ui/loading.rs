//! The captures offered and their load states: which one is open, which job is current (by
//! generation, so late results of cancelled jobs are dropped), one capture in memory at a time.

use super::catalog::CaptureRef;
use super::loader::Loaded;
use crate::formats::Progress;
use std::path::Path;
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

/// A catalog entry's stable id: unlike its index it survives entries being added and removed
/// around it, so views refer to captures by it ([`Entries::capture`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CaptureId(pub u32);

/// One capture in the picker.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Stable id of the entry.
    pub id: CaptureId,
    /// The capture.
    pub capture: CaptureRef,
    /// Its load state.
    pub state: EntryState,
    /// The watcher says the file is being written (not offered for loading yet).
    pub writing: bool,
    /// The file was deleted while open (the capture stays shown).
    pub gone: bool,
    /// A partial capture of a big file, drawn while its full load runs.
    pub preview: Option<Arc<Loaded>>,
}

impl Entry {
    /// True when [`Entry::loaded`] is a partial preview.
    pub fn is_preview(&self) -> bool {
        matches!(self.state, EntryState::Loading(_)) && self.preview.is_some()
    }

    /// The capture when loaded (or its partial preview while it loads).
    pub fn loaded(&self) -> Option<&Arc<Loaded>> {
        match &self.state {
            EntryState::Ready(l) => Some(l),
            EntryState::Loading(_) => self.preview.as_ref(),
            _ => None,
        }
    }
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
    /// Entry of the newest job (kept right when entries are added or removed meanwhile).
    job_entry: Option<usize>,
    /// A background reload of the open (still shown) capture.
    reload: Option<Arc<Progress>>,
    /// Id of the next entry added.
    next_id: u32,
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
        let n = captures.len() as u32;
        Entries {
            list: captures
                .into_iter()
                .zip(0..)
                .map(|(capture, id)| Entry {
                    id: CaptureId(id),
                    capture,
                    state: EntryState::Idle,
                    writing: false,
                    gone: false,
                    preview: None,
                })
                .collect(),
            current: None,
            generation: 0,
            job_entry: None,
            reload: None,
            next_id: n,
        }
    }

    /// The open capture, when loaded (or its partial preview while it loads).
    pub fn loaded(&self) -> Option<&Arc<Loaded>> {
        self.list.get(self.current?)?.loaded()
    }

    /// Index of the entry with id `id`.
    pub fn index_of(&self, id: CaptureId) -> Option<usize> {
        self.list.iter().position(|e| e.id == id)
    }

    /// Id of entry `i`.
    pub fn id_of(&self, i: usize) -> Option<CaptureId> {
        self.list.get(i).map(|e| e.id)
    }

    /// The entry with id `id`.
    pub fn entry(&self, id: CaptureId) -> Option<&Entry> {
        self.list.iter().find(|e| e.id == id)
    }

    /// Capture `id` when loaded (or its partial preview while it loads).
    pub fn capture(&self, id: CaptureId) -> Option<&Arc<Loaded>> {
        self.entry(id)?.loaded()
    }

    /// True when what [`Entries::loaded`] returns is a partial preview.
    pub fn is_preview(&self) -> bool {
        self.current
            .and_then(|i| self.list.get(i))
            .is_some_and(Entry::is_preview)
    }

    /// Keeps a preview for the running job of `entry`; false when stale.
    pub fn set_preview(&mut self, generation: u64, entry: usize, preview: Arc<Loaded>) -> bool {
        if generation != self.generation || self.reload.is_some() {
            return false;
        }
        let entry = self.job_entry.unwrap_or(entry);
        match self.list.get_mut(entry) {
            Some(e) if matches!(e.state, EntryState::Loading(_)) => {
                e.preview = Some(preview);
                true
            }
            _ => false,
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
        cancel.extend(self.reload.take());
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
                self.job_entry = Some(i);
                self.reload = None;
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
        self.job_entry = None;
        self.current = None;
        Some(p)
    }

    /// Records a finished job; false when it is stale (a newer job started since) or unknown.
    pub fn finish(&mut self, generation: u64, entry: usize, state: EntryState) -> bool {
        if generation != self.generation {
            return false;
        }
        let entry = self.job_entry.take().unwrap_or(entry);
        self.reload = None;
        match self.list.get_mut(entry) {
            Some(e) => {
                e.state = state;
                e.preview = None;
                true
            }
            None => false,
        }
    }

    /// Index of the entry for the file `path`.
    pub fn position(&self, path: &Path) -> Option<usize> {
        self.list.iter().position(|e| e.capture.source.path == path)
    }

    /// Inserts an idle entry for `capture` at `at` (clamped), keeping the open entry and the
    /// running job pointing at the same captures. Returns its index.
    pub fn insert(&mut self, at: usize, capture: CaptureRef, writing: bool) -> usize {
        let at = at.min(self.list.len());
        let shift = |i: &mut usize| {
            if *i >= at {
                *i += 1;
            }
        };
        self.current.as_mut().map(shift);
        self.job_entry.as_mut().map(shift);
        let id = CaptureId(self.next_id);
        self.next_id += 1;
        self.list.insert(
            at,
            Entry {
                id,
                capture,
                state: EntryState::Idle,
                writing,
                gone: false,
                preview: None,
            },
        );
        at
    }

    /// Removes entry `i` unless it is the open one (that one stays, marked `gone`). Returns
    /// true when removed; a load running for it is returned through `cancel`.
    pub fn remove(&mut self, i: usize, cancel: &mut Vec<Arc<Progress>>) -> bool {
        if i >= self.list.len() {
            return false;
        }
        if self.current == Some(i) {
            self.list[i].gone = true;
            return false;
        }
        if let EntryState::Loading(p) = &self.list[i].state {
            cancel.push(p.clone());
        }
        self.list.remove(i);
        let shift = |j: &mut usize| {
            if *j > i {
                *j -= 1;
            }
        };
        self.current.as_mut().map(shift);
        if self.job_entry == Some(i) {
            self.job_entry = None;
        }
        self.job_entry.as_mut().map(shift);
        true
    }

    /// Entry `i` in place, to update its capture reference and flags.
    pub fn get_entry_mut(&mut self, i: usize) -> Option<&mut Entry> {
        self.list.get_mut(i)
    }

    /// The file of entry `i` changed and is complete again: when it is the open entry, starts
    /// a reload (the loaded capture stays shown until the new one is swapped in; a failed or
    /// running load starts over) and returns the jobs to cancel and the load; otherwise a
    /// failed entry becomes idle so opening it tries again.
    pub fn reload(&mut self, i: usize) -> (Vec<Arc<Progress>>, Option<LoadJob>) {
        let mut cancel = Vec::new();
        let Some(e) = self.list.get_mut(i) else {
            return (cancel, None);
        };
        e.gone = false;
        if self.current != Some(i) {
            if matches!(e.state, EntryState::Failed(_)) {
                e.state = EntryState::Idle;
            }
            return (cancel, None);
        }
        cancel.extend(self.reload.take());
        self.generation += 1;
        let progress = Arc::new(Progress::default());
        progress.bytes_total.store(
            e.capture.source.file_bytes,
            std::sync::atomic::Ordering::Relaxed,
        );
        match &e.state {
            EntryState::Ready(_) => self.reload = Some(progress.clone()),
            EntryState::Loading(p) => {
                cancel.push(p.clone());
                e.state = EntryState::Loading(progress.clone());
            }
            EntryState::Idle | EntryState::Failed(_) => {
                e.state = EntryState::Loading(progress.clone())
            }
        }
        self.job_entry = Some(i);
        let job = LoadJob {
            generation: self.generation,
            entry: i,
            capture: e.capture.clone(),
            progress,
        };
        (cancel, Some(job))
    }

    /// True when `generation` is the running background reload of the shown capture.
    pub fn is_reload(&self, generation: u64) -> bool {
        self.reload.is_some() && generation == self.generation
    }

    /// Drops the running background reload (it failed: the old capture stays).
    pub fn abandon_reload(&mut self) {
        self.reload = None;
        self.job_entry = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SourceInfo;

    fn cref(name: &str) -> CaptureRef {
        CaptureRef {
            source: SourceInfo {
                path: name.into(),
                ..SourceInfo::default()
            },
            format: None,
            modified: None,
            span: None,
        }
    }

    #[test]
    fn capture_ids_survive_entries_moving_around_them() {
        let mut e = Entries::new(vec![cref("a"), cref("b"), cref("c")]);
        let b = e.id_of(1).unwrap();
        let c = e.id_of(2).unwrap();
        let new = e.insert(0, cref("n"), false);
        let n = e.id_of(new).unwrap();
        assert_eq!(e.index_of(b), Some(2));
        assert!(n != b && n != c && Some(n) != e.id_of(1));
        assert!(e.remove(e.index_of(b).unwrap(), &mut Vec::new()));
        assert_eq!(e.index_of(b), None);
        assert_eq!(e.index_of(c), Some(2));
        assert_eq!(
            e.entry(c).map(|x| x.capture.source.path.clone()),
            Some("c".into())
        );
        // Nothing loaded yet: no model to draw.
        assert!(e.capture(c).is_none());
    }
}
