//! Stages: a target (users or arrival rate) that moves linearly from one
//! value to the next over each stage's duration, starting from zero, as
//! k6's ramping executors do.
//!
//! Ramping users: VU `i` is active while the target is at least `i + 1`;
//! [`Stages::windows`] gives the times it starts and stops. Ramping rate:
//! arrival `n` is due when the integral of the rate reaches `n`;
//! [`Stages::arrival_time`] inverts that integral.

use serde::Serialize;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stage {
    #[serde(rename = "duration_s", serialize_with = "secs")]
    pub duration: Duration,
    /// Users, or arrivals per second.
    pub target: f64,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// A piecewise linear target over time.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Stages(pub Vec<Stage>);

/// One linear piece: from `t0` to `t1` seconds, the value goes from `v0` to `v1`.
struct Piece {
    t0: f64,
    t1: f64,
    v0: f64,
    v1: f64,
}

impl Stages {
    pub fn total(&self) -> Duration {
        self.0.iter().map(|s| s.duration).sum()
    }

    pub fn peak(&self) -> f64 {
        self.0.iter().map(|s| s.target).fold(0.0, f64::max)
    }

    fn pieces(&self) -> impl Iterator<Item = Piece> + '_ {
        let mut t = 0.0;
        let mut v = 0.0;
        self.0.iter().map(move |stage| {
            let piece = Piece {
                t0: t,
                t1: t + stage.duration.as_secs_f64(),
                v0: v,
                v1: stage.target,
            };
            t = piece.t1;
            v = stage.target;
            piece
        })
    }

    /// When VU `index` (0-based) is active: `[start, end)` offsets from the
    /// run's start, while the target is at least `index + 1`.
    pub fn windows(&self, index: u32) -> Vec<(Duration, Duration)> {
        let threshold = index as f64 + 1.0;
        let mut windows = Vec::new();
        let mut start: Option<f64> = None;
        for p in self.pieces() {
            let span = p.t1 - p.t0;
            let crossing = |from: f64, to: f64| {
                p.t0 + if (to - from).abs() < f64::EPSILON {
                    0.0
                } else {
                    (threshold - from) / (to - from) * span
                }
            };
            let active_at_start = p.v0 >= threshold;
            if start.is_none() && active_at_start {
                start = Some(p.t0);
            }
            if p.v0 < threshold && p.v1 >= threshold {
                start = Some(if span <= 0.0 {
                    p.t0
                } else {
                    crossing(p.v0, p.v1)
                });
            } else if p.v0 >= threshold && p.v1 < threshold {
                let end = if span <= 0.0 {
                    p.t0
                } else {
                    crossing(p.v0, p.v1)
                };
                if let Some(s) = start.take() {
                    windows.push((s, end));
                }
            }
        }
        if let Some(s) = start {
            windows.push((s, self.total().as_secs_f64()));
        }
        windows
            .into_iter()
            .filter(|(s, e)| e > s)
            .map(|(s, e)| (Duration::from_secs_f64(s), Duration::from_secs_f64(e)))
            .collect()
    }

    /// When arrival `n` (0-based, a real number) is due, or `None` after the last stage.
    pub fn arrival_time(&self, n: f64) -> Option<Duration> {
        let mut before = 0.0;
        for p in self.pieces() {
            let span = p.t1 - p.t0;
            let arrivals = (p.v0 + p.v1) / 2.0 * span;
            if n < before + arrivals {
                let need = n - before;
                let slope = if span > 0.0 {
                    (p.v1 - p.v0) / span
                } else {
                    0.0
                };
                // need = v0 * tau + slope / 2 * tau^2
                let tau = if slope.abs() < 1e-12 {
                    need / p.v0
                } else {
                    let discriminant = (p.v0 * p.v0 + 2.0 * slope * need).max(0.0);
                    (-p.v0 + discriminant.sqrt()) / slope
                };
                return Some(Duration::from_secs_f64(
                    (p.t0 + tau.clamp(0.0, span)).max(0.0),
                ));
            }
            before += arrivals;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stages(list: &[(u64, f64)]) -> Stages {
        Stages(
            list.iter()
                .map(|(s, t)| Stage {
                    duration: Duration::from_secs(*s),
                    target: *t,
                })
                .collect(),
        )
    }

    #[test]
    fn ramping_users_windows() {
        // 0 -> 10 users over 10 s, hold 10 s, 10 -> 0 over 10 s.
        let s = stages(&[(10, 10.0), (10, 10.0), (10, 0.0)]);
        assert_eq!(s.total(), Duration::from_secs(30));
        let w = s.windows(0);
        assert_eq!(w, vec![(Duration::from_secs(1), Duration::from_secs(29))]);
        let w = s.windows(9);
        assert_eq!(w, vec![(Duration::from_secs(10), Duration::from_secs(20))]);
        assert!(s.windows(10).is_empty(), "VU 11 never starts");
        // A step up without ramp: 5 users at once, then 2.
        let s = stages(&[(0, 5.0), (10, 5.0), (0, 2.0), (10, 2.0)]);
        assert_eq!(
            s.windows(4),
            vec![(Duration::ZERO, Duration::from_secs(10))]
        );
        assert_eq!(
            s.windows(1),
            vec![(Duration::ZERO, Duration::from_secs(20))]
        );
    }

    #[test]
    fn ramping_rate_arrivals() {
        // Constant 10/s for 10 s: arrival n at n/10 s.
        let s = stages(&[(0, 10.0), (10, 10.0)]);
        assert_eq!(s.arrival_time(25.0), Some(Duration::from_millis(2500)));
        assert_eq!(s.arrival_time(100.0), None);
        // 0 -> 10/s over 10 s: 50 arrivals; N(t) = t^2 / 2, so arrival 8 at 4 s.
        let s = stages(&[(10, 10.0)]);
        let t = s.arrival_time(8.0).unwrap().as_secs_f64();
        assert!((t - 4.0).abs() < 1e-9, "{t}");
        assert_eq!(s.arrival_time(50.0), None);
        // Count arrivals by inverting: every n below 50 has a time, in order.
        let times: Vec<f64> = (0..50)
            .map(|n| s.arrival_time(n as f64).unwrap().as_secs_f64())
            .collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
    }
}
