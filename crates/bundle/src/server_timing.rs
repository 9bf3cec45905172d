//! Where a request's time went, in the server's own words: the
//! `Server-Timing` response header (`db;dur=53.2, app;dur=47`, W3C Server
//! Timing), read from each response into a fixed record and summed per
//! label and metric name without allocating. The first
//! [`TIMING_METRICS`] names of a response (and of a label) are kept;
//! names are cut to [`NAME_BYTES`] bytes.

use serde::{Deserialize, Serialize};

/// Metrics kept per response, and per label's sums.
pub const TIMING_METRICS: usize = 8;
/// The longest metric name kept (a longer one is cut).
pub const NAME_BYTES: usize = 24;

/// A metric's name, inline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetricName {
    bytes: [u8; NAME_BYTES],
    len: u8,
}

impl MetricName {
    fn new(name: &[u8]) -> MetricName {
        let mut bytes = [0; NAME_BYTES];
        let len = name.len().min(NAME_BYTES);
        bytes[..len].copy_from_slice(&name[..len]);
        MetricName {
            bytes,
            len: len as u8,
        }
    }

    pub fn as_str(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.bytes[..usize::from(self.len)])
    }
}

/// One response's Server-Timing metrics that had a duration, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerTiming {
    metrics: [(MetricName, u32); TIMING_METRICS],
    len: u8,
}

impl ServerTiming {
    /// Adds the metrics of one header value: `name;dur=12.5;desc="x", ...`.
    /// A metric without a valid `dur` is left out; a name given twice
    /// keeps its first duration (as the specification says).
    pub fn add_header(&mut self, value: &[u8]) {
        for metric in value.split(|&b| b == b',') {
            let mut params = metric.split(|&b| b == b';');
            let name = params.next().unwrap_or_default().trim_ascii();
            if name.is_empty() || !name.iter().all(|b| b.is_ascii_graphic() && *b != b'"') {
                continue;
            }
            let duration = params.find_map(|p| {
                let (key, value) = p.split_at(p.iter().position(|&b| b == b'=')?);
                key.trim_ascii()
                    .eq_ignore_ascii_case(b"dur")
                    .then(|| milliseconds(&value[1..]))?
            });
            let (Some(ms), true) = (duration, usize::from(self.len) < TIMING_METRICS) else {
                continue;
            };
            let name = MetricName::new(name);
            if self.metrics[..usize::from(self.len)]
                .iter()
                .any(|(n, _)| *n == name)
            {
                continue;
            }
            self.metrics[usize::from(self.len)] = (name, (ms * 1000.0).round() as u32);
            self.len += 1;
        }
    }

    /// Each metric's name and duration, µs.
    pub fn metrics(&self) -> &[(MetricName, u32)] {
        &self.metrics[..usize::from(self.len)]
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A `dur` value: milliseconds, plain or quoted; at most an hour.
fn milliseconds(value: &[u8]) -> Option<f64> {
    let value = value.trim_ascii();
    let value = value
        .strip_prefix(b"\"")
        .and_then(|v| v.strip_suffix(b"\""))
        .unwrap_or(value);
    let ms: f64 = std::str::from_utf8(value).ok()?.parse().ok()?;
    (ms.is_finite() && (0.0..=3_600_000.0).contains(&ms)).then_some(ms)
}

/// Per metric name: how many responses gave it and their durations'
/// sum, µs; responses whose names found no free slot are counted apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimingSums {
    slots: [(MetricName, u64, u64); TIMING_METRICS],
    len: u8,
    /// Responses that had Server-Timing at all.
    pub responses: u64,
    /// Metrics left out for want of a slot.
    pub other: u64,
}

impl TimingSums {
    #[inline]
    pub fn record(&mut self, timing: &ServerTiming) {
        if timing.is_empty() {
            return;
        }
        self.responses += 1;
        for &(name, micros) in timing.metrics() {
            self.add_metric(name, 1, u64::from(micros));
        }
    }

    fn add_metric(&mut self, name: MetricName, count: u64, micros: u64) {
        let used = usize::from(self.len);
        if let Some(slot) = self.slots[..used].iter_mut().find(|s| s.0 == name) {
            slot.1 += count;
            slot.2 += micros;
        } else if used < TIMING_METRICS {
            self.slots[used] = (name, count, micros);
            self.len += 1;
        } else {
            self.other += count;
        }
    }

    pub fn add(&mut self, other: &TimingSums) {
        self.responses += other.responses;
        self.other += other.other;
        for &(name, count, micros) in &other.slots[..usize::from(other.len)] {
            self.add_metric(name, count, micros);
        }
    }

    /// Each metric: name, responses that gave it, mean duration (ms).
    pub fn figures(&self) -> Vec<TimingFigure> {
        self.slots[..usize::from(self.len)]
            .iter()
            .map(|(name, count, micros)| TimingFigure {
                name: name.as_str().into_owned(),
                count: *count,
                mean_ms: (*micros as f64 / (*count).max(1) as f64).round() / 1000.0,
            })
            .collect()
    }
}

/// One Server-Timing metric of a label over a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimingFigure {
    pub name: String,
    /// Responses that gave it.
    pub count: u64,
    /// Its mean duration, as the server gave it.
    pub mean_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(values: &[&str]) -> ServerTiming {
        let mut t = ServerTiming::default();
        for v in values {
            t.add_header(v.as_bytes());
        }
        t
    }

    #[test]
    fn a_header_gives_each_metric_with_a_duration() {
        let t = timing(&[
            "db;dur=53.25;desc=\"Database\", app;dur=47.2, cache;desc=\"hit\", miss",
            "total;dur=\"100.5\", db;dur=9",
        ]);
        let got: Vec<(String, u32)> = t
            .metrics()
            .iter()
            .map(|(n, us)| (n.as_str().into_owned(), *us))
            .collect();
        assert_eq!(
            got,
            vec![
                ("db".into(), 53_250),
                ("app".into(), 47_200),
                ("total".into(), 100_500)
            ]
        );
    }

    #[test]
    fn bad_values_are_left_out_and_names_are_kept_short() {
        let t = timing(&["a;dur=-1, b;dur=x, c;dur=1e309, ;dur=4, \"q\";dur=1"]);
        assert!(t.is_empty());
        let long = timing(&["a-very-long-metric-name-of-many-bytes;dur=1"]);
        assert_eq!(long.metrics()[0].0.as_str(), "a-very-long-metric-name-");
        let many: String = (0..12).map(|i| format!("m{i};dur=1,")).collect();
        assert_eq!(timing(&[&many]).metrics().len(), TIMING_METRICS);
    }

    #[test]
    fn sums_add_per_name_and_give_means() {
        let mut a = TimingSums::default();
        a.record(&timing(&["db;dur=40, app;dur=10"]));
        a.record(&timing(&["db;dur=60"]));
        a.record(&ServerTiming::default());
        let mut b = TimingSums::default();
        b.record(&timing(&["app;dur=20, render;dur=5"]));
        a.add(&b);
        assert_eq!(a.responses, 3);
        let figures = a.figures();
        let mean = |name: &str| {
            figures
                .iter()
                .find(|f| f.name == name)
                .map(|f| (f.count, f.mean_ms))
        };
        assert_eq!(mean("db"), Some((2, 50.0)));
        assert_eq!(mean("app"), Some((2, 15.0)));
        assert_eq!(mean("render"), Some((1, 5.0)));
    }
}
