//! Whether a run's target was serving. A run whose target was not there
//! (a service that died, a port nobody listens on) measures how fast a
//! refused connection comes back: "40,000 req/s, mean 0.0 ms". Such a run
//! is a failed run, not a repetition.
//!
//! The rule: a run failed when it finished no request; when at least
//! half of its requests failed to connect (connection refused, reset or
//! closed before a response, DNS, TLS); when none of its requests got a
//! response at all (every one refused, reset, timed out or not sent); or
//! when the target stopped serving and did not come back: its last two
//! seconds with requests or more had no response, and requests in each
//! of them failed to connect (a fault that restarts the target and
//! recovers before the end is not that). Responses with an error status
//! (HTTP 5xx, 4xx) and failed checks are answers: a server that answers
//! 503 to everything is serving, badly, and that is measured.

use headroom_bundle::intervals::IntervalRow;
use headroom_bundle::sample::ErrorKind;
use headroom_bundle::summary::LabelFigures;
use headroom_bundle::TOTAL_LABEL;

/// Connection-level failures: the target did not answer at all.
const NOT_CONNECTED: [&str; 4] = ["refused", "reset", "dns", "tls"];
/// Failures without a response (besides the connection-level ones).
const NO_RESPONSE: [&str; 3] = ["timeout", "other", "request"];
/// The share of requests failing to connect from which a run failed.
pub const FAILED_SHARE: f64 = 0.5;

/// Seconds at the end without a response from which a run failed.
const SILENT_SECONDS: usize = 2;

/// One interval of the run's total.
#[derive(Debug, Clone, PartialEq)]
pub struct Stretch {
    /// Its start, seconds into the run.
    pub second: u64,
    pub count: u64,
    pub not_connected: u64,
    /// Requests that got a response (any status).
    pub answered: u64,
}

/// The run's total per interval, from `intervals.csv`'s rows.
pub fn stretches(rows: &[IntervalRow]) -> Vec<Stretch> {
    let index = |name: &str| ErrorKind::ALL.iter().position(|k| k.name() == name);
    let sum = |row: &IntervalRow, names: &[&str]| -> u64 {
        names
            .iter()
            .filter_map(|n| index(n))
            .map(|i| row.errors_by_kind[i])
            .sum()
    };
    rows.iter()
        .filter(|r| r.label == TOTAL_LABEL)
        .map(|r| {
            let not_connected = sum(r, &NOT_CONNECTED);
            let unanswered = not_connected + sum(r, &NO_RESPONSE);
            Stretch {
                second: r.second,
                count: r.count,
                not_connected,
                answered: r.count.saturating_sub(unanswered),
            }
        })
        .collect()
}

/// Why the run's target was not serving, or `None` when it was:
/// `total` is the run's summary, `stretches` its total per interval.
pub fn not_serving(total: &LabelFigures, stretches: &[Stretch]) -> Option<String> {
    if total.count == 0 {
        return Some("no request finished".into());
    }
    let of = |kinds: &[&str]| -> u64 {
        kinds
            .iter()
            .map(|k| total.errors_by_kind.get(*k).copied().unwrap_or(0))
            .sum()
    };
    let not_connected = of(&NOT_CONNECTED);
    let share = not_connected as f64 / total.count as f64;
    let kinds = || {
        NOT_CONNECTED
            .iter()
            .chain(NO_RESPONSE.iter())
            .filter_map(|k| {
                let n = total.errors_by_kind.get(*k).copied().unwrap_or(0);
                (n > 0).then(|| format!("{k} {n}"))
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if share >= FAILED_SHARE {
        return Some(format!(
            "{}% of requests failed to connect ({} of {}: {}): the target was not serving",
            (share * 100.0).floor(),
            not_connected,
            total.count,
            kinds()
        ));
    }
    let unanswered = not_connected + of(&NO_RESPONSE);
    if unanswered >= total.count {
        return Some(format!(
            "none of its {} requests got a response ({}): the target was not serving",
            total.count,
            kinds()
        ));
    }
    let silent: Vec<&Stretch> = stretches
        .iter()
        .rev()
        .filter(|s| s.count > 0)
        .take_while(|s| s.answered == 0 && s.not_connected > 0)
        .collect();
    if silent.len() >= SILENT_SECONDS {
        let from = silent.last().map_or(0, |s| s.second);
        let requests: u64 = silent.iter().map(|s| s.count).sum();
        let refused: u64 = silent.iter().map(|s| s.not_connected).sum();
        return Some(format!(
            "the target stopped serving {from} s into the run and did not come back: none of the last {requests} requests got a response, {refused} failed to connect"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(count: u64, errors: &[(&str, u64)]) -> LabelFigures {
        let mut f = LabelFigures {
            count,
            ..LabelFigures::default()
        };
        for (k, n) in errors {
            f.errors_by_kind.insert(k.to_string(), *n);
            f.errors += n;
        }
        f
    }

    fn second(second: u64, count: u64, not_connected: u64, answered: u64) -> Stretch {
        Stretch {
            second,
            count,
            not_connected,
            answered,
        }
    }

    #[test]
    fn a_target_that_stops_answering_for_good_was_not_serving_and_one_that_recovers_was() {
        let total = figures(4000, &[("refused", 500)]);
        let died = [
            second(0, 2000, 0, 2000),
            second(1, 1500, 0, 1500),
            second(2, 300, 300, 0),
            second(3, 200, 200, 0),
        ];
        let e = not_serving(&total, &died).unwrap();
        assert_eq!(
            e,
            "the target stopped serving 2 s into the run and did not come back: none of the last 500 requests got a response, 500 failed to connect"
        );
        // A restart that recovers before the end; one silent last second.
        let recovered = [
            second(0, 2000, 0, 2000),
            second(1, 300, 300, 0),
            second(2, 200, 200, 0),
            second(3, 1500, 0, 1500),
        ];
        assert_eq!(not_serving(&total, &recovered), None);
        assert_eq!(not_serving(&total, &died[..3]), None);
        // An overloaded server whose last seconds time out: measured.
        let overloaded = [
            second(0, 100, 0, 100),
            second(1, 10, 0, 0),
            second(2, 10, 0, 0),
        ];
        assert_eq!(not_serving(&total, &overloaded), None);
    }

    #[test]
    fn a_target_that_refuses_or_never_answers_was_not_serving_and_one_that_answers_errors_was() {
        let e = not_serving(&figures(40_000, &[("refused", 39_200)]), &[]).unwrap();
        assert!(
            e.starts_with("98% of requests failed to connect (39200 of 40000: refused 39200)"),
            "{e}"
        );
        let e = not_serving(&figures(100, &[("refused", 30), ("reset", 20)]), &[]).unwrap();
        assert!(e.contains("50% of requests failed to connect"), "{e}");
        assert_eq!(not_serving(&figures(100, &[("refused", 49)]), &[]), None);
        let e = not_serving(&figures(10, &[("timeout", 10)]), &[]).unwrap();
        assert!(
            e.contains("none of its 10 requests got a response (timeout 10)"),
            "{e}"
        );
        assert_eq!(not_serving(&figures(10, &[("timeout", 9)]), &[]), None);
        assert_eq!(not_serving(&figures(500, &[("http_5xx", 500)]), &[]), None);
        assert_eq!(not_serving(&figures(500, &[]), &[]), None);
        assert_eq!(
            not_serving(&figures(0, &[]), &[]).as_deref(),
            Some("no request finished")
        );
    }
}
