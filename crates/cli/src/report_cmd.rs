//! `headroom report BUNDLE... [-o FILE]`.

use crate::args::ReportArgs;
use crate::execute::EXIT_CANNOT_RUN;
use headroom_report::capacity_html::render_capacity_report;
use headroom_report::html::render_report;
use headroom_report::run_data::RunData;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn run(args: ReportArgs) -> ExitCode {
    if let [one] = args.bundles.as_slice() {
        let capacity = one.join("capacity.json");
        if capacity.exists() && !one.join("manifest.json").exists() {
            return capacity_report(
                &capacity,
                args.output.unwrap_or_else(|| one.join("report.html")),
            );
        }
    }
    let mut runs = Vec::new();
    for dir in &args.bundles {
        match RunData::load(dir, "").and_then(RunData::with_latency) {
            Ok(run) => {
                crate::compare_cmd::say_if_recovered(&run);
                runs.push(run)
            }
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
    write(&output, render_report(&runs))
}

/// The report of a capacity search (its bundle holds capacity.json).
fn capacity_report(file: &Path, output: PathBuf) -> ExitCode {
    let value: serde_json::Value = match std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|text| {
            serde_json::from_str(&text)
                .map_err(|e| format!("not valid JSON ({e}); the file is truncated"))
        }) {
        Ok(value) => value,
        Err(e) => {
            eprintln!("headroom: {}: {e}", file.display());
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    if value.get("schema_version").and_then(|v| v.as_u64()) != Some(1) {
        eprintln!(
            "headroom: {}: not a capacity result of schema version 1: use a matching headroom version",
            file.display()
        );
        return ExitCode::from(EXIT_CANNOT_RUN);
    }
    let verdict = value
        .get("verdict")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    write(&output, render_capacity_report(&value, &verdict))
}

fn write(output: &Path, html: String) -> ExitCode {
    match std::fs::write(output, html) {
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
