//! Flags → specs: the one place where `load`'s and `run`'s command lines
//! become a [`RunSpec`], and `capacity`'s a [`CapacitySpec`] (the role of
//! ripgrep's `hiargs.rs`). What a spec does not hold stays with the
//! command: `--quiet`, `--json`, `--junit`, `--fail-if`, `--metrics-*`
//! (terminal, CI and process matters).

use crate::args::{
    CapacityArgs, CommonArgs, LoadArgs, Monitor, ReplayArgs, RunArgs, ShardArgs, Tolerated,
};
use crate::execute::Failure;
use headroom_analysis::capacity::ApdexGoal;
use headroom_capacity::ladder::Ladder;
use headroom_capacity::spec::CapacitySpec;
use headroom_capacity::timing::LevelTimes;
use headroom_journey::shard::Shard;
use headroom_load::spec::{
    ApdexSpec, Barrier, BodySpec, FaultSpec, MonitorSpec, Monitored, OutputSpec, ProfileSpec,
    ReplayPace, ReplaySource, RunSpec, ScenarioSource, ShardChoice, StartSpec, ToleratedSpec,
    UrlRequest, WorkloadSource,
};
use std::path::Path;

fn usage(text: String) -> Failure {
    Failure::Usage(anyhow::anyhow!(text))
}

/// `headroom load URL ...`
pub fn load_spec(args: &LoadArgs) -> Result<RunSpec, Failure> {
    let url = given_url(args)?;
    let body = match (&args.body, &args.body_file) {
        (Some(text), _) => Some(BodySpec::Text(text.clone())),
        (None, Some(path)) => Some(BodySpec::File(path.clone())),
        (None, None) => None,
    };
    let mut spec = RunSpec::new(WorkloadSource::Url(UrlRequest {
        url,
        method: args.method.clone(),
        headers: args.headers.clone(),
        body,
        label: args.label.clone(),
        keep_alive: !args.no_keepalive,
        timeout: args.timeout,
    }));
    spec.profile = ProfileSpec {
        users: args.users,
        ramp_up: args.ramp_up,
        duration: args.duration,
        requests: args.requests,
        iterations: None,
        rate: args.rate,
        max_vus: args.rate.map(|_| args.max_vus),
        ..ProfileSpec::default()
    };
    spec.think = args.think;
    spec.throughput = args.throughput;
    common(&mut spec, &args.common);
    shard(&mut spec, &args.shard)?;
    Ok(spec)
}

/// `headroom replay LOG... --target URL ...`
pub fn replay_spec(args: &ReplayArgs) -> Result<RunSpec, Failure> {
    let target = args.target.as_ref().ok_or_else(|| {
        usage("give --target URL: the server to send the log's requests to".into())
    })?;
    if args.common.jtl {
        return Err(usage(
            "--jtl: a replay writes replay.csv instead, a row a request of the log (its label, logged and replayed status, when due and when sent)".into(),
        ));
    }
    let methods: Vec<String> = args
        .methods
        .iter()
        .map(|m| m.trim().to_ascii_uppercase())
        .filter(|m| !m.is_empty())
        .collect();
    if let Some(bad) = methods
        .iter()
        .find(|m| !m.bytes().all(|b| b.is_ascii_uppercase()))
    {
        return Err(usage(format!(
            "--methods: '{bad}' is not an HTTP method: write them as GET,HEAD,POST"
        )));
    }
    let pace = match (args.speed, args.rate) {
        (_, Some(rate)) => ReplayPace::PerSecond(rate.per_second),
        (Some(speed), None) => ReplayPace::Speed(speed),
        (None, None) => ReplayPace::Speed(1.0),
    };
    let mut spec = RunSpec::new(WorkloadSource::Replay(ReplaySource {
        files: args.files.clone(),
        format: args.format.clone(),
        target: target.url.clone(),
        pace,
        methods,
        headers: args.headers.clone(),
        timeout: args.timeout,
    }));
    spec.profile = ProfileSpec {
        max_vus: Some(args.max_vus),
        ..ProfileSpec::default()
    };
    common(&mut spec, &args.common);
    Ok(spec)
}

