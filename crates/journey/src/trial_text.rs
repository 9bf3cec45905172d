//! How `headroom scenario try` ended ([`crate::scenario::trial`]'s
//! outcome), in words: passed with what it sent, no step ran, or the step
//! that failed with where its exchange was saved.

use crate::scenario::trial::TrialOutcome;
use crate::scenario::trial_view::millis;
use std::path::Path;

/// A trial's end in words: whether it passed, and its lines, for standard
/// error when no step ran, else for standard output.
pub struct TrialEnd {
    pub passed: bool,
    pub to_stderr: bool,
    pub lines: Vec<String>,
}

/// The end of the trial of `file`.
pub fn trial_end(file: &Path, outcome: TrialOutcome) -> TrialEnd {
    match outcome {
        TrialOutcome::NoStepRan => TrialEnd {
            passed: false,
            to_stderr: true,
            lines: vec![format!(
                "headroom: no step ran: the data file has no rows for the first user (see data: in {})",
                file.display()
            )],
        },
        TrialOutcome::Passed {
            requests,
            resources,
            took,
        } => {
            let sent = if resources > 0 {
                // The steps' own requests, then all that went over the wire.
                format!(
                    "{requests} steps ({} requests with their pages' {resources} resources)",
                    requests + resources
                )
            } else {
                format!("{requests} requests")
            };
            TrialEnd {
                passed: true,
                to_stderr: false,
                lines: vec![format!(
                    "\nOK: {sent}, every check passed, in {}.",
                    millis(took)
                )],
            }
        }
        TrialOutcome::Failed { label, why, saved } => {
            let mut lines = vec![format!("\nFAILED at {label}: {why}")];
            match saved {
                Ok((exchange, body)) => {
                    lines.push(format!(
                        "  request and response headers: {}",
                        exchange.display()
                    ));
                    if let Some(body) = body {
                        lines.push(format!("  response body:                {}", body.display()));
                    }
                }
                Err(e) => lines.push(format!("  (the response could not be saved: {e})")),
            }
            TrialEnd {
                passed: false,
                to_stderr: false,
                lines,
            }
        }
    }
}
