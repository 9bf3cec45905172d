//! A run's fault figures, from its bundle: the errors from the first
//! fault's second on, the seconds until it recovered (errors at 0 and p95
//! within 20% of before, `headroom_analysis::fault`), and the users whose
//! named check failed after it (their session was lost), from the raw
//! samples.

use headroom_analysis::fault::{effect, Second};
use headroom_bundle::manifest::Manifest;
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Debug, Clone, PartialEq)]
pub struct FaultFigures {
    pub errors_after: u64,
    pub recovered_after_s: Option<u64>,
    pub users_lost: Option<u64>,
}

/// `None` when the run recorded no fault (it ended before the moment).
pub fn of_run(
    dir: &Path,
    manifest: &Manifest,
    lost_check: Option<&str>,
) -> Result<Option<FaultFigures>, String> {
    let events = headroom_bundle::events::read(dir).map_err(|e| e.to_string())?;
    let Some(first) = events.iter().find(|e| e.kind == "fault") else {
        return Ok(None);
    };
    let seconds: Vec<Second> = headroom_bundle::intervals::read_intervals(dir)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|row| row.label == headroom_bundle::TOTAL_LABEL)
        .map(|row| Second {
            second: row.second,
            count: row.count,
            errors: row.errors,
            p95_ms: (row.count > 0).then_some(row.p95_ms),
        })
        .collect();
    let found = effect(&seconds, first.offset_s.floor() as u64);
    let users_lost = match lost_check {
        None => None,
        Some(check) => Some(users_failing_after(dir, manifest, check, first.offset_s)?),
    };
    Ok(Some(FaultFigures {
        errors_after: found.errors_after,
        recovered_after_s: found.recovered_after_s,
        users_lost,
    }))
}

/// Distinct users (JTL thread names) with a sample that failed `check`
/// at or after `offset_s` into the run.
fn users_failing_after(
    dir: &Path,
    manifest: &Manifest,
    check: &str,
    offset_s: f64,
) -> Result<u64, String> {
    let started = humantime::parse_rfc3339_weak(&manifest.started_at)
        .map_err(|e| format!("the manifest's started_at '{}': {e}", manifest.started_at))?;
    let start_ms = started
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let from_ms = start_ms + (offset_s * 1000.0) as u64;
    let path = dir.join(headroom_bundle::SAMPLES);
    let mut reader = csv::Reader::from_path(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let headers = reader
        .headers()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("{} has no column {name}", path.display()))
    };
    let (time, thread, failure) = (
        column("timeStamp")?,
        column("threadName")?,
        column("failureMessage")?,
    );
    let mut users = BTreeSet::new();
    for record in reader.records() {
        // A last line cut short ends the count.
        let Ok(record) = record else { break };
        let at: u64 = record.get(time).and_then(|t| t.parse().ok()).unwrap_or(0);
        if at >= from_ms && record.get(failure) == Some(check) {
            users.insert(record.get(thread).unwrap_or_default().to_string());
        }
    }
    Ok(users.len() as u64)
}
