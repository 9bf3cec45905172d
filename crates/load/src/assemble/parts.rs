//! What every workload's assembly shares: the run it makes
//! ([`AssembledRun`]), why it may not ([`AssemblyError`]), the checks
//! before a run (the target answers, enough open files) and the setup
//! every run starts from.

use crate::engine::EnginePlan;
use crate::monitoring::MonitorSource;
use crate::run::RunSetup;
use crate::spec::{ApdexSpec, Monitored, RunSpec, ToleratedSpec};
use headroom_analysis::apdex::ApdexThresholds;
use headroom_http::conn::Connector;
use headroom_http::protocol::HttpChoice;
use headroom_http::target::Target;
use std::time::{Duration, SystemTime};

const PREFLIGHT_WAIT: Duration = Duration::from_secs(5);

/// A run ready to start.
pub struct AssembledRun {
    pub plan: EnginePlan,
    pub setup: RunSetup,
    /// What the target is called in the summary.
    pub target: String,
    /// The line printed before the run starts.
    pub description: String,
    /// When the load starts (a planned start); now when `None`.
    pub start_at: Option<SystemTime>,
}

/// Why a spec did not become a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssemblyError {
    /// The spec (the user's input) is wrong: exit 2.
    #[error("{0}")]
    Usage(String),
    /// The run cannot happen here and now (target, agent, files): exit 3.
    #[error("{0}")]
    CannotRun(String),
}

impl AssemblyError {
    pub(crate) fn cannot_run(error: &dyn std::error::Error) -> AssemblyError {
        AssemblyError::CannotRun(describe(error))
    }
}

/// An error and its causes, each said once: a cause whose text the message
/// already holds is not repeated after it.
pub fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        let said = c.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = c.source();
    }
    text
}

/// Apdex T and F; F below T is refused.
pub fn apdex(spec: &ApdexSpec) -> Result<ApdexThresholds, AssemblyError> {
    let satisfied = spec.satisfied;
    let tolerated = match spec.tolerated {
        ToleratedSpec::Time(d) => d,
        ToleratedSpec::TimesT(k) => satisfied.mul_f64(k),
    };
    if tolerated < satisfied {
        return Err(AssemblyError::Usage(format!(
            "--apdex-f ({} ms) is below --apdex-t ({} ms): F must be at least T (the Apdex standard uses F = 4T)",
            tolerated.as_millis(),
            satisfied.as_millis()
        )));
    }
    Ok(ApdexThresholds {
        satisfied,
        tolerated,
    })
}

/// The generator's worker threads: the spec's, or one per available core.
pub fn threads(spec: &RunSpec) -> usize {
    spec.threads
        .map(|t| t as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Resolves a target and connects once, so an unusable target is an error
/// with a hint rather than a run of failures.
/// What was agreed (HTTP version, TLS) is kept in the connector.
pub async fn connect_checked(
    target: &Target,
    insecure: bool,
    http: HttpChoice,
) -> Result<Connector, AssemblyError> {
    headroom_http::preflight::connect(target, insecure, http, PREFLIGHT_WAIT)
        .await
        .map_err(|e| AssemblyError::cannot_run(&e))
}

/// The sources the run's monitor samples.
pub fn monitor_sources(spec: &RunSpec) -> Vec<MonitorSource> {
    let monitors = &spec.monitors;
    monitors
        .sources
        .iter()
        .map(|m| match m {
            Monitored::Local => MonitorSource::Local(headroom_monitor::SamplerConfig {
                processes: monitors.processes.clone(),
                link_capacity_mbit: monitors.link_capacity_mbit,
                // Checked when the flag was read; a file gone since gives none.
                databases: monitors
                    .credentials
                    .as_deref()
                    .and_then(|path| headroom_monitor::database::read_credentials(path).ok())
                    .unwrap_or_default(),
                ..Default::default()
            }),
            Monitored::Agent(authority) => MonitorSource::Agent {
                authority: authority.clone(),
                token: monitors.agent_token.clone(),
            },
        })
        .collect()
}

/// The setup every workload shares; the workload fills in its labels.
pub(super) fn setup(
    spec: &RunSpec,
    manifest: headroom_bundle::manifest::Manifest,
    bundle_dir: std::path::PathBuf,
) -> RunSetup {
    RunSetup {
        manifest,
        bundle_dir,
        label_urls: None,
        outside_total: Vec::new(),
        check_names: Vec::new(),
        check_labels: Vec::new(),
        monitor: monitor_sources(spec),
        monitor_processes: spec.monitors.processes.clone(),
        faults: spec.faults.iter().map(Into::into).collect(),
        save_failures: spec.outputs.save_failures,
        metrics: None,
        end_early: None,
    }
}

/// Labels beyond which the line before a run says what they cost.
const MANY_LABELS: usize = 2_000;

/// The note said before a run of many labels: each label that gets
/// requests keeps its own histograms (a 16 KB start, growing with the
/// slowest answer to 188 KB each; 600 labels requested for 10 s took
/// 185 MB in all), so a workload of thousands may take gigabytes.
pub(super) fn labels_note(labels: usize) -> Option<String> {
    let megabytes = |kb_each: usize| {
        let mb = (labels * kb_each) as f64 / 1024.0;
        if mb < 1024.0 {
            format!("{mb:.0} MB")
        } else {
            format!("{:.1} GB", mb / 1024.0)
        }
    };
    (labels > MANY_LABELS).then(|| {
        format!(
            "headroom: note: {labels} labels: each label that gets requests keeps its own latency histograms for the run (100-400 KB, more for slower answers), so if most are requested this run takes {} to {} of memory; steps with the same label share them",
            megabytes(100),
            megabytes(400)
        )
    })
}

/// Raises the open-file limit to its hard maximum: every VU holds a socket.
pub fn ensure_file_limit(needed: u64) -> Result<(), AssemblyError> {
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
        return Err(AssemblyError::Usage(format!(
            "{needed} VUs need about {needed} open files but this process may open only {current}: raise the limit (ulimit -n {needed}) or use fewer users"
        )));
    }
    Ok(())
}
