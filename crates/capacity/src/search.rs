//! The search's driver: a [`SearchPlan`] made from the search's [`Settings`]
//! (its level timing and capacity.json's setup), and [`SearchPlan::run`], which
//! climbs the [`crate::ladder`], runs each level as an ordinary run with
//! its own bundle, follows it second by second ([`crate::watch`]), reads
//! its figures back ([`crate::level`]) and returns the answer
//! ([`crate::answer`]). How a level's run is assembled is the caller's
//! ([`LevelRunner`]): the library knows users and durations, not flags.

use crate::answer::{answer, interrupted};
pub use crate::error::CapacityError;
use crate::ladder::{Aim, Ladder, Search};
use crate::lesson_aim::{LessonShape, Looked};
use crate::lesson_model::MOST_MODELLED;
use crate::level::{ladder_figures, measure_level};
use crate::level_run::{run_level, Ran};
use crate::rest::{Rest, RestTarget};
use crate::think::PlannedThink;
use crate::timing::{LevelTimes, Timing};
use crate::watch::LevelWatch;
use headroom_analysis::apdex::ApdexThresholds;
use headroom_analysis::capacity::{ApdexGoal, Bottleneck};
use headroom_bundle::capacity::{
    keep_measurement, CapacityResult, CapacitySetup, Level, LevelRest,
};
use headroom_bundle::warnings::RunWarning;
use headroom_load::engine::EnginePlan;
use headroom_load::run::{Progress, RunOutcome, RunSetup};
use std::cell::RefCell;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::watch;

/// What a search is asked, resolved: plain data made from its
/// [`crate::spec::CapacitySpec`] (the target named, the think planned).
#[derive(Debug, Clone)]
pub struct Settings {
    /// The system under test, as capacity.json names it.
    pub url: String,
    /// The scenario file, when the users run one.
    pub scenario: Option<String>,
    pub target: ApdexGoal,
    pub ladder: Ladder,
    /// The aimed ladder (else the plain one).
    pub aimed: bool,
    /// A lesson search aimed by the lesson model ([`crate::lesson_aim`]).
    pub modelled: bool,
    /// The levels' seed (a repetition k runs with the seed plus k).
    pub seed: u64,
    /// `--confirm`: how often the deciding levels are measured.
    pub confirm: u32,
    pub times: LevelTimes,
    pub think: PlannedThink,
    pub apdex: ApdexThresholds,
    /// The users are paced by a throughput cap: they also wait for their
    /// slot, which is not think, so Little's law is not checked.
    pub throughput_capped: bool,
    /// Server resources are monitored (the limit can be named).
    pub monitored: bool,
    /// The server's processes watched on the monitored hosts.
    pub processes: Vec<String>,
    /// The search's directory: a bundle per level, and capacity.json.
    pub base: PathBuf,
    /// What one user is, in words ([`crate::who`]).
    pub user: String,
    /// What a level's throughput counts: "req/s", "pages/s" or "steps/s".
    pub rate_unit: &'static str,
    /// What the answer calls the users, plural (`None`: users).
    pub users_are: Option<String>,
    /// The busiest minute of the log the workload was written from.
    pub log_peak: Option<headroom_bundle::capacity::LogPeakRecord>,
    /// A lesson search: the class the scenario's profile names
    /// (`students:`), which the answer measures itself against.
    pub class: Option<u32>,
    /// Each level is a lesson start: its users arrive within this time.
    pub lesson: Option<Duration>,
    /// What to probe for the rest before each lesson level but the first
    /// ([`crate::rest`]); `None`: no rest.
    pub rest: Option<RestTarget>,
}

/// Where a level is in the search, for a live line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelAt {
    /// 1 for the first level run.
    pub index: usize,
    pub users: u32,
    /// How often this level was measured before (`--confirm`): 0 the
    /// first time.
    pub repetition: u32,
    /// The search's remaining time, estimated.
    pub eta: Duration,
    /// A lesson level whose reading an earlier lesson showed: it ends with
    /// its arrival phase.
    pub reading_known: bool,
}

