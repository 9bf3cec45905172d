//! Typed quantities at the user's edge: durations (`500ms`, `1.5s`, `2m`,
//! `1h30m`), rates (`500/s`, `180/min`) and readable renderings of both.
//! Parse errors say what was expected, so CLI and scenario errors can quote them.

use std::fmt;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct QuantityError {
    pub message: String,
}

fn err(message: String) -> QuantityError {
    QuantityError { message }
}

/// 1234567 → "1,234,567" (and -1234 → "-1,234").
pub fn group_thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::from(if n < 0 { "-" } else { "" });
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A figure with as many digits as it deserves: 12,345 · 123.4 · 12.34 · 0.1234.
pub fn figure(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 1e15 {
        format!("{v:.3e}")
    } else if a >= 1000.0 {
        group_thousands(v.round() as i64)
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// "1 level", "3 levels": a count and its noun, singular or plural
/// (the count grouped by thousands: "1,200 requests").
pub fn count(n: usize, singular: &str, plural: &str) -> String {
    format!(
        "{} {}",
        group_thousands(i64::try_from(n).unwrap_or(i64::MAX)),
        noun(n, singular, plural)
    )
}

/// The noun alone for a count: `noun(1, "group", "groups")` is "group",
/// `noun(0, ..)` and `noun(2, ..)` are "groups" (for sentences that print
/// the figure elsewhere, e.g. in a table cell or a bold span).
pub fn noun<'a>(n: usize, singular: &'a str, plural: &'a str) -> &'a str {
    if n == 1 {
        singular
    } else {
        plural
    }
}

/// A duration's figure as a person reads it: whole ("2"), or with the one
/// decimal it has ("2.5").
pub fn round_figure(value: f64) -> String {
    if (value - value.round()).abs() < 0.05 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

/// A range with its unit: "1–3 s", "2–2.5 s", and "1 s" when both
/// ends are the same (never "1–1 s").
pub fn span(low: f64, high: f64, unit: &str) -> String {
    let (low, high) = (round_figure(low), round_figure(high));
    if low == high {
        format!("{low} {unit}")
    } else {
        format!("{low}–{high} {unit}")
    }
}

/// Seconds as a `Duration`, never panicking: negative and NaN give zero,
/// and what is too large to hold gives `Duration::MAX` (figures read from
/// files can be anything).
pub fn saturating_secs(seconds: f64) -> Duration {
    if seconds.is_nan() || seconds <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX)
}

/// Parses a duration such as `250ms`, `1.5s`, `2m`, `1h30m`, `90` (seconds).
pub fn parse_duration(input: &str) -> Result<Duration, QuantityError> {
    let text = input.trim();
    if text.is_empty() {
        return Err(err("empty duration: write e.g. 500ms, 10s, 2m or 1h".into()));
    }
    let mut total = 0f64;
    let mut rest = text;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if number_len == 0 {
            return Err(err(format!(
                "'{text}' is not a duration: expected a number before '{rest}' (e.g. 500ms, 10s, 2m, 1h30m)"
            )));
        }
        let number: f64 = rest[..number_len].parse().map_err(|_| {
            err(format!(
                "'{}' in '{text}' is not a number",
                &rest[..number_len]
            ))
        })?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = rest[..unit_len].trim();
        rest = &rest[unit_len..];
        let seconds_per_unit = match unit {
            "" if rest.is_empty() && total == 0.0 => 1.0,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" | "sec" | "secs" => 1.0,
            "m" | "min" | "mins" => 60.0,
            "h" | "hr" | "hrs" => 3600.0,
            _ => {
                return Err(err(format!(
                    "'{text}' has an unknown unit '{unit}': use us, ms, s, m or h"
                )))
            }
        };
        total += number * seconds_per_unit;
    }
    if !total.is_finite() || total > 1e9 {
        return Err(err(format!("'{text}' is too long a duration")));
    }
    Ok(Duration::from_secs_f64(total))
}

/// An event rate, stored as events per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub per_second: f64,
}

impl Rate {
    /// Time between two events at this rate.
    pub fn period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.per_second)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.per_second < 1.0 {
            write!(f, "{}/min", trim_float(self.per_second * 60.0))
        } else {
            write!(f, "{}/s", trim_float(self.per_second))
        }
    }
}

/// Parses `500/s`, `180/min`, `3600/h` or a bare number (per second).
pub fn parse_rate(input: &str) -> Result<Rate, QuantityError> {
    let text = input.trim();
    let (number, unit) = match text.split_once('/') {
        Some((n, u)) => (n.trim(), u.trim()),
        None => (text, "s"),
    };
    let value: f64 = number.parse().map_err(|_| {
        err(format!(
            "'{text}' is not a rate: write e.g. 500/s, 180/min or 3600/h"
        ))
    })?;
    let divisor = match unit {
        "s" | "sec" | "second" => 1.0,
        "m" | "min" | "minute" => 60.0,
        "h" | "hour" => 3600.0,
        _ => {
            return Err(err(format!(
                "'{text}' has an unknown rate unit '/{unit}': use /s, /min or /h"
            )))
        }
    };
    let per_second = value / divisor;
    if !per_second.is_finite() {
        return Err(err(format!(
            "'{text}' is not a finite rate: write a number such as 500/s"
        )));
    }
    if per_second <= 0.0 {
        return Err(err(format!("'{text}': a rate must be above zero")));
    }
    Ok(Rate { per_second })
}

/// Parses a percentage `1%` or `0.5 %` into a fraction (0.01, 0.005).
pub fn parse_percent(input: &str) -> Option<f64> {
    let number = input.trim().strip_suffix('%')?.trim();
    number.parse::<f64>().ok().map(|v| v / 100.0)
}

