//! Waiting for a quiet machine before a run: the CPUs idle (busy below a
//! bound over the last second) and the hottest sensor steady (changed by
//! less than a bound over a window, as stressberry waits for < 0.2 °C).

use crate::file::Quiet;
use headroom_monitor::{Sampler, SamplerConfig};
use std::time::{Duration, Instant};

/// What a quiet wait found.
#[derive(Debug, Clone, PartialEq)]
pub struct QuietOutcome {
    pub waited: Duration,
    /// The machine was still not quiet at the timeout (the run went ahead).
    pub timed_out: bool,
    /// Busy CPU % over the last second waited.
    pub cpu_pct: f64,
    /// The hottest sensor at the end, °C (none without sensors).
    pub temperature_c: Option<f64>,
}

impl QuietOutcome {
    /// One line for runs.csv and the progress: "quiet after 4s (CPU 2.1%, 48.3 °C)".
    pub fn describe(&self) -> String {
        let temperature = self
            .temperature_c
            .map(|t| format!(", {t:.1} °C"))
            .unwrap_or_default();
        if self.timed_out {
            format!(
                "not quiet after {}s (CPU {:.1}%{temperature}): ran anyway",
                self.waited.as_secs(),
                self.cpu_pct
            )
        } else {
            format!(
                "quiet after {}s (CPU {:.1}%{temperature})",
                self.waited.as_secs(),
                self.cpu_pct
            )
        }
    }
}

/// Waits until quiet or the timeout; `stop` ends the wait early. The
/// figures are the monitor's (`--monitor local`), one second at a time.
pub fn wait(quiet: &Quiet, stop: impl Fn() -> bool) -> QuietOutcome {
    let mut sampler = Sampler::new(SamplerConfig {
        roots: Default::default(),
        processes: Vec::new(),
        link_capacity_mbit: None,
        databases: Vec::new(),
    });
    sampler.sample();
    let started = Instant::now();
    let mut temperatures: Vec<(Instant, f64)> = Vec::new();
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let Some(now) = sampler.sample() else {
            continue;
        };
        let temperature_c = now
            .temperatures_c
            .values()
            .copied()
            .filter(|t| t.is_finite())
            .reduce(f64::max);
        let at = Instant::now();
        if let Some(t) = temperature_c {
            temperatures.push((at, t));
        }
        temperatures.retain(|(when, _)| at.duration_since(*when) <= quiet.window);
        let steady = temperature_c.is_none() || {
            let (low, high) = temperatures
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, t)| {
                    (lo.min(*t), hi.max(*t))
                });
            started.elapsed() >= quiet.window && high - low < quiet.temperature_change_c
        };
        let waited = started.elapsed();
        let outcome = |timed_out| QuietOutcome {
            waited,
            timed_out,
            cpu_pct: now.cpu_pct,
            temperature_c,
        };
        if now.cpu_pct < quiet.cpu_below_pct && steady {
            return outcome(false);
        }
        if waited >= quiet.timeout || stop() {
            return outcome(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_when_quiet_or_at_its_timeout_and_says_which() {
        // Any machine is below 101% busy with no sensor change of 1000 °C
        // (a machine busy with other work reads exactly 100%).
        let lenient = Quiet {
            cpu_below_pct: 101.0,
            temperature_change_c: 1000.0,
            window: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
        };
        let outcome = wait(&lenient, || false);
        assert!(!outcome.timed_out, "{outcome:?}");
        assert!(
            outcome.describe().starts_with("quiet after 1s (CPU "),
            "{}",
            outcome.describe()
        );
        // Nothing is below 0.001% busy for long: the timeout decides.
        let strict = Quiet {
            cpu_below_pct: 0.001,
            timeout: Duration::from_secs(1),
            ..lenient
        };
        let outcome = wait(&strict, || false);
        assert!(outcome.timed_out || outcome.cpu_pct < 0.001, "{outcome:?}");
        if outcome.timed_out {
            assert!(
                outcome.describe().contains("ran anyway"),
                "{}",
                outcome.describe()
            );
        }
    }
}
