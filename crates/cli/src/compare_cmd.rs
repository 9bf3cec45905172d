//! `headroom compare A B [C ...]`: reads the bundles (JMeter results files
//! imported first; [`headroom_report::compare_input`] reads and chooses),
//! has headroom_report compare them ([`compare`] for runs,
//! [`bench_compare`] for bench bundles), prints the comparison and exits
//! non-zero on a regression.

use crate::args::CompareArgs;
use crate::execute::{EXIT_CANNOT_RUN, EXIT_CRITERIA_FAILED, EXIT_USAGE};
use headroom_bundle::jtl_input::resolve;
use headroom_report::bench_compare::{self, compare_benches};
use headroom_report::compare::{compare, render_compare};
use headroom_report::compare_html::render_compare_html;
use headroom_report::compare_input::{
    bench_names, benches_side_by_side, read_benches, read_runs, Refusal,
};
use std::process::ExitCode;

/// An error said on standard error, and the exit code it ends with.
fn fail(message: String, code: u8) -> ExitCode {
    eprintln!("headroom: {message}");
    ExitCode::from(code)
}

/// A refusal said, with its exit code.
fn refused(refusal: Refusal) -> ExitCode {
    match refusal {
        Refusal::Usage(e) => fail(e, EXIT_USAGE),
        Refusal::CannotRead(e) => fail(e, EXIT_CANNOT_RUN),
    }
}

/// The bundle --baseline names (by path or letter), else the first.
fn baseline(args: &CompareArgs) -> Result<usize, ExitCode> {
    headroom_report::compare_input::baseline(&args.bundles, args.baseline.as_deref())
        .map_err(refused)
}

pub fn run(mut args: CompareArgs) -> ExitCode {
    // JMeter results files (JTL) are imported into bundles first.
    let command_line = || std::env::args().collect();
    for path in &mut args.bundles {
        match resolve(path, &command_line, &mut |line| eprintln!("{line}")) {
            Ok(bundle) => *path = bundle,
            Err(e) => return fail(e, EXIT_USAGE),
        }
    }
    if args
        .bundles
        .iter()
        .any(|d| headroom_bundle::bench::is_bench(d))
    {
        return benches(&args);
    }
    let runs = match read_runs(&args.bundles, &mut |line| eprintln!("{line}")) {
        Ok(runs) => runs,
        Err(refusal) => return refused(refusal),
    };
    if let Some(warning) = headroom_report::compare_labels::unshared_labels(&runs) {
        eprintln!("headroom: {warning}");
    }
    let baseline = match baseline(&args) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let comparison = compare(&runs, baseline, args.threshold);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&comparison).unwrap_or_default()
        );
    } else {
        print!("{}", render_compare(&comparison));
    }
    if let Some(path) = &args.output {
        if let Err(e) = std::fs::write(path, render_compare_html(&comparison)) {
            return fail(
                format!("cannot write {}: {e}", path.display()),
                EXIT_CANNOT_RUN,
            );
        }
        if !args.json {
            println!("\nHTML: {}", path.display());
        }
    }
    if comparison.regressions.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_CRITERIA_FAILED)
    }
}

/// Bench bundles: each against the first (or --baseline), figure by
/// figure; or a fleet.
fn benches(args: &CompareArgs) -> ExitCode {
    let benches = match read_benches(&args.bundles) {
        Ok(b) => b,
        Err(refusal) => return refused(refusal),
    };
    let fleet = bench_compare::is_fleet(&benches, args.baseline.is_some());
    // -o: the bundles side by side on one page, the baseline first.
    if let Some(path) = &args.output {
        let base = if fleet {
            0
        } else {
            match baseline(args) {
                Ok(i) => i,
                Err(code) => return code,
            }
        };
        let page = benches_side_by_side(&benches, &args.bundles, base);
        if let Err(e) = std::fs::write(path, page) {
            return fail(
                format!("cannot write {}: {e}", path.display()),
                EXIT_CANNOT_RUN,
            );
        }
        eprintln!("headroom: the bundles side by side: {}", path.display());
    }
    if fleet {
        let names: Vec<String> = args
            .bundles
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        let (text, value) = headroom_report::fleet::render_fleet(&benches, &names);
        if args.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            );
        } else {
            print!("{text}");
        }
        return ExitCode::SUCCESS;
    }
    let base = match baseline(args) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let compared = compare_benches(&benches, &bench_names(&args.bundles), base, args.threshold);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&compared.json).unwrap_or_default()
        );
    } else {
        print!("{}", compared.text);
    }
    if compared.regressions == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_CRITERIA_FAILED)
    }
}
