//! Byte-level JSON lexing for the event scanner: string ends found eight bytes at a time
//! (SWAR: quote, backslash, control, non-ASCII), numbers checked as text, nested arrays/objects
//! rewritten compactly. Everything returns `None` outside the subset the scanner handles like
//! serde (escapes, control characters, floats inside nested values, `-0`, integers beyond 64
//! bits, nesting deeper than [`MAX_DEPTH`]).

/// A scalar value, validated; spans are byte ranges of the input.
#[derive(Clone, Copy)]
#[allow(missing_docs)]
pub enum Val {
    /// String content (no escapes, valid UTF-8).
    Str(u32, u32),
    /// Integer text of 20 digits (never `-0`); read by [`int_value`] where a field needs the
    /// value (phase 1 turns those into `Whole`). Shorter integers come as `Whole` directly.
    Int(u32, u32),
    /// An integer's value as serde reads it: (negative, magnitude).
    Whole(bool, u64),
    /// A `ts`/`dur` read by [`time_ps`]: index into the plan's times.
    Time(u32),
    /// Number with a fraction or exponent: its text span.
    Num(u32, u32),
    /// An arg float, read by serde_json's own parser.
    Float(f64),
    True,
    False,
    Null,
    /// An `args` object: entries `[from, to)` of the plan.
    Args(u32, u32),
    /// A nested array/object written compactly into the plan's text buffer `[from, to)`.
    Json(u32, u32),
}

pub const MAX_DEPTH: u32 = 64;

#[inline]
pub fn ws(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
            break;
        }
        i += 1;
    }
    i
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Bytes of `w` that are `"`, `\`, a control character or non-ASCII, as high bits (exact for the
/// lowest such byte).
#[inline]
pub fn specials(w: u64) -> u64 {
    let quote = w ^ (ONES * u64::from(b'"'));
    let slash = w ^ (ONES * u64::from(b'\\'));
    let zq = quote.wrapping_sub(ONES) & !quote;
    let zs = slash.wrapping_sub(ONES) & !slash;
    let ctl = w.wrapping_sub(ONES * 0x20) & !w;
    (zq | zs | ctl | w) & HIGHS
}

/// Bits (one per byte, lowest first) of the bytes of `c` that are `"`, `\`, a control
/// character or non-ASCII: [`specials`] sixteen bytes at a time.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn specials16(c: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of every x86_64 CPU; the load reads exactly the 16 bytes of `c`
    // (unaligned load).
    unsafe {
        let v = _mm_loadu_si128(c.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let slash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        // Signed: below 0x20 is a control byte (0x00–0x1f) or a non-ASCII one (0x80–0xff).
        let low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, slash), low)) as u32
    }
}

/// [`specials`] bits of the 32 bytes from `i` (one bit per byte), `None` where fewer remain.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn wide_specials(b: &[u8], i: usize) -> Option<u32> {
    let (c, _) = b.get(i..i + 32)?.as_chunks::<16>();
    Some(specials16(c.first()?) | (specials16(c.get(1)?) << 16))
}

/// Without SSE2: never (the eight-byte step takes everything).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn wide_specials(_: &[u8], _: usize) -> Option<u32> {
    None
}

/// Scans a string whose opening quote is at `i - 1`; returns the index of the closing quote.
/// `None` for escapes, control characters, invalid UTF-8 or a missing end.
#[inline(always)]
pub fn string(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    let mut ascii = true;
    loop {
        // 32 bytes per step while they last (kernel names run to hundreds), then eight.
        match wide_specials(b, i) {
            Some(0) => {
                i += 32;
                continue;
            }
            Some(m) => i += m.trailing_zeros() as usize,
            None => {
                if let Some(chunk) = b.get(i..i + 8) {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(chunk);
                    let m = specials(u64::from_le_bytes(a));
                    if m == 0 {
                        i += 8;
                        continue;
                    }
                    i += (m.trailing_zeros() / 8) as usize;
                }
            }
        }
        let c = *b.get(i)?;
        match c {
            b'"' => break,
            b'\\' | 0..=0x1f => return None,
            0x80.. => {
                ascii = false;
                i += 1;
            }
            _ => i += 1,
        }
    }
    if !ascii {
        std::str::from_utf8(b.get(start..i)?).ok()?;
    }
    Some(i)
}

