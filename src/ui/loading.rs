//! The captures offered and their load states — the capture set: any number of captures stay
//! loaded (keyed by [`CaptureId`]) within a memory budget, least recently used dropped first,
//! the shown one and those the views name pinned; each running job has its own generation, so
//! late results of cancelled jobs are dropped, and at most one job per core runs at once.

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
    /// Generation of the job loading it (0: none).
    job: u64,
    /// When it was last opened or loaded (the capture set's clock), for least-recent-use.
    pub last_used: u64,
    /// Heap bytes of the loaded capture (0 when not loaded).
    pub bytes: u64,
    /// Times its model was loaded (a reopen of a loaded capture does not count).
    pub loads: u32,
    /// When the capture was taken (wall-clock epoch ns), from the trace itself
    /// ([`crate::discover::taken`]): the picker's time column and order.
    pub taken: Option<i64>,
    /// The rank of a distributed run's capture, when the file's head says.
    pub rank: Option<i64>,
    /// The zero of the times shown for this file (ps, the model's clock): the earliest event of
    /// the first version loaded, kept across reloads of the same file (moved earlier only when
    /// a new version has events before it, so no time is ever negative).
    pub zero: Option<crate::model::Ps>,
}

impl Entry {
    /// `run / host`, sanitized for the terminal (notices name entries so).
    pub fn label(&self) -> String {
        let s = &self.capture.source;
        super::text::sanitize(&format!("{} / {}", s.run, s.host)).into_owned()
    }

    /// Notes the zero of a loaded version (see [`Entry::zero`]).
    fn keep_zero(&mut self, l: &Loaded) {
        let z = l.cap.time_zero();
        self.zero = Some(self.zero.map_or(z, |k| k.min(z)));
    }

    /// When the capture was taken (epoch ns), else the file's modification time; `None` when
    /// neither is known.
    pub fn when(&self) -> Option<i64> {
        self.taken.or_else(|| {
            let d = self
                .capture
                .modified?
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?;
            i64::try_from(d.as_nanos()).ok()
        })
    }

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

    /// Reads when the capture was taken and its rank from the file's head (again after the
    /// file was written).
    pub fn probe(&mut self) {
        (self.taken, self.rank) = match self.capture.format {
            Some(f) => (
                crate::discover::taken::time_of(&self.capture.source.path, f),
                crate::discover::taken::rank_of(&self.capture.source.path, f),
            ),
            None => (None, None),
        };
    }

