//! `headroom bench [BENCHMARK...]`: runs the host benchmarks, writes the
//! bench bundle after each, prints the table and where the host stands,
//! and writes the HTML report beside the bundle.

use crate::args::{BenchArgs, Monitor};
use crate::execute::{examine_host, EXIT_CANNOT_RUN, EXIT_INTERRUPTED, EXIT_USAGE};
use headroom_bench::compression::CompressionOptions;
use headroom_bench::cpu::CpuOptions;
use headroom_bench::crypto::CryptoOptions;
use headroom_bench::fileio::FileioOptions;
use headroom_bench::memory::MemoryOptions;
use headroom_bench::network::NetworkOptions;
use headroom_bench::reads::ReadsOptions;
use headroom_bench::stack::StackOptions;
use headroom_bench::storage::StorageOptions;
use headroom_bench::suite::{BenchProgress, Suite};
use headroom_bench::thermal::ThermalOptions;
use headroom_bench::{cores, BENCHMARKS};
use headroom_bundle::bench::{self as bundle, BenchBundle};
use headroom_report::bench_html::{render_bench_report, ReferenceRow};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

fn now() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

pub fn run(args: BenchArgs) -> ExitCode {
    let all = args.benchmarks.is_empty() || args.benchmarks.iter().any(|b| b == "all");
    let chosen: Vec<&str> = BENCHMARKS
        .iter()
        .copied()
        .filter(|b| all || args.benchmarks.iter().any(|x| x == b))
        .filter(|b| !all || installed(b))
        .collect();
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
    suite(&args, all).run(&chosen, &mut b, &stop, &mut |progress| match progress {
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

/// Whether the program a benchmark runs is here; when every benchmark
/// runs, one whose program is missing is left out with a word (named
/// alone, it fails and says what to install).
fn installed(benchmark: &str) -> bool {
    match Suite::program(benchmark).map(|p| (p, p.find())) {
        Some((p, Err(_))) => {
            eprintln!(
                "headroom: {benchmark} left out: it runs {}, which is not installed (apt-get install {})",
                p.names[0], p.package
            );
            false
        }
        _ => true,
    }
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
    let position = headroom_bench::reference::position(b);
    let report = out.join("report.html");
    if let Err(e) = std::fs::write(
        &report,
        render_bench_report(b, &position, &reference_rows(b)),
    ) {
        eprintln!("headroom: cannot write {}: {e}", report.display());
        unsaved = true;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(b).unwrap_or_default());
    } else {
        print!("{}", headroom_report::bench::render_text(b, &position));
        if !unsaved {
            println!(
                "\nbundle: {}  report: {}",
                out.join(bundle::BENCH).display(),
                report.display()
            );
        }
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

/// An existing --out must not hold another bench or run.
fn check_out(out: &Path) -> Result<(), String> {
    if !out.exists() {
        return std::fs::create_dir_all(out)
            .map_err(|e| format!("cannot create {}: {e}", out.display()));
    }
    if !out.is_dir() {
        return Err(format!(
            "{} is a file: give --out a directory",
            out.display()
        ));
    }
    let used = std::fs::read_dir(out)
        .map_err(|e| format!("cannot read {}: {e}", out.display()))?
        .next()
        .is_some();
    if used {
        return Err(format!(
            "{} is not empty: choose another --out (a bench never overwrites results)",
            out.display()
        ));
    }
    Ok(())
}

/// The published figures with the host's own where it measured the same.
pub fn reference_rows(b: &BenchBundle) -> Vec<ReferenceRow> {
    headroom_bench::reference::REFERENCES
        .iter()
        .map(|r| ReferenceRow {
            machine: r.machine.into(),
            what: r.what.into(),
            value: r.value,
            unit: r.unit.into(),
            method: r.method.into(),
            source: r.source.into(),
            host: headroom_bench::reference::host_value(b, r),
        })
        .collect()
}

fn threads(args: &BenchArgs) -> usize {
    args.threads.map_or_else(cores, |t| t as usize)
}

/// Thermal durations: stressberry's, shortened when every benchmark runs.
fn thermal_times(args: &BenchArgs, all: bool) -> (f64, f64, f64, f64) {
    let pick = |given: Option<Duration>, short: f64, full: f64| {
        given.map_or(if all { short } else { full }, |d| d.as_secs_f64())
    };
    (
        pick(args.idle, 20.0, 150.0),
        pick(args.stress, 60.0, 300.0),
        pick(args.cool, 20.0, 150.0),
        if all {
            args.settle.as_secs_f64().min(60.0)
        } else {
            args.settle.as_secs_f64()
        },
    )
}

/// Every benchmark's options from the flags.
fn suite(args: &BenchArgs, all: bool) -> Suite {
    let repetitions = args.repetitions;
    let (idle, stress, cool, settle) = thermal_times(args, all);
    Suite {
        cpu: CpuOptions {
            max_prime: args.max_prime,
            seconds: args.cpu_time.as_secs_f64(),
            threads: threads(args),
            repetitions,
        },
        compression: CompressionOptions {
            threads: threads(args),
            dictionary: args.compression_dictionary,
            passes: args.compression_passes,
            repetitions,
        },
        crypto: CryptoOptions {
            threads: threads(args),
            rsa_bits: args.rsa_bits.parse().unwrap_or(4096),
            seconds: args.crypto_time,
            repetitions,
        },
        memory: MemoryOptions {
            elements: args.elements.map(|e| e as usize),
            iterations: 10,
            threads: threads(args),
            repetitions,
        },
        storage: StorageOptions {
            path: args.path.clone(),
            dd_blocks: args.dd_blocks,
            file_mib: args.file_size,
            commits: args.commits,
            depth: args.queue_depth as usize,
            repetitions,
        },
        reads: ReadsOptions {
            device: args.device.clone(),
            path: args.path.clone(),
            file_mib: args.reads_size,
            repetitions,
        },
        fileio: FileioOptions {
            path: args.path.clone(),
            files: args.fileio_files,
            total_mib: args.fileio_size,
            blocks_kib: args.fileio_blocks.0.clone(),
            seconds: args.fileio_time.as_secs_f64(),
            repetitions,
        },
        network: NetworkOptions {
            agent: args.agent.as_ref().and_then(|m| match m {
                Monitor::Agent(authority) => Some(authority.clone()),
                Monitor::Local => None,
            }),
            token: args.agent_token.clone(),
            seconds: args.net_time.as_secs_f64(),
            payloads: headroom_bench::network::PAYLOADS.to_vec(),
            round_trips: args.round_trips as usize,
            link_mbit: args.link_capacity,
            repetitions,
        },
        thermal: ThermalOptions {
            settle,
            idle_before: idle,
            stress,
            idle_after: cool,
            interval: 2.0,
            threads: threads(args),
            max_prime: args.max_prime,
        },
        stack: StackOptions {
            db: args.db.clone(),
            target: args.target.clone(),
            dir: args.path.clone(),
            repetitions,
        },
    }
}

/// A bench bundle, or why not.
pub fn read(dir: &Path) -> Result<BenchBundle, String> {
    bundle::read(dir).map_err(|e| e.to_string())
}
