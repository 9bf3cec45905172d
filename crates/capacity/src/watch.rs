//! A level followed second by second ([`LevelWatch`]): when its warm-up
//! ends (steady, or at the longest warm-up), when it is measured enough
//! (its verdict settled with early stop, its full duration with its
//! `--min-samples`, or the cap), and how the level table says it ended.
//! The statistics of one look are [`crate::sequential`]'s.

use crate::sequential::{self, LevelSecond};
use crate::timing::Timing;
use headroom_analysis::capacity::ApdexGoal;
use headroom_bundle::capacity::SettledVerdict;
use headroom_load::run::Progress;
use std::ops::Range;
use std::time::Duration;

/// A level followed second by second: its warm-up ends when it is steady
/// (or at the longest warm-up), its measurement when the verdict settles
/// (with early stop) or at its full duration.
#[derive(Debug, Clone)]
pub struct LevelWatch {
    timing: Timing,
    target: ApdexGoal,
    /// Every second so far (warm-up included).
    seconds: Vec<LevelSecond>,
    /// The think time users took after each second's requests.
    think: Vec<Duration>,
    /// The first measured second, once the warm-up ended.
    from: Option<u64>,
    settled: Option<SettledVerdict>,
    /// The measurement window's end (seconds since the run's start), once
    /// the level has what it needs.
    until: Option<u64>,
    /// A lesson level's arrival phase broke the target, with this Apdex:
    /// the level ended with it ([`Timing::arrival_until`]).
    arrival_broke: Option<f64>,
    /// A lesson level whose reading phase an earlier lesson already
    /// showed met: it ends with its arrival phase, met or not.
    reading_known: bool,
}

impl LevelWatch {
    pub fn new(timing: Timing, target: ApdexGoal) -> LevelWatch {
        LevelWatch {
            timing,
            target,
            seconds: Vec::new(),
            think: Vec::new(),
            // Without a warm-up, the measurement starts with the run.
            from: timing.warmup_max.is_zero().then_some(0),
            settled: None,
            until: None,
            arrival_broke: None,
            reading_known: false,
        }
    }

    /// A lesson level whose reading phase is known (a lesson of as many
    /// students or more read well within the target): it ends with its
    /// arrival phase, whatever that phase's verdict.
    pub fn reading_known(self) -> LevelWatch {
        LevelWatch {
            reading_known: true,
            ..self
        }
    }

    /// Takes one second of the run; returns true when the level should end.
    pub fn second(&mut self, p: &Progress) -> bool {
        let interval = &p.interval;
        let count = interval.counts.count;
        let over_p95 = self.target.p95_max.map_or(0, |bound| {
            let micros = bound.as_micros().min(u128::from(u64::MAX)) as u64;
            count.saturating_sub(interval.response.count_between(0, micros))
        });
        let second = LevelSecond {
            length: p.length,
            requests: count,
            errors: interval.counts.errors,
            apdex_points: interval.counts.apdex.points(),
            over_p95,
            // The histogram holds microseconds.
            mean_response: if count > 0 {
                Duration::from_secs_f64(interval.response.mean() / 1e6)
            } else {
                Duration::ZERO
            },
        };
        let think = Duration::from_micros(interval.counts.think_micros);
        self.take(p.index, second, think)
    }

