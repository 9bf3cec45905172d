//! `headroom bench [BENCHMARK...]`: the flags as
//! [`headroom_bench::options::BenchOptions`]; runs the host benchmarks,
//! writes the bench bundle after each, prints the table and where the host
//! stands, and writes the HTML report beside the bundle.

use crate::args::{BenchArgs, Monitor};
use crate::execute::{examine_host, EXIT_CANNOT_RUN, EXIT_INTERRUPTED, EXIT_USAGE};
use headroom_bench::options::{check_out, chosen, BenchOptions};
use headroom_bench::suite::BenchProgress;
use headroom_bundle::bench::{self as bundle, BenchBundle};
use headroom_report::bench_page::{bench_page, bench_text};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

fn now() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

pub fn run(args: BenchArgs) -> ExitCode {
    let (all, chosen) = chosen(&args.benchmarks, &mut |line| eprintln!("{line}"));
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| headroom_load::run::default_bundle_dir(Path::new("runs"), "bench"));
    if let Err(e) = check_flags(&args, &chosen).and_then(|()| check_out(&out)) {
        eprintln!("headroom: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    let (fingerprint, findings) = examine_host(false);
    if !args.json {
        for f in &findings {
            eprintln!("headroom: doctor: {}", f.message);
        }
    }
    let stop = stop_on_signal();
    let mut b = BenchBundle {
        schema_version: headroom_bundle::SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command_line: std::env::args().collect(),
        started: now(),
        ended: None,
        status: "running".into(),
        fingerprint,
        findings,
        results: Vec::new(),
        failures: Vec::new(),
    };
    // The bundle is written before the first benchmark: a directory that
    // cannot hold it is a usage error, not an hour of lost figures.
    if let Err(e) = bundle::write(&out, &b) {
        eprintln!("headroom: {e}: choose another --out");
        return ExitCode::from(EXIT_USAGE);
    }
    let mut unsaved = false;
    let mut save = |b: &BenchBundle| {
        if let Err(e) = bundle::write(&out, b) {
            eprintln!("headroom: {e}");
            unsaved = true;
        }
    };
    options(&args)
        .suite(all)
        .run(&chosen, &mut b, &stop, &mut |progress| match progress {
            BenchProgress::Starting { name, estimate } if !args.json => {
                eprintln!("headroom bench: {name} ({estimate}) ...")
            }
            BenchProgress::Starting { .. } => {}
            BenchProgress::Failed { name, error } => eprintln!("headroom: {name}: {error}"),
            BenchProgress::Updated(b) => save(b),
        });
    b.ended = Some(now());
    save(&b);
    finish(&args, &b, &out, unsaved)
}

/// The flags the chosen benchmarks cannot use as given.
fn check_flags(args: &BenchArgs, chosen: &[&str]) -> Result<(), String> {
    if chosen.contains(&"stack") {
        if let Some(t) = args.target.as_deref().filter(|t| !t.starts_with("http://")) {
            return Err(format!("--target {t}: the stack benchmark loads pages over plain HTTP; give an http:// URL"));
        }
    }
    if let Some(db) = args.db.as_deref().filter(|_| chosen.contains(&"stack")) {
        let lower = db.to_ascii_lowercase();
        let known = [
            "sqlite:",
            "postgres://",
            "postgresql://",
            "mysql://",
            "mariadb://",
        ];
        if !known.iter().any(|k| lower.starts_with(k)) || lower == "sqlite:" {
            return Err(format!(
                "--db {db}: write sqlite:FILE, postgres://USER:PASS@HOST/DB or mysql://USER:PASS@HOST/DB"
            ));
        }
    }
    if args.agent_token.is_some() && args.agent.is_none() {
        return Err("--agent-token without --agent: the network benchmark would measure loopback and not use it; give --agent http://HOST:PORT of the agent whose token it is, or leave --agent-token out".into());
    }
    Ok(())
}

/// Set once SIGINT or SIGTERM arrives.
fn stop_on_signal() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let signal = crate::signals::interrupt_on_signal();
    let set = stop.clone();
    std::thread::spawn(move || {
        if signal.blocking_recv().is_ok() {
            set.store(true, Ordering::Relaxed);
        }
    });
    stop
}

/// Writes the HTML report, prints the table (or the JSON) and where the
/// files are, and picks the exit code.
fn finish(args: &BenchArgs, b: &BenchBundle, out: &Path, mut unsaved: bool) -> ExitCode {
    let report = out.join("report.html");
    if let Err(e) = std::fs::write(&report, bench_page(b)) {
        eprintln!("headroom: cannot write {}: {e}", report.display());
        unsaved = true;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(b).unwrap_or_default());
    } else {
        print!("{}", bench_text(b, out, !unsaved));
    }
    if unsaved {
        eprintln!(
            "headroom: the bundle in {} could not be written whole: the figures above are all that is left",
            out.display()
        );
    }
    if b.status == "interrupted" {
        ExitCode::from(EXIT_INTERRUPTED)
    } else if !b.failures.is_empty() || unsaved {
        ExitCode::from(EXIT_CANNOT_RUN)
    } else {
        ExitCode::SUCCESS
    }
}

/// The benchmarks' settings from the flags.
fn options(args: &BenchArgs) -> BenchOptions {
    BenchOptions {
        repetitions: args.repetitions,
        threads: args.threads,
        cpu_time: args.cpu_time,
        max_prime: args.max_prime,
        compression_dictionary: args.compression_dictionary,
        compression_passes: args.compression_passes,
        rsa_bits: args.rsa_bits.clone(),
        crypto_time: args.crypto_time,
        elements: args.elements,
        path: args.path.clone(),
        file_size: args.file_size,
        dd_blocks: args.dd_blocks,
        commits: args.commits,
        queue_depth: args.queue_depth,
        device: args.device.clone(),
        reads_size: args.reads_size,
        fileio_files: args.fileio_files,
        fileio_size: args.fileio_size,
        fileio_blocks: args.fileio_blocks.0.clone(),
        fileio_time: args.fileio_time,
        agent: args.agent.as_ref().and_then(|m| match m {
            Monitor::Agent(authority) => Some(authority.clone()),
            Monitor::Local => None,
        }),
        agent_token: args.agent_token.clone(),
        link_capacity: args.link_capacity,
        net_time: args.net_time,
        round_trips: args.round_trips,
        idle: args.idle,
        stress: args.stress,
        cool: args.cool,
        settle: args.settle,
        db: args.db.clone(),
        target: args.target.clone(),
    }
}
