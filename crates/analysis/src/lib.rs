//! Analysis of recorded load: Apdex with ratings, latency statistics from
//! HdrHistograms, and the pass/fail criteria of `--fail-if`.
//!
//! Everything here works on plain data (histograms and counters), so the
//! engine, the report renderers and later the capacity search share one
//! definition of every figure.

pub mod apdex;
pub mod bootstrap;
pub mod capacity;
pub mod criteria;
pub mod experiment;
pub mod fault;
pub mod jmeter;
pub mod latency;
pub mod mva;
pub mod prediction;
pub mod spread;
pub mod summary;

pub use apdex::{ApdexCounts, ApdexThresholds, Rating};
pub use criteria::{Criterion, CriterionError, Metric, Operator, Verdict};
pub use latency::{new_histogram, LatencyStats, HISTOGRAM_MAX_MICROS};
pub use summary::LabelSummary;
