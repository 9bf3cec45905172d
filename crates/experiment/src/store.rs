//! An experiment's directory on disk:
//!
//! | file | what it holds |
//! |---|---|
//! | [`FILE_COPY`] | the experiment file as run (a resumed run must match it) |
//! | [`PLAN`] | the cells, their commands and the run order |
//! | [`RUNS`] | one row per finished run: its cell, repetition, bundle, figures, environment |
//! | [`CELLS`] | one row per cell: each figure's mean, 95% interval, CoV, range, peak repetitions |
//! | [`RESULT`] | the comparisons: main effects, levels against baselines, environment differences |
//! | `cells/<cell>/r<N>/` | each run's ordinary bundle, its output (`run.log`) and hooks' logs |
//!
//! `runs.csv` is appended one row at a time as runs finish, so a study that
//! is killed keeps every finished run, and running it again continues.

use crate::figure::Figure;
use headroom_analysis::experiment::Cell;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const FILE_COPY: &str = "experiment.yaml";
pub const PLAN: &str = "plan.json";
pub const RUNS: &str = "runs.csv";
pub const CELLS: &str = "cells.csv";
pub const RESULT: &str = "experiment.json";
/// Process groups of running services, as an earlier version recorded
/// them (a resumed runner still stops them).
pub const SERVICE_PIDS: &str = "services.pids";
/// The runs and services running now: pid, start time, kind, what (see
/// [`crate::leftovers`]).
pub const CHILDREN: &str = "children.pids";
pub const CELLS_DIR: &str = "cells";

const FIXED_COLUMNS: [&str; 10] = [
    "cell",
    "label",
    "repetition",
    "round",
    "bundle",
    "started_at",
    "took_s",
    "exit_code",
    "quiet",
    "environment",
];

/// One finished run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// 0-based here, 1-based in the file.
    pub cell: usize,
    pub label: String,
    /// 1-based.
    pub repetition: u32,
    /// 1-based.
    pub round: u32,
    /// The run's bundle, relative to the experiment's directory.
    pub bundle: PathBuf,
    pub started_at: String,
    pub took_s: f64,
    pub exit_code: i32,
    pub quiet: String,
    /// The environment's key figures (governor, frequency, kernel, throttling, memory).
    pub environment: String,
    /// One per figure of the experiment, in its order.
    pub values: Vec<Option<f64>>,
    /// One per figure: the value is a lower bound ("at least": a capacity
    /// search that still held at its max).
    pub at_least: Vec<bool>,
    /// Why the run failed (its target was not serving), when it did: a
    /// failed run is kept out of the statistics and does not count as a
    /// repetition.
    pub failure: Option<String>,
}

impl RunRow {
    pub fn failed(&self) -> bool {
        self.failure.is_some()
    }

    /// A finished run of `cell` (its `label`), repetition `repetition`,
    /// with these figures and none a lower bound: the tests' studies.
    #[cfg(test)]
    pub fn measured(cell: usize, label: String, repetition: u32, values: &[f64]) -> RunRow {
        RunRow {
            cell,
            label,
            repetition,
            round: 1,
            bundle: PathBuf::from("r"),
            started_at: String::new(),
            took_s: 2.0,
            exit_code: 0,
            quiet: String::new(),
            environment: String::new(),
            values: values.iter().map(|v| Some(*v)).collect(),
            at_least: vec![false; values.len()],
            failure: None,
        }
    }
}

/// After the figures: the figures whose value is a lower bound, and why
/// the run failed. (A study written before these columns has none.)
const LAST_COLUMNS: [&str; 2] = ["at_least", "failure"];

fn header(factors: &[String], figures: &[Figure]) -> Vec<String> {
    let mut columns = header_before_failures(factors, figures);
    columns.extend(LAST_COLUMNS.iter().map(|c| c.to_string()));
    columns
}

fn header_before_failures(factors: &[String], figures: &[Figure]) -> Vec<String> {
    let mut columns: Vec<String> = FIXED_COLUMNS.iter().map(|c| c.to_string()).collect();
    columns.extend(factors.iter().cloned());
    columns.extend(figures.iter().map(|f| f.column().to_string()));
    columns
}

