//! Which device work a breakdown counts. By default every activity of the file: right for
//! device occupancy. Real traces begin with work launched before host tracing started (its
//! launch is not in the file); analyses of the profiled steps should not count it, so:
//!
//! - [`retain`] keeps the activities of a selection (`gpu --steps`: the activities `diff
//!   --steps` selects, [`crate::analysis::diff::select_steps`]);
//! - [`unlinked_busy`] is, per device, the busy time only activities without a launch in the
//!   file account for: |∪ all| − |∪ linked|, so busy − unlinked busy is the busy time of the
//!   work launched in the file.

use super::streams::{GpuStreams, StreamInfo};
use crate::model::{NO_SLICE, Ps};

/// `g` with only the activity rows whose slice id satisfies `keep`; streams left without
/// activities are dropped. Row order (stream, then start) is kept.
pub fn retain(g: &GpuStreams, keep: impl Fn(u32) -> bool) -> GpuStreams {
    let a = &g.acts;
    let mut out = GpuStreams {
        streams: Vec::with_capacity(g.streams.len()),
        kinds: g.kinds.clone(),
        host_correlated: g.host_correlated,
        duplicate_corr: g.duplicate_corr,
        window_dropped: g.window_dropped,
        shift_ns: g.shift_ns,
        rounded: g.rounded,
        ..GpuStreams::default()
    };
    let o = &mut out.acts;
    for s in &g.streams {
        let first = o.len();
        for i in s.rows.0..s.rows.1 {
            if !keep(a.slice[i]) {
                continue;
            }
            o.slice.push(a.slice[i]);
            o.start.push(a.start[i]);
            o.end.push(a.end[i]);
            o.class.push(a.class[i]);
            o.idle_set.push(a.idle_set[i]);
            o.launch.push(a.launch[i]);
        }
        if o.len() > first {
            out.streams.push(StreamInfo {
                rows: (first, o.len()),
                ..s.clone()
            });
        }
    }
    out
}

/// Per device, in stream order (devices ascending, as the device reports): (device, busy time
/// of the device that only activities without a launch in the file account for).
pub fn unlinked_busy(g: &GpuStreams) -> Vec<(i64, Ps)> {
    let a = &g.acts;
    let mut out: Vec<(i64, Ps)> = Vec::new();
    let mut rows: Vec<(Ps, Ps, bool)> = Vec::new();
    let mut k = 0;
    while k < g.streams.len() {
        let dev = g.streams[k].device;
        rows.clear();
        while k < g.streams.len() && g.streams[k].device == dev {
            let (lo, hi) = g.streams[k].rows;
            rows.extend((lo..hi).map(|i| (a.start[i], a.end[i], a.launch[i] != NO_SLICE)));
            k += 1;
        }
        rows.sort_unstable_by_key(|r| r.0);
        let (mut all, mut linked) = (Union::default(), Union::default());
        for &(s, e, l) in &rows {
            all.push(s, e);
            if l {
                linked.push(s, e);
            }
        }
        out.push((dev, (all.len() - linked.len()).max(0)));
    }
    out
}

/// Length of a union of intervals pushed in start order; inverted intervals (µs rounding under
/// `--hta`) count as empty, as in the temporal breakdown.
#[derive(Default)]
struct Union {
    open: Option<(Ps, Ps)>,
    total: Ps,
}

impl Union {
    fn push(&mut self, s: Ps, e: Ps) {
        if e <= s {
            return;
        }
        match &mut self.open {
            Some((_, end)) if s <= *end => *end = (*end).max(e),
            _ => {
                if let Some((a, b)) = self.open {
                    self.total += b - a;
                }
                self.open = Some((s, e));
            }
        }
    }

    fn len(&self) -> Ps {
        self.total + self.open.map_or(0, |(a, b)| b - a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::gpu::classify::KernelClass;

    fn streams(rows: &[(i64, i64, i64, bool)]) -> GpuStreams {
        // (device, start, end, linked); one stream per device, rows in start order.
        let mut g = GpuStreams::default();
        for (k, &(d, s, e, l)) in rows.iter().enumerate() {
            let a = &mut g.acts;
            a.slice.push(k as u32);
            a.start.push(s);
            a.end.push(e);
            a.class.push(KernelClass::Compute);
            a.idle_set.push(true);
            a.launch.push(if l { 100 + k as u32 } else { NO_SLICE });
            match g.streams.last_mut() {
                Some(st) if st.device == d => st.rows.1 = k + 1,
                _ => g.streams.push(StreamInfo {
                    track: d as u32,
                    process: 0,
                    device: d,
                    device_name: String::new(),
                    stream: 7,
                    stream_name: String::new(),
                    rows: (k, k + 1),
                }),
            }
        }
        g
    }

    #[test]
    fn unlinked_busy_is_what_only_unlinked_work_covers() {
        // Device 0: unlinked [0,10) and [25,30), linked [5,20) and [22,28): all = [0,20) ∪
        // [22,30) = 28; linked = 15 + 6 = 21; only unlinked: [0,5) and [28,30) = 7.
        // Device 1: everything linked.
        let g = streams(&[
            (0, 0, 10, false),
            (0, 5, 20, true),
            (0, 22, 28, true),
            (0, 25, 30, false),
            (1, 0, 4, true),
        ]);
        assert_eq!(unlinked_busy(&g), vec![(0, 7), (1, 0)]);
    }

    #[test]
    fn retain_keeps_rows_and_drops_empty_streams() {
        let g = streams(&[(0, 0, 10, false), (0, 5, 20, true), (1, 0, 4, true)]);
        let r = retain(&g, |s| s == 1);
        assert_eq!(r.streams.len(), 1);
        assert_eq!(r.streams[0].rows, (0, 1));
        assert_eq!(r.acts.start, vec![5]);
        assert_eq!(unlinked_busy(&r), vec![(0, 0)]);
    }
}
