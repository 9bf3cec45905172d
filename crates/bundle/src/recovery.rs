//! The figures of a run whose process died (SIGKILL, power loss, a crash)
//! before it wrote its summary: rebuilt from what it flushed every second,
//! intervals.csv (counts, errors by kind, bytes, Apdex zones) and
//! latency.hlog (the response-time histograms, per label). A last line cut
//! short by the crash is left out.

use crate::manifest::Manifest;
use crate::sample::ErrorKind;
use crate::summary::{LabelFigures, RunSummary};
use crate::tally::Tally;
use crate::{BundleError, INTERVALS, LATENCY, TOTAL_LABEL};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

fn invalid(path: &Path, reason: impl Into<String>) -> BundleError {
    BundleError::Invalid {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// Rebuilds the summary of the bundle in `dir`; `manifest` gives the Apdex
/// thresholds. Per-status counts, connections and checks are not in those
/// files and stay empty.
pub fn recover_summary(dir: &Path, manifest: &Manifest) -> Result<RunSummary, BundleError> {
    summary_of_window(dir, manifest, Duration::ZERO..Duration::MAX)
}

/// The summary of the seconds in `window` only (a capacity level's
/// measurement after its warm-up), rebuilt from intervals.csv and
/// latency.hlog as [`recover_summary`] does.
pub fn summary_of_window(
    dir: &Path,
    manifest: &Manifest,
    window: Range<Duration>,
) -> Result<RunSummary, BundleError> {
    let inside = within(&window);
    let mut tallies = read_counts(dir, &inside)?;
    let elapsed_s: f64 = tallies
        .get(TOTAL_LABEL)
        .map_or(0.0, |(_, seconds, _)| *seconds);
    let peak_vus = tallies.get(TOTAL_LABEL).map_or(0, |(_, _, vus)| *vus);
    let histograms = read_histograms_where(dir, &inside)?;
    let counted = tallies
        .get(TOTAL_LABEL)
        .map_or(0, |(t, _, _)| t.counts.count);
    if counted > 0 && histograms.get(&None).is_none_or(|h| h.is_empty()) {
        return Err(invalid(
            &dir.join(LATENCY),
            format!(
                "the run did not finish, and this file holds no readable response time although \
                 intervals.csv counts {counted} samples: its figures cannot be rebuilt"
            ),
        ));
    }
    // latency.hlog tags a label with its separators and spaces made `_`.
    let by_tag: BTreeMap<String, String> = tallies
        .keys()
        .map(|label| (crate::hlog::tag_of(label), label.clone()))
        .collect();
    for (tag, histogram) in histograms {
        let label = match tag {
            None => TOTAL_LABEL.to_string(),
            Some(tag) => by_tag.get(&tag).cloned().unwrap_or(tag),
        };
        if let Some((tally, _, _)) = tallies.get_mut(&label) {
            tally.service = histogram.clone();
            tally.response = histogram;
        }
    }
    let elapsed = headroom_units::quantity::saturating_secs(elapsed_s.max(0.001));
    let total = tallies
        .remove(TOTAL_LABEL)
        .map(|(tally, _, _)| tally)
        .unwrap_or_default();
    let (total_figures, total_summary) = LabelFigures::of(&total, elapsed);
    let labels: BTreeMap<String, LabelFigures> = tallies
        .iter()
        .map(|(name, (tally, _, _))| (name.clone(), LabelFigures::of(tally, elapsed).0))
        .collect();
    // A run that died did not say what its samples do not hold.
    let requests = crate::wire::WireCount::of(
        &labels,
        &manifest.label_roles,
        crate::wire::Unrecorded::default(),
    );
    let response_sum = total_summary.latency.mean.as_secs_f64() * total_summary.count as f64;
    Ok(RunSummary {
        elapsed_s,
        apdex_t_ms: manifest.apdex_t_ms,
        apdex_f_ms: manifest.apdex_f_ms,
        throughput_mb_s: total.counts.bytes_received as f64 / 1e6 / elapsed.as_secs_f64(),
        concurrency: response_sum / elapsed.as_secs_f64(),
        total: total_figures,
        labels,
        peak_vus,
        checks: BTreeMap::new(),
        resources: Vec::new(),
        requests,
        ..RunSummary::default()
    })
}

/// Per label (and TOTAL): counters summed over intervals.csv, the seconds
/// it covers and the most VUs active.
fn read_counts(
    dir: &Path,
    inside: &dyn Fn(f64) -> bool,
) -> Result<BTreeMap<String, (Tally, f64, u32)>, BundleError> {
    let path = dir.join(INTERVALS);
    let file = std::fs::File::open(&path).map_err(|e| {
        invalid(
            &path,
            format!("the run did not finish (status running) and this file cannot be read ({e}): there is nothing to rebuild its figures from"),
        )
    })?;
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(file);
    let headers = reader
        .headers()
        .map_err(|e| invalid(&path, e.to_string()))?
        .clone();
    let at = |name: &str| headers.iter().position(|h| h == name);
    let required = ["interval_s", "label", "count", "errors"];
    if let Some(missing) = required.iter().find(|name| at(name).is_none()) {
        return Err(invalid(&path, format!("no column '{missing}'")));
    }
    let kinds: Vec<(ErrorKind, Option<usize>)> = ErrorKind::ALL
        .iter()
        .map(|k| (*k, at(&format!("errors_{}", k.name()))))
        .collect();
    let mut out: BTreeMap<String, (Tally, f64, u32)> = BTreeMap::new();
    for record in reader.records() {
        // A line cut short by the crash ends the readable part.
        let Ok(record) = record else { break };
        if record.len() != headers.len() {
            break;
        }
        let int = |name: &str| {
            at(name)
                .and_then(|i| record.get(i))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let second = at("second")
            .and_then(|i| record.get(i))
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite())
            .unwrap_or(0.0);
        if !inside(second) {
            continue;
        }
        let label = at("label")
            .and_then(|i| record.get(i))
            .unwrap_or("")
            .to_string();
        let seconds = at("interval_s")
            .and_then(|i| record.get(i))
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite())
            .unwrap_or(0.0);
        let entry = out.entry(label).or_default();
        let c = &mut entry.0.counts;
        c.count += int("count");
        c.errors += int("errors");
        for (kind, column) in &kinds {
            if let Some(n) = column
                .and_then(|i| record.get(i))
                .and_then(|v| v.parse::<u64>().ok())
            {
                c.errors_by_kind[*kind as usize] += n;
            }
        }
        c.bytes_received += int("bytes_received");
        c.bytes_sent += int("bytes_sent");
        c.apdex.satisfied += int("apdex_satisfied");
        c.apdex.tolerating += int("apdex_tolerating");
        c.apdex.frustrated += int("apdex_frustrated");
        entry.1 += seconds;
        entry.2 = entry.2.max(int("active_vus") as u32);
    }
    Ok(out)
}

/// Every histogram of latency.hlog summed per tag (`None`: the total), up
/// to a line the crash cut short.
pub fn read_histograms(
    dir: &Path,
) -> Result<BTreeMap<Option<String>, Histogram<u64>>, BundleError> {
    read_histograms_where(dir, &|_| true)
}

/// The total's response times of the seconds in `window` (a capacity
/// level's measurement), summed.
pub fn histogram_of_window(
    dir: &Path,
    window: Range<Duration>,
) -> Result<Histogram<u64>, BundleError> {
    let inside = within(&window);
    Ok(read_histograms_where(dir, &inside)?
        .remove(&None)
        .unwrap_or_else(headroom_analysis::new_histogram))
}

/// Whether a second's start (s) falls in `window`.
fn within(window: &Range<Duration>) -> impl Fn(f64) -> bool + '_ {
    |second: f64| {
        let at = headroom_units::quantity::saturating_secs(second) + Duration::from_micros(1);
        window.contains(&at)
    }
}

fn read_histograms_where(
    dir: &Path,
    inside: &dyn Fn(f64) -> bool,
) -> Result<BTreeMap<Option<String>, Histogram<u64>>, BundleError> {
    let mut out: BTreeMap<Option<String>, Histogram<u64>> = BTreeMap::new();
    crate::reader::visit_hlog(dir, true, |tag, start_s, histogram| {
        if !inside(start_s) {
            return;
        }
        let sum = out
            .entry(tag.map(str::to_string))
            .or_insert_with(headroom_analysis::new_histogram);
        let _ = sum.add(histogram);
    })?;
    Ok(out)
}
