//! HTA's per-capture indexes: the queue lengths of its launch rule and the launches per stream
//! its event syncs look up.

use super::roles::{LAUNCH, Roles};
use crate::model::{Capture, NO_SLICE, Ps};

/// HTA's queue lengths (`TraceCounters._get_queue_length_time_series_for_rank`) per activity of
/// `roles` (parallel to its launches): the stream's queue just after the activity's launch and
/// just after it started; `(-1, -1)` for an activity whose launch is not a launch call.
pub fn hta_queue(c: &Capture, roles: &Roles) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    let mut rows: Vec<(Ps, u8, u32)> = Vec::new();
    for (k, &t) in roles.streams.iter().enumerate() {
        let tr = &c.tracks[t as usize];
        let base = out.len();
        out.resize(base + tr.slice_count(), (-1, -1));
        rows.clear();
        for id in tr.slices.0..tr.slices.1 {
            let l = roles.launch_of(c, k, id);
            if l == NO_SLICE || roles.flags(c, l) & LAUNCH == 0 {
                continue;
            }
            rows.push((c.slices.start[l as usize], 0, id));
            rows.push((c.slices.start[id as usize], 1, id));
        }
        rows.sort_by_key(|&(ts, what, _)| (ts, what));
        let mut q = 0i32;
        for &(_, what, id) in &rows {
            let slot = &mut out[base + (id - tr.slices.0) as usize];
            if what == 0 {
                q += 1;
                slot.0 = q;
            } else {
                q -= 1;
                slot.1 = q;
            }
        }
    }
    out
}

/// HTA's event syncs (`_get_cuda_event_record_df`, `_get_cuda_stream_wait_event_df`): per
/// stream, its activities by their launch's start, and the stream's number.
#[derive(Clone, Debug, Default)]
pub struct HtaEvents {
    /// Per stream: (launch start, launch, activity), by launch start.
    by_launch: Vec<Vec<(Ps, u32, u32)>>,
    /// Per stream: its number (the Kineto tid).
    number: Vec<i64>,
}

impl HtaEvents {
    /// Indexes the launch-call activities of every stream.
    pub fn new(c: &Capture, roles: &Roles) -> HtaEvents {
        let mut out = HtaEvents::default();
        for (k, &t) in roles.streams.iter().enumerate() {
            let tr = &c.tracks[t as usize];
            let mut v: Vec<(Ps, u32, u32)> = (tr.slices.0..tr.slices.1)
                .filter_map(|id| {
                    let l = roles.launch_of(c, k, id);
                    (l != NO_SLICE && roles.flags(c, l) & LAUNCH != 0)
                        .then(|| (c.slices.start[l as usize], l, id))
                })
                .collect();
            v.sort_unstable();
            out.by_launch.push(v);
            out.number.push(match tr.key {
                crate::model::Key::Int(n) => n,
                crate::model::Key::Str(_) => -1,
            });
        }
        out
    }

    fn stream(&self, number: i64) -> Option<usize> {
        self.number.iter().position(|&n| n == number)
    }

    /// The activity of the last launch onto stream `number` that started at or before `ts`.
    pub(super) fn previous(&self, number: i64, ts: Ps) -> Option<u32> {
        let v = &self.by_launch[self.stream(number)?];
        let i = v.partition_point(|x| x.0 <= ts);
        i.checked_sub(1).map(|i| v[i].2)
    }

    /// The activity of the first launch onto stream `k` from `track` after `ts`.
    pub(super) fn next(&self, c: &Capture, k: usize, track: u32, ts: Ps) -> Option<u32> {
        let v = &self.by_launch[k];
        let i = v.partition_point(|x| x.0 <= ts);
        v[i..]
            .iter()
            .find(|x| c.track_of(x.1) == track)
            .map(|x| x.2)
    }
}
