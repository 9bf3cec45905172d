//! The lesson start: a class of students arrives within a while of the
//! lesson starting (not evenly: each at a time drawn from the run's seed,
//! uniform within `arrive_within`), logs in, and reads until the lesson
//! ends. Also the open model's sessions: how long an arriving user stays.

use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// The arrival schedule's random stream (apart from the users' own, which
/// are numbered from 0 by user).
const SCHEDULE_STREAM: u64 = u64::MAX - 31;

/// The most students a lesson holds: every shard draws each student's
/// arrival time (16 bytes a student) before the run starts.
pub const MOST_STUDENTS: u32 = 10_000_000;

/// A lesson: `students` arrive within `arrive_within`, then read until
/// `duration` (the whole run, the arrivals included) is over.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lesson {
    pub students: u32,
    #[serde(rename = "arrive_within_s", serialize_with = "secs")]
    pub arrive_within: Duration,
    #[serde(rename = "duration_s", serialize_with = "secs")]
    pub duration: Duration,
    /// When each student arrives, from the run's start, earliest first.
    #[serde(rename = "arrivals_per_second", serialize_with = "per_second")]
    pub arrivals: Arc<[Duration]>,
    /// The run's seed the arrival times were drawn from.
    #[serde(skip)]
    pub seed: u64,
}

impl Lesson {
    /// The lesson with its arrival times drawn from `seed`; an error names
    /// the key that is wrong.
    pub fn new(
        students: u32,
        arrive_within: Duration,
        duration: Duration,
        seed: u64,
    ) -> Result<Lesson, String> {
        if students == 0 {
            return Err("students: a lesson needs at least one student (e.g. students: 30)".into());
        }
        if students > MOST_STUDENTS {
            return Err(format!(
                "students: {students} is more than a lesson holds (at most {MOST_STUDENTS}: every shard draws each student's arrival time, 16 bytes a student, before the run starts): use fewer students"
            ));
        }
        if arrive_within > duration {
            return Err(format!(
                "arrive_within ({} s) is longer than the lesson (duration {} s): some students would arrive after it ended. Shorten arrive_within or lengthen duration",
                arrive_within.as_secs_f64(),
                duration.as_secs_f64()
            ));
        }
        let mut rng = headroom_units::rng::Rng::new(seed, SCHEDULE_STREAM);
        let mut arrivals: Vec<Duration> = (0..students)
            .map(|_| arrive_within.mul_f64(rng.next_f64()))
            .collect();
        arrivals.sort();
        Ok(Lesson {
            students,
            arrive_within,
            duration,
            arrivals: arrivals.into(),
            seed,
        })
    }

    /// Students arriving in each second of the arrival phase (its last
    /// second included).
    pub fn per_second(&self) -> Vec<u32> {
        per_second_counts(&self.arrivals)
    }
}

/// How many of `times` fall in each whole second from 0 to the last.
fn per_second_counts(times: &[Duration]) -> Vec<u32> {
    let seconds = times.last().map_or(0, |t| t.as_secs() as usize + 1);
    let mut counts = vec![0; seconds];
    for t in times {
        counts[t.as_secs() as usize] += 1;
    }
    counts
}

/// How long a user of the open model stays once it has arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserSession {
    /// A new user runs the journey once and leaves.
    Once,
    /// A new user loops the journey until this long after its arrival
    /// (finishing the iteration under way), then leaves.
    For(Duration),
}

impl UserSession {
    /// `once` or a duration (`10m`).
    pub fn parse(text: &str) -> Result<UserSession, String> {
        if text.trim().eq_ignore_ascii_case("once") {
            return Ok(UserSession::Once);
        }
        match headroom_units::quantity::parse_duration(text) {
            Ok(d) if !d.is_zero() => Ok(UserSession::For(d)),
            Ok(_) => Err(format!(
                "session '{text}' lasts no time: write once (one journey per user) or a length such as 10m"
            )),
            Err(e) => Err(format!(
                "session '{text}': {e}; write once (one journey per user) or a length such as 10m"
            )),
        }
    }
}

impl std::fmt::Display for UserSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UserSession::Once => f.write_str("once"),
            UserSession::For(d) => write!(f, "{}", humantime::format_duration(*d)),
        }
    }
}

impl Serialize for UserSession {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for UserSession {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<UserSession, D::Error> {
        let text = String::deserialize(d)?;
        UserSession::parse(&text).map_err(serde::de::Error::custom)
    }
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn per_second<S: serde::Serializer>(times: &Arc<[Duration]>, s: S) -> Result<S::Ok, S::Error> {
    per_second_counts(times).serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn the_schedule_is_the_seeds_and_stays_within_the_window() {
        let a = Lesson::new(30, s(60), s(600), 1).unwrap();
        let b = Lesson::new(30, s(60), s(600), 1).unwrap();
        let c = Lesson::new(30, s(60), s(600), 2).unwrap();
        assert_eq!(a.arrivals, b.arrivals);
        assert_ne!(a.arrivals, c.arrivals);
        assert_eq!(a.arrivals.len(), 30);
        assert!(a.arrivals.windows(2).all(|w| w[0] <= w[1]));
        assert!(a.arrivals.iter().all(|t| *t < s(60)));
        let per_second = a.per_second();
        assert_eq!(per_second.iter().sum::<u32>(), 30);
        assert!(per_second.len() <= 60);
        // Not evenly: some second has two or more, some none.
        assert!(per_second.iter().any(|n| *n >= 2), "{per_second:?}");
    }

    #[test]
    fn arrivals_spread_uniformly_over_the_window() {
        let lesson = Lesson::new(60_000, s(60), s(600), 7).unwrap();
        let per_second = lesson.per_second();
        assert_eq!(per_second.len(), 60);
        // 1,000 a second expected; a uniform draw stays within 15 %.
        assert!(
            per_second.iter().all(|n| n.abs_diff(1000) < 150),
            "{per_second:?}"
        );
    }

    #[test]
    fn bad_lessons_name_their_key() {
        let e = Lesson::new(0, s(60), s(600), 1).unwrap_err();
        assert!(e.starts_with("students:"), "{e}");
        let e = Lesson::new(30, s(120), s(60), 1).unwrap_err();
        assert!(e.starts_with("arrive_within"), "{e}");
        // Refused before a single arrival is drawn (1e9 would take 16 GB).
        let e = Lesson::new(1_000_000_000, s(60), s(600), 1).unwrap_err();
        assert!(e.starts_with("students: 1000000000 is more"), "{e}");
    }

    #[test]
    fn sessions_parse() {
        assert_eq!(UserSession::parse("once").unwrap(), UserSession::Once);
        assert_eq!(UserSession::parse("10m").unwrap(), UserSession::For(s(600)));
        assert_eq!(UserSession::For(s(600)).to_string(), "10m");
        for bad in ["0s", "-5s", "soon", ""] {
            let e = UserSession::parse(bad).unwrap_err();
            assert!(e.starts_with("session '"), "{bad}: {e}");
        }
        let json = serde_json::to_string(&UserSession::For(s(90))).unwrap();
        assert_eq!(json, "\"1m 30s\"");
        assert_eq!(
            serde_json::from_str::<UserSession>(&json).unwrap(),
            UserSession::For(s(90))
        );
    }
}