/// A string of at most 7 plain bytes (no escape, control or non-ASCII byte) whose opening quote
/// is at `start - 1`, read as one word: (index of its closing quote, the bytes packed
/// little-endian and zero-padded). `None` for anything else (use [`string`]).
#[inline(always)]
pub fn short_string(b: &[u8], start: usize) -> Option<(usize, u64)> {
    let chunk = b.get(start..start + 8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(chunk);
    let w = u64::from_le_bytes(a);
    let m = specials(w);
    if m == 0 {
        return None;
    }
    let p = m.trailing_zeros() / 8;
    if (w >> (8 * p)) as u8 != b'"' {
        return None;
    }
    let packed = if p == 0 {
        0
    } else {
        w & (u64::MAX >> (64 - 8 * p))
    };
    Some((start + p as usize, packed))
}

/// Scans a number at `i`; `(end, Val)`: an integer of up to 19 digits with its value
/// (`Whole`), one of 20 digits as text (`Int`, for [`int_value`]), any other number as text
/// (`Num`).
#[inline(always)]
pub fn number(b: &[u8], i: usize) -> Option<(usize, Val)> {
    let mut j = i;
    let neg = b.get(j) == Some(&b'-');
    if neg {
        j += 1;
    }
    let d0 = j;
    let (j, mag) = digits(b, d0);
    let mut j = j;
    let nd = j - d0;
    if nd == 0 || (nd > 1 && b.get(d0) == Some(&b'0')) {
        return None;
    }
    let mut float = false;
    if b.get(j) == Some(&b'.') {
        j += 1;
        let f0 = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j == f0 {
            return None;
        }
        float = true;
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        j += 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let e0 = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j == e0 {
            return None;
        }
        float = true;
    }
    if !ends_number(b.get(j)) {
        return None;
    }
    let (s, e) = (i as u32, j as u32);
    if float {
        return Some((j, Val::Num(s, e)));
    }
    // serde reads `-0` as the float -0.0 and integers past 64 bits as floats: leave to it.
    if (neg && nd == 1 && b.get(d0) == Some(&b'0')) || nd > 20 {
        return None;
    }
    if nd <= 19 {
        // Below i64::MIN serde reads a float: leave to it.
        if neg && mag > 1 << 63 {
            return None;
        }
        return Some((j, Val::Whole(neg, mag)));
    }
    Some((j, Val::Int(s, e)))
}

/// A number at `i` whose first digit is 1–9: the common plain integer of up to 19 digits read
/// in one short loop; anything else (fraction, exponent, more digits) through [`number`].
#[inline(always)]
fn uint(b: &[u8], i: usize) -> Option<(usize, Val)> {
    let (j, mag) = digits(b, i);
    if j - i <= 19 && ends_number(b.get(j)) {
        return Some((j, Val::Whole(false, mag)));
    }
    number(b, i)
}

/// The run of digits from `i`: its end and its value (exact up to 19 digits, wrapped beyond).
#[inline(always)]
fn digits(b: &[u8], i: usize) -> (usize, u64) {
    let mut j = i;
    let mut mag: u64 = 0;
    while let Some(&c) = b.get(j) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        mag = mag.wrapping_mul(10).wrapping_add(u64::from(d));
        j += 1;
    }
    (j, mag)
}