/// `headroom run FILE ...`
pub fn run_spec(args: &RunArgs) -> Result<RunSpec, Failure> {
    let jmeter_properties =
        headroom_journey::scenario::jmx::properties(&args.jmeter_property).map_err(usage)?;
    let file = args.file.clone().ok_or_else(|| {
        usage("give the scenario FILE to run (headroom scenario init writes an example)".into())
    })?;
    let mut spec = RunSpec::new(WorkloadSource::Scenario(ScenarioSource {
        file,
        target: args.target.as_ref().map(|t| t.given.clone()),
        jmeter_properties,
        strict: args.strict,
    }));
    spec.profile = ProfileSpec {
        users: args.users,
        ramp_up: args.ramp_up,
        duration: args.duration,
        requests: None,
        iterations: args.iterations,
        rate: args.rate,
        max_vus: args.max_vus,
        session: args.session,
        students: args.students,
        arrive_within: args.arrive_within,
        peak_times: args.peak_times,
    };
    spec.think = args.think;
    spec.throughput = args.throughput;
    common(&mut spec, &args.common);
    shard(&mut spec, &args.shard)?;
    Ok(spec)
}

/// The URL as given (`load` and `capacity` require it unless `capacity
/// --spec` is given).
fn given_url(args: &LoadArgs) -> Result<String, Failure> {
    args.url
        .as_ref()
        .map(|url| url.given.clone())
        .ok_or_else(|| usage("give the URL to load, e.g. http://127.0.0.1:8080/page".into()))
}

/// The most users a search tries unless told (`--max`); a modelled lesson
/// search has no such cap.
const DEFAULT_MAX: u32 = 500;

/// `headroom capacity ...`: the search its flags ask for. Each level runs
/// `load`'s flags on the URL, or the `--scenario` file on it; `--out` is
/// the search's directory.
pub fn capacity_spec(args: &CapacityArgs) -> Result<CapacitySpec, Failure> {
    let mut level = level_spec(&args.load, args.scenario.as_deref())?;
    // A lesson search is aimed by its model unless told otherwise.
    let ladder = args.ladder.as_deref().unwrap_or(match args.arrive_within {
        Some(_) => "model",
        None => "aimed",
    });
    let modelled = ladder == "model" && args.arrive_within.is_some();
    let dir = level.outputs.bundle_dir.take();
    Ok(CapacitySpec {
        level,
        goal: ApdexGoal {
            apdex: args.apdex_target,
            max_error: args.max_error,
            p95_max: args.p95_max,
        },
        ladder: Ladder {
            start: args.start,
            step: args.step,
            max: args.max.unwrap_or(if modelled {
                headroom_capacity::lesson_model::MOST_MODELLED
            } else {
                DEFAULT_MAX
            }),
            resolution: args.resolution.unwrap_or((args.step / 5).max(1)),
        },
        aimed: ladder == "aimed",
        modelled,
        confirm: args.confirm.unwrap_or(match args.arrive_within {
            Some(_) => headroom_capacity::lesson::REPETITIONS,
            None => 1,
        }),
        times: LevelTimes {
            warmup: args.warmup,
            warmup_min: args.warmup_min,
            step_duration: args.step_duration,
            min_step_duration: args.min_step_duration,
            full_levels: args.full_levels,
            min_samples: args.min_samples,
        },
        dir,
        // A lesson's users are students unless named otherwise.
        users_are: args
            .users_are
            .clone()
            .or_else(|| args.arrive_within.map(|_| "students".into())),
        arrive_within: args.arrive_within,
    })
}

/// A capacity search's run before its level's users, duration and bundle:
/// `load`'s flags, on the URL or on the `--scenario` file (whose profile
/// the level replaces; `-J`, `--strict` and sharding do not apply).
fn level_spec(load: &LoadArgs, scenario: Option<&Path>) -> Result<RunSpec, Failure> {
    let Some(file) = scenario else {
        return load_spec(load);
    };
    let mut spec = RunSpec::new(WorkloadSource::Scenario(ScenarioSource {
        file: file.to_path_buf(),
        target: Some(given_url(load)?),
        jmeter_properties: Default::default(),
        strict: false,
    }));
    spec.think = load.think;
    spec.throughput = load.throughput;
    common(&mut spec, &load.common);
    Ok(spec)
}

/// Apdex T and F as given.
pub fn apdex_spec(common: &CommonArgs) -> ApdexSpec {
    ApdexSpec {
        satisfied: common.apdex_t,
        tolerated: match common.apdex_f {
            Tolerated::Time(d) => ToleratedSpec::Time(d),
            Tolerated::TimesT(k) => ToleratedSpec::TimesT(k),
        },
    }
}

