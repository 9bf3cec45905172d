//! How long a level warms up and measures: the flags' times ([`LevelTimes`])
//! raised to fit the users' think time ([`Timing::of`]), and the note that
//! tells the user what was raised.

use headroom_units::quantity::round_figure;
use std::time::Duration;

/// The level times as the user gave them (`--warmup`, `--warmup-min`,
/// `--step-duration`, `--min-step-duration`, `--full-levels`,
/// `--min-samples`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelTimes {
    pub warmup: Duration,
    pub warmup_min: Option<Duration>,
    pub step_duration: Duration,
    pub min_step_duration: Option<Duration>,
    /// Every level runs its full duration (no early stop).
    pub full_levels: bool,
    pub min_samples: u64,
}

/// How long a level warms up and measures, sized to its users' cycle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// The users start over this; the warm-up is at least this long.
    pub warmup_min: Duration,
    /// The warm-up may end (steady) from here: every user has started and
    /// thought once.
    pub steady_from: Duration,
    /// The warm-up ends here at the latest.
    pub warmup_max: Duration,
    /// The measurement lasts this long at most (when it has its samples) ...
    pub measure_max: Duration,
    /// ... and at least this long before its verdict may settle ...
    pub measure_min: Duration,
    /// ... or this long when a figure is near its bound (near the knee).
    pub measure_near: Duration,
    /// A level without its samples measures on up to this.
    pub measure_cap: Duration,
    /// The fewest requests a verdict rests on.
    pub min_samples: u64,
    /// Whether a settled level stops (else it runs on, and the settling is
    /// only recorded).
    pub early_stop: bool,
    /// A lesson level ends here (the end of its arrival phase, in seconds)
    /// when that phase broke the target (the reading after a broken burst
    /// cannot mend the level), or when an earlier lesson's reading stands
    /// for its own. `None`: not a lesson, or `--full-levels`.
    pub arrival_until: Option<u64>,
}

impl Timing {
    /// `think`: the users' mean think time per request. Users who think
    /// `z` between requests must start spread over at least `z` (else they
    /// click in step, and a window can fall into their silence), a level is
    /// steady only once every user has started and thought once, and a
    /// measurement lasts at least one think (every user requests in it):
    /// the flags' times are raised to these, and the note tells the user
    /// what was raised.
    ///
    /// `first`: the think a user's first iteration adds (a scenario's
    /// `once:` steps, e.g. a login and its think): a user is in its steady
    /// cycle only after it, so a level is steady only after it too.
    pub fn of(times: &LevelTimes, think: Duration, first: Duration) -> (Timing, Option<String>) {
        let full = times.full_levels;
        let given_min = match times.warmup_min {
            _ if full => times.warmup,
            Some(min) => min.min(times.warmup),
            None => (times.warmup / 4)
                .max(Duration::from_secs(1))
                .min(times.warmup),
        };
        let round = |d: Duration| Duration::from_secs(d.as_secs_f64().ceil() as u64);
        let warmup_min = given_min.max(round(think));
        let steady_from = warmup_min
            .saturating_add(round(think))
            .saturating_add(round(first));
        let warmup_max = times.warmup.max(steady_from);
        let measure_max = if think.is_zero() {
            times.step_duration
        } else {
            times.step_duration.max(round(think.saturating_mul(2)))
        };
        let measure_min = times
            .min_step_duration
            .unwrap_or(Duration::from_secs(5))
            .max(round(think))
            .min(measure_max);
        let mut raised = Vec::new();
        if warmup_max > times.warmup {
            raised.push(format!(
                "warm-up to {:.0} s (users start over {:.0} s)",
                warmup_max.as_secs_f64(),
                warmup_min.as_secs_f64()
            ));
        }
        if measure_max > times.step_duration {
            raised.push(format!("measurement to {:.0} s", measure_max.as_secs_f64()));
        }
        let first_note = if first.is_zero() {
            String::new()
        } else {
            format!(
                " (and {:.1} s more in their first iteration, its once: steps)",
                first.as_secs_f64()
            )
        };
        let lengthened = (!raised.is_empty()).then(|| {
            format!(
                "the users think {:.1} s per request{first_note}, so each level's {}: a level is steady once every user has started and thought, and every user requests in its window",
                think.as_secs_f64(),
                raised.join(" and ")
            )
        });
        let timing = Timing {
            warmup_min,
            steady_from,
            warmup_max,
            measure_max,
            measure_min,
            measure_near: measure_min.max(measure_max / 2),
            measure_cap: measure_max.saturating_mul(4),
            min_samples: times.min_samples,
            early_stop: !full,
            arrival_until: None,
        };
        (timing, lengthened)
    }

    /// A lesson level (`--arrive-within`): no warm-up, since the login
    /// burst is what is judged; the students arrive within `within`, read
    /// (each a think, and its first round's `first`), and then read on for
    /// the step duration or two thinks, whichever is longer. The whole
    /// level is measured and runs to its end (its two phases are judged
    /// from the bundle). The arrival phase lasts one `split` (the run's
    /// own default think, as the bundle splits it) past the arrivals.
    pub fn lesson(
        times: &LevelTimes,
        within: Duration,
        think: Duration,
        first: Duration,
        split: Duration,
    ) -> (Timing, Option<String>) {
        let round = |d: Duration| Duration::from_secs(d.as_secs_f64().ceil() as u64);
        let arrival = round(within.saturating_add(think).saturating_add(first));
        let reading = times.step_duration.max(round(think.saturating_mul(2)));
        let length = arrival.saturating_add(reading);
        let timing = Timing {
            warmup_min: Duration::ZERO,
            steady_from: Duration::ZERO,
            warmup_max: Duration::ZERO,
            measure_max: length,
            measure_min: length,
            measure_near: length,
            measure_cap: length,
            min_samples: times.min_samples,
            early_stop: false,
            arrival_until: None,
        };
        // The phases are split by the bundle's rule, as the report shows them.
        let split = headroom_bundle::phases::reading_from(within, split);
        let timing = Timing {
            arrival_until: (!times.full_levels).then_some(split),
            ..timing
        };
        let note = format!(
            "each level is a lesson start: its students arrive within {} s and read, {} s in all (the arrival phase, 0–{split} s, and the reading phase after it are judged each)",
            round_figure(within.as_secs_f64()),
            length.as_secs(),
        );
        (timing, Some(note))
    }

