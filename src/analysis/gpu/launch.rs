//! HTA's kernel launch statistics (`cuda_kernel_launch_stats`): per activity with a launch in the
//! statistics set, CPU runtime, GPU duration and launch delay, with the short-kernel,
//! runtime-outlier and launch-delay-outlier classes; summarised per stream.

use crate::model::Ps;

/// One launched activity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchRecord {
    /// Activity row (index into the activity columns).
    pub row: u32,
    /// Duration of the host launch call, ps.
    pub cpu_dur: Ps,
    /// Duration of the activity, ps.
    pub gpu_dur: Ps,
    /// `max(0, activity start − launch end)`, ps.
    pub delay: Ps,
}

/// Cut-offs of the three classes (HTA defaults 50 µs and 100 µs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchCutoffs {
    /// Runtime cut-off, ps.
    pub runtime: Ps,
    /// Launch-delay cut-off, ps.
    pub delay: Ps,
}

impl LaunchRecord {
    /// Builds a record from the launch span and the activity span.
    pub fn new(row: u32, launch: (Ps, Ps), act: (Ps, Ps)) -> LaunchRecord {
        LaunchRecord {
            row,
            cpu_dur: launch.1 - launch.0,
            gpu_dur: act.1 - act.0,
            delay: (act.0 - launch.1).max(0),
        }
    }
    /// `cpu_dur ≤ runtime cut-off ∧ gpu_dur < cpu_dur`: the kernel is shorter than its launch.
    pub fn is_short(&self, c: LaunchCutoffs) -> bool {
        self.cpu_dur <= c.runtime && self.gpu_dur < self.cpu_dur
    }
    /// `cpu_dur > runtime cut-off`.
    pub fn is_runtime_outlier(&self, c: LaunchCutoffs) -> bool {
        self.cpu_dur > c.runtime
    }
    /// `delay > delay cut-off`.
    pub fn is_delay_outlier(&self, c: LaunchCutoffs) -> bool {
        self.delay > c.delay
    }
}

/// Launch statistics of one stream.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LaunchSummary {
    /// Activities with a launch in the statistics set.
    pub launched: u64,
    /// Median launch delay, ps (linear interpolation, like pandas' `quantile`).
    pub delay_p50: Option<f64>,
    /// 99th percentile launch delay, ps.
    pub delay_p99: Option<f64>,
    /// Mean CPU runtime of the launches, ps.
    pub cpu_mean: Option<f64>,
    /// Short kernels.
    pub short: u64,
    /// Runtime outliers.
    pub runtime_outliers: u64,
    /// Launch-delay outliers.
    pub delay_outliers: u64,
}

/// Linear-interpolated quantile `q ∈ [0, 1]` of `v` (pandas' default); reorders `v`.
pub fn quantile(v: &mut [Ps], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let (_, &mut a, rest) = v.select_nth_unstable(lo);
    let b = if hi == lo {
        a
    } else {
        // The element right after position lo is the minimum of the upper part.
        rest.iter().copied().min().unwrap_or(a)
    };
    Some(a as f64 + (b - a) as f64 * (pos - lo as f64))
}

/// Summarises `records`; `scratch` is reused for the delays.
pub fn summarize(
    records: &[LaunchRecord],
    cut: LaunchCutoffs,
    scratch: &mut Vec<Ps>,
) -> LaunchSummary {
    let mut s = LaunchSummary {
        launched: records.len() as u64,
        ..LaunchSummary::default()
    };
    if records.is_empty() {
        return s;
    }
    scratch.clear();
    let mut cpu_total: i128 = 0;
    for r in records {
        scratch.push(r.delay);
        cpu_total += i128::from(r.cpu_dur);
        s.short += u64::from(r.is_short(cut));
        s.runtime_outliers += u64::from(r.is_runtime_outlier(cut));
        s.delay_outliers += u64::from(r.is_delay_outlier(cut));
    }
    s.cpu_mean = Some(cpu_total as f64 / records.len() as f64);
    s.delay_p50 = quantile(scratch, 0.5);
    s.delay_p99 = quantile(scratch, 0.99);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUT: LaunchCutoffs = LaunchCutoffs {
        runtime: 50,
        delay: 100,
    };

    #[test]
    fn classes_and_percentiles() {
        let rs = [
            LaunchRecord::new(0, (0, 10), (12, 15)), // cpu 10, gpu 3, delay 2: short
            LaunchRecord::new(1, (20, 80), (300, 400)), // cpu 60: runtime outlier; delay 220
            LaunchRecord::new(2, (90, 95), (50, 60)), // starts before launch end: delay 0
            LaunchRecord::new(3, (100, 110), (160, 170)), // delay 50, gpu = cpu: not short
        ];
        assert_eq!(rs[2].delay, 0);
        let mut scratch = Vec::new();
        let s = summarize(&rs, CUT, &mut scratch);
        assert_eq!(s.launched, 4);
        assert_eq!(s.short, 1); // row 0 only: row 2's kernel (10) outlasts its launch (5)
        assert_eq!(s.runtime_outliers, 1);
        assert_eq!(s.delay_outliers, 1);
        // delays sorted: 0, 2, 50, 220 → p50 = 2 + 0.5·48 = 26; p99 = 50 + 0.97·170
        assert_eq!(s.delay_p50, Some(26.0));
        assert!((s.delay_p99.unwrap_or(0.0) - (50.0 + 0.97 * 170.0)).abs() < 1e-9);
        assert_eq!(s.cpu_mean, Some((10 + 60 + 5 + 10) as f64 / 4.0));
    }

    #[test]
    fn quantile_edges() {
        assert_eq!(quantile(&mut [], 0.5), None);
        assert_eq!(quantile(&mut [7], 0.99), Some(7.0));
        assert_eq!(quantile(&mut [3, 1, 2], 0.5), Some(2.0));
        assert_eq!(quantile(&mut [4, 1, 3, 2], 1.0), Some(4.0));
        assert_eq!(quantile(&mut [4, 1, 3, 2], 0.0), Some(1.0));
    }
}
