//! What `scenario from-har` tells the user once the scenario is written:
//! the steps kept and what was left out, each correlated value, the typed
//! account and secrets (by name, never by value) and the token-like values
//! sent as recorded. [`lines`] returns the text; the caller prints it.

use crate::correlate::{DataColumn, Extract};
use crate::recording::ImportedRecording;
use std::path::Path;

/// A long recording's thousands of values: the first ones, then a count.
const LISTED: usize = 40;

/// The summary's lines; `written_csv` is the account file written beside
/// the scenario, if one was.
pub fn lines(imported: &ImportedRecording, written_csv: Option<&Path>) -> Vec<String> {
    let mut out = vec![format!(
        "headroom: {} steps from {} requests in {} (site {}){}",
        imported.steps.len(),
        imported.recorded,
        imported.har.display(),
        imported.base,
        imported
            .out
            .as_ref()
            .map(|o| format!(", written to {}", o.display()))
            .unwrap_or_default()
    )];
    left_out(imported, &mut out);
    correlated(imported, &mut out);
    typed(imported, written_csv, &mut out);
    not_correlated(imported, &mut out);
    out
}

fn left_out(imported: &ImportedRecording, out: &mut Vec<String>) {
    let left = &imported.left;
    if left.static_files > 0 {
        out.push(format!(
            "  left out: {} static files (--include-static keeps them)",
            left.static_files
        ));
    }
    if !left.other_hosts.is_empty() {
        let hosts: Vec<String> = left
            .other_hosts
            .iter()
            .map(|(h, n)| format!("{h} ×{n}"))
            .collect();
        out.push(format!(
            "  left out: requests to other hosts: {}",
            hosts.join(", ")
        ));
    }
    if left.no_response > 0 {
        out.push(format!(
            "  left out: {} requests without a response",
            left.no_response
        ));
    }
}

fn correlated(imported: &ImportedRecording, out: &mut Vec<String>) {
    let variables = &imported.correlation.variables;
    if variables.len() > LISTED {
        out.push(format!(
            "  correlated: {} values; the first {LISTED}:",
            variables.len()
        ));
    }
    for v in variables.iter().take(LISTED) {
        let how = match &v.extract {
            Extract::Css { selector, .. } => selector.clone(),
            Extract::Json(p) => format!("JSON {p}"),
            Extract::Regex {
                json_string: false, ..
            } => "text of the page".into(),
            Extract::Regex {
                json_string: true, ..
            } => "a JSON string in the page's script".into(),
            Extract::Cookie(name) => format!("cookie {name}"),
        };
        let users: Vec<String> = v.used_by.iter().map(|s| format!("{:02}", s + 1)).collect();
        out.push(format!(
            "  correlated: {} from step {:02} ({how}), sent by step {}",
            v.name,
            v.source + 1,
            users.join(", ")
        ));
    }
}

/// The account's columns and the secrets, by name.
fn typed(imported: &ImportedRecording, written_csv: Option<&Path>, out: &mut Vec<String>) {
    let data = imported.data.as_ref();
    let (account, secrets): (Vec<&DataColumn>, Vec<&DataColumn>) = imported
        .correlation
        .data
        .iter()
        .partition(|d| d.name == "username" || d.name == "password");
    if !account.is_empty() {
        let names: Vec<String> = account
            .iter()
            .map(|d| format!("{} (field {})", d.name, d.field))
            .collect();
        match (written_csv, data) {
            (Some(path), _) => out.push(format!(
                "  typed: {} → data columns; {} holds the recorded account: add one row per user",
                names.join(", "),
                path.display()
            )),
            (None, Some(d)) => out.push(format!(
                "  typed: {} → data columns of {}",
                names.join(", "),
                d.file
            )),
            _ => {}
        }
    }
    if !secrets.is_empty() {
        let names: Vec<String> = secrets
            .iter()
            .map(|d| format!("{} (field {}, step {:02})", d.name, d.field, d.step + 1))
            .collect();
        let file = match (written_csv, data) {
            (Some(path), _) => path.display().to_string(),
            (None, Some(d)) => d.file.clone(),
            _ => "the data file".into(),
        };
        out.push(format!(
            "  secret: {} → data columns of {file}, written as ${{column}} wherever sent and never printed: put each user's value in that column",
            names.join(", ")
        ));
    }
}

fn not_correlated(imported: &ImportedRecording, out: &mut Vec<String>) {
    let values = &imported.correlation.not_correlated;
    if values.len() > LISTED {
        out.push(format!(
            "  not correlated: {} values; the first {LISTED}:",
            values.len()
        ));
    }
    for (s, place, value, why) in values.iter().take(LISTED) {
        if value.is_empty() {
            out.push(format!(
                "  not correlated: step {:02} {place}: {why}",
                s + 1
            ));
        } else {
            out.push(format!(
                "  not correlated: step {:02} {place} = \"{value}\": {why}; sent as recorded",
                s + 1
            ));
        }
    }
}
