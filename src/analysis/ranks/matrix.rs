//! The rank × step matrix of one metric (what the overview heatmap colours).

use super::summary::RankSummary;
use crate::model::Ps;
use std::collections::BTreeSet;

/// What a heatmap cell shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Step wall time, ps.
    StepTime,
    /// Idle share of the primary device (0–1).
    IdleRatio,
    /// Exposed communication of the primary device, ps.
    ExposedComm,
    /// Host input wait, ps.
    Input,
    /// Step start minus the earliest start of that step over the ranks (clock-aligned), ps.
    StartSkew,
}

impl Metric {
    /// All metrics, in switching order.
    pub const ALL: [Metric; 5] = [
        Metric::StepTime,
        Metric::IdleRatio,
        Metric::ExposedComm,
        Metric::Input,
        Metric::StartSkew,
    ];

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Metric::StepTime => "step time",
            Metric::IdleRatio => "idle %",
            Metric::ExposedComm => "exposed communication",
            Metric::Input => "input wait",
            Metric::StartSkew => "start skew",
        }
    }

    /// True when values are fractions, not times.
    pub fn is_ratio(self) -> bool {
        self == Metric::IdleRatio
    }
}

/// Steps (columns, sorted) and row-major values (`ranks.len() × steps`) of `metric`;
/// `offsets_ns[k]` aligns rank k's clock for [`Metric::StartSkew`].
pub fn matrix(
    ranks: &[&RankSummary],
    offsets_ns: &[i64],
    metric: Metric,
) -> (Vec<i64>, Vec<Option<f64>>) {
    let cols: Vec<i64> = ranks
        .iter()
        .flat_map(|r| r.steps.iter().map(|s| s.step.number))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut earliest: Vec<Option<i64>> = vec![None; cols.len()];
    for (k, r) in ranks.iter().enumerate() {
        let off = offsets_ns.get(k).copied().unwrap_or(0);
        for s in &r.steps {
            if let Ok(c) = cols.binary_search(&s.step.number) {
                let t = s.start_ns - off;
                earliest[c] = Some(earliest[c].map_or(t, |e: i64| e.min(t)));
            }
        }
    }
    let mut values = vec![None; ranks.len() * cols.len()];
    for (k, r) in ranks.iter().enumerate() {
        let off = offsets_ns.get(k).copied().unwrap_or(0);
        for s in &r.steps {
            let Ok(c) = cols.binary_search(&s.step.number) else {
                continue;
            };
            let d = s.device(r.primary_device);
            let dur = s.step.dur();
            let v = match metric {
                Metric::StepTime => dur as f64,
                // A step the device recorded nothing of has no device figure.
                Metric::IdleRatio | Metric::ExposedComm if !d.has_data() => continue,
                Metric::IdleRatio if dur > 0 && r.primary_device.is_some() => {
                    d.idle as f64 / dur as f64
                }
                Metric::IdleRatio => continue,
                Metric::ExposedComm => d.exposed_communication as f64,
                Metric::Input => s.input as f64,
                Metric::StartSkew => {
                    let e = earliest[c].unwrap_or(s.start_ns - off);
                    ((s.start_ns - off - e) as Ps * 1000) as f64
                }
            };
            values[k * cols.len() + c] = Some(v);
        }
    }
    (cols, values)
}
