//! Scores of the candidate events: z(idle fraction) + 0.6 · z(self time) (analysis.md §b step 4),
//! and their order in both modes.

use crate::model::Ps;
use std::cmp::Ordering;

/// Weight of the self-time z-score.
pub const SELF_WEIGHT: f64 = 0.6;

fn mean_std(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// z-scores with the unbiased (n − 1) standard deviation; 0 for every value when the deviation is
/// 0 or undefined (fewer than two values) — what torch intends.
pub fn z_default(x: &[f64]) -> Vec<f64> {
    if x.len() < 2 {
        return vec![0.0; x.len()];
    }
    let (m, s) = mean_std(x);
    if !(s > 0.0 && s.is_finite()) {
        return vec![0.0; x.len()];
    }
    x.iter().map(|v| (v - m) / s).collect()
}

/// torch's float32 z-scores: `(x − mean) / std` with the unbiased deviation, NaN when it is 0 or
/// undefined (one value). Mean and deviation are accumulated in f64 and rounded to f32, as
/// torch's CPU reductions do; the division is f32.
pub fn z_compat(x: &[f32]) -> Vec<f32> {
    let xd: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    if xd.is_empty() {
        return Vec::new();
    }
    let (m, s) = if xd.len() < 2 {
        (xd[0], f64::NAN)
    } else {
        mean_std(&xd)
    };
    let (m, s) = (m as f32, s as f32);
    x.iter().map(|&v| (v - m) / s).collect()
}

/// Default-mode scores of candidates with idle fractions `f` and self times `s` (ps).
pub fn scores_default(f: &[f64], s: &[Ps]) -> Vec<f64> {
    let sf: Vec<f64> = s.iter().map(|&v| v as f64).collect();
    let (zf, zs) = (z_default(f), z_default(&sf));
    zf.iter()
        .zip(&zs)
        .map(|(a, b)| a + SELF_WEIGHT * b)
        .collect()
}

/// Compat scores: float32 as in torch; self time in ns as torch stores it.
pub fn scores_compat(f: &[f64], s: &[Ps]) -> Vec<f32> {
    let ff: Vec<f32> = f.iter().map(|&v| v as f32).collect();
    let sf: Vec<f32> = s.iter().map(|&v| (v as f64 / 1000.0) as f32).collect();
    let (zf, zs) = (z_compat(&ff), z_compat(&sf));
    zf.iter()
        .zip(&zs)
        .map(|(a, b)| a + SELF_WEIGHT as f32 * b)
        .collect()
}

/// Default order: score descending, then start ascending, then `key` ascending.
pub fn order_default(scores: &[f64], start: &[Ps], key: &[u32]) -> Vec<u32> {
    let mut o: Vec<u32> = (0..scores.len() as u32).collect();
    o.sort_unstable_by(|&a, &b| {
        let (a, b) = (a as usize, b as usize);
        scores[b]
            .total_cmp(&scores[a])
            .then(start[a].cmp(&start[b]))
            .then(key[a].cmp(&key[b]))
    });
    o
}

/// Compat order: Python's stable `sorted(..., reverse=True)` over candidates in torch's metrics
/// order. With NaN scores (zero or undefined deviation) every comparison is false and Python keeps
/// the input order, which is what this returns then.
pub fn order_compat(scores: &[f32]) -> Vec<u32> {
    let mut o: Vec<u32> = (0..scores.len() as u32).collect();
    if scores.iter().any(|s| s.is_nan()) {
        return o;
    }
    o.sort_by(|&a, &b| {
        scores[b as usize]
            .partial_cmp(&scores[a as usize])
            .unwrap_or(Ordering::Equal)
    });
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z_hand_computed() {
        // 1, 2, 3: mean 2, unbiased std 1.
        assert_eq!(z_default(&[1.0, 2.0, 3.0]), vec![-1.0, 0.0, 1.0]);
        assert_eq!(z_default(&[5.0, 5.0]), vec![0.0, 0.0]);
        assert_eq!(z_default(&[5.0]), vec![0.0]);
        assert_eq!(z_compat(&[1.0, 2.0, 3.0]), vec![-1.0, 0.0, 1.0]);
        assert!(z_compat(&[5.0, 5.0]).iter().all(|v| v.is_nan()));
        assert!(z_compat(&[5.0])[0].is_nan());
    }

    #[test]
    fn scores_and_order() {
        // f = 0, 0.5, 1 → z -1, 0, 1; s = 3, 1, 2 ns → z 1, -1, 0.
        let sc = scores_default(&[0.0, 0.5, 1.0], &[3000, 1000, 2000]);
        assert_eq!(sc, vec![-1.0 + 0.6, -0.6, 1.0]);
        assert_eq!(order_default(&sc, &[0, 0, 0], &[0, 1, 2]), vec![2, 0, 1]);
        // Ties broken by start.
        assert_eq!(order_default(&[1.0, 1.0], &[9, 3], &[0, 1]), vec![1, 0]);
        assert_eq!(order_compat(&[1.0, 1.0, 2.0]), vec![2, 0, 1]);
        assert_eq!(order_compat(&[f32::NAN, f32::NAN]), vec![0, 1]);
    }
}