/// How a level's run is made and watched: the caller's (the CLI turns
/// its flags into a run of `users` for the level's timing).
pub trait LevelRunner {
    type Error: From<CapacityError>;

    /// Prepares the run of one level: `users` for `timing`'s warm-up and
    /// measurement (at most `timing.warmup_max + timing.measure_cap`),
    /// starting over `timing.warmup_min`, its bundle in `dir`; `repetition`
    /// counts the level's earlier measurements (`--confirm`), each of
    /// which should be a fresh draw (its own seed).
    fn prepare(
        &self,
        users: u32,
        repetition: u32,
        timing: Timing,
        dir: &Path,
    ) -> impl Future<Output = Result<(EnginePlan, RunSetup), Self::Error>>;

    /// Prepares a non-stop level of a modelled lesson search: `users` who
    /// do not think, all starting at once, for `duration`, their bundle in
    /// `dir`, writing every sample (samples.jtl) when `samples`.
    fn prepare_non_stop(
        &self,
        users: u32,
        duration: Duration,
        samples: bool,
        dir: PathBuf,
    ) -> impl Future<Output = Result<(EnginePlan, RunSetup), Self::Error>>;

    /// A line about the search before its levels (a modelled search's
    /// non-stop levels and model).
    fn said(&self, _line: &str) {}

    /// Each second of a level's run.
    fn second(&self, _at: LevelAt, _progress: &Progress) {}

    /// A level's run ended (measured or not).
    fn ran(&self) {}

    /// A level was measured.
    fn measured(&self, _level: &Level) {}

    /// What is known of the bottleneck's host beyond the search (its
    /// latest benchmark), lines for capacity.json's `host_bench`.
    fn host_bench(&self, _bottleneck: &Bottleneck) -> Vec<String> {
        Vec::new()
    }
}

/// A search ready to run: its settings, its levels' timing and
/// capacity.json's setup.
#[derive(Debug, Clone)]
pub struct SearchPlan {
    pub settings: Settings,
    pub timing: Timing,
    /// What the timing lengthened to fit the think time, and why.
    pub lengthened: Option<String>,
    pub setup: CapacitySetup,
}

impl SearchPlan {
    pub fn new(settings: Settings) -> SearchPlan {
        let think = &settings.think;
        let (timing, lengthened) = match settings.lesson {
            Some(within) => Timing::lesson(
                &settings.times,
                within,
                think.mean,
                think.first,
                think.split,
            ),
            None => Timing::of(&settings.times, think.mean, think.first),
        };
        let setup = CapacitySetup {
            url: settings.url.clone(),
            scenario: settings.scenario.clone(),
            started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            apdex_t_ms: settings.apdex.satisfied.as_secs_f64() * 1000.0,
            apdex_f_ms: settings.apdex.tolerated.as_secs_f64() * 1000.0,
            think: think.text.clone(),
            warmup_s: timing.warmup_max.as_secs_f64(),
            measured_s: timing.measure_max.as_secs_f64(),
            min_samples: timing.min_samples,
            lengthened: lengthened.clone(),
            processes: settings.processes.clone(),
            user: settings.user.clone(),
            rate_unit: settings.rate_unit.to_string(),
            users_are: settings.users_are.clone(),
            log_peak: settings.log_peak.clone(),
            arrive_within_s: settings.lesson.map(|w| w.as_secs_f64()),
            class: settings.class,
            ladder: match (settings.modelled, settings.aimed) {
                (true, _) => "model",
                (false, true) => "aimed",
                (false, false) => "plain",
            }
            .into(),
            step: settings.ladder.step,
            resolution: settings.ladder.resolution,
            early_stop: timing.early_stop,
            min_measured_s: timing.measure_min.as_secs_f64(),
            near_min_measured_s: timing.measure_near.as_secs_f64(),
            warmup_min_s: timing.warmup_min.as_secs_f64(),
        };
        SearchPlan {
            settings,
            timing,
            lengthened,
            setup,
        }
    }

