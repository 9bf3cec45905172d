//! Profiles: how virtual users or arrivals are scheduled over a run.

use crate::stages::Stages;
use headroom_units::quantity::Rate;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Closed model: a fixed population of users, each sending its next request
/// when the previous one (and its think time) is over. Open model: requests
/// arrive at a fixed rate whatever the server does, served by a pool of VUs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum Profile {
    Closed {
        users: u32,
        /// Users start evenly spread over this time (JMeter's ramp-up period).
        #[serde(rename = "ramp_up_s", serialize_with = "secs")]
        ramp_up: Duration,
        /// Whole run, ramp-up included (as a JMeter thread group's duration).
        #[serde(rename = "duration_s", serialize_with = "opt_secs")]
        duration: Option<Duration>,
        /// Total requests over all users (ab's -n); the run ends when done.
        requests: Option<u64>,
    },
    Open {
        #[serde(rename = "rate_per_s", serialize_with = "per_second")]
        rate: Rate,
        max_vus: u32,
        #[serde(rename = "duration_s", serialize_with = "secs")]
        duration: Duration,
    },
    /// Closed model whose number of users follows stages (k6's ramping VUs).
    RampingUsers { stages: Stages },
    /// Open model whose arrival rate (per second) follows stages.
    RampingRate { stages: Stages, max_vus: u32 },
}

impl Profile {
    /// The run's planned length, if it has one.
    pub fn duration(&self) -> Option<Duration> {
        match self {
            Profile::Closed { duration, .. } => *duration,
            Profile::Open { duration, .. } => Some(*duration),
            Profile::RampingUsers { stages } | Profile::RampingRate { stages, .. } => {
                Some(stages.total())
            }
        }
    }

    /// Most VUs the profile may run at once.
    pub fn population(&self) -> u32 {
        match self {
            Profile::Closed { users, .. } => *users,
            Profile::Open { max_vus, .. } | Profile::RampingRate { max_vus, .. } => *max_vus,
            Profile::RampingUsers { stages } => stages.peak().ceil() as u32,
        }
    }
}

/// Think time a user waits after each response (closed model only).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Think {
    None,
    Constant {
        #[serde(
            rename = "time_s",
            serialize_with = "secs",
            deserialize_with = "de_secs"
        )]
        time: Duration,
    },
    /// Normally distributed around `mean` (JMeter's Gaussian Random Timer),
    /// never below zero.
    Gaussian {
        #[serde(
            rename = "mean_s",
            serialize_with = "secs",
            deserialize_with = "de_secs"
        )]
        mean: Duration,
        #[serde(
            rename = "deviation_s",
            serialize_with = "secs",
            deserialize_with = "de_secs"
        )]
        deviation: Duration,
    },
    /// Uniformly random in `min..=max` (siege's `-d`).
    Uniform {
        #[serde(
            rename = "min_s",
            serialize_with = "secs",
            deserialize_with = "de_secs"
        )]
        min: Duration,
        #[serde(
            rename = "max_s",
            serialize_with = "secs",
            deserialize_with = "de_secs"
        )]
        max: Duration,
    },
}

impl Think {
    /// Parses `2s` (constant) or `0..10s` / `500ms..2s` (uniform).
    pub fn parse(text: &str) -> Result<Think, String> {
        use headroom_units::quantity::parse_duration;
        match text.split_once("..") {
            Some((low, high)) => {
                let high = parse_duration(high).map_err(|e| e.to_string())?;
                // `0..10s`: a bare low bound takes the high bound's unit.
                let low = if low.trim().chars().all(|c| c.is_ascii_digit() || c == '.') {
                    let unit: String = text
                        .trim_end()
                        .chars()
                        .rev()
                        .take_while(|c| c.is_alphabetic())
                        .collect();
                    let unit: String = unit.chars().rev().collect();
                    parse_duration(&format!(
                        "{}{}",
                        low.trim(),
                        if unit.is_empty() { "s" } else { &unit }
                    ))
                } else {
                    parse_duration(low)
                }
                .map_err(|e| e.to_string())?;
                if low > high {
                    return Err(format!(
                        "think time '{text}': the low bound exceeds the high bound"
                    ));
                }
                Ok(Think::Uniform {
                    min: low,
                    max: high,
                })
            }
            None => {
                let time = parse_duration(text).map_err(|e| e.to_string())?;
                Ok(if time.is_zero() {
                    Think::None
                } else {
                    Think::Constant { time }
                })
            }
        }
    }

    pub fn mean(&self) -> Duration {
        match *self {
            Think::None => Duration::ZERO,
            Think::Constant { time } => time,
            Think::Uniform { min, max } => (min + max) / 2,
            Think::Gaussian { mean, .. } => mean,
        }
    }

    /// One think time drawn with `rng`.
    pub fn pick(&self, rng: &mut headroom_units::rng::Rng) -> Duration {
        match *self {
            Think::None => Duration::ZERO,
            Think::Constant { time } => time,
            Think::Uniform { min, max } => {
                Duration::from_micros(rng.between(min.as_micros() as u64, max.as_micros() as u64))
            }
            Think::Gaussian { mean, deviation } => {
                // Box-Muller transform of two uniform draws.
                let u1 = rng.next_f64().max(f64::MIN_POSITIVE);
                let u2 = rng.next_f64();
                let normal = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                Duration::from_secs_f64(
                    (mean.as_secs_f64() + normal * deviation.as_secs_f64()).max(0.0),
                )
            }
        }
    }
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn de_secs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let seconds = f64::deserialize(d)?;
    Duration::try_from_secs_f64(seconds)
        .map_err(|_| serde::de::Error::custom(format!("{seconds} is not a time in seconds")))
}

fn opt_secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

fn per_second<S: serde::Serializer>(r: &Rate, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(r.per_second)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn think_times() {
        assert_eq!(
            Think::parse("0..10s").unwrap(),
            Think::Uniform {
                min: Duration::ZERO,
                max: Duration::from_secs(10)
            }
        );
        assert_eq!(
            Think::parse("500ms..2s").unwrap(),
            Think::Uniform {
                min: Duration::from_millis(500),
                max: Duration::from_secs(2)
            }
        );
        assert_eq!(
            Think::parse("1s").unwrap(),
            Think::Constant {
                time: Duration::from_secs(1)
            }
        );
        assert_eq!(Think::parse("0").unwrap(), Think::None);
        assert!(Think::parse("5s..1s").is_err());
        assert!(Think::parse("a..b").is_err());
        assert_eq!(
            Think::parse("0..10s").unwrap().mean(),
            Duration::from_secs(5)
        );
    }

    #[test]
    fn gaussian_think_times_centre_on_the_mean() {
        let think = Think::Gaussian {
            mean: Duration::from_secs(2),
            deviation: Duration::from_millis(500),
        };
        let mut rng = headroom_units::rng::Rng::new(3, 4);
        let draws: Vec<f64> = (0..20_000)
            .map(|_| think.pick(&mut rng).as_secs_f64())
            .collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let sd =
            (draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / draws.len() as f64).sqrt();
        assert!((mean - 2.0).abs() < 0.02, "{mean}");
        assert!((sd - 0.5).abs() < 0.02, "{sd}");
    }

    proptest::proptest! {
        #[test]
        fn think_parser_never_panics(text in "\\PC{0,24}") {
            let _ = Think::parse(&text);
        }
    }
}
