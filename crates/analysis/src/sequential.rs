//! A capacity level judged second by second: when its warm-up is over
//! (throughput and response time steady for a few seconds), and when its
//! verdict is settled (every figure the target names has its confidence
//! interval wholly on one side of its bound), so that the level can stop
//! before its full duration.

use crate::capacity::Target;

/// One second of a level, all labels but groups.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Second {
    /// The second's length (the last one of a run may be shorter).
    pub length_s: f64,
    pub requests: u64,
    pub errors: u64,
    /// Satisfied + tolerating / 2: the Apdex's numerator.
    pub apdex_points: f64,
    /// Requests slower than the p95 bound of the target (0 without one).
    pub over_p95: u64,
    /// Mean response time of the second's requests, seconds.
    pub mean_s: f64,
}

/// The level's seconds looked at every second: an interval this wide
/// (99%, two-sided) keeps repeated looks from settling on chance.
pub const Z: f64 = 2.576;

/// A figure over the seconds so far with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// Student's t at 99% two-sided for `df` degrees of freedom (few seconds
/// give a wider interval than z).
fn t99(df: usize) -> f64 {
    const T: [f64; 10] = [
        63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
    ];
    match df {
        0 => f64::INFINITY,
        1..=10 => T[df - 1],
        11..=20 => 3.106 - (df - 11) as f64 * (3.106 - 2.845) / 9.0,
        21..=40 => 2.845 - (df - 21) as f64 * (2.845 - 2.704) / 19.0,
        _ => Z,
    }
}

/// The share Σy / Σn over the seconds (y ≤ n each second), with an
/// interval from the spread of the seconds around it (each second a
/// cluster of requests: the ratio estimator's variance). With `floor`, never
/// narrower than a binomial share of the same requests (Agresti–Coull):
/// 20 requests all satisfied have not shown an Apdex of 1.
pub fn share(seconds: &[(f64, f64)], floor: bool) -> Option<Interval> {
    let m = seconds.len();
    let n: f64 = seconds.iter().map(|s| s.0).sum();
    if m < 2 || n <= 0.0 {
        return None;
    }
    let y: f64 = seconds.iter().map(|s| s.1).sum();
    let r = y / n;
    let mean_n = n / m as f64;
    let spread: f64 = seconds.iter().map(|s| (s.1 - r * s.0).powi(2)).sum();
    let cluster = (spread / ((m * (m - 1)) as f64 * mean_n * mean_n)).sqrt();
    let adjusted = (y + 2.0) / (n + 4.0);
    let binomial = if floor {
        Z * (adjusted * (1.0 - adjusted) / (n + 4.0)).sqrt()
    } else {
        0.0
    };
    let half = (t99(m - 1) * cluster).max(binomial);
    Some(Interval {
        estimate: r,
        low: (r - half).max(0.0),
        high: (r + half).min(1.0),
    })
}

/// A settled verdict and the figure that settled it.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    pub met: bool,
    /// "Apdex 0.97 (0.95–0.99) above 0.85", "errors 30% (22–38%) above 1%".
    pub why: String,
}