    /// A level's planned length: its longest warm-up and measurement (an
    /// estimate for the search's ETA).
    pub fn planned(&self) -> Duration {
        self.warmup_max.saturating_add(self.measure_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flags' defaults (`--warmup 15s --step-duration 10s`).
    pub(crate) fn times() -> LevelTimes {
        LevelTimes {
            warmup: Duration::from_secs(15),
            warmup_min: None,
            step_duration: Duration::from_secs(10),
            min_step_duration: None,
            full_levels: false,
            min_samples: 100,
        }
    }

    /// A lesson of students arriving within 60 s, thinking 30 s, their
    /// login 5 s more: no warm-up (the burst is judged), every student's
    /// first round within 95 s, and 60 s of reading (two thinks, more than
    /// the 10 s step): 155 s, all measured, never stopped early; the
    /// arrival phase is judged to 90 s (the window and one mean think).
    #[test]
    fn a_lesson_level_is_measured_whole() {
        let (t, note) = Timing::lesson(
            &times(),
            Duration::from_secs(60),
            Duration::from_secs(30),
            Duration::from_secs(5),
            Duration::from_secs(30),
        );
        assert_eq!(
            (t.warmup_min, t.warmup_max),
            (Duration::ZERO, Duration::ZERO)
        );
        assert_eq!(t.measure_max, Duration::from_secs(155));
        assert_eq!(
            (t.measure_min, t.measure_cap),
            (t.measure_max, t.measure_max)
        );
        assert!(!t.early_stop);
        assert_eq!(
            note.unwrap(),
            "each level is a lesson start: its students arrive within 60 s and read, 155 s in all (the arrival phase, 0–90 s, and the reading phase after it are judged each)"
        );
    }

    /// A scenario whose once: login thinks 30 s before 0.5 s steady steps:
    /// its users started over 3.75 s and the warm-up ended at 15 s, while
    /// every user was still in its login think. The level measured 6 req/s
    /// of a steady 76 (Little: 3 users busy of 40, so not valid, with the
    /// advice to lengthen to "several think times" of 0.5 s). A level is
    /// steady only after every user's first iteration.
    #[test]
    fn a_level_is_steady_only_after_the_users_first_iteration() {
        let half = Duration::from_millis(500);
        let (steady, _) = Timing::of(&times(), half, Duration::ZERO);
        assert_eq!(steady.steady_from, Duration::from_millis(3750 + 1000));
        let (timing, note) = Timing::of(&times(), half, Duration::from_secs(30));
        assert_eq!(
            timing.steady_from,
            Duration::from_millis(3750 + 1000 + 30_000)
        );
        assert!(timing.warmup_max >= timing.steady_from, "{timing:?}");
        let note = note.expect("the warm-up was lengthened");
        assert!(
            note.contains("30.0 s more in their first iteration")
                && note.contains("warm-up to 35 s (users start over 4 s)"),
            "{note}"
        );
    }

    /// Without think time the flags' times stand as given: a quarter of
    /// the warm-up to start the users, 5 s before a verdict may settle,
    /// half the step near the target, and 4 steps at most without samples.
    #[test]
    fn without_think_the_flags_times_stand() {
        let (t, note) = Timing::of(&times(), Duration::ZERO, Duration::ZERO);
        let s = Duration::from_secs;
        assert_eq!(note, None);
        assert_eq!(
            (t.warmup_min, t.steady_from, t.warmup_max),
            (
                Duration::from_millis(3750),
                Duration::from_millis(3750),
                s(15)
            )
        );
        assert_eq!(
            (t.measure_min, t.measure_near, t.measure_max, t.measure_cap),
            (s(5), s(5), s(10), s(40))
        );
        assert!(t.early_stop);
        assert_eq!(t.planned(), s(25));
    }

    /// Users who think 8 s: they start over 8 s, are steady from 16 s (the
    /// warm-up is raised from 15 s), and measure at least 8 s and up to 16.
    #[test]
    fn a_long_think_raises_the_warm_up_and_the_measurement() {
        let (t, note) = Timing::of(&times(), Duration::from_secs(8), Duration::ZERO);
        let s = Duration::from_secs;
        assert_eq!(
            (t.warmup_min, t.steady_from, t.warmup_max),
            (s(8), s(16), s(16))
        );
        assert_eq!(
            (t.measure_min, t.measure_near, t.measure_max),
            (s(8), s(8), s(16))
        );
        assert_eq!(
            note.as_deref(),
            Some("the users think 8.0 s per request, so each level's warm-up to 16 s (users start over 8 s) and measurement to 16 s: a level is steady once every user has started and thought, and every user requests in its window")
        );
    }

    /// --full-levels: the warm-up is the whole --warmup, and no level stops
    /// early.
    #[test]
    fn full_levels_warm_up_their_whole_warmup_and_run_on() {
        let full = LevelTimes {
            full_levels: true,
            warmup_min: Some(Duration::from_secs(2)),
            ..times()
        };
        let (t, _) = Timing::of(&full, Duration::ZERO, Duration::ZERO);
        assert_eq!(t.warmup_min, Duration::from_secs(15));
        assert!(!t.early_stop);
    }
}
