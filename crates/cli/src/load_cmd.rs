//! `headroom load`: one URL, closed or open model. Flags → spec
//! ([`crate::settings`]) → run ([`headroom_load::assemble`]) → report.

use crate::args::LoadArgs;
use crate::execute::{execute, Failure};
use std::process::ExitCode;

pub fn run(args: LoadArgs) -> ExitCode {
    execute(&args.common, async {
        let spec = crate::settings::load_spec(&args)?;
        headroom_load::assemble::assemble(&spec)
            .await
            .map_err(Failure::assembly)
    })
}
