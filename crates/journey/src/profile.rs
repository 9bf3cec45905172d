//! Profiles: how virtual users or arrivals are scheduled over a run.

use crate::lesson::{Lesson, UserSession};
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
        /// Each arrival is a new user who stays this long; `None`: arrivals
        /// are iterations on a pool of VUs that keep their state.
        #[serde(skip_serializing_if = "Option::is_none")]
        session: Option<UserSession>,
    },
    /// The lesson start: students arrive at seeded times within a window,
    /// then each loops the journey as a closed-model user until the end.
    Lesson(Lesson),
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
            Profile::Lesson(lesson) => Some(lesson.duration),
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
            Profile::Lesson(lesson) => lesson.students,
        }
    }

    /// How long an arriving user of the open model stays, if it is a new
    /// user at each arrival.
    pub fn session(&self) -> Option<UserSession> {
        match self {
            Profile::Open { session, .. } => *session,
            _ => None,
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
    /// Exponentially distributed with this mean: memoryless, the gaps
    /// between a Poisson process's events (`exp:30s`).
    Exponential {
        #[serde(
            rename = "mean_s",
            serialize_with = "secs",
            deserialize_with = "de_secs"
        )]
        mean: Duration,
    },
    /// Log-normal with this mean and standard deviation: most users read
    /// for a little less than the mean, a few for much longer, never below
    /// zero (`lognormal:30s,20s`).
    LogNormal {
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
    /// Parses `2s` (constant), `0..10s` / `500ms..2s` (uniform), or a
    /// distribution by name: `exp:30s` (exponential with that mean),
    /// `normal:30s,10s` (mean, standard deviation; never below zero),
    /// `lognormal:30s,20s` (mean, standard deviation).
    pub fn parse(text: &str) -> Result<Think, String> {
        use headroom_units::quantity::parse_duration;
        if let Some((name, arguments)) = text.split_once(':') {
            return Think::distribution(name.trim(), arguments, text);
        }
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

    /// `exp:30s`, `normal:30s,10s`, `lognormal:30s,20s` (after the name).
    fn distribution(name: &str, arguments: &str, text: &str) -> Result<Think, String> {
        use headroom_units::quantity::parse_duration;
        let values: Vec<Duration> = arguments
            .split(',')
            .map(|a| parse_duration(a.trim()).map_err(|e| format!("think time '{text}': {e}")))
            .collect::<Result<_, _>>()?;
        let name = name.to_ascii_lowercase();
        let (mean, deviation) = match (name.as_str(), values.as_slice()) {
            ("exp" | "exponential", [mean]) => (*mean, None),
            ("normal" | "gaussian" | "lognormal", [mean, deviation]) => (*mean, Some(*deviation)),
            ("exp" | "exponential", _) => {
                return Err(format!(
                    "think time '{text}': an exponential think time takes its mean only, e.g. exp:30s"
                ))
            }
            ("normal" | "gaussian" | "lognormal", _) => {
                return Err(format!(
                    "think time '{text}': {name} takes a mean and a standard deviation, e.g. {name}:30s,10s"
                ))
            }
            _ => {
                return Err(format!(
                    "think time '{text}': no distribution called '{name}'; use exp:MEAN, normal:MEAN,SD or lognormal:MEAN,SD"
                ))
            }
        };
        if mean.is_zero() {
            return Ok(Think::None);
        }
        Ok(match (name.as_str(), deviation) {
            (_, None) => Think::Exponential { mean },
            (_, Some(d)) if d.is_zero() => Think::Constant { time: mean },
            ("lognormal", Some(deviation)) => Think::LogNormal { mean, deviation },
            (_, Some(deviation)) => Think::Gaussian { mean, deviation },
        })
    }

    pub fn mean(&self) -> Duration {
        match *self {
            Think::None => Duration::ZERO,
            Think::Constant { time } => time,
            Think::Uniform { min, max } => (min + max) / 2,
            Think::Gaussian { mean, .. }
            | Think::Exponential { mean }
            | Think::LogNormal { mean, .. } => mean,
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
            Think::Gaussian { mean, deviation } => Duration::from_secs_f64(
                (mean.as_secs_f64() + standard_normal(rng) * deviation.as_secs_f64()).max(0.0),
            ),
            Think::Exponential { mean } => {
                // Inverse transform; 1 - u is in (0, 1].
                let u = 1.0 - rng.next_f64();
                let times = (-u.ln()).min(MOST_TIMES_THE_MEAN);
                headroom_units::quantity::saturating_secs(times * mean.as_secs_f64())
            }
            Think::LogNormal { mean, deviation } => {
                // The normal's parameters that give this mean and deviation.
                let m = mean.as_secs_f64();
                let cv = deviation.as_secs_f64() / m;
                let sigma2 = (1.0 + cv * cv).ln();
                let mu = m.ln() - sigma2 / 2.0;
                let x = (mu + sigma2.sqrt() * standard_normal(rng)).exp();
                headroom_units::quantity::saturating_secs(x.min(MOST_TIMES_THE_MEAN * m))
            }
        }
    }
}

/// A think time drawn from a long-tailed distribution is at most this many
/// times its mean, so that an absurd deviation cannot park a user for the
/// rest of the run (an exponential draw never comes near it: its chance is
/// e^-100).
const MOST_TIMES_THE_MEAN: f64 = 100.0;

/// A standard normal draw: the Box-Muller transform of two uniform draws.
fn standard_normal(rng: &mut headroom_units::rng::Rng) -> f64 {
    let u1 = rng.next_f64().max(f64::MIN_POSITIVE);
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
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

    fn moments(think: Think, n: usize) -> (f64, f64, Vec<f64>) {
        let mut rng = headroom_units::rng::Rng::new(7, 11);
        let mut draws: Vec<f64> = (0..n).map(|_| think.pick(&mut rng).as_secs_f64()).collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        let sd = (draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        draws.sort_by(f64::total_cmp);
        (mean, sd, draws)
    }

    #[test]
    fn named_distributions_parse() {
        let s = Duration::from_secs;
        assert_eq!(
            Think::parse("exp:30s").unwrap(),
            Think::Exponential { mean: s(30) }
        );
        assert_eq!(
            Think::parse("Exponential: 2m").unwrap(),
            Think::Exponential { mean: s(120) }
        );
        assert_eq!(
            Think::parse("lognormal:30s, 20s").unwrap(),
            Think::LogNormal {
                mean: s(30),
                deviation: s(20)
            }
        );
        assert_eq!(
            Think::parse("normal:30s,10s").unwrap(),
            Think::Gaussian {
                mean: s(30),
                deviation: s(10)
            }
        );
        assert_eq!(
            Think::parse("lognormal:30s,0s").unwrap(),
            Think::Constant { time: s(30) }
        );
        assert_eq!(Think::parse("exp:0s").unwrap(), Think::None);
        for (bad, says) in [
            ("exp:30s,5s", "its mean only"),
            ("lognormal:30s", "a mean and a standard deviation"),
            ("poisson:3s", "no distribution called 'poisson'"),
            ("exp:soon", "think time 'exp:soon'"),
        ] {
            let e = Think::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn exponential_think_times_have_their_mean_and_deviation() {
        // An exponential's deviation equals its mean; its median is ln 2 of it.
        let (mean, sd, sorted) = moments(
            Think::Exponential {
                mean: Duration::from_secs(30),
            },
            200_000,
        );
        assert!((mean - 30.0).abs() < 0.3, "{mean}");
        assert!((sd - 30.0).abs() < 0.5, "{sd}");
        let median = sorted[sorted.len() / 2];
        assert!(
            (median - 30.0 * std::f64::consts::LN_2).abs() < 0.3,
            "{median}"
        );
    }

    #[test]
    fn lognormal_think_times_have_their_mean_and_deviation() {
        // Mean 30 s, deviation 20 s: sigma² = ln(1 + (2/3)²), median
        // 30 / sqrt(1 + 4/9) = 24.96 s.
        let (mean, sd, sorted) = moments(
            Think::LogNormal {
                mean: Duration::from_secs(30),
                deviation: Duration::from_secs(20),
            },
            200_000,
        );
        assert!((mean - 30.0).abs() < 0.3, "{mean}");
        assert!((sd - 20.0).abs() < 0.6, "{sd}");
        let median = sorted[sorted.len() / 2];
        assert!((median - 24.96).abs() < 0.3, "{median}");
        assert!(sorted[0] > 0.0);
    }

    #[test]
    fn an_absurd_deviation_cannot_park_a_user() {
        let (_, _, sorted) = moments(
            Think::LogNormal {
                mean: Duration::from_secs(1),
                deviation: Duration::from_secs(1_000_000),
            },
            50_000,
        );
        assert!(*sorted.last().unwrap() <= 100.0, "{:?}", sorted.last());
    }

    #[test]
    fn the_manifest_records_every_kind() {
        for text in [
            "2s",
            "1s..3s",
            "normal:2s,1s",
            "exp:30s",
            "lognormal:30s,20s",
        ] {
            let think = Think::parse(text).unwrap();
            let json = serde_json::to_value(think).unwrap();
            let record: headroom_bundle::manifest::ThinkRecord =
                serde_json::from_value(json.clone()).unwrap();
            assert!(
                (record.mean_s() - think.mean().as_secs_f64()).abs() < 1e-9,
                "{text}"
            );
            let back: Think = serde_json::from_value(json).unwrap();
            assert_eq!(back, think);
        }
    }

    proptest::proptest! {
        #[test]
        fn think_parser_never_panics(text in "\\PC{0,24}") {
            let _ = Think::parse(&text);
        }
    }
}
