//! `headroom scenario check|init|try` (try in [`crate::scenario_try`]; what
//! check says in [`headroom_journey::check_text`]).

use crate::args::ScenarioCommand;
use crate::execute::EXIT_USAGE;
use headroom_http::target::Target;
use headroom_journey::check_text::{checked_lines, mix_lines};
use headroom_journey::scenario::jmx as jmx_input;
use headroom_journey::scenario::{mix, Scenario};
use std::process::ExitCode;

/// A commented example, valid as it is against a site on 127.0.0.1:8080.
pub const EXAMPLE: &str = include_str!("../../../scenarios/example.yaml");

/// `scenario from-jmx`: the converted scenario, checked, on stdout or in
/// a file; what was converted and what not on stderr.
fn from_jmx(args: crate::args::FromJmxArgs) -> ExitCode {
    let fail = |e: String| {
        eprintln!("headroom: {e}");
        ExitCode::from(EXIT_USAGE)
    };
    let properties = match jmx_input::properties(&args.jmeter_property) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let converted = match jmx_input::convert(&args.file, &properties) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    if let Err(e) = jmx_input::refuse_if_strict(&args.file, &converted, args.strict) {
        return fail(e);
    }
    // Written even when it does not pass the check, so that the line the
    // error names can be read.
    let checked = jmx_input::check(&args.file, &converted.yaml, None);
    match &args.out {
        Some(out) => {
            if let Err(e) = std::fs::write(out, &converted.yaml) {
                return fail(format!("cannot write {}: {e}", out.display()));
            }
        }
        None => print!("{}", converted.yaml),
    }
    for line in &converted.converted {
        eprintln!("  converted: {line}");
    }
    for line in &converted.not_converted {
        eprintln!("  not converted: {line}");
    }
    match checked {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => fail(format!(
            "the converted scenario does not pass scenario check: {e}"
        )),
    }
}

/// `scenario check` of a checked scenario: what it holds.
fn say_checked(file: &std::path::Path, s: &Scenario) {
    for line in checked_lines(file, s, "") {
        println!("{line}");
    }
}

/// `scenario check` of a mix: the mix and every journey it names.
fn check_mix(file: &std::path::Path, target: Option<&Target>) -> ExitCode {
    match mix::read(file, target) {
        Ok(mix::Workfile::Mix(mix)) => {
            for line in mix_lines(file, &mix) {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Ok(mix::Workfile::Scenario(s)) => {
            say_checked(file, &s);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("headroom: {e}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

pub fn run(command: ScenarioCommand) -> ExitCode {
    match command {
        ScenarioCommand::Try(args) => crate::scenario_try::run(args),
        ScenarioCommand::FromHar(args) => crate::scenario_har::run(args),
        ScenarioCommand::FromLog(args) => crate::scenario_log::run(args),
        ScenarioCommand::FromJmx(args) => from_jmx(args),
        ScenarioCommand::Init => {
            print!("{EXAMPLE}");
            ExitCode::SUCCESS
        }
        ScenarioCommand::Check {
            file,
            target,
            jmeter_property,
        } => {
            let properties = match jmx_input::properties(&jmeter_property) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("headroom: {e}");
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            if headroom_journey::scenario::mix::is_mix_file(&file) {
                return check_mix(&file, target.as_ref());
            }
            match jmx_input::scenario(&file, target.as_ref(), &properties, false) {
                Ok(s) => {
                    say_checked(&file, &s);
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("headroom: {e}");
                    ExitCode::from(EXIT_USAGE)
                }
            }
        }
    }
}