/// Whether a number may end before `c` (serde rejects `12a`).
#[inline(always)]
pub fn ends_number(c: Option<&u8>) -> bool {
    matches!(c, Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t'))
}

/// A `ts`/`dur` number at `i` in its common form (`123`, `123.456`: at most 17 integer and 6
/// fraction digits, no sign or exponent) as picoseconds, read in one pass; `None` for anything
/// else (the caller then takes the general path).
#[inline(always)]
pub fn time_ps(b: &[u8], i: usize) -> Option<(usize, i128)> {
    time_ps_rest(b, i, i, 0)
}

/// [`time_ps`] for a `ts`: timestamps have 13–16 integer digits, read eight at a time while
/// eight digits follow (the same result as [`time_ps`] on every input).
#[inline(always)]
pub fn time_ps_long(b: &[u8], i: usize) -> Option<(usize, i128)> {
    let word = |j: usize| {
        let (w, _) = b.get(j..j + 8)?.as_chunks::<8>();
        Some(u64::from_le_bytes(*w.first()?)).filter(|&w| eight_digits(w))
    };
    match word(i) {
        // A leading zero is for the general loop to refuse.
        Some(hi) if hi & 0xff != u64::from(b'0') => match word(i + 8) {
            Some(lo) => time_ps_rest(
                b,
                i,
                i + 16,
                eight_value(hi) * 100_000_000 + eight_value(lo),
            ),
            None => time_ps_rest(b, i, i + 8, eight_value(hi)),
        },
        _ => time_ps_rest(b, i, i, 0),
    }
}

/// Whether all eight bytes of `w` are ASCII digits.
#[inline(always)]
fn eight_digits(w: u64) -> bool {
    // No byte outside 0x30..=0x3f, and none of those above 0x39 (adding 6 carries them out).
    (w & 0xf0f0_f0f0_f0f0_f0f0) == 0x3030_3030_3030_3030
        && (w.wrapping_add(0x0606_0606_0606_0606) & 0xf0f0_f0f0_f0f0_f0f0) == 0x3030_3030_3030_3030
}

/// The value of eight ASCII digits (first byte most significant), by three multiplies.
#[inline(always)]
fn eight_value(w: u64) -> u64 {
    const MASK: u64 = 0x0000_00ff_0000_00ff;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    let v = w - 0x3030_3030_3030_3030;
    let v = v * 10 + (v >> 8);
    ((v & MASK).wrapping_mul(MUL1)).wrapping_add(((v >> 16) & MASK).wrapping_mul(MUL2)) >> 32
}

/// [`time_ps`] from `j`, the digits `b[i..j]` read as `int`.
#[inline(always)]
fn time_ps_rest(b: &[u8], i: usize, mut j: usize, mut int: u64) -> Option<(usize, i128)> {
    while let Some(&c) = b.get(j) {
        if !c.is_ascii_digit() {
            break;
        }
        int = int * 10 + u64::from(c - b'0');
        j += 1;
        if j - i > 17 {
            return None;
        }
    }
    let nd = j - i;
    if nd == 0 || (nd > 1 && b.get(i) == Some(&b'0')) {
        return None;
    }
    let mut frac: u64 = 0;
    let mut k = 0;
    if b.get(j) == Some(&b'.') {
        j += 1;
        while let Some(&c) = b.get(j) {
            if !c.is_ascii_digit() {
                break;
            }
            if k == 6 {
                return None;
            }
            frac = frac * 10 + u64::from(c - b'0');
            k += 1;
            j += 1;
        }
        if k == 0 {
            return None;
        }
    }
    if !matches!(b.get(j), Some(b',' | b'}' | b' ' | b'\n' | b'\r' | b'\t')) {
        return None;
    }
    const POW: [u64; 7] = [1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];
    Some((j, i128::from(int) * 1_000_000 + i128::from(frac * POW[k])))
}

/// An integer read as (negative, magnitude) as an `i64` (`-2^63` wraps to itself).
#[inline(always)]
pub fn signed(neg: bool, mag: u64) -> i64 {
    if neg {
        (mag as i64).wrapping_neg()
    } else {
        mag as i64
    }
}

/// The value of an integer's text as serde reads it: `(negative, magnitude)`, `None` when serde
/// would read a float instead (beyond u64, or below i64::MIN).
#[inline]
pub fn int_value(b: &[u8], s: u32, e: u32) -> Option<(bool, u64)> {
    let t = b.get(s as usize..e as usize)?;
    let (neg, digits) = match t.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, t),
    };
    let mut mag: u64 = 0;
    for &c in digits {
        mag = mag
            .checked_mul(10)?
            .checked_add(u64::from(c.wrapping_sub(b'0')))?;
    }
    if neg && mag > 1 << 63 {
        return None;
    }
    Some((neg, mag))
}

#[inline(always)]
pub fn literal(b: &[u8], i: usize, word: &[u8], v: Val) -> Option<(usize, Val)> {
    if b.get(i..i + word.len())? == word {
        Some((i + word.len(), v))
    } else {
        None
    }
}

/// A scalar value at `i` (string, number, literal); arrays/objects → `None`.
#[inline(always)]
pub fn scalar(b: &[u8], i: usize) -> Option<(usize, Val)> {
    match *b.get(i)? {
        b'"' => {
            let e = string(b, i + 1)?;
            Some((e + 1, Val::Str((i + 1) as u32, e as u32)))
        }
        b'1'..=b'9' => uint(b, i),
        b'-' | b'0' => number(b, i),
        b't' => literal(b, i, b"true", Val::True),
        b'f' => literal(b, i, b"false", Val::False),
        b'n' => literal(b, i, b"null", Val::Null),
        _ => None,
    }
}

