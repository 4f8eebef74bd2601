//! The filter of a table (`/` in the statistics and ranking tables): rows whose first column
//! matches the text fuzzily, ordered by match quality first and by the table's chosen column
//! among equally good matches — "Profiler" lists `ProfilerStep*` before a long kernel name that
//! happens to contain the letters.

use super::matcher::Matcher;
use super::query::{Mode, Query};

/// Keeps the rows of `order` whose text (`text(row)`) matches `pattern` (fuzzy, smart case) and
/// orders them by score, best first; equal scores keep their order in `order` (the sort the
/// user chose). An empty pattern keeps `order` as it is.
pub fn order_by_match<'a>(pattern: &str, order: &mut Vec<usize>, text: impl Fn(usize) -> &'a str) {
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return;
    }
    let q = Query {
        text: pattern.to_string(),
        mode: Mode::Fuzzy,
        ..Query::default()
    };
    let Ok(m) = Matcher::new(&q) else {
        order.clear();
        return;
    };
    let mut scored: Vec<(i64, usize, usize)> = order
        .iter()
        .enumerate()
        .filter_map(|(k, &row)| m.score(text(row)).map(|s| (s, k, row)))
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    order.clear();
    order.extend(scored.into_iter().map(|(_, _, row)| row));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strong_matches_first_then_the_chosen_order() {
        let names = [
            "void at::native::(anonymous namespace)::ProFIlE_kernel<float, PerReduction>",
            "ProfilerStep*",
            "aten::mm",
            "ProfilerStep#2",
        ];
        // The chosen sort (e.g. by self time) put the kernel first.
        let mut order = vec![0, 1, 2, 3];
        order_by_match("Profiler", &mut order, |i| names[i]);
        assert_eq!(order[..2], [1, 3], "ProfilerStep rows first");
        assert!(!order.contains(&2));
        // Equal scores keep the chosen order.
        let mut order = vec![3, 1];
        order_by_match("ProfilerStep", &mut order, |i| names[i]);
        assert_eq!(order, [3, 1]);
        let mut order = vec![2, 0];
        order_by_match("  ", &mut order, |i| names[i]);
        assert_eq!(order, [2, 0]);
    }
}
