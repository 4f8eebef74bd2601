//! The time ruler: round 1-2-5 tick steps, adaptive units (ps/ns/µs/ms/s), and the time and
//! duration formats used everywhere in the UI.

use super::state::Mark;
use crate::index::column_edge;
use crate::model::Ps;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

const UNITS: [(Ps, &str); 5] = [
    (1_000_000_000_000, "s"),
    (1_000_000_000, "ms"),
    (1_000_000, "µs"),
    (1_000, "ns"),
    (1, "ps"),
];

/// The unit for times around magnitude `mag` ps.
pub fn unit_for(mag: Ps) -> (Ps, &'static str) {
    let m = mag.unsigned_abs();
    for (u, n) in UNITS {
        if m >= u as u64 {
            return (u, n);
        }
    }
    (1, "ps")
}

/// Decimals needed to show multiples of `step` in `unit`.
pub fn decimals(step: Ps, unit: Ps) -> usize {
    let mut d = 0;
    let mut q = unit;
    while q > 1 && step % q != 0 && d < 12 {
        q /= 10;
        d += 1;
    }
    d
}

/// Formats time `t` (ps) in `unit` with `dec` decimals, e.g. `1.204 s`.
pub fn format_in(t: Ps, unit: (Ps, &str), dec: usize) -> String {
    let v = t as f64 / unit.0 as f64;
    format!("{v:.dec$} {}", unit.1)
}

/// A signed duration (a Δ): `+1.20 ms`, `−350.0 µs`, `0` (rounded to whole ps).
pub fn format_signed_dur(ps: f64) -> String {
    if ps == 0.0 {
        return "0".into();
    }
    let d = format_dur(ps.abs().round() as Ps);
    if ps > 0.0 {
        format!("+{d}")
    } else {
        format!("−{d}")
    }
}

/// Formats a duration with about four significant digits: `412.3 µs`, `12.48 ms`; zero is `0`
/// (no unit: nothing to measure).
pub fn format_dur(d: Ps) -> String {
    if d == 0 {
        return "0".into();
    }
    let unit = unit_for(d);
    let v = d as f64 / unit.0 as f64;
    let dec = if v.abs() >= 100.0 || unit.0 == 1 {
        1
    } else if v.abs() >= 10.0 {
        2
    } else {
        3
    };
    let dec = if unit.0 == 1 { 0 } else { dec };
    format!("{v:.dec$} {}", unit.1)
}

/// Formats a time from the capture origin: `+1.20561 s`.
pub fn format_time(t: Ps) -> String {
    let s = format_dur(t.abs());
    if t < 0 {
        format!("-{s}")
    } else {
        format!("+{s}")
    }
}

/// Formats a time from the capture origin with enough decimals to resolve `res` ps (e.g. a
/// kernel start at `+30.509312 s` rather than `+30.51 s`).
pub fn format_time_res(t: Ps, res: Ps) -> String {
    // Zero (the capture's first event) in the unit of the resolution: `0 µs`, not `+0 ps`.
    let unit = unit_for(if t == 0 { res.max(1) } else { t.abs() });
    if t == 0 {
        return format!("0 {}", unit.1);
    }
    // At least the four significant digits of `format_time`, more when `res` needs them.
    let v = t.abs() as f64 / unit.0 as f64;
    let mut dec = match unit.0 {
        1 => 0,
        _ if v >= 100.0 => 1,
        _ if v >= 10.0 => 2,
        _ => 3,
    };
    let mut q = unit.0 / 10_i64.pow(dec as u32);
    while q > res.max(1) && dec < 12 {
        q /= 10;
        dec += 1;
    }
    let s = format_in(t.abs(), unit, dec);
    if t < 0 {
        format!("-{s}")
    } else {
        format!("+{s}")
    }
}