fn number(value: Option<f64>) -> String {
    value.map(|v| format!("{v:.6}")).unwrap_or_default()
}

/// Appends a run's row to `runs.csv` (the header first when new).
pub fn append_run(
    dir: &Path,
    row: &RunRow,
    cell: &Cell,
    figures: &[Figure],
) -> std::io::Result<()> {
    let path = dir.join(RUNS);
    cut_torn_row(&path)?;
    let fresh = !path.exists();
    let factors: Vec<String> = cell.iter().map(|(f, _)| f.clone()).collect();
    let mut text = csv::Writer::from_writer(Vec::new());
    if fresh {
        text.write_record(header(&factors, figures))?;
    }
    // A study begun before the last columns existed keeps its columns.
    let old = !fresh && !has_last_columns(&path);
    let mut record = vec![
        (row.cell + 1).to_string(),
        row.label.clone(),
        row.repetition.to_string(),
        row.round.to_string(),
        row.bundle.display().to_string(),
        row.started_at.clone(),
        format!("{:.3}", row.took_s),
        row.exit_code.to_string(),
        row.quiet.clone(),
        row.environment.clone(),
    ];
    record.extend(cell.iter().map(|(_, l)| l.clone()));
    record.extend(row.values.iter().map(|v| number(*v)));
    if !old {
        let at_least: Vec<&str> = figures
            .iter()
            .zip(&row.at_least)
            .filter(|(_, b)| **b)
            .map(|(f, _)| f.column())
            .collect();
        record.push(at_least.join(" "));
        record.push(row.failure.clone().unwrap_or_default());
    } else if row.failed() {
        return Err(std::io::Error::other(
            "runs.csv was written by an earlier headroom, which cannot record a failed run",
        ));
    }
    text.write_record(record)?;
    let bytes = text
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    file.write_all(&bytes)?;
    file.sync_data()
}

fn has_last_columns(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.lines().next().map(|l| l.ends_with(",at_least,failure")))
        .unwrap_or(false)
}

/// A row cut short by a kill (the file does not end with a newline) is
/// removed, so the next row starts on a line of its own.
fn cut_torn_row(path: &Path) -> std::io::Result<()> {
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(());
    };
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(());
    }
    let keep = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)?
        .set_len(keep as u64)
}

