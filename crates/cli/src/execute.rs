//! The part every load-generating command shares: preflight, the run with
//! its live line and signals, the summary, `--fail-if` and exit codes.

use crate::args::{CommonArgs, Tolerated};
use crate::signals::interrupt_on_signal;
use headroom_analysis::apdex::ApdexThresholds;
use headroom_analysis::Verdict;
use headroom_bundle::manifest::{ClientHost, Files, Manifest, MonitoredHost, ProfileRecord, Tool};
use headroom_bundle::summary::{RunStatus, RunSummary};
use headroom_bundle::SCHEMA_VERSION;
use headroom_load::conn::Connector;
use headroom_load::engine::EnginePlan;
use headroom_load::live_metrics::LiveMetrics;
use headroom_load::run::{run as run_plan, Progress, RunOutcome, RunSetup};
use headroom_load::target::Target;
use headroom_monitor::Fingerprint;
use headroom_report::{json_summary, junit_xml, live_line, render_summary, ReportInput};
use std::future::Future;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Exit codes (documented in `headroom --help` and the README).
pub const EXIT_CRITERIA_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
pub const EXIT_CANNOT_RUN: u8 = 3;
/// The run was stopped by Ctrl-C or SIGTERM (its bundle is valid and marked interrupted).
pub const EXIT_INTERRUPTED: u8 = 130;

const PREFLIGHT_WAIT: Duration = Duration::from_secs(5);

/// A problem with the user's input (exit 2) or with running at all (exit 3).
pub enum Failure {
    Usage(anyhow::Error),
    CannotRun(anyhow::Error),
}

/// A run ready to start.
pub struct Prepared {
    pub plan: EnginePlan,
    pub setup: RunSetup,
    /// What the target is called in the summary.
    pub target: String,
    /// The line printed before the run starts.
    pub description: String,
    /// When the load starts (`--start-at`, `--start-in`); now when `None`.
    pub start_at: Option<std::time::SystemTime>,
}

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

