//! `headroom capacity`: runs level after level (each an ordinary run with
//! its own bundle) as the search decides, measures each after its warm-up,
//! and names the capacity and what limits it.

use crate::args::CapacityArgs;
use crate::execute::{Failure, Prepared, EXIT_CRITERIA_FAILED, EXIT_INTERRUPTED, EXIT_USAGE};
use crate::signals::interrupt_on_signal;
use headroom_analysis::capacity::{Aim, Ladder, LevelFigures, Search, Target};
use headroom_analysis::sequential::{self, Second};
use headroom_analysis::{Criterion, Metric, Verdict};
use headroom_bundle::capacity::{
    CapacityResult, CapacitySetup, CriterionOutcome, Level, SettledVerdict,
};
use headroom_bundle::manifest::ThinkRecord;
use headroom_bundle::summary::RunStatus;
use headroom_bundle::warnings::RunWarning;
use headroom_load::engine::Workload;
use headroom_load::live_metrics::LiveMetrics;
use headroom_load::run::{default_bundle_dir, run as run_plan, Progress};
use headroom_report::capacity::{render_capacity, seconds_span};
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
        eprintln!(
            "headroom: {} shape the URL's one request, which --scenario replaces: the journey's steps give their own method, headers, body and label (and keep_alive: false), so set them in the scenario, or leave --scenario out",
            ignored.join(", ")
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
    if let Err(e) =
        crate::execute::check_agent_token(&load.common.monitor, load.common.agent_token.as_deref())
    {
        eprintln!("headroom: {e}");
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

/// How long a level warms up and measures, sized to its users' cycle.
#[derive(Debug, Clone, Copy)]
struct Timing {
    /// The users start over this; the warm-up is at least this long.
    warmup_min: Duration,
    /// The warm-up may end (steady) from here: every user has started and
    /// thought once.
    steady_from: Duration,
    /// The warm-up ends here at the latest.
    warmup_max: Duration,
    /// The measurement lasts this long at most (when it has its samples) ...
    measure_max: Duration,
    /// ... and at least this long before its verdict may settle ...
    measure_min: Duration,
    /// ... or this long when a figure is near its bound (near the knee).
    measure_near: Duration,
    /// A level without its samples measures on up to this.
    measure_cap: Duration,
    /// The fewest requests a verdict rests on.
    min_samples: u64,
    /// Whether a settled level stops (else it runs on, and the settling is
    /// only recorded).
    early_stop: bool,
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
    fn of(args: &CapacityArgs, think: Duration, first: Duration) -> (Timing, Option<String>) {
        let full = args.full_levels;
        let given_min = match args.warmup_min {
            _ if full => args.warmup,
            Some(min) => min.min(args.warmup),
            None => (args.warmup / 4)
                .max(Duration::from_secs(1))
                .min(args.warmup),
        };
        let round = |d: Duration| Duration::from_secs(d.as_secs_f64().ceil() as u64);
        let warmup_min = given_min.max(round(think));
        let steady_from = warmup_min
            .saturating_add(round(think))
            .saturating_add(round(first));
        let warmup_max = args.warmup.max(steady_from);
        let measure_max = if think.is_zero() {
            args.step_duration
        } else {
            args.step_duration.max(round(think.saturating_mul(2)))
        };
        let measure_min = args
            .min_step_duration
            .unwrap_or(Duration::from_secs(5))
            .max(round(think))
            .min(measure_max);
        let mut raised = Vec::new();
        if warmup_max > args.warmup {
            raised.push(format!(
                "warm-up to {:.0} s (users start over {:.0} s)",
                warmup_max.as_secs_f64(),
                warmup_min.as_secs_f64()
            ));
        }
        if measure_max > args.step_duration {
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
            min_samples: args.min_samples,
            early_stop: !full,
        };
        (timing, lengthened)
    }
}

/// A level followed second by second: its warm-up ends when it is steady
/// (or at the longest warm-up), its measurement when the verdict settles
/// (with early stop) or at its full duration.
struct LevelWatch<'a> {
    timing: Timing,
    target: &'a Target,
    /// Every second so far (warm-up included).
    seconds: Vec<Second>,
    /// The think time (s) users took after each second's requests.
    think_s: Vec<f64>,
    /// The first measured second, once the warm-up ended.
    from: Option<u64>,
    settled: Option<SettledVerdict>,
    /// The measurement window's end (seconds since the run's start), once
    /// the level has what it needs.
    until: Option<u64>,
}

impl LevelWatch<'_> {
    /// Takes one second of the run; returns true when the level should end.
    fn second(&mut self, p: &Progress) -> bool {
        if self.until.is_some() {
            return true;
        }
        let interval = &p.interval;
        let count = interval.counts.count;
        let over_p95 = self.target.p95_max.map_or(0, |bound| {
            let micros = bound.as_micros().min(u128::from(u64::MAX)) as u64;
            count.saturating_sub(interval.response.count_between(0, micros))
        });
        let apdex = &interval.counts.apdex;
        // Seconds are kept at their index (the run's second).
        self.seconds
            .resize(self.seconds.len().max(p.index as usize), Second::default());
        self.seconds.truncate(p.index as usize);
        self.think_s.resize(p.index as usize, 0.0);
        self.think_s.push(interval.counts.think_micros as f64 / 1e6);
        self.seconds.push(Second {
            length_s: p.length.as_secs_f64(),
            requests: count,
            errors: interval.counts.errors,
            apdex_points: apdex.satisfied as f64 + apdex.tolerating as f64 / 2.0,
            over_p95,
            mean_s: if count > 0 {
                interval.response.mean() / 1e6
            } else {
                0.0
            },
        });
        // A partial second (the run's last) is not measured.
        if p.length < Duration::from_millis(999) {
            return false;
        }
        let ended = p.index + 1;
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
        let needed = if sequential::near(self.target, seconds) {
            self.timing.measure_near
        } else {
            self.timing.measure_min
        };
        let enough = seconds.iter().map(|s| s.requests).sum::<u64>() >= self.timing.min_samples;
        if self.settled.is_none() && measured >= needed && enough {
            if let Some(settled) = sequential::settle(self.target, seconds) {
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

    /// The requests measured, and the think time their users took after
    /// them (s).
    fn measured(&self) -> (u64, f64) {
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
        let think = self.think_s.iter().take(until).skip(from).sum();
        (requests, think)
    }

    /// The measured window: from the warm-up's end to where the level
    /// ended (or the planned end).
    fn window(&self) -> std::ops::Range<Duration> {
        let from = self
            .from
            .map_or(self.timing.warmup_max, Duration::from_secs);
        let until = self
            .until
            .map_or(from + self.timing.measure_max, Duration::from_secs);
        from..until
    }

    /// The Apdex's 99% interval over the measured seconds.
    fn apdex_interval(&self) -> Option<[f64; 2]> {
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
    fn ended(&self, stopped_early: bool) -> String {
        let warmup = match self.from {
            Some(from) if Duration::from_secs(from) < self.timing.warmup_max => {
                format!("steady after {from} s")
            }
            _ => format!("warm-up {:.0} s", self.timing.warmup_max.as_secs_f64()),
        };
        let measured = self.window().end.saturating_sub(self.window().start);
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
/// Also the think a user's first iteration adds (its `once:` steps').
fn think(args: &CapacityArgs) -> Result<(Duration, Duration, String), Failure> {
    let Some(file) = &args.scenario else {
        let Some(t) = args.load.think else {
            return Ok((Duration::ZERO, Duration::ZERO, "none".into()));
        };
        // The engine's think time serializes to the record's shape.
        let record: ThinkRecord = serde_json::to_value(t)
            .and_then(serde_json::from_value)
            .unwrap_or_default();
        return Ok((t.mean(), Duration::ZERO, record.describe()));
    };
    let scenario =
        crate::jmx_input::scenario(file, Some(&args.load.url), &Default::default(), false)
            .map_err(|e| Failure::Usage(anyhow::anyhow!(e)))?;
    // --think stands for the steps without their own think time.
    let default = args.load.think.unwrap_or(scenario.think);
    let mean = scenario.think_per_request(default);
    Ok((
        mean,
        scenario.first_iteration_think(default),
        format!(
            "{:.3} s planned per request of a steady iteration{}, from the scenario's steps{} (each level measures the think its users took)",
            mean.as_secs_f64(),
            if has_conditions(&scenario.flow) {
                " (its if: steps counted as taken)"
            } else {
                ""
            },
            if args.load.think.is_some() {
                " and --think for those without their own"
            } else {
                ""
            }
        ),
    ))
}

/// Whether a step (or block) runs only `if:` its condition holds.
fn has_conditions(nodes: &[headroom_load::scenario::Node]) -> bool {
    use headroom_load::scenario::Node;
    nodes.iter().any(|n| {
        n.flags().condition.is_some()
            || match n {
                Node::Request { .. } => false,
                Node::Loop { children, .. }
                | Node::Group { children, .. }
                | Node::Block { children, .. } => has_conditions(children),
            }
    })
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
    timing: Timing,
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
        let timing = self.timing;
        let mut prepared = prepare_level(args, timing, users, &dir).await?;
        prepared.setup.metrics = self.metrics.clone();
        let (end_tx, end_rx) = watch::channel(false);
        prepared.setup.end_early = Some(end_rx);
        let watch_level = RefCell::new(LevelWatch {
            timing,
            target: self.target,
            seconds: Vec::new(),
            think_s: Vec::new(),
            // Without a warm-up, the measurement starts with the run.
            from: timing.warmup_max.is_zero().then_some(0),
            settled: None,
            until: None,
        });
        let per_level = timing
            .warmup_max
            .saturating_add(timing.measure_max)
            .as_secs_f64();
        let eta = f64::from(remaining) * per_level;
        let live = self.live;
        let on_progress = |p: &Progress| {
            if watch_level.borrow_mut().second(p) {
                let _ = end_tx.send(true);
            }
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
        let watched = watch_level.into_inner();
        let window = watched.window();
        if outcome.status == RunStatus::Interrupted {
            // Its bundle still says which seconds were warm-up (an error
            // here only leaves the whole run in its summary).
            let _ = headroom_bundle::capacity::keep_measurement(&outcome.bundle, window);
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
        let mut level = Level::measure(
            users,
            &outcome.bundle,
            window.clone(),
            self.target,
            generator_limited,
        )
        .map_err(|e| Failure::CannotRun(anyhow::anyhow!("{e}")))?;
        // With early stop a level ends when its verdict settles.
        level.stopped_early = timing.early_stop && watched.settled.is_some();
        level.ended = watched.ended(level.stopped_early);
        let (requests, think) = watched.measured();
        level.min_samples = timing.min_samples;
        level.thin = requests < timing.min_samples;
        // Under a throughput cap users also wait for their slot, which is
        // not think: Little's law cannot be checked then.
        level.think_s =
            (requests > 0 && args.load.throughput.is_none()).then(|| think / requests as f64);
        level.apdex_interval = watched.apdex_interval();
        level.settled = watched.settled;
        if !self.quiet {
            eprintln!("{}", level_line(&level));
        }
        Ok(Some(level))
    }
}

/// The busiest monitored resource of a level, 0..1: the highest of a
/// host's CPU, its busiest core and its disk.
fn utilization(level: &Level) -> Option<f64> {
    level
        .resources
        .iter()
        .flat_map(|h| [h.cpu_avg, h.busiest_core.map(|c| c.1), h.disk_avg])
        .flatten()
        .reduce(f64::max)
        .map(|pct| pct / 100.0)
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
            .filter_map(|h| h
                .cpu_avg
                .map(|c| format!(", {} machine CPU {c:.0}%", h.host)))
            .collect::<String>()
            + &headroom_report::capacity::server_cpu(level)
                .map_or(String::new(), |cpu| format!(", server CPU {cpu}")),
        if level.generator_limited {
            ", generator limited"
        } else {
            ""
        },
        if level.good { "met" } else { "broken" },
    ) + &format!(" ({})", level.ended)
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
    let (think_time, first_think, think_text) = think(&args)?;
    let thresholds = crate::execute::apdex(common)?;
    let (timing, lengthened) = Timing::of(&args, think_time, first_think);
    let setup = CapacitySetup {
        url: args.load.url.to_string(),
        scenario: args.scenario.as_ref().map(|f| f.display().to_string()),
        started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        apdex_t_ms: thresholds.satisfied.as_secs_f64() * 1000.0,
        apdex_f_ms: thresholds.tolerated.as_secs_f64() * 1000.0,
        think: think_text,
        warmup_s: timing.warmup_max.as_secs_f64(),
        measured_s: timing.measure_max.as_secs_f64(),
        min_samples: timing.min_samples,
        lengthened: lengthened.clone(),
        processes: common.process.clone(),
        ladder: args.ladder.clone(),
        step: ladder.step,
        resolution: ladder.resolution,
        early_stop: timing.early_stop,
        min_measured_s: timing.measure_min.as_secs_f64(),
        near_min_measured_s: timing.measure_near.as_secs_f64(),
        warmup_min_s: timing.warmup_min.as_secs_f64(),
    };
    let monitored = !common.monitor.is_empty();
    if !quiet {
        eprintln!(
            "headroom capacity: {} — target Apdex ≥ {:.2}, errors ≤ {:.1}%{}; {} ladder from {} up to {} ({}); {}",
            args.load.url,
            target.apdex,
            target.max_error * 100.0,
            target
                .p95_max
                .map_or(String::new(), |p| format!(", p95 ≤ {} ms", p.as_millis())),
            args.ladder,
            ladder.start,
            headroom_units::quantity::count(ladder.max as usize, "user", "users"),
            if args.ladder == "aimed" {
                format!(
                    "steps of at least {}",
                    headroom_units::quantity::count(ladder.step as usize, "user", "users")
                )
            } else {
                format!(
                    "steps of {}",
                    headroom_units::quantity::count(ladder.step as usize, "user", "users")
                )
            },
            if timing.early_stop {
                format!(
                    "each level warms up {} (until steady) and measures {} (until its verdict settles{})",
                    seconds_span(timing.warmup_min.as_secs_f64(), timing.warmup_max.as_secs_f64()),
                    seconds_span(timing.measure_min.as_secs_f64(), timing.measure_max.as_secs_f64()),
                    if timing.measure_near > timing.measure_min {
                        format!(
                            "; near the target at least {} s",
                            headroom_report::capacity::seconds(timing.measure_near.as_secs_f64())
                        )
                    } else {
                        String::new()
                    }
                )
            } else {
                format!(
                    "each level {:.0} s warm-up + {:.0} s measured",
                    timing.warmup_max.as_secs_f64(),
                    timing.measure_max.as_secs_f64()
                )
            }
        );
    }

    if let Some(note) = lengthened.filter(|_| !quiet) {
        eprintln!("headroom capacity: {note}");
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
    if args.ladder == "aimed" {
        search = search.aimed(Aim {
            think: think_time,
            apdex_t: thresholds.satisfied,
            target_apdex: target.apdex,
        });
    }
    let levels: RefCell<Vec<Level>> = RefCell::new(Vec::new());
    let level_run = LevelRun {
        args: &args,
        base: &base,
        target: &target,
        stop: &stop_rx,
        live,
        quiet,
        metrics,
        timing,
    };
    let completed = search
        .drive(|users, remaining| {
            let (levels, level_run) = (&levels, &level_run);
            async move {
                let index = levels.borrow().len() + 1;
                let Some(level) = level_run.measure(users, index, remaining).await? else {
                    return Ok(None);
                };
                let figures = LevelFigures {
                    rps: level.rps,
                    mean_response: Duration::from_secs_f64(level.mean_ms.unwrap_or(0.0) / 1000.0),
                    apdex: level.apdex,
                    utilization: utilization(&level),
                    think: level.think_s.map(headroom_units::quantity::saturating_secs),
                };
                let good = level.good;
                levels.borrow_mut().push(level);
                Ok(Some((good, figures)))
            }
        })
        .await?;
    let was_interrupted = !completed;
    let mut levels = levels.into_inner();
    for (level, why) in levels.iter_mut().zip(search.reasons()) {
        level.why = why.clone();
    }
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
    result.inversions = search
        .inversions()
        .into_iter()
        .map(|(a, b)| [a, b])
        .collect();
    result.host_bench = host_bench(&result);
    if was_interrupted {
        result = result.interrupted();
    }
    let code = conclude(common, &mut result, &base, started, was_interrupted)?;
    crate::execute::linger(common).await;
    Ok(Searched { code, result })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command};
    use clap::Parser;

    fn capacity_args(flags: &[&str]) -> CapacityArgs {
        let argv = ["headroom", "capacity", "http://127.0.0.1:1/"]
            .into_iter()
            .chain(flags.iter().copied());
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Capacity(args) => *args,
            other => panic!("{other:?}"),
        }
    }

    /// A scenario whose if: step (20 s think) is never taken planned
    /// 7.333 s per request while its users took 1.000 s: the text said
    /// "mean per request of a steady iteration" as if measured.
    #[test]
    fn a_planned_think_with_if_steps_says_they_count_as_taken() {
        let dir = std::env::temp_dir().join(format!("headroom-cap-think-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("if.yaml");
        std::fs::write(
            &file,
            "steps:\n  - label: a\n    path: /a\n    think: 2s\n  - label: b\n    path: /b\n    if: {var: flag, equals: \"yes\"}\n    think: 20s\n  - label: c\n    path: /c\nvariables:\n  flag: \"\"\n",
        )
        .unwrap();
        let path = file.to_str().unwrap();
        let args = capacity_args(&["--scenario", path, "--think", "0s"]);
        let Ok((mean, first, text)) = think(&args) else {
            panic!("the scenario did not read")
        };
        assert_eq!((mean.as_millis(), first), (7333, Duration::ZERO));
        assert!(
            text.starts_with("7.333 s planned per request of a steady iteration (its if: steps counted as taken)"),
            "{text}"
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
        let args = capacity_args(&["--warmup", "15s", "--step-duration", "10s"]);
        let half = Duration::from_millis(500);
        let (steady, _) = Timing::of(&args, half, Duration::ZERO);
        assert_eq!(steady.steady_from, Duration::from_millis(3750 + 1000));
        let (timing, note) = Timing::of(&args, half, Duration::from_secs(30));
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
}
