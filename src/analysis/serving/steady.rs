//! TraceLens's steady-state window over a serving trace's iterations
//! (`TraceUtils/split_inference/steady_state_window.py`, docs/conceptual/inference-analysis.md):
//!
//! 1. Regions (`identify_steady_state_regions`): an iteration is near the peak when its request
//!    count R_C + R_G is within max(1, t·peak) of the capture's peak (t = 0.1 with at least
//!    `num_steps` iterations, else 0.2). Outside a region, near-peak iterations are counted;
//!    once the count passes 5 a region opens at the iteration that many back; inside it, every
//!    iteration off the peak takes one off the count and the region closes (end exclusive)
//!    when the count reaches 0. Without any region, the middle is kept: δ = min(n, max(8,
//!    num_steps − n)) and the region is [δ/2, n − δ/2).
//! 2. Window (`find_steady_state_window`, mode `mixed`): in the largest region, windows of
//!    `num_steps` iterations starting every ⌊num_steps / min(num_steps/2, 10)⌋; among those with
//!    a prefill-bearing iteration (if any), the one whose share of iterations with context
//!    requests is closest to that share over all regions, ties to the most requests on
//!    average. A region shorter than `num_steps` is the window whole.
//!
//! As in TraceLens, a region still open at the last iteration ends at that iteration's index
//! (so the last iteration is left out, with the ramp-down).

/// TraceLens's default window size (`--num-steps`).
pub const NUM_STEPS: usize = 32;

/// What the window needs of one iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Detail {
    /// R_C + R_G.
    pub requests: u64,
    /// R_C > 0 (prefill-bearing: prefill or mixed).
    pub has_context: bool,
}

/// Why an iteration is outside the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Before the first steady-state region: concurrency still ramping up.
    RampUp,
    /// After the last region: requests finishing.
    RampDown,
    /// Between two regions: concurrency dropped below the peak.
    BelowPeak,
    /// In a region, but not the largest one.
    SmallerRegion,
    /// In the largest region, outside the window chosen in it.
    OutsideWindow,
    /// No region found: the first / last iterations are dropped (TraceLens's fallback).
    Trimmed,
}

impl Reason {
    /// Lower-case words for people.
    pub fn describe(self) -> &'static str {
        match self {
            Reason::RampUp => "ramp-up (before the steady state)",
            Reason::RampDown => "ramp-down (after the steady state)",
            Reason::BelowPeak => "concurrency below the peak (between steady-state regions)",
            Reason::SmallerRegion => "in a shorter steady-state region",
            Reason::OutsideWindow => "steady state, outside the window chosen",
            Reason::Trimmed => "no steady state found: first / last iterations trimmed",
        }
    }
}

/// A run of consecutive iterations left out for one reason (indices, inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Excluded {
    /// First iteration index.
    pub first: usize,
    /// Last iteration index.
    pub last: usize,
    /// Why.
    pub reason: Reason,
}

/// The steady-state window of a run of iterations.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Window {
    /// First iteration index in the window.
    pub start: usize,
    /// One past the last.
    pub end: usize,
    /// Steady-state regions [start, end).
    pub regions: Vec<(usize, usize)>,
    /// No region was found (the middle was kept).
    pub fallback: bool,
    /// The peak request count.
    pub peak_requests: u64,
    /// The near-peak tolerance used: max(1, t·peak).
    pub tolerance: f64,
    /// Share of prefill-bearing iterations over all regions (the target).
    pub reference_ratio: f64,
    /// That share in the window.
    pub window_ratio: f64,
    /// Iterations outside the window, in runs.
    pub excluded: Vec<Excluded>,
}

/// Steady-state regions and the peak (`identify_steady_state_regions`).
pub fn regions(d: &[Detail], num_steps: usize) -> (Vec<(usize, usize)>, u64, f64, bool) {
    let n = d.len();
    let Some(peak) = d.iter().map(|x| x.requests).max() else {
        return (Vec::new(), 0, 1.0, true);
    };
    let thresh = if n >= num_steps { 0.1 } else { 0.2 };
    let tol = (thresh * peak as f64).max(1.0);
    let (mut started, mut count, mut start_index) = (false, 0i64, 0usize);
    let mut out = Vec::new();
    for (i, x) in d.iter().enumerate() {
        if (x.requests as f64 - peak as f64).abs() <= tol {
            if !started {
                count += 1;
            }
        } else if started {
            count -= 1;
        }
        if count > 5 && !started {
            started = true;
            start_index = (i as i64 - count + 1).max(0) as usize;
        }
        if count <= 0 && started {
            out.push((start_index, i));
            started = false;
            count = 0;
        }
    }
    if started {
        out.push((start_index, n - 1));
    }
    if out.is_empty() {
        let delta = n.min(8usize.max(num_steps.saturating_sub(n)));
        let start = delta / 2;
        let end = (start + 1).max(n.min(n - delta / 2));
        return (vec![(start, end)], peak, tol, true);
    }
    (out, peak, tol, false)
}

