//! The `headroom` binary: parses the command line and wires library stages
//! together. No measurement logic lives here.

mod agent_cmd;
mod args;
mod capacity_cmd;
mod compare_cmd;
mod demo;
mod doctor_cmd;
mod execute;
mod load_cmd;
mod report_cmd;
mod run_cmd;
mod scenario_cmd;
mod signals;
mod testbed_cmd;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match cli.command {
        args::Command::Load(load) => load_cmd::run(*load),
        args::Command::Run(run) => run_cmd::run(*run),
        args::Command::Scenario(command) => scenario_cmd::run(command),
        args::Command::Doctor(doctor) => doctor_cmd::run(doctor),
        args::Command::Agent(agent) => agent_cmd::run(agent),
        args::Command::Demo(demo) => demo::run(demo),
        args::Command::Testbed(command) => testbed_cmd::run(command),
        args::Command::Compare(compare) => compare_cmd::run(compare),
        args::Command::Report(report) => report_cmd::run(report),
        args::Command::Capacity(capacity) => capacity_cmd::run(*capacity),
    }
}
