//! `headroom compare`: runs side by side against a baseline, as the study's
//! tables of Apdex and response time per environment, with the significance
//! of every change (a bootstrap interval over the runs' per-second values),
//! the environment fields that differ, and the regressions beyond a
//! threshold (for CI, like moodle-performance-comparison).

use crate::run_data::flatten;
pub use crate::run_data::RunData;
use headroom_analysis::bootstrap::{median_difference, Interval};
use headroom_bundle::intervals::IntervalRow;
use headroom_bundle::resources::ResourceRow;
use headroom_bundle::scenario_record::ScenarioRecord;
use headroom_bundle::summary::LabelFigures;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Confidence of the intervals.
pub const CONFIDENCE: f64 = 0.95;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ComparedMetric {
    Apdex,
    Mean,
    P90,
    P95,
    Errors,
    Throughput,
}

impl ComparedMetric {
    pub const ALL: [ComparedMetric; 6] = [
        ComparedMetric::Apdex,
        ComparedMetric::Mean,
        ComparedMetric::P90,
        ComparedMetric::P95,
        ComparedMetric::Errors,
        ComparedMetric::Throughput,
    ];

    pub fn title(self) -> &'static str {
        match self {
            ComparedMetric::Apdex => "Apdex",
            ComparedMetric::Mean => "Mean response time (ms)",
            ComparedMetric::P90 => "90th percentile (ms)",
            ComparedMetric::P95 => "95th percentile (ms)",
            ComparedMetric::Errors => "Errors (%)",
            ComparedMetric::Throughput => "Throughput (req/s)",
        }
    }

    pub fn short(self) -> &'static str {
        match self {
            ComparedMetric::Apdex => "apdex",
            ComparedMetric::Mean => "mean",
            ComparedMetric::P90 => "p90",
            ComparedMetric::P95 => "p95",
            ComparedMetric::Errors => "errors",
            ComparedMetric::Throughput => "throughput",
        }
    }

    pub fn higher_is_better(self) -> bool {
        matches!(self, ComparedMetric::Apdex | ComparedMetric::Throughput)
    }

    /// The run's figure, from the manifest's summary (exact, whole run).
    fn value(self, figures: &LabelFigures) -> Option<f64> {
        // Without a sample there is no response time and no error rate (not 0).
        if figures.count == 0 && self != ComparedMetric::Throughput {
            return None;
        }
        match self {
            ComparedMetric::Apdex => figures.apdex,
            ComparedMetric::Mean => Some(figures.mean_ms),
            ComparedMetric::P90 => Some(figures.p90_ms),
            ComparedMetric::P95 => Some(figures.p95_ms),
            ComparedMetric::Errors => Some(figures.error_rate * 100.0),
            ComparedMetric::Throughput => Some(figures.rps),
        }
    }

    /// The metric in each second, for the significance test.
    fn per_interval(self, rows: &[&IntervalRow]) -> Vec<f64> {
        rows.iter()
            .filter_map(|r| match self {
                ComparedMetric::Apdex => r.apdex_counts().score(),
                ComparedMetric::Mean => Some(r.mean_ms),
                ComparedMetric::P90 => Some(r.p90_ms),
                ComparedMetric::P95 => Some(r.p95_ms),
                ComparedMetric::Errors => Some(r.errors as f64 * 100.0 / r.count as f64),
                ComparedMetric::Throughput => Some(r.count as f64 / r.interval_s),
            })
            .collect()
    }
}

