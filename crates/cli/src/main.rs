//! The `headroom` binary: parses the command line and wires library stages
//! together. No measurement logic lives here.

mod args;
mod demo;
mod load_cmd;
mod signals;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let command_line: Vec<String> = std::env::args().collect();
    let cli = args::Cli::parse();
    match cli.command {
        args::Command::Load(load) => load_cmd::run(*load, command_line),
        args::Command::Demo(demo) => demo::run(demo, command_line),
    }
}
