//! `headroom capacity`: the flags turned into the search's settings
//! ([`settings`]) and each level's run ([`prepare_level`]), the terminal
//! (the live line, a line per level, the answer), `--fail-if`, `--junit`
//! and the exit code. The search itself, from the ladder to the answer, is
//! the `headroom-capacity` crate's.

use crate::args::CapacityArgs;
use crate::execute::{Failure, Prepared, EXIT_CRITERIA_FAILED, EXIT_INTERRUPTED, EXIT_USAGE};
use crate::signals::interrupt_on_signal;
use headroom_analysis::capacity::{ApdexGoal, Bottleneck};
use headroom_analysis::Metric;
use headroom_bundle::capacity::{CapacityResult, Level};
use headroom_bundle::scenario_record::ScenarioRecord;
use headroom_capacity::answer::{judge, outcomes};
use headroom_capacity::ladder::Ladder;
use headroom_capacity::search::{CapacityError, LevelAt, LevelRunner, SearchPlan, Settings};
use headroom_capacity::think::PlannedThink;
use headroom_capacity::timing::{LevelTimes, Timing};
use headroom_load::engine::{EnginePlan, Workload};
use headroom_load::live_metrics::LiveMetrics;
use headroom_load::run::{default_bundle_dir, Progress, RunSetup};
use headroom_report::capacity::{level_line, render_capacity, search_heading};
use headroom_report::junit::junit_capacity;
use headroom_report::live_line;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