/// One run's figure for one label, against the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct ComparedFigure {
    pub value: Option<f64>,
    /// Change against the baseline's figure, in %.
    pub change_pct: Option<f64>,
    /// The bootstrap interval of the change of the per-second medians, in %
    /// of the baseline's median; absent when either run has < 3 seconds.
    pub interval_pct: Option<(f64, f64)>,
    pub significant: Option<bool>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricTable {
    pub metric: ComparedMetric,
    pub labels: Vec<String>,
    /// One row per run (the baseline's cells have no change).
    pub rows: Vec<Vec<ComparedFigure>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Regression {
    pub run: String,
    pub metric: ComparedMetric,
    pub label: String,
    pub change_pct: f64,
    pub interval_pct: (f64, f64),
}

/// A fingerprint field that is not the same in every run.
#[derive(Debug, Clone, Serialize)]
pub struct EnvironmentDifference {
    pub field: String,
    pub values: Vec<Option<String>>,
}

/// One resource's average and peak over a run.
#[derive(Debug, Clone, Serialize)]
pub struct ResourceFigure {
    pub name: String,
    pub average: Option<f64>,
    pub peak: Option<f64>,
    /// The average's change against the baseline's, in %.
    pub change_pct: Option<f64>,
}

/// Per host: averages and peaks of the monitored resources.
#[derive(Debug, Clone, Serialize)]
pub struct ResourceFigures {
    pub host: String,
    /// Per run: cpu, memory, disk, network, temperature.
    pub rows: Vec<Vec<ResourceFigure>>,
}

/// What limits one run: the server's resource it judged first on each
/// monitored host (with `--process`; see capacity.md, "What limits it").
#[derive(Debug, Clone, Serialize)]
pub struct RunLimit {
    pub run: String,
    pub host: String,
    pub limit: headroom_bundle::limits::Limit,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    pub name: String,
    pub bundle: String,
    pub target: String,
    pub started_at: String,
    pub status: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub baseline: String,
    pub threshold_pct: f64,
    pub confidence: f64,
    pub runs: Vec<RunInfo>,
    pub metrics: Vec<MetricTable>,
    pub resources: Vec<ResourceFigures>,
    /// Each run's first judged resource per host: what limited it.
    pub limits: Vec<RunLimit>,
    pub environment: Vec<EnvironmentDifference>,
    /// What was run, where it differs between runs (target, scenario,
    /// profile, users, Apdex T/F, timeout).
    pub setup: Vec<EnvironmentDifference>,
    /// False when the runs used different Apdex T or F: their Apdex is
    /// shown but not compared.
    pub apdex_comparable: bool,
    /// Changes that got no significance test: a run had fewer than 3
    /// measured seconds.
    pub untested: usize,
    pub regressions: Vec<Regression>,
}

fn json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The fields that say what was run: where, what, how hard, and how it was
/// judged. Runs that differ here measured different things.
fn setup(runs: &[RunData]) -> Vec<EnvironmentDifference> {
    let fields: Vec<Vec<(String, String)>> = runs
        .iter()
        .map(|run| {
            let m = &run.manifest;
            let mut fields = vec![
                ("target".to_string(), m.target.clone()),
                ("profile".to_string(), m.profile.describe()),
                ("peak users".to_string(), run.summary.peak_vus.to_string()),
                ("Apdex T (ms)".to_string(), format!("{}", m.apdex_t_ms)),
                ("Apdex F (ms)".to_string(), format!("{}", m.apdex_f_ms)),
                ("timeout (ms)".to_string(), format!("{}", m.timeout_ms)),
            ];
            // What was sent, field by field (method, URL, headers, body,
            // keep-alive; or the scenario's name, file and steps).
            let scenario = m
                .scenario
                .as_ref()
                .map_or(Value::Null, ScenarioRecord::to_json);
            flatten("scenario", &scenario, &mut fields);
            // A scenario file's text differs as a whole: say so in a line.
            for (name, value) in fields.iter_mut().filter(|(n, _)| n == "scenario.text") {
                *name = "scenario file text".into();
                *value = text_digest(value);
            }
            fields
        })
        .collect();
    let mut names: Vec<&String> = Vec::new();
    for run in &fields {
        for (name, _) in run {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let values: Vec<Option<String>> = fields
                .iter()
                .map(|f| f.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()))
                .collect();
            values
                .iter()
                .any(|v| v != &values[0])
                .then(|| EnvironmentDifference {
                    field: name.clone(),
                    values,
                })
        })
        .collect()
}

/// A text in one line: its size and a fingerprint of its content (FNV-1a),
/// enough to tell two texts apart.
fn text_digest(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{} lines, {:016x}", text.lines().count(), hash)
}

/// True when every run judged Apdex with the same T and F: otherwise the
/// scores measure different things and are not compared.
fn apdex_comparable(runs: &[RunData]) -> bool {
    let first = &runs[0].manifest;
    runs.iter().all(|r| {
        r.manifest.apdex_t_ms == first.apdex_t_ms && r.manifest.apdex_f_ms == first.apdex_f_ms
    })
}

fn pct(change: f64, base: f64) -> Option<f64> {
    (base.abs() > f64::EPSILON).then(|| change / base * 100.0)
}

