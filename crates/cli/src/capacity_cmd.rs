//! `headroom capacity`: the search's spec (made from the flags by
//! [`crate::settings::capacity_spec`], or read from a `--spec` file), each
//! level's run ([`prepare_level`], the capacity crate's), the terminal (the live line, a line per
//! level, the answer), `--fail-if`, `--junit` and the exit code. Both ways
//! run the spec ([`search_spec`]). The search itself, from the ladder to
//! the answer, is the `headroom-capacity` crate's.

use crate::args::{CapacityArgs, CommonArgs};
use crate::execute::{Failure, EXIT_CRITERIA_FAILED, EXIT_INTERRUPTED, EXIT_USAGE};
use crate::signals::interrupt_on_signal;
use headroom_analysis::capacity::Bottleneck;
use headroom_analysis::Metric;
use headroom_bundle::capacity::{CapacityResult, Level};
use headroom_capacity::answer::{judge, outcomes};
use headroom_capacity::level_setup::{prepare_level, prepare_non_stop, search_dir};
use headroom_capacity::search::{CapacityError, LevelAt, LevelRunner, SearchPlan};
use headroom_capacity::spec::CapacitySpec;
use headroom_capacity::timing::Timing;
use headroom_experiment::cell_run::SPEC_FILE;
use headroom_load::engine::EnginePlan;
use headroom_load::live_metrics::LiveMetrics;
use headroom_load::run::{Progress, RunSetup};
use headroom_report::capacity::{level_line, render_capacity, search_heading};
use headroom_report::capacity_live::level_live_line;
use headroom_report::junit::junit_capacity;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

pub fn run(args: CapacityArgs) -> ExitCode {
    let given = args.load.common.clone();
    let (spec, common) = match asked(args) {
        Ok(asked) => asked,
        Err(e) => return failed(&given, e),
    };
    let runtime = match crate::execute::current_thread_runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    match runtime.block_on(search_spec(&spec, &common)) {
        Ok(searched) => searched.code,
        Err(e) => failed(&common, e),
    }
}

/// The message and exit code of a search that could not run.
fn failed(common: &CommonArgs, failure: Failure) -> ExitCode {
    match failure {
        Failure::Usage(e) => {
            eprintln!("headroom: {}", crate::execute::describe(&e));
            ExitCode::from(EXIT_USAGE)
        }
        Failure::CannotRun(e) => crate::execute::cannot_run(common, &e),
    }
}

fn usage(text: String) -> Failure {
    Failure::Usage(anyhow::anyhow!(text))
}

/// The search a command line asks for, and the flags beside it: the
/// `--spec` file's (its directory `--out` when given), or the spec the
/// flags make once they are checked.
fn asked(args: CapacityArgs) -> Result<(CapacitySpec, CommonArgs), Failure> {
    let mut common = args.load.common.clone();
    let Some(path) = &args.spec else {
        check_flags(&args).map_err(usage)?;
        return Ok((crate::settings::capacity_spec(&args)?, common));
    };
    let mut spec = crate::settings::capacity_spec_file(path).map_err(usage)?;
    // The same search again, elsewhere.
    if let Some(out) = &common.out {
        spec.dir = Some(out.clone());
    }
    crate::settings::spec_monitors(&spec.level, &mut common);
    check_common_flags(&common).map_err(usage)?;
    Ok((spec, common))
}

/// The flags a search cannot take, and the reason (said as given).
pub(crate) fn check_flags(args: &CapacityArgs) -> Result<(), String> {
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
    check_common_flags(&load.common)?;
    // A modelled lesson search does not start from --start.
    let modelled =
        args.arrive_within.is_some() && !matches!(args.ladder.as_deref(), Some("aimed" | "plain"));
    if let Some(max) = args.max.filter(|&max| args.start > max && !modelled) {
        return Err(format!("--start ({}) is above --max ({max})", args.start));
    }
    if args.arrive_within.is_some() && args.scenario.is_none() {
        return Err(
            "--arrive-within makes each level a lesson, whose students log in and keep cookies: give the journey with --scenario FILE (a URL alone has no login)"
                .into(),
        );
    }
    if args.ladder.as_deref() == Some("model") && args.arrive_within.is_none() {
        return Err(
            "--ladder model models a lesson start: give --arrive-within (e.g. 60s), or use --ladder aimed"
                .into(),
        );
    }
    Ok(())
}

