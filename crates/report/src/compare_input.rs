//! What `headroom compare` reads and chooses before it compares: the
//! bundles' letters, the `--baseline` given, each bundle read as a run
//! (a capacity search's directory refused with the levels to compare
//! instead) or as a bench bundle, and the bench bundles' page side by
//! side. The CLI turns a [`Refusal`] into its exit code.

use crate::run_data::RunData;
use headroom_bundle::bench::BenchBundle;
use std::path::{Path, PathBuf};

/// Why the bundles cannot be compared: a usage error (a run where a bench
/// bundle was given, a capacity search, an unknown --baseline) or a
/// bundle that cannot be read.
#[derive(Debug)]
pub enum Refusal {
    Usage(String),
    CannotRead(String),
}

/// The letter of the `i`th bundle: A, B, ..., then R27, R28, ...
pub fn letter(i: usize) -> String {
    if i < 26 {
        ((b'A' + i as u8) as char).to_string()
    } else {
        format!("R{}", i + 1)
    }
}

fn same_path(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// What to say on standard error when a run's figures were rebuilt after
/// it died.
pub fn recovered_note(run: &RunData) -> Option<String> {
    run.recovered().then(|| {
        format!(
            "headroom: {}: the run died before it finished (manifest status running); its figures \
             were rebuilt from intervals.csv and latency.hlog, up to the last second it wrote",
            run.bundle.display()
        )
    })
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

/// The bundle `given` (--baseline) names, by path or letter; the first
/// when none is given.
pub fn baseline(bundles: &[PathBuf], given: Option<&str>) -> Result<usize, Refusal> {
    let Some(given) = given else {
        return Ok(0);
    };
    bundles
        .iter()
        .enumerate()
        .position(|(i, dir)| {
            letter(i).eq_ignore_ascii_case(given) || same_path(dir, Path::new(given))
        })
        .ok_or_else(|| {
            Refusal::Usage(format!("--baseline {given} is none of the bundles given: name one of them or its letter (A, B, ...)"))
        })
}

/// Each bundle as a run, lettered; `say` hears of a run whose figures
/// were rebuilt.
pub fn read_runs(
    bundles: &[PathBuf],
    say: &mut dyn FnMut(String),
) -> Result<Vec<RunData>, Refusal> {
    let mut runs = Vec::new();
    for (i, dir) in bundles.iter().enumerate() {
        if let Some(levels) = capacity_levels(dir) {
            let hint = match levels.as_slice() {
                [] => "it holds no level bundle yet".to_string(),
                [one] => format!("it holds one level: compare that with another run, e.g. headroom compare {one} OTHER"),
                [first, second, ..] => {
                    format!("compare its levels' bundles, e.g. headroom compare {first} {second}")
                }
            };
            return Err(Refusal::Usage(format!(
                "{} is a capacity search, not one run: {hint}",
                dir.display()
            )));
        }
        match RunData::load(dir, &letter(i)) {
            Ok(run) => {
                if let Some(note) = recovered_note(&run) {
                    say(note);
                }
                runs.push(run)
            }
            Err(e) => return Err(Refusal::CannotRead(e.to_string())),
        }
    }
    Ok(runs)
}

/// Each given directory as a bench bundle.
pub fn read_benches(bundles: &[PathBuf]) -> Result<Vec<BenchBundle>, Refusal> {
    let mut benches = Vec::new();
    for dir in bundles {
        if !dir.is_dir() {
            return Err(Refusal::CannotRead(format!(
                "{} does not exist or is not a directory",
                dir.display()
            )));
        }
        if !headroom_bundle::bench::is_bench(dir) {
            return Err(Refusal::Usage(format!(
                "{} is not a bench bundle: compare bench bundles with each other, runs with runs",
                dir.display()
            )));
        }
        match headroom_bundle::bench::read(dir) {
            Ok(b) => benches.push(b),
            Err(e) => return Err(Refusal::CannotRead(e.to_string())),
        }
    }
    Ok(benches)
}

/// The bench bundles side by side on one page, the baseline `base` first.
pub fn benches_side_by_side(benches: &[BenchBundle], bundles: &[PathBuf], base: usize) -> String {
    let mut order: Vec<usize> = vec![base];
    order.extend((0..benches.len()).filter(|i| *i != base));
    crate::benches_html::render_benches_report(
        &order
            .iter()
            .map(|i| benches[*i].clone())
            .collect::<Vec<_>>(),
        &order
            .iter()
            .map(|i| bundles[*i].display().to_string())
            .collect::<Vec<_>>(),
    )
}

/// Each bench bundle's name in the comparison: its letter and directory.
pub fn bench_names(bundles: &[PathBuf]) -> Vec<String> {
    (0..bundles.len())
        .map(|i| format!("{} ({})", letter(i), bundles[i].display()))
        .collect()
}