    /// Runs the search until the ladder decides or `stop` turns true
    /// (then the answer says interrupted, with the levels measured).
    pub async fn run<R: LevelRunner>(
        &self,
        runner: &R,
        stop: &watch::Receiver<bool>,
    ) -> Result<CapacityResult, R::Error> {
        let settings = &self.settings;
        let mut search = Search::new(settings.ladder).confirming(settings.confirm);
        if settings.lesson.is_some() {
            // Each lesson start must go well, not most of them, and the
            // next one too, by their spread.
            search = search.unanimous().even(settings.target.apdex);
        }
        if settings.aimed {
            search = search.aimed(Aim {
                think: settings.think.mean,
                apdex_t: settings.apdex.satisfied,
                target_apdex: settings.target.apdex,
            });
        }
        // The idle server's probe time, before the first level.
        let rest = match &settings.rest {
            Some(target) => Rest::measure(target).await,
            None => None,
        };
        let rest = rest.as_ref();
        // A modelled lesson search looks at what a page view costs first,
        // and aims its first lesson at the model's answer.
        let mut aimed = None;
        let mut completed_look = true;
        if let (true, Some(within)) = (settings.modelled, settings.lesson) {
            let shape = LessonShape {
                within,
                length: self
                    .timing
                    .warmup_max
                    .saturating_add(self.timing.measure_cap),
                apdex: settings.apdex,
                target: settings.target,
                seed: settings.seed,
                repetitions: settings.confirm,
                most: settings.ladder.max.min(MOST_MODELLED),
            };
            let looked = crate::lesson_aim::look(
                |users, duration, samples, dir: PathBuf| {
                    runner.prepare_non_stop(users, duration, samples, dir)
                },
                stop,
                &settings.base,
                &shape,
                |line| runner.said(line),
            )
            .await?;
            match looked {
                Looked::Aimed(a) => {
                    search = search.modelled(a.answer.students.max(1), a.why());
                    aimed = Some(*a);
                }
                Looked::NoModel(why) => {
                    runner.said(&why);
                    search = search.aimed(Aim {
                        think: settings.think.mean,
                        apdex_t: settings.apdex.satisfied,
                        target_apdex: settings.target.apdex,
                    });
                }
                Looked::Interrupted => completed_look = false,
            }
        }
        let levels: RefCell<Vec<Level>> = RefCell::new(Vec::new());
        // Each lesson's students, and its reading phase's why where it
        // settled met.
        let read_well: RefCell<Vec<(u32, Option<String>)>> = RefCell::new(Vec::new());
        let completed = completed_look
            && search
                .drive(
                    |users, remaining| {
                        let (levels, read_well) = (&levels, &read_well);
                        async move {
                            let index = levels.borrow().len() + 1;
                            let repetition =
                                levels.borrow().iter().filter(|l| l.users == users).count() as u32;
                            let known = self
                                .timing
                                .arrival_until
                                .and_then(|_| reading_known(&read_well.borrow(), users));
                            let at = LevelAt {
                                index,
                                users,
                                repetition,
                                eta: self.timing.planned() * remaining,
                                reading_known: known.is_some(),
                            };
                            let Some((level, reading)) =
                                self.level(runner, stop, at, rest, known.as_ref()).await?
                            else {
                                return Ok::<_, R::Error>(None);
                            };
                            let (good, figures) = (level.good, ladder_figures(&level));
                            levels.borrow_mut().push(level);
                            read_well.borrow_mut().push((users, reading));
                            Ok::<_, R::Error>(Some((good, figures)))
                        }
                    },
                    |line| runner.said(line),
                )
                .await?;
        let mut levels = levels.into_inner();
        for (level, why) in levels.iter_mut().zip(search.reasons()) {
            level.why = why.clone();
        }
        for (users, floor) in search.uneven_levels() {
            for level in levels.iter_mut().filter(|l| l.users == users) {
                level.uneven_floor = Some(floor);
            }
        }
        let mut result = answer(
            settings.target,
            levels,
            search.capacity(),
            search.reached_max(),
            settings.think.mean,
            settings.monitored,
            settings.base.clone(),
        );
        result.setup = self.setup.clone();
        // The verdict names the users as the setup calls them.
        result.verdict = result.verdict();
        result.inversions = search
            .inversions()
            .into_iter()
            .map(|(a, b)| [a, b])
            .collect();
        result.host_bench = result
            .bottleneck
            .as_ref()
            .map_or(Vec::new(), |b| runner.host_bench(b));
        let non_stop: Vec<PathBuf> = aimed.as_ref().map_or(Vec::new(), |a| {
            a.record.non_stop.iter().map(|n| n.bundle.clone()).collect()
        });
        result.requests = Some(crate::level::requests_sent(
            &result.levels,
            rest.map_or(0, |r| r.idle_probes),
            &non_stop,
        ));
        if let Some(mut aimed) = aimed {
            let students: Vec<u32> = result.levels.iter().map(|l| l.users).collect();
            aimed.say_of(&students, settings.seed);
            result.model = Some(aimed.record);
        }
        Ok(if completed {
            result
        } else {
            interrupted(result)
        })
    }

