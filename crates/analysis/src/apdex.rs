//! Apdex (Application Performance Index) as JMeter's dashboard computes it:
//! `(satisfied + tolerating / 2) / total`, where a sample is satisfied when its
//! response time is at most T, tolerating up to F, frustrated above F, and
//! every failed sample counts as frustrated.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// The two Apdex thresholds. Defaults: T = 500 ms, F = 1500 ms (JMeter's
/// dashboard defaults and the 1:3 ratio of the Moodle study); the Apdex
/// standard's F = 4T is available through [`ApdexThresholds::standard`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApdexThresholds {
    #[serde(with = "duration_ms")]
    pub satisfied: Duration,
    #[serde(with = "duration_ms")]
    pub tolerated: Duration,
}

impl Default for ApdexThresholds {
    fn default() -> Self {
        ApdexThresholds {
            satisfied: Duration::from_millis(500),
            tolerated: Duration::from_millis(1500),
        }
    }
}

impl ApdexThresholds {
    /// The Apdex standard's F = 4T.
    pub fn standard(satisfied: Duration) -> Self {
        ApdexThresholds {
            satisfied,
            tolerated: satisfied * 4,
        }
    }

    /// Which Apdex zone a sample falls into.
    #[inline]
    pub fn zone(&self, response_time: Duration, failed: bool) -> Zone {
        if failed || response_time > self.tolerated {
            Zone::Frustrated
        } else if response_time > self.satisfied {
            Zone::Tolerating
        } else {
            Zone::Satisfied
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    Satisfied,
    Tolerating,
    Frustrated,
}

/// Counts of samples per Apdex zone. Adding counts is exact, so Apdex over
/// several intervals or labels is the Apdex of the added counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApdexCounts {
    pub satisfied: u64,
    pub tolerating: u64,
    pub frustrated: u64,
}

impl ApdexCounts {
    #[inline]
    pub fn add_zone(&mut self, zone: Zone) {
        match zone {
            Zone::Satisfied => self.satisfied += 1,
            Zone::Tolerating => self.tolerating += 1,
            Zone::Frustrated => self.frustrated += 1,
        }
    }

    pub fn add(&mut self, other: &ApdexCounts) {
        self.satisfied += other.satisfied;
        self.tolerating += other.tolerating;
        self.frustrated += other.frustrated;
    }

    pub fn total(&self) -> u64 {
        self.satisfied + self.tolerating + self.frustrated
    }

    /// The Apdex's numerator: satisfied + tolerating / 2 (a satisfied
    /// sample scores 1, a tolerating one ½, a frustrated one 0).
    pub fn points(&self) -> f64 {
        self.satisfied as f64 + self.tolerating as f64 / 2.0
    }

    /// The Apdex score in 0..=1, or `None` when there are no samples.
    pub fn score(&self) -> Option<f64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        Some(self.points() / total as f64)
    }
}

/// The Apdex rating bands of the Moodle study (Table 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Rating {
    Unacceptable,
    Poor,
    Fair,
    Good,
    Excellent,
}

impl Rating {
    /// Rates a score by the band it lies in: a score below a band's lower
    /// bound is in the band beneath, however close (0.498 is Unacceptable,
    /// as the Moodle study calls anything below 0.50; 0.9399 is Good). The
    /// score is not rounded first, so a rating agrees with the search's
    /// comparison of the same score against its target.
    pub fn of(score: f64) -> Rating {
        if score >= 0.94 {
            Rating::Excellent
        } else if score >= 0.85 {
            Rating::Good
        } else if score >= 0.70 {
            Rating::Fair
        } else if score >= 0.50 {
            Rating::Poor
        } else {
            Rating::Unacceptable
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Rating::Excellent => "Excellent",
            Rating::Good => "Good",
            Rating::Fair => "Fair",
            Rating::Poor => "Poor",
            Rating::Unacceptable => "Unacceptable",
        }
    }
}

impl fmt::Display for Rating {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An optional duration written as milliseconds (null when absent).
pub(crate) mod optional_ms {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::duration_ms::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        match Option::<f64>::deserialize(d)? {
            None => Ok(None),
            Some(ms) if ms.is_finite() && ms >= 0.0 => {
                Ok(Some(headroom_units::quantity::saturating_secs(ms / 1000.0)))
            }
            Some(_) => Err(serde::de::Error::custom(
                "a duration must be a non-negative number of ms",
            )),
        }
    }
}

