//! Pass/fail criteria (`--fail-if`): `METRIC[LABEL] OP VALUE`, true means the
//! run failed. Examples: `apdex<0.85`, `p95>2s`, `errors>1%`, `errors>10`,
//! `rps<100`, `p99[login]>800ms`.

use crate::summary::LabelSummary;
use headroom_units::quantity::{parse_duration, parse_percent, Readable};
use serde::Serialize;
use std::fmt;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Apdex,
    /// Errors as a fraction of samples (`errors>1%`).
    ErrorRate,
    /// Errors as a count (`errors>10`).
    Errors,
    Rps,
    Count,
    Mean,
    Min,
    Max,
    P50,
    P90,
    P95,
    P99,
    /// A capacity search's answer (`users<40`); not a run's figure.
    Users,
}

impl Metric {
    fn is_duration(self) -> bool {
        matches!(
            self,
            Metric::Mean
                | Metric::Min
                | Metric::Max
                | Metric::P50
                | Metric::P90
                | Metric::P95
                | Metric::P99
        )
    }

    /// Unit of [`Verdict::measured`] and [`Criterion::threshold`].
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Apdex => "score",
            Metric::ErrorRate => "fraction",
            Metric::Errors | Metric::Count | Metric::Users => "count",
            Metric::Rps => "per_second",
            _ => "seconds",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Metric::Apdex => "apdex",
            Metric::ErrorRate | Metric::Errors => "errors",
            Metric::Rps => "rps",
            Metric::Count => "count",
            Metric::Mean => "mean",
            Metric::Min => "min",
            Metric::Max => "max",
            Metric::P50 => "p50",
            Metric::P90 => "p90",
            Metric::P95 => "p95",
            Metric::P99 => "p99",
            Metric::Users => "users",
        }
    }

    /// The metric's value in the criterion's unit: seconds for durations,
    /// a fraction for error rates, plain numbers otherwise.
    fn value(self, s: &LabelSummary) -> Option<f64> {
        let secs = |d: Duration| Some(d.as_secs_f64());
        match self {
            Metric::Apdex => s.apdex,
            Metric::ErrorRate => Some(s.error_rate),
            Metric::Errors => Some(s.errors as f64),
            Metric::Rps => Some(s.rps),
            Metric::Count => Some(s.count as f64),
            Metric::Mean => secs(s.latency.mean),
            Metric::Min => secs(s.latency.min),
            Metric::Max => secs(s.latency.max),
            Metric::P50 => secs(s.latency.p50),
            Metric::P90 => secs(s.latency.p90),
            Metric::P95 => secs(s.latency.p95),
            Metric::P99 => secs(s.latency.p99),
            // A run has no capacity answer.
            Metric::Users => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Operator {
    #[serde(rename = "<")]
    Less,
    #[serde(rename = "<=")]
    LessOrEqual,
    #[serde(rename = ">")]
    Greater,
    #[serde(rename = ">=")]
    GreaterOrEqual,
}

impl Operator {
    fn holds(self, left: f64, right: f64) -> bool {
        match self {
            Operator::Less => left < right,
            Operator::LessOrEqual => left <= right,
            Operator::Greater => left > right,
            Operator::GreaterOrEqual => left >= right,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            Operator::Less => "<",
            Operator::LessOrEqual => "<=",
            Operator::Greater => ">",
            Operator::GreaterOrEqual => ">=",
        }
    }
}

/// One `--fail-if` criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Criterion {
    /// The text the user wrote, used in messages and JUnit case names.
    pub expression: String,
    pub metric: Metric,
    /// `None` for the run's total.
    pub label: Option<String>,
    pub comparison: Operator,
    /// Threshold in the metric's unit (seconds, fraction, number).
    pub threshold: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --fail-if '{expression}': {reason}")]
pub struct CriterionError {
    pub expression: String,
    pub reason: String,
}

/// The outcome of one criterion on one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub criterion: Criterion,
    /// The measured value in the criterion's unit, `None` when there was
    /// nothing to measure (no samples, or an unknown label).
    pub measured: Option<f64>,
    /// True when the criterion is met, i.e. the run fails.
    pub failed: bool,
    pub message: String,
}

impl Criterion {
    pub fn parse(expression: &str) -> Result<Criterion, CriterionError> {
        let fail = |reason: String| CriterionError {
            expression: expression.to_string(),
            reason,
        };
        let text = expression.trim();
        let op_at = text.find(['<', '>']).ok_or_else(|| {
            fail("no comparison: write METRIC<VALUE or METRIC>VALUE, e.g. p95>2s".into())
        })?;
        let (left, right) = text.split_at(op_at);
        let (comparison, value_text) = if let Some(v) = right.strip_prefix("<=") {
            (Operator::LessOrEqual, v)
        } else if let Some(v) = right.strip_prefix(">=") {
            (Operator::GreaterOrEqual, v)
        } else if let Some(v) = right.strip_prefix('<') {
            (Operator::Less, v)
        } else {
            (Operator::Greater, &right[1..])
        };
        let value_text = value_text.trim();
        let left = left.trim();
        let (metric_text, label) = match left.split_once('[') {
            Some((m, rest)) => {
                let label = rest.strip_suffix(']').ok_or_else(|| {
                    fail("a label in brackets must end with ']', e.g. p95[login]>2s".into())
                })?;
                if label.is_empty() {
                    return Err(fail("empty label in brackets".into()));
                }
                (m.trim(), Some(label.to_string()))
            }
            None => (left, None),
        };
        let metric = match metric_text.to_ascii_lowercase().as_str() {
            "apdex" => Metric::Apdex,
            "errors" | "error_rate" | "error-rate" => {
                if parse_percent(value_text).is_some() {
                    Metric::ErrorRate
                } else {
                    Metric::Errors
                }
            }
            "rps" | "throughput" => Metric::Rps,
            "count" | "samples" => Metric::Count,
            "mean" | "avg" => Metric::Mean,
            "min" => Metric::Min,
            "max" => Metric::Max,
            "p50" | "median" => Metric::P50,
            "p90" => Metric::P90,
            "p95" => Metric::P95,
            "p99" => Metric::P99,
            "users" => Metric::Users,
            other => {
                return Err(fail(format!(
                    "unknown metric '{other}': use apdex, errors, rps, count, mean, min, max, p50, p90, p95, p99 (or users, for capacity)"
                )))
            }
        };
        let threshold = if metric.is_duration() {
            parse_duration(value_text)
                .map_err(|e| fail(format!("{} needs a duration: {e}", metric.name())))?
                .as_secs_f64()
        } else if metric == Metric::ErrorRate {
            parse_percent(value_text).unwrap_or_default()
        } else {
            let number = value_text.trim_end_matches("/s");
            number
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| fail(format!("'{value_text}' is not a number")))?
        };
        if metric == Metric::Apdex && !(0.0..=1.0).contains(&threshold) {
            return Err(fail("an Apdex threshold lies between 0 and 1".into()));
        }
        Ok(Criterion {
            expression: text.to_string(),
            metric,
            label,
            comparison,
            threshold,
        })
    }

    fn render(&self, value: f64) -> String {
        // No "-0.000": a negative zero prints as zero.
        let value = value + 0.0;
        if self.metric.is_duration() {
            Readable(headroom_units::quantity::saturating_secs(value)).to_string()
        } else if self.metric == Metric::ErrorRate {
            format!("{:.2}%", value * 100.0)
        } else if self.metric == Metric::Apdex {
            format!("{value:.3}")
        } else if value.fract() == 0.0 {
            format!("{value}")
        } else {
            format!("{value:.1}")
        }
    }

    /// Evaluates the criterion on a figure measured elsewhere (a capacity
    /// search's answer), in the criterion's unit; `None`: nothing measured.
    pub fn evaluate_measured(&self, measured: Option<f64>, what: &str) -> Verdict {
        let scope = self.metric.name();
        match measured {
            None => self.verdict(
                None,
                true,
                format!("{}: no {what} to measure {scope}", self.expression),
            ),
            Some(v) => self.judge(v, scope),
        }
    }

    /// Evaluates the criterion; `summary` is the total, or the label's summary
    /// when the criterion names a label (`None` when the run has no such label).
    pub fn evaluate(&self, summary: Option<&LabelSummary>) -> Verdict {
        let measured = summary.and_then(|s| self.metric.value(s));
        let scope = match &self.label {
            Some(label) => format!("{}[{label}]", self.metric.name()),
            None => self.metric.name().to_string(),
        };
        match (summary, measured) {
            (None, _) => self.verdict(
                None,
                true,
                format!(
                    "{}: the run has no label '{}'",
                    self.expression,
                    self.label.as_deref().unwrap_or_default()
                ),
            ),
            (Some(_), None) => self.verdict(
                None,
                true,
                format!("{}: no samples to measure {scope}", self.expression),
            ),
            (Some(_), Some(v)) => self.judge(v, &scope),
        }
    }

    /// The verdict on the measured value `v` of `scope`.
    fn judge(&self, v: f64, scope: &str) -> Verdict {
        let failed = self.comparison.holds(v, self.threshold);
        let verb = if failed { "FAILED" } else { "passed" };
        let message = format!(
            "{verb}: {scope} = {} (fails if {} {})",
            self.render(v),
            self.comparison.symbol(),
            self.render(self.threshold)
        );
        self.verdict(Some(v), failed, message)
    }

    fn verdict(&self, measured: Option<f64>, failed: bool, message: String) -> Verdict {
        Verdict {
            criterion: self.clone(),
            measured,
            failed,
            message,
        }
    }
}

