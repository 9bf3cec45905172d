//! `headroom experiment FILE`: checks the file and every cell's run, prints
//! the plan (`--dry-run`) or runs what is left of the study, then writes
//! and prints its result; `--fail-if 'regression>5%'` for CI.

use crate::args::{Cli, ExperimentArgs};
use crate::execute::{EXIT_CANNOT_RUN, EXIT_CRITERIA_FAILED, EXIT_INTERRUPTED, EXIT_USAGE};
use clap::Parser;
use headroom_experiment::file::{parse_file, Experiment};
use headroom_experiment::plan::{describe, estimate, plan, Plan};
use headroom_experiment::results::{analyse, cells_csv, regressions, render_text, result_json};
use headroom_experiment::runner::{
    check_inputs, prepare, prepare_output, run as run_study, Ending, Options, OutputError,
};
use headroom_experiment::store::{self, RunRow};
use headroom_experiment::{check_cells, process};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn run(args: ExperimentArgs) -> ExitCode {
    let experiment = match parse_file(&args.file) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let out = args.out.clone().unwrap_or_else(|| {
        let stem = args
            .file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "experiment".into());
        PathBuf::from("runs").join(stem)
    });
    let out = headroom_experiment::plan::absolute(&out);
    let plan = plan(&experiment, &out);
    // A scenario the prepare command writes is checked after it ran.
    let written_later = plan.prepare.is_some();
    if let Err(e) = check_cells(&experiment, &plan, written_later, check_run_args) {
        eprintln!("headroom: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    if let Err(e) = check_regression_figure(&args, &experiment) {
        eprintln!("headroom: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    if args.dry_run {
        print!("{}", describe(&experiment, &plan, "headroom", &out));
        return ExitCode::SUCCESS;
    }
    let program = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("headroom: cannot find this program's path to start the runs: {e}");
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    let prepared = match prepare_output(&experiment, &plan, &out) {
        Ok(prepared) => prepared,
        Err(OutputError::Usage(e)) => {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
        Err(OutputError::CannotRun(e)) => {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    let live = !args.quiet && std::io::stderr().is_terminal();
    let options = Options {
        out: out.clone(),
        program,
        live,
        verbose: !args.quiet,
    };
    process::catch_interrupts();
    if let Err(e) = prepare(&plan, &options, experiment.hooks.timeout) {
        eprintln!("headroom: {e}");
        return ExitCode::from(if process::interrupted() {
            EXIT_INTERRUPTED
        } else {
            EXIT_CANNOT_RUN
        });
    }
    if written_later {
        if let Err(e) = check_cells(&experiment, &plan, false, check_run_args) {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    }
    let has_runs = out.join(store::RUNS).exists();
    if let Err(e) = check_inputs(&plan, &out, has_runs) {
        eprintln!("headroom: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    if !args.quiet {
        let (min, max, _) = estimate(&experiment);
        eprintln!(
            "headroom: experiment '{}': {}, {}{} → {}",
            experiment.name,
            headroom_units::quantity::count(plan.cells.len(), "cell", "cells"),
            if min == max {
                headroom_units::quantity::count(max, "run", "runs")
            } else {
                format!("{min}–{max} runs")
            },
            if prepared.resumed {
                " (continuing: finished runs are kept)"
            } else {
                ""
            },
            out.display()
        );
    }
    let (rows, ending) = run_study(&experiment, &plan, &options);
    finish(&args, &experiment, &plan, &out, &rows, ending)
}

/// The binary's own parser on a cell's run command line.
fn check_run_args(argv: &[String]) -> Result<(), String> {
    let mut full = vec!["headroom".to_string()];
    full.extend_from_slice(argv);
    Cli::try_parse_from(full).map(|_| ()).map_err(|e| {
        // clap's message without its "Usage:" and help lines.
        e.to_string()
            .lines()
            .take_while(|l| !l.starts_with("Usage:"))
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
            .trim_start_matches("error: ")
            .to_string()
    })
}

fn check_regression_figure(args: &ExperimentArgs, experiment: &Experiment) -> Result<(), String> {
    let Some(regression) = args.fail_if else {
        return Ok(());
    };
    if experiment.factors.iter().all(|f| f.levels.len() < 2) {
        return Err(
            "--fail-if regression needs a factor with two levels or more (a baseline and a level to compare with it)".into(),
        );
    }
    let comparable = experiment.factors.iter().any(|factor| {
        let baseline = experiment.baseline_of(factor);
        let empty = vec![Vec::new(); experiment.cells.len()];
        !headroom_analysis::experiment::against_baseline(
            &factor.name,
            &baseline,
            &experiment.cells,
            &empty,
        )
        .is_empty()
    });
    if !comparable {
        return Err(
            "--fail-if regression needs a cell that differs from a baseline cell in one factor only; the file's cells: have none".into(),
        );
    }
    if let Some(figure) = regression.figure {
        if !experiment.figures.contains(&figure) {
            return Err(format!(
                "--fail-if regression({}): the experiment does not measure {}; add it to measure:",
                figure.name(),
                figure.name()
            ));
        }
    }
    Ok(())
}

fn finish(
    args: &ExperimentArgs,
    experiment: &Experiment,
    plan: &Plan,
    out: &Path,
    rows: &[RunRow],
    ending: Ending,
) -> ExitCode {
    if let Ending::Unreadable(e) = &ending {
        eprintln!("headroom: {e}");
        eprintln!(
            "headroom: nothing was run and the study's results in {} are left as they were",
            out.display()
        );
        return ExitCode::from(EXIT_CANNOT_RUN);
    }
    let results = analyse(experiment, rows);
    let status = match &ending {
        Ending::Complete => "complete",
        Ending::Interrupted => "interrupted",
        Ending::Failed(_) | Ending::Unreadable(_) | Ending::RunsFailed(_) => "failed",
    };
    let (min, max, _) = estimate(experiment);
    let json = result_json(experiment, &results, status, (min, max));
    let written = store::write_atomic(
        &out.join(store::CELLS),
        cells_csv(experiment, &results).as_bytes(),
    )
    .and_then(|_| {
        store::write_atomic(
            &out.join(store::RESULT),
            serde_json::to_string_pretty(&json)
                .unwrap_or_default()
                .as_bytes(),
        )
    });
    if let Err(e) = written {
        eprintln!(
            "headroom: cannot write the study's result in {}: {e}",
            out.display()
        );
        return ExitCode::from(EXIT_CANNOT_RUN);
    }
    if !args.quiet && !rows.is_empty() {
        print!("{}", render_text(experiment, &results));
    }
    let valid = rows.iter().filter(|r| !r.failed()).count();
    let finished = headroom_units::quantity::count(valid, "finished run is", "finished runs are");
    match ending {
        Ending::Interrupted => {
            eprintln!(
                "headroom: interrupted: {finished} kept in {}; run the same command to continue",
                out.display()
            );
            return ExitCode::from(EXIT_INTERRUPTED);
        }
        Ending::Failed(e) => {
            eprintln!("headroom: {e}");
            eprintln!(
                "headroom: the study stopped; {finished} kept in {}. Fix the cause (hooks and services may be edited) and run the same command to continue",
                out.display()
            );
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
        Ending::RunsFailed(failed) => {
            for f in &failed {
                eprintln!("headroom: failed run: {f}");
            }
            eprintln!(
                "headroom: {} kept out of the statistics; {finished} kept in {}. Find why the target stopped serving (its service's log, the run's run.log) and run the same command to repeat the failed {}",
                headroom_units::quantity::count(failed.len(), "run whose target was not serving is", "runs whose target was not serving are"),
                out.display(),
                if failed.len() == 1 { "repetition" } else { "repetitions" }
            );
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
        Ending::Complete | Ending::Unreadable(_) => {}
    }
    if !args.quiet {
        eprintln!(
            "headroom: {} in {}; results in {} (cells.csv, experiment.json); report: headroom report {}",
            headroom_units::quantity::count(valid, "run", "runs"),
            headroom_units::quantity::count(plan.cells.len(), "cell", "cells"),
            out.display(),
            out.display()
        );
    }
    if let Some(regression) = args.fail_if {
        let worse = regressions(&results, regression.threshold_pct, regression.figure);
        if !worse.is_empty() {
            for c in &worse {
                eprintln!("headroom: regression: {}", c.describe());
            }
            return ExitCode::from(EXIT_CRITERIA_FAILED);
        }
    }
    ExitCode::SUCCESS
}
