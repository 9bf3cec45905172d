//! The login a log's users went through, which a log cannot show (it has
//! no form bodies): a journey file of the steps that log one user in, with
//! the data file of its accounts. The workload runs its steps once for each
//! user, before the pages; its accounts are the workload's `accounts:`, a
//! row a user (user n logs in with row n), in a file of their own that
//! only its owner may read.

use headroom_http::target::Target;
use headroom_journey::scenario::parse_file;
use std::path::Path;

/// Data columns of the pages, which a login's may not reuse.
pub const PAGE_COLUMNS: [&str; 2] = ["page", "path"];
/// Top-level keys a login journey may have (its default think, variables,
/// headers and cookies would not carry over).
const LOGIN_KEYS: &[&str] = &["name", "description", "data", "steps"];

/// A login journey, ready to be written into a workload.
#[derive(Debug, Clone)]
pub struct LoginJourney {
    /// Its file as the user gave it.
    pub file: String,
    /// Its `steps:` block as written, each line as in the file.
    pub steps: Vec<String>,
    /// Its data file's column names and rows (none without `data:`).
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Reads and checks a login journey.
pub fn read_login(path: &Path) -> Result<LoginJourney, String> {
    // The workload's base URL serves its steps' paths: any stands in here.
    let stand_in = Target::parse("http://login.invalid/").map_err(|e| e.to_string())?;
    let scenario = parse_file(path, Some(&stand_in)).map_err(|e| e.to_string())?;
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    for line in text.lines() {
        let Some(key) = top_level_key(line) else {
            continue;
        };
        if !LOGIN_KEYS.contains(&key) {
            return Err(format!(
                "{shown}: a login journey has only steps: and data: (and name:, description:); its '{key}:' would not carry over into the workload: give the target with --target, and write headers, think times and redirects into the steps"
            ));
        }
    }
    if scenario.before.is_some() {
        return Err(format!("{shown}: a login journey cannot have before:"));
    }
    let steps = steps_block(text).ok_or_else(|| {
        format!("{shown}: write its steps: as a block, one '- ' item a line below steps: (not [ ... ] on one line)")
    })?;
    let (columns, rows) = match &scenario.data {
        Some(data) => {
            let names = scenario.vars.names();
            let columns: Vec<String> = data.columns.iter().map(|c| names[*c].clone()).collect();
            (columns, data.rows.clone())
        }
        None => (Vec::new(), Vec::new()),
    };
    if let Some(clash) = columns.iter().find(|c| PAGE_COLUMNS.contains(&c.as_str())) {
        return Err(format!(
            "{shown}: its data column '{clash}' is the workload's own (page, path): rename it in the login journey"
        ));
    }
    Ok(LoginJourney {
        file: shown.to_string(),
        steps,
        columns,
        rows,
    })
}

/// The key of a top-level line (`name: x` → `name`), None for the rest.
fn top_level_key(line: &str) -> Option<&str> {
    let first = line.chars().next()?;
    if first.is_whitespace() || first == '#' || first == '-' {
        return None;
    }
    line.split_once(':').map(|(key, _)| key.trim())
}

/// The lines under the top-level `steps:` up to the next top-level key.
fn steps_block(text: &str) -> Option<Vec<String>> {
    let mut lines = text.lines();
    lines.find(|line| {
        top_level_key(line) == Some("steps")
            && line
                .split_once(':')
                .is_some_and(|(_, rest)| rest.trim().is_empty() || rest.trim().starts_with('#'))
    })?;
    let block: Vec<String> = lines
        .take_while(|line| top_level_key(line).is_none())
        .map(str::to_string)
        .collect();
    block
        .iter()
        .any(|line| line.trim_start().starts_with('-'))
        .then_some(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_block_is_taken_as_written() {
        let text = "name: login\nsteps:\n  - label: login page\n    path: /login\n\n  # comment\n  - label: login\n    method: POST\ndata:\n  file: u.csv\n";
        assert_eq!(
            steps_block(text).unwrap(),
            vec![
                "  - label: login page",
                "    path: /login",
                "",
                "  # comment",
                "  - label: login",
                "    method: POST"
            ]
        );
        assert_eq!(steps_block("steps: [{label: a, path: /}]\n"), None);
        assert_eq!(top_level_key("think: 2s"), Some("think"));
        assert_eq!(top_level_key("  think: 2s"), None);
    }
}