    /// Takes the run's second `index`, its figures and the think its users
    /// took after its requests; returns true when the level should end.
    pub fn take(&mut self, index: u64, second: LevelSecond, think: Duration) -> bool {
        if self.until.is_some() {
            return true;
        }
        // Seconds are kept at their index (the run's second).
        self.seconds.resize(
            self.seconds.len().max(index as usize),
            LevelSecond::default(),
        );
        self.seconds.truncate(index as usize);
        self.think.resize(index as usize, Duration::ZERO);
        self.think.push(think);
        self.seconds.push(second);
        // A partial second (the run's last) is not measured.
        if second.length < Duration::from_millis(999) {
            return false;
        }
        let ended = index + 1;
        if self.timing.arrival_until == Some(ended) {
            if let Some(apdex) = self.broken_arrival(ended) {
                self.arrival_broke = Some(apdex);
                self.until = Some(ended);
                return true;
            }
            if self.reading_known {
                self.until = Some(ended);
                return true;
            }
        }
        let Some(from) = self.from else {
            let steady = Duration::from_secs(ended) >= self.timing.steady_from
                && sequential::steady(&self.seconds);
            if steady || Duration::from_secs(ended) >= self.timing.warmup_max {
                self.from = Some(ended);
            }
            return false;
        };
        let measured = Duration::from_secs(ended - from);
        let seconds = &self.seconds[from as usize..];
        let needed = if sequential::near(&self.target, seconds) {
            self.timing.measure_near
        } else {
            self.timing.measure_min
        };
        let enough = seconds.iter().map(|s| s.requests).sum::<u64>() >= self.timing.min_samples;
        if self.settled.is_none() && measured >= needed && enough {
            if let Some(settled) = sequential::settle(&self.target, seconds) {
                self.settled = Some(SettledVerdict {
                    at_s: measured.as_secs_f64(),
                    met: settled.met,
                    why: settled.why,
                });
                if self.timing.early_stop {
                    self.until = Some(ended);
                    return true;
                }
            }
        }
        if (measured >= self.timing.measure_max && enough) || measured >= self.timing.measure_cap {
            self.until = Some(ended);
            return true;
        }
        false
    }

    /// The arrival phase's Apdex (its first `split` seconds) when it broke
    /// the target: too low an Apdex, too many errors, or more than one
    /// request in twenty over the p95 bound.
    fn broken_arrival(&self, split: u64) -> Option<f64> {
        let seconds = &self.seconds[..(split as usize).min(self.seconds.len())];
        let window = sequential::Window::of(seconds)?;
        (!window.meets(&self.target)).then_some(window.apdex)
    }

    /// Whether a lesson level's reading phase (from the end of its arrival
    /// phase to the level's end) settled met by the rule early stop uses:
    /// every figure's interval wholly on the right side of its bound. Such
    /// a reading phase stands for the reading of lessons of fewer
    /// students. `None` when it did not settle met, or was not run.
    pub fn reading_settled(&self) -> Option<sequential::Settled> {
        let from = self.timing.arrival_until? as usize;
        let until = self.until? as usize;
        let seconds = self.seconds.get(from..until.min(self.seconds.len()))?;
        let requests: u64 = seconds.iter().map(|s| s.requests).sum();
        if requests < self.timing.min_samples {
            return None;
        }
        sequential::settle(&self.target, seconds).filter(|s| s.met)
    }

    /// Whether the level ended with its arrival phase because its reading
    /// was known (not because the arrival broke).
    pub fn ended_with_arrival(&self) -> bool {
        self.reading_known
            && self.arrival_broke.is_none()
            && self.until.is_some()
            && self.until == self.timing.arrival_until
    }

    /// The arrival phase's Apdex when the level ended with it, broken.
    pub fn arrival_broke(&self) -> Option<f64> {
        self.arrival_broke
    }

    /// The verdict as it settled during the level, if it did.
    pub fn settled(&self) -> Option<&SettledVerdict> {
        self.settled.as_ref()
    }

    /// The requests measured, and the think time their users took after
    /// them.
    pub fn measured(&self) -> (u64, Duration) {
        let window = self.window();
        let (from, until) = (
            window.start.as_secs() as usize,
            window.end.as_secs() as usize,
        );
        let requests = self
            .seconds
            .iter()
            .take(until)
            .skip(from)
            .map(|s| s.requests)
            .sum();
        let think = self.think.iter().take(until).skip(from).sum();
        (requests, think)
    }

    /// The measured window: from the warm-up's end to where the level
    /// ended (or the planned end).
    pub fn window(&self) -> Range<Duration> {
        let from = self
            .from
            .map_or(self.timing.warmup_max, Duration::from_secs);
        let until = self
            .until
            .map_or(from + self.timing.measure_max, Duration::from_secs);
        from..until
    }

    /// The Apdex's 99% interval over the measured seconds.
    pub fn apdex_interval(&self) -> Option<[f64; 2]> {
        let (from, until) = (self.window().start.as_secs(), self.window().end.as_secs());
        let seconds: Vec<(f64, f64)> = self
            .seconds
            .iter()
            .enumerate()
            .filter(|(i, _)| (from..until).contains(&(*i as u64)))
            .map(|(_, s)| (s.requests as f64, s.apdex_points))
            .collect();
        sequential::share(&seconds, true).map(|i| [i.low, i.high])
    }

