//! Wall-clock formatting of epoch times (UTC, no time-zone database): the zero of a capture
//! in headers and `summary`, file times in the picker.

/// `YYYY-MM-DD HH:MM:SS.mmm` (UTC) of an epoch time in ns: the wall clock of a capture's zero.
pub fn format_clock(epoch_ns: i64) -> String {
    let secs = epoch_ns.div_euclid(1_000_000_000);
    let ms = epoch_ns.rem_euclid(1_000_000_000) / 1_000_000;
    format!("{}:{:02}.{ms:03}", civil(secs), secs.rem_euclid(60))
}

/// `YYYY-MM-DD HH:MM` of epoch seconds (civil-from-days, Howard Hinnant).
pub fn civil(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}
