//! Aligning two event-name sequences (issue 26 §4): Myers' O((N+M)D) diff on name ids, run in
//! windows so a million kernels align in bounded memory.
//!
//! The common prefix and suffix are matched first. The rest is cut into windows of
//! 2 × `window` events, split between the sides in proportion to what is left of each (so both
//! windows cover about the same share of their sequence when one side runs more events); each
//! window is aligned with Myers' greedy forward algorithm, which finds a shortest edit script
//! (so a longest common subsequence) of the window. Only the first half of a window's script is
//! kept — cut after its last match past the quarter mark, where both sides agree — and the next
//! window starts there, so a window's arbitrary end never shapes the result. When a window needs
//! more than `max_d` edits, the search stops: the window is aligned along the furthest-reaching
//! `max_d`-edit path (a valid alignment, the most matches that many edits reach, not necessarily
//! minimal), the result counts it in [`Alignment::fallback_windows`] and
//! [`Alignment::fallback_events`], and the next window starts where that path ended; after a
//! fallback, a window pair without any name in common is replaced whole (counted the same way)
//! rather than searched to the cap, so unrelated streams align in O(N + M). Every event of both
//! sides is in the result, in order. A block of more than a window of events with names the
//! other side's window lacks (a long run inserted on one side) is aligned as replaced: the
//! other side's events there are marked removed.
//!
//! Memory: the output (two `u32` per aligned row, at most N + M rows) plus, per window, the
//! Myers trace ((max_d + 1)(max_d + 2) / 2 `i32`) and a script of at most 2 × `window` steps.

/// "No partner": the other side of an inserted or deleted row.
pub const NONE: u32 = u32::MAX;

/// How [`align`] cuts its work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlignOptions {
    /// A window holds 2 × `window` events of both sides together (≥ 2).
    pub window: usize,
    /// Edits one window may need before the greedy fallback (≥ 1).
    pub max_d: usize,
}

impl Default for AlignOptions {
    fn default() -> Self {
        AlignOptions {
            window: 4096,
            max_d: 512,
        }
    }
}

/// One aligned row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Event `.0` of A and event `.1` of B have the same name.
    Match(u32, u32),
    /// Event of B only (added).
    Insert(u32),
    /// Event of A only (removed).
    Delete(u32),
}

/// The alignment of sequences A and B: parallel arrays, one entry per aligned row, in order
/// on both sides (every index of A and of B appears once).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Alignment {
    /// Per row: the index in A, or [`NONE`] (inserted).
    pub a: Vec<u32>,
    /// Per row: the index in B, or [`NONE`] (deleted).
    pub b: Vec<u32>,
    /// Rows with both sides.
    pub matched: usize,
    /// Rows of B only.
    pub inserted: usize,
    /// Rows of A only.
    pub deleted: usize,
    /// Windows aligned with Myers (the common prefix and suffix need none).
    pub windows: usize,
    /// Windows that needed more than `max_d` edits and were aligned greedily.
    pub fallback_windows: usize,
    /// Events (A + B) aligned in those windows.
    pub fallback_events: usize,
}

impl Alignment {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.a.len()
    }

    /// True without rows.
    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    /// Row `r`.
    pub fn op(&self, r: usize) -> Option<Op> {
        match (*self.a.get(r)?, *self.b.get(r)?) {
            (NONE, NONE) => None,
            (NONE, y) => Some(Op::Insert(y)),
            (x, NONE) => Some(Op::Delete(x)),
            (x, y) => Some(Op::Match(x, y)),
        }
    }

    /// Every row in order.
    pub fn ops(&self) -> impl Iterator<Item = Op> + '_ {
        (0..self.len()).filter_map(|r| self.op(r))
    }

    /// Bytes held by the row arrays.
    pub fn heap_bytes(&self) -> usize {
        (self.a.capacity() + self.b.capacity()) * std::mem::size_of::<u32>()
    }

    fn push(&mut self, x: u32, y: u32) {
        self.a.push(x);
        self.b.push(y);
        match (x, y) {
            (NONE, _) => self.inserted += 1,
            (_, NONE) => self.deleted += 1,
            _ => self.matched += 1,
        }
    }
}