/// The flags every load-generating command shares.
fn common(spec: &mut RunSpec, common: &CommonArgs) {
    spec.threads = common.threads;
    spec.apdex = apdex_spec(common);
    spec.seed = common.seed;
    spec.insecure = common.insecure;
    spec.http = common.http;
    spec.monitors = MonitorSpec {
        sources: common
            .monitor
            .iter()
            .map(|m| match m {
                Monitor::Local => Monitored::Local,
                Monitor::Agent(authority) => Monitored::Agent(authority.clone()),
            })
            .collect(),
        agent_token: common.agent_token.clone(),
        processes: common.process.clone(),
        link_capacity_mbit: common.link_capacity,
        credentials: common.credentials.clone(),
    };
    spec.faults = common.fault.iter().map(FaultSpec::from).collect();
    spec.outputs = OutputSpec {
        bundle_dir: common.out.clone(),
        jtl: common.jtl,
        save_failures: common.save_failures,
        command_line: redacted_command_line(),
    };
}

/// `--shard`, `--shards`, `--start-at`, `--start-in` and `--barrier`.
fn shard(spec: &mut RunSpec, args: &ShardArgs) -> Result<(), Failure> {
    spec.shard = match args.shard.as_deref() {
        None => None,
        Some("auto") => Some(ShardChoice::Auto {
            shards: args.shards,
        }),
        Some(text) => Some(ShardChoice::Given(
            Shard::parse(text).map_err(|e| usage(format!("--shard {e}")))?,
        )),
    };
    spec.start = StartSpec {
        at: args.start_at,
        after_barrier: match (args.start_in, &args.barrier) {
            (Some(delay), Some(path)) => Some(Barrier {
                delay,
                path: path.clone(),
            }),
            _ => None,
        },
    };
    Ok(())
}

/// `run --spec FILE`: the run spec a file holds (JSON, as an experiment
/// writes in each run's `spec.json`); the error says what is wrong.
pub fn spec_file(path: &Path) -> Result<RunSpec, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read the run spec {}: {e}; give the spec.json of a run's directory",
            path.display()
        )
    })?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not a run spec: {e}; it holds JSON as a run's spec.json does, with workload and apdex",
            path.display()
        )
    })
}

/// `capacity --spec FILE`: the capacity spec a file holds (JSON, as an
/// experiment writes in each run's `spec.json`), checked; the error says
/// which file and what is wrong.
pub fn capacity_spec_file(path: &Path) -> Result<CapacitySpec, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read the capacity spec {}: {e}; give the spec.json of a capacity run's directory",
            path.display()
        )
    })?;
    let spec: CapacitySpec = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not a capacity spec: {e}; it holds JSON as a capacity run's spec.json does, with level, goal, ladder, aimed and times",
            path.display()
        )
    })?;
    spec.check()
        .map_err(|e| format!("the capacity spec {}: {e}", path.display()))?;
    Ok(spec)
}

/// The flags `execute` reads of what a spec holds (the monitored agents
/// and their token, for the start and its checks), set from `spec`.
pub fn spec_monitors(spec: &RunSpec, common: &mut CommonArgs) {
    common.monitor = spec
        .monitors
        .sources
        .iter()
        .map(|m| match m {
            Monitored::Local => Monitor::Local,
            Monitored::Agent(authority) => Monitor::Agent(authority.clone()),
        })
        .collect();
    common.agent_token = spec.monitors.agent_token.clone();
}

/// This program's command line as the manifest keeps it (see
/// [`redact_command_line`]).
pub fn redacted_command_line() -> Vec<String> {
    redact_command_line(
        std::env::args_os()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect(),
    )
}

