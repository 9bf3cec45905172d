//! `headroom merge SHARD... --out DIR`: the shards of a split run as one
//! bundle (the merge itself is `headroom_bundle::merge`), then its summary
//! ([`headroom_report::merge_text`]).

use crate::args::MergeArgs;
use crate::execute::{EXIT_CANNOT_RUN, EXIT_USAGE};
use headroom_bundle::merge::{merge, MergeRequest};
use headroom_bundle::BundleError;
use headroom_report::merge_text::{merged_json, merged_text};
use headroom_report::ReportInput;
use std::process::ExitCode;

pub fn run(args: MergeArgs) -> ExitCode {
    let request = MergeRequest {
        shards: &args.shards,
        out: &args.out,
        tolerance: args.tolerance,
        command_line: std::env::args().collect(),
    };
    let manifest = match merge(&request) {
        Ok(m) => m,
        Err(e @ (BundleError::Exists { .. } | BundleError::Io { .. })) => {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
        Err(e) => {
            eprintln!("headroom: cannot merge: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let Some(summary) = &manifest.summary else {
        return ExitCode::from(EXIT_CANNOT_RUN);
    };
    let input = ReportInput {
        status: manifest.status,
        bundle: &args.out,
        target: &manifest.target,
        summary,
        warnings: &[],
        verdicts: &[],
        label_order: &manifest.labels,
        arrive_within_s: manifest.profile.arrive_within_s,
    };
    let record = manifest.merged.as_ref();
    if args.json {
        // The run's summary, with the shards and why it is partial.
        println!("{}", merged_json(&input, record));
    } else {
        print!("{}", merged_text(&input, record));
    }
    for warning in &manifest.warnings {
        if let Some(message) = warning.get("message").and_then(|m| m.as_str()) {
            eprintln!("headroom: warning: {message}");
        }
    }
    ExitCode::SUCCESS
}