/// A round 1-2-5 step giving ticks at least `min_cols` apart over `cols` columns, with the
/// unit and decimals of its labels (labels fit between ticks).
pub fn tick_step(t0: Ps, t1: Ps, cols: usize) -> (Ps, (Ps, &'static str), usize) {
    let w = (t1 - t0).max(1);
    let unit = unit_for(t0.abs().max(t1.abs()).max(1));
    let mut step: Ps = 1;
    let mut k = 0;
    loop {
        let dec = decimals(step, unit.0);
        let label = format_in(t1, unit, dec).chars().count() + 2;
        let spacing = (i128::from(step) * cols as i128 / i128::from(w)) as usize;
        if spacing >= label.max(8) || step > w {
            return (step, unit, dec);
        }
        let grown = match k % 3 {
            1 => (step / 2).checked_mul(5),
            _ => step.checked_mul(2),
        };
        k += 1;
        step = grown.unwrap_or(0);
        if step <= 0 || k > 60 {
            return (w, unit, decimals(w, unit.0));
        }
    }
}

/// Draws the ruler over `[t0, t1)` into `area`, labelled relative to `zero`, with the marked
/// range shown reversed.
pub fn draw(buf: &mut Buffer, area: Rect, (t0, t1): (Ps, Ps), zero: Ps, mark: &Mark) {
    let cols = area.width as usize;
    if cols == 0 || area.height == 0 || t1 <= t0 {
        return;
    }
    draw_ticks(buf, area, t0 - zero, t1 - zero);
    let (a, b) = match *mark {
        Mark::None => return,
        Mark::Start(a) => (a, a),
        Mark::Range(a, b, _) => (a, b),
    };
    for k in 0..cols {
        let ca = column_edge(t0, t1, cols, k);
        let cb = column_edge(t0, t1, cols, k + 1).max(ca + 1);
        if ca <= b
            && cb > a
            && let Some(cell) = buf.cell_mut((area.x + k as u16, area.y))
        {
            if a == b {
                cell.set_symbol("▼");
            }
            cell.modifier.insert(Modifier::REVERSED);
        }
    }
}

/// Tick marks and labels over the (zero-relative) window `[t0, t1)`.
fn draw_ticks(buf: &mut Buffer, area: Rect, t0: Ps, t1: Ps) {
    let cols = area.width as usize;
    let (step, unit, dec) = tick_step(t0, t1, cols);
    let col_of =
        |t: Ps| -> i64 { (i128::from(t - t0) * cols as i128 / i128::from(t1 - t0)) as i64 };
    let first = t0.div_euclid(step) * step + if t0.rem_euclid(step) == 0 { 0 } else { step };
    let mut t = first;
    let mut free_from = 0i64;
    while t < t1 {
        let c = col_of(t);
        if c >= free_from && c < cols as i64 {
            let mut label = format!("│{}", format_in(t, unit, dec));
            let x = area.x + c as u16;
            let room = (cols as i64 - c) as usize;
            if label.chars().count() > room {
                // A cut label (`│6`) reads as a wrong time: the tick alone.
                label = "│".into();
            }
            buf.set_stringn(x, area.y, &label, room, Style::default());
            free_from = c + label.chars().count() as i64 + 1;
        }
        t += step;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_round_and_labels_fit() {
        for (t0, t1, cols) in [
            (0, 1_000_000_000_000, 100usize),
            (1_204_000_000_000, 1_216_480_000_000, 90),
            (5, 105, 80),
            (0, 7_300_000, 200),
        ] {
            let (step, unit, dec) = tick_step(t0, t1, cols);
            let mant = step / 10i64.pow(step.ilog10());
            assert!([1, 2, 5].contains(&mant), "step {step}");
            let spacing = step as i128 * cols as i128 / (t1 - t0) as i128;
            let lw = format_in(t1, unit, dec).chars().count() as i128;
            assert!(
                spacing > lw,
                "{t0}..{t1}: step {step} spacing {spacing} label {lw}"
            );
        }
        let (step, unit, dec) = tick_step(1_204_000_000_000, 1_216_480_000_000, 90);
        assert_eq!(unit.1, "s");
        assert_eq!(
            format_in(1_204_000_000_000 + step, unit, dec).len(),
            "1.206 s".len()
        );
    }

    #[test]
    fn extreme_windows_do_not_panic() {
        for (t0, t1) in [
            (i64::MIN / 2, i64::MAX / 2),
            (0, 1),
            (-5, 5),
            (0, i64::MAX / 3),
        ] {
            let (step, _, _) = tick_step(t0, t1, 200);
            assert!(step > 0);
            let mut buf = Buffer::empty(Rect::new(0, 0, 200, 1));
            draw(&mut buf, Rect::new(0, 0, 200, 1), (t0, t1), 0, &Mark::None);
        }
    }

    #[test]
    fn formats() {
        assert_eq!(format_dur(412_300_000), "412.3 µs");
        assert_eq!(format_dur(12_480_000_000), "12.48 ms");
        assert_eq!(format_dur(0), "0");
        assert_eq!(format_time(1_205_610_000_000), "+1.206 s");
        assert_eq!(format_time(-2_000), "-2.000 ns");
    }
}