/// A command line as the manifest keeps it: without the password of a
/// URL, the value of an Authorization or Cookie header, or a token.
pub fn redact_command_line(args: Vec<String>) -> Vec<String> {
    let mut secret_next = false;
    args.into_iter()
        .map(|arg| {
            let lower = arg.to_ascii_lowercase();
            let shown = if secret_next {
                "***".to_string()
            } else if let Some(flag) = ["--agent-token=", "--token="]
                .iter()
                .find(|flag| lower.starts_with(**flag))
            {
                format!("{flag}***")
            } else {
                headroom_http::target::redact_secrets(&arg)
            };
            secret_next = matches!(lower.as_str(), "--agent-token" | "--token");
            shown
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command};
    use clap::Parser;
    use std::time::Duration;

    fn spec(argv: &[&str]) -> Result<RunSpec, Failure> {
        let argv = std::iter::once("headroom").chain(argv.iter().copied());
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Load(args) => load_spec(&args),
            Command::Run(args) => run_spec(&args),
            _ => unreachable!(),
        }
    }

    /// The password of a URL is what the request authenticates with: the
    /// spec carries the URL as given (the clean-clone suite caught
    /// `load http://ann:s3cret@host/` sending `ann:***` after the move to
    /// specs), and the bundle still shows it hidden.
    #[test]
    fn credentials_in_a_url_reach_the_spec() {
        let spec = spec(&["load", "http://ann:s3cret@127.0.0.1:9/x"])
            .ok()
            .unwrap();
        let WorkloadSource::Url(request) = &spec.workload else {
            panic!("{spec:?}")
        };
        assert_eq!(request.url, "http://ann:s3cret@127.0.0.1:9/x");
        let spec = spec_of_run("http://ann:s3cret@127.0.0.1:9/");
        let WorkloadSource::Scenario(source) = &spec.workload else {
            panic!("{spec:?}")
        };
        assert_eq!(
            source.target.as_deref(),
            Some("http://ann:s3cret@127.0.0.1:9/")
        );
    }

    fn spec_of_run(target: &str) -> RunSpec {
        spec(&["run", "journey.yaml", "--target", target])
            .ok()
            .unwrap()
    }

    #[test]
    fn load_flags_become_a_url_spec() {
        let spec = spec(&[
            "load",
            "http://127.0.0.1:9/x",
            "-c",
            "20",
            "-d",
            "1m",
            "--ramp-up",
            "5s",
            "-X",
            "POST",
            "--body",
            "a=1",
            "--label",
            "home",
            "--apdex-f",
            "4T",
            "--seed",
            "9",
            "--monitor",
            "local",
            "--process",
            "nginx",
            "--fault",
            "30s=true",
            "--out",
            "b",
            "--shard",
            "1/4",
            "--start-at",
            "2026-12-01T10:00:00Z",
        ])
        .ok()
        .unwrap();
        let WorkloadSource::Url(request) = &spec.workload else {
            panic!("{spec:?}")
        };
        assert_eq!(
            (request.method.as_str(), request.label.as_deref()),
            ("POST", Some("home"))
        );
        assert_eq!(request.body, Some(BodySpec::Text("a=1".into())));
        assert_eq!(request.timeout, Duration::from_secs(30));
        assert_eq!(spec.profile.users, Some(20));
        assert_eq!(spec.profile.duration, Some(Duration::from_secs(60)));
        assert_eq!(spec.profile.ramp_up, Some(Duration::from_secs(5)));
        // --max-vus has a default, which only an open run uses.
        assert_eq!(spec.profile.max_vus, None);
        assert_eq!(spec.apdex.tolerated, ToleratedSpec::TimesT(4.0));
        assert_eq!(spec.seed, 9);
        assert_eq!(spec.monitors.sources, vec![Monitored::Local]);
        assert_eq!(spec.monitors.processes, vec!["nginx".to_string()]);
        assert_eq!(spec.faults[0].at, Duration::from_secs(30));
        assert_eq!(spec.outputs.bundle_dir, Some("b".into()));
        assert_eq!(
            spec.shard,
            Some(ShardChoice::Given(Shard::new(1, 4).unwrap()))
        );
        assert!(spec.start.at.is_some());
    }

    #[test]
    fn run_flags_become_a_scenario_spec() {
        let spec = spec(&[
            "run",
            "plan.jmx",
            "-Jhost=pi",
            "--iterations",
            "3",
            "--shard",
            "auto",
            "--shards",
            "8",
        ])
        .ok()
        .unwrap();
        let WorkloadSource::Scenario(source) = &spec.workload else {
            panic!("{spec:?}")
        };
        assert_eq!(
            source.jmeter_properties.get("host").map(String::as_str),
            Some("pi")
        );
        assert_eq!(spec.profile.iterations, Some(3));
        assert_eq!(spec.shard, Some(ShardChoice::Auto { shards: Some(8) }));
        let Err(Failure::Usage(e)) = super::tests::spec(&["run", "f.yaml", "--shard", "5/4"])
        else {
            panic!("--shard 5/4 was accepted")
        };
        assert!(e.to_string().starts_with("--shard "), "{e}");
    }

    /// `run --spec` says which file it could not use and why.
    #[test]
    fn a_bad_spec_file_is_named_with_what_is_wrong() {
        let dir = std::env::temp_dir().join(format!("headroom-spec-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.json");
        let e = spec_file(&missing).unwrap_err();
        assert!(
            e.starts_with(&format!("cannot read the run spec {}: ", missing.display())),
            "{e}"
        );
        let path = dir.join("spec.json");
        std::fs::write(&path, "{\"workload\": {\"source\": \"url\", \"url\": \"http://127.0.0.1/\"}, \"apdex\": {\"satisfied\": \"soon\", \"tolerated\": {\"times_t\": 4.0}}}").unwrap();
        let e = spec_file(&path).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "{} is not a run spec: 'soon' is not a duration",
                path.display()
            )),
            "{e}"
        );
        let spec = spec_of_run("http://127.0.0.1:9/");
        std::fs::write(&path, serde_json::to_string(&spec).unwrap()).unwrap();
        assert_eq!(spec_file(&path).ok(), Some(spec));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn capacity_spec_of(argv: &[&str]) -> CapacitySpec {
        let argv = ["headroom", "capacity"]
            .into_iter()
            .chain(argv.iter().copied());
        let Command::Capacity(args) = Cli::try_parse_from(argv).unwrap().command else {
            unreachable!()
        };
        capacity_spec(&args).ok().unwrap()
    }

    /// `capacity`'s flags become a search: the level's run without users
    /// or duration, `--out` the search's directory, the resolution a
    /// fifth of the step when not given.
    #[test]
    fn capacity_flags_become_a_capacity_spec() {
        let spec = capacity_spec_of(&[
            "http://127.0.0.1:9/x",
            "--step",
            "20",
            "--ladder",
            "plain",
            "--p95-max",
            "2s",
            "--think",
            "1s",
            "--out",
            "search",
        ]);
        assert_eq!(spec.level.profile, ProfileSpec::default());
        assert_eq!(spec.level.outputs.bundle_dir, None);
        assert_eq!(spec.dir, Some("search".into()));
        assert_eq!((spec.ladder.start, spec.ladder.step), (10, 20));
        assert_eq!((spec.ladder.max, spec.ladder.resolution), (500, 4));
        assert!(!spec.aimed);
        assert_eq!(spec.goal.p95_max, Some(std::time::Duration::from_secs(2)));
        assert_eq!(spec.times.step_duration, std::time::Duration::from_secs(60));
        let scenario = capacity_spec_of(&["--scenario", "j.yaml", "http://127.0.0.1:9/"]);
        let WorkloadSource::Scenario(source) = &scenario.level.workload else {
            panic!("{scenario:?}")
        };
        assert_eq!(source.target.as_deref(), Some("http://127.0.0.1:9/"));
    }

    /// `capacity --spec` says which file it could not use and why: not
    /// there, not a capacity spec, or a field out of range.
    #[test]
    fn a_bad_capacity_spec_file_is_named_with_what_is_wrong() {
        let dir =
            std::env::temp_dir().join(format!("headroom-capacity-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.json");
        let e = capacity_spec_file(&missing).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "cannot read the capacity spec {}: ",
                missing.display()
            )),
            "{e}"
        );
        let path = dir.join("spec.json");
        // A run's spec is not a search's.
        let run = spec_of_run("http://127.0.0.1:9/");
        std::fs::write(&path, serde_json::to_string(&run).unwrap()).unwrap();
        let e = capacity_spec_file(&path).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "{} is not a capacity spec: unknown field `workload`, expected one of `level`",
                path.display()
            )),
            "{e}"
        );
        let mut spec = capacity_spec_of(&["http://127.0.0.1:9/"]);
        spec.ladder.step = 0;
        std::fs::write(&path, serde_json::to_string(&spec).unwrap()).unwrap();
        assert_eq!(
            capacity_spec_file(&path).unwrap_err(),
            format!(
                "the capacity spec {}: ladder.step is 0: it must be at least 1",
                path.display()
            )
        );
        spec.ladder.step = 10;
        std::fs::write(&path, serde_json::to_string(&spec).unwrap()).unwrap();
        assert_eq!(capacity_spec_file(&path).ok(), Some(spec));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
