//! Live updates in the explorer: capture events from the watcher thread ([`crate::live`]) add,
//! update and remove picker entries, announce new captures with a notice (and open them with
//! `--follow`), and reload the open capture in the background when its file changes — swapped in
//! keeping the time window and the track under the cursor (by stable name) where they still
//! exist. An open capture whose file vanished stays open with a notice.

use super::action::Action;
use super::catalog::CaptureRef;
use super::keymap::ViewKind;
use super::loader::LoadDone;
use super::loading::LoadJob;
use super::msg::Cmd;
use super::state::{Mark, State};
use super::text;
use crate::discover::CaptureFile;
use crate::live::{CaptureEvent, EventKind, WatchEvent};

/// What a watcher event asks of the app besides the state changes made here.
#[derive(Debug, Default)]
pub struct Watched {
    /// Loads to start or cancel.
    pub cmds: Vec<Cmd>,
    /// Entry to open in the timeline (a new capture with `--follow`, or one asked for while
    /// it was being written).
    pub open: Option<usize>,
}

/// The picker reference of a discovered capture file.
pub fn capture_ref(c: &CaptureFile) -> CaptureRef {
    CaptureRef {
        source: c.source_info(),
        format: Some(c.format),
        modified: Some(c.mtime),
        span: c.span,
    }
}

/// `run / host` for notices, sanitized.
fn label(c: &CaptureFile) -> String {
    text::sanitize(&format!("{} / {}", c.run, c.host)).into_owned()
}

impl State {
    /// Applies one watcher event; returns what the app still has to do.
    pub(super) fn on_watch(&mut self, ev: WatchEvent) -> Watched {
        match ev {
            WatchEvent::Notice(n) => {
                self.notice = Some(format!("watch: {}", text::sanitize(&n)));
                Watched::default()
            }
            WatchEvent::Capture(e) => self.on_capture_event(e),
        }
    }

    fn on_capture_event(&mut self, e: CaptureEvent) -> Watched {
        let cmds = |cmds| Watched { cmds, open: None };
        let open = |i| Watched {
            cmds: Vec::new(),
            open: Some(i),
        };
        let c = &e.capture;
        let found = self.entries.position(&c.path);
        match e.kind {
            EventKind::New | EventKind::Writing => {
                let i = match found {
                    Some(i) => i,
                    None => self.insert_entry(c),
                };
                if let Some(en) = self.entries.get_entry_mut(i) {
                    en.capture = capture_ref(c);
                    en.writing = true;
                    en.gone = false;
                }
                Watched::default()
            }
            EventKind::Ready => {
                let i = match found {
                    Some(i) => i,
                    None => self.insert_entry(c),
                };
                if let Some(en) = self.entries.get_entry_mut(i) {
                    en.capture = capture_ref(c);
                    en.writing = false;
                    en.gone = false;
                    en.probe();
                }
                self.live.newest = Some(c.path.clone());
                if self.live.open_when_ready.as_deref() == Some(c.path.as_path()) {
                    self.live.open_when_ready = None;
                    self.notice = Some(format!("{} is complete: opened", label(c)));
                    return open(i);
                }
                if self.live.follow {
                    self.notice = Some(format!("following: opened {}", label(c)));
                    return open(i);
                }
                let key = self
                    .keymap
                    .keys(ViewKind::Global, Action::OpenNewest)
                    .first()
                    .map(|k| k.to_string());
                self.notice = Some(match key {
                    Some(k) => format!("new capture {} — {k} opens it", label(c)),
                    None => format!("new capture {}", label(c)),
                });
                Watched::default()
            }
            EventKind::Changed => {
                let Some(i) = found else {
                    return Watched::default();
                };
                if let Some(en) = self.entries.get_entry_mut(i) {
                    en.capture = capture_ref(c);
                    en.writing = false;
                    en.probe();
                }
                let (mut cancel, job) = self.entries.reload(i);
                // Its step summary is of the old file: computed again when next asked for.
                if let Some(id) = self.entries.id_of(i) {
                    cancel.extend(self.summaries.forget(id));
                }
                let mut out: Vec<Cmd> = cancel.into_iter().map(Cmd::Cancel).collect();
                if let Some(j) = job {
                    self.notice = Some(format!("{} changed: reloading…", label(c)));
                    out.push(load_cmd(j));
                }
                cmds(out)
            }
            EventKind::Removed => {
                let Some(i) = found else {
                    return Watched::default();
                };
                if self.live.newest.as_deref() == Some(c.path.as_path()) {
                    self.live.newest = None;
                }
                let mut cancel = Vec::new();
                let cursor = self.picker;
                if self.entries.remove(i, &mut cancel) {
                    if cursor > i || cursor >= self.entries.len() {
                        self.picker = cursor.saturating_sub(1);
                    }
                } else {
                    self.notice = Some(format!(
                        "{} was deleted: it stays open until you open another",
                        label(c)
                    ));
                }
                cmds(cancel.into_iter().map(Cmd::Cancel).collect())
            }
        }
    }

