//! The picker's diff in the app: `b` marks the baseline, `d` loads A then B and shows the diff
//! table over B's timeline (`views/diff_table.rs`); B's flame view then colours by Δ.

use super::App;
use crate::ui::action::Action;
use crate::ui::keymap::ViewKind;
use crate::ui::loading::EntryState;
use crate::ui::msg::Cmd;

impl App {
    /// `run / host` of entry `i`, sanitized.
    fn entry_label(&self, i: usize) -> String {
        self.state
            .entries
            .get(i)
            .map_or(String::new(), |e| e.label())
    }

    /// Labels of entries `ia` (A) and `ib` (B) in the diff table's title: `run / host`; when
    /// those are equal (two captures of one worker), what tells them apart — the file name
    /// (without its trace extension) and when the capture was taken.
    fn diff_labels(&self, ia: usize, ib: usize) -> (String, String) {
        let (a, b) = (self.entry_label(ia), self.entry_label(ib));
        if a != b {
            return (a, b);
        }
        let detail = |i: usize| {
            let Some(e) = self.state.entries.get(i) else {
                return String::new();
            };
            let name = e
                .capture
                .source
                .path
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            let short = [
                ".pt.trace.json.gz",
                ".pt.trace.json",
                ".json.gz",
                ".json",
                ".xplane.pb",
            ]
            .iter()
            .find_map(|x| name.strip_suffix(x))
            .unwrap_or(&name)
            .to_string();
            let when = crate::ui::views::picker::taken_label(e.taken, e.capture.modified, false);
            crate::ui::text::sanitize(&format!("{short} ({when})")).into_owned()
        };
        (detail(ia), detail(ib))
    }

    /// `b` in the picker: entry `i` becomes the baseline (A) of a diff, or stops being it.
    pub(super) fn set_baseline(&mut self, i: usize) {
        let label = self.entry_label(i);
        let st = &mut self.state;
        let Some(p) = st.entries.get(i).map(|e| e.capture.source.path.clone()) else {
            return;
        };
        if st.diff.baseline.as_ref() == Some(&p) {
            st.diff.baseline = None;
            st.notice = Some("diff baseline cleared".into());
            return;
        }
        st.diff.baseline = Some(p);
        let key = st
            .keymap
            .keys(ViewKind::Picker, Action::OpenDiff)
            .first()
            .map_or(String::new(), |k| {
                format!(" — {k} on another capture diffs it against A")
            });
        st.notice = Some(format!("baseline A: {label}{key}"));
    }

    /// The (A, B) paths of a diff of entry `i` against the baseline, or `None` with a notice.
    pub(super) fn diff_pair(
        &mut self,
        i: usize,
    ) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
        let st = &mut self.state;
        let b = st.entries.get(i)?.capture.source.path.clone();
        let Some(a) = st.diff.baseline.clone() else {
            let key = st
                .keymap
                .keys(ViewKind::Picker, Action::MarkBaseline)
                .first()
                .map_or(String::new(), |k| format!(" ({k})"));
            st.notice = Some(format!(
                "mark the baseline first{key}: the capture B is compared against"
            ));
            return None;
        };
        if a == b {
            st.notice = Some("that is the baseline (A): pick the capture to compare (B)".into());
            return None;
        }
        Some((a, b))
    }

    /// Moves a pending diff on: loads A, then B (one at a time, each with every core), then
    /// shows B's timeline with the diff table over it.
    pub(super) fn advance_diff(&mut self) -> Vec<Cmd> {
        let Some((pa, pb)) = self.state.diff.pending.clone() else {
            return Vec::new();
        };
        let e = &self.state.entries;
        let (Some(ia), Some(ib)) = (e.position(&pa), e.position(&pb)) else {
            self.state.diff.pending = None;
            self.state.notice = Some("diff: one of its captures is no longer listed".into());
            return Vec::new();
        };
        let state_of = |i: usize| e.get(i).map(|x| &x.state);
        for (i, side) in [(ia, "A"), (ib, "B")] {
            match state_of(i) {
                Some(EntryState::Ready(_)) => {}
                Some(EntryState::Loading(_)) => return Vec::new(),
                Some(EntryState::Failed(_)) => {
                    self.state.diff.pending = None;
                    self.state.notice = Some(format!("diff: {side} failed to load"));
                    return Vec::new();
                }
                _ => return self.open(i),
            }
        }
        self.state.diff.pending = None;
        let cmds = self.open(ib);
        let (a_name, b_name) = self.diff_labels(ia, ib);
        let sides = {
            let e = &self.state.entries;
            let cap = |i: usize| {
                let id = e.id_of(i)?;
                Some((id, e.capture(id).cloned()?))
            };
            cap(ia).zip(cap(ib))
        };
        let Some(((ida, a), (idb, b))) = sides else {
            return cmds;
        };
        let width = self.state.size.0;
        match crate::ui::views::diff_table::open(&a.cap, &b.cap, &a_name, &b_name, width) {
            Ok(mut t) => {
                t.source = Some(Box::new(crate::ui::views::diff_table::DiffSource::new(
                    ida, idb, &a_name, &b_name,
                )));
                self.state.diff.active = Some((pa, pb));
                self.stack.push(Box::new(t));
            }
            Err(m) => self.state.notice = Some(format!("diff: {}", crate::ui::text::sanitize(&m))),
        }
        cmds
    }
}
