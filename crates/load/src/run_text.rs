//! What a run says as it starts and how its `--fail-if` criteria judge
//! it: the assembled run's description, the protocol agreed when another
//! was asked for, and the doctor's findings ([`before_run_lines`]); each
//! criterion's verdict on the run's total or its label ([`verdicts`]).

use crate::assemble::AssembledRun;
use crate::run::RunOutcome;
use headroom_analysis::{Criterion, Verdict};

/// The lines for standard error before the run starts: what runs, then
/// each protocol agreed other than HTTP/1.1 asked, then the doctor's
/// findings here and on each monitored host.
pub fn before_run_lines(prepared: &AssembledRun) -> Vec<String> {
    let manifest = &prepared.setup.manifest;
    let mut lines = vec![prepared.description.clone()];
    // The protocol is said when anything but HTTP/1.1 was asked for.
    for agreed in &manifest.connections {
        if agreed.asked != "1.1" {
            lines.push(format!("headroom: {}", agreed.describe()));
        }
    }
    for finding in &manifest.doctor {
        lines.push(format!("headroom doctor: {}", finding.message));
    }
    for host in &manifest.monitored_hosts {
        for finding in &host.doctor {
            lines.push(format!(
                "headroom doctor ({}): {}",
                host.agent, finding.message
            ));
        }
    }
    lines
}

/// Each criterion's verdict: on the run's total, or on its label's figures.
pub fn verdicts(criteria: &[Criterion], outcome: &RunOutcome) -> Vec<Verdict> {
    criteria
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
        .collect()
}
