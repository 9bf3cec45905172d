//! What `headroom report BUNDLE...` writes: the page of one study, one
//! bench bundle, several bench bundles, one capacity search, or runs (each
//! chosen by what the directories hold), and where. The CLI imports JMeter
//! results files first, writes the page and prints its path.

use crate::capacity_html::render_capacity_report;
use crate::compare_input::recovered_note;
use crate::experiment_html::{render_experiment_report, FaultTimeline, StudyPage};
use crate::html::render_report;
use crate::run_data::RunData;
use std::path::{Path, PathBuf};

/// The page the bundles make and the file it goes to (`output`, else
/// report.html in the one bundle or here); `say` hears the warnings of
/// reading them, each a line for standard error.
pub fn report_page(
    bundles: &[PathBuf],
    output: Option<PathBuf>,
    say: &mut dyn FnMut(String),
) -> Result<(PathBuf, String), String> {
    let is_bench = |d: &&PathBuf| headroom_bundle::bench::is_bench(d);
    if let [one] = bundles {
        let output = output.clone().unwrap_or_else(|| one.join("report.html"));
        if headroom_experiment::is_study(one) {
            return Ok((output, study_page(one)?));
        }
        if headroom_bundle::bench::is_bench(one) {
            let b = headroom_bundle::bench::read(one).map_err(|e| e.to_string())?;
            return Ok((output, crate::bench_page::bench_page(&b)));
        }
        if headroom_bundle::is_capacity(one) {
            let result = headroom_bundle::capacity::read(one).map_err(|e| e.to_string())?;
            return Ok((output, render_capacity_report(&result)));
        }
    }
    let benches = bundles.iter().filter(is_bench).count();
    if benches == bundles.len() && benches > 1 {
        let output = output.unwrap_or_else(|| PathBuf::from("report.html"));
        return Ok((output, benches_page(bundles)?));
    }
    if let Some(bench) = bundles.iter().find(is_bench) {
        return Err(format!(
            "{} is a bench bundle and the others are not: a page holds runs or bench bundles (headroom report {} alone, or with other bench bundles)",
            bench.display(),
            bench.display()
        ));
    }
    let mut runs = read_runs(bundles, say)?;
    let output = output.unwrap_or_else(|| match bundles {
        [one] => one.join("report.html"),
        _ => PathBuf::from("report.html"),
    });
    link_failures(&mut runs, &output);
    Ok((output, render_report(&runs)))
}

/// Each bundle as a run with its latency.
fn read_runs(bundles: &[PathBuf], say: &mut dyn FnMut(String)) -> Result<Vec<RunData>, String> {
    let mut runs = Vec::new();
    for dir in bundles {
        if headroom_bundle::is_capacity(dir) {
            return Err(format!(
                "{} is a capacity search: report it alone (headroom report {}), or name its level bundles ({}/level-...)",
                dir.display(),
                dir.display(),
                dir.display()
            ));
        }
        let run = RunData::load(dir, "")
            .and_then(RunData::with_latency)
            .map_err(|e| e.to_string())?;
        if let Some(note) = recovered_note(&run) {
            say(note);
        }
        if let Some(warning) = headroom_bundle::reader::latency_warning(dir) {
            say(format!("headroom: warning: {}: {warning}", dir.display()));
        }
        runs.push(run)
    }
    Ok(runs)
}

/// Kept failures are linked from the report: relative to it when it is
/// written in the bundle, else by the bundle's full path.
fn link_failures(runs: &mut [RunData], output: &Path) {
    let report_dir = output.parent().and_then(|p| {
        std::fs::canonicalize(if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        })
        .ok()
    });
    for run in runs {
        let bundle = std::fs::canonicalize(&run.bundle).unwrap_or_else(|_| run.bundle.clone());
        if report_dir.as_deref() != Some(bundle.as_path()) {
            run.link_prefix = format!("{}/", bundle.display());
        }
    }
}

/// Several bench bundles on one page, the first the baseline.
fn benches_page(dirs: &[PathBuf]) -> Result<String, String> {
    let mut benches = Vec::new();
    for dir in dirs {
        benches.push(headroom_bundle::bench::read(dir).map_err(|e| e.to_string())?);
    }
    let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    Ok(crate::benches_html::render_benches_report(&benches, &names))
}

/// The page of a study (its directory holds the copy of its file).
fn study_page(dir: &Path) -> Result<String, String> {
    let study = headroom_experiment::open_study(dir).map_err(|e| e.to_string())?;
    let experiment = &study.experiment;
    let results = headroom_experiment::results::analyse_study(dir, experiment, &study.rows);
    let (min, max, _) = headroom_experiment::plan::estimate(experiment);
    let page = StudyPage {
        experiment,
        results: &results,
        rows: &study.rows,
        status: &study.status,
        runs_planned: (min, max),
        timelines: timelines(dir, &study),
    };
    Ok(render_experiment_report(&page))
}

/// The fault timeline of each cell's first repetition.
fn timelines(dir: &Path, study: &headroom_experiment::Study) -> Vec<FaultTimeline> {
    let experiment = &study.experiment;
    let mut timelines = Vec::new();
    if !experiment.faults.is_empty() {
        for (cell, _) in experiment.cells.iter().enumerate() {
            let Some(row) = study
                .rows
                .iter()
                .filter(|r| r.cell == cell)
                .min_by_key(|r| r.repetition)
            else {
                continue;
            };
            let bundle = dir.join(&row.bundle);
            let (Ok(intervals), Ok(events)) = (
                headroom_bundle::intervals::read_intervals(&bundle),
                headroom_bundle::events::read(&bundle),
            ) else {
                continue;
            };
            timelines.push(FaultTimeline {
                cell: row.label.clone(),
                repetition: row.repetition,
                seconds: intervals
                    .iter()
                    .filter(|r| r.label == headroom_bundle::TOTAL_LABEL)
                    .map(|r| (r.second, r.errors, (r.count > 0).then_some(r.p95_ms)))
                    .collect(),
                events: events.iter().map(|e| e.offset_s).collect(),
            });
        }
    }
    timelines
}
