//! A lesson run judged in its two phases: the arrival phase (the login
//! burst) and the reading phase after it, each with its own requests,
//! errors, Apdex and percentiles, and the users who arrived in each second.
//!
//! The rule that splits them is `headroom_bundle::phases::reading_from`
//! (the think is the scenario's default `think:` or `--think`), which a
//! bundle rebuilt from its files (a merge, a recovery) uses too.

use headroom_bundle::summary::{LabelFigures, PhaseFigures};
use headroom_bundle::tally::Tally;
use headroom_journey::profile::{Profile, Think};
use std::time::Duration;

/// The figures of a lesson's two phases, second by second as they come.
pub struct LessonPhases {
    /// The first second of the reading phase.
    reading_from: u64,
    /// Arrival phase, reading phase.
    tallies: [Tally; 2],
    arrivals: [u64; 2],
    /// Users who arrived in each second of the run, as recorded.
    per_second: Vec<u64>,
}

impl LessonPhases {
    /// The phases of a lesson profile (`None` for any other).
    pub fn of(profile: &Profile, think: &Think) -> Option<LessonPhases> {
        let Profile::Lesson(lesson) = profile else {
            return None;
        };
        Some(LessonPhases {
            reading_from: headroom_bundle::phases::reading_from(lesson.arrive_within, think.mean()),
            tallies: [Tally::default(), Tally::default()],
            arrivals: [0, 0],
            per_second: Vec::new(),
        })
    }

    /// Adds the run's second `index`: its total tally and arrivals.
    pub fn add(&mut self, index: u64, total: &Tally, arrivals: u32) {
        let phase = usize::from(index >= self.reading_from);
        self.tallies[phase].add(total);
        self.arrivals[phase] += u64::from(arrivals);
        let at = index as usize;
        if self.per_second.len() <= at {
            self.per_second.resize(at + 1, 0);
        }
        self.per_second[at] += u64::from(arrivals);
    }

    /// Both phases' figures over a run of `elapsed` (a phase the run never
    /// reached is left out), and the arrivals per second up to the last.
    pub fn figures(&self, elapsed: Duration) -> (Vec<PhaseFigures>, Vec<u64>) {
        let split = Duration::from_secs(self.reading_from).min(elapsed);
        let bounds = [(Duration::ZERO, split), (split, elapsed)];
        let phases = ["arrival", "reading"]
            .iter()
            .zip(bounds)
            .enumerate()
            .filter(|(_, (_, (from, to)))| to > from)
            .map(|(i, (name, (from, to)))| PhaseFigures {
                name: name.to_string(),
                from_s: from.as_secs_f64(),
                to_s: to.as_secs_f64(),
                arrivals: self.arrivals[i],
                figures: LabelFigures::of(&self.tallies[i], to - from).0,
            })
            .collect();
        let last = self
            .per_second
            .iter()
            .rposition(|n| *n > 0)
            .map_or(0, |i| i + 1);
        (phases, self.per_second[..last].to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_journey::lesson::Lesson;

    #[test]
    fn the_arrival_phase_ends_a_think_time_after_the_last_arrival() {
        let s = Duration::from_secs;
        assert_eq!(headroom_bundle::phases::reading_from(s(60), s(30)), 90);
        assert_eq!(
            headroom_bundle::phases::reading_from(s(6), Duration::from_millis(500)),
            7
        );
        assert_eq!(
            headroom_bundle::phases::reading_from(s(6), Duration::ZERO),
            6
        );
    }

    #[test]
    fn seconds_fall_in_their_phase() {
        let lesson = Lesson::new(3, Duration::from_secs(2), Duration::from_secs(5), 1).unwrap();
        let think = Think::Constant {
            time: Duration::from_millis(400),
        };
        let mut phases = LessonPhases::of(&Profile::Lesson(lesson), &think).unwrap();
        let mut busy = Tally::default();
        busy.counts.count = 10;
        let mut quiet = Tally::default();
        quiet.counts.count = 2;
        // Seconds 0..3 are the arrival phase (2 s + 0.4 s, rounded up).
        phases.add(0, &busy, 2);
        phases.add(1, &busy, 1);
        phases.add(2, &busy, 0);
        phases.add(3, &quiet, 0);
        phases.add(4, &quiet, 0);
        let (figures, per_second) = phases.figures(Duration::from_secs(5));
        assert_eq!(per_second, vec![2, 1]);
        let said: Vec<_> = figures
            .iter()
            .map(|p| {
                (
                    p.name.as_str(),
                    p.from_s,
                    p.to_s,
                    p.arrivals,
                    p.figures.count,
                )
            })
            .collect();
        assert_eq!(
            said,
            vec![("arrival", 0.0, 3.0, 3, 30), ("reading", 3.0, 5.0, 0, 4)]
        );
        // A run stopped within the arrival phase has no reading phase.
        let (figures, _) = phases.figures(Duration::from_secs(2));
        assert_eq!(figures.len(), 1);
        assert!(LessonPhases::of(
            &Profile::Closed {
                users: 1,
                ramp_up: Duration::ZERO,
                duration: None,
                requests: None
            },
            &think
        )
        .is_none());
    }
}