/// Aligns `a` with `b` (name ids in a space shared by both): see the module doc.
pub fn align(a: &[u32], b: &[u32], opts: AlignOptions) -> Alignment {
    let window = opts.window.max(2);
    let max_d = opts.max_d.max(1);
    let (n, m) = (a.len(), b.len());
    let mut out = Alignment::default();
    out.a.reserve(n.max(m));
    out.b.reserve(n.max(m));
    let mut suffix = 0;
    while suffix < n && suffix < m && a[n - 1 - suffix] == b[m - 1 - suffix] {
        suffix += 1;
    }
    let (n_end, m_end) = (n - suffix, m - suffix);
    let mut my = Myers::default();
    let mut seen = Seen::new(a, b);
    let mut fell_back = false;
    let (mut i, mut j) = (0usize, 0usize);
    loop {
        while i < n_end && j < m_end && a[i] == b[j] {
            out.push(i as u32, j as u32);
            i += 1;
            j += 1;
        }
        if i == n_end || j == m_end {
            break;
        }
        // 2 × `window` events split in proportion to what is left of each side, so both
        // windows cover about the same share of their sequence.
        let (ra, rb) = (n_end - i, m_end - j);
        let wa = ((2 * window) as u128 * ra as u128 / (ra + rb) as u128) as usize;
        let wa = wa.clamp(1, 2 * window - 1);
        let wb = 2 * window - wa;
        let (ae, be) = ((i + wa).min(n_end), (j + wb).min(m_end));
        let last = ae == n_end && be == m_end;
        out.windows += 1;
        // After a fallback, a window pair without a name in common is replaced whole (its
        // LCS is empty) instead of searched to the cap: unrelated streams cost O(N + M).
        if fell_back && seen.disjoint(&a[i..ae], &b[j..be]) {
            for x in i..ae {
                out.push(x as u32, NONE);
            }
            for y in j..be {
                out.push(NONE, y as u32);
            }
            out.fallback_windows += 1;
            out.fallback_events += (ae - i) + (be - j);
            (i, j) = (ae, be);
            continue;
        }
        let complete = my.run(&a[i..ae], &b[j..be], max_d);
        let take = if complete && !last {
            half(&my.steps, (wa / 2).max(1), (wb / 2).max(1))
        } else {
            my.steps.len()
        };
        let (mut da, mut db) = (0usize, 0usize);
        for &(x, y) in &my.steps[..take] {
            let gx = if x == NONE {
                NONE
            } else {
                (i + x as usize) as u32
            };
            let gy = if y == NONE {
                NONE
            } else {
                (j + y as usize) as u32
            };
            out.push(gx, gy);
            da += usize::from(x != NONE);
            db += usize::from(y != NONE);
        }
        if !complete {
            out.fallback_windows += 1;
            out.fallback_events += da + db;
        }
        fell_back = !complete;
        i += da;
        j += db;
    }
    for x in i..n_end {
        out.push(x as u32, NONE);
    }
    for y in j..m_end {
        out.push(NONE, y as u32);
    }
    for k in 0..suffix {
        out.push((n_end + k) as u32, (m_end + k) as u32);
    }
    out
}

/// Tells window pairs without a name in common: a stamp per name id (ids below 4 M), else a
/// hash set.
struct Seen {
    stamp: Vec<u32>,
    generation: u32,
    set: rustc_hash::FxHashSet<u32>,
    dense: bool,
}

impl Seen {
    fn new(a: &[u32], b: &[u32]) -> Seen {
        let max = a.iter().chain(b).copied().max().unwrap_or(0) as usize;
        let dense = max < (1 << 22);
        Seen {
            stamp: Vec::new(),
            generation: 0,
            set: Default::default(),
            dense,
        }
    }

    /// True when no name of `a` occurs in `b`.
    fn disjoint(&mut self, a: &[u32], b: &[u32]) -> bool {
        if !self.dense {
            self.set.clear();
            self.set.extend(a.iter().copied());
            return !b.iter().any(|y| self.set.contains(y));
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.fill(0);
            self.generation = 1;
        }
        for &x in a {
            let x = x as usize;
            if x >= self.stamp.len() {
                self.stamp.resize(x + 1, 0);
            }
            self.stamp[x] = self.generation;
        }
        !b.iter()
            .any(|&y| self.stamp.get(y as usize) == Some(&self.generation))
    }
}

/// How many steps of a complete window script to keep: up to where A has used `ha` events or B
/// `hb`, cut back after the last match when that keeps at least half of it.
fn half(steps: &[(u32, u32)], ha: usize, hb: usize) -> usize {
    let (mut ca, mut cb) = (0usize, 0usize);
    let mut stop = steps.len();
    for (k, &(x, y)) in steps.iter().enumerate() {
        ca += usize::from(x != NONE);
        cb += usize::from(y != NONE);
        if ca >= ha || cb >= hb {
            stop = k + 1;
            break;
        }
    }
    match steps[..stop]
        .iter()
        .rposition(|&(x, y)| x != NONE && y != NONE)
    {
        Some(p) if p + 1 >= stop / 2 => p + 1,
        _ => stop,
    }
}

