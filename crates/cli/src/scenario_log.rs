//! `headroom scenario from-log ACCESS.LOG...`: a web server's access log as
//! a model of its users ([`headroom_traffic::traffic`] reads and models it);
//! this module prints the model, and on standard error what could not be
//! read.

use crate::args::FromLogArgs;
use crate::execute::EXIT_USAGE;
use headroom_http::target::Target;
use headroom_import::access_log::read::LogReading;
use headroom_traffic::traffic::login::read_login;
use headroom_traffic::traffic::model::{read_model, TrafficModel};
use headroom_traffic::traffic::workload::{workload, Fate, LogWorkloadInput};
use std::path::Path;
use std::process::ExitCode;

/// The data file of the pages, beside the workload.
const PAGES_FILE: &str = "pages.csv";
/// The login's accounts, beside the workload (readable by its owner only).
const ACCOUNTS_FILE: &str = "accounts.csv";

pub fn run(args: FromLogArgs) -> ExitCode {
    if let Some(target) = &args.target {
        if let Err(e) = Target::parse(target) {
            eprintln!("headroom: --target: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    }
    let gap_ms = i64::try_from(args.idle.as_millis()).unwrap_or(i64::MAX);
    let (model, reading) = match read_model(
        &args.files,
        &args.format,
        args.session_cookie.as_deref(),
        gap_ms,
    ) {
        Ok(read) => read,
        Err(e) => {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if args.json {
        println!("{}", model.to_json(&reading));
    } else {
        print_model(&model, &reading);
    }
    warn(&reading);
    if let Some(path) = &args.html {
        let files: Vec<String> = reading
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        let page = headroom_report::traffic_html::render_traffic_report(&model, &files);
        if let Err(e) = std::fs::write(path, page) {
            eprintln!("headroom: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        let line = format!("page: {}", path.display());
        if args.json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }
    if let Some(dir) = &args.out {
        let logs: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
        let login = match args.login.as_deref().map(read_login).transpose() {
            Ok(login) => login,
            Err(e) => {
                eprintln!("headroom: --login {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        };
        let source = LogWorkloadInput {
            logs: &logs,
            pages_file: PAGES_FILE,
            accounts_file: ACCOUNTS_FILE,
            target: args.target.as_deref(),
            login: login.as_ref(),
        };
        if let Err(e) = write_workload(&model, &source, dir, args.json) {
            eprintln!("headroom: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// Writes the model as DIR/workload.yaml and DIR/pages.csv, reads it back
/// as `run` would, and says what it holds (on standard error under
/// `--json`).
fn write_workload(
    model: &TrafficModel,
    source: &LogWorkloadInput<'_>,
    dir: &Path,
    json: bool,
) -> Result<(), String> {
    if model.mix_requests() == 0 {
        return Err(format!(
            "no workload written to {}: the log has no pages (its {} requests were all style sheets, scripts, images, fonts, or what pages loaded); the model above is all this log gives",
            dir.display(),
            model.requests
        ));
    }
    let written = workload(model, source);
    let sent: Vec<usize> = written
        .fates
        .iter()
        .filter_map(|f| match f.2 {
            Fate::Sent { rows } => Some(rows),
            _ => None,
        })
        .collect();
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
        (&dir.join(PAGES_FILE), &written.pages_csv),
    ] {
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let accounts_path = dir.join(ACCOUNTS_FILE);
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
    let mut lines = vec![format!(
        "workload: {} ({} of the log's {} page patterns, in {} rows of {}){}",
        scenario_path.display(),
        sent.len(),
        written.fates.len(),
        sent.iter().sum::<usize>(),
        dir.join(PAGES_FILE).display(),
        if written.page_loads {
            "; pages loaded as a browser does"
        } else {
            ""
        }
    )];
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
    let left: Vec<&(String, u64, Fate)> = written
        .fates
        .iter()
        .filter(|f| !matches!(f.2, Fate::Sent { .. }))
        .collect();
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
    for line in lines {
        if json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }
    Ok(())
}

fn print_model(model: &TrafficModel, reading: &LogReading) {
    println!(
        "access log: {} ({} lines, {} read)",
        reading
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        reading.lines,
        reading.entries
    );
    for line in model.describe() {
        println!("{line}");
    }
}

/// What could not be read, on standard error.
fn warn(reading: &LogReading) {
    for line in reading.warnings() {
        if line.starts_with("  ") {
            eprintln!("{line}");
        } else {
            eprintln!("headroom: {line}");
        }
    }
}
