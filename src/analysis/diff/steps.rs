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

/// Which steps to compare: step numbers `lo..=hi`, or (`by_position`) the `lo`-th to `hi`-th
/// step of each side in time order, counted from 1 — so two captures of one run whose step
/// numbers differ (5–10 and 16–21) compare step by step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepRange {
    /// First step number (position from 1 when `by_position`).
    pub lo: u64,
    /// Last step number (inclusive).
    pub hi: u64,
    /// `lo` and `hi` are positions in each side's steps, not step numbers.
    pub by_position: bool,
}

impl StepRange {
    /// Step numbers `lo..=hi`.
    pub fn numbers(lo: u64, hi: u64) -> StepRange {
        StepRange {
            lo,
            hi,
            by_position: false,
        }
    }

    /// Parses `N`, `A..B` (B excluded), `A..=B`, `A..` or `..B` (step numbers), or the same
    /// after `#` (positions from 1 in each side's steps: `#1..=3` are the first three).
    pub fn parse(s: &str) -> Result<StepRange, String> {
        let t = s.trim();
        let (by_position, t) = match t.strip_prefix('#') {
            Some(rest) => (true, rest.trim()),
            None => (false, t),
        };
        let num = |x: &str| -> Result<u64, String> {
            x.trim().parse::<u64>().map_err(|_| {
                format!(
                    "invalid step range `{s}` (step numbers: 10, 10..20, 10..=19; \
                     positions: #1..=3 for each side's first three)"
                )
            })
        };
        let first = if by_position { 1 } else { 0 };
        let r = if let Some((a, b)) = t.split_once("..=") {
            StepRange {
                lo: if a.is_empty() { first } else { num(a)? },
                hi: num(b)?,
                by_position,
            }
        } else if let Some((a, b)) = t.split_once("..") {
            let lo = if a.is_empty() { first } else { num(a)? };
            let hi = if b.is_empty() {
                u64::MAX
            } else {
                num(b)?
                    .checked_sub(1)
                    .ok_or_else(|| format!("empty step range `{s}`"))?
            };
            StepRange {
                lo,
                hi,
                by_position,
            }
        } else {
            let n = num(t)?;
            StepRange {
                lo: n,
                hi: n,
                by_position,
            }
        };
        if r.lo > r.hi {
            return Err(format!("empty step range `{s}`"));
        }
        if by_position && r.lo == 0 {
            return Err(format!("step positions count from 1: `{s}`"));
        }
        Ok(r)
    }

    /// True when step number `n` is in the range (of numbers).
    pub fn contains(&self, n: i64) -> bool {
        u64::try_from(n).is_ok_and(|n| (self.lo..=self.hi).contains(&n))
    }

    /// The steps of `all` (in time order) the range selects: by number, or by position.
    pub fn select(&self, all: Vec<Step>) -> Vec<Step> {
        if self.by_position {
            all.into_iter()
                .zip(1u64..)
                .filter(|(_, p)| (self.lo..=self.hi).contains(p))
                .map(|(st, _)| st)
                .collect()
        } else {
            all.into_iter()
                .filter(|st| self.contains(st.number))
                .collect()
        }
    }
}

impl std::fmt::Display for StepRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.by_position {
            f.write_str("#")?;
        }
        match (self.lo, self.hi) {
            (a, b) if a == b => write!(f, "{a}"),
            (a, u64::MAX) => write!(f, "{a}.."),
            (a, b) => write!(f, "{a}..={b}"),
        }
    }
}

/// Step numbers as few ranges: `5..=10`, `1, 3, 7..=9`; `none` when empty.
pub fn list_numbers(numbers: &[i64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let mut j = i;
        while j + 1 < numbers.len() && numbers[j + 1] == numbers[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => numbers[i].to_string(),
            1 => format!("{}, {}", numbers[i], numbers[j]),
            _ => format!("{}..={}", numbers[i], numbers[j]),
        });
        i = j + 1;
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
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
        assert_eq!(StepRange::parse("7"), Ok(StepRange::numbers(7, 7)));
        assert_eq!(StepRange::parse("10..20"), Ok(StepRange::numbers(10, 19)));
        assert_eq!(StepRange::parse("10..=20"), Ok(StepRange::numbers(10, 20)));
        assert_eq!(StepRange::parse("..3").map(|r| (r.lo, r.hi)), Ok((0, 2)));
        assert!(StepRange::parse("5..5").is_err());
        assert!(StepRange::parse("..0").is_err());
        assert!(StepRange::parse("x").is_err());
        assert_eq!(
            StepRange::parse("10..20").map(|r| r.to_string()),
            Ok("10..=19".into())
        );
        let r = StepRange::numbers(0, 3);
        assert!(r.contains(0) && r.contains(3) && !r.contains(4) && !r.contains(-1));
    }

    #[test]
    fn parses_positions() {
        let p = |lo, hi| StepRange {
            lo,
            hi,
            by_position: true,
        };
        assert_eq!(StepRange::parse("#1..=3"), Ok(p(1, 3)));
        assert_eq!(StepRange::parse(" # 2 "), Ok(p(2, 2)));
        assert_eq!(StepRange::parse("#..4"), Ok(p(1, 3)));
        assert_eq!(StepRange::parse("#2.."), Ok(p(2, u64::MAX)));
        assert!(StepRange::parse("#0").is_err());
        assert!(StepRange::parse("#").is_err());
        assert_eq!(
            StepRange::parse("#1..4").map(|r| r.to_string()),
            Ok("#1..=3".into())
        );
        let step = |number| Step {
            number,
            start: number * 10,
            end: number * 10 + 10,
            partial: false,
        };
        let all: Vec<Step> = (16..=21).map(step).collect();
        let got: Vec<i64> = p(1, 3)
            .select(all.clone())
            .iter()
            .map(|s| s.number)
            .collect();
        assert_eq!(got, [16, 17, 18]);
        assert!(StepRange::numbers(1, 3).select(all).is_empty());
    }

    #[test]
    fn lists_step_numbers_as_ranges() {
        assert_eq!(list_numbers(&[]), "none");
        assert_eq!(list_numbers(&[5, 6, 7, 8]), "5..=8");
        assert_eq!(list_numbers(&[1, 3, 4, 7, 8, 9]), "1, 3, 4, 7..=9");
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
