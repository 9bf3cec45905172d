//! A capacity search as data: the [`CapacitySpec`]. It holds what each
//! level runs (a [`RunSpec`] whose users, duration, ramp-up and bundle are
//! the level's) and how the search climbs (the goal a level must meet, the
//! ladder, `--confirm`, the level times, the search's directory). The CLI
//! turns `headroom capacity`'s flags into one and runs it; `headroom
//! capacity --spec FILE` runs one a file holds; an experiment writes one
//! per run as its `spec.json`.
//!
//! What a search derives from its spec (the target's name, the think it
//! plans with, the Apdex thresholds) is [`CapacitySpec::settings`]; a
//! level's run is [`CapacitySpec::level_run`]. Durations are written as
//! the run spec writes them (humantime text, "1m 30s").

use crate::ladder::Ladder;
use crate::search::Settings;
use crate::think::PlannedThink;
use crate::timing::{LevelTimes, Timing};
use headroom_analysis::capacity::ApdexGoal;
use headroom_http::target::Target;
use headroom_load::assemble::AssemblyError;
use headroom_load::spec::{duration_text, ProfileSpec, RunSpec, StartSpec, WorkloadSource};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One capacity search, as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacitySpec {
    /// Each level's run before its users, duration, ramp-up and bundle:
    /// the workload (the URL, or a scenario with its target), think,
    /// throughput cap, Apdex thresholds, monitors and seed.
    pub level: RunSpec,
    /// What a level must meet (`--apdex-target`, `--max-error`,
    /// `--p95-max`).
    #[serde(with = "GoalText")]
    pub goal: ApdexGoal,
    /// The users of the first level, the step, the most users and the
    /// bisection's resolution.
    #[serde(with = "LadderText")]
    pub ladder: Ladder,
    /// The aimed ladder (else the plain one).
    pub aimed: bool,
    /// A lesson search aimed by a model of the lesson start, measured at
    /// short non-stop levels first (`--ladder model`; `aimed` is then not
    /// used).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub modelled: bool,
    /// How often the deciding levels are measured (`--confirm`).
    #[serde(default = "once")]
    pub confirm: u32,
    /// Each level's warm-up and measurement as given.
    #[serde(with = "LevelTimesText")]
    pub times: LevelTimes,
    /// The search's directory (a bundle per level, and capacity.json);
    /// `None`: a new one under runs/.
    #[serde(default)]
    pub dir: Option<PathBuf>,
    /// What the answer calls the users, plural (`--users-are students`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users_are: Option<String>,
    /// Each level is a lesson start (`--arrive-within`): its users arrive
    /// within this time and read; both phases are judged.
    #[serde(
        default,
        with = "opt_duration_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub arrive_within: Option<Duration>,
}

fn once() -> u32 {
    1
}

/// What [`CapacitySpec::users`] finds in the workload.
struct Users {
    think: PlannedThink,
    /// One user in words.
    user: String,
    /// What the throughput counts ([`crate::who::rate_unit`]).
    rate_unit: &'static str,
    /// A log workload's busiest minute (its `peak:`).
    log_peak: Option<headroom_bundle::capacity::LogPeakRecord>,
    /// The class the file's lesson profile names (`students:`).
    class: Option<u32>,
}

/// A search's levels are users; a replayed log has none to add.
fn replay_refused() -> AssemblyError {
    AssemblyError::Usage(
        "a capacity search runs users, and a replayed log has none: write the log as a workload (headroom scenario from-log --out DIR) and search with --scenario DIR/workload.yaml, or replay it faster (headroom replay --speed)".into(),
    )
}

/// [`ApdexGoal`] as a spec writes it (its p95 bound as a duration).
#[derive(Serialize, Deserialize)]
#[serde(remote = "ApdexGoal", deny_unknown_fields)]
struct GoalText {
    apdex: f64,
    max_error: f64,
    #[serde(default, with = "opt_duration_text")]
    p95_max: Option<Duration>,
}

/// [`Ladder`] as a spec writes it.
#[derive(Serialize, Deserialize)]
#[serde(remote = "Ladder", deny_unknown_fields)]
struct LadderText {
    start: u32,
    step: u32,
    max: u32,
    resolution: u32,
}

