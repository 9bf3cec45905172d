//! Calendar dates and times as seconds since the Unix epoch, for the
//! dates HTTP headers and access logs write (no time zone database: the
//! texts carry their offset or are UTC).

/// The month of its English abbreviation (`Jan` → 1), as HTTP dates and
/// access logs write it.
pub fn month_number(name: &[u8]) -> Option<i64> {
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    MONTHS
        .iter()
        .position(|m| m.as_slice() == name)
        .map(|i| i as i64 + 1)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Seconds since the epoch of a UTC date and time.
pub fn utc_seconds(year: i64, month: i64, day: i64, (h, m, s): (i64, i64, i64)) -> i64 {
    days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s
}

/// The civil date of a day since 1970-01-01: (year, month, day).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// "2027-01-04 10:42" (UTC) of milliseconds since the epoch.
pub fn utc_minute_text(ms: i64) -> String {
    let seconds = ms.div_euclid(1000);
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let in_day = seconds.rem_euclid(86_400);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        in_day / 3600,
        in_day / 60 % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_agree_with_date() {
        assert_eq!(utc_seconds(1970, 1, 1, (0, 0, 0)), 0);
        // date -u -d "2026-10-10 11:55:36" +%s
        assert_eq!(utc_seconds(2026, 10, 10, (11, 55, 36)), 1_791_633_336);
        // date -u -d 2028-02-29 +%s; 1900 was no leap year.
        assert_eq!(utc_seconds(2028, 2, 29, (0, 0, 0)), 1_835_395_200);
        assert_eq!(
            days_from_civil(1900, 3, 1) - days_from_civil(1900, 2, 28),
            1
        );
        assert_eq!(month_number(b"Oct"), Some(10));
        assert_eq!(month_number(b"oct"), None);
        for days in [-1, 0, 59, 60, 20_822, 21_243, 100_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(utc_minute_text(1_791_633_336_000), "2026-10-10 11:55");
    }
}