    /// How the level ended, as the level table says it.
    pub fn ended(&self, stopped_early: bool) -> String {
        let warmup = match self.from {
            Some(from) if Duration::from_secs(from) < self.timing.warmup_max => {
                format!("steady after {from} s")
            }
            _ => format!("warm-up {:.0} s", self.timing.warmup_max.as_secs_f64()),
        };
        let measured = self.window().end.saturating_sub(self.window().start);
        if let Some(apdex) = self.arrival_broke {
            return format!(
                "ended at {:.0} s, with its arrival phase, which broke the target (Apdex {apdex:.3})",
                measured.as_secs_f64()
            );
        }
        let how = match &self.settled {
            Some(s) if stopped_early => format!(
                "{} after {:.0} s: {}",
                if s.met { "met" } else { "broken" },
                s.at_s,
                s.why
            ),
            Some(s) => format!(
                "full {:.0} s (settled {} at {:.0} s)",
                measured.as_secs_f64(),
                if s.met { "met" } else { "broken" },
                s.at_s
            ),
            None => format!(
                "full {:.0} s: the interval straddled the target",
                measured.as_secs_f64()
            ),
        };
        let (requests, _) = self.measured();
        let samples = if requests < self.timing.min_samples {
            format!(
                "; thin: {} measured, fewer than --min-samples {}",
                headroom_units::quantity::count(requests as usize, "request", "requests"),
                self.timing.min_samples
            )
        } else if measured > self.timing.measure_max {
            format!(
                "; measured past {:.0} s for its {} requests",
                self.timing.measure_max.as_secs_f64(),
                self.timing.min_samples
            )
        } else {
            String::new()
        };
        format!("{warmup}; {how}{samples}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TARGET: ApdexGoal = ApdexGoal {
        apdex: 0.7,
        max_error: 0.01,
        p95_max: None,
    };

    /// Users start over 2 s and may be steady from 3 s; the warm-up ends
    /// at 15 s at the latest; a level measures 5 to 10 s (8 near the
    /// target), 40 s at most without its samples.
    fn timing(min_samples: u64, early_stop: bool) -> Timing {
        let s = Duration::from_secs;
        Timing {
            warmup_min: s(2),
            steady_from: s(3),
            warmup_max: s(15),
            measure_max: s(10),
            measure_min: s(5),
            measure_near: s(8),
            measure_cap: s(40),
            min_samples,
            early_stop,
            arrival_until: None,
        }
    }

    /// A second of `requests`, `satisfied` of them within T, 10 ms each.
    fn second(requests: u64, satisfied: u64) -> LevelSecond {
        LevelSecond {
            length: Duration::from_secs(1),
            requests,
            errors: 0,
            apdex_points: satisfied as f64,
            over_p95: 0,
            mean_response: Duration::from_millis(10),
        }
    }

    /// Feeds `seconds` from the run's first; returns the index of the
    /// second after which the level ended, if it did.
    fn feed(watch: &mut LevelWatch, seconds: impl IntoIterator<Item = LevelSecond>) -> Option<u64> {
        for (i, s) in seconds.into_iter().enumerate() {
            if watch.take(i as u64, s, Duration::from_millis(500)) {
                return Some(i as u64);
            }
        }
        None
    }

    /// A lesson level of 10 s, measured whole, its arrival phase the first
    /// 3 s.
    fn lesson(min_samples: u64) -> Timing {
        let whole = Duration::from_secs(10);
        Timing {
            warmup_min: Duration::ZERO,
            steady_from: Duration::ZERO,
            warmup_max: Duration::ZERO,
            measure_max: whole,
            measure_min: whole,
            measure_near: whole,
            measure_cap: whole,
            min_samples,
            early_stop: false,
            arrival_until: Some(3),
        }
    }

    /// A lesson level ends with its arrival phase when that phase broke
    /// the target (its Apdex over all its seconds), and runs on when it met.
    #[test]
    fn a_lesson_ends_with_its_broken_arrival() {
        let lesson = lesson(1);
        let mut broke = LevelWatch::new(lesson, TARGET);
        // 60 of 100 satisfied over the first three seconds: 0.6.
        assert!(!broke.take(0, second(50, 50), Duration::ZERO));
        assert!(!broke.take(1, second(25, 5), Duration::ZERO));
        assert!(broke.take(2, second(25, 5), Duration::ZERO));
        assert_eq!(broke.window(), Duration::ZERO..Duration::from_secs(3));
        assert_eq!(
            broke.ended(false),
            "ended at 3 s, with its arrival phase, which broke the target (Apdex 0.600)"
        );
        let mut met = LevelWatch::new(lesson, TARGET);
        for i in 0..9 {
            assert!(!met.take(i, second(10, 10), Duration::ZERO), "{i}");
        }
        assert!(met.take(9, second(10, 10), Duration::ZERO));
        // A p95 bound is judged by the share of requests over it: none
        // over, the arrival met.
        let bounded = ApdexGoal {
            p95_max: Some(Duration::from_secs(1)),
            ..TARGET
        };
        let mut met = LevelWatch::new(lesson, bounded);
        for i in 0..9 {
            assert!(!met.take(i, second(10, 10), Duration::ZERO), "{i}");
        }
        let mut slow = LevelWatch::new(lesson, bounded);
        let over = LevelSecond {
            over_p95: 2,
            ..second(10, 10)
        };
        assert!(!slow.take(0, over, Duration::ZERO));
        assert!(!slow.take(1, over, Duration::ZERO));
        assert!(slow.take(2, over, Duration::ZERO));
    }

    /// A lesson whose reading is known ends with its arrival phase though
    /// that phase met; a lesson run whole says whether its reading phase
    /// settled met, which a lesson that only met narrowly did not.
    #[test]
    fn a_lesson_with_its_reading_known_ends_with_its_arrival() {
        let lesson = lesson(100);
        let mut known = LevelWatch::new(lesson, TARGET).reading_known();
        assert!(!known.take(0, second(50, 50), Duration::ZERO));
        assert!(!known.take(1, second(50, 50), Duration::ZERO));
        assert!(known.take(2, second(50, 50), Duration::ZERO));
        assert_eq!(known.window(), Duration::ZERO..Duration::from_secs(3));
        assert!(known.arrival_broke().is_none() && known.ended_with_arrival());
        assert!(known.reading_settled().is_none(), "no reading was run");
        // Its arrival broke: it ended as any broken arrival does.
        let mut broke = LevelWatch::new(lesson, TARGET).reading_known();
        let _ = feed(&mut broke, std::iter::repeat_n(second(50, 10), 5));
        assert!(broke.arrival_broke().is_some() && !broke.ended_with_arrival());
        // Run whole: seven reading seconds of 50 requests, all satisfied.
        let mut whole = LevelWatch::new(lesson, TARGET);
        assert_eq!(
            feed(&mut whole, std::iter::repeat_n(second(50, 50), 20)),
            Some(9)
        );
        assert!(!whole.ended_with_arrival());
        let settled = whole.reading_settled().expect("a clear reading");
        assert!(
            settled.met && settled.why.starts_with("Apdex 1.000"),
            "{settled:?}"
        );
        // Read at 0.75 against 0.70: met, but not settled.
        let mut narrow = LevelWatch::new(lesson, TARGET);
        let reading = (0..10).map(|i| {
            if i < 3 {
                second(50, 50)
            } else {
                second(40, 30)
            }
        });
        assert_eq!(feed(&mut narrow, reading), Some(9));
        assert!(narrow.reading_settled().is_none());
        // Too few requests to stand for another lesson's reading.
        let mut thin = LevelWatch::new(lesson, TARGET);
        let reading = (0..10).map(|i| if i < 3 { second(50, 50) } else { second(5, 5) });
        assert_eq!(feed(&mut thin, reading), Some(9));
        assert!(thin.reading_settled().is_none());
    }

    /// 100 req/s, every one satisfied: steady after 6 s (two windows of
    /// three alike seconds), then met and settled after the 5 s a verdict
    /// needs at least: the level stops early at 11 s.
    #[test]
    fn a_steady_level_ends_its_warm_up_and_stops_when_its_verdict_settles() {
        let mut w = LevelWatch::new(timing(100, true), TARGET);
        assert_eq!(
            feed(&mut w, std::iter::repeat_n(second(100, 100), 60)),
            Some(10)
        );
        assert_eq!(w.window(), Duration::from_secs(6)..Duration::from_secs(11));
        assert!(w.settled().is_some_and(|s| s.met && s.at_s == 5.0));
        assert_eq!(w.measured(), (500, Duration::from_millis(2500)));
        let ended = w.ended(true);
        assert!(
            ended.starts_with("steady after 6 s; met after 5 s: "),
            "{ended}"
        );
        let interval = w.apdex_interval().unwrap();
        assert!(interval[0] > 0.9 && interval[1] <= 1.0, "{interval:?}");
        // Taken after its end, a second changes nothing.
        assert!(w.take(11, second(1, 0), Duration::ZERO));
        assert_eq!(w.measured().0, 500);
    }

    /// Throughput swinging 50/150 a second is never steady: the warm-up
    /// runs to its longest, 15 s.
    #[test]
    fn an_unsteady_level_warms_up_to_the_longest_warm_up() {
        let mut w = LevelWatch::new(timing(100, true), TARGET);
        let swinging = (0..60).map(|i| second(if i % 2 == 0 { 50 } else { 150 }, 0));
        let end = feed(&mut w, swinging).expect("the level ended");
        assert_eq!(w.window().start, Duration::from_secs(15));
        assert_eq!(end, 19, "broken and settled after 5 measured seconds");
        assert!(w.ended(true).starts_with("warm-up 15 s; broken after 5 s"));
    }

    /// A verdict rests on --min-samples requests: at 100 req/s and 1,500
    /// needed, a clear level settles only after 15 s, not 5; with
    /// --full-levels it measures past its 10 s to have them.
    #[test]
    fn a_level_measures_on_until_it_has_its_samples() {
        let mut w = LevelWatch::new(timing(1500, true), TARGET);
        assert_eq!(
            feed(&mut w, std::iter::repeat_n(second(100, 100), 60)),
            Some(20)
        );
        assert!(w.settled().is_some_and(|s| s.at_s == 15.0));
        let mut full = LevelWatch::new(timing(1500, false), TARGET);
        assert_eq!(
            feed(&mut full, std::iter::repeat_n(second(100, 100), 60)),
            Some(20)
        );
        assert_eq!(
            full.window(),
            Duration::from_secs(6)..Duration::from_secs(21)
        );
        assert_eq!(
            full.ended(false),
            "steady after 6 s; full 15 s (settled met at 15 s); measured past 10 s for its 1500 requests"
        );
    }

    /// A level that never has its samples stops at the cap (4 × its
    /// measurement) and says it is thin.
    #[test]
    fn a_level_without_its_samples_stops_at_the_cap_and_is_thin() {
        let mut w = LevelWatch::new(timing(100_000, true), TARGET);
        assert_eq!(
            feed(&mut w, std::iter::repeat_n(second(100, 100), 100)),
            Some(45)
        );
        assert_eq!(w.window(), Duration::from_secs(6)..Duration::from_secs(46));
        assert!(w.settled().is_none());
        let ended = w.ended(false);
        assert!(
            ended.ends_with("; thin: 4,000 requests measured, fewer than --min-samples 100000"),
            "{ended}"
        );
    }

    /// Near the target (Apdex 0.75 of 0.70) a level measures at least the
    /// near time, 8 s, before its verdict may settle; far from it, 5 s.
    #[test]
    fn near_the_target_a_level_measures_longer_before_settling() {
        let mut near = LevelWatch::new(timing(100, true), TARGET);
        let end = feed(&mut near, std::iter::repeat_n(second(1000, 750), 60));
        assert_eq!((end, near.settled().map(|s| s.at_s)), (Some(13), Some(8.0)));
        let mut far = LevelWatch::new(timing(100, true), TARGET);
        feed(&mut far, std::iter::repeat_n(second(1000, 1000), 60));
        assert_eq!(far.settled().map(|s| s.at_s), Some(5.0));
    }

    /// The run's last, partial second is kept but not judged; a run
    /// without a warm-up measures from its start.
    #[test]
    fn partial_seconds_and_no_warm_up() {
        let mut t = timing(100, true);
        t.warmup_max = Duration::ZERO;
        let mut w = LevelWatch::new(t, TARGET);
        assert_eq!(w.window().start, Duration::ZERO);
        assert!(!w.take(
            0,
            LevelSecond {
                length: Duration::from_millis(400),
                ..second(40, 40)
            },
            Duration::ZERO
        ));
        assert_eq!(w.measured().0, 40);
    }
}
