//! `Launch Stats`: per device and step group, the hull of the host's kernel launches with their
//! count, max and average launch time (TensorFlow's `DeriveEventsFromHostTrace`).

use super::derived::{DerivedEvent, DerivedKind, DerivedLine, LaunchValues};
use crate::model::{Interner, Ps, StrId};
use rustc_hash::FxHashMap;

/// One host launch event (`DeriveEventsFromHostTrace` input).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// `device_id` stat.
    pub device: i64,
    /// `group_id` stat.
    pub group: i64,
    /// Start, ps.
    pub start: Ps,
    /// Duration, ps.
    pub dur: Ps,
}

/// Per device id, one `Launch Stats` event per group: span = hull of the launches, with
/// `num_launches`, max and average launch time in µs.
pub fn derive_launch_stats(
    launches: &[Launch],
    strings: &mut Interner,
    step_names: &FxHashMap<i64, StrId>,
) -> Vec<(i64, DerivedLine)> {
    #[derive(Default)]
    struct Acc {
        lo: Ps,
        hi: Ps,
        n: u64,
        max: Ps,
        total: i128,
    }
    let mut by: FxHashMap<(i64, i64), Acc> = FxHashMap::default();
    for l in launches {
        let a = by.entry((l.device, l.group)).or_insert(Acc {
            lo: l.start,
            hi: l.start + l.dur,
            ..Acc::default()
        });
        a.lo = a.lo.min(l.start);
        a.hi = a.hi.max(l.start + l.dur);
        a.n += 1;
        a.max = a.max.max(l.dur);
        a.total += i128::from(l.dur);
    }
    let mut keys: Vec<(i64, i64)> = by.keys().copied().collect();
    keys.sort_unstable();
    let mut out: Vec<(i64, DerivedLine)> = Vec::new();
    for (dev, group) in keys {
        let Some(a) = by.get(&(dev, group)) else {
            continue;
        };
        let label = match step_names.get(&group) {
            Some(&s) => strings.get(s).to_string(),
            None => group.to_string(),
        };
        let name = strings.intern(&format!("Launch Stats for {label}"));
        let avg = (a.total / i128::from(a.n.max(1))) as f64 / 1e6;
        let ev = DerivedEvent {
            start: a.lo,
            dur: a.hi - a.lo,
            name,
            long_name: StrId::EMPTY,
            group_id: group,
        };
        let vals = (a.n, a.max as f64 / 1e6, avg);
        match out.last_mut() {
            Some((d, line)) if *d == dev => {
                line.events.push(ev);
                line.launch.push(vals);
            }
            _ => out.push((
                dev,
                DerivedLine {
                    kind: DerivedKind::LaunchStats,
                    from: None,
                    events: vec![ev],
                    launch: vec![vals],
                },
            )),
        }
    }
    // Start order within each line (the builder then needs no sort).
    for (_, line) in &mut out {
        let mut pairs: Vec<(DerivedEvent, LaunchValues)> = line
            .events
            .iter()
            .copied()
            .zip(line.launch.iter().copied())
            .collect();
        pairs.sort_by(|a, b| a.0.start.cmp(&b.0.start).then(b.0.dur.cmp(&a.0.dur)));
        line.events = pairs.iter().map(|p| p.0).collect();
        line.launch = pairs.iter().map(|p| p.1).collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::derived::{DERIVED_MIN, is_derived_line};
    use super::*;

    #[test]
    fn launch_stats_per_device_and_group() {
        let mut s = Interner::new();
        let l = |device, group, start, dur| Launch {
            device,
            group,
            start,
            dur,
        };
        let out = derive_launch_stats(
            &[
                l(0, 7, 100, 2_000_000),
                l(0, 7, 5_000_000, 4_000_000),
                l(1, 7, 0, 1),
            ],
            &mut s,
            &FxHashMap::default(),
        );
        assert_eq!(out.len(), 2);
        let (d, line) = &out[0];
        assert_eq!(*d, 0);
        let e = line.events[0];
        assert_eq!((e.start, e.dur), (100, 9_000_000 - 100));
        assert_eq!(line.launch[0], (2, 4.0, 3.0));
        assert_eq!(s.get(e.name), "Launch Stats for 7");
        assert!(is_derived_line(DERIVED_MIN + 3, "x"));
        assert!(is_derived_line(5, "TensorFlow Ops"));
        assert!(!is_derived_line(5, "Stream #1"));
    }
}