/// Myers' greedy forward search with its trace, reused across windows.
#[derive(Default)]
struct Myers {
    /// Furthest x per (d, diagonal k), k = −d, −d + 2, …, d; −1 where unreachable.
    trace: Vec<i32>,
    /// The script found: (x, y) for a match, (x, NONE) a deletion, (NONE, y) an insertion.
    steps: Vec<(u32, u32)>,
}

/// Offset of row `d` in the trace.
fn base(d: i64) -> usize {
    (d * (d + 1) / 2) as usize
}

impl Myers {
    /// The furthest x on diagonal k at row `d - 1` (−1 outside the row or unreachable).
    fn prev(&self, d: i64, k: i64) -> i64 {
        if k < -(d - 1) || k > d - 1 {
            return -1;
        }
        self.trace
            .get(base(d - 1) + ((k + d - 1) / 2) as usize)
            .map_or(-1, |&x| i64::from(x))
    }

    /// Where the d-path on diagonal k starts its snake: (x, came by an insertion), or `None`
    /// when no (d − 1)-path leads there inside the window.
    fn start(&self, d: i64, k: i64, n: i64, m: i64) -> Option<(i64, bool)> {
        if d == 0 {
            return Some((0, false));
        }
        let down = self.prev(d, k + 1);
        let right = self.prev(d, k - 1);
        let down_x = if down >= 0 && down - k <= m { down } else { -1 };
        let right_x = if right >= 0 && right < n {
            right + 1
        } else {
            -1
        };
        if down_x < 0 && right_x < 0 {
            None
        } else if right_x > down_x {
            Some((right_x, false))
        } else {
            Some((down_x, true))
        }
    }

