//! What `headroom doctor` says of a host's latest bench beside its
//! fingerprint: the JSON document of the hosts and the bench, and the
//! bench's headlines in the text.

use headroom_bundle::bench::BenchBundle;
use headroom_monitor::{Finding, Fingerprint};
use std::path::PathBuf;

/// An agent's host: its address, fingerprint and findings.
pub type AgentHost = (String, Fingerprint, Vec<Finding>);

/// `doctor --json`: this host, each agent's host and the latest bench.
pub fn doctor_json(
    f: &Fingerprint,
    findings: &[Finding],
    remote: &[AgentHost],
    bench: Option<&(PathBuf, BenchBundle)>,
) -> serde_json::Value {
    let hosts: Vec<serde_json::Value> = remote
        .iter()
        .map(|(agent, f, findings)| serde_json::json!({ "agent": agent, "fingerprint": f, "findings": findings }))
        .collect();
    let latest = bench.map(|(path, b)| {
        serde_json::json!({
            "bundle": path, "started": b.started,
            "headlines": crate::latest::headlines(b, None),
        })
    });
    serde_json::json!({
        "fingerprint": f, "findings": findings, "monitored_hosts": hosts, "latest_bench": latest,
    })
}

/// The latest bench's lines under the host in the text.
pub fn latest_bench_lines((path, b): &(PathBuf, BenchBundle)) -> Vec<String> {
    let mut lines = vec![format!(
        "  latest bench ({}, {}):",
        path.display(),
        b.started
    )];
    for line in crate::latest::headlines(b, None) {
        lines.push(format!("    {line}"));
    }
    lines
}
