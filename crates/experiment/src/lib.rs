//! `headroom experiment`: a study of factors × levels → cells, each run for
//! several repetitions with hooks, services, quiet waits and faults, and
//! compared with confidence intervals.
//!
//! [`file`] reads the experiment file, [`plan`] renders each cell's
//! commands and the run order, [`cell_run`] holds each cell's run spec,
//! [`runner`] runs them (each run a `headroom run --spec` child writing an
//! ordinary bundle, or `headroom capacity --spec` for a search), [`store`] keeps the study on disk and
//! [`results`] computes and renders the comparisons (statistics from
//! `headroom_analysis::experiment`).

pub mod cell_run;
pub mod fault_figures;
pub mod figure;
pub mod file;
pub mod leftovers;
pub mod plan;
pub mod process;
pub mod quiet;
pub mod regression;
pub mod results;
pub mod runner;
pub mod serving;
pub mod store;
pub mod study_answer;
pub mod study_output;
pub mod template;

use cell_run::CellRun;
use file::Experiment;
use plan::Plan;

/// Checks every cell's run before anything runs (its command line was
/// built into a run when the plan was made): that no fault comes after the
/// run ends, and its scenario file, so a mistake in one cell's levels is
/// found before the first run, not hours in. With `written_later`, a
/// scenario file that does not exist yet is not an error (the `prepare`
/// command writes it).
pub fn check_cells(
    experiment: &Experiment,
    plan: &Plan,
    written_later: bool,
) -> Result<(), String> {
    let mut scenarios_checked: Vec<String> = Vec::new();
    for cell in &plan.cells {
        // A fault after the end of this cell's runs would never happen.
        let duration = match &cell.run {
            CellRun::Spec { spec, .. } => spec.profile.duration,
            CellRun::Capacity { .. } => None,
        };
        let ramp_up = experiment.workload.ramp_up_fixed();
        let late = duration.and_then(|d| {
            experiment
                .faults
                .iter()
                .find(|f| f.at >= d + ramp_up)
                .map(|f| (f, d))
        });
        if let Some((late, duration)) = late {
            return Err(format!(
                "{}: the fault at {} comes after the runs of cell {} end ({} long): it would never happen",
                experiment.file.display(),
                humantime::format_duration(late.at),
                cell.label,
                humantime::format_duration(duration)
            ));
        }
        if let Some(file) = cell.scenario.clone() {
            if scenarios_checked.contains(&file)
                || (written_later && !std::path::Path::new(&file).exists())
            {
                continue;
            }
            let scenario =
                headroom_journey::scenario::parse_file(std::path::Path::new(&file), None).map_err(
                    |e| format!("the scenario of cell {} has an error: {e}", cell.label),
                )?;
            if let Some(label) = &experiment.label {
                if !scenario.labels.iter().any(|l| l.name == *label) {
                    let names: Vec<&str> =
                        scenario.labels.iter().map(|l| l.name.as_str()).collect();
                    return Err(format!(
                        "{}: measure.label '{label}' is not a label of {file} (its labels: {})",
                        experiment.file.display(),
                        names.join(", ")
                    ));
                }
            }
            scenarios_checked.push(file);
        }
    }
    Ok(())
}

/// A study on disk, read back: its experiment (from the copy of its file),
/// its finished runs (failed ones last) and its status (`complete`, `interrupted`, `failed`,
/// or `running` when it has no result yet).
pub struct Study {
    pub experiment: Experiment,
    pub rows: Vec<store::RunRow>,
    pub status: String,
}

/// Whether `dir` holds a study (its copy of the experiment file).
pub fn is_study(dir: &std::path::Path) -> bool {
    dir.join(store::FILE_COPY).is_file()
}

pub fn open_study(dir: &std::path::Path) -> Result<Study, String> {
    let copy = dir.join(store::FILE_COPY);
    let text = std::fs::read_to_string(&copy)
        .map_err(|e| format!("cannot read {}: {e}", copy.display()))?;
    let experiment = file::parse_str(&text, &copy).map_err(|e| e.to_string())?;
    let factors: Vec<String> = experiment.factors.iter().map(|f| f.name.clone()).collect();
    let mut rows = store::read_runs(dir, &factors, &experiment.figures)?;
    // Failed runs after the others, so the first repetition found of a
    // cell is one that counts.
    rows.sort_by_key(|r| r.failed());
    let status = std::fs::read_to_string(dir.join(store::RESULT))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["status"].as_str().map(str::to_string))
        .unwrap_or_else(|| "running".into());
    Ok(Study {
        experiment,
        rows,
        status,
    })
}
