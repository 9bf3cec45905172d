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

pub fn run(args: CompareArgs) -> ExitCode {
    let mut runs = Vec::new();
    for (i, dir) in args.bundles.iter().enumerate() {
        match RunData::load(dir, &letter(i)) {
            Ok(run) => runs.push(run),
            Err(e) => {
                eprintln!("headroom: {e}");
                return ExitCode::from(EXIT_CANNOT_RUN);
            }
        }
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