fn pd_count(d: &[Detail]) -> usize {
    d.iter().filter(|x| x.has_context).count()
}

fn slice(d: &[Detail], s: usize, e: usize) -> &[Detail] {
    d.get(s..e.min(d.len())).unwrap_or(&[])
}

/// The steady-state window (mode `mixed`, no CONC / OSL / R given) and what it leaves out;
/// `None` without iterations.
pub fn window(d: &[Detail], num_steps: usize) -> Option<Window> {
    if d.is_empty() || num_steps == 0 {
        return None;
    }
    let (regs, peak, tol, fallback) = regions(d, num_steps);
    // compute_reference_pd_ratio: the largest region (first of equal size), the share over all.
    let (mut total, mut pd) = (0usize, 0usize);
    let mut largest = *regs.first()?;
    for &(s, e) in &regs {
        let w = slice(d, s, e);
        total += w.len();
        pd += pd_count(w);
        if w.len() > slice(d, largest.0, largest.1).len() {
            largest = (s, e);
        }
    }
    let reference = if total > 0 {
        pd as f64 / total as f64
    } else {
        0.0
    };
    let divider = (num_steps / 2).clamp(1, 10);
    let step = (num_steps / divider).max(1);
    let (s, e) = largest;
    // (start, end, pd_ratio, avg_requests, pd_count)
    let mut cand: Vec<(usize, usize, f64, f64, usize)> = Vec::new();
    let stats = |a: usize, b: usize| {
        let w = slice(d, a, b);
        let pdc = pd_count(w);
        let ratio = if w.is_empty() {
            0.0
        } else {
            pdc as f64 / w.len() as f64
        };
        let avg = if w.is_empty() {
            0.0
        } else {
            w.iter().map(|x| x.requests as f64).sum::<f64>() / w.len() as f64
        };
        (a, b, ratio, avg, pdc)
    };
    if e.saturating_sub(s) >= num_steps {
        let mut s1 = s;
        while s1 + num_steps <= e {
            cand.push(stats(s1, s1 + num_steps));
            s1 += step;
        }
    } else {
        cand.push(stats(s, e));
    }
    let with_pd: Vec<_> = cand.iter().copied().filter(|c| c.4 > 0).collect();
    let pool = if with_pd.is_empty() { cand } else { with_pd };
    let mut best = *pool.first()?;
    for c in &pool[1..] {
        let key = |c: &(usize, usize, f64, f64, usize)| ((c.2 - reference).abs(), -c.3);
        let (a, b) = (key(c), key(&best));
        if a.0 < b.0 || (a.0 == b.0 && a.1 < b.1) {
            best = *c;
        }
    }
    let (ws, we) = (best.0, best.1.min(d.len()));
    let first_region = regs.iter().map(|r| r.0).min().unwrap_or(0);
    let last_region = regs.iter().map(|r| r.1).max().unwrap_or(0);
    let mut excluded: Vec<Excluded> = Vec::new();
    for i in (0..d.len()).filter(|&i| i < ws || i >= we) {
        let reason = if fallback {
            Reason::Trimmed
        } else if i >= s && i < e {
            Reason::OutsideWindow
        } else if regs.iter().any(|&(a, b)| i >= a && i < b) {
            Reason::SmallerRegion
        } else if i < first_region {
            Reason::RampUp
        } else if i >= last_region {
            Reason::RampDown
        } else {
            Reason::BelowPeak
        };
        match excluded.last_mut() {
            Some(x) if x.reason == reason && x.last + 1 == i => x.last = i,
            _ => excluded.push(Excluded {
                first: i,
                last: i,
                reason,
            }),
        }
    }
    Some(Window {
        start: ws,
        end: we,
        regions: regs,
        fallback,
        peak_requests: peak,
        tolerance: tol,
        reference_ratio: reference,
        window_ratio: best.2,
        excluded,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(r: u64) -> Detail {
        Detail {
            requests: r,
            has_context: false,
        }
    }
    fn mix(r: u64) -> Detail {
        Detail {
            requests: r,
            has_context: true,
        }
    }

    #[test]
    fn one_iteration_is_its_own_window() {
        let w = window(&[dec(32)], NUM_STEPS).unwrap();
        assert_eq!((w.start, w.end), (0, 1));
        assert!(w.fallback);
        assert!(w.excluded.is_empty());
        assert!(window(&[], NUM_STEPS).is_none());
    }

    #[test]
    fn ramp_up_steady_ramp_down() {
        // 1..=8 ramping up, 40 at the peak of 10 (one mixed every 5th), 8 ramping down.
        let mut d: Vec<Detail> = (1..=8).map(mix).collect();
        d.extend((0..40).map(|k| if k % 5 == 0 { mix(10) } else { dec(10) }));
        d.extend((1..=8).rev().map(dec));
        let (regs, peak, tol, fb) = regions(&d, NUM_STEPS);
        assert_eq!(peak, 10);
        assert_eq!(tol, 1.0); // n = 56 ≥ 32: t = 0.1, max(1, 1.0)
        assert!(!fb);
        // Near peak: 9 (index 7 is 8 → |8-10| = 2 > 1: no; index 8.. yes). The count passes 5
        // at index 13: the region opens at 13 − 6 + 1 = 8. It closes after 6 misses: the
        // ramp-down values 8,7,6,5,4,3 at 48..53 → closes at 53.
        assert_eq!(regs, vec![(8, 53)]);
        let w = window(&d, NUM_STEPS).unwrap();
        // TraceLens's find_steady_state_window gives [11, 43) on this run (docs/oracle).
        assert_eq!((w.start, w.end), (11, 43));
        assert_eq!(w.excluded.first().map(|x| x.reason), Some(Reason::RampUp));
        assert_eq!(w.excluded.last().map(|x| x.reason), Some(Reason::RampDown));
        let n_out: usize = w.excluded.iter().map(|x| x.last - x.first + 1).sum();
        assert_eq!(n_out, d.len() - 32);
    }

    #[test]
    fn window_closest_to_the_reference_share() {
        // 64 iterations at the peak; mixed ones only in the second half: the reference share
        // is 16/63 over the region [0, 63); the chosen window holds mixed iterations.
        let d: Vec<Detail> = (0..64)
            .map(|k| {
                if k >= 32 && k % 2 == 0 {
                    mix(8)
                } else {
                    dec(8)
                }
            })
            .collect();
        let w = window(&d, NUM_STEPS).unwrap();
        assert_eq!(w.regions, vec![(0, 63)]);
        assert!((w.reference_ratio - 16.0 / 63.0).abs() < 1e-12);
        // Candidates start at 0, 3, …, 30; ratios grow by 1/32 or 2/32 per step; the closest
        // to 0.254 is start 15 (9/32 = 0.281) vs 12 (7/32=0.219)? |0.281-0.254| = 0.027,
        // |0.219-0.254| = 0.035: start 15.
        assert_eq!((w.start, w.end), (15, 47));
        assert_eq!(w.excluded[0].reason, Reason::OutsideWindow);
        // The region ends at the last index (TraceLens's quirk): iteration 63 is ramp-down.
        assert_eq!(
            w.excluded.last().map(|x| (x.first, x.reason)),
            Some((63, Reason::RampDown))
        );
    }

    #[test]
    fn two_regions_and_the_fallback_as_tracelens() {
        // Both checked with TraceLens's own functions (docs/steps.md).
        let mut d: Vec<Detail> = (1..=4).map(dec).collect();
        d.extend((0..30).map(|k| if k % 4 == 0 { mix(20) } else { dec(20) }));
        d.extend(std::iter::repeat_n(dec(5), 8));
        d.extend((0..50).map(|k| if k % 3 == 0 { mix(20) } else { dec(20) }));
        d.extend(std::iter::repeat_n(dec(3), 4));
        let w = window(&d, NUM_STEPS).unwrap();
        assert_eq!(w.regions, vec![(4, 39), (42, 95)]);
        assert_eq!((w.start, w.end), (63, 95));
        let reasons: Vec<(usize, usize, Reason)> = w
            .excluded
            .iter()
            .map(|x| (x.first, x.last, x.reason))
            .collect();
        assert_eq!(
            reasons,
            vec![
                (0, 3, Reason::RampUp),
                (4, 38, Reason::SmallerRegion),
                (39, 41, Reason::BelowPeak),
                (42, 62, Reason::OutsideWindow),
                (95, 95, Reason::RampDown),
            ]
        );
        // Ten iterations without a steady state: TraceLens keeps [5, 6).
        let d: Vec<Detail> = (0..10)
            .map(|k| Detail {
                requests: k % 7 + 1,
                has_context: k % 2 == 0,
            })
            .collect();
        let w = window(&d, NUM_STEPS).unwrap();
        assert!(w.fallback);
        assert_eq!((w.start, w.end), (5, 6));
        assert_eq!(w.excluded.len(), 2);
        assert!(w.excluded.iter().all(|x| x.reason == Reason::Trimmed));
    }
}
