//! Step keys on the timeline (issue 23): `[` / `]` go to the previous / next training step,
//! `z` zooms to the step under the cursor (also `Enter`, `h`, `l` on the `Steps` row). A piece of
//! `App::update`, like `navigate.rs`.

use super::action::Action;
use super::state::State;
use super::steps_row::at_or_before;
use crate::analysis::steps::StepSource;
use crate::model::Ps;

impl State {
    fn fit_step(&mut self, start: Ps, end: Ps) {
        let b = self.bounds();
        self.vp.fit_range(start, end.max(start + 1), b);
    }

    /// `PrevStep`, `NextStep` or `ZoomStep` on the open capture.
    pub(super) fn step_key(&mut self, a: Action) {
        let Some(l) = self.loaded().cloned() else {
            return;
        };
        let steps = &l.steps;
        if steps.source == StepSource::Whole {
            self.notice = Some(
                "no steps found in this capture (ProfilerStep#N, step_num, a Steps line)".into(),
            );
            return;
        }
        let v = &steps.steps;
        let t = self.cursor_time();
        let here = steps.at(t);
        let target = match a {
            Action::ZoomStep => here.or_else(|| at_or_before(steps, t)).or(Some(0)),
            Action::NextStep => match here {
                Some(k) => Some(k + 1),
                None => Some(v.partition_point(|s| s.start <= t)),
            },
            Action::PrevStep => match here {
                Some(k) => k.checked_sub(1),
                None => at_or_before(steps, t),
            },
            _ => return,
        };
        let Some(s) = target.and_then(|k| v.get(k).copied()) else {
            self.notice = Some(match a {
                Action::NextStep => "no step after this one".into(),
                _ => "no step before this one".into(),
            });
            return;
        };
        // Zoomed inside a step: keep the zoom and show the same phase of the target step, so
        // steps compare at a glance; otherwise (or when that phase is past its end) fit it.
        if a != Action::ZoomStep
            && let Some(cur) = here.and_then(|k| v.get(k))
            && self.vp.t0 >= cur.start
            && self.vp.t1 <= cur.end
        {
            let d = s.start - cur.start;
            let (t0, t1) = (self.vp.t0 + d, self.vp.t1 + d);
            let mid = t0 + (t1 - t0) / 2;
            if mid < s.end {
                self.set_window(t0, t1);
                return;
            }
        }
        self.fit_step(s.start, s.end);
    }
}
