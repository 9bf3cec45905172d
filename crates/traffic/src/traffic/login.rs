//! The login a log's users went through, which a log cannot show (it has
//! no form bodies): a journey file of the steps that log one user in, with
//! the data file of its accounts. The workload runs its steps once for each
//! visit (each a new visitor; once for each user when it draws from the
//! mix), before the pages; its accounts are the workload's `accounts:`, a
//! row a user (user n logs in with row n), in a file of their own that
//! only its owner may read.

use super::model::pattern_of;
use super::yaml_text::quote;
use headroom_http::target::Target;
use headroom_journey::scenario::parse_file;
use std::path::Path;

/// Data columns of the pages, which a login's may not reuse.
pub const PAGE_COLUMNS: [&str; 4] = ["visit", "page", "path", "also"];
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
    /// The pages its GET steps ask for (path and query, written out): a
    /// visit that logs in sends each once, so they are not its rows too.
    pub pages: Vec<String>,
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
            "{shown}: its data column '{clash}' is the workload's own ({}): rename it in the login journey",
            PAGE_COLUMNS.join(", ")
        ));
    }
    Ok(LoginJourney {
        file: shown.to_string(),
        steps,
        columns,
        rows,
        pages: get_targets(&scenario),
    })
}

/// The targets of a journey's GET steps whose path and query are written
/// out (no variable in them).
fn get_targets(scenario: &headroom_journey::scenario::Scenario) -> Vec<String> {
    let mut targets: Vec<String> = scenario
        .requests
        .iter()
        .filter(|step| step.method == "GET")
        .filter_map(|step| {
            let mut target = step.path.literal_text()?;
            for (i, (key, value)) in step.query.iter().enumerate() {
                target.push(if i == 0 && !target.contains('?') {
                    '?'
                } else {
                    '&'
                });
                target.push_str(&key.literal_text()?);
                target.push('=');
                target.push_str(&value.literal_text()?);
            }
            Some(target)
        })
        .collect();
    targets.sort();
    targets.dedup();
    targets
}

impl LoginJourney {
    /// Its steps' lines, each step (at any depth, written as a block or as
    /// `- {label: ..., path: ...}`) that GETs a written-out path given
    /// `also_loads:` of what `also` returns for its page pattern (what the
    /// log's browsers fetched with that page: its scripts' requests),
    /// unless it has its own. The comment says why.
    pub fn steps_with(&self, also: impl Fn(&str) -> Vec<String>) -> Vec<String> {
        let mut lines = Vec::with_capacity(self.steps.len());
        for (at, line) in self.steps.iter().enumerate() {
            let Some(item) = line.trim_start().strip_prefix("- ") else {
                lines.push(line.clone());
                continue;
            };
            let base = indent(line);
            let end = (at + 1..self.steps.len())
                .find(|&i| {
                    let next = &self.steps[i];
                    !next.trim().is_empty() && indent(next) <= base
                })
                .unwrap_or(self.steps.len());
            let flow = item.trim_start().starts_with('{');
            let key = |name: &str| {
                if flow {
                    flow_key(item, name)
                } else {
                    block_key(&self.steps[at..end], base, name)
                }
            };
            let resources = key("path")
                .filter(|_| key("method").is_none_or(|m| m.eq_ignore_ascii_case("get")))
                .filter(|_| key("also_loads").is_none())
                .filter(|path| !path.contains("${"))
                .map(|path| also(&pattern_of(path.as_bytes())))
                .unwrap_or_default();
            if resources.is_empty() {
                lines.push(line.clone());
                continue;
            }
            let list: Vec<String> = resources.iter().map(|r| quote(r)).collect();
            let list = format!("also_loads: [{}]", list.join(", "));
            match line.rfind('}').filter(|_| flow) {
                Some(close) => lines.push(format!(
                    "{}, {list}{}   # also_loads: fetched with this page in the log",
                    &line[..close],
                    &line[close..]
                )),
                None => {
                    lines.push(line.clone());
                    lines.push(format!(
                        "{}{list}   # fetched with this page in the log: what its scripts ask for",
                        " ".repeat(base + 2)
                    ));
                }
            }
        }
        lines
    }
}

/// The spaces a line starts with.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A value unquoted, without a comment after it.
fn bare(value: &str) -> &str {
    let value = value.split(" #").next().unwrap_or_default().trim();
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(value)
}

/// The value of `key` in a step's block (its first line `- key: value`, or
/// a line of its own two spaces in).
fn block_key<'a>(block: &'a [String], base: usize, key: &str) -> Option<&'a str> {
    block.iter().enumerate().find_map(|(i, line)| {
        let text = if i == 0 {
            line.trim_start().strip_prefix("- ")?
        } else if indent(line) == base + 2 {
            line.trim_start()
        } else {
            return None;
        };
        Some(bare(text.strip_prefix(key)?.strip_prefix(':')?))
    })
}

/// The value of `key` in a one-line flow map (`{label: a, path: /x}`).
fn flow_key<'a>(item: &'a str, key: &str) -> Option<&'a str> {
    let inner = item.trim_start().strip_prefix('{')?;
    let inner = &inner[..inner.rfind('}')?];
    inner.split(',').find_map(|pair| {
        let (name, value) = pair.split_once(':')?;
        (name.trim() == key).then(|| bare(value))
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

    /// A GET step whose page the log's browsers fetched resources with
    /// gets them as `also_loads:`; a POST, a templated path, and a step with
    /// its own do not.
    #[test]
    fn a_login_page_loads_what_the_logs_browsers_fetched_with_it() {
        let steps = "  - label: login page\n    path: \"/wp-login.php?redirect_to=%2F\"   # the form\n    think: 0s\n  - label: login\n    method: POST\n    path: /wp-login.php\n  - label: own\n    path: /wp-login.php?x=1\n    also_loads: [/a.js]\n  - label: mine\n    path: /u/${user}\n";
        let login = LoginJourney {
            file: "login.yaml".into(),
            steps: steps.lines().map(str::to_string).collect(),
            columns: Vec::new(),
            rows: Vec::new(),
            pages: Vec::new(),
        };
        let lines = login.steps_with(|pattern| {
            assert_ne!(pattern, "/u/*");
            if pattern.starts_with("/wp-login.php") {
                vec!["/wp-includes/js/zxcvbn.min.js".to_string()]
            } else {
                Vec::new()
            }
        });
        assert_eq!(lines.len(), login.steps.len() + 1);
        assert_eq!(
            lines[1],
            "    also_loads: [\"/wp-includes/js/zxcvbn.min.js\"]   # fetched with this page in the log: what its scripts ask for"
        );
        assert_eq!(
            lines[2],
            "    path: \"/wp-login.php?redirect_to=%2F\"   # the form"
        );
        assert_eq!(lines[4..], login.steps[3..]);
        // In a group, and as a flow map.
        let nested = LoginJourney {
            steps: "  - group: in\n    steps:\n      - label: page\n        path: /wp-login.php\n  - {label: flow, path: /wp-login.php}   # here\n  - {label: post, method: POST, path: /wp-login.php}\n"
                .lines()
                .map(str::to_string)
                .collect(),
            ..login
        };
        let lines = nested.steps_with(|_| vec!["/z.js".to_string()]);
        assert_eq!(
            lines[3],
            "        also_loads: [\"/z.js\"]   # fetched with this page in the log: what its scripts ask for"
        );
        assert_eq!(
            lines[5],
            "  - {label: flow, path: /wp-login.php, also_loads: [\"/z.js\"]}   # here   # also_loads: fetched with this page in the log"
        );
        assert_eq!(lines[6], nested.steps[5]);
    }
}
