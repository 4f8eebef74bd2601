//! What a lane looks like in one screen column, and where the columns fall.

use crate::model::{NO_SLICE, Ps};

/// Summary of one lane within one screen column `[a, b)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Number of slices overlapping the column (a zero-length slice at `t` overlaps when
    /// `a <= t < b`).
    pub count: u32,
    /// The overlapping slice with the greatest **full** duration (`dur`, not clipped to the
    /// column: a slice that only partially overlaps the column competes with its whole length,
    /// as in Perfetto's slice mipmap); ties go to the earliest (lowest id, i.e. earliest start).
    /// `NO_SLICE` when `count == 0`.
    pub longest: u32,
    /// Time within the column covered by slices of this lane (each slice clipped to `[a, b)`).
    pub busy: Ps,
}

impl Cell {
    /// An empty cell.
    pub const EMPTY: Cell = Cell {
        count: 0,
        longest: NO_SLICE,
        busy: 0,
    };
}

/// Column boundary `k` of `cols` columns over `[t0, t1)`. Column `k` of a level-of-detail query
/// is `[column_edge(k), max(column_edge(k + 1), column_edge(k) + 1))`.
#[inline]
pub fn column_edge(t0: Ps, t1: Ps, cols: usize, k: usize) -> Ps {
    if cols == 0 {
        return t0;
    }
    let span = i128::from(t1) - i128::from(t0);
    (i128::from(t0) + span * k as i128 / cols as i128) as Ps
}
