//! `headroom experiment FILE`: checks the file and every cell's run, prints
//! the plan (`--dry-run`) or runs what is left of the study, then writes
//! and prints its result ([`headroom_experiment::study_output`] words it);
//! `--fail-if 'regression>5%'` for CI.

use crate::args::{Cli, Command, ExperimentArgs};
use crate::execute::{
    Failure, EXIT_CANNOT_RUN, EXIT_CRITERIA_FAILED, EXIT_INTERRUPTED, EXIT_USAGE,
};
use crate::settings;
use clap::Parser;
use headroom_experiment::cell_run::CellRun;
use headroom_experiment::file::{parse_file, Experiment};
use headroom_experiment::plan::{describe, plan, Plan};
use headroom_experiment::results::{regressions, render_text};
use headroom_experiment::runner::{
    check_inputs, prepare, prepare_output, run as run_study, Ending, Options, OutputError,
};
use headroom_experiment::store::{self, RunRow};
use headroom_experiment::study_output::{
    banner, ending_lines, finished_line, out_dir, reporting_flags, write_study,
};
use headroom_experiment::{check_cells, process};
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

pub fn run(args: ExperimentArgs) -> ExitCode {
    let experiment = match parse_file(&args.file) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let out = out_dir(&args.file, args.out.as_deref());
    let plan = match plan(&experiment, &out, &cell_run) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    // A scenario the prepare command writes is checked after it ran.
    let written_later = plan.prepare.is_some();
    if let Err(e) = check_cells(&experiment, &plan, written_later) {
        eprintln!("headroom: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    if let Err(e) = args
        .fail_if
        .map_or(Ok(()), |limit| limit.check(&experiment))
    {
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
        if let Err(e) = check_cells(&experiment, &plan, false) {
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
        eprintln!("{}", banner(&experiment, &plan, prepared.resumed, &out));
    }
    let (rows, ending) = run_study(&experiment, &plan, &options);
    finish(&args, &experiment, &plan, &out, &rows, ending)
}

/// How a cell's runs start, from its command line: the binary's own
/// parser, then flags → spec ([`crate::settings`]): a run spec, or a
/// capacity spec for a search (whose flags are checked as `headroom
/// capacity` checks them). The spec keeps the command line for the runs'
/// manifests; the flags about reporting go beside it.
fn cell_run(argv: &[String]) -> Result<CellRun, String> {
    let mut full = vec!["headroom".to_string()];
    full.extend_from_slice(argv);
    let cli = Cli::try_parse_from(&full).map_err(|e| {
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
    })?;
    let described = |e: Failure| match e {
        Failure::Usage(e) | Failure::CannotRun(e) => crate::execute::describe(&e),
    };
    let spec = match cli.command {
        Command::Run(args) => settings::run_spec(&args),
        Command::Load(args) => settings::load_spec(&args),
        Command::Capacity(args) => {
            crate::capacity_cmd::check_flags(&args)?;
            let mut spec = settings::capacity_spec(&args).map_err(described)?;
            spec.level.outputs.command_line = settings::redact_command_line(full);
            return Ok(CellRun::Capacity {
                spec: Box::new(spec),
                reporting: reporting_flags(argv),
            });
        }
        _ => return Err("an experiment's runs are run, load or capacity commands".into()),
    };
    let mut spec = spec.map_err(described)?;
    spec.outputs.command_line = settings::redact_command_line(full);
    Ok(CellRun::Spec {
        spec: Box::new(spec),
        reporting: reporting_flags(argv),
    })
}

/// The study's results written, how it ended said, and the exit code.
fn finish(
    args: &ExperimentArgs,
    experiment: &Experiment,
    plan: &Plan,
    out: &Path,
    rows: &[RunRow],
    ending: Ending,
) -> ExitCode {
    let results = match write_study(out, experiment, rows, &ending) {
        Ok(results) => results,
        Err(lines) => {
            for line in lines {
                eprintln!("{line}");
            }
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    if !args.quiet && !rows.is_empty() {
        if let Some(answer) = headroom_experiment::study_answer::study_answer(experiment, &results)
        {
            print!("\n{}", headroom_report::first_sentence::indented(&answer));
        }
        print!("{}", render_text(experiment, &results));
    }
    for line in ending_lines(&ending, rows, out) {
        eprintln!("{line}");
    }
    match ending {
        Ending::Interrupted => return ExitCode::from(EXIT_INTERRUPTED),
        Ending::Failed(_) | Ending::RunsFailed(_) => return ExitCode::from(EXIT_CANNOT_RUN),
        Ending::Complete | Ending::Unreadable(_) => {}
    }
    if !args.quiet {
        eprintln!("{}", finished_line(rows, plan, out));
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

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_experiment::cell_run::{capacity_run_spec, run_spec, write_spec, RunSettings};
    use headroom_load::spec::{RunSpec, WorkloadSource};

    fn planned(yaml: &str) -> Plan {
        let experiment = headroom_experiment::file::parse_str(yaml, Path::new("/studies/t.yaml"))
            .unwrap_or_else(|e| panic!("{e}"));
        plan(&experiment, Path::new("/studies/out"), &cell_run).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The spec the CLI builds from the command line the plan shows for a
    /// run, as `headroom run ...` or `headroom load ...` would.
    fn spec_of_command_line(argv: &[String]) -> RunSpec {
        let full = std::iter::once("headroom".to_string()).chain(argv.iter().cloned());
        let spec = match Cli::try_parse_from(full)
            .unwrap_or_else(|e| panic!("{e}"))
            .command
        {
            Command::Run(args) => settings::run_spec(&args),
            Command::Load(args) => settings::load_spec(&args),
            _ => panic!("{argv:?}"),
        };
        spec.unwrap_or_else(|e| match e {
            Failure::Usage(e) | Failure::CannotRun(e) => panic!("{e}"),
        })
    }

    /// Each run's spec.json, read back as `run --spec` reads it, is the
    /// spec of the command line `experiment --dry-run` shows for the run.
    #[test]
    fn a_planned_runs_spec_is_its_command_lines_spec() {
        let plan = planned(
            "name: t\nfactors:\n  users: [2, 5]\nworkload:\n  scenario: /studies/journey.yaml\n  users: ${users}\n  ramp_up: 1s\n  duration: 10s\n  think: 0s..20ms\n  flags: [--monitor, local, --apdex-t, 300ms, --fail-if, 'p95<1s', -Jhost=pi]\nfaults:\n  - {at: 4s, command: echo down}\nrepetitions: 2\n",
        );
        let dir = std::env::temp_dir().join(format!("headroom-cell-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for cell in &plan.cells {
            let CellRun::Spec { spec, reporting } = &cell.run else {
                panic!("{:?}", cell.run)
            };
            assert_eq!(reporting, &["--fail-if".to_string(), "p95<1s".to_string()]);
            let run = run_spec(
                spec,
                &RunSettings {
                    dir: &dir,
                    seed: 3,
                    faults: &cell.faults,
                },
            );
            let written = write_spec(&dir, &run).unwrap();
            let back = settings::spec_file(&written).unwrap();
            assert_eq!(back, run);
            let mut expected = spec_of_command_line(&cell.run_argv(&dir, 3));
            expected.outputs.command_line = back.outputs.command_line.clone();
            assert_eq!(back, expected);
            assert_eq!(
                back.outputs.command_line,
                std::iter::once("headroom".to_string())
                    .chain(cell.run_argv(&dir, 3))
                    .collect::<Vec<_>>()
            );
        }
        assert_eq!(
            plan.cells
                .iter()
                .map(|c| match &c.run {
                    CellRun::Spec { spec, .. } => spec.profile.users,
                    CellRun::Capacity { .. } => None,
                })
                .collect::<Vec<_>>(),
            vec![Some(2), Some(5)]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_wrong_level_names_its_cell() {
        let experiment = headroom_experiment::file::parse_str(
            "name: t\nfactors:\n  users: [2, lots]\nworkload:\n  url: http://127.0.0.1:9/\n  users: ${users}\n  duration: 1s\n",
            Path::new("bad-users.yaml"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let e = plan(&experiment, Path::new("/studies/out"), &cell_run).unwrap_err();
        assert_eq!(
            e,
            "bad-users.yaml: the workload of cell users=lots gives `headroom load --users lots --duration 1s http://127.0.0.1:9/`, which is wrong: invalid value 'lots' for '--users <USERS>': 'lots' is not a whole number For more information, try '--help'."
        );
    }

    /// Each capacity run's spec.json, read back as `capacity --spec` reads
    /// it, is the search the command line `experiment --dry-run` shows for
    /// the run asks for: the same level run and the same search settings,
    /// in the run's directory.
    #[test]
    fn a_planned_capacity_cells_spec_is_its_command_lines_spec() {
        let plan = planned(
            "name: t\nfactors:\n  max: [4, 8]\nworkload:\n  scenario: /studies/journey.yaml\n  target: http://127.0.0.1:9/\n  think: 200ms\n  apdex_t: 300ms\n  capacity: {start: 2, step: 2, max: '${max}', step_duration: 2s, warmup: 0s, apdex_target: 0.9, confirm: 2}\n  flags: [--monitor, local, --fail-if, 'users<3']\nrepetitions: 2\n",
        );
        let dir = std::env::temp_dir().join(format!(
            "headroom-capacity-cell-spec-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        for cell in &plan.cells {
            let CellRun::Capacity { spec, reporting } = &cell.run else {
                panic!("{:?}", cell.run)
            };
            assert_eq!(reporting, &["--fail-if".to_string(), "users<3".to_string()]);
            let run = capacity_run_spec(
                spec,
                &RunSettings {
                    dir: &dir,
                    seed: 5,
                    faults: &cell.faults,
                },
            );
            let written = write_spec(&dir, &run).unwrap();
            let back = settings::capacity_spec_file(&written).unwrap();
            assert_eq!(back, run);
            let argv = cell.run_argv(&dir, 5);
            let full = std::iter::once("headroom".to_string()).chain(argv.iter().cloned());
            let Command::Capacity(args) = Cli::try_parse_from(full)
                .unwrap_or_else(|e| panic!("{e}"))
                .command
            else {
                panic!("{argv:?}")
            };
            let mut expected = settings::capacity_spec(&args).unwrap_or_else(|e| match e {
                Failure::Usage(e) | Failure::CannotRun(e) => panic!("{e}"),
            });
            expected.level.outputs.command_line = back.level.outputs.command_line.clone();
            assert_eq!(back, expected);
            assert_eq!(back.dir.as_deref(), Some(dir.as_path()));
            assert_eq!(back.level.seed, 5);
            assert_eq!(
                back.level.outputs.command_line,
                std::iter::once("headroom".to_string())
                    .chain(argv)
                    .collect::<Vec<_>>()
            );
            let WorkloadSource::Scenario(source) = &back.level.workload else {
                panic!("{back:?}")
            };
            assert_eq!(source.target.as_deref(), Some("http://127.0.0.1:9/"));
        }
        assert_eq!(
            plan.cells
                .iter()
                .map(|c| match &c.run {
                    CellRun::Capacity { spec, .. } => (spec.ladder.max, spec.confirm),
                    CellRun::Spec { .. } => (0, 0),
                })
                .collect::<Vec<_>>(),
            vec![(4, 2), (8, 2)]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A capacity cell's flags are checked as `headroom capacity` checks
    /// them, before anything runs.
    #[test]
    fn a_capacity_cells_wrong_flag_is_found_in_the_plan() {
        let experiment = headroom_experiment::file::parse_str(
            "name: t\nworkload:\n  url: http://127.0.0.1:9/\n  capacity: {start: 8, max: 4}\n",
            Path::new("cap.yaml"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let e = plan(&experiment, Path::new("/studies/out"), &cell_run).unwrap_err();
        assert!(
            e.starts_with("cap.yaml: the workload of cell (one cell) gives `headroom capacity ")
                && e.ends_with("which is wrong: --start (8) is above --max (4)"),
            "{e}"
        );
    }
}