    /// Aligns one window; true when the script reaches both ends within `max_d` edits, false
    /// when it stops at the furthest point `max_d` edits reach.
    fn run(&mut self, a: &[u32], b: &[u32], max_d: usize) -> bool {
        let (n, m) = (a.len() as i64, b.len() as i64);
        let max_d = (max_d as i64).min(n + m);
        self.trace.clear();
        self.steps.clear();
        // (d, k) of the furthest point seen, and its (x + y, −distance from the window's
        // diagonal): the furthest point, the most balanced among equals.
        let mut best = (0i64, 0i64);
        let mut best_key = (-1i64, i64::MIN);
        let mut end = None;
        'search: for d in 0..=max_d {
            for idx in 0..=d {
                let k = 2 * idx - d;
                let Some((x0, _)) = self.start(d, k, n, m) else {
                    self.trace.push(-1);
                    continue;
                };
                let mut x = x0;
                while x < n && x - k < m && a[x as usize] == b[(x - k) as usize] {
                    x += 1;
                }
                self.trace.push(x as i32);
                let y = x - k;
                if x == n && y == m {
                    end = Some((d, k));
                    break 'search;
                }
                let key = (x + y, -(x * m - y * n).abs());
                if key > best_key {
                    best_key = key;
                    best = (d, k);
                }
            }
        }
        let complete = end.is_some();
        let (mut d, mut k) = end.unwrap_or(best);
        let mut x = self
            .trace
            .get(base(d) + ((k + d) / 2) as usize)
            .map_or(0, |&x| i64::from(x));
        loop {
            let (x0, insert) = self.start(d, k, n, m).unwrap_or((x, false));
            while x > x0 {
                x -= 1;
                self.steps.push((x as u32, (x - k) as u32));
            }
            if d == 0 {
                break;
            }
            if insert {
                self.steps.push((NONE, (x0 - k - 1) as u32));
                k += 1;
            } else {
                self.steps.push(((x0 - 1) as u32, NONE));
                k -= 1;
            }
            d -= 1;
            x = self.prev(d + 1, k);
        }
        self.steps.reverse();
        complete
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// LCS length by the O(NM) table.
    fn lcs(a: &[u32], b: &[u32]) -> usize {
        let mut t = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                t[i][j] = if a[i] == b[j] {
                    t[i + 1][j + 1] + 1
                } else {
                    t[i + 1][j].max(t[i][j + 1])
                };
            }
        }
        t[0][0]
    }

    /// The rows replay both sequences exactly and match only equal names.
    fn check_replay(a: &[u32], b: &[u32], al: &Alignment) {
        let xs: Vec<u32> = al.a.iter().copied().filter(|&x| x != NONE).collect();
        let ys: Vec<u32> = al.b.iter().copied().filter(|&y| y != NONE).collect();
        assert_eq!(xs, (0..a.len() as u32).collect::<Vec<_>>());
        assert_eq!(ys, (0..b.len() as u32).collect::<Vec<_>>());
        for op in al.ops() {
            if let Op::Match(x, y) = op {
                assert_eq!(a[x as usize], b[y as usize]);
            }
        }
        assert_eq!(al.matched + al.deleted, a.len());
        assert_eq!(al.matched + al.inserted, b.len());
        assert_eq!(al.len(), al.matched + al.inserted + al.deleted);
    }

    #[test]
    fn inserted_removed_and_renamed_events() {
        // A: 1 2 3 4 5; B: 1 9 2 4 6 5 → 3 removed, 9 and 6 added.
        let (a, b) = (vec![1, 2, 3, 4, 5], vec![1, 9, 2, 4, 6, 5]);
        let al = align(&a, &b, AlignOptions::default());
        let ops: Vec<Op> = al.ops().collect();
        assert_eq!(
            ops,
            vec![
                Op::Match(0, 0),
                Op::Insert(1),
                Op::Match(1, 2),
                Op::Delete(2),
                Op::Match(3, 3),
                Op::Insert(4),
                Op::Match(4, 5),
            ]
        );
        assert_eq!((al.matched, al.inserted, al.deleted), (4, 2, 1));
        assert_eq!(al.fallback_windows, 0);
    }

    #[test]
    fn empty_and_identical_sequences() {
        let al = align(&[], &[], AlignOptions::default());
        assert!(al.is_empty());
        let al = align(&[1, 2], &[], AlignOptions::default());
        assert_eq!(al.deleted, 2);
        let al = align(&[], &[3], AlignOptions::default());
        assert_eq!(al.inserted, 1);
        let a: Vec<u32> = (0..10_000).map(|i| i % 200).collect();
        let al = align(&a, &a, AlignOptions::default());
        assert_eq!(al.matched, a.len());
        assert_eq!(al.windows, 0);
    }

    #[test]
    fn long_repeating_pattern_with_sparse_edits_aligns_optimally_in_windows() {
        // 20 000 events of a 50-name step pattern; B drops every 997th and adds one after
        // every 1 500th: the windows (of 256) find every match a global LCS finds.
        let a: Vec<u32> = (0..20_000u32).map(|i| i % 50).collect();
        let mut b = Vec::new();
        for (i, &x) in a.iter().enumerate() {
            if i % 997 != 500 {
                b.push(x);
            }
            if i % 1500 == 0 {
                b.push(1000 + i as u32);
            }
        }
        let opts = AlignOptions {
            window: 256,
            max_d: 64,
        };
        let al = align(&a, &b, opts);
        check_replay(&a, &b, &al);
        assert!(al.windows > 10, "{}", al.windows);
        assert_eq!(al.fallback_windows, 0);
        assert_eq!(al.deleted, 20, "{al:?}");
        assert_eq!(al.inserted, 14);
    }

    #[test]
    fn too_many_edits_fall_back_greedily_and_say_so() {
        let a: Vec<u32> = (0..3000).collect();
        let b: Vec<u32> = (10_000..13_000).collect();
        let al = align(
            &a,
            &b,
            AlignOptions {
                window: 512,
                max_d: 32,
            },
        );
        check_replay(&a, &b, &al);
        assert!(al.fallback_windows > 0);
        // One greedy window, then the rest replaced window by window (no name in common).
        assert_eq!(al.fallback_events, 6000);
        assert_eq!(al.matched, 0);
    }

    fn seq() -> impl Strategy<Value = Vec<u32>> {
        prop::collection::vec(0u32..6, 0..40)
    }

    proptest! {
        #[test]
        fn one_window_matches_the_lcs(a in seq(), b in seq()) {
            let al = align(&a, &b, AlignOptions { window: 64, max_d: 200 });
            check_replay(&a, &b, &al);
            prop_assert_eq!(al.fallback_windows, 0);
            prop_assert_eq!(al.matched, lcs(&a, &b));
        }

        #[test]
        fn small_windows_and_caps_still_replay_both_sides(
            a in seq(), b in seq(), window in 2usize..12, max_d in 1usize..8,
        ) {
            let al = align(&a, &b, AlignOptions { window, max_d });
            check_replay(&a, &b, &al);
            prop_assert!(al.matched <= lcs(&a, &b));
        }
    }
}
