//! `headroom scenario check|init|try` (try in [`crate::scenario_try`]).

use crate::args::ScenarioCommand;
use crate::execute::EXIT_USAGE;
use headroom_load::scenario::{parse_file, LabelKind};
use std::process::ExitCode;

/// A commented example, valid as it is against a site on 127.0.0.1:8080.
pub const EXAMPLE: &str = include_str!("../../../scenarios/example.yaml");

pub fn run(command: ScenarioCommand) -> ExitCode {
    match command {
        ScenarioCommand::Try(args) => crate::scenario_try::run(args),
        ScenarioCommand::FromHar(args) => crate::scenario_har::run(args),
        ScenarioCommand::Init => {
            print!("{EXAMPLE}");
            ExitCode::SUCCESS
        }
        ScenarioCommand::Check { file, target } => match parse_file(&file, target.as_ref()) {
            Ok(s) => {
                let requests = s.requests.len();
                let groups = s
                    .labels
                    .iter()
                    .filter(|l| l.kind == LabelKind::Group)
                    .count();
                println!(
                    "{}: OK: {requests} request steps, {groups} groups, {} labels, {} checks, {} variables",
                    file.display(),
                    s.labels.len(),
                    s.checks.len(),
                    s.vars.len()
                );
                if let Some(data) = &s.data {
                    println!("  data: {} ({} rows)", data.file.display(), data.rows.len());
                }
                for origin in &s.origins {
                    println!("  target: {}", origin.url);
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("headroom: {e}");
                ExitCode::from(EXIT_USAGE)
            }
        },
    }
}
