//! The `headroom` binary: parses the command line and wires library stages
//! together. No measurement logic lives here.

mod agent_cmd;
mod args;
mod bench_cmd;
mod capacity_cmd;
mod compare_cmd;
mod demo;
mod doctor_cmd;
mod emulate_cmd;
mod execute;
mod experiment_cmd;
mod load_cmd;
mod merge_cmd;
mod predict_cmd;
mod replay_cmd;
mod report_cmd;
mod run_cmd;
mod scenario_cmd;
mod scenario_har;
mod scenario_log;
mod scenario_try;
mod settings;
mod signals;
mod testbed_cmd;

use clap::Parser;
use std::os::unix::ffi::OsStrExt;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::InvalidUtf8 => {
            eprintln!("headroom: {}", not_utf8_argument());
            return ExitCode::from(execute::EXIT_USAGE);
        }
        Err(e) => e.exit(),
    };
    match cli.command {
        args::Command::Load(load) => load_cmd::run(*load),
        args::Command::Run(run) => run_cmd::run(*run),
        args::Command::Scenario(command) => scenario_cmd::run(command),
        args::Command::Doctor(doctor) => doctor_cmd::run(doctor),
        args::Command::Agent(agent) => agent_cmd::run(agent),
        args::Command::Demo(demo) => demo::run(demo),
        args::Command::Testbed(command) => testbed_cmd::run(command),
        args::Command::Compare(compare) => compare_cmd::run(compare),
        args::Command::Merge(merge) => merge_cmd::run(merge),
        args::Command::Report(report) => report_cmd::run(report),
        args::Command::Capacity(capacity) => capacity_cmd::run(*capacity),
        args::Command::Experiment(experiment) => experiment_cmd::run(experiment),
        args::Command::Bench(bench) => bench_cmd::run(*bench),
        args::Command::Replay(replay) => replay_cmd::run(*replay),
        args::Command::Predict(predict) => predict_cmd::run(predict),
        args::Command::Emulate(emulate) => emulate_cmd::run(emulate),
    }
}

/// Names the argument that is not UTF-8 (clap only says that one is):
/// paths may be any bytes, but URLs, headers and labels are text.
fn not_utf8_argument() -> String {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let Some(at) = args
        .iter()
        .position(|a| std::str::from_utf8(a.as_bytes()).is_err())
    else {
        return "an argument is not valid UTF-8 text".into();
    };
    let shown = args[at].to_string_lossy();
    match args.get(at.wrapping_sub(1)).map(|a| a.to_string_lossy()) {
        Some(flag) if flag.starts_with('-') => format!(
            "the value of {flag} ('{shown}') is not valid UTF-8 text: URLs, headers and labels must be text (percent-encode other bytes in a URL, e.g. %FF)"
        ),
        _ => format!(
            "the argument '{shown}' is not valid UTF-8 text: URLs, headers and labels must be text (percent-encode other bytes in a URL, e.g. %FF)"
        ),
    }
}