/// What a search checks of the flags that go beside a spec too (and of
/// the agents a spec monitors): the agents' token, `--junit`'s path,
/// `--fail-if`'s figures.
fn check_common_flags(common: &CommonArgs) -> Result<(), String> {
    if let Err(e) =
        crate::execute::check_agent_token(&common.monitor, common.agent_token.as_deref())
    {
        return Err(e.to_string());
    }
    if let Err(e) = crate::execute::check_junit_path(common) {
        return Err(e.to_string());
    }
    if let Some(bad) = common.fail_if.iter().find(|c| {
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
    Ok(())
}

/// Each level of the search run from its spec, on the terminal.
struct SpecLevels<'a> {
    spec: &'a CapacitySpec,
    /// What a level's throughput counts ("req/s", "pages/s").
    rate: &'a str,
    /// `--metrics-listen`: every level publishes there in turn.
    metrics: Option<Arc<LiveMetrics>>,
    live: bool,
    quiet: bool,
}

impl SpecLevels<'_> {
    /// The users as the answer calls them (`--users-are`).
    fn users_are(&self) -> &str {
        self.spec.users_are.as_deref().unwrap_or("users")
    }
}

impl LevelRunner for SpecLevels<'_> {
    type Error = Failure;

    async fn prepare(
        &self,
        users: u32,
        repetition: u32,
        timing: Timing,
        dir: &Path,
    ) -> Result<(EnginePlan, RunSetup), Failure> {
        static SAID: std::sync::Once = std::sync::Once::new();
        let (mut prepared, said) = prepare_level(self.spec, timing, users, repetition, dir)
            .await
            .map_err(Failure::assembly)?;
        if let Some(said) = said {
            SAID.call_once(|| eprintln!("headroom: {said}"));
        }
        prepared.setup.metrics = self.metrics.clone();
        Ok((prepared.plan, prepared.setup))
    }

    async fn prepare_non_stop(
        &self,
        users: u32,
        duration: std::time::Duration,
        samples: bool,
        dir: std::path::PathBuf,
    ) -> Result<(EnginePlan, RunSetup), Failure> {
        let mut prepared = prepare_non_stop(self.spec, users, duration, samples, &dir)
            .await
            .map_err(Failure::assembly)?;
        prepared.setup.metrics = self.metrics.clone();
        Ok((prepared.plan, prepared.setup))
    }

    fn said(&self, line: &str) {
        if !self.quiet {
            eprintln!("headroom capacity: {line}");
        }
    }

    fn second(&self, at: LevelAt, p: &Progress) {
        if self.live {
            let mut err = std::io::stderr().lock();
            let line = level_live_line(&at, self.users_are(), p);
            let _ = write!(err, "\r\x1b[2K{line}");
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
            eprintln!("{}", level_line(level, self.users_are(), self.rate));
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
    common: &CommonArgs,
    result: &mut CapacityResult,
    base: &Path,
    started: Instant,
) -> Result<ExitCode, Failure> {
    let was_interrupted = result.status == "interrupted";
    let verdicts = judge(&common.fail_if, result);
    result.criteria = outcomes(&verdicts);
    result.answer = headroom_report::first_sentence::search_answer(result);
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
            searched(result),
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

/// Runs the search its flags ask for (the demo's).
pub(crate) async fn search(args: CapacityArgs) -> Result<Searched, Failure> {
    let spec = crate::settings::capacity_spec(&args)?;
    search_spec(&spec, &args.load.common).await
}

/// Runs the search `spec` describes, reported as `common` says; prints
/// progress and the summary unless quiet.
pub(crate) async fn search_spec(
    spec: &CapacitySpec,
    common: &CommonArgs,
) -> Result<Searched, Failure> {
    let quiet = common.quiet || common.json;
    let live = !quiet && std::io::stderr().is_terminal();
    let base = search_dir(spec, SPEC_FILE).map_err(Failure::assembly)?;
    let settings = spec.settings(base.clone()).map_err(Failure::assembly)?;
    let plan = SearchPlan::new(settings);
    let ladder = spec.ladder;
    if !quiet {
        eprintln!(
            "{}",
            search_heading(&plan.setup, &plan.settings.target, ladder.start, ladder.max)
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
    let levels = SpecLevels {
        spec,
        rate: plan.setup.rate(),
        metrics,
        live,
        quiet,
    };
    let mut result = plan.run(&levels, &stop_rx).await?;
    let code = conclude(common, &mut result, &base, started)?;
    crate::execute::linger(common).await;
    Ok(Searched { code, result })
}

/// What the search ran: "7 levels", or of a lesson search "4 lessons",
/// after its model's "6 non-stop levels".
fn searched(result: &CapacityResult) -> String {
    use headroom_units::quantity::count;
    let n = result.levels.len();
    let levels = if result.setup.is_lesson() {
        count(n, "lesson", "lessons")
    } else {
        count(n, "level", "levels")
    };
    match &result.model {
        Some(model) => format!(
            "{}, then {levels}",
            count(model.non_stop.len(), "non-stop level", "non-stop levels")
        ),
        None => levels,
    }
}
