//! `headroom demo`: the whole job on this machine with embedded defaults:
//! the testbed (size S on SQLite in a temporary directory) on 127.0.0.1, a
//! short capacity search against it with its class of students (readers
//! and one poster in ten, each page loaded as a browser loads it, but no
//! time to read, so that the search takes seconds) and local monitoring,
//! the HTML report with the capacity curve, the verdict, and the answer in
//! students who read (a model: [`headroom_report::demo_text`]).
//! `--serve ADDR` serves a small built-in page instead (a worker pool of 4,
//! 5–40 ms per page, a 600–900 ms report every 25th page) to try scenarios.

use crate::args::{Cli, Command, DemoArgs};
use crate::execute::EXIT_CANNOT_RUN;
use headroom_testbed::background::BackgroundTestbed;
use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;

pub fn run(args: DemoArgs) -> ExitCode {
    if let Some(address) = args.serve {
        return serve_only(address);
    }
    let runtime = match crate::execute::current_thread_runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    runtime.block_on(capacity_demo(args))
}

/// The testbed (size S on SQLite in a temporary directory) served on
/// 127.0.0.1 until the returned value is dropped.
async fn start_testbed(quiet: bool) -> Result<BackgroundTestbed, String> {
    let dir = std::env::temp_dir().join(format!("headroom-demo-{}", std::process::id()));
    let testbed = headroom_testbed::background::start(dir).await?;
    if !quiet {
        eprintln!(
            "headroom demo: the testbed (size S: 100 users, 10 sections, 50 pages, a forum) on SQLite at {}/, \
             with its class: readers, and one in ten posting, each page loaded as a browser does",
            testbed.url
        );
    }
    Ok(testbed)
}

/// Starts the testbed, searches its capacity (local monitoring), writes
/// the HTML report, prints its path and the verdict, stops the testbed.
async fn capacity_demo(args: DemoArgs) -> ExitCode {
    let quiet = args.quiet || args.json;
    let testbed = match start_testbed(quiet).await {
        Ok(t) => t,
        Err(e) => {
            eprintln!("headroom: cannot start the demo testbed: {e}");
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| headroom_load::run::default_bundle_dir(Path::new("runs"), "demo"));
    let step = format!("{}ms", args.duration.as_millis());
    let mut argv: Vec<String> = [
        "headroom",
        "capacity",
        &testbed.url,
        "--scenario",
        &testbed.class.display().to_string(),
        // The students read nothing: their cycle is all server work.
        "--think",
        "0s",
        "--monitor",
        "local",
        "--apdex-target",
        "0.70",
        "--start",
        "10",
        "--step",
        "30",
        "--max",
        "1000",
        "--resolution",
        "40",
        "--step-duration",
        &step,
        "--warmup",
        "2s",
        "--warmup-min",
        "1s",
        "--min-step-duration",
        "2s",
        "--users-are",
        "non-stop students",
        "--out",
        &out.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if quiet {
        argv.push("--quiet".into());
    }
    let capacity = match <Cli as clap::Parser>::try_parse_from(&argv) {
        Ok(Cli {
            command: Command::Capacity(capacity),
        }) => *capacity,
        Ok(_) | Err(_) => {
            eprintln!("headroom: internal error building the demo's capacity arguments");
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    let searched = match crate::capacity_cmd::search(capacity).await {
        Ok(s) => s,
        Err(crate::execute::Failure::Usage(e)) | Err(crate::execute::Failure::CannotRun(e)) => {
            eprintln!("headroom: {}", crate::execute::describe(&e));
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    drop(testbed);
    let result = &searched.result;
    let value = serde_json::to_value(result).unwrap_or_default();
    let report = out.join("report.html");
    let html = headroom_report::capacity_html::render_capacity_report(result);
    if let Err(e) = std::fs::write(&report, html) {
        eprintln!("headroom: cannot write {}: {e}", report.display());
        return ExitCode::from(EXIT_CANNOT_RUN);
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else {
        println!("\nheadroom demo: {}", result.verdict);
        if let Some(line) = headroom_report::capacity::one_user(result) {
            println!("{line}");
        }
        println!("{}", headroom_report::demo_text::in_students(result));
        println!("Report: {}", report.display());
    }
    searched.code
}

/// `--serve`: the demo site alone, until the process is stopped.
fn serve_only(address: SocketAddr) -> ExitCode {
    match headroom_testbed::demo_site::start(address) {
        Ok(site) => {
            eprintln!(
                "headroom demo site on http://{}/ ({} workers); Ctrl-C stops it",
                site.addr,
                headroom_testbed::demo_site::WORKERS
            );
            loop {
                std::thread::park();
            }
        }
        Err(e) => {
            eprintln!(
                "headroom: cannot serve the demo site on {address}: {e}. Is the port in use?"
            );
            ExitCode::from(crate::execute::EXIT_CANNOT_RUN)
        }
    }
}