/// The finished runs in `runs.csv` (none when there is no file). A last
/// row cut short by a kill is left out; the header must be this
/// experiment's.
pub fn read_runs(
    dir: &Path,
    factors: &[String],
    figures: &[Figure],
) -> Result<Vec<RunRow>, String> {
    let path = dir.join(RUNS);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    // A row is whole when it ends with a newline.
    let whole = match text.rfind('\n') {
        Some(end) => &text[..=end],
        None => "",
    };
    let mut reader = csv::Reader::from_reader(whole.as_bytes());
    let found: Vec<String> = reader
        .headers()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .iter()
        .map(str::to_string)
        .collect();
    let expected = header(factors, figures);
    let old = found == header_before_failures(factors, figures);
    if found != expected && !old {
        return Err(format!(
            "{} has the columns of another experiment ({}), not of this file's: use another --out",
            path.display(),
            found.join(",")
        ));
    }
    let mut rows = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let line = i + 2;
        let record = record.map_err(|e| format!("{} line {line}: {e}", path.display()))?;
        let bad = |column: &str| format!("{} line {line}: bad {column}", path.display());
        let field = |i: usize| record.get(i).unwrap_or_default();
        let cell: usize = field(0).parse().map_err(|_| bad("cell"))?;
        let values = (0..figures.len())
            .map(|k| {
                let text = field(FIXED_COLUMNS.len() + factors.len() + k);
                if text.is_empty() {
                    Ok(None)
                } else {
                    text.parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite())
                        .map(Some)
                        .ok_or_else(|| bad(figures[k].column()))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let last = FIXED_COLUMNS.len() + factors.len() + figures.len();
        let (at_least, failure) = if old {
            (vec![false; figures.len()], None)
        } else {
            let named: Vec<&str> = field(last).split_whitespace().collect();
            (
                figures
                    .iter()
                    .map(|f| named.contains(&f.column()))
                    .collect(),
                Some(field(last + 1).to_string()).filter(|f| !f.is_empty()),
            )
        };
        rows.push(RunRow {
            cell: cell.checked_sub(1).ok_or_else(|| bad("cell"))?,
            label: field(1).to_string(),
            repetition: field(2).parse().map_err(|_| bad("repetition"))?,
            round: field(3).parse().map_err(|_| bad("round"))?,
            bundle: PathBuf::from(field(4)),
            started_at: field(5).to_string(),
            took_s: field(6).parse().map_err(|_| bad("took_s"))?,
            exit_code: field(7).parse().map_err(|_| bad("exit_code"))?,
            quiet: field(8).to_string(),
            environment: field(9).to_string(),
            values,
            at_least,
            failure,
        });
    }
    Ok(rows)
}

/// Writes `path` whole or not at all (a temporary file renamed over it).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_data()?;
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_appended_and_read_back_and_a_cut_row_is_left_out() {
        let dir = std::env::temp_dir().join(format!("headroom-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let figures = [Figure::Mean, Figure::Apdex];
        let cell = vec![("store".to_string(), "redis".to_string())];
        let row = RunRow {
            cell: 1,
            label: "store=redis".into(),
            repetition: 2,
            round: 2,
            bundle: "cells/c2-store-redis/r2".into(),
            started_at: "2026-11-22T22:00:00Z".into(),
            took_s: 5.5,
            exit_code: 0,
            quiet: "quiet after 1s (CPU 2.0%)".into(),
            environment: "governor=performance, kernel=6.1".into(),
            values: vec![Some(101.25), None],
            at_least: vec![true, false],
            failure: None,
        };
        append_run(&dir, &row, &cell, &figures).unwrap();
        append_run(&dir, &row, &cell, &figures).unwrap();
        let mut text = std::fs::read_to_string(dir.join(RUNS)).unwrap();
        text.push_str("2,store=db,1,1,cells/c1");
        std::fs::write(dir.join(RUNS), text).unwrap();
        let factors = vec!["store".to_string()];
        let rows = read_runs(&dir, &factors, &figures).unwrap();
        assert_eq!(rows, vec![row.clone(), row.clone()]);
        // The next row replaces the torn one.
        append_run(&dir, &row, &cell, &figures).unwrap();
        let rows = read_runs(&dir, &factors, &figures).unwrap();
        assert_eq!(rows, vec![row.clone(), row.clone(), row.clone()]);
        let e = read_runs(&dir, &factors, &[Figure::P95]).unwrap_err();
        assert!(e.contains("another experiment"), "{e}");
        // A failed run is read back with its reason.
        let failed = RunRow {
            failure: Some("98% of requests failed to connect, \"refused\"".into()),
            at_least: vec![false, false],
            ..row.clone()
        };
        append_run(&dir, &failed, &cell, &figures).unwrap();
        let rows = read_runs(&dir, &factors, &figures).unwrap();
        assert_eq!(rows.last(), Some(&failed));
        assert!(rows.last().unwrap().failed() && !rows[0].failed());
        // runs.csv of an earlier version (no at_least, failure columns)
        // is read and appended to in its own columns.
        let text = std::fs::read_to_string(dir.join(RUNS)).unwrap();
        let old: String = text
            .lines()
            .take(2)
            .map(|l| {
                let cut = l.rfind(',').and_then(|i| l[..i].rfind(',')).unwrap();
                format!("{}\n", &l[..cut])
            })
            .collect();
        std::fs::write(dir.join(RUNS), &old).unwrap();
        let plain = RunRow {
            at_least: vec![false, false],
            ..row.clone()
        };
        append_run(&dir, &plain, &cell, &figures).unwrap();
        assert_eq!(
            read_runs(&dir, &factors, &figures).unwrap(),
            vec![plain.clone(), plain]
        );
        assert!(append_run(&dir, &failed, &cell, &figures).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
