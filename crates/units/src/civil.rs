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
    }
}
