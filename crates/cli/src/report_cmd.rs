//! `headroom report BUNDLE... [-o FILE]`.

use crate::args::ReportArgs;
use crate::execute::EXIT_CANNOT_RUN;
use headroom_report::capacity_html::render_capacity_report;
use headroom_report::experiment_html::{render_experiment_report, FaultTimeline, StudyPage};
use headroom_report::html::render_report;
use headroom_report::run_data::RunData;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn run(mut args: ReportArgs) -> ExitCode {
    // A JMeter results file (JTL) is imported into a bundle first (beside
    // it), and reported like any run.
    for path in &mut args.bundles {
        match crate::jtl_input::resolve(path) {
            Ok(bundle) => *path = bundle,
            Err(e) => {
                eprintln!("headroom: {e}");
                return ExitCode::from(EXIT_CANNOT_RUN);
            }
        }
    }
    if let [one] = args.bundles.as_slice() {
        if headroom_experiment::is_study(one) {
            return study_report(one, args.output.unwrap_or_else(|| one.join("report.html")));
        }
        if headroom_bundle::bench::is_bench(one) {
            return bench_report(one, args.output.unwrap_or_else(|| one.join("report.html")));
        }
        if headroom_bundle::is_capacity(one) {
            return capacity_report(one, args.output.unwrap_or_else(|| one.join("report.html")));
        }
    }
    let benches = args
        .bundles
        .iter()
        .filter(|d| headroom_bundle::bench::is_bench(d))
        .count();
    if benches == args.bundles.len() && benches > 1 {
        return benches_report(
            &args.bundles,
            args.output.unwrap_or_else(|| PathBuf::from("report.html")),
        );
    }
    if let Some(bench) = args
        .bundles
        .iter()
        .find(|d| headroom_bundle::bench::is_bench(d))
    {
        eprintln!(
            "headroom: {} is a bench bundle and the others are not: a page holds runs or bench bundles (headroom report {} alone, or with other bench bundles)",
            bench.display(),
            bench.display()
        );
        return ExitCode::from(EXIT_CANNOT_RUN);
    }
    let mut runs = Vec::new();
    for dir in &args.bundles {
        if headroom_bundle::is_capacity(dir) {
            eprintln!(
                "headroom: {} is a capacity search: report it alone (headroom report {}), or name its level bundles ({}/level-...)",
                dir.display(),
                dir.display(),
                dir.display()
            );
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
        match RunData::load(dir, "").and_then(RunData::with_latency) {
            Ok(run) => {
                crate::compare_cmd::say_if_recovered(&run);
                if let Some(warning) = headroom_bundle::reader::latency_warning(dir) {
                    eprintln!("headroom: warning: {}: {warning}", dir.display());
                }
                runs.push(run)
            }
            Err(e) => {
                eprintln!("headroom: {e}");
                return ExitCode::from(EXIT_CANNOT_RUN);
            }
        }
    }
    let output = args
        .output
        .unwrap_or_else(|| match args.bundles.as_slice() {
            [one] => one.join("report.html"),
            _ => PathBuf::from("report.html"),
        });
    // Kept failures are linked from the report: relative to it when it is
    // written in the bundle, else by the bundle's full path.
    let report_dir = output.parent().and_then(|p| {
        std::fs::canonicalize(if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        })
        .ok()
    });
    for run in &mut runs {
        let bundle = std::fs::canonicalize(&run.bundle).unwrap_or_else(|_| run.bundle.clone());
        if report_dir.as_deref() != Some(bundle.as_path()) {
            run.link_prefix = format!("{}/", bundle.display());
        }
    }
    write(&output, render_report(&runs))
}

/// The report of a bench bundle (its directory holds bench.json).
fn bench_report(dir: &Path, output: PathBuf) -> ExitCode {
    match crate::bench_cmd::read(dir) {
        Ok(b) => {
            let position = headroom_bench::reference::position(&b);
            let rows = crate::bench_cmd::reference_rows(&b);
            write(
                &output,
                headroom_report::bench_html::render_bench_report(&b, &position, &rows),
            )
        }
        Err(e) => {
            eprintln!("headroom: {e}");
            ExitCode::from(EXIT_CANNOT_RUN)
        }
    }
}

/// Several bench bundles on one page, the first the baseline.
pub fn benches_report(dirs: &[PathBuf], output: PathBuf) -> ExitCode {
    let mut benches = Vec::new();
    for dir in dirs {
        match crate::bench_cmd::read(dir) {
            Ok(b) => benches.push(b),
            Err(e) => {
                eprintln!("headroom: {e}");
                return ExitCode::from(EXIT_CANNOT_RUN);
            }
        }
    }
    let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    write(
        &output,
        headroom_report::benches_html::render_benches_report(&benches, &names),
    )
}

/// The report of a capacity search (its directory holds capacity.json).
fn capacity_report(dir: &Path, output: PathBuf) -> ExitCode {
    match headroom_bundle::capacity::read(dir) {
        Ok(result) => write(&output, render_capacity_report(&result)),
        Err(e) => {
            eprintln!("headroom: {e}");
            ExitCode::from(EXIT_CANNOT_RUN)
        }
    }
}

/// The report of a study (its directory holds the copy of its file).
fn study_report(dir: &Path, output: PathBuf) -> ExitCode {
    let study = match headroom_experiment::open_study(dir) {
        Ok(study) => study,
        Err(e) => {
            eprintln!("headroom: {e}");
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    let experiment = &study.experiment;
    let results = headroom_experiment::results::analyse_study(dir, experiment, &study.rows);
    let (min, max, _) = headroom_experiment::plan::estimate(experiment);
    // The fault timeline of each cell's first repetition.
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
    let page = StudyPage {
        experiment,
        results: &results,
        rows: &study.rows,
        status: &study.status,
        runs_planned: (min, max),
        timelines,
    };
    write(&output, render_experiment_report(&page))
}

fn write(output: &Path, html: String) -> ExitCode {
    match std::fs::write(output, html) {
        Ok(()) => {
            println!("{}", output.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("headroom: cannot write {}: {e}", output.display());
            ExitCode::from(EXIT_CANNOT_RUN)
        }
    }
}
