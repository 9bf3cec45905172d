//! The words and files of `headroom experiment` around the study's run:
//! where its results go ([`out_dir`]), the banner as it starts, the flags
//! of a cell's command line about reporting ([`reporting_flags`]), and its
//! end: the results written ([`write_study`]) and how it ended, in words.
//! The CLI parses each cell's command line, picks the exit codes and
//! prints.

use crate::file::Experiment;
use crate::plan::{estimate, Plan};
use crate::results::{analyse_study, write_results, Results};
use crate::runner::Ending;
use crate::store::RunRow;
use headroom_units::quantity::count;
use std::path::{Path, PathBuf};

/// `--out`, or runs/<the file's name>, made absolute.
pub fn out_dir(file: &Path, out: Option<&Path>) -> PathBuf {
    let out = out.map(Path::to_path_buf).unwrap_or_else(|| {
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "experiment".into());
        PathBuf::from("runs").join(stem)
    });
    crate::cell_run::absolute(&out)
}

/// `headroom: experiment 'x': 2 cells, 6 runs → DIR`, as the study starts.
pub fn banner(experiment: &Experiment, plan: &Plan, resumed: bool, out: &Path) -> String {
    let (min, max, _) = estimate(experiment);
    format!(
        "headroom: experiment '{}': {}, {}{} → {}",
        experiment.name,
        count(plan.cells.len(), "cell", "cells"),
        if min == max {
            count(max, "run", "runs")
        } else {
            format!("{min}–{max} runs")
        },
        if resumed {
            " (continuing: finished runs are kept)"
        } else {
            ""
        },
        out.display()
    )
}

/// The flags of a command line about how a run is reported, not what it
/// runs, with their values: they go beside `run --spec`.
pub fn reporting_flags(argv: &[String]) -> Vec<String> {
    const REPORTING: [&str; 5] = [
        "--fail-if",
        "--junit",
        "--metrics-listen",
        "--metrics-token",
        "--metrics-linger",
    ];
    let mut flags = Vec::new();
    let mut args = argv.iter();
    while let Some(arg) = args.next() {
        let name = arg.split('=').next().unwrap_or_default();
        if !REPORTING.contains(&name) {
            continue;
        }
        flags.push(arg.clone());
        if !arg.contains('=') {
            flags.extend(args.next().cloned());
        }
    }
    flags
}

/// The study's results analysed and written in `out` with its status (how
/// it ended); else the lines that say why not (its files could not be
/// read, so nothing ran and they are left as they were, or the results
/// could not be written).
pub fn write_study(
    out: &Path,
    experiment: &Experiment,
    rows: &[RunRow],
    ending: &Ending,
) -> Result<Results, Vec<String>> {
    if let Ending::Unreadable(e) = ending {
        return Err(vec![
            format!("headroom: {e}"),
            format!(
                "headroom: nothing was run and the study's results in {} are left as they were",
                out.display()
            ),
        ]);
    }
    let results = analyse_study(out, experiment, rows);
    let status = match ending {
        Ending::Complete => "complete",
        Ending::Interrupted => "interrupted",
        Ending::Failed(_) | Ending::Unreadable(_) | Ending::RunsFailed(_) => "failed",
    };
    let answer = crate::study_answer::study_answer(experiment, &results);
    if let Err(e) = write_results(out, experiment, &results, status, answer.as_deref()) {
        return Err(vec![format!(
            "headroom: cannot write the study's result in {}: {e}",
            out.display()
        )]);
    }
    Ok(results)
}

/// How a study that did not complete ended and what to do, for standard
/// error (none when it completed).
pub fn ending_lines(ending: &Ending, rows: &[RunRow], out: &Path) -> Vec<String> {
    let valid = rows.iter().filter(|r| !r.failed()).count();
    let finished = count(valid, "finished run is", "finished runs are");
    match ending {
        Ending::Interrupted => vec![format!(
            "headroom: interrupted: {finished} kept in {}; run the same command to continue",
            out.display()
        )],
        Ending::Failed(e) => vec![
            format!("headroom: {e}"),
            format!(
                "headroom: the study stopped; {finished} kept in {}. Fix the cause (hooks and services may be edited) and run the same command to continue",
                out.display()
            ),
        ],
        Ending::RunsFailed(failed) => {
            let mut lines: Vec<String> = failed
                .iter()
                .map(|f| format!("headroom: failed run: {f}"))
                .collect();
            lines.push(format!(
                "headroom: {} kept out of the statistics; {finished} kept in {}. Find why the target stopped serving (its service's log, the run's run.log) and run the same command to repeat the failed {}",
                count(failed.len(), "run whose target was not serving is", "runs whose target was not serving are"),
                out.display(),
                if failed.len() == 1 { "repetition" } else { "repetitions" }
            ));
            lines
        }
        Ending::Complete | Ending::Unreadable(_) => Vec::new(),
    }
}

/// What a complete study ran and where its results are.
pub fn finished_line(rows: &[RunRow], plan: &Plan, out: &Path) -> String {
    let valid = rows.iter().filter(|r| !r.failed()).count();
    format!(
        "headroom: {} in {}; results in {} (cells.csv, experiment.json); report: headroom report {}",
        count(valid, "run", "runs"),
        count(plan.cells.len(), "cell", "cells"),
        out.display(),
        out.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reporting_flags_go_beside_the_spec() {
        let argv: Vec<String> = [
            "run",
            "a.yaml",
            "--users",
            "3",
            "--junit=j.xml",
            "--metrics-listen",
            "127.0.0.1:9",
            "--seed",
            "2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            reporting_flags(&argv),
            vec!["--junit=j.xml", "--metrics-listen", "127.0.0.1:9"]
        );
    }
}