    fn idle(id: CaptureId, capture: CaptureRef, writing: bool) -> Entry {
        let mut e = Entry {
            taken: None,
            rank: None,
            zero: None,
            id,
            capture,
            state: EntryState::Idle,
            writing,
            gone: false,
            preview: None,
            job: 0,
            last_used: 0,
            bytes: 0,
            loads: 0,
        };
        e.probe();
        e
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

/// Every entry, the open one, the newest job's generation and the memory budget. Derefs to
/// the entry slice.
#[derive(Debug)]
pub struct Entries {
    list: Vec<Entry>,
    /// Entry shown in the timeline.
    pub current: Option<usize>,
    /// Generation of the newest load job.
    pub generation: u64,
    /// A background reload of the open (still shown) capture: its generation and progress.
    reload: Option<(u64, Arc<Progress>)>,
    /// Id of the next entry added.
    next_id: u32,
    /// Bytes of loaded captures kept before the least recently used is dropped.
    pub budget: u64,
    /// Most load jobs running at once (one per core).
    pub max_jobs: usize,
    /// The capture set's clock (bumped on every open and load).
    clock: u64,
    /// Captures the views draw besides the shown one (never dropped for the budget).
    pinned: Vec<CaptureId>,
}

impl Default for Entries {
    fn default() -> Entries {
        Entries::new(Vec::new())
    }
}

impl std::ops::Deref for Entries {
    type Target = [Entry];
    fn deref(&self) -> &[Entry] {
        &self.list
    }
}

impl Entries {
    /// Idle entries for `captures` in the picker's order ([`Entries::reorder`]).
    pub fn new(captures: Vec<CaptureRef>) -> Entries {
        let n = captures.len() as u32;
        let list: Vec<Entry> = captures
            .into_iter()
            .zip(0..)
            .map(|(capture, id)| Entry::idle(CaptureId(id), capture, false))
            .collect();
        let mut e = Entries {
            list,
            current: None,
            generation: 0,
            reload: None,
            next_id: n,
            budget: u64::MAX,
            max_jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            clock: 0,
            pinned: Vec::new(),
        };
        e.reorder();
        e
    }

    /// Puts the entries in the picker's order: runs by when their newest trace was taken
    /// (newest first; the file time when the trace does not say; ties in their order; runs of
    /// memory profiles only last), each
    /// run's captures together — its traces before its memory profiles (allocator snapshots,
    /// pprof), hosts by name with numbers in numeric order (`worker2` before `worker10`, so the
    /// ranks of a job come in rank order), then by rank, a host's captures newest first. Keeps
    /// [`Entries::current`] on its entry; returns each entry's new index by its old one.
    pub fn reorder(&mut self) -> Vec<usize> {
        // A run's age is its newest trace's: memory profiles beside (or apart from) the traces
        // do not make a run newer, and runs of memory profiles only come after the others.
        let is_memory = |e: &Entry| e.capture.format == Some(crate::model::Format::Snapshot);
        let mut newest: rustc_hash::FxHashMap<&str, (bool, i64)> = Default::default();
        // Where each run first appears, so runs the same age keep their order.
        let mut first: rustc_hash::FxHashMap<&str, usize> = Default::default();
        for (i, e) in self.list.iter().enumerate() {
            let t = (!is_memory(e), e.when().unwrap_or(i64::MIN));
            let run = e.capture.source.run.as_str();
            let slot = newest.entry(run).or_insert(t);
            *slot = (*slot).max(t);
            first.entry(run).or_insert(i);
        }
        type Key = (
            std::cmp::Reverse<(bool, i64)>,
            usize,
            bool,
            Vec<(String, Option<u64>)>,
            (bool, Option<i64>),
            std::cmp::Reverse<i64>,
            usize,
        );
        let keys: Vec<Key> = self
            .list
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let src = &e.capture.source;
                let run = src.run.as_str();
                (
                    std::cmp::Reverse(newest.get(run).copied().unwrap_or((false, i64::MIN))),
                    first.get(run).copied().unwrap_or(0),
                    is_memory(e),
                    natural_key(&src.host),
                    // Ranked first (`None` would sort before every rank).
                    (e.rank.is_none(), e.rank),
                    std::cmp::Reverse(e.when().unwrap_or(i64::MIN)),
                    i,
                )
            })
            .collect();
        let mut order: Vec<usize> = (0..self.list.len()).collect();
        order.sort_by(|&a, &b| keys[a].cmp(&keys[b]));
        let mut new_index = vec![0; order.len()];
        for (to, &from) in order.iter().enumerate() {
            new_index[from] = to;
        }
        let mut slots: Vec<Option<Entry>> = std::mem::take(&mut self.list)
            .into_iter()
            .map(Some)
            .collect();
        self.list = order.iter().filter_map(|&i| slots[i].take()).collect();
        if let Some(c) = self.current.as_mut() {
            *c = new_index.get(*c).copied().unwrap_or(*c);
        }
        new_index
    }

    /// Index of the entry whose running job is `generation` (`hint` first: the entry index
    /// the job was started for, which entries added or removed meanwhile may have shifted).
    fn job_index(&self, generation: u64, hint: usize) -> Option<usize> {
        if generation == 0 {
            return None;
        }
        if self.list.get(hint).is_some_and(|e| e.job == generation) {
            return Some(hint);
        }
        self.list.iter().position(|e| e.job == generation)
    }

    /// Bytes held by the loaded captures.
    pub fn loaded_bytes(&self) -> u64 {
        self.list.iter().map(|e| e.bytes).sum()
    }

    /// Number of loaded captures.
    pub fn loaded_count(&self) -> usize {
        self.list
            .iter()
            .filter(|e| matches!(e.state, EntryState::Ready(_)))
            .count()
    }

