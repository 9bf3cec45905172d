//! `headroom bench`: what the host can do, each figure by a method a reader
//! can check and compare with the tool the source studies used.
//!
//! | module | benchmark | compared with |
//! |---|---|---|
//! | [`cpu`] | sysbench's prime method; gzip of a web page | `sysbench cpu` |
//! | [`compression`] | 7-Zip's own rating, run by headroom (002) | `7z b` |
//! | [`crypto`] | OpenSSL's own speed test, run by headroom (002) | `openssl speed` |
//! | [`memory`] | STREAM's Copy, Scale, Add, Triad | STREAM, `mbw` |
//! | [`storage`] | the PiBenchmarks score; commit latency | dd, fio, iozone |
//! | [`reads`] | disk and cached reads as hdparm times them (000) | `hdparm -tT` |
//! | [`fileio`] | sequential read and write at block sizes, O_DIRECT (002) | `sysbench fileio` |
//! | [`network`] | TCP both ways, round trip against payload size | iperf3 |
//! | [`thermal`] | stressberry's protocol | stressberry |
//! | [`stack`] | Moodle's system benchmark, in spirit | Moodle |
//!
//! [`reference`] holds published figures and says where a host stands;
//! [`external`] runs the programs whose own figures are published;
//! [`latest`] finds a host's latest bench for doctor and capacity reports.
//! [`suite`] drives a bench run: the chosen benchmarks into the bundle.
//! Each benchmark returns a [`BenchResult`] (the bench bundle's type) with
//! one value per repetition of every figure.

pub mod aio;
pub mod compression;
pub mod cpu;
pub mod crypto;
pub mod doctor_text;
pub mod emulate;
pub mod emulate_text;
pub mod emulate_wait;
pub mod external;
pub mod fileio;
pub mod host_scale;
pub mod latest;
pub mod memory;
pub mod network;
pub mod options;
pub mod reads;
pub mod reference;
pub mod stack;
pub mod storage;
pub mod suite;
pub mod thermal;

pub use headroom_bundle::bench::{BenchResult, Measure, Series};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The benchmarks, in the order `headroom bench` runs them.
pub const BENCHMARKS: [&str; 10] = [
    "cpu",
    "compression",
    "crypto",
    "memory",
    "storage",
    "reads",
    "fileio",
    "network",
    "thermal",
    "stack",
];

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The benchmark cannot give a true figure here (tmpfs, no space, no
    /// agent, ...); the message says what to do.
    #[error("{0}")]
    Refused(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("interrupted")]
    Interrupted,
}

pub(crate) fn io_error(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BenchError {
    let what = what.into();
    move |source| BenchError::Io { what, source }
}

pub(crate) fn measure(key: &str, name: impl Into<String>, unit: &str, higher: bool) -> Measure {
    Measure {
        key: key.into(),
        name: name.into(),
        unit: unit.into(),
        higher_is_better: higher,
        values: Vec::new(),
    }
}

pub(crate) fn settings<const N: usize>(pairs: [(&str, String); N]) -> BTreeMap<String, String> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Fails with [`BenchError::Interrupted`] once `stop` is set.
pub(crate) fn check(stop: &AtomicBool) -> Result<(), BenchError> {
    if stop.load(Ordering::Relaxed) {
        Err(BenchError::Interrupted)
    } else {
        Ok(())
    }
}

/// Sleeps `duration` in short steps; false when `stop` was set meanwhile.
pub(crate) fn sleep_unless(stop: &AtomicBool, duration: Duration) -> bool {
    let end = Instant::now() + duration;
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// Adds a note for each figure whose repetitions vary by more than 10%:
/// something else used the machine, or the figure needs more repetitions.
pub fn note_noise(result: &mut BenchResult) {
    for m in &result.measures {
        let Some(cov) = headroom_analysis::experiment::Summary::of(&m.values).and_then(|s| s.cov)
        else {
            continue;
        };
        if cov > 0.10 {
            result.notes.push(format!(
                "{} varies by {:.0}% between repetitions: something else used the machine, or it needs \
                 more repetitions (--repetitions); compare it only with care",
                m.name,
                cov * 100.0
            ));
        }
    }
}

/// The number of cores this process may run on.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A value at quantile `q` of sorted values (nearest rank).
pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}
