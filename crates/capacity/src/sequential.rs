//! A capacity level judged second by second: when its warm-up is over
//! (throughput and response time steady for a few seconds), and when its
//! verdict is settled (every figure the target names has its confidence
//! interval wholly on one side of its bound), so that the level can stop
//! before its full duration.

use headroom_analysis::capacity::ApdexGoal;
use std::time::Duration;

/// One second of a level, all labels but groups.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LevelSecond {
    /// The second's length (the last one of a run may be shorter).
    pub length: Duration,
    pub requests: u64,
    pub errors: u64,
    /// Satisfied + tolerating / 2: the Apdex's numerator ([`headroom_analysis::apdex::ApdexCounts::points`]).
    pub apdex_points: f64,
    /// Requests slower than the p95 bound of the target (0 without one).
    pub over_p95: u64,
    /// Mean response time of the second's requests.
    pub mean_response: Duration,
}

/// The level's seconds looked at every second: an interval this wide
/// (99%, two-sided) keeps repeated looks from settling on chance.
pub const Z: f64 = 2.576;

/// A figure over the seconds so far with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
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
pub fn share(seconds: &[(f64, f64)], floor: bool) -> Option<Estimate> {
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
    Some(Estimate {
        estimate: r,
        low: (r - half).max(0.0),
        high: (r + half).min(1.0),
    })
}

/// A settled verdict and the figure that settled it.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    pub met: bool,
    /// "Apdex 0.97 (0.95–0.99) above 0.85", "errors 30% (22–38%) beyond 1%".
    pub why: String,
}

