//! Exact decimal microseconds → integer picoseconds, from the number's text (never via f64).

/// Parses JSON number text in µs (`"1712195495521131.125"`, `12`, `1e-06`, also a quoted number)
/// into integer ns: integer part × 1000 plus up to three fraction digits, further digits rounded
/// half away from zero. `None` for text that is not a number or does not fit an i64.
pub fn us_text_to_ns(text: &str) -> Option<i64> {
    let ps = us_text_to_ps(text)?;
    let (q, r) = (ps / 1000, ps % 1000);
    let ns = if r >= 500 {
        q + 1
    } else if r <= -500 {
        q - 1
    } else {
        q
    };
    i64::try_from(ns).ok()
}

/// Like [`us_text_to_ns`] but to picoseconds (six fraction digits kept: XProf writes ps as µs),
/// as an i128 because absolute epoch µs do not fit i64 picoseconds.
pub fn us_text_to_ps(text: &str) -> Option<i128> {
    if let Some(v) = fast_ps(text.as_bytes()) {
        return Some(v);
    }
    let t = text.trim();
    let t = t
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(t)
        .trim();
    let b = t.as_bytes();
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    // Mantissa digits (integer + fraction) as an integer with a decimal exponent. Digits past
    // 30 significant ones are far below 1 ns and dropped.
    let mut mant: i128 = 0;
    let mut exp10: i32 = 0;
    let mut digits = 0;
    let limit = 10i128.pow(30);
    while i < b.len() && b[i].is_ascii_digit() {
        if mant < limit {
            mant = mant * 10 + i128::from(digit(b[i]));
        } else {
            exp10 = exp10.saturating_add(1);
        }
        digits += 1;
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            if mant < limit {
                mant = mant * 10 + i128::from(digit(b[i]));
                exp10 = exp10.saturating_sub(1);
            }
            digits += 1;
            i += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        let mut eneg = false;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            eneg = b[i] == b'-';
            i += 1;
        }
        let mut e: i32 = 0;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            e = e.saturating_mul(10).saturating_add(i32::from(digit(b[i])));
            i += 1;
        }
        if i == start {
            return None;
        }
        exp10 = exp10.saturating_add(if eneg { -e } else { e });
    }
    if i != b.len() {
        return None;
    }
    // value_ps = mant × 10^(exp10 + 6), rounded half away from zero.
    let e = exp10.saturating_add(6);
    let mut v: i128 = mant;
    if e >= 0 {
        for _ in 0..e {
            if v == 0 {
                break;
            }
            v = v.checked_mul(10)?;
            if v > i128::from(i64::MAX) * 1_000_000 {
                return None;
            }
        }
    } else if e < -38 {
        v = 0;
    } else {
        let p = 10i128.pow((-e) as u32);
        let (q, r) = (v / p, v % p);
        v = if 2 * r >= p { q + 1 } else { q };
    }
    Some(if neg { -v } else { v })
}

/// The value of an ASCII digit byte. The byte was checked with `is_ascii_digit`, but the text
/// may be a map of a file another process is rewriting (it then reads as zeros or other bytes
/// between the check and here), so never underflow: any byte gives 0..=9.
#[inline]
fn digit(b: u8) -> u8 {
    b.wrapping_sub(b'0') % 10
}

/// Fast path for the common `123` / `123.456` forms (≤ 17 integer and ≤ 6 fraction digits).
#[inline]
fn fast_ps(b: &[u8]) -> Option<i128> {
    let mut i = 0;
    let mut int: u64 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        int = int * 10 + u64::from(digit(b[i]));
        i += 1;
        if i > 17 {
            return None;
        }
    }
    if i == 0 {
        return None;
    }
    let mut frac: u64 = 0;
    let mut k = 0;
    if i < b.len() {
        if b[i] != b'.' {
            return None;
        }
        i += 1;
        while i < b.len() {
            let c = b[i];
            if !c.is_ascii_digit() || k == 6 {
                return None;
            }
            frac = frac * 10 + u64::from(digit(c));
            k += 1;
            i += 1;
        }
        if k == 0 {
            return None;
        }
    }
    const POW: [u64; 7] = [1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];
    Some(i128::from(int) * 1_000_000 + i128::from(frac * POW[k]))
}

#[cfg(test)]
mod tests {
    use super::us_text_to_ns;

    #[test]
    fn exact_decimal() {
        assert_eq!(
            us_text_to_ns("1712195495521131.125"),
            Some(1_712_195_495_521_131_125)
        );
        assert_eq!(us_text_to_ns("12"), Some(12_000));
        assert_eq!(us_text_to_ns("0.001"), Some(1));
        assert_eq!(us_text_to_ns("0.0004"), Some(0));
        assert_eq!(us_text_to_ns("0.0005"), Some(1));
        assert_eq!(us_text_to_ns("-1.5"), Some(-1500));
        assert_eq!(us_text_to_ns("-0.0006"), Some(-1));
        assert_eq!(us_text_to_ns("1e-06"), Some(0));
        assert_eq!(us_text_to_ns("1.5e3"), Some(1_500_000));
        assert_eq!(us_text_to_ns("1E2"), Some(100_000));
        assert_eq!(us_text_to_ns("\"25.25\""), Some(25_250));
        assert_eq!(
            us_text_to_ns("1623142623531625"),
            Some(1_623_142_623_531_625_000)
        );
        assert_eq!(us_text_to_ns("99999999999999999999"), None);
        assert_eq!(us_text_to_ns("null"), None);
        assert_eq!(us_text_to_ns(""), None);
        assert_eq!(us_text_to_ns("1.2.3"), None);
        assert_eq!(us_text_to_ns("1e"), None);
        assert_eq!(
            us_text_to_ns("0.12345678901234567890123456789012345678901234"),
            Some(123)
        );
    }

    #[test]
    fn picoseconds() {
        use super::us_text_to_ps;
        assert_eq!(us_text_to_ps("1e-06"), Some(1));
        assert_eq!(us_text_to_ps("0.0000015"), Some(2));
        assert_eq!(
            us_text_to_ps("1712195495521131.125"),
            Some(1_712_195_495_521_131_125_000)
        );
    }

    #[test]
    fn agrees_with_integer_arithmetic() {
        for ns in [0i64, 1, 999, 1000, 123_456_789, 7_889_238_000_000_123] {
            let text = format!("{}.{:03}", ns / 1000, ns % 1000);
            assert_eq!(us_text_to_ns(&text), Some(ns), "{text}");
        }
    }
}