/// [`LevelTimes`] as a spec writes it.
#[derive(Serialize, Deserialize)]
#[serde(remote = "LevelTimes", deny_unknown_fields)]
struct LevelTimesText {
    #[serde(with = "duration_text")]
    warmup: Duration,
    #[serde(default, with = "opt_duration_text")]
    warmup_min: Option<Duration>,
    #[serde(with = "duration_text")]
    step_duration: Duration,
    #[serde(default, with = "opt_duration_text")]
    min_step_duration: Option<Duration>,
    #[serde(default)]
    full_levels: bool,
    min_samples: u64,
}

impl CapacitySpec {
    /// The system under test: the URL the users load, or the target of
    /// their scenario.
    pub fn target(&self) -> Result<Target, AssemblyError> {
        let given = match &self.level.workload {
            WorkloadSource::Url(request) => Some(&request.url),
            WorkloadSource::Scenario(source) => source.target.as_ref(),
            WorkloadSource::Replay(_) => return Err(replay_refused()),
        };
        let given = given.ok_or_else(|| {
            AssemblyError::Usage(
                "a capacity search of a scenario needs its target (the scenario's base URL): give level.workload.target".into(),
            )
        })?;
        Target::parse(given).map_err(|e| AssemblyError::Usage(e.to_string()))
    }

    /// The scenario file the users run, when they run one.
    pub fn scenario(&self) -> Option<&Path> {
        match &self.level.workload {
            WorkloadSource::Scenario(source) => Some(source.file.as_path()),
            WorkloadSource::Url(_) | WorkloadSource::Replay(_) => None,
        }
    }

    /// The think per request the search plans with: the level's think on
    /// a URL, else the scenario's own (per step, or its default) with the
    /// level's think for the steps without their own.
    pub fn planned_think(&self, target: &Target) -> Result<PlannedThink, AssemblyError> {
        Ok(self.users(target)?.think)
    }

    /// The think the search plans with, what one user is in words, what
    /// its throughput counts ([`crate::who::rate_unit`]), and the busiest
    /// minute of the log a workload was written from (its `peak:`).
    fn users(&self, target: &Target) -> Result<Users, AssemblyError> {
        let source = match &self.level.workload {
            WorkloadSource::Url(request) => {
                let think = PlannedThink::of_flag(self.level.think);
                let user = crate::who::of_url(&request.method, &target.url, &think);
                return Ok(Users {
                    think,
                    user,
                    rate_unit: crate::who::rate_unit(1, 0),
                    log_peak: None,
                    class: None,
                });
            }
            WorkloadSource::Scenario(source) => source,
            WorkloadSource::Replay(_) => return Err(replay_refused()),
        };
        if headroom_journey::scenario::mix::is_mix_file(&source.file) {
            let mix = headroom_journey::scenario::mix::read(&source.file, Some(target))
                .map_err(|e| AssemblyError::Usage(e.to_string()))?;
            if let headroom_journey::scenario::mix::Workfile::Mix(mix) = mix {
                let think = PlannedThink::of_mix(&mix, self.level.think);
                let user = crate::who::of_mix(&mix, &think);
                let steps = mix.journeys.iter().flat_map(|j| &j.scenario.requests);
                let pages = steps.clone().filter(|r| r.page.is_some()).count();
                return Ok(Users {
                    think,
                    user,
                    rate_unit: crate::who::rate_unit(steps.count(), pages),
                    log_peak: None,
                    class: mix.profile.students,
                });
            }
        }
        let scenario = headroom_journey::scenario::jmx::scenario(
            &source.file,
            Some(target),
            &source.jmeter_properties,
            source.strict,
        )
        .map_err(AssemblyError::Usage)?;
        let think = PlannedThink::of_scenario(&scenario, self.level.think);
        let user = crate::who::of_scenario(&scenario, &source.file, &think);
        let pages = scenario
            .requests
            .iter()
            .filter(|r| r.page.is_some())
            .count();
        Ok(Users {
            think,
            user,
            rate_unit: crate::who::rate_unit(scenario.requests.len(), pages),
            class: scenario.profile.students,
            log_peak: scenario.peak,
        })
    }

