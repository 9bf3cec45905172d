//! A lesson run's two phases, and the rule that splits them: the arrival
//! phase (the login burst) lasts from the start to `arrive_within` plus
//! one mean think time (the last student's first page read), rounded up to
//! a whole second since the figures are kept per second; the reading
//! phase is the rest. The run computes them as it goes; a bundle rebuilt
//! from its files (a merge of shards, the recovery of a run that died)
//! computes them again from intervals.csv here.

use crate::intervals::read_intervals;
use crate::manifest::Manifest;
use crate::recovery::summary_of_window;
use crate::summary::{PhaseFigures, RunSummary};
use crate::{BundleError, TOTAL_LABEL};
use std::path::Path;
use std::time::Duration;

/// The first second of the reading phase.
pub fn reading_from(arrive_within: Duration, think: Duration) -> u64 {
    let end = arrive_within + think;
    end.as_secs() + u64::from(end.subsec_nanos() > 0)
}

/// The first second of a recorded lesson's reading phase (`None`: the run
/// was not a lesson).
pub fn reading_from_manifest(manifest: &Manifest) -> Option<u64> {
    let within = manifest.profile.arrive_within_s?;
    let think = manifest.profile.think.mean_s();
    Some(reading_from(
        headroom_units::quantity::saturating_secs(within),
        headroom_units::quantity::saturating_secs(think),
    ))
}

/// A lesson bundle's phases and its arrivals per second, rebuilt from its
/// files (empty for any other run).
pub fn rebuild(
    dir: &Path,
    manifest: &Manifest,
    elapsed: Duration,
) -> Result<(Vec<PhaseFigures>, Vec<u64>), BundleError> {
    let Some(split) = reading_from_manifest(manifest) else {
        return Ok((Vec::new(), Vec::new()));
    };
    let mut per_second: Vec<u64> = Vec::new();
    for row in read_intervals(dir)?
        .iter()
        .filter(|r| r.label == TOTAL_LABEL)
    {
        let at = row.second as usize;
        if per_second.len() <= at {
            per_second.resize(at + 1, 0);
        }
        per_second[at] += row.arrivals.unwrap_or(0);
    }
    let last = per_second.iter().rposition(|n| *n > 0).map_or(0, |i| i + 1);
    per_second.truncate(last);
    let split = Duration::from_secs(split).min(elapsed);
    let mut phases = Vec::new();
    for (name, from, to) in [
        ("arrival", Duration::ZERO, split),
        ("reading", split, elapsed),
    ] {
        if to <= from {
            continue;
        }
        let figures = summary_of_window(dir, manifest, from..to)?.total;
        let arrivals = per_second
            .iter()
            .enumerate()
            .filter(|(s, _)| (from..to).contains(&Duration::from_secs(*s as u64)))
            .map(|(_, n)| n)
            .sum();
        phases.push(PhaseFigures {
            name: name.into(),
            from_s: from.as_secs_f64(),
            to_s: to.as_secs_f64(),
            arrivals,
            figures,
        });
    }
    Ok((phases, per_second))
}

/// A summary rebuilt from the bundle's files (by
/// [`crate::recovery::recover_summary`]) with a lesson's phases and
/// arrivals per second, which those files hold too.
pub fn recover_summary(dir: &Path, manifest: &Manifest) -> Result<RunSummary, BundleError> {
    let mut summary = crate::recovery::recover_summary(dir, manifest)?;
    let elapsed = headroom_units::quantity::saturating_secs(summary.elapsed_s);
    let (phases, arrivals) = rebuild(dir, manifest, elapsed)?;
    summary.phases = phases;
    summary.arrivals_per_second = arrivals;
    Ok(summary)
}