    /// Runs one level as an ordinary run with its own bundle and measures
    /// it after its warm-up; `None` when the user interrupted it.
    /// With its reading phase `known`, a lesson level ends with its
    /// arrival phase. Also returns the level's reading phase as it settled
    /// met, if it did (its why).
    async fn level<R: LevelRunner>(
        &self,
        runner: &R,
        stop: &watch::Receiver<bool>,
        at: LevelAt,
        rest: Option<&Rest>,
        known: Option<&ReadingKnown>,
    ) -> Result<Option<(Level, Option<String>)>, R::Error> {
        // Before every level but the first, the server finishes what the
        // level before left queued.
        let mut rested = match rest {
            // After a modelled search's non-stop levels too.
            Some(rest) if at.index > 1 || self.settings.modelled => Some(rest.wait(stop).await),
            _ => None,
        };
        if *stop.borrow() {
            return Ok(None);
        }
        let users = at.users;
        let base = &self.settings.base;
        let dir = base.join(format!("level-{users:04}"));
        let dir = if dir.exists() {
            base.join(format!("level-{users:04}-{}", at.index))
        } else {
            dir
        };
        let Some(ran) = self
            .run_level(runner, stop, at, &dir, rest, &mut rested)
            .await?
        else {
            return Ok(None);
        };
        let LevelRun {
            outcome,
            watched,
            generator_limited,
            put_aside,
        } = ran;
        let mut level = measure_level(
            users,
            &outcome.bundle,
            watched.window(),
            &self.settings.target,
            generator_limited,
        )
        .map_err(|e| CapacityError::Level(e.to_string()))?;
        self.watched(&mut level, &watched);
        if self.settings.lesson.is_some() {
            // Ended with its arrival because its reading was known: a
            // moment of reading the run still recorded is not its reading.
            let arrival_only = watched.ended_with_arrival();
            crate::lesson::judge_phases(
                &mut level,
                &outcome.bundle,
                &self.settings.target,
                arrival_only,
            )
            .map_err(|e| CapacityError::Level(e.to_string()))?;
            if watched.arrival_broke().is_some() || (arrival_only && !level.good) {
                // Its reading phase was not measured: it cannot have met.
                level.good = false;
                level.ended = format!(
                    "ended with its arrival phase, which broke the target; {}",
                    level.ended
                );
            } else if let Some(known) = known.filter(|_| arrival_only) {
                level.reading_as = Some(known.level as u32);
                level.ended = format!(
                    "{}; its reading was not run again: the lesson of {} before it (level {}) read well within the target ({})",
                    level.ended, known.users, known.level, known.why
                );
            }
        }
        // A reading stands for other lessons only when the generator kept
        // up: a starved one sent less than the students would have.
        let reading = watched
            .reading_settled()
            .filter(|_| level.good && !level.generator_limited)
            .map(|s| s.why);
        if let Some(rest) = rested {
            level.ended = format!("{}; {}", level.ended, rest.describe());
            level.rest = Some(rest);
        }
        for (bundle, warning) in put_aside {
            level.ended = format!(
                "{}; measured again: in its first run ({}) {}",
                level.ended,
                bundle.display(),
                first_clause(&warning)
            );
            level.put_aside.push(bundle);
        }
        // The ladder went by the server's processes; the machine is said.
        if let Some(crowded) = crate::level::crowded(&level) {
            level.ended = format!(
                "{}; other work kept the machine busy ({crowded}): the ladder went by the server's processes",
                level.ended
            );
        }
        runner.measured(&level);
        Ok(Some((level, reading)))
    }