    /// Measures the loaded captures again (their derived rows arrive after the load).
    pub fn remeasure(&mut self) {
        for e in &mut self.list {
            if let EntryState::Ready(l) = &e.state {
                e.bytes = l.heap_bytes() as u64;
            }
        }
    }

    /// Sets the captures the views draw besides the shown one: they are never dropped.
    pub fn set_pinned(&mut self, ids: Vec<CaptureId>) {
        self.pinned = ids;
    }

    fn is_pinned(&self, i: usize) -> bool {
        self.current == Some(i) || self.pinned.contains(&self.list[i].id)
    }

    /// Drops least recently used loaded captures (not pinned) while the loaded ones hold more
    /// than the budget. Returns the ids dropped; they reload when opened again.
    pub fn enforce_budget(&mut self) -> Vec<CaptureId> {
        let mut dropped = Vec::new();
        while self.loaded_bytes() > self.budget {
            let victim = (0..self.list.len())
                .filter(|&i| matches!(self.list[i].state, EntryState::Ready(_)))
                .filter(|&i| !self.is_pinned(i))
                .min_by_key(|&i| self.list[i].last_used);
            let Some(i) = victim else { break };
            let e = &mut self.list[i];
            e.state = EntryState::Idle;
            e.bytes = 0;
            dropped.push(e.id);
        }
        dropped
    }

    fn touch(&mut self, i: usize) {
        self.clock += 1;
        if let Some(e) = self.list.get_mut(i) {
            e.last_used = self.clock;
        }
    }

