//! The times access logs write, as milliseconds since the Unix epoch
//! (UTC): nginx's and Apache's `10/Oct/2000:13:55:36 -0700`, ISO 8601's
//! `2000-10-10T13:55:36-07:00`, and seconds with a fraction (`$msec`).

use headroom_units::civil::{month_number, utc_seconds};

/// `10/Oct/2000:13:55:36 -0700`.
pub fn local_time_ms(text: &[u8]) -> Option<i64> {
    if text.len() != 26 || text[2] != b'/' || text[6] != b'/' || text[11] != b':' {
        return None;
    }
    let day = number(&text[0..2])?;
    let month = month_number(&text[3..6])?;
    let year = number(&text[7..11])?;
    let (h, m, s) = clock(&text[12..20])?;
    if text[20] != b' ' {
        return None;
    }
    let offset = offset_minutes(&text[21..26], false)?;
    utc_ms(year, month, day, (h, m, s), 0, offset)
}

/// `2000-10-10T13:55:36-07:00`, `...Z`, or with a fraction of a second.
pub fn iso8601_ms(text: &[u8]) -> Option<i64> {
    if text.len() < 20 || text[4] != b'-' || text[7] != b'-' || text[10] != b'T' {
        return None;
    }
    let year = number(&text[0..4])?;
    let month = number(&text[5..7])?;
    let day = number(&text[8..10])?;
    let (h, m, s) = clock(&text[11..19])?;
    let mut rest = &text[19..];
    let mut millis = 0;
    if rest.first() == Some(&b'.') {
        let digits = rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        millis = fraction_ms(&rest[1..1 + digits])?;
        rest = &rest[1 + digits..];
    }
    let offset = match rest {
        b"Z" => 0,
        _ => offset_minutes(rest, true)?,
    };
    utc_ms(year, month, day, (h, m, s), millis, offset)
}

/// `1700000000.123`: seconds, with up to three decimals kept.
pub fn seconds_ms(text: &[u8]) -> Option<i64> {
    let (whole, fraction) = match text.iter().position(|&b| b == b'.') {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, &b""[..]),
    };
    // Past the year 9999 a time is not a log's (and would overflow).
    let seconds = i64::try_from(ascii_number(whole)?)
        .ok()
        .filter(|s| *s < 253_402_300_800)?;
    Some(seconds * 1000 + fraction_ms(fraction)?)
}

/// The milliseconds of a fraction's digits ("25" → 250).
fn fraction_ms(digits: &[u8]) -> Option<i64> {
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut ms = 0;
    for i in 0..3 {
        ms = ms * 10 + digits.get(i).map_or(0, |d| i64::from(d - b'0'));
    }
    Some(ms)
}

fn number(digits: &[u8]) -> Option<i64> {
    ascii_number(digits).map(|n| n as i64)
}

/// `13:55:36`.
fn clock(text: &[u8]) -> Option<(i64, i64, i64)> {
    if text[2] != b':' || text[5] != b':' {
        return None;
    }
    let (h, m, s) = (
        number(&text[0..2])?,
        number(&text[3..5])?,
        number(&text[6..8])?,
    );
    (h < 24 && m < 60 && s <= 60).then_some((h, m, s))
}

/// `-0700`, or `-07:00` with `colon`.
fn offset_minutes(text: &[u8], colon: bool) -> Option<i64> {
    let sign = match text.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (hours, minutes) = match (colon, text.len()) {
        (false, 5) => (&text[1..3], &text[3..5]),
        (true, 6) if text[3] == b':' => (&text[1..3], &text[4..6]),
        _ => return None,
    };
    Some(sign * (number(hours)? * 60 + number(minutes)?))
}

/// A civil date and time at `offset` minutes east of UTC, in UTC ms.
fn utc_ms(
    year: i64,
    month: i64,
    day: i64,
    (h, m, s): (i64, i64, i64),
    millis: i64,
    offset: i64,
) -> Option<i64> {
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    Some((utc_seconds(year, month, day, (h, m, s)) - offset * 60) * 1000 + millis)
}

/// A decimal number of ASCII digits.
pub(super) fn ascii_number(value: &[u8]) -> Option<u64> {
    if value.is_empty() || value.len() > 19 {
        return None;
    }
    value.iter().try_fold(0u64, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + u64::from(b - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_agree_with_date() {
        // date -u -d "2026-10-10 11:55:36" +%s: 1791633336.
        assert_eq!(
            local_time_ms(b"10/Oct/2026:13:55:36 +0200"),
            Some(1_791_633_336_000)
        );
        assert_eq!(
            iso8601_ms(b"2026-10-10T04:55:36-07:00"),
            Some(1_791_633_336_000)
        );
        assert_eq!(
            iso8601_ms(b"2026-10-10T11:55:36.5Z"),
            Some(1_791_633_336_500)
        );
        // Leap day, and the epoch.
        assert_eq!(
            local_time_ms(b"29/Feb/2028:00:00:00 +0000"),
            Some(1_835_395_200_000)
        );
        assert_eq!(local_time_ms(b"01/Jan/1970:00:00:00 +0000"), Some(0));
        assert_eq!(seconds_ms(b"1791633336.123"), Some(1_791_633_336_123));
        assert_eq!(seconds_ms(b"0.042"), Some(42));
        for bad in [
            &b"10/Oct/2026:25:55:36 +0200"[..],
            b"10/Oct/2026:13:55:36 0200",
            b"x",
        ] {
            assert_eq!(local_time_ms(bad), None);
        }
    }
}