/// The command line as the manifest keeps it: without the password of a
/// URL, the value of an Authorization or Cookie header, or a token.
fn redacted_command_line() -> Vec<String> {
    let mut secret_next = false;
    std::env::args_os()
        .map(|arg| {
            let arg = arg.to_string_lossy();
            let lower = arg.to_ascii_lowercase();
            let shown = if secret_next {
                "***".to_string()
            } else if let Some(flag) = ["--agent-token=", "--token="]
                .iter()
                .find(|flag| lower.starts_with(**flag))
            {
                format!("{flag}***")
            } else {
                headroom_load::target::redact_secrets(&arg)
            };
            secret_next = matches!(lower.as_str(), "--agent-token" | "--token");
            shown
        })
        .collect()
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
pub async fn connect_checked(target: &Target, insecure: bool) -> Result<Connector, Failure> {
    let connector = Connector::resolve(target, insecure)
        .await
        .map_err(|e| Failure::CannotRun(e.into()))?;
    connector
        .preflight(target, PREFLIGHT_WAIT)
        .await
        .map_err(|e| Failure::CannotRun(e.into()))?;
    Ok(connector)
}

pub fn apdex(common: &CommonArgs) -> Result<ApdexThresholds, Failure> {
    let tolerated = match common.apdex_f {
        Tolerated::Time(d) => d,
        Tolerated::TimesT(k) => common.apdex_t.mul_f64(k),
    };
    if tolerated < common.apdex_t {
        return Err(Failure::Usage(anyhow::anyhow!(
            "--apdex-f ({} ms) is below --apdex-t ({} ms): F must be at least T (the Apdex standard uses F = 4T)",
            tolerated.as_millis(),
            common.apdex_t.as_millis()
        )));
    }
    Ok(ApdexThresholds {
        satisfied: common.apdex_t,
        tolerated,
    })
}

/// The sources of `--monitor`.
pub fn monitor_config(common: &CommonArgs) -> Vec<headroom_load::monitoring::MonitorSource> {
    use headroom_load::monitoring::MonitorSource;
    common
        .monitor
        .iter()
        .map(|m| match m {
            crate::args::Monitor::Local => MonitorSource::Local(headroom_monitor::SamplerConfig {
                processes: common.process.clone(),
                link_capacity_mbit: common.link_capacity,
                ..Default::default()
            }),
            crate::args::Monitor::Agent(authority) => MonitorSource::Agent {
                authority: authority.clone(),
                token: common.agent_token.clone(),
            },
        })
        .collect()
}

/// The profile as the manifest records it: the model's fields, the think
/// time and the throughput cap.
pub fn profile_json(
    profile: &headroom_load::profile::Profile,
    think: headroom_load::profile::Think,
    cap: Option<headroom_units::quantity::Rate>,
) -> ProfileRecord {
    // The engine's types serialize to the record's fields.
    let mut record: ProfileRecord = serde_json::to_value(profile)
        .and_then(serde_json::from_value)
        .unwrap_or_default();
    record.think = serde_json::to_value(think)
        .and_then(serde_json::from_value)
        .unwrap_or_default();
    record.throughput_cap_per_s = cap.map(|r| r.per_second);
    record
}

pub fn threads(common: &CommonArgs) -> usize {
    common
        .threads
        .map(|t| t as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Raises the open-file limit to its hard maximum: every VU holds a socket.
pub fn ensure_file_limit(needed: u64) -> Result<(), Failure> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return Ok(());
        }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
    // rlim_t is 32 bits on 32-bit ARM (a Pi's armv7 glibc).
    #[allow(clippy::unnecessary_cast)]
    let current = limit.rlim_cur as u64;
    if current < needed {
        return Err(Failure::Usage(anyhow::anyhow!(
            "{needed} VUs need about {needed} open files but this process may open only {current}: raise the limit (ulimit -n {needed}) or use fewer users"
        )));
    }
    Ok(())
}

/// The manifest's common part; the command fills in what it ran.
pub struct ManifestParts {
    /// The target runs on this machine (its address is loopback).
    pub same_host: bool,
    pub kind: &'static str,
    pub target: String,
    pub scenario: serde_json::Value,
    pub profile: ProfileRecord,
    pub labels: Vec<String>,
    pub timeout: Duration,
}

/// This machine's fingerprint and the doctor's findings on it.
pub fn examine_host(same_host: bool) -> (Fingerprint, Vec<headroom_monitor::Finding>) {
    let fingerprint = Fingerprint::local(env!("CARGO_PKG_VERSION"));
    // Naming the busiest processes takes a moment: only when the load calls for it.
    let busiest = if fingerprint.load_average[0] > 0.5 {
        headroom_monitor::doctor::top_processes(&Default::default(), 3, Duration::from_millis(300))
    } else {
        Vec::new()
    };
    let findings = headroom_monitor::examine(&fingerprint, &busiest, same_host);
    (fingerprint, findings)
}

/// Fingerprints and findings of the hosts behind `--monitor http://...`;
/// an agent that does not answer now is an error (wrong address or token).
pub fn monitored_hosts(common: &CommonArgs) -> Result<Vec<MonitoredHost>, Failure> {
    common
        .monitor
        .iter()
        .filter_map(|m| match m {
            crate::args::Monitor::Agent(authority) => Some(authority),
            crate::args::Monitor::Local => None,
        })
        .map(|authority| {
            let fingerprint = headroom_monitor::agent::fetch_fingerprint(
                authority,
                common.agent_token.as_deref(),
            )
            .map_err(|e| Failure::CannotRun(anyhow::anyhow!(e)))?;
            let doctor = headroom_monitor::examine(&fingerprint, &[], false);
            Ok(MonitoredHost {
                agent: authority.clone(),
                fingerprint,
                doctor,
            })
        })
        .collect()
}

pub fn manifest(
    common: &CommonArgs,
    apdex: &ApdexThresholds,
    parts: ManifestParts,
    threads: usize,
) -> Result<Manifest, Failure> {
    let (t, f) = RunSummary::thresholds(apdex);
    let (fingerprint, doctor) = examine_host(parts.same_host);
    let monitored_hosts = monitored_hosts(common)?;
    Ok(Manifest {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "headroom".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        command_line: redacted_command_line(),
        kind: parts.kind.into(),
        target: parts.target,
        scenario: parts.scenario,
        profile: parts.profile,
        apdex_t_ms: t,
        apdex_f_ms: f,
        timeout_ms: parts.timeout.as_secs_f64() * 1000.0,
        threads,
        seed: common.seed,
        labels: parts.labels,
        started_at: String::new(),
        ended_at: None,
        elapsed_s: None,
        status: RunStatus::Running,
        client: ClientHost::current(),
        fingerprint: Some(fingerprint),
        doctor,
        monitored_hosts,
        warnings: Vec::new(),
        summary: None,
        measurement: None,
        save_failures: Some(common.save_failures),
        shard: None,
        merged: None,
        files: Files::new(common.jtl),
    })
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
        eprintln!("{}", prepared.description);
        for finding in &prepared.setup.manifest.doctor {
            eprintln!("headroom doctor: {}", finding.message);
        }
        for host in &prepared.setup.manifest.monitored_hosts {
            for finding in &host.doctor {
                eprintln!("headroom doctor ({}): {}", host.agent, finding.message);
            }
        }
    }
    let mut prepared = prepared;
    if !crate::shard::wait_for_start(&mut prepared, common.agent_token.as_deref(), common.quiet)
        .await
    {
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
    let verdicts: Vec<Verdict> = common
        .fail_if
        .iter()
        .map(|criterion| match &criterion.label {
            None => criterion.evaluate(Some(&outcome.total)),
            Some(label) => criterion.evaluate(
                outcome
                    .labels
                    .iter()
                    .find(|(name, _)| name == label)
                    .map(|(_, s)| s),
            ),
        })
        .collect();
    let input = ReportInput {
        status: outcome.status,
        bundle: &outcome.bundle,
        target,
        summary: &outcome.summary,
        warnings: &outcome.warnings,
        verdicts: &verdicts,
        label_order: &outcome.manifest.labels,
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
