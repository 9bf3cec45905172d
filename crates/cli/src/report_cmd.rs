//! `headroom report BUNDLE... [-o FILE]`: JMeter results files imported
//! first; the page and where it goes are
//! [`headroom_report::report_input`]'s; this module writes it and prints its
//! path.

use crate::args::ReportArgs;
use crate::execute::EXIT_CANNOT_RUN;
use headroom_bundle::jtl_input::resolve;
use headroom_report::report_input::report_page;
use std::process::ExitCode;

pub fn run(mut args: ReportArgs) -> ExitCode {
    // A JMeter results file (JTL) is imported into a bundle first (beside
    // it), and reported like any run.
    let command_line = || std::env::args().collect();
    for path in &mut args.bundles {
        match resolve(path, &command_line, &mut |line| eprintln!("{line}")) {
            Ok(bundle) => *path = bundle,
            Err(e) => {
                eprintln!("headroom: {e}");
                return ExitCode::from(EXIT_CANNOT_RUN);
            }
        }
    }
    let (output, html) =
        match report_page(&args.bundles, args.output, &mut |line| eprintln!("{line}")) {
            Ok(page) => page,
            Err(e) => {
                eprintln!("headroom: {e}");
                return ExitCode::from(EXIT_CANNOT_RUN);
            }
        };
    match std::fs::write(&output, html) {
        Ok(()) => {
            println!("{}", output.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("headroom: cannot write {}: {e}", output.display());
            ExitCode::from(EXIT_CANNOT_RUN)
        }
    }
}
