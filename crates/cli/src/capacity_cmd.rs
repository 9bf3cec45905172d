//! `headroom capacity`: runs level after level (each an ordinary run with
//! its own bundle) as the search decides, measures each after its warm-up,
//! and names the capacity and what limits it.

use crate::args::{CapacityArgs, LoadArgs, RunArgs};
use crate::execute::{Failure, Prepared, EXIT_CRITERIA_FAILED, EXIT_INTERRUPTED, EXIT_USAGE};
use crate::signals::interrupt_on_signal;
use headroom_analysis::capacity::Target;
use headroom_analysis::capacity::{Ladder, Search};
use headroom_analysis::{Criterion, Metric, Verdict};
use headroom_bundle::capacity::{CapacityResult, CapacitySetup, CriterionOutcome, Level};
use headroom_bundle::manifest::ThinkRecord;
use headroom_bundle::summary::RunStatus;
use headroom_bundle::warnings::RunWarning;
use headroom_load::engine::Workload;
use headroom_load::live_metrics::LiveMetrics;
use headroom_load::run::{default_bundle_dir, run as run_plan, Progress};
use headroom_report::capacity::render_capacity;
use headroom_report::junit::junit_capacity;
use headroom_report::live_line;
use std::cell::RefCell;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

pub fn run(args: CapacityArgs) -> ExitCode {
    let load = &args.load;
    if load.users.is_some()
        || load.duration.is_some()
        || load.requests.is_some()
        || load.rate.is_some()
        || load.ramp_up.is_some()
        || load.max_vus != crate::args::DEFAULT_MAX_VUS
    {
        eprintln!(
            "headroom: capacity sets each level's users, duration and ramp-up itself: use --start, --step, --max, --step-duration and --warmup instead of -c, -d, -n, --rate, --max-vus or --ramp-up"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    if load.shard.shard.is_some() || load.shard.start_at.is_some() || load.shard.start_in.is_some()
    {
        eprintln!(
            "headroom: capacity cannot be sharded (--shard, --start-at, --start-in): each level's answer depends on the one before; shard a run at the users you want (headroom run or load --shard) and merge it"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    if !load.common.fault.is_empty() {
        eprintln!(
            "headroom: capacity runs no faults (--fault): a fault belongs to one run; run `headroom load --fault` at the users you want to disturb, or an experiment with faults:"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    if load.common.jtl {
        eprintln!(
            "headroom: capacity keeps no raw samples (--jtl): each level's bundle has its intervals and histograms; run `headroom load --jtl` at the users you want samples of"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    if let Err(e) = crate::execute::check_junit_path(&load.common) {
        eprintln!("headroom: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    if let Some(bad) = load.common.fail_if.iter().find(|c| {
        c.label.is_some()
            || !matches!(
                c.metric,
                Metric::Users | Metric::Apdex | Metric::Rps | Metric::P95
            )
    }) {
        eprintln!(
            "headroom: --fail-if '{}': capacity judges its answer: use users, rps, apdex or p95 (the figures at the capacity), without a [label]",
            bad.expression
        );
        return ExitCode::from(EXIT_USAGE);
    }
    if args.start > args.max {
        eprintln!(
            "headroom: --start ({}) is above --max ({})",
            args.start, args.max
        );
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

/// The level's run: the load (or scenario) arguments with this level's
/// users, duration, ramp-up and bundle.
async fn prepare_level(args: &CapacityArgs, users: u32, dir: &Path) -> Result<Prepared, Failure> {
    let mut load: LoadArgs = args.load.clone();
    load.users = Some(users);
    load.duration = Some(args.warmup + args.step_duration);
    load.ramp_up = Some(args.warmup);
    load.common.out = Some(dir.to_path_buf());
    load.common.quiet = true;
    load.common.json = false;
    load.common.junit = None;
    load.common.fail_if.clear();
    match &args.scenario {
        None => crate::load_cmd::prepare(load).await,
        Some(file) => crate::run_cmd::prepare(RunArgs {
            file: file.clone(),
            jmeter_property: Vec::new(),
            strict: false,
            target: Some(load.url.clone()),
            users: load.users,
            duration: load.duration,
            iterations: None,
            rate: None,
            max_vus: None,
            ramp_up: load.ramp_up,
            think: load.think,
            throughput: load.throughput,
            shard: crate::args::ShardArgs::default(),
            common: load.common,
        })
        .await
        .map(without_before),
    }
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
                prepared.setup.manifest.scenario["before"] = serde_json::Value::Null;
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
fn think(args: &CapacityArgs) -> Result<(Duration, String), Failure> {
    if let Some(t) = args.load.think {
        // The engine's think time serializes to the record's shape.
        let record: ThinkRecord = serde_json::to_value(t)
            .and_then(serde_json::from_value)
            .unwrap_or_default();
        return Ok((t.mean(), record.describe()));
    }
    let Some(file) = &args.scenario else {
        return Ok((Duration::ZERO, "none".into()));
    };
    let scenario =
        crate::jmx_input::scenario(file, Some(&args.load.url), &Default::default(), false)
            .map_err(|e| Failure::Usage(anyhow::anyhow!(e)))?;
    let mean = scenario.think_per_request(scenario.think);
    Ok((
        mean,
        format!(
            "{:.3} s mean per request, from the scenario's steps",
            mean.as_secs_f64()
        ),
    ))
}

/// The latest `headroom bench` of the bottleneck's host under runs/, its
/// figures for the saturated resource.
fn host_bench(result: &CapacityResult) -> Vec<String> {
    let Some(bottleneck) = &result.bottleneck else {
        return Vec::new();
    };
    let host = if bottleneck.host == "local" {
        headroom_monitor::Fingerprint::local(env!("CARGO_PKG_VERSION")).hostname
    } else {
        bottleneck.host.clone()
    };
    let resource = match bottleneck.resource.as_str() {
        "throttling" | "temperature" => "cpu",
        other => other,
    };
    let Some((path, bench)) = headroom_bench::latest::latest(Path::new("runs"), &host) else {
        return Vec::new();
    };
    let lines = headroom_bench::latest::headlines(&bench, Some(resource));
    if lines.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "the latest bench of {host} ({}, {})",
        path.display(),
        bench.started
    )];
    out.extend(lines);
    out
}

/// Writes capacity.json, prints the answer, judges `--fail-if`, writes
/// `--junit`; returns the exit code.
fn conclude(
    common: &crate::args::CommonArgs,
    result: &mut CapacityResult,
    base: &Path,
    started: Instant,
    was_interrupted: bool,
) -> Result<ExitCode, Failure> {
    let verdicts = judge(&common.fail_if, result);
    result.criteria = verdicts
        .iter()
        .map(|v| CriterionOutcome {
            expression: v.criterion.expression.clone(),
            measured: v.measured,
            failed: v.failed,
            message: v.message.clone(),
        })
        .collect();
    let result = &*result;
    let json = serde_json::to_string_pretty(&result).unwrap_or_default();
    headroom_bundle::capacity::write(base, result)
        .map_err(|e| Failure::CannotRun(anyhow::anyhow!("{e}")))?;
    if common.json {
        println!("{json}");
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

/// What every level of a search shares.
struct LevelRun<'a> {
    args: &'a CapacityArgs,
    base: &'a Path,
    target: &'a Target,
    stop: &'a watch::Receiver<bool>,
    live: bool,
    quiet: bool,
    /// `--metrics-listen`: every level publishes there in turn.
    metrics: Option<Arc<LiveMetrics>>,
}

impl LevelRun<'_> {
    /// Runs one level as an ordinary run with its own bundle and measures
    /// it after its warm-up; `None` when the user interrupted it.
    async fn measure(
        &self,
        users: u32,
        index: usize,
        remaining: u32,
    ) -> Result<Option<Level>, Failure> {
        let args = self.args;
        let dir = self.base.join(format!("level-{users:04}"));
        let dir = if dir.exists() {
            self.base.join(format!("level-{users:04}-{index}"))
        } else {
            dir
        };
        let mut prepared = prepare_level(args, users, &dir).await?;
        prepared.setup.metrics = self.metrics.clone();
        let per_level = (args.warmup + args.step_duration).as_secs_f64();
        let eta = f64::from(remaining) * per_level;
        let live = self.live;
        let on_progress = |p: &Progress| {
            if live {
                let mut err = std::io::stderr().lock();
                let _ = write!(
                    err,
                    "\r\x1b[2Klevel {index} ({users} users, search ETA ~{:.0} s): {}",
                    eta,
                    live_line(p)
                );
                let _ = err.flush();
            }
        };
        let mut stop = self.stop.clone();
        let outcome = run_plan(
            prepared.plan,
            prepared.setup,
            async move {
                let _ = stop.wait_for(|v| *v).await;
            },
            on_progress,
        )
        .await
        .map_err(|e| Failure::CannotRun(e.into()))?;
        if live {
            eprint!("\r\x1b[2K");
        }
        if outcome.status == RunStatus::Interrupted {
            // Its bundle still says which seconds were warm-up (an error
            // here only leaves the whole run in its summary).
            let _ = headroom_bundle::capacity::keep_measurement(
                &outcome.bundle,
                args.warmup..args.warmup + args.step_duration,
            );
            return Ok(None);
        }
        if let Some(error) = &outcome.bundle_error {
            return Err(Failure::CannotRun(anyhow::anyhow!("{error}")));
        }
        let generator_limited = outcome.warnings.iter().any(|w| {
            matches!(
                w,
                RunWarning::GeneratorSaturated { .. } | RunWarning::GeneratorStalled { .. }
            )
        });
        let level = Level::measure(
            users,
            &outcome.bundle,
            args.warmup..args.warmup + args.step_duration,
            self.target,
            generator_limited,
        )
        .map_err(|e| Failure::CannotRun(anyhow::anyhow!("{e}")))?;
        if !self.quiet {
            eprintln!("{}", level_line(&level));
        }
        Ok(Some(level))
    }
}

/// The line printed after each level.
fn level_line(level: &Level) -> String {
    format!(
        "  {:>5} users: Apdex {} {}, errors {:.2}%, p95 {}, {:.1} req/s{}{} → {}",
        level.users,
        level.apdex.map_or("-".into(), |a| format!("{a:.3}")),
        level.apdex_rating.as_deref().unwrap_or(""),
        level.error_rate * 100.0,
        level.p95_ms.map_or("-".into(), |p| format!("{p:.0} ms")),
        level.rps,
        level
            .resources
            .iter()
            .filter_map(|h| h.cpu_avg.map(|c| format!(", {} CPU {c:.0}%", h.host)))
            .collect::<String>(),
        if level.generator_limited {
            ", generator limited"
        } else {
            ""
        },
        if level.good { "met" } else { "broken" }
    )
}

/// `--fail-if` on the search's answer: the users, and the Apdex, request
/// rate and p95 at the capacity.
fn judge(criteria: &[Criterion], result: &CapacityResult) -> Vec<Verdict> {
    let answer = &result.capacity;
    criteria
        .iter()
        .map(|c| {
            let measured = match c.metric {
                Metric::Users => answer.users.map(f64::from),
                Metric::Apdex => answer.apdex,
                Metric::Rps => answer.rps,
                Metric::P95 => answer.p95_ms.map(|ms| ms / 1000.0),
                _ => None,
            };
            let mut verdict = c.evaluate_measured(measured, "capacity");
            if answer.at_least && c.metric == Metric::Users {
                // Only a lower bound: the target held up to --max.
                verdict.message.push_str(
                    " — at least: the target held up to --max, so the capacity may be higher; raise --max to tell",
                );
            }
            verdict
        })
        .collect()
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
    let base = common.out.clone().unwrap_or_else(|| {
        default_bundle_dir(
            Path::new("runs"),
            &format!("capacity-{}", args.load.url.host),
        )
    });
    // An existing directory is taken only when it holds nothing but logs
    // (an experiment's run directory, with its hooks' output).
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
    let target = Target {
        apdex: args.apdex_target,
        max_error: args.max_error,
        p95_max: args.p95_max,
    };
    let ladder = Ladder {
        start: args.start,
        step: args.step,
        max: args.max,
        resolution: args.resolution.unwrap_or((args.step / 5).max(1)),
    };
    let (think_time, think_text) = think(&args)?;
    let thresholds = crate::execute::apdex(common)?;
    let setup = CapacitySetup {
        url: args.load.url.to_string(),
        scenario: args.scenario.as_ref().map(|f| f.display().to_string()),
        started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        apdex_t_ms: thresholds.satisfied.as_secs_f64() * 1000.0,
        apdex_f_ms: thresholds.tolerated.as_secs_f64() * 1000.0,
        think: think_text,
        warmup_s: args.warmup.as_secs_f64(),
        measured_s: args.step_duration.as_secs_f64(),
    };
    let monitored = !common.monitor.is_empty();
    if !quiet {
        eprintln!(
            "headroom capacity: {} — target Apdex ≥ {:.2}, errors ≤ {:.1}%{}; levels from {} by {} up to {} users, each {} s warm-up + {} s measured",
            args.load.url,
            target.apdex,
            target.max_error * 100.0,
            target
                .p95_max
                .map_or(String::new(), |p| format!(", p95 ≤ {} ms", p.as_millis())),
            ladder.start,
            ladder.step,
            ladder.max,
            args.warmup.as_secs_f64(),
            args.step_duration.as_secs_f64()
        );
    }

    let metrics = crate::execute::live_metrics(&args.load.common)?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let interrupted = interrupt_on_signal();
    tokio::spawn(async move {
        let _ = interrupted.await;
        let _ = stop_tx.send(true);
    });

    let started = Instant::now();
    let mut search = Search::new(ladder).confirming(args.confirm);
    let levels: RefCell<Vec<Level>> = RefCell::new(Vec::new());
    let level_run = LevelRun {
        args: &args,
        base: &base,
        target: &target,
        stop: &stop_rx,
        live,
        quiet,
        metrics,
    };
    let completed = search
        .drive(|users, remaining| {
            let (levels, level_run) = (&levels, &level_run);
            async move {
                let index = levels.borrow().len() + 1;
                let Some(level) = level_run.measure(users, index, remaining).await? else {
                    return Ok(None);
                };
                let good = level.good;
                levels.borrow_mut().push(level);
                Ok(Some(good))
            }
        })
        .await?;
    let was_interrupted = !completed;
    let levels = levels.into_inner();
    let mut result = CapacityResult::new(
        target,
        levels,
        search.capacity(),
        search.reached_max(),
        think_time,
        monitored,
        base.clone(),
    );
    result.setup = setup;
    result.host_bench = host_bench(&result);
    if was_interrupted {
        result = result.interrupted();
    }
    let code = conclude(common, &mut result, &base, started, was_interrupted)?;
    crate::execute::linger(common).await;
    Ok(Searched { code, result })
}
