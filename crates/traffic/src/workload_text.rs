//! The words of `headroom scenario from-log`: the model as the terminal
//! shows it ([`model_lines`]) and the workload written beside it, read back as
//! `run` reads it and described ([`write_workload`]). The CLI checks the
//! flags and prints.

use crate::traffic::model::TrafficModel;
use crate::traffic::workload::{workload, Fate, LogWorkload, LogWorkloadInput, PageViewCost, Walk};
use headroom_http::target::Target;
use headroom_import::access_log::read::LogReading;
use std::path::Path;

/// The data file of the pages, beside the workload.
pub const PAGES_FILE: &str = "pages.csv";
/// The login's accounts, beside the workload (readable by its owner only).
pub const ACCOUNTS_FILE: &str = "accounts.csv";

/// The rows of each page pattern sent again.
fn sent_rows(written: &LogWorkload) -> Vec<usize> {
    written
        .fates
        .iter()
        .filter_map(|f| match f.2 {
            Fate::Sent { rows } => Some(rows),
            _ => None,
        })
        .collect()
}

/// Writes the model as DIR/workload.yaml and DIR/pages.csv (and the
/// login's accounts), reads it back as `run` would, and returns what it
/// holds, line by line (the CLI prints them, on standard error under
/// `--json`).
pub fn write_workload(
    model: &TrafficModel,
    source: &LogWorkloadInput<'_>,
    dir: &Path,
) -> Result<Vec<String>, String> {
    if model.mix_requests() == 0 {
        return Err(format!(
            "no workload written to {}: the log has no pages (its {} requests were all style sheets, scripts, images, fonts, or what pages loaded); the model above is all this log gives",
            dir.display(),
            model.requests
        ));
    }
    let written = workload(model, source);
    let sent = sent_rows(&written);
    if sent.is_empty() {
        return Err(format!(
            "no workload written to {}: none of the log's pages can be sent again (each was a form sent, a redirect, an error, or carried a token); the model above is all this log gives",
            dir.display()
        ));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the directory {}: {e}", dir.display()))?;
    let scenario_path = dir.join("workload.yaml");
    for (path, text) in [
        (&scenario_path, &written.scenario),
        (&dir.join(source.pages_file), &written.pages_csv),
    ] {
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let accounts_path = dir.join(source.accounts_file);
    if let Some(accounts) = &written.accounts_csv {
        headroom_units::secret::write_private(&accounts_path, accounts.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", accounts_path.display()))?;
    }
    // Read back as `run` reads it (without --target, as `run --target` would).
    let stand_in = match source.target {
        None => Some(Target::parse("http://127.0.0.1/").map_err(|e| e.to_string())?),
        Some(_) => None,
    };
    headroom_journey::scenario::parse_file(&scenario_path, stand_in.as_ref()).map_err(|e| {
        format!("the workload written does not read back (a fault of headroom's; please report it): {e}")
    })?;
    Ok(written_lines(model, source, &written, dir))
}

/// What the workload written holds, in words.
fn written_lines(
    model: &TrafficModel,
    source: &LogWorkloadInput<'_>,
    written: &LogWorkload,
    dir: &Path,
) -> Vec<String> {
    let scenario_path = dir.join("workload.yaml");
    let accounts_path = dir.join(source.accounts_file);
    let sent: Vec<usize> = sent_rows(written);
    let mut lines = vec![format!(
        "workload: {} ({} of the log's {} page patterns, in {} rows of {}){}",
        scenario_path.display(),
        sent.len(),
        written.fates.len(),
        sent.iter().sum::<usize>(),
        dir.join(source.pages_file).display(),
        if written.page_loads {
            "; pages loaded as a browser does"
        } else {
            ""
        }
    )];
    lines.push(walk_line(&written.walk));
    match &written.peak {
        Some(peak) => lines.push(format!(
            "  users: {} at the peak ({} pages at {} UTC, each user reading {:.1} s between pages on average)",
            peak.users, peak.pages, peak.minute, peak.think_s
        )),
        None => lines.push(
            "  users: no session read two pages, so the log gives no reading time: give the profile yourself (-c, --think)"
                .to_string(),
        ),
    }
    if let (Some(login), Some(_)) = (source.login, &written.accounts_csv) {
        lines.push(format!(
            "  accounts: {} ({} of {}, with their passwords: readable by you only); user n logs in with row n",
            accounts_path.display(),
            headroom_units::quantity::count(login.rows.len(), "account", "accounts"),
            login.file
        ));
        if let Some(peak) = written
            .peak
            .as_ref()
            .filter(|p| p.users as usize > login.rows.len())
        {
            lines.push(format!(
                "  {} users, {} accounts: {} users share an account (past the last row, users start from the top again); add accounts to the login's data file to log each user in as its own",
                peak.users,
                login.rows.len(),
                peak.users as usize - login.rows.len()
            ));
        }
    }
    if written.page_loads {
        let cost = model.page_view_cost();
        lines.push(format!(
            "  page views: the log's cost {:.1} requests each ({} requests, {} pages seen); each page loads what its HTML names{}",
            cost.per_view(cost.requests),
            cost.requests,
            cost.views,
            learned_text(&cost)
        ));
        if let Some(text) = cost.not_learned_text() {
            lines.push(format!(
                "  not learned from the log (sent only where a page's HTML names them): {text}"
            ));
        }
    }
    let left: Vec<&(String, u64, Fate)> = written.fates.iter().filter(|f| !f.2.is_sent()).collect();
    if !left.is_empty() {
        lines.push(format!(
            "  left out: {} ({:.1}% of page requests), each with its reason in the file's header",
            headroom_units::quantity::count(left.len(), "pattern", "patterns"),
            100.0 * left.iter().map(|f| f.1).sum::<u64>() as f64
                / model.mix_requests().max(1) as f64
        ));
    }
    lines.push(format!(
        "  run it: headroom run {}{}",
        scenario_path.display(),
        if source.target.is_none() {
            " --target URL"
        } else {
            ""
        }
    ));
    // The class answer: how many of these users arriving as a lesson
    // starts the server holds.
    lines.push(format!(
        "  the lesson: headroom capacity --scenario {} {} --arrive-within 60s --users-are students",
        scenario_path.display(),
        source.target.unwrap_or("URL")
    ));
    lines
}

/// How the workload's users choose their next page, in words.
fn walk_line(walk: &Walk) -> String {
    match walk {
        Walk::Sessions { login_pages, .. } => format!(
            "  next page: as the log's sessions walked, each taken by a user as a new visitor (no cookies, an empty cache): {}{}",
            walk.sample_words(),
            if *login_pages > 0 {
                format!("; each visit logs in first, and the login sends its own pages ({login_pages} of the visits')")
            } else {
                String::new()
            }
        ),
        Walk::Mix(why) => format!("  next page: drawn from the log's mix: {}", why.words()),
    }
}

/// What the page loads fetch besides what the HTML names: "" when nothing.
fn learned_text(cost: &PageViewCost) -> String {
    use headroom_units::quantity::count;
    let mut parts = Vec::new();
    if cost.learned > 0 {
        parts.push(format!(
            "the {} learned from the log for {}",
            count(cost.learned, "resource", "resources"),
            count(cost.learned_patterns, "pattern", "patterns")
        ));
    }
    if cost.own > 0 {
        parts.push(format!(
            "{} learned for single pages (in the data file)",
            count(cost.own, "resource", "resources"),
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" and {} (also_loads)", parts.join(", and "))
    }
}

/// The model as the terminal shows it: the files read, then the model.
pub fn model_lines(model: &TrafficModel, reading: &LogReading) -> Vec<String> {
    let mut lines = vec![format!(
        "access log: {} ({} lines, {} read)",
        reading
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        reading.lines,
        reading.entries
    )];
    lines.extend(model.describe());
    lines
}