impl fmt::Display for Criterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.expression)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apdex::ApdexCounts;
    use crate::latency::LatencyStats;

    fn summary() -> LabelSummary {
        LabelSummary {
            count: 1000,
            errors: 20,
            error_rate: 0.02,
            latency: LatencyStats {
                count: 1000,
                p95: Duration::from_millis(1500),
                ..Default::default()
            },
            rps: 250.0,
            apdex: Some(0.8),
            apdex_rating: None,
            apdex_counts: ApdexCounts::default(),
            bytes_received: 0,
            bytes_sent: 0,
        }
    }

    #[test]
    fn parses_and_evaluates() {
        let s = summary();
        let check = |e: &str| Criterion::parse(e).unwrap().evaluate(Some(&s)).failed;
        assert!(check("apdex<0.85"));
        assert!(!check("apdex<0.75"));
        assert!(check("p95>1s"));
        assert!(!check("p95>2s"));
        assert!(check("errors>1%"));
        assert!(!check("errors>5%"));
        assert!(check("errors>10"));
        assert!(!check("errors>=21"));
        assert!(check("rps<300"));
        assert!(!check("rps<100/s"));
        let c = Criterion::parse("p99[login] > 800ms").unwrap();
        assert_eq!(c.label.as_deref(), Some("login"));
        assert_eq!(c.threshold, 0.8);
        assert!(
            c.evaluate(None).failed,
            "a missing label fails rather than passes silently"
        );
    }

    proptest::proptest! {
        #[test]
        fn parser_never_panics(text in "\\PC{0,32}") {
            if let Ok(c) = Criterion::parse(&text) {
                let _ = c.evaluate(Some(&summary()));
            }
        }
    }

    #[test]
    fn rejects_bad_expressions_with_reasons() {
        for (bad, hint) in [
            ("p95", "no comparison"),
            ("latency>2s", "unknown metric"),
            ("p95>fast", "needs a duration"),
            ("apdex<1.5", "between 0 and 1"),
            ("rps<lots", "not a number"),
            ("p95[login>2s", "end with ']'"),
        ] {
            let e = Criterion::parse(bad).unwrap_err().to_string();
            assert!(e.contains(hint), "{bad}: {e}");
        }
    }
}
