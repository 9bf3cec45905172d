//! `headroom run FILE`: a scenario's journeys, profile from the file with
//! command-line flags on top. Flags → spec ([`crate::settings`]) → run
//! ([`headroom_load::assemble`]) → report.

use crate::args::RunArgs;
use crate::execute::{execute, Failure};
use std::process::ExitCode;

pub fn run(args: RunArgs) -> ExitCode {
    execute(&args.common, async {
        let spec = crate::settings::run_spec(&args)?;
        headroom_load::assemble::assemble(&spec)
            .await
            .map_err(Failure::assembly)
    })
}
