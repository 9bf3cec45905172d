//! `headroom compare A B [C ...]`: reads the bundles (JMeter results files
//! imported first), has headroom_report compare them ([`compare`] for
//! runs, [`bench_compare`] for bench bundles), prints the comparison and
//! exits non-zero on a regression.

use crate::args::CompareArgs;
use crate::execute::{EXIT_CANNOT_RUN, EXIT_CRITERIA_FAILED, EXIT_USAGE};
use headroom_bundle::bench::BenchBundle;
use headroom_report::bench_compare::{self, compare_benches};
use headroom_report::compare::{compare, render_compare, RunData};
use headroom_report::compare_html::render_compare_html;
use std::path::Path;
use std::process::ExitCode;

fn letter(i: usize) -> String {
    if i < 26 {
        ((b'A' + i as u8) as char).to_string()
    } else {
        format!("R{}", i + 1)
    }
}

fn same_path(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// Says on standard error that a run's figures were rebuilt after it died.
pub fn say_if_recovered(run: &RunData) {
    if run.recovered() {
        eprintln!(
            "headroom: {}: the run died before it finished (manifest status running); its figures \
             were rebuilt from intervals.csv and latency.hlog, up to the last second it wrote",
            run.bundle.display()
        );
    }
}

/// A capacity search's directory holds one bundle per level, not a run.
fn capacity_levels(dir: &Path) -> Option<Vec<String>> {
    if !headroom_bundle::is_capacity(dir) {
        return None;
    }
    let mut levels: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("level-"))
        .map(|e| e.path().display().to_string())
        .collect();
    levels.sort();
    Some(levels)
}

/// An error said on standard error, and the exit code it ends with.
fn fail(message: String, code: u8) -> ExitCode {
    eprintln!("headroom: {message}");
    ExitCode::from(code)
}

/// The bundle --baseline names (by path or letter), else the first.
fn baseline(args: &CompareArgs) -> Result<usize, ExitCode> {
    let Some(given) = &args.baseline else {
        return Ok(0);
    };
    args.bundles
        .iter()
        .enumerate()
        .position(|(i, dir)| {
            letter(i).eq_ignore_ascii_case(given) || same_path(dir, Path::new(given))
        })
        .ok_or_else(|| {
            fail(
                format!("--baseline {given} is none of the bundles given: name one of them or its letter (A, B, ...)"),
                EXIT_USAGE,
            )
        })
}

pub fn run(mut args: CompareArgs) -> ExitCode {
    // JMeter results files (JTL) are imported into bundles first.
    for path in &mut args.bundles {
        match crate::jtl_input::resolve(path) {
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
    let runs = match read_runs(&args) {
        Ok(runs) => runs,
        Err(code) => return code,
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

/// Each bundle as a run (a capacity search's directory is refused with
/// the levels to compare instead).
fn read_runs(args: &CompareArgs) -> Result<Vec<RunData>, ExitCode> {
    let mut runs = Vec::new();
    for (i, dir) in args.bundles.iter().enumerate() {
        if let Some(levels) = capacity_levels(dir) {
            let hint = match levels.as_slice() {
                [] => "it holds no level bundle yet".to_string(),
                [one] => format!("it holds one level: compare that with another run, e.g. headroom compare {one} OTHER"),
                [first, second, ..] => {
                    format!("compare its levels' bundles, e.g. headroom compare {first} {second}")
                }
            };
            return Err(fail(
                format!(
                    "{} is a capacity search, not one run: {hint}",
                    dir.display()
                ),
                EXIT_USAGE,
            ));
        }
        match RunData::load(dir, &letter(i)) {
            Ok(run) => {
                say_if_recovered(&run);
                runs.push(run)
            }
            Err(e) => return Err(fail(e.to_string(), EXIT_CANNOT_RUN)),
        }
    }
    Ok(runs)
}

/// Each given directory as a bench bundle.
fn read_benches(args: &CompareArgs) -> Result<Vec<BenchBundle>, ExitCode> {
    let mut benches = Vec::new();
    for dir in &args.bundles {
        if !dir.is_dir() {
            return Err(fail(
                format!("{} does not exist or is not a directory", dir.display()),
                EXIT_CANNOT_RUN,
            ));
        }
        if !headroom_bundle::bench::is_bench(dir) {
            return Err(fail(
                format!("{} is not a bench bundle: compare bench bundles with each other, runs with runs", dir.display()),
                EXIT_USAGE,
            ));
        }
        match crate::bench_cmd::read(dir) {
            Ok(b) => benches.push(b),
            Err(e) => return Err(fail(e, EXIT_CANNOT_RUN)),
        }
    }
    Ok(benches)
}

/// Bench bundles: each against the first (or --baseline), figure by
/// figure; or a fleet.
fn benches(args: &CompareArgs) -> ExitCode {
    let benches = match read_benches(args) {
        Ok(b) => b,
        Err(code) => return code,
    };
    // -o: the bundles side by side on one page, the baseline first.
    if let Some(path) = &args.output {
        let base = if bench_compare::is_fleet(&benches, args.baseline.is_some()) {
            0
        } else {
            match baseline(args) {
                Ok(i) => i,
                Err(code) => return code,
            }
        };
        let mut order: Vec<usize> = vec![base];
        order.extend((0..benches.len()).filter(|i| *i != base));
        let page = headroom_report::benches_html::render_benches_report(
            &order
                .iter()
                .map(|i| benches[*i].clone())
                .collect::<Vec<_>>(),
            &order
                .iter()
                .map(|i| args.bundles[*i].display().to_string())
                .collect::<Vec<_>>(),
        );
        if let Err(e) = std::fs::write(path, page) {
            return fail(
                format!("cannot write {}: {e}", path.display()),
                EXIT_CANNOT_RUN,
            );
        }
        eprintln!("headroom: the bundles side by side: {}", path.display());
    }
    if bench_compare::is_fleet(&benches, args.baseline.is_some()) {
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
    let names: Vec<String> = (0..args.bundles.len())
        .map(|i| format!("{} ({})", letter(i), args.bundles[i].display()))
        .collect();
    let compared = compare_benches(&benches, &names, base, args.threshold);
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