fn cell(
    metric: ComparedMetric,
    base: &RunData,
    run: &RunData,
    label: &str,
    is_base: bool,
    seed: u64,
) -> ComparedFigure {
    let value = run.figures(label).and_then(|f| metric.value(f));
    if is_base {
        return ComparedFigure {
            value,
            change_pct: None,
            interval_pct: None,
            significant: None,
        };
    }
    let base_value = base.figures(label).and_then(|f| metric.value(f));
    let change_pct = match (value, base_value) {
        (Some(v), Some(b)) => pct(v - b, b),
        _ => None,
    };
    let a = metric.per_interval(&base.rows(label));
    let b = metric.per_interval(&run.rows(label));
    let interval: Option<Interval> = median_difference(&a, &b, CONFIDENCE, seed);
    let base_median = headroom_analysis::bootstrap::median(&a);
    let interval_pct = match (interval, base_median) {
        (Some(i), Some(m)) => match (pct(i.low, m), pct(i.high, m)) {
            (Some(low), Some(high)) => Some((low, high)),
            _ => None,
        },
        _ => None,
    };
    ComparedFigure {
        value,
        change_pct,
        interval_pct,
        significant: interval.map(|i| i.significant()),
    }
}

/// Fields of the environment that would explain a difference: the load
/// generator's and each monitored host's fingerprint and doctor findings.
/// Readings that change every second (load, uptime) are left out.
fn environment(runs: &[RunData]) -> Vec<EnvironmentDifference> {
    let fingerprints: Vec<Vec<(String, Value)>> = runs
        .iter()
        .map(|run| {
            let m = &run.manifest;
            // With --monitor local this machine is the server too.
            m.fingerprint
                .iter()
                .map(|fp| {
                    let name = if fp.server.is_some() {
                        "local"
                    } else {
                        "generator"
                    };
                    (name.to_string(), json(fp))
                })
                .chain(
                    m.monitored_hosts
                        .iter()
                        .map(|h| (h.agent.clone(), json(&h.fingerprint))),
                )
                .collect()
        })
        .collect();
    differences(&fingerprints)
}

/// Fingerprint readings that move from second to second on any host, so
/// say nothing about the machine.
const MOMENTARY: [&str; 6] = [
    "load",
    "uptime",
    "collected",
    "swap_used_mb",
    "frequency_mhz",
    "headroom_version",
];

/// The fields that differ between runs' (or hosts') fingerprints, each a
/// list of named JSON values; momentary readings are left out and a
/// temperature counts to the degree.
pub(crate) fn differences(fingerprints: &[Vec<(String, Value)>]) -> Vec<EnvironmentDifference> {
    let fields: Vec<BTreeMap<String, String>> = fingerprints
        .iter()
        .map(|named| {
            let mut fields = Vec::new();
            for (name, fp) in named {
                flatten(name, fp, &mut fields);
            }
            fields
                .into_iter()
                .filter(|(k, _)| !MOMENTARY.iter().any(|m| k.contains(m)))
                .map(|(k, v)| match v.parse::<f64>() {
                    Ok(t) if k.ends_with("temperature_c") => (k, format!("{t:.0}")),
                    _ => (k, v),
                })
                .collect::<BTreeMap<String, String>>()
        })
        .collect();
    let mut keys: Vec<&String> = fields.iter().flat_map(|f| f.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|key| {
            let values: Vec<Option<String>> = fields.iter().map(|f| f.get(key).cloned()).collect();
            let first = &values[0];
            values
                .iter()
                .any(|v| v != first)
                .then(|| EnvironmentDifference {
                    field: key.clone(),
                    values,
                })
        })
        .collect()
}

