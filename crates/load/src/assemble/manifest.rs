//! The manifest as a run starts: what was asked for, on which hosts, by
//! whom. The run fills in its times, status and summary as it goes.

use super::parts::AssemblyError;
use crate::spec::{Monitored, RunSpec};
use headroom_analysis::apdex::ApdexThresholds;
use headroom_bundle::manifest::{ClientHost, Files, Manifest, MonitoredHost, ProfileRecord, Tool};
use headroom_bundle::scenario_record::ScenarioRecord;
use headroom_bundle::summary::{RunStatus, RunSummary};
use headroom_bundle::SCHEMA_VERSION;
use headroom_journey::profile::{Profile, Think};
use headroom_monitor::Fingerprint;
use headroom_units::quantity::Rate;
use std::time::Duration;

/// The manifest's workload part; the rest comes from the spec.
pub struct ManifestParts {
    /// The target runs on this machine (its address is loopback).
    pub same_host: bool,
    pub kind: &'static str,
    pub target: String,
    pub scenario: ScenarioRecord,
    pub profile: ProfileRecord,
    pub labels: Vec<String>,
    pub timeout: Duration,
    /// What each origin's connections agreed on.
    pub connections: Vec<headroom_bundle::manifest::Negotiated>,
}

/// The profile as the manifest records it: the model's fields, the think
/// time and the throughput cap.
pub fn profile_record(profile: &Profile, think: Think, cap: Option<Rate>) -> ProfileRecord {
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

/// Fingerprints and findings of the monitored agents; an agent that does
/// not answer now is an error (wrong address or token).
fn monitored_hosts(spec: &RunSpec) -> Result<Vec<MonitoredHost>, AssemblyError> {
    let token = spec.monitors.agent_token.as_deref();
    spec.monitors
        .sources
        .iter()
        .filter_map(|m| match m {
            Monitored::Agent(authority) => Some(authority),
            Monitored::Local => None,
        })
        .map(|authority| {
            let fingerprint = headroom_monitor::agent::fetch_fingerprint(authority, token)
                .map_err(|e| AssemblyError::CannotRun(e.to_string()))?;
            let doctor = headroom_monitor::examine(&fingerprint, &[], false);
            Ok(MonitoredHost {
                agent: authority.clone(),
                fingerprint,
                doctor,
            })
        })
        .collect()
}

/// The manifest of `spec`'s run before it starts.
pub(super) fn manifest(
    spec: &RunSpec,
    apdex: &ApdexThresholds,
    parts: ManifestParts,
    threads: usize,
) -> Result<Manifest, AssemblyError> {
    let (t, f) = RunSummary::thresholds(apdex);
    let (mut fingerprint, doctor) = examine_host(parts.same_host);
    // This machine is a monitored server: record its software too.
    if spec.monitors.sources.contains(&Monitored::Local) {
        fingerprint = fingerprint.with_server(&spec.monitors.processes);
    }
    let monitored_hosts = monitored_hosts(spec)?;
    Ok(Manifest {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "headroom".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        command_line: spec.outputs.command_line.clone(),
        kind: parts.kind.into(),
        target: parts.target,
        scenario: Some(parts.scenario),
        profile: parts.profile,
        apdex_t_ms: t,
        apdex_f_ms: f,
        timeout_ms: parts.timeout.as_secs_f64() * 1000.0,
        threads,
        seed: spec.seed,
        labels: parts.labels,
        label_roles: Default::default(),
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
        save_failures: Some(spec.outputs.save_failures),
        shard: None,
        merged: None,
        files: Files::new(spec.outputs.jtl),
        connections: parts.connections,
    })
}