pub fn run(args: CapacityArgs) -> ExitCode {
    if let Err(e) = check_flags(&args) {
        eprintln!("headroom: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    let runtime = match crate::execute::current_thread_runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let common = args.load.common.clone();
    match runtime.block_on(search(args)) {
        Ok(searched) => searched.code,
        Err(Failure::Usage(e)) => {
            eprintln!("headroom: {}", crate::execute::describe(&e));
            ExitCode::from(EXIT_USAGE)
        }
        Err(Failure::CannotRun(e)) => crate::execute::cannot_run(&common, &e),
    }
}

/// The flags a search cannot take, and the reason (said as given).
fn check_flags(args: &CapacityArgs) -> Result<(), String> {
    let load = &args.load;
    if load.users.is_some()
        || load.duration.is_some()
        || load.requests.is_some()
        || load.rate.is_some()
        || load.ramp_up.is_some()
        || load.max_vus != crate::args::DEFAULT_MAX_VUS
    {
        return Err(
            "capacity sets each level's users, duration and ramp-up itself: use --start, --step, --max, --step-duration and --warmup instead of -c, -d, -n, --rate, --max-vus or --ramp-up"
                .into(),
        );
    }
    let ignored: Vec<&str> = [
        (load.method != "GET", "-X"),
        (!load.headers.is_empty(), "-H"),
        (load.body.is_some(), "--body"),
        (load.body_file.is_some(), "--body-file"),
        (load.label.is_some(), "--label"),
        (load.no_keepalive, "--no-keepalive"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect();
    if args.scenario.is_some() && !ignored.is_empty() {
        return Err(format!(
            "{} shape the URL's one request, which --scenario replaces: the journey's steps give their own method, headers, body and label (and keep_alive: false), so set them in the scenario, or leave --scenario out",
            ignored.join(", ")
        ));
    }
    if load.shard.shard.is_some() || load.shard.start_at.is_some() || load.shard.start_in.is_some()
    {
        return Err(
            "capacity cannot be sharded (--shard, --start-at, --start-in): each level's answer depends on the one before; shard a run at the users you want (headroom run or load --shard) and merge it"
                .into(),
        );
    }
    if !load.common.fault.is_empty() {
        return Err(
            "capacity runs no faults (--fault): a fault belongs to one run; run `headroom load --fault` at the users you want to disturb, or an experiment with faults:"
                .into(),
        );
    }
    if load.common.jtl {
        return Err(
            "capacity keeps no raw samples (--jtl): each level's bundle has its intervals and histograms; run `headroom load --jtl` at the users you want samples of"
                .into(),
        );
    }
    if let Err(e) =
        crate::execute::check_agent_token(&load.common.monitor, load.common.agent_token.as_deref())
    {
        return Err(e.to_string());
    }
    if let Err(e) = crate::execute::check_junit_path(&load.common) {
        return Err(e.to_string());
    }
    if let Some(bad) = load.common.fail_if.iter().find(|c| {
        c.label.is_some()
            || !matches!(
                c.metric,
                Metric::Users | Metric::Apdex | Metric::Rps | Metric::P95
            )
    }) {
        return Err(format!(
            "--fail-if '{}': capacity judges its answer: use users, rps, apdex or p95 (the figures at the capacity), without a [label]",
            bad.expression
        ));
    }
    if args.start > args.max {
        return Err(format!(
            "--start ({}) is above --max ({})",
            args.start, args.max
        ));
    }
    Ok(())
}

/// The level's run: the search's run spec (URL or scenario) with this
/// level's users, duration, ramp-up and bundle.
async fn prepare_level(
    args: &CapacityArgs,
    timing: Timing,
    users: u32,
    dir: &Path,
) -> Result<Prepared, Failure> {
    let spec = crate::settings::level_spec(&args.load, args.scenario.as_deref())?
        .with_users(users)
        .with_duration(timing.warmup_max.saturating_add(timing.measure_cap))
        .with_ramp_up(timing.warmup_min)
        .with_bundle_dir(dir.to_path_buf());
    let prepared = headroom_load::assemble::assemble(&spec)
        .await
        .map_err(Failure::assembly)?;
    Ok(match &args.scenario {
        None => prepared,
        Some(_) => without_before(prepared),
    })
}

/// A level measures its own users after its own warm-up: a scenario's
/// `before:` phase (a JMeter plan's warm-up group) would shift that window,
/// so it is left out, and the user told once.
fn without_before(mut prepared: Prepared) -> Prepared {
    static SAID: std::sync::Once = std::sync::Once::new();
    if let Workload::Journey(journey) = &mut prepared.plan.workload {
        if let Some(journey) = Arc::get_mut(journey) {
            if let Some(phase) = journey.scenario.before.take() {
                journey.before = None;
                if let Some(ScenarioRecord::Scenario(file)) = &mut prepared.setup.manifest.scenario
                {
                    file.before = None;
                }
                SAID.call_once(|| {
                    eprintln!(
                        "headroom: the scenario's before: users ({}) are not run by capacity: each level has its own warm-up (--warmup)",
                        phase.name.as_deref().unwrap_or("before:")
                    )
                });
            }
        }
    }
    prepared
}

/// The mean think time per request (for Little's law) and how to say it:
/// `--think` when given, else the scenario's own (per step, or its default).
fn think(args: &CapacityArgs) -> Result<PlannedThink, Failure> {
    let Some(file) = &args.scenario else {
        return Ok(PlannedThink::of_flag(args.load.think));
    };
    let scenario =
        crate::jmx_input::scenario(file, Some(&args.load.url), &Default::default(), false)
            .map_err(|e| Failure::Usage(anyhow::anyhow!(e)))?;
    Ok(PlannedThink::of_scenario(&scenario, args.load.think))
}

/// The search's settings from its flags; its levels and capacity.json go
/// into `base`.
fn settings(args: &CapacityArgs, base: PathBuf) -> Result<Settings, Failure> {
    let common = &args.load.common;
    let think = think(args)?;
    Ok(Settings {
        url: args.load.url.to_string(),
        scenario: args.scenario.as_ref().map(|f| f.display().to_string()),
        target: ApdexGoal {
            apdex: args.apdex_target,
            max_error: args.max_error,
            p95_max: args.p95_max,
        },
        ladder: Ladder {
            start: args.start,
            step: args.step,
            max: args.max,
            resolution: args.resolution.unwrap_or((args.step / 5).max(1)),
        },
        aimed: args.ladder == "aimed",
        confirm: args.confirm,
        times: LevelTimes {
            warmup: args.warmup,
            warmup_min: args.warmup_min,
            step_duration: args.step_duration,
            min_step_duration: args.min_step_duration,
            full_levels: args.full_levels,
            min_samples: args.min_samples,
        },
        think,
        apdex: crate::execute::apdex(common)?,
        throughput_capped: args.load.throughput.is_some(),
        monitored: !common.monitor.is_empty(),
        processes: common.process.clone(),
        base,
    })
}

/// The search's directory: `--out`, else a new one under runs/. An
/// existing directory is taken only when it holds nothing but logs (an
/// experiment's run directory, with its hooks' output).
fn search_dir(args: &CapacityArgs) -> Result<PathBuf, Failure> {
    let base = args.load.common.out.clone().unwrap_or_else(|| {
        default_bundle_dir(
            Path::new("runs"),
            &format!("capacity-{}", args.load.url.host),
        )
    });
    let only_logs = std::fs::read_dir(&base).is_ok_and(|entries| {
        entries
            .flatten()
            .all(|e| e.path().extension().is_some_and(|x| x == "log") && e.path().is_file())
    });
    if base.exists() && !only_logs {
        return Err(Failure::Usage(anyhow::anyhow!(
            "{} already exists: choose another --out, or remove it",
            base.display()
        )));
    }
    Ok(base)
}

/// Each level of the search run from the flags, on the terminal.
struct FlagLevels<'a> {
    args: &'a CapacityArgs,
    /// `--metrics-listen`: every level publishes there in turn.
    metrics: Option<Arc<LiveMetrics>>,
    live: bool,
    quiet: bool,
}

impl LevelRunner for FlagLevels<'_> {
    type Error = Failure;

    async fn prepare(
        &self,
        users: u32,
        timing: Timing,
        dir: &Path,
    ) -> Result<(EnginePlan, RunSetup), Failure> {
        let mut prepared = prepare_level(self.args, timing, users, dir).await?;
        prepared.setup.metrics = self.metrics.clone();
        Ok((prepared.plan, prepared.setup))
    }

    fn second(&self, at: LevelAt, p: &Progress) {
        if self.live {
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r\x1b[2Klevel {} ({} users, search ETA ~{:.0} s): {}",
                at.index,
                at.users,
                at.eta.as_secs_f64(),
                live_line(p)
            );
            let _ = err.flush();
        }
    }

    fn ran(&self) {
        if self.live {
            eprint!("\r\x1b[2K");
        }
    }

    fn measured(&self, level: &Level) {
        if !self.quiet {
            eprintln!("{}", level_line(level));
        }
    }

    fn host_bench(&self, bottleneck: &Bottleneck) -> Vec<String> {
        headroom_bench::latest::of_bottleneck(Path::new("runs"), bottleneck)
    }
}

impl From<CapacityError> for Failure {
    fn from(e: CapacityError) -> Failure {
        match e {
            CapacityError::Run(e) => Failure::CannotRun(e.into()),
            CapacityError::Level(e) => Failure::CannotRun(anyhow::anyhow!("{e}")),
        }
    }
}

/// Writes capacity.json, prints the answer, judges `--fail-if`, writes
/// `--junit`; returns the exit code.
fn conclude(
    common: &crate::args::CommonArgs,
    result: &mut CapacityResult,
    base: &Path,
    started: Instant,
) -> Result<ExitCode, Failure> {
    let was_interrupted = result.status == "interrupted";
    let verdicts = judge(&common.fail_if, result);
    result.criteria = outcomes(&verdicts);
    let result = &*result;
    headroom_bundle::capacity::write(base, result)
        .map_err(|e| Failure::CannotRun(anyhow::anyhow!("{e}")))?;
    if common.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&result).unwrap_or_default()
        );
    } else if !common.quiet {
        print!("{}", render_capacity(result));
        println!(
            "  Search: {} in {:.0} s",
            headroom_units::quantity::count(result.levels.len(), "level", "levels"),
            started.elapsed().as_secs_f64()
        );
    }
    for v in &verdicts {
        if common.quiet || common.json {
            if v.failed {
                eprintln!("headroom: --fail-if {}", v.message);
            }
        } else {
            println!("  --fail-if {}", v.message);
        }
    }
    if let Some(path) = &common.junit {
        let xml = junit_capacity(
            &result.setup.url,
            &result.verdict,
            !was_interrupted,
            started.elapsed().as_secs_f64(),
            &verdicts,
        );
        std::fs::write(path, xml).map_err(|e| {
            Failure::CannotRun(anyhow::anyhow!(
                "cannot write the JUnit file {}: {e}. {} holds the search",
                path.display(),
                base.display()
            ))
        })?;
    }
    Ok(if was_interrupted {
        eprintln!(
            "headroom: interrupted; the levels measured so far are in {}",
            base.display()
        );
        ExitCode::from(EXIT_INTERRUPTED)
    } else if verdicts.iter().any(|v| v.failed) {
        ExitCode::from(EXIT_CRITERIA_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}

/// A finished (or interrupted) search.
pub(crate) struct Searched {
    pub code: ExitCode,
    pub result: CapacityResult,
}

/// Runs the search; prints progress and the summary unless quiet.
pub(crate) async fn search(args: CapacityArgs) -> Result<Searched, Failure> {
    let common = &args.load.common;
    let quiet = common.quiet || common.json;
    let live = !quiet && std::io::stderr().is_terminal();
    let base = search_dir(&args)?;
    let plan = SearchPlan::new(settings(&args, base.clone())?);
    if !quiet {
        eprintln!(
            "{}",
            search_heading(&plan.setup, &plan.settings.target, args.start, args.max)
        );
    }
    if let Some(note) = plan.lengthened.as_ref().filter(|_| !quiet) {
        eprintln!("headroom capacity: {note}");
    }
    let metrics = crate::execute::live_metrics(common)?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let interrupted = interrupt_on_signal();
    tokio::spawn(async move {
        let _ = interrupted.await;
        let _ = stop_tx.send(true);
    });
    let started = Instant::now();
    let levels = FlagLevels {
        args: &args,
        metrics,
        live,
        quiet,
    };
    let mut result = plan.run(&levels, &stop_rx).await?;
    let code = conclude(common, &mut result, &base, started)?;
    crate::execute::linger(common).await;
    Ok(Searched { code, result })
}