    /// A level's run in `dir`. A run whose generator could not keep up (a
    /// busy machine's moment) is put aside and the level measured once
    /// more, after the server's rest for a lesson: its figures would not
    /// be the server's. A second such run stands, and the answer it
    /// decides says it is not valid. `None` when the user interrupted it.
    async fn run_level<R: LevelRunner>(
        &self,
        runner: &R,
        stop: &watch::Receiver<bool>,
        at: LevelAt,
        dir: &Path,
        rest: Option<&Rest>,
        rested: &mut Option<LevelRest>,
    ) -> Result<Option<LevelRun>, R::Error> {
        let mut put_aside = Vec::new();
        loop {
            let attempt_dir = if put_aside.is_empty() {
                dir.to_path_buf()
            } else {
                dir.with_file_name(format!(
                    "{}-again",
                    dir.file_name().unwrap_or_default().to_string_lossy()
                ))
            };
            let Some((outcome, watched)) = self.attempt(runner, stop, at, &attempt_dir).await?
            else {
                return Ok(None);
            };
            let limited = outcome
                .warnings
                .iter()
                .find(|w| {
                    matches!(
                        w,
                        RunWarning::GeneratorSaturated { .. } | RunWarning::GeneratorStalled { .. }
                    )
                })
                .map(|w| w.to_string());
            let generator_limited = limited.is_some();
            let Some(warning) = limited.filter(|_| put_aside.is_empty()) else {
                return Ok(Some(LevelRun {
                    generator_limited,
                    outcome,
                    watched,
                    put_aside,
                }));
            };
            // Its bundle says which seconds were warm-up too.
            let _ = keep_measurement(&outcome.bundle, watched.window());
            put_aside.push((outcome.bundle.clone(), warning));
            if let (Some(rest), Some(before)) = (rest, rested.take()) {
                let mut again = rest.wait(stop).await;
                // Both rests' probes reached the server.
                again.probes += before.probes;
                again.waited_s += before.waited_s;
                *rested = Some(again);
                if *stop.borrow() {
                    return Ok(None);
                }
            }
        }
    }

    /// One run of a level in `dir`: its outcome and what its watch saw;
    /// `None` when the user interrupted it (its bundle still says which
    /// seconds were warm-up).
    async fn attempt<R: LevelRunner>(
        &self,
        runner: &R,
        stop: &watch::Receiver<bool>,
        at: LevelAt,
        dir: &Path,
    ) -> Result<Option<(RunOutcome, LevelWatch)>, R::Error> {
        let timing = self.timing;
        let (plan, mut setup) = runner.prepare(at.users, at.repetition, timing, dir).await?;
        debug_assert!(
            self.settings.lesson.is_none() || plan.think.mean() == self.settings.think.split,
            "a lesson level's run splits its phases by the think its search planned"
        );
        let (end_tx, end_rx) = watch::channel(false);
        setup.end_early = Some(end_rx);
        let mut watch = LevelWatch::new(timing, self.settings.target);
        if at.reading_known {
            watch = watch.reading_known();
        }
        let watch_level = RefCell::new(watch);
        let on_progress = |p: &Progress| {
            if watch_level.borrow_mut().second(p) {
                let _ = end_tx.send(true);
            }
            runner.second(at, p);
        };
        let ran = run_level(plan, setup, stop, on_progress).await;
        runner.ran();
        let watched = watch_level.into_inner();
        let outcome = match ran? {
            Ran::Done(outcome) => outcome,
            Ran::Interrupted(outcome) => {
                let _ = keep_measurement(&outcome.bundle, watched.window());
                return Ok(None);
            }
        };
        Ok(Some((outcome, watched)))
    }

