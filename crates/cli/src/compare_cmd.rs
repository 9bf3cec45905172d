//! `headroom compare A B [C ...]`.

use crate::args::CompareArgs;
use crate::execute::{EXIT_CANNOT_RUN, EXIT_CRITERIA_FAILED, EXIT_USAGE};
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

pub fn run(mut args: CompareArgs) -> ExitCode {
    // JMeter results files (JTL) are imported into bundles first.
    for path in &mut args.bundles {
        match crate::jtl_input::resolve(path) {
            Ok(bundle) => *path = bundle,
            Err(e) => {
                eprintln!("headroom: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        }
    }
    if args
        .bundles
        .iter()
        .any(|d| headroom_bundle::bench::is_bench(d))
    {
        return compare_benches(&args);
    }
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
            eprintln!(
                "headroom: {} is a capacity search, not one run: {hint}",
                dir.display()
            );
            return ExitCode::from(EXIT_USAGE);
        }
        match RunData::load(dir, &letter(i)) {
            Ok(run) => {
                say_if_recovered(&run);
                runs.push(run)
            }
            Err(e) => {
                eprintln!("headroom: {e}");
                return ExitCode::from(EXIT_CANNOT_RUN);
            }
        }
    }
    let named: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let mut labels = r.labels();
            labels.retain(|l| l != headroom_bundle::TOTAL_LABEL);
            labels
        })
        .collect();
    let shared = named.iter().skip(1).fold(
        named.first().cloned().unwrap_or_default(),
        |mut common, labels| {
            common.retain(|l| labels.contains(l));
            common
        },
    );
    if shared.is_empty() && named.iter().filter(|l| !l.is_empty()).count() >= 2 {
        let lists: Vec<String> = runs
            .iter()
            .zip(&named)
            .map(|(r, labels)| {
                format!(
                    "{}: {}",
                    r.name,
                    if labels.is_empty() {
                        "TOTAL only".into()
                    } else {
                        labels.join(", ")
                    }
                )
            })
            .collect();
        eprintln!(
            "headroom: the runs share no label ({}): only TOTAL is compared, and a TOTAL over \
             different journeys compares different work",
            lists.join("; ")
        );
    }
    let baseline = match &args.baseline {
        None => 0,
        Some(given) => {
            let found = args.bundles.iter().enumerate().position(|(i, dir)| {
                letter(i).eq_ignore_ascii_case(given) || same_path(dir, Path::new(given))
            });
            match found {
                Some(i) => i,
                None => {
                    eprintln!(
                        "headroom: --baseline {given} is none of the bundles given: name one of them or its letter (A, B, ...)"
                    );
                    return ExitCode::from(EXIT_USAGE);
                }
            }
        }
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
            eprintln!("headroom: cannot write {}: {e}", path.display());
            return ExitCode::from(EXIT_CANNOT_RUN);
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

/// Bench bundles: each against the first (or --baseline), figure by figure.
fn compare_benches(args: &CompareArgs) -> ExitCode {
    if let Some(path) = &args.output {
        eprintln!(
            "headroom: -o {}: bench comparisons are text (or --json); each bench bundle has its own report.html",
            path.display()
        );
        return ExitCode::from(EXIT_USAGE);
    }
    let mut benches = Vec::new();
    for dir in &args.bundles {
        if !dir.is_dir() {
            eprintln!(
                "headroom: {} does not exist or is not a directory",
                dir.display()
            );
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
        if !headroom_bundle::bench::is_bench(dir) {
            eprintln!(
                "headroom: {} is not a bench bundle: compare bench bundles with each other, runs with runs",
                dir.display()
            );
            return ExitCode::from(EXIT_USAGE);
        }
        match crate::bench_cmd::read(dir) {
            Ok(b) => benches.push(b),
            Err(e) => {
                eprintln!("headroom: {e}");
                return ExitCode::from(EXIT_CANNOT_RUN);
            }
        }
    }
    // Bench bundles of three or more different hosts, with no baseline
    // named: a fleet, each host against the others.
    let mut hosts: Vec<&str> = benches
        .iter()
        .map(|b| b.fingerprint.hostname.as_str())
        .collect();
    hosts.sort();
    hosts.dedup();
    if args.baseline.is_none() && benches.len() >= 3 && hosts.len() == benches.len() {
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
    let base = match &args.baseline {
        None => 0,
        Some(given) => match args.bundles.iter().enumerate().position(|(i, dir)| {
            letter(i).eq_ignore_ascii_case(given) || same_path(dir, Path::new(given))
        }) {
            Some(i) => i,
            None => {
                eprintln!("headroom: --baseline {given} is none of the bundles given: name one of them or its letter (A, B, ...)");
                return ExitCode::from(EXIT_USAGE);
            }
        },
    };
    let name = |i: usize| format!("{} ({})", letter(i), args.bundles[i].display());
    let mut worse = 0;
    let mut json = Vec::new();
    for (i, other) in benches.iter().enumerate().filter(|(i, _)| *i != base) {
        let changes = headroom_report::bench::changes(&benches[base], other);
        // A regression: really worse by more than --threshold, in a
        // benchmark both measured with the same settings.
        let differ = headroom_report::bench::setting_differences(&benches[base], other);
        worse += changes
            .iter()
            .filter(|c| c.verdict == "worse")
            .filter(|c| c.change_pct.is_some_and(|p| p.abs() > args.threshold))
            .filter(|c| {
                !differ
                    .iter()
                    .any(|d| d.starts_with(&format!("{} ", c.benchmark)))
            })
            .count();
        if args.json {
            json.push(serde_json::json!({
                "a": name(base),
                "b": name(i),
                "setting_differences": headroom_report::bench::setting_differences(&benches[base], other),
                "figures": changes.iter().map(|c| serde_json::json!({
                    "benchmark": c.benchmark, "key": c.measure.key, "name": c.measure.name,
                    "unit": c.measure.unit, "a_mean": c.a.mean, "b_mean": c.b.mean,
                    "change_pct": c.change_pct, "ci95_pct": c.ci_pct, "verdict": c.verdict,
                })).collect::<Vec<_>>(),
            }));
        } else {
            print!(
                "{}",
                headroom_report::bench::render_compare(
                    &benches[base],
                    other,
                    (&name(base), &name(i))
                )
            );
        }
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json).unwrap_or_default()
        );
    }
    if worse == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_CRITERIA_FAILED)
    }
}
