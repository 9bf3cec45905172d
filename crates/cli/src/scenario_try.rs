//! `headroom scenario try FILE`: reads the scenario, connects to its
//! hosts, and runs the trial (headroom_load's [`trial`]: one user, one
//! iteration, every exchange printed, stopping at the first failed step,
//! whose exchange is saved to files); this module says how it ended
//! ([`headroom_journey::trial_text`] words it) and picks the exit code.

use crate::args::TryArgs;
use crate::execute::{connect_checked, Failure, EXIT_CANNOT_RUN, EXIT_USAGE};
use headroom_journey::scenario::jmx as jmx_input;
use headroom_journey::scenario::trial::{self, TrialOptions, TrialOutcome};
use headroom_journey::trial_text::trial_end;
use std::process::ExitCode;
use std::sync::Arc;

pub fn run(args: TryArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("headroom: cannot start: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    runtime.block_on(try_file(args))
}

async fn try_file(args: TryArgs) -> ExitCode {
    if headroom_journey::scenario::mix::is_mix_file(&args.file) {
        return try_mix(&args).await;
    }
    let scenario = match jmx_input::properties(&args.jmeter_property)
        .and_then(|p| jmx_input::scenario(&args.file, args.target.as_ref(), &p, false))
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    try_scenario(&args, &args.file, scenario).await
}

/// A mix: each journey tried in turn (one user, one iteration each); it
/// fails when one of them does.
async fn try_mix(args: &TryArgs) -> ExitCode {
    use headroom_journey::scenario::mix::{read, Workfile};
    let mix = match read(&args.file, args.target.as_ref()) {
        Ok(Workfile::Mix(mix)) => *mix,
        Ok(Workfile::Scenario(_)) => return ExitCode::from(EXIT_USAGE),
        Err(e) => {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    println!(
        "headroom: {} is a mix of {} journeys: each is tried once\n",
        args.file.display(),
        mix.journeys.len()
    );
    let mut failed = Vec::new();
    for journey in mix.journeys {
        println!("== journey {} ({})", journey.name, journey.file.display());
        let code = try_scenario(args, &journey.file, journey.scenario).await;
        if code != ExitCode::SUCCESS {
            failed.push(journey.name);
        }
        println!();
    }
    if failed.is_empty() {
        println!("OK: every journey of the mix passed.");
        ExitCode::SUCCESS
    } else {
        println!("FAILED: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}

/// Tries one journey: one user, one iteration.
async fn try_scenario(
    args: &TryArgs,
    file: &std::path::Path,
    scenario: headroom_journey::scenario::Scenario,
) -> ExitCode {
    let mut connectors = Vec::new();
    for origin in &scenario.origins {
        let http = args.http.or(scenario.http).unwrap_or_default();
        match connect_checked(origin, args.insecure, http).await {
            Ok(c) => connectors.push(Arc::new(c)),
            Err(Failure::Usage(e)) => {
                eprintln!("headroom: {e:#}");
                return ExitCode::from(EXIT_USAGE);
            }
            Err(Failure::CannotRun(e)) => {
                eprintln!("headroom: {e:#}");
                return ExitCode::from(EXIT_CANNOT_RUN);
            }
        }
    }
    let target = scenario
        .origins
        .first()
        .map(|o| o.url.clone())
        .unwrap_or_default();
    println!(
        "headroom: trying {} against {target}: 1 user, 1 iteration{}",
        file.display(),
        if args.think {
            ""
        } else {
            ", think times skipped"
        }
    );
    let options = TrialOptions {
        verbose: args.verbose,
        think: args.think,
        save_dir: args.save_dir.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("headroom-try-{}", std::process::id()))
        }),
    };
    let plan = trial::plan(scenario, connectors);
    let outcome = trial::run(plan, options, std::io::stdout()).await;
    say_outcome(file, outcome)
}

/// How the trial ended, said, and its exit code.
fn say_outcome(file: &std::path::Path, outcome: TrialOutcome) -> ExitCode {
    let end = trial_end(file, outcome);
    for line in &end.lines {
        if end.to_stderr {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }
    if end.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