fn resource_figures(runs: &[RunData], baseline: usize) -> Vec<ResourceFigures> {
    let mut hosts: Vec<String> = runs
        .iter()
        .flat_map(|r| r.resources.iter().flatten().map(|row| row.host.clone()))
        .collect();
    hosts.sort();
    hosts.dedup();
    hosts
        .into_iter()
        .map(|host| {
            let rows = runs
                .iter()
                .map(|run| {
                    let rows: Vec<&ResourceRow> = run
                        .resources
                        .iter()
                        .flatten()
                        .filter(|r| r.host == host && run.measured(r.second))
                        .collect();
                    let figure = |name: &str, get: fn(&ResourceRow) -> Option<f64>| {
                        let values: Vec<f64> = rows.iter().filter_map(|r| get(r)).collect();
                        let average = (!values.is_empty())
                            .then(|| values.iter().sum::<f64>() / values.len() as f64);
                        let peak = values.iter().copied().reduce(f64::max);
                        ResourceFigure {
                            name: name.to_string(),
                            average,
                            peak,
                            change_pct: None,
                        }
                    };
                    vec![
                        figure("cpu %", |r| r.cpu_pct),
                        figure("memory %", |r| r.memory_used_pct),
                        figure("disk %", |r| r.disk_util_pct),
                        figure("network Mbit/s", |r| r.net_mbit_s),
                        figure("temperature °C", |r| r.temperature_max_c),
                    ]
                })
                .collect();
            let mut rows: Vec<Vec<ResourceFigure>> = rows;
            let base: Vec<Option<f64>> = rows[baseline].iter().map(|f| f.average).collect();
            for (i, row) in rows.iter_mut().enumerate() {
                if i == baseline {
                    continue;
                }
                for (figure, base) in row.iter_mut().zip(&base) {
                    figure.change_pct = match (figure.average, base) {
                        (Some(a), Some(b)) => pct(a - b, *b),
                        _ => None,
                    };
                }
            }
            ResourceFigures { host, rows }
        })
        .collect()
}

/// Compares every run with `runs[baseline]`. A regression is a significant
/// change for the worse larger than `threshold_pct`.
pub fn compare(runs: &[RunData], baseline: usize, threshold_pct: f64) -> Comparison {
    let base = &runs[baseline];
    let mut labels = base.labels();
    for run in runs {
        for label in run.labels() {
            if !labels.contains(&label) {
                labels.insert(labels.len() - 1, label);
            }
        }
    }
    let mut regressions = Vec::new();
    let comparable = apdex_comparable(runs);
    let metrics: Vec<MetricTable> = ComparedMetric::ALL
        .iter()
        .map(|&metric| {
            let rows: Vec<Vec<ComparedFigure>> = runs
                .iter()
                .enumerate()
                .map(|(i, run)| {
                    labels
                        .iter()
                        .enumerate()
                        .map(|(j, label)| {
                            let seed = (i * 1000 + j) as u64;
                            let alone =
                                i == baseline || (metric == ComparedMetric::Apdex && !comparable);
                            cell(metric, base, run, label, alone, seed)
                        })
                        .collect()
                })
                .collect();
            for (i, row) in rows.iter().enumerate() {
                for (label, c) in labels.iter().zip(row) {
                    let (Some(change), Some(true), Some(interval)) =
                        (c.change_pct, c.significant, c.interval_pct)
                    else {
                        continue;
                    };
                    let worse = if metric.higher_is_better() {
                        change < -threshold_pct
                    } else {
                        change > threshold_pct
                    };
                    if worse {
                        regressions.push(Regression {
                            run: runs[i].name.clone(),
                            metric,
                            label: label.clone(),
                            change_pct: change,
                            interval_pct: interval,
                        });
                    }
                }
            }
            MetricTable {
                metric,
                labels: labels.clone(),
                rows,
            }
        })
        .collect();
    let untested = metrics
        .iter()
        .flat_map(|t| t.rows.iter().flatten())
        .filter(|c| c.change_pct.is_some() && c.significant.is_none())
        .count();
    Comparison {
        baseline: base.name.clone(),
        threshold_pct,
        confidence: CONFIDENCE,
        runs: runs
            .iter()
            .map(|r| RunInfo {
                name: r.name.clone(),
                bundle: r.bundle.display().to_string(),
                target: r.manifest.target.clone(),
                started_at: r.manifest.started_at.clone(),
                status: r.manifest.status.name().to_string(),
            })
            .collect(),
        metrics,
        resources: resource_figures(runs, baseline),
        limits: runs
            .iter()
            .flat_map(|run| {
                run.summary.resources.iter().filter_map(|host| {
                    Some(RunLimit {
                        run: run.name.clone(),
                        host: host.host.clone(),
                        limit: host.limits.first()?.clone(),
                    })
                })
            })
            .collect(),
        environment: environment(runs),
        setup: setup(runs),
        apdex_comparable: comparable,
        untested,
        regressions,
    }
}

