//! The visible time window and its maths: clamp, zoom (one function for keys and the mouse
//! wheel), pan, fit and reveal. Pure: callers pass the capture span and the column count.

use crate::model::Ps;

/// The visible window `[t0, t1)` in capture picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Viewport {
    /// Window start.
    pub t0: Ps,
    /// Window end.
    pub t1: Ps,
}

/// What the window is clamped against: the capture span and the columns drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Earliest and latest time of the capture (`span.1 > span.0`).
    pub span: (Ps, Ps),
    /// Columns of the timeline body (≥ 1).
    pub cols: i64,
}

impl Bounds {
    /// Bounds of a capture span (an empty span gets a 1 µs width) over `cols` columns.
    pub fn new(span: (Ps, Ps), cols: i64) -> Bounds {
        let span = if span.1 > span.0 {
            span
        } else {
            (span.0, span.0 + 1_000_000)
        };
        Bounds {
            span,
            cols: cols.max(1),
        }
    }
}

impl Default for Viewport {
    fn default() -> Self {
        Viewport { t0: 0, t1: 1 }
    }
}

impl Viewport {
    /// Width of the window.
    pub fn width(&self) -> Ps {
        self.t1 - self.t0
    }

    /// Sets the window, clamped to at least 10 ps per column, at most two spans wide, never
    /// starting before the span (the capture's zero: no time shown is negative) and at most half
    /// a window beyond its end.
    pub fn set(&mut self, t0: Ps, t1: Ps, b: Bounds) {
        let (a, e) = b.span;
        let min_w = b.cols * 10;
        let max_w = ((e - a).saturating_mul(2)).max(min_w);
        let mut w = (t1 - t0).clamp(min_w, max_w);
        let mid = t0 + (t1 - t0) / 2;
        let mut s = mid - w / 2;
        let lo = a;
        let hi = e.saturating_add(w / 2);
        if s < lo {
            s = lo;
        }
        if s + w > hi {
            s = (hi - w).max(lo);
            w = w.min(hi - s);
        }
        self.t0 = s;
        self.t1 = s + w.max(1);
    }

    /// Shows the whole span.
    pub fn fit_all(&mut self, b: Bounds) {
        self.set(b.span.0, b.span.1, b);
    }

    /// Scales the window by `num / den` keeping `anchor` at the same screen position (keys
    /// anchor at the selection or the centre, the wheel at the pointer).
    pub fn zoom(&mut self, anchor: Ps, num: i64, den: i64, b: Bounds) {
        let w = i128::from(self.width());
        let nw = (w * i128::from(num) / i128::from(den)) as Ps;
        let left = (i128::from(anchor - self.t0) * i128::from(num) / i128::from(den)) as Ps;
        let t0 = anchor - left;
        self.set(t0, t0 + nw.max(1), b);
    }

    /// Moves the window by `quarters` quarter widths.
    pub fn pan(&mut self, quarters: i64, b: Bounds) {
        let d = self.width() / 4 * quarters;
        self.set(self.t0 + d, self.t1 + d, b);
    }

    /// Shows `[st, en)` with a 5 % margin on each side.
    pub fn fit_range(&mut self, st: Ps, en: Ps, b: Bounds) {
        let d = (en - st).max(1);
        let w = d + d / 10;
        self.set(st - (w - d) / 2, st - (w - d) / 2 + w, b);
    }

    /// Centres the window (keeping its width) on `[st, en)` unless it is fully visible or
    /// already covers the window.
    pub fn reveal(&mut self, st: Ps, en: Ps, b: Bounds) {
        if st >= self.t0 && en <= self.t1 {
            return;
        }
        if en > self.t0 && st < self.t1 && en - st > self.width() {
            return;
        }
        let w = self.width();
        let mid = st + (en - st) / 2;
        self.set(mid - w / 2, mid - w / 2 + w, b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const B: Bounds = Bounds {
        span: (0, 1_000_000),
        cols: 100,
    };

    #[test]
    fn zoom_keeps_the_anchor_and_round_trips() {
        let mut v = Viewport::default();
        v.fit_all(B);
        assert_eq!((v.t0, v.t1), (0, 1_000_000));
        v.zoom(250_000, 1, 2, B);
        assert_eq!((v.t0, v.t1), (125_000, 625_000));
        v.zoom(250_000, 2, 1, B);
        assert_eq!((v.t0, v.t1), (0, 1_000_000));
    }

    #[test]
    fn clamps_width_and_position() {
        let mut v = Viewport::default();
        v.set(10, 11, B);
        assert_eq!(v.width(), 1000, "10 ps per column at least");
        v.set(-10_000_000, 10_000_000, B);
        assert!(v.width() <= 2_000_000);
        v.pan(-100, B);
        assert_eq!(v.t0, 0, "never before the span's start");
    }

    proptest! {
        #[test]
        fn window_stays_sane(ops in prop::collection::vec((0u8..4, -2_000_000i64..3_000_000), 1..40)) {
            let mut v = Viewport::default();
            v.fit_all(B);
            for (op, t) in ops {
                match op {
                    0 => v.zoom(t, 1, 2, B),
                    1 => v.zoom(t, 2, 1, B),
                    2 => v.pan(t.signum(), B),
                    _ => v.reveal(t, t + 10, B),
                }
                prop_assert!(v.width() >= B.cols * 10);
                prop_assert!(v.width() <= 2 * 1_000_000);
                prop_assert!(v.t0 >= 0, "the window never starts before the span");
                prop_assert!(v.t1 <= 1_000_000 + v.width() / 2 + 1);
            }
        }
    }
}
