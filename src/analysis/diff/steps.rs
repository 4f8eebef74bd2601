//! The steps a diff compares and which events a set of steps covers (HTA's iteration rule).

pub use crate::analysis::steps::Step;
use crate::analysis::steps::{StepOptions, StepSource, find};
use crate::model::{Capture, Ps};

/// The steps of `c` as the step finder finds them (`ProfilerStep#N` on host threads, XPlane
/// host events with a `step_num` stat, the XPlane `Steps` line; docs/steps.md), in time order;
/// none when the capture has no step annotation (a diff then compares whole captures).
pub fn find_steps(c: &Capture) -> Vec<Step> {
    let opts = StepOptions {
        input: None,
        ..StepOptions::default()
    };
    let found = find(c, &opts);
    if found.source == StepSource::Whole {
        Vec::new()
    } else {
        found.steps
    }
}

/// Which steps to compare: step numbers `lo..=hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepRange {
    /// First step number.
    pub lo: u64,
    /// Last step number (inclusive).
    pub hi: u64,
}

impl StepRange {
    /// Parses `N`, `A..B` (B excluded), `A..=B`, `A..` or `..B`.
    pub fn parse(s: &str) -> Result<StepRange, String> {
        let t = s.trim();
        let num = |x: &str| -> Result<u64, String> {
            x.trim()
                .parse::<u64>()
                .map_err(|_| format!("invalid step range `{s}` (examples: 10, 10..20, 10..=19)"))
        };
        let r = if let Some((a, b)) = t.split_once("..=") {
            StepRange {
                lo: if a.is_empty() { 0 } else { num(a)? },
                hi: num(b)?,
            }
        } else if let Some((a, b)) = t.split_once("..") {
            let lo = if a.is_empty() { 0 } else { num(a)? };
            let hi = if b.is_empty() {
                u64::MAX
            } else {
                num(b)?
                    .checked_sub(1)
                    .ok_or_else(|| format!("empty step range `{s}`"))?
            };
            StepRange { lo, hi }
        } else {
            let n = num(t)?;
            StepRange { lo: n, hi: n }
        };
        if r.lo > r.hi {
            return Err(format!("empty step range `{s}`"));
        }
        Ok(r)
    }

    /// True when step number `n` is in the range.
    pub fn contains(&self, n: i64) -> bool {
        u64::try_from(n).is_ok_and(|n| (self.lo..=self.hi).contains(&n))
    }
}

impl std::fmt::Display for StepRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.lo, self.hi) {
            (a, b) if a == b => write!(f, "{a}"),
            (a, u64::MAX) => write!(f, "{a}.."),
            (a, b) => write!(f, "{a}..={b}"),
        }
    }
}

/// Sorted, non-overlapping windows `[start, end)`; answers "does a time fall in one".
#[derive(Clone, Debug, Default)]
pub struct Windows(Vec<(Ps, Ps)>);

impl Windows {
    /// The union of the windows of `steps`.
    pub fn of(steps: &[Step]) -> Windows {
        let mut w: Vec<(Ps, Ps)> = steps.iter().map(|s| (s.start, s.end)).collect();
        w.sort_unstable();
        let mut out: Vec<(Ps, Ps)> = Vec::with_capacity(w.len());
        for (a, b) in w {
            match out.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => out.push((a, b)),
            }
        }
        Windows(out)
    }

    /// True when `t` lies in a window.
    pub fn contains(&self, t: Ps) -> bool {
        let i = self.0.partition_point(|w| w.1 <= t);
        self.0.get(i).is_some_and(|w| w.0 <= t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges() {
        assert_eq!(StepRange::parse("7"), Ok(StepRange { lo: 7, hi: 7 }));
        assert_eq!(StepRange::parse("10..20"), Ok(StepRange { lo: 10, hi: 19 }));
        assert_eq!(
            StepRange::parse("10..=20"),
            Ok(StepRange { lo: 10, hi: 20 })
        );
        assert_eq!(StepRange::parse("..3").map(|r| (r.lo, r.hi)), Ok((0, 2)));
        assert!(StepRange::parse("5..5").is_err());
        assert!(StepRange::parse("..0").is_err());
        assert!(StepRange::parse("x").is_err());
        assert_eq!(
            StepRange::parse("10..20").map(|r| r.to_string()),
            Ok("10..=19".into())
        );
        let r = StepRange { lo: 0, hi: 3 };
        assert!(r.contains(0) && r.contains(3) && !r.contains(4) && !r.contains(-1));
    }

    #[test]
    fn windows_contain_half_open() {
        let w = Windows::of(&[
            Step {
                number: 1,
                start: 10,
                end: 20,
                partial: false,
            },
            Step {
                number: 2,
                start: 20,
                end: 30,
                partial: false,
            },
            Step {
                number: 4,
                start: 50,
                end: 60,
                partial: false,
            },
        ]);
        assert!(!w.contains(9));
        assert!(w.contains(10) && w.contains(25) && w.contains(59));
        assert!(!w.contains(30) && !w.contains(45) && !w.contains(60));
    }
}