    /// What the level's watch saw: how it ended, its requests against
    /// `--min-samples`, the think its users took, its Apdex interval.
    fn watched(&self, level: &mut Level, watched: &LevelWatch) {
        let timing = self.timing;
        // With early stop a level ends when its verdict settles.
        level.stopped_early = timing.early_stop && watched.settled().is_some();
        level.ended = watched.ended(level.stopped_early);
        let (requests, think) = watched.measured();
        level.min_samples = timing.min_samples;
        level.thin = requests < timing.min_samples;
        // Under a throughput cap users also wait for their slot, which is
        // not think: Little's law cannot be checked then.
        // capacity.json keeps seconds.
        level.think_s = (requests > 0 && !self.settings.throughput_capped)
            .then(|| think.as_secs_f64() / requests as f64);
        level.apdex_interval = watched.apdex_interval();
        level.settled = watched.settled().cloned();
    }
}

/// A warning's first clause ("headroom was starved of CPU: ..."), for a
/// level's line.
fn first_clause(warning: &str) -> &str {
    warning
        .split_once(", so ")
        .or_else(|| warning.split_once(": response"))
        .map_or(warning, |(head, _)| head)
}

/// An earlier lesson whose reading phase stands for a lesson level's:
/// its place among the levels (1 for the first), its students, and how
/// its reading settled met.
#[derive(Debug, Clone, PartialEq)]
struct ReadingKnown {
    level: usize,
    users: u32,
    why: String,
}

/// The lesson that shows how `users` students read, if one did: of the
/// earlier lessons (`read_well`, by level: its students, and its reading
/// phase's why where it settled met), the one of the fewest students at
/// or above `users` that read well, the latest of those. Fewer students
/// read no more than they did: each reads at the same pace, so the
/// reading phase's load falls with them.
fn reading_known(read_well: &[(u32, Option<String>)], users: u32) -> Option<ReadingKnown> {
    read_well
        .iter()
        .enumerate()
        .filter(|(_, (at, _))| *at >= users)
        .filter_map(|(i, (at, why))| Some((i + 1, *at, why.as_ref()?)))
        .min_by_key(|&(i, users, _)| (users, std::cmp::Reverse(i)))
        .map(|(level, users, why)| ReadingKnown {
            level,
            users,
            why: why.clone(),
        })
}

/// A level's run as measured, and the runs put aside before it.
struct LevelRun {
    outcome: RunOutcome,
    watched: LevelWatch,
    generator_limited: bool,
    /// Each run put aside: its bundle and why.
    put_aside: Vec<(PathBuf, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lesson's reading is known from the closest lesson at or above it
    /// that read well, the latest of those; never from one below it or one
    /// whose reading did not settle met.
    #[test]
    fn a_lessons_reading_is_known_from_the_closest_lesson_above_that_read_well() {
        let well = |why: &str| Some(why.to_string());
        let levels = vec![
            (368, None),
            (331, well("Apdex 0.99 (0.98-1.00) above 0.70")),
            (297, None),
            (297, well("Apdex 1.000 (0.995-1.000) above 0.70")),
            (267, well("Apdex 1.000 (0.99-1.00) above 0.70")),
        ];
        let known = |users| reading_known(&levels, users).map(|k| (k.level, k.users));
        assert_eq!(known(400), None, "none read at 400 or more");
        assert_eq!(known(368), None, "368 broke, and none above it read");
        assert_eq!(known(331), Some((2, 331)));
        assert_eq!(known(300), Some((2, 331)));
        assert_eq!(known(297), Some((4, 297)), "the latest of the closest");
        assert_eq!(known(280), Some((4, 297)));
        assert_eq!(known(100), Some((5, 267)));
        assert_eq!(
            reading_known(&levels, 297).map(|k| k.why),
            Some("Apdex 1.000 (0.995-1.000) above 0.70".into())
        );
        assert_eq!(reading_known(&[], 10), None);
    }
}
