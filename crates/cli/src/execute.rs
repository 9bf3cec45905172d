//! The part every load-generating command shares: preflight, the run with
//! its live line and signals, the summary, `--fail-if` and exit codes.

use crate::args::CommonArgs;
use crate::signals::interrupt_on_signal;
use headroom_analysis::Verdict;
use headroom_bundle::summary::RunStatus;
use headroom_http::conn::Connector;
use headroom_http::protocol::HttpChoice;
use headroom_http::target::Target;
use headroom_load::assemble::{AssembledRun, AssemblyError};
use headroom_load::live_metrics::LiveMetrics;
use headroom_load::run::{run as run_plan, Progress, RunOutcome};
use headroom_load::run_text::{before_run_lines, verdicts};
use headroom_report::{json_summary, junit_xml, live_line, render_summary, ReportInput};
use std::future::Future;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

pub use headroom_load::assemble::examine_host;

/// Exit codes (documented in `headroom --help` and the README).
pub const EXIT_CRITERIA_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
pub const EXIT_CANNOT_RUN: u8 = 3;
/// The run was stopped by Ctrl-C or SIGTERM (its bundle is valid and marked interrupted).
pub const EXIT_INTERRUPTED: u8 = 130;

/// A problem with the user's input (exit 2) or with running at all (exit 3).
pub enum Failure {
    Usage(anyhow::Error),
    CannotRun(anyhow::Error),
}

impl Failure {
    /// The same failure from a library's assembly of the run.
    pub fn assembly(e: AssemblyError) -> Failure {
        match e {
            AssemblyError::Usage(text) => Failure::Usage(anyhow::anyhow!(text)),
            AssemblyError::CannotRun(text) => Failure::CannotRun(anyhow::anyhow!(text)),
        }
    }
}

/// A run ready to start (assembled by `headroom_load::assemble`).
pub(crate) type Prepared = AssembledRun;

/// Runs `prepare` (which may fail as usage or cannot-run), then the run.
pub fn execute(
    common: &CommonArgs,
    prepare: impl Future<Output = Result<Prepared, Failure>>,
) -> ExitCode {
    let runtime = match current_thread_runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    if let Err(e) = check_agent_token(&common.monitor, common.agent_token.as_deref()) {
        eprintln!("headroom: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    let result = runtime.block_on(async {
        let mut prepared = prepare.await?;
        prepared.setup.metrics = live_metrics(common)?;
        run_and_report(common, prepared).await
    });
    match result {
        Ok(code) => code,
        Err(Failure::Usage(e)) => {
            eprintln!("headroom: {}", describe(&e));
            ExitCode::from(EXIT_USAGE)
        }
        Err(Failure::CannotRun(e)) => cannot_run(common, &e),
    }
}

/// The `--metrics-listen` server, listening (one per command: a capacity
/// search's levels share it).
pub fn live_metrics(common: &CommonArgs) -> Result<Option<Arc<LiveMetrics>>, Failure> {
    let Some(address) = common.metrics_listen else {
        return Ok(None);
    };
    LiveMetrics::listen(address, common.metrics_token.clone())
        .map(|live| Some(Arc::new(live)))
        .map_err(|e| Failure::CannotRun(anyhow::anyhow!(e)))
}

/// Says why the run could not start, writes the `--junit` file that says so
/// too (CI publishers look for it even then), and gives exit code 3.
pub fn cannot_run(common: &CommonArgs, error: &anyhow::Error) -> ExitCode {
    let reason = describe(error);
    eprintln!("headroom: {reason}");
    if let Some(path) = &common.junit {
        let xml = headroom_report::junit::junit_not_started(&reason);
        if let Err(e) = std::fs::write(path, xml) {
            eprintln!(
                "headroom: cannot write the JUnit file {}: {e}",
                path.display()
            );
        }
    }
    ExitCode::from(EXIT_CANNOT_RUN)
}

/// A token given for agents when none is monitored would be ignored.
pub fn check_agent_token(
    monitor: &[crate::args::Monitor],
    token: Option<&str>,
) -> Result<(), &'static str> {
    let agents = monitor
        .iter()
        .any(|m| matches!(m, crate::args::Monitor::Agent(_)));
    if token.is_some() && !agents {
        return Err("--agent-token without an agent: give --monitor http://HOST:PORT of the agent whose token it is, or leave --agent-token out");
    }
    Ok(())
}

/// Checks before a long run that the `--junit` file can be written, so the
/// run is not wasted on a path that cannot take it.
pub fn check_junit_path(common: &CommonArgs) -> Result<(), String> {
    let Some(path) = &common.junit else {
        return Ok(());
    };
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(|_| {
            // Leave no empty file behind: the run writes it at its end.
            if !existed {
                let _ = std::fs::remove_file(path);
            }
        })
        .map_err(|e| {
            format!(
                "cannot write the JUnit file {}: {e}. Choose a --junit path in a writable directory",
                path.display()
            )
        })
}