    /// The search's settings, its levels and capacity.json going into
    /// `base`.
    pub fn settings(&self, base: PathBuf) -> Result<Settings, AssemblyError> {
        let target = self.target()?;
        let Users {
            think,
            user,
            rate_unit,
            log_peak,
            class,
        } = self.users(&target)?;
        let level = &self.level;
        Ok(Settings {
            url: target.url.clone(),
            scenario: self.scenario().map(|f| f.display().to_string()),
            target: self.goal,
            ladder: self.ladder,
            aimed: self.aimed,
            modelled: self.modelled && self.arrive_within.is_some(),
            seed: level.seed,
            confirm: self.confirm,
            times: self.times,
            think,
            apdex: headroom_load::assemble::apdex(&level.apdex)?,
            throughput_capped: level.throughput.is_some(),
            monitored: !level.monitors.sources.is_empty(),
            processes: level.monitors.processes.clone(),
            base,
            user,
            rate_unit,
            users_are: self.users_are.clone(),
            log_peak,
            class: self.arrive_within.and(class),
            lesson: self.arrive_within,
            rest: self.arrive_within.map(|_| crate::rest::RestTarget {
                target: target.clone(),
                insecure: level.insecure,
            }),
        })
    }

    /// The run of one level: `users` for `timing`'s warm-up and
    /// measurement, starting over its shortest warm-up, its bundle in
    /// `dir`. A level's `repetition` k (`--confirm`) runs with the seed
    /// plus k: other think times and data draws, and for a lesson other
    /// arrival times, as another lesson would have.
    pub fn level_run(&self, users: u32, repetition: u32, timing: Timing, dir: &Path) -> RunSpec {
        let mut level = self.level.clone();
        level.seed = level.seed.wrapping_add(u64::from(repetition));
        if let Some(within) = self.arrive_within {
            let mut run = level
                .with_duration(timing.warmup_max.saturating_add(timing.measure_cap))
                .with_bundle_dir(dir.to_path_buf());
            run.profile.students = Some(users);
            run.profile.arrive_within = Some(within);
            return run;
        }
        level
            .with_users(users)
            .with_duration(timing.warmup_max.saturating_add(timing.measure_cap))
            .with_ramp_up(timing.warmup_min)
            .with_bundle_dir(dir.to_path_buf())
    }

    /// A non-stop level of a modelled lesson search: `users` who do not
    /// think (the plan says so: [`headroom_load::engine::EnginePlan::non_stop`]),
    /// all starting at once, for `duration`, their bundle in `dir`, with
    /// every sample (samples.jtl) when `samples`.
    pub fn non_stop_run(
        &self,
        users: u32,
        duration: Duration,
        samples: bool,
        dir: &Path,
    ) -> RunSpec {
        let mut run = self
            .level
            .clone()
            .with_users(users)
            .with_duration(duration)
            .with_ramp_up(Duration::ZERO)
            .with_bundle_dir(dir.to_path_buf());
        run.outputs.jtl = samples;
        run
    }

    /// What is wrong with a spec that was not made from flags (the flags
    /// are checked as they are given), said with the spec's field names.
    pub fn check(&self) -> Result<(), String> {
        let level = &self.level;
        if level.profile != ProfileSpec::default() {
            return Err("level.profile is given, but a capacity search sets each level's users, duration and ramp-up itself: leave it out and give ladder and times".into());
        }
        if !level.faults.is_empty() {
            return Err("level.faults is given, but capacity runs no faults: a fault belongs to one run (headroom load --fault, or an experiment with faults:)".into());
        }
        if level.outputs.jtl {
            return Err("level.outputs.jtl is true, but capacity keeps no raw samples: each level's bundle has its intervals and histograms".into());
        }
        if level.outputs.bundle_dir.is_some() {
            return Err("level.outputs.bundle_dir is given, but each level's bundle goes into the search's directory: give dir instead".into());
        }
        if level.shard.is_some() || level.start != StartSpec::default() {
            return Err("level.shard or level.start is given, but capacity cannot be sharded: each level's answer depends on the one before".into());
        }
        if let WorkloadSource::Scenario(source) = &level.workload {
            if source.target.is_none() {
                return Err("level.workload has no target: a capacity search of a scenario needs the scenario's base URL".into());
            }
        }
        if self.modelled && self.arrive_within.is_none() {
            return Err("modelled is true, but the lesson model models a lesson start: give arrive_within, or set modelled to false".into());
        }
        self.check_search()
    }

