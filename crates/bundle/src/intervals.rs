//! `intervals.csv`: one row per second and label (the total first, under
//! [`TOTAL_LABEL`](crate::TOTAL_LABEL)). Its columns are declared here once,
//! for the writer and the reader.

use crate::reader::{columns, finite, number, open_csv, whole_records};
use crate::sample::ErrorKind;
use crate::tally::{Counts, Tally};
use crate::{BundleError, INTERVALS};
use hdrhistogram::Histogram;
use headroom_analysis::LatencyStats;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// The latest second a row may have: a run lasts at most a year.
pub(crate) const LONGEST_RUN_S: u64 = 366 * 86_400;

/// The columns before the per-kind error counts.
const LEADING: [&str; 6] = [
    "second",
    "start_epoch_ms",
    "interval_s",
    "label",
    "count",
    "errors",
];
/// The columns after the per-kind error counts (`errors_<kind>`);
/// `arrivals` (users who arrived, i.e. started, in the second) came last,
/// so bundles without it still read (as no arrivals recorded).
const TRAILING: [&str; 18] = [
    "mean_ms",
    "p50_ms",
    "p90_ms",
    "p95_ms",
    "p99_ms",
    "max_ms",
    "service_mean_ms",
    "ttfb_mean_ms",
    "bytes_received",
    "bytes_sent",
    "active_vus",
    "apdex_satisfied",
    "apdex_tolerating",
    "apdex_frustrated",
    "generator_busy_pct",
    "generator_wait_pct",
    "generator_lag_ms",
    "arrivals",
];

/// Every column, in the file's order.
pub fn column_names() -> Vec<String> {
    let kinds = ErrorKind::ALL
        .iter()
        .map(|k| format!("errors_{}", k.name()));
    LEADING
        .iter()
        .map(|c| c.to_string())
        .chain(kinds)
        .chain(TRAILING.iter().map(|c| c.to_string()))
        .collect()
}

/// The header line (without its line break).
pub fn header() -> String {
    column_names().join(",")
}

/// What the generator itself did in one second, written on every row.
#[derive(Debug, Clone, Copy)]
pub struct Generator {
    pub active_vus: u32,
    /// Users who arrived (started) in the second, over all workers.
    pub arrivals: u32,
    /// Busiest worker's CPU use as a fraction of the interval.
    pub busy: f64,
    /// Most-starved worker's run-queue wait as a fraction of the interval.
    pub wait: f64,
    pub loop_lag: Duration,
}

/// Appends one row to `text`.
pub fn write_row(
    text: &mut String,
    second: u64,
    epoch_ms: u64,
    length: Duration,
    label: &str,
    tally: &Tally,
    generator: &Generator,
) {
    let service = tally.service.mean() / 1000.0;
    let row = RowFigures {
        counts: &tally.counts,
        response: &tally.response,
        service_mean_ms: service,
    };
    write_figures(text, second, epoch_ms, length, label, &row, generator);
}

/// A row's figures when no service-time histogram is at hand (a merge of
/// shards has each shard's mean only).
pub struct RowFigures<'a> {
    pub counts: &'a Counts,
    pub response: &'a Histogram<u64>,
    pub service_mean_ms: f64,
}

/// Appends one row of `figures` to `text`.
pub fn write_figures(
    text: &mut String,
    second: u64,
    epoch_ms: u64,
    length: Duration,
    label: &str,
    figures: &RowFigures<'_>,
    generator: &Generator,
) {
    let c = figures.counts;
    let l = LatencyStats::of(figures.response);
    let service = figures.service_mean_ms;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let ttfb = if c.ttfb_count == 0 {
        0.0
    } else {
        c.ttfb_micros as f64 / c.ttfb_count as f64 / 1000.0
    };
    let _ = write!(
        text,
        "{second},{epoch_ms},{:.3},{},{},{}",
        length.as_secs_f64(),
        crate::jtl::csv_field(label),
        c.count,
        c.errors
    );
    for n in c.errors_by_kind {
        let _ = write!(text, ",{n}");
    }
    let _ = writeln!(
        text,
        ",{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{service:.3},{ttfb:.3},{},{},{},{},{},{},{:.1},{:.1},{:.1},{}",
        ms(l.mean),
        ms(l.p50),
        ms(l.p90),
        ms(l.p95),
        ms(l.p99),
        ms(l.max),
        c.bytes_received,
        c.bytes_sent,
        generator.active_vus,
        c.apdex.satisfied,
        c.apdex.tolerating,
        c.apdex.frustrated,
        generator.busy * 100.0,
        generator.wait * 100.0,
        ms(generator.loop_lag),
        generator.arrivals,
    );
}

