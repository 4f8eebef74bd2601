//! HTA's queue length per stream (`hta/analyzers/trace_counters.py`): +1 when a launch is issued,
//! −1 when its activity starts; the running sum is the number of launched-but-not-started
//! activities. Change points, their summary and the time spent with a full queue.
//!
//! Differences from HTA (deliberate): series are per (device, stream), not per stream id only;
//! at equal times the +1 comes first (HTA's pandas sort leaves that order unspecified).

use crate::model::Ps;

/// Queue length after each change, in time order: the step function for a counter track.
pub type QueueSeries = Vec<(Ps, i64)>;

/// Summary of one stream's queue length.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueSummary {
    /// Change points (2 per launched activity).
    pub points: u64,
    /// Largest queue length.
    pub max: i64,
    /// Mean over change points (HTA's `describe()`, not time-weighted).
    pub mean: f64,
    /// Time-weighted mean between the first and the last change point.
    pub time_mean: f64,
    /// Time with `len ≥ full`, ps.
    pub blocked: Ps,
}

/// Builds the step series from (launch start, activity start) pairs; `scratch` is reused.
pub fn series(
    pairs: impl IntoIterator<Item = (Ps, Ps)>,
    scratch: &mut Vec<(Ps, i8)>,
) -> QueueSeries {
    scratch.clear();
    for (launch, start) in pairs {
        scratch.push((launch, 1));
        scratch.push((start, -1));
    }
    // +1 before −1 at equal times.
    scratch.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut len = 0i64;
    scratch
        .iter()
        .map(|&(t, d)| {
            len += i64::from(d);
            (t, len)
        })
        .collect()
}

/// Summarises a series; `full` is the queue length that blocks the host (CUDA: 1024).
pub fn summarize(s: &[(Ps, i64)], full: i64) -> QueueSummary {
    let Some(&(first, _)) = s.first() else {
        return QueueSummary::default();
    };
    let mut out = QueueSummary {
        points: s.len() as u64,
        max: i64::MIN,
        ..QueueSummary::default()
    };
    let mut sum = 0i128;
    let mut weighted = 0i128;
    for (k, &(t, len)) in s.iter().enumerate() {
        out.max = out.max.max(len);
        sum += i128::from(len);
        if let Some(&(next, _)) = s.get(k + 1) {
            let d = next - t;
            weighted += i128::from(d) * i128::from(len);
            if len >= full {
                out.blocked += d;
            }
        }
    }
    out.mean = sum as f64 / s.len() as f64;
    let span = s[s.len() - 1].0 - first;
    out.time_mean = if span > 0 {
        weighted as f64 / span as f64
    } else {
        0.0
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        let mut scratch = Vec::new();
        // launches at 0, 1, 2; activities start at 5, 6, 2 (the last one starts at its launch).
        let s = series([(0, 5), (1, 6), (2, 2)], &mut scratch);
        assert_eq!(s, vec![(0, 1), (1, 2), (2, 3), (2, 2), (5, 1), (6, 0)]);
        let q = summarize(&s, 2);
        assert_eq!(q.points, 6);
        assert_eq!(q.max, 3);
        assert_eq!(q.mean, 9.0 / 6.0);
        // ≥ 2 during [1,2) (len 2), [2,2) (3), [2,5) (2): blocked 1 + 0 + 3
        assert_eq!(q.blocked, 4);
        // weighted: 1·1 + 2·1 + 3·0 + 2·3 + 1·1 = 10 over 6
        assert_eq!(q.time_mean, 10.0 / 6.0);
    }

    #[test]
    fn empty() {
        let mut scratch = Vec::new();
        let s = series([], &mut scratch);
        assert!(s.is_empty());
        assert_eq!(summarize(&s, 1024), QueueSummary::default());
    }
}
