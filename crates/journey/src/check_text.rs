//! What `headroom scenario check` says of a scenario or a mix that passed:
//! its steps, groups, labels, checks and variables, its data and targets;
//! a mix's journeys with their weights, each checked.

use crate::scenario::mix::Mix;
use crate::scenario::{LabelKind, Scenario};
use headroom_units::quantity::count;
use std::path::Path;

/// A checked scenario: what it holds, each line after `indent`.
pub fn checked_lines(file: &Path, s: &Scenario, indent: &str) -> Vec<String> {
    let requests = s.requests.len();
    let groups = s
        .labels
        .iter()
        .filter(|l| l.kind == LabelKind::Group)
        .count();
    let mut lines = vec![format!(
        "{indent}{}: OK: {}, {}, {}, {}, {}",
        file.display(),
        count(requests, "request step", "request steps"),
        count(groups, "group", "groups"),
        count(s.labels.len(), "label", "labels"),
        count(s.checks.len(), "check", "checks"),
        count(s.vars.len(), "variable", "variables")
    )];
    if let Some(data) = &s.data {
        let visits = data
            .visits
            .as_ref()
            .map(|v| {
                format!(
                    " in {}, each taken whole by one user as a new visitor",
                    count(v.count(), "visit", "visits")
                )
            })
            .unwrap_or_default();
        lines.push(format!(
            "{indent}  data: {} ({}{visits})",
            data.file.display(),
            count(data.rows.len(), "row", "rows")
        ));
    }
    for origin in &s.origins {
        lines.push(format!("{indent}  target: {}", origin.url));
    }
    lines
}

/// A checked mix: the mix, and every journey it names.
pub fn mix_lines(file: &Path, mix: &Mix) -> Vec<String> {
    let mut lines = vec![format!(
        "{}: OK: a mix of {} (weights {})",
        file.display(),
        count(mix.journeys.len(), "journey", "journeys"),
        mix.weights_text()
    )];
    for journey in &mix.journeys {
        lines.push(format!(
            "  journey {} (weight {}):",
            journey.name,
            journey.weight_text()
        ));
        lines.extend(checked_lines(&journey.file, &journey.scenario, "    "));
    }
    if let Some(note) = mix.unused_profiles_note() {
        lines.push(format!("  {note}"));
    }
    lines
}