    /// Starts a job for entry `i` (state `Loading`): its generation and progress.
    fn start_job(&mut self, i: usize) -> LoadJob {
        self.generation += 1;
        let progress = Arc::new(Progress::default());
        let e = &mut self.list[i];
        progress.bytes_total.store(
            e.capture.source.file_bytes,
            std::sync::atomic::Ordering::Relaxed,
        );
        e.job = self.generation;
        LoadJob {
            generation: self.generation,
            entry: i,
            capture: e.capture.clone(),
            progress,
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
        if self.is_reload(generation) {
            return false;
        }
        let Some(entry) = self.job_index(generation, entry) else {
            return false;
        };
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

    /// Makes `i` the open entry, keeping the other loaded captures (the budget drops the least
    /// recently used when a load lands). Returns the jobs to cancel (the least recently used
    /// running jobs beyond one per core) and the load to start (when `i` is idle or failed).
    /// `None` when `i` is out of range.
    pub fn open(&mut self, i: usize) -> Option<(Vec<Arc<Progress>>, Option<LoadJob>)> {
        if i >= self.list.len() {
            return None;
        }
        let mut cancel = Vec::new();
        self.touch(i);
        if self.current == Some(i) && !matches!(self.list[i].state, EntryState::Failed(_)) {
            return Some((cancel, None));
        }
        self.current = Some(i);
        if let Some((_, p)) = self.reload.take() {
            // The reload was of the capture shown until now.
            cancel.push(p);
        }
        let job = match &self.list[i].state {
            EntryState::Ready(_) | EntryState::Loading(_) => None,
            EntryState::Idle | EntryState::Failed(_) => {
                // One job per core: cancel the least recently opened running ones.
                let limit = self.max_jobs.max(1) - 1;
                loop {
                    let running: Vec<usize> = (0..self.list.len())
                        .filter(|&j| j != i && matches!(self.list[j].state, EntryState::Loading(_)))
                        .collect();
                    if running.len() <= limit {
                        break;
                    }
                    let Some(&j) = running.iter().min_by_key(|&&j| self.list[j].last_used) else {
                        break;
                    };
                    if let EntryState::Loading(p) = &self.list[j].state {
                        cancel.push(p.clone());
                    }
                    let e = &mut self.list[j];
                    e.state = EntryState::Idle;
                    e.preview = None;
                    e.job = 0;
                }
                let job = self.start_job(i);
                self.list[i].state = EntryState::Loading(job.progress.clone());
                Some(job)
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
        let e = &mut self.list[i];
        e.state = EntryState::Idle;
        e.preview = None;
        e.job = 0;
        self.current = None;
        Some(p)
    }

    /// Records a finished job; false when it is stale (cancelled, or a newer job for its entry
    /// started since) or unknown. A loaded capture counts against the budget from now on: call
    /// [`Entries::enforce_budget`] after.
    pub fn finish(&mut self, generation: u64, entry: usize, state: EntryState) -> bool {
        let Some(i) = self.job_index(generation, entry) else {
            return false;
        };
        let e = &mut self.list[i];
        e.job = 0;
        e.preview = None;
        e.bytes = match &state {
            EntryState::Ready(l) => l.heap_bytes() as u64,
            _ => 0,
        };
        if let EntryState::Ready(l) = &state {
            e.loads += 1;
            e.keep_zero(&l.clone());
        }
        e.state = state;
        self.touch(i);
        true
    }

    /// Swaps the reloaded capture `l` into the shown entry (the running reload ends).
    pub fn finish_reload(&mut self, l: Arc<Loaded>) {
        self.reload = None;
        let Some(i) = self.current else { return };
        if let Some(e) = self.list.get_mut(i) {
            e.bytes = l.heap_bytes() as u64;
            e.loads += 1;
            e.keep_zero(&l);
            e.state = EntryState::Ready(l);
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
        let id = CaptureId(self.next_id);
        self.next_id += 1;
        self.list.insert(at, Entry::idle(id, capture, writing));
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
        true
    }

    /// Entry `i` in place, to update its capture reference and flags.
    pub fn get_entry_mut(&mut self, i: usize) -> Option<&mut Entry> {
        self.list.get_mut(i)
    }

    /// The file of entry `i` changed and is complete again: when it is the open entry, starts
    /// a reload (the loaded capture stays shown until the new one is swapped in; a failed or
    /// running load starts over) and returns the jobs to cancel and the load; otherwise a
    /// failed entry becomes idle so opening it tries again, and a loaded one is dropped (its
    /// model is of the old file: opening it loads the new one).
    pub fn reload(&mut self, i: usize) -> (Vec<Arc<Progress>>, Option<LoadJob>) {
        let mut cancel = Vec::new();
        let Some(e) = self.list.get_mut(i) else {
            return (cancel, None);
        };
        e.gone = false;
        if self.current != Some(i) {
            match &e.state {
                EntryState::Failed(_) | EntryState::Ready(_) => {
                    e.state = EntryState::Idle;
                    e.bytes = 0;
                }
                EntryState::Loading(p) => {
                    cancel.push(p.clone());
                    e.state = EntryState::Idle;
                    e.preview = None;
                    e.job = 0;
                }
                EntryState::Idle => {}
            }
            return (cancel, None);
        }
        if let Some((_, p)) = self.reload.take() {
            cancel.push(p);
        }
        let job = self.start_job(i);
        let e = &mut self.list[i];
        match &e.state {
            EntryState::Ready(_) => {
                // The old capture stays drawn: the job is the reload, not the entry's load.
                e.job = 0;
                self.reload = Some((job.generation, job.progress.clone()));
            }
            EntryState::Loading(p) => {
                cancel.push(p.clone());
                e.state = EntryState::Loading(job.progress.clone());
            }
            EntryState::Idle | EntryState::Failed(_) => {
                e.state = EntryState::Loading(job.progress.clone())
            }
        }
        (cancel, Some(job))
    }

    /// True when `generation` is the running background reload of the shown capture.
    pub fn is_reload(&self, generation: u64) -> bool {
        self.reload.as_ref().is_some_and(|r| r.0 == generation)
    }

    /// Drops the running background reload (it failed: the old capture stays).
    pub fn abandon_reload(&mut self) {
        self.reload = None;
    }
}

/// `s` as text runs each followed by the number after it, so names compare with their numbers
/// in numeric order (`worker2` < `worker10`).
fn natural_key(s: &str) -> Vec<(String, Option<u64>)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(d) = c.to_digit(10) {
            let mut n = u64::from(d);
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                n = n.saturating_mul(10).saturating_add(u64::from(d));
                chars.next();
            }
            out.push((std::mem::take(&mut text), Some(n)));
        } else {
            text.push(c);
        }
    }
    if !text.is_empty() || out.is_empty() {
        out.push((text, None));
    }
    out
}
#[cfg(test)]
mod tests;
