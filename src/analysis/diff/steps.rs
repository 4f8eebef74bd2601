//! Step windows of a capture: the host `ProfilerStep#N` slices, and which events a set of steps
//! covers (HTA's iteration rule).
//!
//! A small local helper until the steps module (issue on step detection) lands; it only knows
//! PyTorch's `ProfilerStep#N` annotations.

use crate::model::{Capture, Ps};
use rustc_hash::FxHashMap;

/// One step: its number and its window `[start, end)` (the union of the host `ProfilerStep#N`
/// slices with that number, one per thread that has it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// `N` of `ProfilerStep#N`.
    pub number: u64,
    /// Window start, ps.
    pub start: Ps,
    /// Window end, ps.
    pub end: Ps,
}

/// Parses `ProfilerStep#N` (spaces around `#` allowed, like HTA's regex).
pub fn step_number(name: &str) -> Option<u64> {
    let rest = name.strip_prefix("ProfilerStep")?.trim_start();
    let rest = rest.strip_prefix('#')?.trim_start();
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rest.parse().ok()
}

/// The host steps of `c`, sorted by number. Device-side copies of the annotation (GPU user
/// annotations on streams) are not steps.
pub fn find_steps(c: &Capture) -> Vec<Step> {
    let s = &c.slices;
    // Step numbers by name id, so each distinct name is parsed once.
    let mut by_name: FxHashMap<u32, Option<u64>> = FxHashMap::default();
    let mut windows: FxHashMap<u64, (Ps, Ps)> = FxHashMap::default();
    for i in 0..s.len() {
        let id = s.name[i];
        let n = *by_name
            .entry(id.index() as u32)
            .or_insert_with(|| step_number(c.strings.get(id)));
        let Some(n) = n else { continue };
        if s.kind(i).is_device() {
            continue;
        }
        let (a, b) = (s.start[i], s.end(i));
        windows
            .entry(n)
            .and_modify(|w| *w = (w.0.min(a), w.1.max(b)))
            .or_insert((a, b));
    }
    let mut out: Vec<Step> = windows
        .into_iter()
        .map(|(number, (start, end))| Step { number, start, end })
        .collect();
    out.sort_by_key(|st| st.number);
    out
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
    pub fn contains(&self, n: u64) -> bool {
        (self.lo..=self.hi).contains(&n)
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
    fn parses_step_names_and_ranges() {
        assert_eq!(step_number("ProfilerStep#12"), Some(12));
        assert_eq!(step_number("ProfilerStep # 3"), Some(3));
        assert_eq!(step_number("ProfilerStep#"), None);
        assert_eq!(step_number("ProfilerStep#1x"), None);
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
    }

    #[test]
    fn windows_contain_half_open() {
        let w = Windows::of(&[
            Step {
                number: 1,
                start: 10,
                end: 20,
            },
            Step {
                number: 2,
                start: 20,
                end: 30,
            },
            Step {
                number: 4,
                start: 50,
                end: 60,
            },
        ]);
        assert!(!w.contains(9));
        assert!(w.contains(10) && w.contains(25) && w.contains(59));
        assert!(!w.contains(30) && !w.contains(45) && !w.contains(60));
    }
}