/// A figure as the tables print it.
pub fn number(metric: ComparedMetric, v: Option<f64>) -> String {
    match (metric, v) {
        (_, None) => "-".into(),
        (ComparedMetric::Apdex, Some(v)) => format!("{v:.3}"),
        (ComparedMetric::Errors, Some(v)) => format!("{v:.2}"),
        (_, Some(v)) if v >= 100.0 => format!("{v:.0}"),
        (_, Some(v)) => format!("{v:.1}"),
    }
}

fn short_label(label: &str) -> String {
    if label.chars().count() <= 18 {
        label.to_string()
    } else {
        let cut: String = label.chars().take(17).collect();
        format!("{cut}…")
    }
}

/// The terminal rendering.
pub fn render_compare(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Comparing {} with {} as the baseline; * = significant ({:.0}% bootstrap interval of the per-second medians excludes 0), n.s. = not significant, n.t. = not tested (a run has fewer than 3 measured seconds)",
        headroom_units::quantity::count(c.runs.len(), "run", "runs"),
        c.baseline,
        c.confidence * 100.0
    );
    for run in &c.runs {
        let _ = writeln!(
            out,
            "  {}  {}  {}  {}  {}",
            run.name, run.bundle, run.started_at, run.status, run.target
        );
    }
    let width = c
        .runs
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(1)
        + 11;
    for table in &c.metrics {
        metric_table_text(&mut out, c, table, width);
    }
    for host in &c.resources {
        resources_text(&mut out, &c.runs, host, width);
    }
    limits_text(&mut out, c, width);
    setup_text(&mut out, c);
    regressions_text(&mut out, c);
    out
}

/// A metric's table, its labels in blocks of four columns, a row for
/// each run with its change against the baseline and its significance.
fn metric_table_text(out: &mut String, c: &Comparison, table: &MetricTable, width: usize) {
    const PER_BLOCK: usize = 4;
    let _ = writeln!(out, "\n{}", table.metric.title());
    for start in (0..table.labels.len()).step_by(PER_BLOCK) {
        let end = (start + PER_BLOCK).min(table.labels.len());
        let _ = write!(out, "  {:width$}", "");
        for label in &table.labels[start..end] {
            let _ = write!(out, " {:>24}", short_label(label));
        }
        out.push('\n');
        for (run, row) in c.runs.iter().zip(&table.rows) {
            let name = if run.name == c.baseline {
                format!("{} (baseline)", run.name)
            } else {
                run.name.clone()
            };
            let _ = write!(out, "  {name:width$}");
            for cell in &row[start..end] {
                let mut text = number(table.metric, cell.value);
                if let Some(change) = cell.change_pct {
                    let mark = match cell.significant {
                        Some(true) => " *",
                        Some(false) => " n.s.",
                        None => " n.t.",
                    };
                    text = format!("{text} {}{mark}", signed_pct(change));
                }
                let _ = write!(out, " {text:>24}");
            }
            out.push('\n');
        }
    }
}

/// A host's resources, a row for each run: average and peak, and the
/// change of the average.
fn resources_text(out: &mut String, runs: &[RunInfo], host: &ResourceFigures, width: usize) {
    let _ = writeln!(
        out,
        "\nResources of {} (average / peak, change of the average)",
        host.host
    );
    if let Some(first) = host.rows.first() {
        let _ = write!(out, "  {:width$}", "");
        for figure in first {
            let _ = write!(out, " {:>24}", figure.name);
        }
        out.push('\n');
    }
    for (run, row) in runs.iter().zip(&host.rows) {
        let _ = write!(out, "  {:width$}", run.name);
        for figure in row {
            let mut text = match (figure.average, figure.peak) {
                (Some(a), Some(p)) => format!("{a:.1} / {p:.1}"),
                _ => "-".into(),
            };
            if let Some(change) = figure.change_pct {
                let shown = if change.abs() < 0.5 { 0.0 } else { change };
                text.push_str(&format!(" {shown:+.0}%"));
            }
            let _ = write!(out, " {text:>24}");
        }
        out.push('\n');
    }
}

