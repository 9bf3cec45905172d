//! The run's figures as plain, serialisable data: what `--json` prints and
//! what `manifest.json` keeps. Field names and units are a stable contract
//! (see docs/json.md); durations are milliseconds, rates per second.

use crate::sample::ErrorKind;
use crate::tally::Tally;
use headroom_analysis::apdex::ApdexThresholds;
use headroom_analysis::summary::{LabelSummary, SummaryInput};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// Figures of one label, or of the total.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LabelFigures {
    pub count: u64,
    pub errors: u64,
    pub error_rate: f64,
    pub mean_ms: f64,
    pub min_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub stdev_ms: f64,
    /// Responses above 5 × the mean (003's peaks); `None` in bundles
    /// written before they were counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peaks: Option<u64>,
    pub rps: f64,
    pub apdex: Option<f64>,
    pub apdex_rating: Option<String>,
    pub apdex_satisfied: u64,
    pub apdex_tolerating: u64,
    pub apdex_frustrated: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    /// Service time (actual start to last byte); equals response time in the
    /// closed model without a throughput cap.
    pub service_mean_ms: f64,
    pub service_p95_ms: f64,
    /// Mean time to first byte and mean connect time (over new connections).
    pub ttfb_mean_ms: f64,
    pub connect_mean_ms: f64,
    pub connections: u64,
    /// TLS handshakes made on the new connections, how many resumed a
    /// session, and their mean time (part of `connect_mean_ms`); absent
    /// without TLS.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tls_handshakes: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tls_resumed: u64,
    #[serde(default, skip_serializing_if = "is_zero_ms")]
    pub tls_mean_ms: f64,
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Why, for the error kinds whose cause the kind alone does not say
    /// (the first reason seen).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_details: BTreeMap<String, String>,
    /// Requests sent again on a new connection because the server closed a
    /// kept-alive one before answering (not failures; absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub resent: u64,
    pub status_codes: BTreeMap<String, u64>,
    /// Responses of 400 and above by exact status ("404": 12); statuses
    /// beyond the first eight distinct ones of a second are under "other".
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_statuses: BTreeMap<String, u64>,
    /// The server's own account of its time (its Server-Timing header):
    /// each metric's mean over the responses that gave it; absent when
    /// none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_timing: Vec<crate::server_timing::TimingFigure>,
    /// Responses that had Server-Timing.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub server_timed: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_ms(n: &f64) -> bool {
    *n == 0.0
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

impl crate::wire::Carried for LabelFigures {
    fn count(&self) -> u64 {
        self.count
    }
    fn bytes_received(&self) -> u64 {
        self.bytes_received
    }
    fn bytes_sent(&self) -> u64 {
        self.bytes_sent
    }
}

impl LabelFigures {
    pub fn of(tally: &Tally, elapsed: Duration) -> (LabelFigures, LabelSummary) {
        let c = &tally.counts;
        let summary = LabelSummary::of(SummaryInput {
            histogram: &tally.response,
            count: c.count,
            errors: c.errors,
            apdex: c.apdex,
            bytes_received: c.bytes_received,
            bytes_sent: c.bytes_sent,
            elapsed,
        });
        let service = headroom_analysis::LatencyStats::of(&tally.service);
        let l = &summary.latency;
        let per = |sum: u64, n: u64| {
            if n == 0 {
                0.0
            } else {
                (sum as f64 / n as f64).round() / 1e3
            }
        };
        let figures = LabelFigures {
            count: c.count,
            errors: c.errors,
            error_rate: summary.error_rate,
            mean_ms: ms(l.mean),
            min_ms: ms(l.min),
            p50_ms: ms(l.p50),
            p90_ms: ms(l.p90),
            p95_ms: ms(l.p95),
            p99_ms: ms(l.p99),
            max_ms: ms(l.max),
            stdev_ms: ms(l.stdev),
            peaks: Some(l.peaks),
            rps: summary.rps,
            apdex: summary.apdex,
            apdex_rating: summary.apdex_rating.map(|r| r.to_string()),
            apdex_satisfied: c.apdex.satisfied,
            apdex_tolerating: c.apdex.tolerating,
            apdex_frustrated: c.apdex.frustrated,
            bytes_received: c.bytes_received,
            bytes_sent: c.bytes_sent,
            service_mean_ms: ms(service.mean),
            service_p95_ms: ms(service.p95),
            ttfb_mean_ms: per(c.ttfb_micros, c.ttfb_count),
            connect_mean_ms: per(c.connect_micros, c.connects),
            connections: c.connects,
            server_timing: c.server_timing.figures(),
            server_timed: c.server_timing.responses,
            tls_handshakes: c.tls_handshakes,
            tls_resumed: c.tls_resumed,
            tls_mean_ms: per(c.tls_micros, c.tls_handshakes),
            errors_by_kind: ErrorKind::ALL
                .iter()
                .filter(|k| c.errors_of(**k) > 0)
                .map(|k| (k.name().to_string(), c.errors_of(*k)))
                .collect(),
            resent: c.resent,
            error_details: ErrorKind::ALL
                .iter()
                .filter_map(|k| {
                    Some((
                        k.name().to_string(),
                        c.error_details[*k as usize]?.to_string(),
                    ))
                })
                .collect(),
            status_codes: c
                .status_classes
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(class, n)| {
                    let name = if class == 0 {
                        "none".to_string()
                    } else {
                        format!("{class}xx")
                    };
                    (name, *n)
                })
                .collect(),
            error_statuses: c
                .error_statuses
                .iter()
                .filter(|(status, _)| *status != 0)
                .map(|(status, n)| (status.to_string(), *n))
                .chain(
                    (c.error_statuses_other > 0)
                        .then(|| ("other".to_string(), c.error_statuses_other)),
                )
                .collect(),
        };
        (figures, summary)
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still running, or the process died before finishing the bundle.
    Running,
    #[default]
    Complete,
    /// Stopped by Ctrl-C or SIGTERM; the data up to then is valid.
    Interrupted,
    /// Ended by an error of headroom's own (e.g. the bundle could not be written).
    Aborted,
    /// Found `running` by a reader: the process died, and the figures were
    /// rebuilt from the files it had written. Never written by a run.
    Died,
}

