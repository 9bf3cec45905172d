//! `headroom report BUNDLE... [-o FILE]`.

use crate::args::ReportArgs;
use crate::execute::EXIT_CANNOT_RUN;
use headroom_report::html::render_report;
use headroom_report::run_data::RunData;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn run(args: ReportArgs) -> ExitCode {
    let mut runs = Vec::new();
    for dir in &args.bundles {
        match RunData::load(dir, "").and_then(RunData::with_latency) {
            Ok(run) => runs.push(run),
            Err(e) => {
                eprintln!("headroom: {e}");
                return ExitCode::from(EXIT_CANNOT_RUN);
            }
        }
    }
    let output = args
        .output
        .unwrap_or_else(|| match args.bundles.as_slice() {
            [one] => one.join("report.html"),
            _ => PathBuf::from("report.html"),
        });
    let html = render_report(&runs);
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