mod duration_ms {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64() * 1000.0)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let ms = f64::deserialize(d)?;
        if !(ms.is_finite() && ms >= 0.0) {
            return Err(serde::de::Error::custom(
                "threshold must be a non-negative number of ms",
            ));
        }
        Ok(headroom_units::quantity::saturating_secs(ms / 1000.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn zones_follow_thresholds_and_failures() {
        let t = ApdexThresholds::default();
        assert_eq!(t.zone(Duration::from_millis(500), false), Zone::Satisfied);
        assert_eq!(t.zone(Duration::from_millis(501), false), Zone::Tolerating);
        assert_eq!(t.zone(Duration::from_millis(1500), false), Zone::Tolerating);
        assert_eq!(t.zone(Duration::from_millis(1501), false), Zone::Frustrated);
        assert_eq!(t.zone(Duration::from_millis(1), true), Zone::Frustrated);
        assert_eq!(
            ApdexThresholds::standard(Duration::from_millis(500)).tolerated,
            Duration::from_secs(2)
        );
    }

    #[test]
    fn score_by_hand() {
        // 60 satisfied, 30 tolerating, 10 frustrated: (60 + 15) / 100
        let c = ApdexCounts {
            satisfied: 60,
            tolerating: 30,
            frustrated: 10,
        };
        assert_eq!(c.score(), Some(0.75));
        assert_eq!(Rating::of(0.75), Rating::Fair);
        assert_eq!(ApdexCounts::default().score(), None);
    }

    #[test]
    fn rating_bands() {
        assert_eq!(Rating::of(1.0), Rating::Excellent);
        assert_eq!(Rating::of(0.94), Rating::Excellent);
        assert_eq!(Rating::of(0.93), Rating::Good);
        assert_eq!(Rating::of(0.85), Rating::Good);
        assert_eq!(Rating::of(0.84), Rating::Fair);
        assert_eq!(Rating::of(0.70), Rating::Fair);
        assert_eq!(Rating::of(0.69), Rating::Poor);
        assert_eq!(Rating::of(0.50), Rating::Poor);
        assert_eq!(Rating::of(0.49), Rating::Unacceptable);
        assert_eq!(Rating::of(0.0), Rating::Unacceptable);
        // a score just below a bound is in the band beneath (000's u64SSD
        // mm scored 0.498: unacceptable, not Poor)
        assert_eq!(Rating::of(0.498), Rating::Unacceptable);
        assert_eq!(Rating::of(0.4999), Rating::Unacceptable);
        assert_eq!(Rating::of(0.500), Rating::Poor);
        assert_eq!(Rating::of(0.935), Rating::Good);
        assert_eq!(Rating::of(0.8499), Rating::Fair);
        // scores made of counts land on the bounds exactly
        let at = |s: u64, t: u64, f: u64| {
            let c = ApdexCounts {
                satisfied: s,
                tolerating: t,
                frustrated: f,
            };
            Rating::of(c.score().unwrap())
        };
        assert_eq!(at(47, 0, 3), Rating::Excellent);
        assert_eq!(at(85, 0, 15), Rating::Good);
        assert_eq!(at(60, 20, 20), Rating::Fair);
        assert_eq!(at(0, 100, 0), Rating::Poor);
        assert_eq!(at(0, 99, 1), Rating::Unacceptable);
    }

    proptest! {
        #[test]
        fn score_is_bounded_and_additive(a in any::<(u16, u16, u16)>(), b in any::<(u16, u16, u16)>()) {
            let x = ApdexCounts { satisfied: a.0 as u64, tolerating: a.1 as u64, frustrated: a.2 as u64 };
            let y = ApdexCounts { satisfied: b.0 as u64, tolerating: b.1 as u64, frustrated: b.2 as u64 };
            let mut sum = x;
            sum.add(&y);
            prop_assert_eq!(sum.total(), x.total() + y.total());
            if let Some(s) = sum.score() {
                prop_assert!((0.0..=1.0).contains(&s));
                // the merged score lies between the parts' scores
                let parts: Vec<f64> = [x.score(), y.score()].into_iter().flatten().collect();
                let lo = parts.iter().cloned().fold(f64::INFINITY, f64::min);
                let hi = parts.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                prop_assert!(s >= lo - 1e-12 && s <= hi + 1e-12);
            }
        }
    }
}