impl RunStatus {
    /// The name written in the manifest: `complete`, `interrupted`, ...
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Aborted => "aborted",
            RunStatus::Died => "died",
        }
    }
}

/// The run's figures, as stored in the manifest and printed by `--json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSummary {
    pub elapsed_s: f64,
    pub apdex_t_ms: f64,
    pub apdex_f_ms: f64,
    pub total: LabelFigures,
    pub labels: BTreeMap<String, LabelFigures>,
    /// Peak number of VUs running at once.
    pub peak_vus: u32,
    /// Mean number of requests in flight (siege's "concurrency"): total
    /// response time divided by elapsed time.
    pub concurrency: f64,
    /// Received bytes per second, in MB/s (10^6).
    pub throughput_mb_s: f64,
    /// Scenario checks by name (empty in URL mode).
    #[serde(default)]
    pub checks: BTreeMap<String, CheckFigures>,
    /// Monitored hosts (`--monitor`), averages and peaks over the run.
    #[serde(default)]
    pub resources: Vec<crate::resources::HostSummary>,
    /// A lesson run: its arrival phase and its reading phase, each judged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseFigures>,
    /// A lesson run: the users who arrived in each second, as recorded (up
    /// to the last second with an arrival).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub arrivals_per_second: Vec<u64>,
    /// When the run loaded pages (the total counts pages): every request
    /// that went over the wire and its bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<crate::wire::WireCount>,
}

/// One phase of a run (a lesson's `arrival` or `reading` phase): its
/// seconds from the start and its figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseFigures {
    pub name: String,
    pub from_s: f64,
    pub to_s: f64,
    /// Users who arrived during the phase.
    pub arrivals: u64,
    pub figures: LabelFigures,
}

/// How often a scenario check passed and failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckFigures {
    pub passes: u64,
    pub failures: u64,
    /// The labels of the steps that evaluate the check, in the order of
    /// the steps (absent in bundles written before headroom kept them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
}

impl CheckFigures {
    /// No step evaluated the check: its users never reached it (a step
    /// behind an `if:` or `once:`, or a run that ended first).
    pub fn never_ran(&self) -> bool {
        self.passes == 0 && self.failures == 0
    }

    /// Its failures as a % of its evaluations (`None` when it never ran).
    pub fn failure_pct(&self) -> Option<f64> {
        let runs = self.passes.saturating_add(self.failures);
        (runs > 0).then(|| self.failures as f64 * 100.0 / runs as f64)
    }
}

impl RunSummary {
    /// The labels whose responses gave Server-Timing metrics.
    pub fn server_timed_labels(&self) -> Vec<(&String, &LabelFigures)> {
        self.labels
            .iter()
            .filter(|(_, f)| !f.server_timing.is_empty())
            .collect()
    }

    pub fn thresholds(apdex: &ApdexThresholds) -> (f64, f64) {
        (ms(apdex.satisfied), ms(apdex.tolerated))
    }
}