/// An `args` value at `j`: nested arrays/objects written compactly into `text` (`Json`),
/// integers as `Whole`, other numbers as `Float`, strings and literals as read.
#[inline(always)]
pub fn arg_value(b: &[u8], j: usize, text: &mut Vec<u8>) -> Option<(usize, Val)> {
    Some(match *b.get(j)? {
        b'[' | b'{' => {
            let t0 = text.len() as u32;
            let e = nested(b, j, text, 1)?;
            (e, Val::Json(t0, text.len() as u32))
        }
        _ => match scalar(b, j)? {
            (e, Val::Int(s, t)) => {
                let (neg, mag) = int_value(b, s, t)?;
                (e, Val::Whole(neg, mag))
            }
            (e, Val::Num(s, t)) => (e, Val::Float(float(b, s, t)?)),
            other => other,
        },
    })
}

/// Writes the array/object at `i` compactly into `out` (the serde `JsonText` output for the
/// subset handled: strings without escapes, integers, literals); returns the end.
pub fn nested(b: &[u8], i: usize, out: &mut Vec<u8>, depth: u32) -> Option<usize> {
    if depth > MAX_DEPTH {
        return None;
    }
    let open = *b.get(i)?;
    let close = match open {
        b'[' => b']',
        b'{' => b'}',
        _ => return None,
    };
    out.push(open);
    let mut j = ws(b, i + 1);
    if b.get(j) == Some(&close) {
        out.push(close);
        return Some(j + 1);
    }
    loop {
        if open == b'{' {
            if b.get(j) != Some(&b'"') {
                return None;
            }
            let e = string(b, j + 1)?;
            out.extend_from_slice(b.get(j..=e)?);
            j = ws(b, e + 1);
            if b.get(j) != Some(&b':') {
                return None;
            }
            out.push(b':');
            j = ws(b, j + 1);
        }
        match *b.get(j)? {
            b'[' | b'{' => j = nested(b, j, out, depth + 1)?,
            _ => {
                let (e, v) = scalar(b, j)?;
                match v {
                    // Floats are re-printed by serde (`{:?}`): leave them to it.
                    Val::Num(..) => return None,
                    Val::Int(s, e) => {
                        int_value(b, s, e)?;
                    }
                    // An integer read whole (≤ 19 digits) is one serde reads exactly.
                    _ => {}
                }
                out.extend_from_slice(b.get(j..e)?);
                j = e;
            }
        }
        j = ws(b, j);
        match *b.get(j)? {
            b',' => {
                out.push(b',');
                j = ws(b, j + 1);
            }
            c if c == close => {
                out.push(close);
                return Some(j + 1);
            }
            _ => return None,
        }
    }
}

/// serde_json's own reading of a float's text: for the common form `-?digits.digits` (no
/// exponent, at most 22 fraction digits, the digits within a `u64`) its arithmetic repeated
/// here — the digits as one integer, converted, divided by the exact power of ten (serde_json
/// without `float_roundtrip`) — and serde_json itself for the rest.
pub fn float(b: &[u8], s: u32, e: u32) -> Option<f64> {
    let t = b.get(s as usize..e as usize)?;
    plain_decimal(t).or_else(|| serde_json::from_slice::<f64>(t).ok())
}