    /// The goal, the ladder and the times: in range, as their flags'
    /// parsers require.
    fn check_search(&self) -> Result<(), String> {
        let goal = &self.goal;
        if !(0.0..=1.0).contains(&goal.apdex) {
            return Err(format!(
                "goal.apdex ({}) must be between 0 and 1",
                goal.apdex
            ));
        }
        if !(0.0..=1.0).contains(&goal.max_error) {
            return Err(format!(
                "goal.max_error ({}) must be a share between 0 and 1",
                goal.max_error
            ));
        }
        if goal.p95_max.is_some_and(|d| d.is_zero()) {
            return Err("goal.p95_max must be longer than zero".into());
        }
        let ladder = &self.ladder;
        let counts = [
            ("ladder.start", ladder.start),
            ("ladder.step", ladder.step),
            ("ladder.max", ladder.max),
            ("ladder.resolution", ladder.resolution),
            ("confirm", self.confirm),
        ];
        if let Some((name, _)) = counts.iter().find(|(_, n)| *n == 0) {
            return Err(format!("{name} is 0: it must be at least 1"));
        }
        if ladder.start > ladder.max {
            return Err(format!(
                "ladder.start ({}) is above ladder.max ({})",
                ladder.start, ladder.max
            ));
        }
        let times = &self.times;
        if times.step_duration.is_zero() || times.min_step_duration.is_some_and(|d| d.is_zero()) {
            return Err(
                "times.step_duration and times.min_step_duration must be longer than zero".into(),
            );
        }
        if times.min_samples == 0 {
            return Err("times.min_samples is 0: it must be at least 1".into());
        }
        Ok(())
    }
}

/// `Option<Duration>`s as humantime text, or null.
mod opt_duration_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => headroom_load::spec::duration_text::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|text| {
                humantime::parse_duration(&text).map_err(|e| {
                    serde::de::Error::custom(format!(
                        "'{text}' is not a duration ({e}): write e.g. 30s"
                    ))
                })
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_load::spec::{ScenarioSource, UrlRequest};

    fn url_spec() -> CapacitySpec {
        let mut level = RunSpec::new(WorkloadSource::Url(UrlRequest::get(
            "http://ann:s3cret@127.0.0.1:9/page",
        )));
        level.throughput = Some(headroom_units::quantity::Rate { per_second: 5.0 });
        level.monitors.sources = vec![headroom_load::spec::Monitored::Local];
        level.monitors.processes = vec!["nginx".into()];
        CapacitySpec {
            level,
            goal: ApdexGoal {
                apdex: 0.85,
                max_error: 0.01,
                p95_max: Some(Duration::from_millis(1500)),
            },
            ladder: Ladder {
                start: 2,
                step: 4,
                max: 30,
                resolution: 1,
            },
            aimed: false,
            modelled: false,
            confirm: 3,
            times: LevelTimes {
                warmup: Duration::ZERO,
                warmup_min: None,
                step_duration: Duration::from_secs(90),
                min_step_duration: Some(Duration::from_secs(5)),
                full_levels: true,
                min_samples: 100,
            },
            dir: Some("runs/search".into()),
            users_are: Some("students".into()),
            arrive_within: None,
        }
    }

    #[test]
    fn a_capacity_spec_survives_json_with_readable_durations() {
        let spec = url_spec();
        let json = serde_json::to_string_pretty(&spec).unwrap();
        for field in [
            "\"p95_max\": \"1s 500ms\"",
            "\"step_duration\": \"1m 30s\"",
            "\"warmup\": \"0s\"",
            "\"warmup_min\": null",
            "\"resolution\": 1",
        ] {
            assert!(json.contains(field), "{field} is not in {json}");
        }
        let back: CapacitySpec = serde_json::from_str(&json).unwrap();
        assert_eq!(back, spec);
        assert_eq!(back.check(), Ok(()));
    }