    /// Adds a picker entry for `c` where the picker's order puts it (newest first: a new capture
    /// leads its run, and its run moves up with it). The picker cursor stays on its entry.
    fn insert_entry(&mut self, c: &CaptureFile) -> usize {
        let cursor = self.picker;
        let was_empty = self.entries.is_empty();
        let at = self.entries.len();
        let i = self.entries.insert(at, capture_ref(c), true);
        let moved = self.entries.reorder();
        if !was_empty {
            self.picker = moved.get(cursor).copied().unwrap_or(cursor);
        }
        moved.get(i).copied().unwrap_or(i)
    }

    /// Entry `i` is still being written: remember to open it once complete (true: deferred).
    pub(super) fn defer_open(&mut self, i: usize) -> bool {
        let open = self.entries.current == Some(i);
        let Some(e) = self.entries.get(i).filter(|e| e.writing && !open) else {
            return false;
        };
        self.live.open_when_ready = Some(e.capture.source.path.clone());
        self.notice = Some("still being written: it opens when complete".into());
        true
    }

    /// The entry `open_newest` opens: the newest capture announced complete, else the first
    /// entry (the newest run).
    pub(super) fn newest_entry(&self) -> usize {
        self.live
            .newest
            .as_deref()
            .and_then(|p| self.entries.position(p))
            .unwrap_or(0)
    }

    /// A background reload of the shown capture finished: swap it in, keeping the window and
    /// the cursor's track (by stable name) and lane; on failure keep the old one. True when
    /// swapped in (the app then closes the popups, which referred to the old version).
    pub(super) fn on_reload(&mut self, done: LoadDone) -> bool {
        let new = match done.result {
            Ok(l) => l,
            Err(m) => {
                self.entries.abandon_reload();
                self.notice = Some(format!(
                    "reload failed, showing the previous version: {}",
                    text::sanitize(&m)
                ));
                return false;
            }
        };
        let (t0, t1) = (self.vp.t0, self.vp.t1);
        let old = self.loaded().cloned();
        let keep = old.as_ref().and_then(|l| {
            let row = self.rows.list.get(self.rows.cursor)?;
            let t = row.track()?;
            let lane = match row {
                super::rows::Row::Lane { lane, .. } => *lane,
                _ => 0,
            };
            Some((l.cap.track_stable_name(t), lane))
        });
        let folded: Vec<String> = old.as_ref().map_or(Vec::new(), |l| {
            self.rows
                .collapsed
                .iter()
                .filter(|&&p| (p as usize) < l.cap.processes.len())
                .map(|&p| l.cap.process_stable_name(p))
                .collect()
        });
        drop(old);
        let cap_name = self
            .entries
            .current
            .and_then(|i| self.entries.get(i).map(|e| e.label()));
        if !self.entries.is_reload(done.generation) {
            return false;
        }
        self.entries.finish_reload(new.clone());
        // Hits and the selection are slice ids of the previous version.
        self.hits = None;
        self.selected = None;
        self.mark = Mark::None;
        self.rows.collapsed = (0..new.cap.processes.len() as u32)
            .filter(|&p| folded.contains(&new.cap.process_stable_name(p)))
            .collect();
        self.rebuild_rows();
        if let Some((name, lane)) = keep
            && let Some(t) =
                (0..new.cap.tracks.len() as u32).find(|&t| new.cap.track_stable_name(t) == name)
        {
            let pos = self
                .rows
                .position_of_lane(t, lane)
                .or_else(|| self.rows.list.iter().position(|r| r.track() == Some(t)));
            if let Some(p) = pos {
                self.rows.cursor = p;
            }
        }
        self.set_window(t0, t1);
        self.clamp_scroll();
        self.notice = Some(format!(
            "reloaded {} (file changed)",
            cap_name.unwrap_or_default()
        ));
        true
    }
}

fn load_cmd(j: LoadJob) -> Cmd {
    Cmd::Load {
        generation: j.generation,
        entry: j.entry,
        capture: j.capture,
        progress: j.progress,
    }
}