/// An error and its causes, each said once: a cause whose text the message
/// already holds ("cannot write ...: File exists (os error 17)") is not
/// repeated after it.
pub fn describe(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// The single-threaded runtime a command drives its runs from (the engine
/// starts its own worker threads); the error is the exit code to return.
pub fn current_thread_runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("headroom: cannot start: {e}");
            ExitCode::from(EXIT_CANNOT_RUN)
        })
}

/// Resolves a target and connects once, so an unusable target is an error
/// with a hint rather than a run of failures.
pub async fn connect_checked(
    target: &Target,
    insecure: bool,
    http: HttpChoice,
) -> Result<Connector, Failure> {
    headroom_load::assemble::connect_checked(target, insecure, http)
        .await
        .map_err(Failure::assembly)
}

/// A `--fail-if` criterion on a label the run does not have would only
/// fail after the whole run: refuse it before the first request.
fn check_criteria_labels(common: &CommonArgs, labels: &[String]) -> Result<(), Failure> {
    for criterion in &common.fail_if {
        if criterion.metric == headroom_analysis::Metric::Users {
            return Err(Failure::Usage(anyhow::anyhow!(
                "--fail-if '{}': 'users' is a capacity search's answer; for a run, use apdex, errors, rps, count or a latency such as p95",
                criterion.expression
            )));
        }
        let Some(label) = &criterion.label else {
            continue;
        };
        if !labels.iter().any(|l| l == label) {
            return Err(Failure::Usage(anyhow::anyhow!(
                "--fail-if names the label '{label}', which this run does not have (labels: {}): fix the name, or leave [label] out for the total",
                labels.join(", ")
            )));
        }
    }
    Ok(())
}

async fn run_and_report(common: &CommonArgs, prepared: Prepared) -> Result<ExitCode, Failure> {
    check_criteria_labels(common, &prepared.setup.manifest.labels)?;
    let live = !common.quiet && std::io::stderr().is_terminal();
    if !common.quiet && !common.json {
        for line in before_run_lines(&prepared) {
            eprintln!("{line}");
        }
    }
    let mut prepared = prepared;
    let interrupt = async {
        let _ = interrupt_on_signal().await;
    };
    let token = common.agent_token.as_deref();
    if !headroom_load::start::wait_for_start(&mut prepared, token, common.quiet, interrupt).await {
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    let interrupt = interrupt_on_signal();
    let on_progress = |p: &Progress| {
        if live {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K{}", live_line(p));
            let _ = err.flush();
        }
    };
    let outcome = run_plan(
        prepared.plan,
        prepared.setup,
        async {
            let _ = interrupt.await;
        },
        on_progress,
    )
    .await
    .map_err(|e| Failure::CannotRun(e.into()))?;
    if live {
        eprint!("\r\x1b[2K");
    }
    let code = report(common, &prepared.target, &outcome);
    linger(common).await;
    Ok(code)
}

/// `--metrics-linger`: the final figures stay on `/metrics` this long
/// after the report (Ctrl-C ends the wait).
pub async fn linger(common: &CommonArgs) {
    if common.metrics_listen.is_none() || common.metrics_linger.is_zero() {
        return;
    }
    let interrupt = interrupt_on_signal();
    tokio::select! {
        _ = tokio::time::sleep(common.metrics_linger) => {}
        _ = interrupt => {}
    }
}

fn report(common: &CommonArgs, target: &str, outcome: &RunOutcome) -> ExitCode {
    let verdicts = verdicts(&common.fail_if, outcome);
    let input = ReportInput {
        status: outcome.status,
        bundle: &outcome.bundle,
        target,
        summary: &outcome.summary,
        warnings: &outcome.warnings,
        verdicts: &verdicts,
        label_order: &outcome.manifest.labels,
        arrive_within_s: outcome.manifest.profile.arrive_within_s,
    };
    if common.json {
        println!("{}", json_summary(&input));
    } else if !common.quiet {
        print!("{}", render_summary(&input));
    }
    let failed: Vec<&Verdict> = verdicts.iter().filter(|v| v.failed).collect();
    if let Some(path) = &common.junit {
        let xml = junit_xml(&input, &outcome.manifest.started_at);
        if let Err(e) = std::fs::write(path, xml) {
            eprintln!(
                "headroom: cannot write the JUnit file {}: {e}. The bundle {} holds the run.",
                path.display(),
                outcome.bundle.display()
            );
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    }
    if common.quiet {
        for v in &failed {
            eprintln!("headroom: --fail-if {}", v.message);
        }
    }
    if let Some(error) = &outcome.bundle_error {
        eprintln!(
            "headroom: {error}. The run was stopped there; the figures above cover it until then. \
             Free some space or choose another --out."
        );
        ExitCode::from(EXIT_CANNOT_RUN)
    } else if outcome.status == RunStatus::Interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_CRITERIA_FAILED)
    }
}