/// One row of intervals.csv (the columns `compare` and reports use).
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalRow {
    pub second: u64,
    pub interval_s: f64,
    pub label: String,
    pub count: u64,
    pub errors: u64,
    /// Errors per kind, in [`ErrorKind::ALL`]'s order.
    pub errors_by_kind: [u64; ErrorKind::COUNT],
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub active_vus: u64,
    pub apdex_satisfied: u64,
    pub apdex_tolerating: u64,
    pub apdex_frustrated: u64,
    /// Users who arrived in the second (`None`: a bundle written before
    /// arrivals were recorded).
    pub arrivals: Option<u64>,
}

impl IntervalRow {
    pub fn apdex_counts(&self) -> headroom_analysis::apdex::ApdexCounts {
        headroom_analysis::apdex::ApdexCounts {
            satisfied: self.apdex_satisfied,
            tolerating: self.apdex_tolerating,
            frustrated: self.apdex_frustrated,
        }
    }
}

/// Every row of intervals.csv.
pub fn read_intervals(dir: &Path) -> Result<Vec<IntervalRow>, BundleError> {
    let path = dir.join(INTERVALS);
    let (mut reader, headers) = open_csv(&path)?;
    const NAMES: [&str; 14] = [
        "second",
        "interval_s",
        "label",
        "count",
        "errors",
        "mean_ms",
        "p50_ms",
        "p90_ms",
        "p95_ms",
        "apdex_satisfied",
        "apdex_tolerating",
        "apdex_frustrated",
        "p99_ms",
        "active_vus",
    ];
    debug_assert!(NAMES.iter().all(|n| column_names().iter().any(|c| c == n)));
    let at = columns(&path, &headers, &NAMES)?;
    let kind_names: Vec<String> = ErrorKind::ALL
        .iter()
        .map(|k| format!("errors_{}", k.name()))
        .collect();
    let kinds: Vec<Option<usize>> = kind_names
        .iter()
        .map(|name| headers.iter().position(|h| h == name))
        .collect();
    let arrivals_at = headers.iter().position(|h| h == "arrivals");
    let mut rows = Vec::new();
    for (line, record) in whole_records(&path, &mut reader)? {
        let field = |k: usize| record.get(at[k]).unwrap_or("");
        let int = |k: usize| number::<u64>(&path, line, NAMES[k], field(k));
        let float = |k: usize| finite(&path, line, NAMES[k], field(k));
        let mut errors_by_kind = [0u64; ErrorKind::COUNT];
        for (i, column) in kinds.iter().enumerate() {
            if let Some(column) = column {
                errors_by_kind[i] = number::<u64>(
                    &path,
                    line,
                    &kind_names[i],
                    record.get(*column).unwrap_or(""),
                )?;
            }
        }
        let second = int(0)?;
        if second > LONGEST_RUN_S {
            return Err(crate::invalid(
                &path,
                format!("line {line}: second {second} is not one of a run (at most a year)"),
            ));
        }
        rows.push(IntervalRow {
            second,
            interval_s: float(1)?,
            label: field(2).to_string(),
            count: int(3)?,
            errors: int(4)?,
            errors_by_kind,
            mean_ms: float(5)?,
            p50_ms: float(6)?,
            p90_ms: float(7)?,
            p95_ms: float(8)?,
            apdex_satisfied: int(9)?,
            apdex_tolerating: int(10)?,
            apdex_frustrated: int(11)?,
            p99_ms: float(12)?,
            active_vus: int(13)?,
            arrivals: arrivals_at
                .map(|at| number::<u64>(&path, line, "arrivals", record.get(at).unwrap_or("")))
                .transpose()?,
        });
    }
    Ok(rows)
}
