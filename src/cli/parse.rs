//! Value parsers of the command-line options: times with units, regexes, microseconds.

use regex::Regex;

pub(super) fn parse_us(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("expected a non-negative number of µs, got {s:?}")),
    }
}

/// Parses a time with an optional unit (`ps`, `ns`, `us`/`µs`, `ms`, `s`; bare numbers are ns)
/// into picoseconds.
pub fn parse_time(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("invalid time `{s}` (examples: 1.5ms, 200us, 3s)"))?;
    let scale = match unit.trim() {
        "ps" => 1.0,
        "" | "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        u => return Err(format!("unknown time unit `{u}` (ps, ns, us, ms, s)")),
    };
    let ps = v * scale;
    if !ps.is_finite() || ps.abs() > 9.2e18 {
        return Err(format!("time `{s}` out of range"));
    }
    Ok(ps.round() as i64)
}

pub(super) fn parse_regex(s: &str) -> Result<Regex, String> {
    Regex::new(s).map_err(|e| format!("invalid regex: {e}"))
}
