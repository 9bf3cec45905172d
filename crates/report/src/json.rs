//! The `--json` document. Its shape is a contract that scripts and CI rely
//! on; docs/json.md describes it. Add fields, never rename or remove them.

use headroom_analysis::Verdict;
use headroom_bundle::summary::{RunStatus, RunSummary};
use headroom_bundle::warnings::RunWarning;
use serde::Serialize;
use std::path::Path;

/// What every renderer needs to know about a finished run.
pub struct ReportInput<'a> {
    pub status: RunStatus,
    pub bundle: &'a Path,
    pub target: &'a str,
    pub summary: &'a RunSummary,
    pub warnings: &'a [RunWarning],
    pub verdicts: &'a [Verdict],
    /// Labels in the order of the scenario's steps (tables follow it).
    pub label_order: &'a [String],
    /// A lesson run: the window its students arrived within, s (its
    /// answer opens the summary).
    pub arrive_within_s: Option<f64>,
}

#[derive(Serialize)]
struct CriterionJson<'a> {
    expression: &'a str,
    failed: bool,
    measured: Option<f64>,
    threshold: f64,
    unit: &'static str,
    message: &'a str,
}

#[derive(Serialize)]
struct SummaryJson<'a> {
    schema_version: u32,
    status: RunStatus,
    /// A lesson run: its answer in words ("A class of 30 arriving within
    /// 60 s: fine. ...").
    #[serde(skip_serializing_if = "Option::is_none")]
    answer: Option<String>,
    bundle: String,
    target: &'a str,
    elapsed_s: f64,
    apdex_t_ms: f64,
    apdex_f_ms: f64,
    peak_vus: u32,
    concurrency: f64,
    throughput_mb_s: f64,
    total: &'a headroom_bundle::summary::LabelFigures,
    labels: &'a std::collections::BTreeMap<String, headroom_bundle::summary::LabelFigures>,
    #[serde(skip_serializing_if = "Option::is_none")]
    requests: Option<headroom_bundle::wire::WireCount>,
    checks: &'a std::collections::BTreeMap<String, headroom_bundle::summary::CheckFigures>,
    resources: &'a [headroom_bundle::resources::HostSummary],
    /// A lesson run: its arrival and reading phases, each judged.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    phases: &'a [headroom_bundle::summary::PhaseFigures],
    /// A lesson run: users who arrived in each second.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    arrivals_per_second: &'a [u64],
    warnings: &'a [RunWarning],
    criteria: Vec<CriterionJson<'a>>,
    passed: bool,
}

pub fn json_summary(input: &ReportInput<'_>) -> String {
    let s = input.summary;
    let doc = SummaryJson {
        schema_version: 1,
        status: input.status,
        answer: input
            .arrive_within_s
            .and_then(|within| crate::first_sentence::lesson_run(s, within)),
        bundle: input.bundle.display().to_string(),
        target: input.target,
        elapsed_s: s.elapsed_s,
        apdex_t_ms: s.apdex_t_ms,
        apdex_f_ms: s.apdex_f_ms,
        peak_vus: s.peak_vus,
        concurrency: s.concurrency,
        throughput_mb_s: s.throughput_mb_s,
        total: &s.total,
        labels: &s.labels,
        requests: s.requests,
        checks: &s.checks,
        resources: &s.resources,
        phases: &s.phases,
        arrivals_per_second: &s.arrivals_per_second,
        warnings: input.warnings,
        criteria: input
            .verdicts
            .iter()
            .map(|v| CriterionJson {
                expression: &v.criterion.expression,
                failed: v.failed,
                measured: v.measured,
                threshold: v.criterion.threshold,
                unit: v.criterion.metric.unit(),
                message: &v.message,
            })
            .collect(),
        passed: input.verdicts.iter().all(|v| !v.failed),
    };
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