    /// The settings a search runs with come from the spec: the target
    /// without its password, the think of the level's flag, the Apdex
    /// thresholds, and what the monitors and the throughput cap imply.
    #[test]
    fn a_spec_gives_the_searchs_settings_and_its_levels_runs() {
        let spec = url_spec();
        let settings = spec.settings(PathBuf::from("/s")).unwrap();
        assert_eq!(settings.url, "http://ann:***@127.0.0.1:9/page");
        assert_eq!(settings.scenario, None);
        assert_eq!(settings.think.text, "none");
        assert_eq!(settings.apdex.tolerated, Duration::from_millis(1500));
        assert!(settings.throughput_capped && settings.monitored && !settings.aimed);
        assert_eq!(settings.processes, vec!["nginx".to_string()]);
        assert_eq!((settings.ladder, settings.confirm), (spec.ladder, 3));
        let (timing, _) = Timing::of(&spec.times, Duration::ZERO, Duration::ZERO);
        let run = spec.level_run(7, 0, timing, Path::new("/s/level-0007"));
        assert_eq!(run.profile.users, Some(7));
        assert_eq!(run.seed, spec.level.seed);
        // Its second measurement is another draw.
        let again = spec.level_run(7, 1, timing, Path::new("/s/level-0007-9"));
        assert_eq!(again.seed, spec.level.seed + 1);
        assert_eq!(
            run.profile.duration,
            Some(timing.warmup_max + timing.measure_cap)
        );
        assert_eq!(run.profile.ramp_up, Some(timing.warmup_min));
        assert_eq!(run.outputs.bundle_dir, Some(PathBuf::from("/s/level-0007")));
        assert_eq!(run.workload, spec.level.workload);
    }

    /// A level's throughput is counted in what its users do: requests,
    /// pages loaded as a browser does, or steps of both.
    #[test]
    fn the_throughputs_unit_is_what_a_user_does() {
        assert_eq!(
            url_spec().settings(PathBuf::new()).unwrap().rate_unit,
            "req/s"
        );
        let dir = std::env::temp_dir().join(format!("rate-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let steps = "steps:\n  - label: a\n    path: /a\n  - label: b\n    path: /b\n";
        for (defaults, post, unit) in [
            ("page_loads: true", "", "pages/s"),
            ("page_loads: false", "", "req/s"),
            ("page_loads: true", "    page_load: false\n", "steps/s"),
        ] {
            let file = dir.join("s.yaml");
            std::fs::write(
                &file,
                format!("defaults:\n  base_url: http://127.0.0.1:9\n  {defaults}\n{steps}{post}"),
            )
            .unwrap();
            let mut spec = url_spec();
            spec.level.workload = WorkloadSource::Scenario(headroom_load::spec::ScenarioSource {
                file: file.clone(),
                target: Some("http://127.0.0.1:9".into()),
                jmeter_properties: Default::default(),
                strict: false,
            });
            let settings = spec.settings(PathBuf::new()).unwrap();
            assert_eq!(settings.rate_unit, unit, "{defaults} {post}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A spec written by hand says which field is wrong and why.
    #[test]
    fn a_wrong_spec_names_its_field() {
        let wrong = |edit: &dyn Fn(&mut CapacitySpec)| {
            let mut spec = url_spec();
            edit(&mut spec);
            spec.check().unwrap_err()
        };
        assert!(wrong(&|s| s.level.profile.users = Some(3)).starts_with("level.profile is given"));
        assert!(wrong(&|s| s.level.outputs.jtl = true).starts_with("level.outputs.jtl is true"));
        assert_eq!(
            wrong(&|s| s.ladder.step = 0),
            "ladder.step is 0: it must be at least 1"
        );
        assert_eq!(
            wrong(&|s| s.ladder.start = 40),
            "ladder.start (40) is above ladder.max (30)"
        );
        assert_eq!(
            wrong(&|s| s.goal.apdex = 1.5),
            "goal.apdex (1.5) must be between 0 and 1"
        );
        assert!(wrong(&|s| {
            s.level.workload = WorkloadSource::Scenario(ScenarioSource {
                file: "journey.yaml".into(),
                target: None,
                jmeter_properties: Default::default(),
                strict: false,
            })
        })
        .starts_with("level.workload has no target"));
        let bad = serde_json::to_string(&url_spec())
            .unwrap()
            .replace("\"1m 30s\"", "\"soon\"");
        let e = serde_json::from_str::<CapacitySpec>(&bad).unwrap_err();
        assert!(e.to_string().contains("'soon' is not a duration"), "{e}");
    }
}
