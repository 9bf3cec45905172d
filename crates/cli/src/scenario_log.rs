//! `headroom scenario from-log ACCESS.LOG...`: a web server's access log as
//! a model of its users ([`headroom_load::traffic`] reads and models it);
//! this module prints the model, and on standard error what could not be
//! read.

use crate::args::FromLogArgs;
use crate::execute::EXIT_USAGE;
use headroom_import::access_log::read::LogReading;
use headroom_load::traffic::model::{read_model, TrafficModel};
use std::process::ExitCode;

pub fn run(args: FromLogArgs) -> ExitCode {
    let gap_ms = i64::try_from(args.idle.as_millis()).unwrap_or(i64::MAX);
    let (model, reading) = match read_model(
        &args.files,
        &args.format,
        args.session_cookie.as_deref(),
        gap_ms,
    ) {
        Ok(read) => read,
        Err(e) => {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if args.json {
        println!("{}", model.to_json(&reading));
    } else {
        print_model(&model, &reading);
    }
    warn(&reading);
    ExitCode::SUCCESS
}

fn print_model(model: &TrafficModel, reading: &LogReading) {
    println!(
        "access log: {} ({} lines, {} read)",
        reading
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        reading.lines,
        reading.entries
    );
    for line in model.describe() {
        println!("{line}");
    }
}

/// What could not be read, on standard error.
fn warn(reading: &LogReading) {
    if reading.bad > 0 {
        eprintln!(
            "headroom: warning: {} of {} lines ({:.2}%) are not in the format and were left out; the first:",
            reading.bad,
            reading.lines,
            100.0 * reading.bad_share()
        );
        for bad in &reading.bad_examples {
            eprintln!("  {}", bad.describe());
        }
    }
    if reading.backwards > 0 {
        eprintln!(
            "headroom: warning: {} requests are logged before the one above them (files that overlap, or a log written out of order); each counts from its own time",
            reading.backwards
        );
    }
    for problem in &reading.problems {
        eprintln!("headroom: warning: {problem}");
    }
}
