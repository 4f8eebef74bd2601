//! Folded stacks out: `frame;frame;…;leaf VALUE`, one line per distinct stack, sorted — what
//! `inferno-flamegraph`, `flamegraph.pl`, speedscope and flamelens read.

use super::tree::{FlameTree, Metric, Unit};
use crate::model::{Interner, Ps};

/// Replaces what would break a folded line inside a frame — space, `;`, tab, newline — with `_`,
/// as torch's `export_stacks` does; other control characters become `_` too.
pub fn sanitize_frame(name: &str, out: &mut String) {
    for ch in name.chars() {
        if ch == ' ' || ch == ';' || ch.is_control() {
            out.push('_');
        } else {
            out.push(ch);
        }
    }
}

/// Unit of time values in folded output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeUnit {
    /// Whole microseconds, truncated (torch's unit).
    #[default]
    Us,
    /// Whole nanoseconds, truncated.
    Ns,
}

impl TimeUnit {
    /// Picoseconds per unit.
    pub fn ps(self) -> Ps {
        match self {
            TimeUnit::Us => 1_000_000,
            TimeUnit::Ns => 1_000,
        }
    }
}

/// Folded lines of a tree, plus what was left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Folded {
    /// (stack, value), sorted by stack; values > 0.
    pub lines: Vec<(String, u64)>,
    /// Stacks whose value rounds to 0 in the unit (or is negative), left out.
    pub below_unit: u64,
}

impl Folded {
    /// The lines as text, one per line, each ending in `\n`.
    pub fn text(&self) -> String {
        let mut s = String::with_capacity(self.lines.iter().map(|l| l.0.len() + 12).sum());
        for (stack, v) in &self.lines {
            s.push_str(stack);
            s.push(' ');
            s.push_str(&v.to_string());
            s.push('\n');
        }
        s
    }

    /// Sum of the values.
    pub fn sum(&self) -> u64 {
        self.lines.iter().map(|l| l.1).sum()
    }
}

/// The folded stacks of `tree` for `metric`: per node its own share (self time, device time
/// launched directly, instance count; `Total` gives each node's inclusive time). Bytes trees
/// write bytes (`unit` applies to time only).
pub fn fold(tree: &FlameTree, strings: &Interner, metric: Metric, unit: TimeUnit) -> Folded {
    let mut out = Folded::default();
    let mut prefix: Vec<String> = vec![String::new(); tree.len()];
    for n in tree.nodes() {
        let p = tree.parent(n) as usize;
        let mut s = String::new();
        if p != 0 {
            s.push_str(prefix.get(p).map_or("", String::as_str));
            s.push(';');
        }
        sanitize_frame(tree.name_str(n, strings), &mut s);
        let v = tree.own_value(n, metric);
        let v = if metric.is_time() && tree.unit() == Unit::Time {
            v / unit.ps()
        } else {
            v
        };
        if v > 0 {
            out.lines.push((s.clone(), v as u64));
        } else if tree.own_value(n, metric) > 0 {
            out.below_unit += 1;
        }
        if let Some(slot) = prefix.get_mut(n as usize) {
            *slot = s;
        }
    }
    out.lines.sort_unstable();
    out
}

/// Sums torch-style lines (one per instance) per stack, sorted: what [`fold`] and the
/// `--torch` mode print.
pub fn sum_lines<'a>(lines: impl IntoIterator<Item = (&'a str, u64)>) -> Vec<(String, u64)> {
    let mut m: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    for (s, v) in lines {
        *m.entry(s).or_insert(0) += v;
    }
    m.into_iter().map(|(s, v)| (s.to_string(), v)).collect()
}

/// Parses folded text (`stack VALUE` per line) into (stack, value) pairs summed per stack;
/// returns the 1-based numbers of lines that are not `stack VALUE`.
pub fn parse_sum(text: &str) -> (Vec<(String, u64)>, Vec<usize>) {
    let mut bad = Vec::new();
    let mut pairs = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        match line.rsplit_once(' ') {
            Some((s, v)) => match v.trim().parse::<u64>() {
                Ok(v) => pairs.push((s, v)),
                Err(_) => bad.push(k + 1),
            },
            None => bad.push(k + 1),
        }
    }
    (sum_lines(pairs), bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::flame::tree::{ROOT, TreeBuilder};
    use crate::model::{Interner, StrId};

    #[test]
    fn frames_are_sanitized_like_torch() {
        let mut s = String::new();
        sanitize_frame("a b;c\td\ne\u{1b}", &mut s);
        assert_eq!(s, "a_b_c_d_e_");
    }

    #[test]
    fn fold_self_and_skip_below_unit() {
        let mut st = Interner::new();
        let a = st.intern("py main");
        let b = st.intern("aten::mm");
        let mut tb = TreeBuilder::new();
        let na = tb.child(ROOT, a);
        let nb = tb.child(na, b);
        tb.add(na, 5_000_000, 2_000_000, Some(0));
        tb.add(nb, 3_000_000, 3_000_000, Some(1));
        let nc = tb.child(na, StrId(b.0));
        assert_eq!(nc, nb);
        let t = tb.finish();
        let f = fold(&t, &st, Metric::SelfTime, TimeUnit::Us);
        assert_eq!(f.text(), "py_main 2\npy_main;aten::mm 3\n");
        let f = fold(&t, &st, Metric::Count, TimeUnit::Us);
        assert_eq!(f.sum(), 2);
        let (p, bad) = parse_sum("a;b 2\na;b 3\nc 1\nbroken\n");
        assert_eq!(p, vec![("a;b".to_string(), 5), ("c".to_string(), 1)]);
        assert_eq!(bad, vec![4]);
    }
}