/// 10^0 ..= 10^22, each exact in an `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `-?(0|[1-9][0-9]*)\.[0-9]+` read as serde_json reads it, when its digits fit a `u64` and
/// it has at most 22 fraction digits; `None` otherwise (and for anything else).
fn plain_decimal(t: &[u8]) -> Option<f64> {
    let (neg, d) = match t.split_first()? {
        (b'-', rest) => (true, rest),
        _ => (false, t),
    };
    let dot = d.iter().position(|&c| c == b'.')?;
    let (int, frac) = (d.get(..dot)?, d.get(dot + 1..)?);
    if int.is_empty() || frac.is_empty() || frac.len() >= POW10.len() {
        return None;
    }
    if int.len() > 1 && int[0] == b'0' {
        return None;
    }
    let mut sig = 0u64;
    for &c in int.iter().chain(frac) {
        if !c.is_ascii_digit() {
            return None;
        }
        // serde_json leaves the integer path where this overflows.
        sig = sig.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    let f = sig as f64 / POW10[frac.len()];
    Some(if neg { -f } else { f })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specials_finds_the_first() {
        for (s, at) in [
            (&b"abcdefgh"[..], None),
            (b"abc\"efgh", Some(3)),
            (b"a\\cdefgh", Some(1)),
            (b"abcdefg\n", Some(7)),
            (b"\xc3\xa9cdefgh", Some(0)),
            (b"ab\x7fdefgh", None),
        ] {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            let m = specials(u64::from_le_bytes(a));
            let got = (m != 0).then(|| (m.trailing_zeros() / 8) as usize);
            assert_eq!(got, at, "{s:?}");
        }
    }

    #[test]
    fn strings_and_numbers() {
        let b = b"\"plain text here\" \"caf\xc3\xa9 au lait, longer!\"";
        assert_eq!(string(b, 1), Some(16));
        assert_eq!(string(b, 19), Some(b.len() - 1));
        assert!(string(br#""esc\"x""#, 1).is_none());
        assert!(string(b"\"bad\xff utf8 here\"", 1).is_none());
        assert!(string(b"\"ctl\x01\"", 1).is_none());
        assert!(string(b"\"no end", 1).is_none());
        assert!(matches!(
            number(b"12,", 0),
            Some((2, Val::Whole(false, 12)))
        ));
        assert!(matches!(time_ps(b"12.5,", 0), Some((4, 12_500_000))));
        assert!(time_ps(b"012,", 0).is_none());
        assert_eq!(int_value(b"-7}", 0, 2), Some((true, 7)));
        assert!(matches!(number(b"1.5e3 ", 0), Some((5, Val::Num(0, 5)))));
        assert!(number(b"-0,", 0).is_none());
        assert!(number(b"01,", 0).is_none());
        assert!(number(b"1.,", 0).is_none());
        assert!(matches!(
            number(b"18446744073709551616,", 0),
            Some((20, Val::Int(0, 20)))
        ));
        assert_eq!(int_value(b"18446744073709551616", 0, 20), None);
        assert_eq!(
            int_value(b"18446744073709551615", 0, 20),
            Some((false, u64::MAX))
        );
        assert_eq!(
            int_value(b"-9223372036854775808", 0, 20),
            Some((true, 1 << 63))
        );
        assert_eq!(int_value(b"-9223372036854775809", 0, 20), None);
        assert!(number(b"123456789012345678901,", 0).is_none());
        assert!(number(b"12a", 0).is_none());
    }

    proptest::proptest! {
        /// The plain-decimal reading is serde_json's, bit for bit, wherever it answers; it
        /// answers for every plain decimal whose digits fit.
        #[test]
        fn plain_decimal_is_serde(
            neg in proptest::bool::ANY,
            int in "(0|[1-9][0-9]{0,19})",
            frac in "[0-9]{1,25}",
            tail in proptest::sample::select(vec!["", "e5", "x", ".1"]),
        ) {
            let text = format!("{}{int}.{frac}{tail}", if neg { "-" } else { "" });
            let got = plain_decimal(text.as_bytes());
            let want = serde_json::from_str::<f64>(&text).ok();
            if let Some(g) = got {
                proptest::prop_assert_eq!(Some(g.to_bits()), want.map(f64::to_bits), "{}", text);
            }
            let fits = tail.is_empty()
                && frac.len() <= 22
                && format!("{int}{frac}").parse::<u64>().is_ok();
            proptest::prop_assert_eq!(got.is_some(), fits, "{}", text);
        }

        /// `time_ps` equals the general reader on every form it accepts, and accepts the common
        /// ones.
        #[test]
        fn time_ps_equals_the_text_reader(
            int in "[0-9]{1,19}",
            frac in proptest::option::of("[0-9]{0,8}"),
            end in proptest::sample::select(vec![",", "}", " ", "x", ""]),
        ) {
            let text = match &frac {
                Some(f) => format!("{int}.{f}"),
                None => int.clone(),
            };
            let b = format!("{text}{end}");
            let got = time_ps(b.as_bytes(), 0);
            let common = !(int.len() > 1 && int.starts_with('0'))
                && int.len() <= 17
                && frac.as_ref().is_none_or(|f| (1..=6).contains(&f.len()))
                && matches!(end, "," | "}" | " ");
            if common {
                let want = super::super::time::us_text_to_ps(&text);
                proptest::prop_assert_eq!(got, want.map(|ps| (text.len(), ps)));
            } else {
                proptest::prop_assert!(got.is_none(), "{b:?} → {got:?}");
            }
        }
    }

    proptest::proptest! {
        /// `time_ps_long` equals `time_ps` on every input, the 16-digit `ts` of real traces
        /// (with or without a fraction, any neighbour bytes) included.
        #[test]
        fn time_ps_long_equals_time_ps(
            int in "[0-9]{14,19}|[1-9][0-9]{15}",
            frac in proptest::option::of("[0-9]{0,7}"),
            tail in "[0-9 ,}.ax]{0,20}",
        ) {
            let b = match &frac {
                Some(f) => format!("{int}.{f}{tail}"),
                None => format!("{int}{tail}"),
            };
            let b = b.as_bytes();
            proptest::prop_assert_eq!(time_ps_long(b, 0), time_ps(b, 0));
            let shifted = [b"x".as_slice(), b].concat();
            proptest::prop_assert_eq!(time_ps_long(&shifted, 1), time_ps(&shifted, 1));
        }
    }

    /// The plain reading of [`string`]: closing quote, refusing escapes, controls, bad UTF-8.
    fn string_reference(b: &[u8], start: usize) -> Option<usize> {
        let end = start + b.get(start..)?.iter().position(|&c| c == b'"')?;
        let t = &b[start..end];
        if t.iter().any(|&c| c == b'\\' || c < 0x20) {
            return None;
        }
        std::str::from_utf8(t).ok()?;
        Some(end)
    }

    proptest::proptest! {
        /// `string` (32, 16 and 8 bytes at a time, then bytewise) equals the plain reading at
        /// every length and position of the byte that ends or spoils the string.
        #[test]
        fn string_equals_the_plain_reading(
            len in 0usize..90,
            at in 0usize..100,
            odd in proptest::sample::select(
                &[b'"', b'\\', 0x01, 0x1f, 0x7f, 0x80, 0xc3, 0xa9, 0xff, b'a'][..],
            ),
            tail in 0usize..40,
        ) {
            let mut t = vec![b'x'; len];
            if at < len {
                t[at] = odd;
                // A valid two-byte UTF-8 sequence where there is room.
                if odd == 0xc3 && at + 1 < len {
                    t[at + 1] = 0xa9;
                }
            }
            t.push(b'"');
            t.extend(std::iter::repeat_n(b' ', tail));
            proptest::prop_assert_eq!(string(&t, 0), string_reference(&t, 0));
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn specials16_is_specials_per_byte() {
        for c in 0..=255u8 {
            for at in [0, 5, 15] {
                let mut w = [b'a'; 16];
                w[at] = c;
                let want = specials(u64::from_le_bytes(w[..8].try_into().unwrap())) != 0
                    || specials(u64::from_le_bytes(w[8..].try_into().unwrap())) != 0;
                let got = specials16(&w);
                assert_eq!(got != 0, want, "{c:#x} at {at}");
                if want {
                    assert_eq!(got, 1 << at);
                }
            }
        }
    }

    #[test]
    fn eight_digits_reads_digits_only() {
        for c in 0..=255u8 {
            let mut w = *b"12345678";
            w[3] = c;
            let want = c.is_ascii_digit();
            assert_eq!(eight_digits(u64::from_le_bytes(w)), want, "{c}");
            if want {
                let v = 12_300_000 + u64::from(c - b'0') * 10_000 + 5_678;
                assert_eq!(eight_value(u64::from_le_bytes(w)), v);
            }
        }
        assert_eq!(eight_value(u64::from_le_bytes(*b"99999999")), 99_999_999);
        assert_eq!(eight_value(u64::from_le_bytes(*b"00000000")), 0);
    }

    #[test]
    fn nested_is_compact() {
        let mut out = Vec::new();
        let t = b"[[1, 2], [], {\"a\" : [true,null], \"b\":\"x y\"}, -3] ";
        let e = nested(t, 0, &mut out, 1).unwrap();
        assert_eq!(e, t.len() - 1);
        assert_eq!(out, br#"[[1,2],[],{"a":[true,null],"b":"x y"},-3]"#);
        out.clear();
        assert!(nested(b"[1.5]", 0, &mut out, 1).is_none());
        assert!(nested(b"[1,]", 0, &mut out, 1).is_none());
        assert!(nested(b"{\"a\":1", 0, &mut out, 1).is_none());
    }
}
