//! `headroom scenario from-log ACCESS.LOG...`: a web server's access log as
//! a model of its users ([`headroom_traffic::traffic`] reads and models it,
//! [`headroom_traffic::workload_text`] words it and writes the workload);
//! this module prints the model, and on standard error what could not be
//! read.

use crate::args::FromLogArgs;
use crate::execute::EXIT_USAGE;
use headroom_http::target::Target;
use headroom_traffic::traffic::login::read_login;
use headroom_traffic::traffic::model::read_model;
use headroom_traffic::traffic::workload::{LogWorkloadInput, NextPage};
use headroom_traffic::workload_text::{model_lines, write_workload, ACCOUNTS_FILE, PAGES_FILE};
use std::process::ExitCode;

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
        for line in model_lines(&model, &reading) {
            println!("{line}");
        }
    }
    // What could not be read, on standard error.
    for line in reading.said_warnings() {
        eprintln!("{line}");
    }
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
            next_page: match args.next_page.as_str() {
                "mix" => NextPage::Mix,
                "sessions" => NextPage::Sessions,
                _ => NextPage::Auto,
            },
        };
        match write_workload(&model, &source, dir) {
            Ok(lines) => {
                for line in lines {
                    if args.json {
                        eprintln!("{line}");
                    } else {
                        println!("{line}");
                    }
                }
            }
            Err(e) => {
                eprintln!("headroom: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