/// Whether the seconds so far settle the level's verdict: broken when any
/// figure's interval lies wholly on the wrong side of its bound, met when
/// every figure's lies wholly on the right side; `None` while any
/// straddles (the level runs on).
pub fn settle(target: &Target, seconds: &[Second]) -> Option<Settled> {
    let pairs = |f: fn(&Second) -> f64| -> Vec<(f64, f64)> {
        seconds.iter().map(|s| (s.requests as f64, f(s))).collect()
    };
    let apdex = share(&pairs(|s| s.apdex_points), true)?;
    // Errors are judged on their own spread: a level without errors so far
    // is taken to have none (its Apdex shows a server in trouble first).
    let errors = share(&pairs(|s| s.errors as f64), false)?;
    let mut figures = vec![
        (
            // Apdex: higher is better.
            Interval {
                estimate: -apdex.estimate,
                low: -apdex.high,
                high: -apdex.low,
            },
            -target.apdex + 1e-9,
            format!(
                "Apdex {:.3} ({:.3}–{:.3})",
                apdex.estimate, apdex.low, apdex.high
            ),
            format!("{:.2}", target.apdex),
        ),
        (
            errors,
            target.max_error,
            format!(
                "errors {} ({}–{})",
                percent(errors.estimate),
                percent(errors.low),
                percent(errors.high)
            ),
            percent(target.max_error),
        ),
    ];
    if let Some(bound) = target.p95_max {
        let over = share(&pairs(|s| s.over_p95 as f64), true)?;
        figures.push((
            over,
            0.05,
            format!(
                "requests over {} ms {} ({}–{})",
                bound.as_millis(),
                percent(over.estimate),
                percent(over.low),
                percent(over.high)
            ),
            "5% (the p95 bound)".into(),
        ));
    }
    // Each figure here is "lower is better, at most `limit`".
    if let Some((_, _, said, limit)) = figures.iter().find(|f| f.0.low > f.1) {
        return Some(Settled {
            met: false,
            why: format!("{said} beyond {limit}"),
        });
    }
    figures.iter().all(|f| f.0.high <= f.1).then(|| Settled {
        met: true,
        why: figures
            .iter()
            .map(|f| format!("{} within {}", f.2, f.3))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

fn percent(share: f64) -> String {
    let pct = share * 100.0;
    if pct != 0.0 && pct < 0.1 {
        format!("{pct:.2}%")
    } else {
        format!("{pct:.1}%")
    }
}

/// Seconds a level must hold steady to end its warm-up.
pub const STEADY_SECONDS: usize = 3;

/// Whether the last [`STEADY_SECONDS`] seconds are steady: their
/// throughput and mean response time each within a band around their
/// mean (10% and 15%, wider when few requests make a second noisy:
/// 3/√requests).
pub fn steady(seconds: &[Second]) -> bool {
    if seconds.len() < STEADY_SECONDS {
        return false;
    }
    let last = &seconds[seconds.len() - STEADY_SECONDS..];
    if last.iter().any(|s| s.requests == 0 || s.length_s < 0.5) {
        return false;
    }
    let mean_requests = last.iter().map(|s| s.requests as f64).sum::<f64>() / last.len() as f64;
    let noise = 3.0 / mean_requests.sqrt();
    let within = |values: Vec<f64>, band: f64| {
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        mean > 0.0 && values.iter().all(|v| (v - mean).abs() <= band * mean)
    };
    within(
        last.iter()
            .map(|s| s.requests as f64 / s.length_s)
            .collect(),
        noise.max(0.10),
    ) && within(last.iter().map(|s| s.mean_s).collect(), noise.max(0.15))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn second(requests: u64, satisfied: u64, errors: u64) -> Second {
        Second {
            length_s: 1.0,
            requests,
            errors,
            apdex_points: satisfied as f64 + (requests - satisfied) as f64 / 2.0,
            over_p95: 0,
            mean_s: 0.1,
        }
    }

    const TARGET: Target = Target {
        apdex: 0.85,
        max_error: 0.01,
        p95_max: None,
    };

    #[test]
    fn a_clear_level_settles_and_a_close_one_runs_on() {
        // Every request satisfied, 100 a second: met after 2 seconds.
        let clear: Vec<Second> = (0..2).map(|_| second(100, 100, 0)).collect();
        let settled = settle(&TARGET, &clear).unwrap();
        assert!(settled.met, "{settled:?}");
        assert!(settled.why.contains("Apdex 1.000"), "{}", settled.why);
        // Half the requests tolerated (Apdex 0.75): broken.
        let slow: Vec<Second> = (0..3).map(|_| second(100, 50, 0)).collect();
        assert!(!settle(&TARGET, &slow).unwrap().met);
        // Apdex 0.85 exactly, seconds scattered: it straddles.
        let close: Vec<Second> = [80, 60, 70, 70, 60, 80]
            .iter()
            .map(|&s| second(100, s, 0))
            .collect();
        assert_eq!(settle(&TARGET, &close), None);
        // Errors: 5% is beyond 1%, whatever the Apdex.
        let failing: Vec<Second> = (0..4).map(|_| second(100, 100, 5)).collect();
        let settled = settle(&TARGET, &failing).unwrap();
        assert!(!settled.met && settled.why.starts_with("errors 5.0%"));
        // One second is not an interval.
        assert_eq!(settle(&TARGET, &clear[..1]), None);
    }

    #[test]
    fn few_requests_do_not_settle_a_near_target() {
        // 5 requests a second, all satisfied, against 0.97: the binomial
        // floor keeps it open until enough requests came.
        let strict = Target {
            apdex: 0.97,
            ..TARGET
        };
        let few: Vec<Second> = (0..4).map(|_| second(5, 5, 0)).collect();
        assert_eq!(settle(&strict, &few), None);
        let many: Vec<Second> = (0..40).map(|_| second(5, 5, 0)).collect();
        assert!(settle(&strict, &many).unwrap().met);
    }

    #[test]
    fn the_p95_bound_counts_slow_requests() {
        let target = Target {
            p95_max: Some(Duration::from_millis(200)),
            ..TARGET
        };
        let mut slow = second(100, 100, 0);
        slow.over_p95 = 20;
        let settled = settle(&target, &[slow; 3]).unwrap();
        assert!(!settled.met);
        assert!(settled.why.contains("over 200 ms 20.0%"), "{}", settled.why);
        let fast: Vec<Second> = (0..3).map(|_| second(200, 200, 0)).collect();
        assert!(settle(&target, &fast).unwrap().met);
    }

    #[test]
    fn the_interval_narrows_with_seconds() {
        let pairs: Vec<(f64, f64)> = (0..5).map(|i| (100.0, 80.0 + i as f64)).collect();
        let five = share(&pairs, true).unwrap();
        let pairs: Vec<(f64, f64)> = (0..50).map(|i| (100.0, 80.0 + (i % 5) as f64)).collect();
        let fifty = share(&pairs, true).unwrap();
        assert!((five.estimate - 0.82).abs() < 1e-9);
        assert!(fifty.high - fifty.low < (five.high - five.low) / 2.0);
        assert!(five.low < 0.82 && five.high > 0.82);
    }

    #[test]
    fn steady_after_the_ramp() {
        let at = |requests: u64, mean_s: f64| Second {
            mean_s,
            ..second(requests, requests, 0)
        };
        // Climbing throughput: not steady; then three steady seconds.
        let ramp = [at(20, 0.1), at(40, 0.1), at(80, 0.1)];
        assert!(!steady(&ramp));
        let settled = [at(80, 0.1), at(100, 0.12), at(98, 0.12), at(102, 0.13)];
        assert!(steady(&settled));
        // A response time still growing (a queue filling): not steady.
        let queue = [at(100, 0.2), at(100, 0.3), at(100, 0.4)];
        assert!(!steady(&queue));
        // 4 requests a second: ±150% noise is allowed.
        let sparse = [at(3, 0.1), at(5, 0.1), at(4, 0.1)];
        assert!(steady(&sparse));
        assert!(!steady(&settled[..2]));
    }
}
