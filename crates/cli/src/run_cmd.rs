//! `headroom run FILE`: a scenario's journeys, profile from the file with
//! command-line flags on top. Flags → spec ([`crate::settings`]) → run
//! ([`headroom_load::assemble`]) → report. `headroom run --spec FILE`
//! (hidden; what an experiment's runs are) runs exactly the spec a file
//! holds.

use crate::args::{CommonArgs, RunArgs};
use crate::execute::{execute, Failure, EXIT_USAGE};
use std::path::Path;
use std::process::ExitCode;

pub fn run(mut args: RunArgs) -> ExitCode {
    if let Some(path) = args.spec.take() {
        return run_spec_file(&path, args.common);
    }
    execute(&args.common, async {
        let spec = crate::settings::run_spec(&args)?;
        headroom_load::assemble::assemble(&spec)
            .await
            .map_err(Failure::assembly)
    })
}

/// `--spec FILE`: the spec as written; the flags beside it only say where
/// the bundle goes and how the run is reported.
fn run_spec_file(path: &Path, mut common: CommonArgs) -> ExitCode {
    let mut spec = match crate::settings::spec_file(path) {
        Ok(spec) => spec,
        Err(e) => {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    // The same run again, its bundle elsewhere.
    if let Some(out) = &common.out {
        spec.outputs.bundle_dir = Some(out.clone());
    }
    crate::settings::spec_monitors(&spec, &mut common);
    execute(&common, async move {
        headroom_load::assemble::assemble(&spec)
            .await
            .map_err(Failure::assembly)
    })
}
