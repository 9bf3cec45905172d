//! A lesson level (`capacity --arrive-within`): its students arrive within
//! a window and read, and the level is judged in its two phases, the
//! arrival (the login burst, which a closed level's warm-up would leave
//! out) and the reading after it; it meets the target when both do. The
//! phases and their rule are the run's (`headroom_load::phases`); this
//! module judges them.

use headroom_analysis::capacity::{meets, ApdexGoal};
use headroom_bundle::capacity::{Level, LevelPhase};
use headroom_bundle::manifest::read_manifest;
use headroom_bundle::summary::PhaseFigures;
use headroom_bundle::BundleError;
use headroom_units::quantity::saturating_secs;
use std::path::Path;

/// How often a lesson search measures its last met level unless told
/// (`--confirm`): one burst is one draw of arrival times and one moment of
/// the server, and near the knee another lesson of the same class can
/// break where this one met, so the answer needs every one of three to
/// meet.
pub const REPETITIONS: u32 = 3;

/// Judges the lesson level's phases from its bundle: each against the
/// target; the level meets it when every phase does (and the whole did).
/// With `arrival_only` (the search ended the level with its arrival
/// phase, its reading known), the arrival phase alone.
pub fn judge_phases(
    level: &mut Level,
    bundle: &Path,
    target: &ApdexGoal,
    arrival_only: bool,
) -> Result<(), BundleError> {
    let manifest = read_manifest(bundle)?;
    // The level's summary may have been cut to its measured window; the
    // whole run's keeps the phases.
    let phases = manifest
        .measurement
        .map(|m| m.whole_run.phases)
        .or_else(|| manifest.summary.map(|s| s.phases))
        .unwrap_or_default();
    // A level that ended with its broken arrival phase reached the
    // reading phase by a moment at most: not a phase.
    level.phases = phases
        .iter()
        .filter(|p| p.to_s - p.from_s >= 1.0)
        .take(if arrival_only { 1 } else { usize::MAX })
        .map(|p| judge(p, target))
        .collect();
    if level.phases.is_empty() {
        level.good = false;
        level.ended = "no phases were recorded: the run was not a lesson".into();
        return Ok(());
    }
    level.good = level.good && level.phases.iter().all(|p| p.met);
    level.ended = level
        .phases
        .iter()
        .map(LevelPhase::describe)
        .collect::<Vec<_>>()
        .join("; ");
    Ok(())
}

fn judge(phase: &PhaseFigures, target: &ApdexGoal) -> LevelPhase {
    let f = &phase.figures;
    let has_latency = f.count > 0;
    let p95_ms = has_latency.then_some(f.p95_ms);
    let error_rate = if has_latency { f.error_rate } else { 1.0 };
    LevelPhase {
        name: phase.name.clone(),
        from_s: phase.from_s,
        to_s: phase.to_s,
        arrivals: phase.arrivals,
        requests: f.count,
        apdex: f.apdex,
        error_rate,
        p95_ms,
        met: meets(
            target,
            f.apdex,
            error_rate,
            p95_ms.map(|ms| saturating_secs(ms / 1000.0)),
            f.count,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_bundle::summary::LabelFigures;

    fn phase(name: &str, count: u64, apdex: f64, p95_ms: f64) -> PhaseFigures {
        let mut figures: LabelFigures = serde_json::from_value(serde_json::json!({
            "count": count, "errors": 0, "error_rate": 0.0, "mean_ms": 10.0, "min_ms": 1.0,
            "p50_ms": 10.0, "p90_ms": 20.0, "p95_ms": p95_ms, "p99_ms": 30.0, "max_ms": 40.0,
            "stdev_ms": 5.0, "rps": 1.0, "apdex": apdex, "apdex_rating": null,
            "apdex_satisfied": 0, "apdex_tolerating": 0, "apdex_frustrated": 0,
            "bytes_received": 0, "bytes_sent": 0
        }))
        .unwrap();
        figures.apdex = Some(apdex);
        PhaseFigures {
            name: name.into(),
            from_s: 0.0,
            to_s: 70.0,
            arrivals: 30,
            figures,
        }
    }

    /// A burst that breaks the target breaks the level, however well the
    /// reading after it goes; a phase without requests does not meet it.
    #[test]
    fn each_phase_is_judged_on_its_own() {
        let target = ApdexGoal {
            apdex: 0.85,
            max_error: 0.01,
            p95_max: None,
        };
        let burst = judge(&phase("arrival", 200, 0.62, 900.0), &target);
        assert!(!burst.met);
        assert_eq!(
            burst.describe(),
            "arrival 0–70 s: 200 requests, Apdex 0.620, p95 900 ms, errors 0.0% broken"
        );
        assert!(judge(&phase("reading", 150, 0.99, 40.0), &target).met);
        let empty = judge(&phase("reading", 0, 1.0, 0.0), &target);
        assert!(!empty.met && empty.p95_ms.is_none());
        let strict = ApdexGoal {
            p95_max: Some(std::time::Duration::from_millis(500)),
            ..target
        };
        assert!(!judge(&phase("reading", 150, 0.99, 600.0), &strict).met);
    }
}