/// Each run's first judged resource: saturated or the fullest, with its
/// evidence.
fn limits_text(out: &mut String, c: &Comparison, width: usize) {
    if c.limits.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nWhat limits each run (the server's resource judged first, with --process)"
    );
    for l in &c.limits {
        let state = if l.limit.saturated {
            "saturated"
        } else {
            "the fullest, not saturated"
        };
        let _ = writeln!(
            out,
            "  {:width$} {} {:.0}% ({state}): {}",
            l.run,
            l.host,
            l.limit.utilization_pct,
            l.limit.describe()
        );
    }
}

/// What differs between the runs' setups and environments, and whether
/// their Apdex scores compare.
fn setup_text(out: &mut String, c: &Comparison) {
    if c.setup.is_empty() {
        let _ = writeln!(
            out,
            "\nSetup: the same target, scenario, profile, users and Apdex T/F."
        );
    } else {
        let _ = writeln!(
            out,
            "\nSetup differences (these runs measured different things):"
        );
        differences_text(out, &c.runs, &c.setup);
    }
    if !c.apdex_comparable {
        let _ = writeln!(
            out,
            "  Apdex is not compared: the runs used different Apdex T or F, so their scores measure different things."
        );
    }
    if c.environment.is_empty() {
        let _ = writeln!(out, "\nEnvironment: no fingerprint field differs.");
    } else {
        let _ = writeln!(out, "\nEnvironment differences:");
        differences_text(out, &c.runs, &c.environment);
    }
}

/// The significant regressions beyond the threshold, or that there is
/// none.
fn regressions_text(out: &mut String, c: &Comparison) {
    if c.regressions.is_empty() {
        let _ = writeln!(out, "\n{}", no_regression(c));
    } else {
        let _ = writeln!(
            out,
            "\nSignificant regressions beyond {:.1}%:",
            c.threshold_pct
        );
        for r in &c.regressions {
            let _ = writeln!(
                out,
                "  {}: {}[{}] {:+.1}% (interval {:+.1}% .. {:+.1}%)",
                r.run,
                r.metric.short(),
                r.label,
                r.change_pct,
                r.interval_pct.0,
                r.interval_pct.1
            );
        }
    }
}

/// A change in %, signed, without a "-0.0".
pub fn signed_pct(change: f64) -> String {
    let shown = if change.abs() < 0.05 { 0.0 } else { change };
    format!("{shown:+.1}%")
}

/// What to say when nothing regressed: and whether everything was tested.
pub fn no_regression(c: &Comparison) -> String {
    let tested = c
        .metrics
        .iter()
        .flat_map(|t| t.rows.iter().flatten())
        .filter(|cell| cell.change_pct.is_some())
        .count();
    if c.untested == 0 {
        format!("No significant regression beyond {:.1}%.", c.threshold_pct)
    } else if c.untested == tested {
        "Nothing could be tested for significance: a run has fewer than 3 measured seconds. \
         Run longer (-d, or capacity's --step-duration) to compare these runs."
            .to_string()
    } else {
        format!(
            "No significant regression beyond {:.1}% among the changes tested; {} could not be \
             tested (a run has fewer than 3 measured seconds for them).",
            c.threshold_pct, c.untested
        )
    }
}

/// One line per differing field: its value in each run.
fn differences_text(out: &mut String, runs: &[RunInfo], diffs: &[EnvironmentDifference]) {
    for diff in diffs {
        let values: Vec<String> = runs
            .iter()
            .zip(&diff.values)
            .map(|(r, v)| format!("{}: {}", r.name, v.as_deref().unwrap_or("(none)")))
            .collect();
        let _ = writeln!(out, "  {:40} {}", diff.field, values.join("   "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn texts_differ_in_their_digest() {
        assert_ne!(text_digest("a: 1\n"), text_digest("a: 2\n"));
        assert!(text_digest("a\nb\n").starts_with("2 lines, "));
    }

    #[test]
    fn environment_differences_skip_moving_readings() {
        let run = |governor: &str, load: f64| {
            vec![(
                "generator".to_string(),
                json!({"cpu": {"governor": governor, "model": "A"}, "load": {"one": load}}),
            )]
        };
        let diffs = differences(&[run("performance", 0.1), run("powersave", 0.9)]);
        assert_eq!(diffs.len(), 1, "{diffs:?}");
        assert_eq!(diffs[0].field, "generator.cpu.governor");
        assert_eq!(
            diffs[0].values,
            vec![Some("performance".into()), Some("powersave".into())]
        );
    }
}
