//! The figures reported for one label (or the total) of a run.

use crate::apdex::{ApdexCounts, Rating};
use crate::latency::LatencyStats;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::time::Duration;

/// What a user reads for one label: counts, error rate, latency, throughput, Apdex.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelSummary {
    pub count: u64,
    pub errors: u64,
    /// Errors as a fraction of all samples (0..=1).
    pub error_rate: f64,
    pub latency: LatencyStats,
    /// Samples per second over the run's elapsed time.
    pub rps: f64,
    pub apdex: Option<f64>,
    pub apdex_rating: Option<Rating>,
    pub apdex_counts: ApdexCounts,
    pub bytes_received: u64,
    pub bytes_sent: u64,
}

/// Plain inputs of a summary, so callers need not build one by hand.
pub struct SummaryInput<'a> {
    pub histogram: &'a Histogram<u64>,
    pub count: u64,
    pub errors: u64,
    pub apdex: ApdexCounts,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    pub elapsed: Duration,
}

impl LabelSummary {
    pub fn of(input: SummaryInput<'_>) -> LabelSummary {
        let apdex = input.apdex.score();
        let secs = input.elapsed.as_secs_f64();
        LabelSummary {
            count: input.count,
            errors: input.errors,
            error_rate: if input.count == 0 {
                0.0
            } else {
                input.errors as f64 / input.count as f64
            },
            latency: LatencyStats::of(input.histogram),
            rps: if secs > 0.0 {
                input.count as f64 / secs
            } else {
                0.0
            },
            apdex,
            apdex_rating: apdex.map(Rating::of),
            apdex_counts: input.apdex,
            bytes_received: input.bytes_received,
            bytes_sent: input.bytes_sent,
        }
    }
}
