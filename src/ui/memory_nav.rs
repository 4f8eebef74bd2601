//! Timeline navigation of the memory rows: the jump to a device's allocated peak. A piece of
//! `App::update`, like `navigate.rs`.

use super::memory::mem_bytes;
use super::rows::Row;
use super::ruler::format_time_res;
use super::state::State;

impl State {
    /// Centres the window on the allocated peak of the memory track under the cursor (of the
    /// next track when already there; of the track with the highest peak when the cursor is on
    /// no memory row), clears the selection so the cursor time is the peak, and puts the row
    /// cursor on that track's allocated row.
    pub(super) fn jump_peak(&mut self) {
        let Some(l) = self.loaded().cloned() else {
            return;
        };
        let Some(m) = l.memory().filter(|m| !m.is_empty()) else {
            self.notice = Some(if l.memory().is_none() {
                "memory rows not computed yet".into()
            } else {
                "no memory events (record with profile_memory=True)".into()
            });
            return;
        };
        let peaks: Vec<Option<(crate::model::Ps, i64)>> = m.tracks.iter().map(|v| v.peak).collect();
        let n = peaks.len();
        let here = match self.rows.list.get(self.rows.cursor) {
            Some(Row::Memory { track, .. }) => Some(*track as usize),
            _ => None,
        };
        let at_peak = |i: usize| {
            self.selected.is_none() && peaks[i].is_some_and(|(t, _)| self.cursor_time() == t)
        };
        let pick = match here {
            Some(i) if at_peak(i) => (1..=n).map(|d| (i + d) % n).find(|&j| peaks[j].is_some()),
            Some(i) if peaks.get(i).is_some_and(Option::is_some) => Some(i),
            _ => (0..n)
                .filter(|&j| peaks[j].is_some())
                .max_by_key(|&j| (peaks[j].map_or(0, |p| p.1), std::cmp::Reverse(j))),
        };
        let Some((i, (t, bytes))) = pick.and_then(|i| peaks[i].map(|p| (i, p))) else {
            self.notice = Some("no allocations in the memory rows".into());
            return;
        };
        self.selected = None;
        // The window never starts before the capture: a peak nearer its start than half the
        // width gets a narrower window, so it is still the centre (the cursor time).
        let start = self.bounds().span.0;
        let mut w = self.vp.width();
        if t - start < w / 2 {
            w = 2 * (t - start);
        }
        self.set_window(t - w / 2, t - w / 2 + w);
        if let Some(r) = self.rows.list.iter().position(
            |r| matches!(*r, Row::Memory { track, reserved: false } if track as usize == i),
        ) {
            self.rows.cursor = r;
            self.clamp_scroll();
        }
        let label = m.model.tracks[i].label();
        let res = self.vp.width() / 100;
        let open = self
            .keymap
            .keys(
                super::keymap::ViewKind::Timeline,
                super::action::Action::OpenMemory,
            )
            .first()
            .map_or(String::new(), |k| {
                format!(" · {k} lists the live allocations")
            });
        self.notice = Some(format!(
            "peak of {}: {} allocated at {}{open}",
            super::text::sanitize(&label),
            mem_bytes(bytes),
            format_time_res(t - l.cap.time_zero(), res)
        ));
    }
}