/// Whether the seconds so far settle the level's verdict: broken when any
/// figure's interval lies wholly on the wrong side of its bound, met when
/// every figure's lies wholly on the right side; `None` while any
/// straddles (the level runs on).
pub fn settle(target: &ApdexGoal, seconds: &[LevelSecond]) -> Option<Settled> {
    let pairs = |f: fn(&LevelSecond) -> f64| -> Vec<(f64, f64)> {
        seconds.iter().map(|s| (s.requests as f64, f(s))).collect()
    };
    let apdex = share(&pairs(|s| s.apdex_points), true)?;
    // Errors are judged on their own spread: a level without errors so far
    // is taken to have none (its Apdex shows a server in trouble first).
    let errors = share(&pairs(|s| s.errors as f64), false)?;
    let mut figures = vec![
        (
            // Apdex: higher is better.
            Estimate {
                estimate: -apdex.estimate,
                low: -apdex.high,
                high: -apdex.low,
            },
            -target.apdex + 1e-9,
            format!(
                "Apdex {:.3} ({:.3}–{:.3})",
                apdex.estimate, apdex.low, apdex.high
            ),
            // Said as the figure goes: above the target, or below it.
            [
                format!("above {:.2}", target.apdex),
                format!("below {:.2}", target.apdex),
            ],
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
            bounded(percent(target.max_error)),
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
            bounded("5% (the p95 bound)".into()),
        ));
    }
    // Each figure here is "lower is better, at most `limit`".
    if let Some((_, _, said, limit)) = figures.iter().find(|f| f.0.low > f.1) {
        return Some(Settled {
            met: false,
            why: format!("{said} {}", limit[1]),
        });
    }
    figures.iter().all(|f| f.0.high <= f.1).then(|| Settled {
        met: true,
        why: figures
            .iter()
            .map(|f| format!("{} {}", f.2, f.3[0]))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// A bound a figure must stay under, as a met and a broken verdict say it.
fn bounded(limit: String) -> [String; 2] {
    [format!("within {limit}"), format!("beyond {limit}")]
}

fn percent(share: f64) -> String {
    let pct = share * 100.0;
    if pct != 0.0 && pct < 0.1 {
        format!("{pct:.2}%")
    } else {
        format!("{pct:.1}%")
    }
}

/// Seconds a level must hold steady to end its warm-up; the window before
/// them is compared too, so steadiness takes twice this many seconds.
pub const STEADY_SECONDS: usize = 3;

/// Whether the level is steady: throughput and mean response time of the
/// last [`STEADY_SECONDS`] seconds each within a band around their mean
/// (10% and 15%), and those means within 10% of the window before (so a
/// queue still filling, each second a little slower, is not steady). The
/// bands widen when few requests make a second noisy (3/√requests).
/// Measured on the testbed: a closed-model level's response time climbs
/// for 15–20 s after its users have started, by less than 15% a second.
pub fn steady(seconds: &[LevelSecond]) -> bool {
    if seconds.len() < 2 * STEADY_SECONDS {
        return false;
    }
    let windows = &seconds[seconds.len() - 2 * STEADY_SECONDS..];
    if windows
        .iter()
        .any(|s| s.requests == 0 || s.length < Duration::from_millis(500))
    {
        return false;
    }
    let (before, last) = windows.split_at(STEADY_SECONDS);
    let mean_requests = last.iter().map(|s| s.requests as f64).sum::<f64>() / last.len() as f64;
    let noise = 3.0 / mean_requests.sqrt();
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
    let within = |values: &[f64], band: f64| {
        let m = mean(values);
        m > 0.0 && values.iter().all(|v| (v - m).abs() <= band * m)
    };
    let throughput = |w: &[LevelSecond]| -> Vec<f64> {
        w.iter()
            .map(|s| s.requests as f64 / s.length.as_secs_f64())
            .collect()
    };
    let response = |w: &[LevelSecond]| -> Vec<f64> {
        w.iter().map(|s| s.mean_response.as_secs_f64()).collect()
    };
    // Window means are steadier than seconds: the noise of three seconds.
    let drift = noise / (STEADY_SECONDS as f64).sqrt();
    let unchanged = |a: &[f64], b: &[f64]| (mean(a) - mean(b)).abs() <= drift.max(0.10) * mean(b);
    within(&throughput(last), noise.max(0.10))
        && within(&response(last), noise.max(0.15))
        && unchanged(&throughput(before), &throughput(last))
        && unchanged(&response(before), &response(last))
}

/// How close an Apdex estimate must come to its target for a level to
/// count as near its knee ([`near`]).
pub const NEAR_APDEX: f64 = 0.10;

/// Whether any figure the target names is near its bound: the Apdex within
/// [`NEAR_APDEX`] of its target, the error share or the share over the p95
/// bound within a factor of two of theirs. Near the knee a level's seconds
/// are not alike: its queue swings over tens of seconds (on the testbed at
/// 480 users, 5-second Apdex figures of 0.60 to 0.80 within one level),
/// so an interval over a few seconds is too narrow there, and such a level
/// measures longer before its verdict may settle.
pub fn near(target: &ApdexGoal, seconds: &[LevelSecond]) -> bool {
    let Some(window) = Window::of(seconds) else {
        return true;
    };
    let close = |share: f64, bound: f64| bound > 0.0 && share > bound / 2.0 && share < bound * 2.0;
    (window.apdex - target.apdex).abs() < NEAR_APDEX
        || close(window.errors, target.max_error)
        || (target.p95_max.is_some() && close(window.over_p95, 0.05))
}

/// A run of a level's seconds taken together: its requests, and the
/// Apdex, the error share and the share over the p95 bound of them all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub requests: u64,
    pub apdex: f64,
    pub errors: f64,
    pub over_p95: f64,
}

impl Window {
    /// None when the seconds hold no request.
    pub fn of(seconds: &[LevelSecond]) -> Option<Window> {
        let requests: u64 = seconds.iter().map(|s| s.requests).sum();
        if requests == 0 {
            return None;
        }
        let n = requests as f64;
        Some(Window {
            requests,
            apdex: seconds.iter().map(|s| s.apdex_points).sum::<f64>() / n,
            errors: seconds.iter().map(|s| s.errors).sum::<u64>() as f64 / n,
            over_p95: seconds.iter().map(|s| s.over_p95).sum::<u64>() as f64 / n,
        })
    }

    /// Whether it meets the target: the Apdex and the error share, and
    /// the p95 bound judged by the share of requests over it (at most one
    /// in twenty).
    pub fn meets(&self, target: &ApdexGoal) -> bool {
        let without_p95 = ApdexGoal {
            p95_max: None,
            ..*target
        };
        headroom_analysis::capacity::meets(
            &without_p95,
            Some(self.apdex),
            self.errors,
            None,
            self.requests,
        ) && (target.p95_max.is_none() || self.over_p95 <= 0.05)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_analysis::apdex::ApdexCounts;
    use std::time::Duration;

    fn second(requests: u64, satisfied: u64, errors: u64) -> LevelSecond {
        LevelSecond {
            length: Duration::from_secs(1),
            requests,
            errors,
            apdex_points: ApdexCounts {
                satisfied,
                tolerating: requests - satisfied,
                frustrated: 0,
            }
            .points(),
            over_p95: 0,
            mean_response: Duration::from_millis(100),
        }
    }

    const TARGET: ApdexGoal = ApdexGoal {
        apdex: 0.85,
        max_error: 0.01,
        p95_max: None,
    };

    #[test]
    fn a_clear_level_settles_and_a_close_one_runs_on() {
        // Every request satisfied, 100 a second: met after 2 seconds.
        let clear: Vec<LevelSecond> = (0..2).map(|_| second(100, 100, 0)).collect();
        let settled = settle(&TARGET, &clear).unwrap();
        assert!(settled.met, "{settled:?}");
        assert!(settled.why.contains("Apdex 1.000"), "{}", settled.why);
        // Half the requests tolerated (Apdex 0.75): broken.
        let slow: Vec<LevelSecond> = (0..3).map(|_| second(100, 50, 0)).collect();
        assert!(!settle(&TARGET, &slow).unwrap().met);
        // Apdex 0.85 exactly, seconds scattered: it straddles.
        let close: Vec<LevelSecond> = [80, 60, 70, 70, 60, 80]
            .iter()
            .map(|&s| second(100, s, 0))
            .collect();
        assert_eq!(settle(&TARGET, &close), None);
        // Errors: 5% is beyond 1%, whatever the Apdex.
        let failing: Vec<LevelSecond> = (0..4).map(|_| second(100, 100, 5)).collect();
        let settled = settle(&TARGET, &failing).unwrap();
        assert!(!settled.met && settled.why.starts_with("errors 5.0%"));
        // One second is not an interval.
        assert_eq!(settle(&TARGET, &clear[..1]), None);
    }

    #[test]
    fn few_requests_do_not_settle_a_near_target() {
        // 5 requests a second, all satisfied, against 0.97: the binomial
        // floor keeps it open until enough requests came.
        let strict = ApdexGoal {
            apdex: 0.97,
            ..TARGET
        };
        let few: Vec<LevelSecond> = (0..4).map(|_| second(5, 5, 0)).collect();
        assert_eq!(settle(&strict, &few), None);
        let many: Vec<LevelSecond> = (0..40).map(|_| second(5, 5, 0)).collect();
        assert!(settle(&strict, &many).unwrap().met);
    }

    #[test]
    fn the_p95_bound_counts_slow_requests() {
        let target = ApdexGoal {
            p95_max: Some(Duration::from_millis(200)),
            ..TARGET
        };
        let mut slow = second(100, 100, 0);
        slow.over_p95 = 20;
        let settled = settle(&target, &[slow; 3]).unwrap();
        assert!(!settled.met);
        assert!(settled.why.contains("over 200 ms 20.0%"), "{}", settled.why);
        let fast: Vec<LevelSecond> = (0..3).map(|_| second(200, 200, 0)).collect();
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
        let at = |requests: u64, mean_s: f64| LevelSecond {
            mean_response: Duration::from_secs_f64(mean_s),
            ..second(requests, requests, 0)
        };
        // Climbing throughput: not steady; then six steady seconds.
        let ramp = [
            at(20, 0.1),
            at(40, 0.1),
            at(80, 0.1),
            at(90, 0.1),
            at(95, 0.1),
            at(100, 0.1),
        ];
        assert!(!steady(&ramp));
        let settled = [
            at(600, 0.1),
            at(990, 0.12),
            at(1010, 0.12),
            at(1000, 0.12),
            at(1000, 0.12),
            at(980, 0.12),
            at(1020, 0.13),
        ];
        assert!(steady(&settled));
        assert!(!steady(&settled[..6]), "the first window still climbs");
        // A response time still growing (a queue filling): not steady.
        let queue = [at(100, 0.2), at(100, 0.3), at(100, 0.4)];
        assert!(!steady(&queue));
        // The testbed at 490 users, seconds 6 to 11 of a level: each second
        // less than 15% slower than the one before, each window of three
        // within 15% of its mean, but the second window 49% slower.
        let filling = [
            at(884, 0.226),
            at(917, 0.259),
            at(888, 0.300),
            at(864, 0.337),
            at(814, 0.403),
            at(843, 0.430),
        ];
        assert!(!steady(&filling));
        // Its seconds 15 to 20: steady.
        let full = [
            at(879, 0.546),
            at(916, 0.537),
            at(870, 0.555),
            at(892, 0.561),
            at(932, 0.525),
            at(939, 0.532),
        ];
        assert!(steady(&full));
        // 4 requests a second: ±150% noise is allowed.
        let sparse = [
            at(3, 0.1),
            at(5, 0.1),
            at(4, 0.1),
            at(4, 0.1),
            at(3, 0.1),
            at(5, 0.1),
        ];
        assert!(steady(&sparse));
        assert!(!steady(&settled[..4]));
    }

    #[test]
    fn a_window_sums_its_seconds_by_their_requests() {
        assert_eq!(Window::of(&[LevelSecond::default()]), None);
        let mut seconds = vec![second(100, 100, 0), second(300, 0, 3)];
        seconds[1].over_p95 = 40;
        let w = Window::of(&seconds).unwrap();
        assert_eq!(w.requests, 400);
        // 100 satisfied and 300 tolerating: (100 + 150) / 400.
        assert!((w.apdex - 0.625).abs() < 1e-9, "{w:?}");
        assert!((w.errors - 0.0075).abs() < 1e-9, "{w:?}");
        assert!((w.over_p95 - 0.1).abs() < 1e-9, "{w:?}");
        let loose = ApdexGoal {
            apdex: 0.6,
            ..TARGET
        };
        assert!(w.meets(&loose));
        assert!(!w.meets(&TARGET), "Apdex 0.625 against 0.85");
        let bounded = ApdexGoal {
            p95_max: Some(Duration::from_millis(200)),
            ..loose
        };
        assert!(!w.meets(&bounded), "one request in ten over the p95 bound");
    }

    #[test]
    fn near_the_knee_by_any_figure() {
        let seconds = |satisfied: u64, errors: u64| -> Vec<LevelSecond> {
            (0..5).map(|_| second(100, satisfied, errors)).collect()
        };
        // Apdex 0.975 against 0.85: far; 0.80 and 0.90: near.
        assert!(!near(&TARGET, &seconds(95, 0)));
        assert!(near(&TARGET, &seconds(60, 0)));
        assert!(near(&TARGET, &seconds(80, 0)));
        // Apdex 0.5: far below.
        assert!(!near(&TARGET, &seconds(0, 0)));
        // 1% and 1.6% errors against 1%: near; 5%: far.
        assert!(near(&TARGET, &seconds(100, 1)));
        let mut one_and_half = seconds(100, 0);
        one_and_half[0].errors = 7;
        one_and_half[1].errors = 1;
        assert!(near(&TARGET, &one_and_half));
        assert!(!near(&TARGET, &seconds(100, 5)));
        // The p95 bound: 6% of requests over it is near 5%.
        let target = ApdexGoal {
            p95_max: Some(Duration::from_millis(200)),
            ..TARGET
        };
        let mut slow = seconds(100, 0);
        for s in &mut slow {
            s.over_p95 = 6;
        }
        assert!(near(&target, &slow));
        assert!(
            !near(&TARGET, &slow),
            "without a p95 bound it does not count"
        );
        // No requests yet: nothing is known, so near.
        assert!(near(&TARGET, &[LevelSecond::default()]));
    }
}