/// A threshold in percent: `5%` or `5` (5.0), from 0% to 1000%.
pub fn parse_threshold_pct(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let value = parse_percent(trimmed)
        .map(|fraction| fraction * 100.0)
        .or_else(|| trimmed.parse::<f64>().ok())
        .ok_or_else(|| format!("'{text}' is not a percentage such as 5%"))?;
    if !(0.0..=1000.0).contains(&value) {
        return Err(format!("'{text}' must be between 0% and 1000%"));
    }
    Ok(value)
}

/// A link's capacity in Mbit/s: `57Mbit`, `1Gbit`, `100` (Mbit/s).
pub fn parse_link_mbit(text: &str) -> Result<f64, String> {
    let t = text.trim().to_ascii_lowercase();
    let t = t.trim_end_matches("/s").trim_end_matches("ps");
    let (number, factor) = if let Some(n) = t.strip_suffix("gbit") {
        (n, 1000.0)
    } else if let Some(n) = t.strip_suffix("mbit") {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    number
        .trim()
        .parse::<f64>()
        .ok()
        .map(|v| v * factor)
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| format!("'{text}' is not a link capacity: write e.g. 57Mbit or 1Gbit"))
}

/// A duration in readable units: `850µs`, `12.3ms`, `1.25s`, `2m05s`.
pub struct Readable(pub Duration);

impl fmt::Display for Readable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.as_secs_f64();
        let text = if secs < 1e-3 {
            format!("{}µs", self.0.as_micros())
        } else if secs < 0.01 {
            format!("{:.2}ms", secs * 1e3)
        } else if secs < 1.0 {
            format!("{:.1}ms", secs * 1e3)
        } else if secs < 60.0 {
            format!("{:.2}s", secs)
        } else if secs < 3600.0 {
            let whole = secs.round() as u64;
            format!("{}m{:02}s", whole / 60, whole % 60)
        } else {
            let whole = secs.round() as u64;
            format!("{}h{:02}m{:02}s", whole / 3600, whole / 60 % 60, whole % 60)
        };
        f.pad(&text)
    }
}

/// A byte count in readable units: `512 B`, `1.5 KB`, `12.3 MB` (powers of 1000, as siege).
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0 as f64;
        let text = if b < 1e3 {
            format!("{} B", self.0)
        } else if b < 1e6 {
            format!("{:.1} KB", b / 1e3)
        } else if b < 1e9 {
            format!("{:.2} MB", b / 1e6)
        } else {
            format!("{:.2} GB", b / 1e9)
        };
        f.pad(&text)
    }
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_capacities_read_in_mbit() {
        assert_eq!(parse_link_mbit("57Mbit"), Ok(57.0));
        assert_eq!(parse_link_mbit("1Gbit/s"), Ok(1000.0));
        assert_eq!(parse_link_mbit(" 100 "), Ok(100.0));
        assert!(parse_link_mbit("0").unwrap_err().contains("57Mbit"));
        assert!(parse_link_mbit("fast").is_err());
    }

    #[test]
    fn counts_say_their_noun_in_the_right_number() {
        assert_eq!(count(1, "group", "groups"), "1 group");
        assert_eq!(count(0, "group", "groups"), "0 groups");
        assert_eq!(count(2, "comparison", "comparisons"), "2 comparisons");
        assert_eq!(count(1200, "request", "requests"), "1,200 requests");
        assert_eq!(noun(1, "run", "runs"), "run");
        assert_eq!(noun(3, "run", "runs"), "runs");
        assert_eq!(span(1.0, 1.02, "s"), "1 s");
        assert_eq!(span(2.0, 2.5, "s"), "2–2.5 s");
        assert_eq!(span(1.0, 3.0, "s"), "1–3 s");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        for bad in ["", "ms", "5x", "1.2.3s", "10 parsecs"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("500/s").unwrap().per_second, 500.0);
        assert_eq!(parse_rate("180/min").unwrap().per_second, 3.0);
        assert_eq!(parse_rate("3600/h").unwrap().per_second, 1.0);
        assert_eq!(parse_rate("20").unwrap().per_second, 20.0);
        assert!(parse_rate("0/s").is_err());
        assert!(parse_rate("5/fortnight").is_err());
        assert_eq!(parse_rate("180/min").unwrap().to_string(), "3/s");
        assert_eq!(parse_rate("30/min").unwrap().to_string(), "30/min");
    }

    #[test]
    fn readable() {
        assert_eq!(Readable(Duration::from_micros(850)).to_string(), "850µs");
        assert_eq!(Readable(Duration::from_micros(1234)).to_string(), "1.23ms");
        assert_eq!(Readable(Duration::from_millis(123)).to_string(), "123.0ms");
        assert_eq!(Readable(Duration::from_millis(1250)).to_string(), "1.25s");
        assert_eq!(Readable(Duration::from_secs(125)).to_string(), "2m05s");
        assert_eq!(Bytes(1500).to_string(), "1.5 KB");
        assert_eq!(parse_percent("1%"), Some(0.01));
        assert_eq!(parse_percent("1"), None);
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic(text in "\\PC{0,24}") {
            let _ = parse_duration(&text);
            let _ = parse_rate(&text);
            let _ = parse_percent(&text);
        }

        #[test]
        fn durations_round_trip_in_milliseconds(ms in 0u64..10_000_000) {
            proptest::prop_assert_eq!(parse_duration(&format!("{ms}ms")).unwrap(), Duration::from_millis(ms));
        }
    }
}
