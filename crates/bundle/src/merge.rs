//! The shards of one split run (`--shard i/N`) merged into one bundle.
//!
//! Seconds are aligned on the wall clock (each shard's start, corrected by
//! its measured clock offset when every shard has one against the same
//! reference). Per second and label, the HdrHistograms of latency.hlog are
//! added (same bounds and precision: the merged percentiles are those of
//! all the samples together) and the counters of intervals.csv summed; the
//! summary is computed from the merged files, as for any run, with the
//! figures those files do not hold (status codes, connections, checks)
//! summed from the shards' summaries. Resources and events come from shard
//! 0, the one shard that samples the agents.
//!
//! The merged bundle is `partial` when a shard is missing, did not finish,
//! started late beyond the tolerance, or had a starved generator: its
//! manifest names the shard and the reason, and carries every shard's
//! fingerprint and warnings.

use crate::hlog::{tag_of, HlogWriter};
use crate::intervals::{self, Generator, RowFigures};
use crate::manifest::{
    read_manifest, write_manifest, Files, Manifest, MergeRecord, MergedShard, ShardRecord,
};
use crate::reader::{open_csv, visit_hlog, whole_records};
use crate::scenario_record::ScenarioRecord;
use crate::summary::{LabelFigures, RunStatus, RunSummary};
use crate::tally::Counts;
use crate::{
    invalid, io_error, BundleError, EVENTS, INTERVALS, LATENCY, MANIFEST, RESOURCES,
    RESOURCES_DETAIL, SAMPLES, TOTAL_LABEL,
};
use hdrhistogram::Histogram;
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The last second a shard's intervals.csv may hold: a year.
const LONGEST_S: u64 = 366 * 86_400;

/// The most shards a run may be split into (as `--shard` allows).
const MOST_SHARDS: u32 = 10_000;

/// Generator warnings that mean a shard sent less than its share.
const STARVED_KINDS: [&str; 3] = [
    "generator_saturated",
    "generator_stalled",
    "behind_schedule",
];

pub struct MergeRequest<'a> {
    pub shards: &'a [PathBuf],
    pub out: &'a Path,
    /// A shard starting later than this counts as late.
    pub tolerance: Duration,
    pub command_line: Vec<String>,
}

struct ShardBundle {
    dir: PathBuf,
    manifest: Manifest,
    record: ShardRecord,
    /// The shard's start on the common clock, epoch ms.
    start_ms: f64,
    /// Its first second is the merged run's `shift`-th.
    shift: u64,
    /// Requests its intervals.csv counts.
    counted: u64,
}

/// One second and label of the merged run.
struct Cell {
    counts: Counts,
    response: Histogram<u64>,
    /// Σ service mean × count over the shards.
    service_sum: f64,
    length_s: f64,
}

#[derive(Default, Clone, Copy)]
struct SecondGenerator {
    active_vus: u64,
    arrivals: u64,
    busy: f64,
    wait: f64,
    lag_ms: f64,
}

/// Merges the shard bundles in `request.shards` into `request.out`; the
/// merged manifest is returned (written too).
pub fn merge(request: &MergeRequest<'_>) -> Result<Manifest, BundleError> {
    let mut partial = Vec::new();
    let mut shards = read_shards(request.shards, &mut partial)?;
    shards.sort_by_key(|s| s.record.index);
    let count = shards[0].record.count;
    check_consistent(&shards)?;
    note_missing(&shards, count, &mut partial);
    let reference = align(&mut shards, request.tolerance, &mut partial);
    note_unfinished(&shards, count, &mut partial);
    let labels = shards[0].manifest.labels.clone();
    let (cells, generators) = fold_shards(&mut shards, &labels, count, &mut partial)?;

    let merged_start_ms = reference.floor();
    let wall_start = UNIX_EPOCH
        .checked_add(Duration::from_millis(merged_start_ms.max(0.0) as u64))
        .ok_or_else(|| {
            invalid(
                &shards[0].dir.join(MANIFEST),
                format!("the run's start ({merged_start_ms} ms after 1970) is not a time"),
            )
        })?;
    create_dir(request.out)?;
    write_files(
        request.out,
        &labels,
        &cells,
        &generators,
        merged_start_ms,
        wall_start,
    )?;

    let base = &shards[0];
    let mut manifest = base.manifest.clone();
    manifest.command_line = request.command_line.clone();
    manifest.started_at = humantime::format_rfc3339_millis(wall_start).to_string();
    manifest.status = RunStatus::Complete;
    manifest.threads = shards.iter().map(|s| s.manifest.threads).sum();
    manifest.shard = None;
    manifest.measurement = None;
    manifest.save_failures = None;
    manifest.monitored_hosts = shards
        .iter()
        .find(|s| s.record.index == 0)
        .map(|s| s.manifest.monitored_hosts.clone())
        .unwrap_or_default();
    manifest.files = Files::new(false);
    copy_first_shard_files(request.out, &shards, &mut manifest, &mut partial)?;
    if shards.iter().all(|s| s.manifest.files.samples.is_some()) {
        concatenate_samples(request.out, &shards)?;
        manifest.files.samples = Some(SAMPLES.into());
    }
    manifest.warnings = merged_warnings(&shards, &partial);
    let mut summary = crate::phases::recover_summary(request.out, &manifest)?;
    combine_shard_figures(&mut summary, &shards);
    // What no sample stands for, each shard's added up.
    let mut unrecorded = crate::wire::Unrecorded::default();
    for shard in &shards {
        if let Some(count) = shard.manifest.summary.as_ref().and_then(|s| s.requests) {
            unrecorded.add(&count.unrecorded);
        }
    }
    summary.requests =
        crate::wire::WireCount::of(&summary.labels, &manifest.label_roles, unrecorded);
    manifest.elapsed_s = Some(summary.elapsed_s);
    manifest.ended_at = shards
        .iter()
        .filter_map(|s| s.manifest.ended_at.clone())
        .max_by_key(|t| parse_ms(t).map(|ms| ms as i64).unwrap_or(i64::MIN));
    manifest.summary = Some(summary);
    manifest.merged = Some(MergeRecord {
        shards: shards.iter().map(|s| merged_shard(s, reference)).collect(),
        partial,
        tolerance_ms: request.tolerance.as_secs_f64() * 1000.0,
    });
    write_manifest(request.out, &manifest)?;
    Ok(manifest)
}

/// Says which shards of `count` are missing.
fn note_missing(shards: &[ShardBundle], count: u32, partial: &mut Vec<String>) {
    let missing: Vec<u32> = (0..count)
        .filter(|index| !shards.iter().any(|s| s.record.index == *index))
        .collect();
    match missing.as_slice() {
        [] => {}
        [index] => partial.push(format!(
            "shard {index}/{count} is missing: its share of the load is not in the figures"
        )),
        many => {
            let shown: Vec<String> = many.iter().take(10).map(u32::to_string).collect();
            partial.push(format!(
                "{} of {count} shards are missing ({}{}): their share of the load is not in the figures",
                many.len(),
                shown.join(", "),
                if many.len() > 10 { ", ..." } else { "" }
            ));
        }
    }
}

/// Says which shards did not finish, and which ones' generators starved.
fn note_unfinished(shards: &[ShardBundle], count: u32, partial: &mut Vec<String>) {
    for shard in shards {
        let name = format!(
            "shard {}/{count} ({})",
            shard.record.index,
            shard.dir.display()
        );
        match shard.manifest.status {
            RunStatus::Complete => {}
            RunStatus::Running | RunStatus::Died => partial.push(format!(
                "{name} did not finish (killed or crashed): the seconds it wrote are included, \
                 the rest of its share is missing"
            )),
            other => partial.push(format!(
                "{name} ended {}: its share is cut short",
                other.name()
            )),
        }
        for warning in &shard.manifest.warnings {
            let kind = warning.get("kind").and_then(|k| k.as_str()).unwrap_or("");
            if STARVED_KINDS.contains(&kind) {
                let message = warning
                    .get("message")
                    .and_then(|m| m.as_str())
                    .unwrap_or(kind);
                partial.push(format!("{name}: its generator was starved: {message}"));
            }
        }
    }
}

/// Adds every shard's seconds and histograms into one set of cells (a
/// second and a label each) and the generators' figures per second,
/// checking each shard's counts.
#[allow(clippy::type_complexity)]
fn fold_shards(
    shards: &mut [ShardBundle],
    labels: &[String],
    count: u32,
    partial: &mut Vec<String>,
) -> Result<(BTreeMap<(u64, usize), Cell>, BTreeMap<u64, SecondGenerator>), BundleError> {
    let mut label_index: HashMap<String, usize> = HashMap::new();
    label_index.insert(TOTAL_LABEL.to_string(), 0);
    for (i, label) in labels.iter().enumerate() {
        label_index.insert(label.clone(), i + 1);
    }
    let mut tag_index: HashMap<String, usize> = HashMap::new();
    for (i, label) in labels.iter().enumerate() {
        tag_index.insert(tag_of(label), i + 1);
    }
    let mut cells: BTreeMap<(u64, usize), Cell> = BTreeMap::new();
    let mut generators: BTreeMap<u64, SecondGenerator> = BTreeMap::new();
    for shard in shards.iter_mut() {
        let counted = add_intervals(shard, &label_index, &mut cells, &mut generators)?;
        let (timed, torn) = add_histograms(shard, &tag_index, labels.len() + 1, &mut cells)?;
        shard.counted = counted[0];
        if let Some(warning) = &torn {
            partial.push(format!(
                "shard {}/{count} ({}): {warning}; the response times after it are missing",
                shard.record.index,
                shard.dir.display()
            ));
        }
        check_counts(shard, labels, &counted, &timed, torn.is_some(), partial)?;
    }
    Ok((cells, generators))
}

/// The shards' warnings, each saying its shard, then what the merge
/// misses.
fn merged_warnings(shards: &[ShardBundle], partial: &[String]) -> Vec<serde_json::Value> {
    let mut warnings = Vec::new();
    for shard in shards {
        for warning in &shard.manifest.warnings {
            let mut warning = warning.clone();
            if let Some(object) = warning.as_object_mut() {
                object.insert("shard".into(), shard.record.index.into());
                if let Some(message) = object.get("message").and_then(|m| m.as_str()) {
                    let message = format!("shard {}: {message}", shard.record.index);
                    object.insert("message".into(), message.into());
                }
            }
            warnings.push(warning);
        }
    }
    for reason in partial {
        warnings.push(serde_json::json!({
            "kind": "partial_merge",
            "message": format!("partial: {reason}"),
        }));
    }
    warnings
}

fn read_shards(
    dirs: &[PathBuf],
    partial: &mut Vec<String>,
) -> Result<Vec<ShardBundle>, BundleError> {
    let mut shards: Vec<ShardBundle> = Vec::new();
    for dir in dirs {
        let manifest = match read_manifest(dir) {
            Ok(m) => m,
            Err(e) => {
                partial.push(format!("{} was left out: {e}", dir.display()));
                continue;
            }
        };
        let Some(record) = manifest.shard.clone() else {
            return Err(invalid(
                dir,
                "is not a shard (it ran without --shard): merge combines the shards of one run \
                 split with --shard i/N",
            ));
        };
        if record.index >= record.count || record.count > MOST_SHARDS {
            return Err(invalid(
                &dir.join(MANIFEST),
                format!(
                    "says shard {} of {}, which no split run has (shards are 0 to count − 1, at \
                     most {MOST_SHARDS}): the manifest is damaged",
                    record.index, record.count
                ),
            ));
        }
        if let Some(other) = shards.iter().find(|s| s.record.index == record.index) {
            return Err(invalid(
                dir,
                format!(
                    "is shard {}/{} like {}: give each shard's bundle once",
                    record.index,
                    record.count,
                    other.dir.display()
                ),
            ));
        }
        if let Some(clock) = &record.clock {
            clock.check().map_err(|reason| {
                invalid(
                    &dir.join(MANIFEST),
                    format!("{reason}: the manifest is damaged. Run the shard again, or leave it out of the merge"),
                )
            })?;
        }
        let started = parse_ms(&manifest.started_at).ok_or_else(|| {
            invalid(
                &dir.join(MANIFEST),
                format!(
                    "started_at '{}' is not an RFC 3339 time",
                    manifest.started_at
                ),
            )
        })?;
        shards.push(ShardBundle {
            dir: dir.clone(),
            manifest,
            record,
            start_ms: started,
            shift: 0,
            counted: 0,
        });
    }
    if shards.is_empty() {
        return Err(BundleError::Invalid {
            path: dirs.first().cloned().unwrap_or_default(),
            reason: format!(
                "no shard could be read: {}",
                if partial.is_empty() {
                    "no directory given".to_string()
                } else {
                    partial.join("; ")
                }
            ),
        });
    }
    Ok(shards)
}

/// The shards must be parts of one run: the same count, labels and kind.
fn check_consistent(shards: &[ShardBundle]) -> Result<(), BundleError> {
    let first = &shards[0];
    for shard in &shards[1..] {
        let differ = |what: &str, a: String, b: String| {
            invalid(
                &shard.dir,
                format!(
                    "{what} is {b}, but {} has {a}: these bundles are not shards of one run",
                    first.dir.display()
                ),
            )
        };
        if shard.record.count != first.record.count {
            return Err(differ(
                "the shard count",
                first.record.count.to_string(),
                shard.record.count.to_string(),
            ));
        }
        if shard.manifest.labels != first.manifest.labels {
            return Err(differ(
                "the label list",
                first.manifest.labels.join(", "),
                shard.manifest.labels.join(", "),
            ));
        }
        let same_request = |m: &Manifest| {
            let mut scenario = m.scenario.clone();
            // Each shard records its own share of a data file's rows, and
            // the file's path on its own host.
            match &mut scenario {
                Some(ScenarioRecord::Scenario(s)) => {
                    s.data = None;
                    s.file.clear();
                }
                Some(ScenarioRecord::Mix(mix)) => {
                    mix.file.clear();
                    for journey in &mut mix.journeys {
                        journey.scenario.data = None;
                        journey.scenario.file.clear();
                        journey.file.clear();
                    }
                }
                Some(ScenarioRecord::Jtl(j)) => j.file.clear(),
                Some(ScenarioRecord::Url(_) | ScenarioRecord::Replay(_)) | None => {}
            }
            (scenario, m.target.clone(), m.timeout_ms.to_bits())
        };
        if same_request(&shard.manifest) != same_request(&first.manifest) {
            return Err(differ(
                "what was sent (target, request or scenario, timeout)",
                first.manifest.target.clone(),
                shard.manifest.target.clone(),
            ));
        }
        if (shard.manifest.apdex_t_ms, shard.manifest.apdex_f_ms)
            != (first.manifest.apdex_t_ms, first.manifest.apdex_f_ms)
        {
            return Err(differ(
                "the Apdex thresholds",
                format!(
                    "T {} ms, F {} ms",
                    first.manifest.apdex_t_ms, first.manifest.apdex_f_ms
                ),
                format!(
                    "T {} ms, F {} ms",
                    shard.manifest.apdex_t_ms, shard.manifest.apdex_f_ms
                ),
            ));
        }
        if shard.record.start_at != first.record.start_at {
            return Err(differ(
                "the planned start",
                first
                    .record
                    .start_at
                    .clone()
                    .unwrap_or_else(|| "none".into()),
                shard
                    .record
                    .start_at
                    .clone()
                    .unwrap_or_else(|| "none".into()),
            ));
        }
        if shard.manifest.kind != first.manifest.kind
            || shard.manifest.profile != first.manifest.profile
        {
            return Err(differ(
                "the load",
                first.manifest.profile.describe(),
                shard.manifest.profile.describe(),
            ));
        }
    }
    Ok(())
}

/// Puts every shard's start on the common clock, flags the late ones, and
/// gives each its first second in the merged run. Returns the merged
/// run's start (epoch ms): the planned start, or the earliest shard's.
fn align(shards: &mut [ShardBundle], tolerance: Duration, partial: &mut Vec<String>) -> f64 {
    let reference = shards[0].record.clock.as_ref().map(|c| c.reference.clone());
    let common_clock = reference.is_some()
        && shards
            .iter()
            .all(|s| s.record.clock.as_ref().map(|c| &c.reference) == reference.as_ref());
    if common_clock {
        for shard in shards.iter_mut() {
            shard.start_ms += shard.record.clock.as_ref().map_or(0.0, |c| c.offset_ms);
        }
    }
    let earliest = shards
        .iter()
        .map(|s| s.start_ms)
        .fold(f64::INFINITY, f64::min);
    let planned = shards[0]
        .record
        .start_at
        .as_deref()
        .filter(|_| {
            shards
                .iter()
                .all(|s| s.record.start_at == shards[0].record.start_at)
        })
        .and_then(parse_ms);
    let tolerance_ms = tolerance.as_secs_f64() * 1000.0;
    let count = shards[0].record.count;
    for shard in shards.iter() {
        let late = shard.start_ms - planned.unwrap_or(earliest);
        // Early too: a shard waits for the planned start, so one that is
        // before it on the common clock has a clock offset that is wrong.
        if late.abs() > tolerance_ms {
            partial.push(format!(
                "shard {}/{count} ({}) started {:.1} s {} {}: beyond the tolerance of {:.1} s, \
                 the shards did not load the server together",
                shard.record.index,
                shard.dir.display(),
                late.abs() / 1000.0,
                if late < 0.0 { "before" } else { "after" },
                if planned.is_some() {
                    "the planned start"
                } else {
                    "the first shard"
                },
                tolerance_ms / 1000.0
            ));
        }
    }
    let start = earliest.min(planned.unwrap_or(f64::INFINITY));
    for shard in shards.iter_mut() {
        shard.shift = ((shard.start_ms - start) / 1000.0).round().max(0.0) as u64;
    }
    start
}

fn add_intervals(
    shard: &ShardBundle,
    label_index: &HashMap<String, usize>,
    cells: &mut BTreeMap<(u64, usize), Cell>,
    generators: &mut BTreeMap<u64, SecondGenerator>,
) -> Result<Vec<u64>, BundleError> {
    // Per label index (0: the total).
    let mut counted = vec![0u64; label_index.len()];
    let path = shard.dir.join(INTERVALS);
    let (mut reader, headers) = open_csv(&path)?;
    let at = |name: &str| headers.iter().position(|h| h == name);
    for required in ["second", "interval_s", "label", "count", "errors"] {
        if at(required).is_none() {
            return Err(invalid(&path, format!("no column '{required}'")));
        }
    }
    let kinds: Vec<Option<usize>> = crate::sample::ErrorKind::ALL
        .iter()
        .map(|k| at(&format!("errors_{}", k.name())))
        .collect();
    for (line, record) in whole_records(&path, &mut reader)? {
        let text = |name: &str| at(name).and_then(|i| record.get(i)).unwrap_or("");
        let int = |name: &str| -> Result<u64, BundleError> {
            match text(name) {
                "" => Ok(0),
                t => crate::reader::number(&path, line, name, t),
            }
        };
        let float = |name: &str| -> Result<f64, BundleError> {
            match text(name) {
                "" => Ok(0.0),
                t => crate::reader::finite(&path, line, name, t),
            }
        };
        let label = text("label");
        let Some(&index) = label_index.get(label) else {
            return Err(invalid(
                &path,
                format!("line {line}: the label '{label}' is not in the manifest's labels"),
            ));
        };
        let second = match int("second")? {
            s if s <= LONGEST_S => shard.shift.saturating_add(s),
            s => {
                return Err(invalid(
                    &path,
                    format!("line {line}: second {s} is beyond a year: the file is damaged"),
                ))
            }
        };
        let cell = cells.entry((second, index)).or_insert_with(|| Cell {
            counts: Counts::default(),
            response: headroom_analysis::new_histogram(),
            service_sum: 0.0,
            length_s: 0.0,
        });
        let count = int("count")?;
        counted[index] = counted[index].saturating_add(count);
        let c = &mut cell.counts;
        c.count = c.count.saturating_add(count);
        c.errors = c.errors.saturating_add(int("errors")?);
        for (i, column) in kinds.iter().enumerate() {
            if let Some(column) = column {
                let name = &headers[*column];
                c.errors_by_kind[i] = c.errors_by_kind[i].saturating_add(int(name)?);
            }
        }
        c.bytes_received = c.bytes_received.saturating_add(int("bytes_received")?);
        c.bytes_sent = c.bytes_sent.saturating_add(int("bytes_sent")?);
        c.apdex.satisfied = c.apdex.satisfied.saturating_add(int("apdex_satisfied")?);
        c.apdex.tolerating = c.apdex.tolerating.saturating_add(int("apdex_tolerating")?);
        c.apdex.frustrated = c.apdex.frustrated.saturating_add(int("apdex_frustrated")?);
        let ttfb = float("ttfb_mean_ms")?;
        if ttfb > 0.0 {
            c.ttfb_micros = c
                .ttfb_micros
                .saturating_add((ttfb * 1000.0 * count as f64).round() as u64);
            c.ttfb_count = c.ttfb_count.saturating_add(count);
        }
        cell.service_sum += float("service_mean_ms")? * count as f64;
        cell.length_s = cell.length_s.max(float("interval_s")?);
        if index == 0 {
            let g = generators.entry(second).or_default();
            g.active_vus = g.active_vus.saturating_add(int("active_vus")?);
            g.arrivals = g.arrivals.saturating_add(int("arrivals")?);
            g.busy = g.busy.max(float("generator_busy_pct")? / 100.0);
            g.wait = g.wait.max(float("generator_wait_pct")? / 100.0);
            let lag_ms = float("generator_lag_ms")?;
            if lag_ms > LONGEST_S as f64 * 1000.0 {
                return Err(invalid(
                    &path,
                    format!(
                        "line {line}: {} in column generator_lag_ms is beyond a year: the file is damaged",
                        text("generator_lag_ms")
                    ),
                ));
            }
            g.lag_ms = g.lag_ms.max(lag_ms);
        }
    }
    Ok(counted)
}

fn add_histograms(
    shard: &ShardBundle,
    tag_index: &HashMap<String, usize>,
    indexes: usize,
    cells: &mut BTreeMap<(u64, usize), Cell>,
) -> Result<(Vec<u64>, Option<String>), BundleError> {
    let path = shard.dir.join(LATENCY);
    // Response times per index: TOTAL (0), then each label.
    let mut timed = vec![0u64; indexes];
    // A shard that died may have cut its last line short.
    let finished = shard.manifest.status != RunStatus::Running;
    let mut problem = None;
    let read = visit_hlog(&shard.dir, !finished, |tag, start_s, histogram| {
        let index = match tag {
            None => 0,
            Some(tag) => match tag_index.get(tag) {
                Some(i) => *i,
                None => {
                    problem.get_or_insert_with(|| {
                        format!("the tag '{tag}' is not one of the manifest's labels")
                    });
                    return;
                }
            },
        };
        let second = shard.shift.saturating_add(start_s.round() as u64);
        if let Some(t) = timed.get_mut(index) {
            *t = t.saturating_add(histogram.len());
        }
        if let Some(cell) = cells.get_mut(&(second, index)) {
            if cell.response.add(histogram).is_err() {
                problem.get_or_insert_with(|| {
                    format!("a histogram of second {second} does not add up: the file is damaged")
                });
            }
        } else if !histogram.is_empty() {
            problem.get_or_insert_with(|| {
                format!(
                    "second {} has response times but intervals.csv no row for it",
                    second - shard.shift
                )
            });
        }
    })?;
    if !read.found {
        return Err(invalid(
            &path,
            "is missing: the shard's response times cannot be merged",
        ));
    }
    match problem {
        Some(reason) => Err(invalid(&path, reason)),
        None => Ok((timed, read.torn_warning())),
    }
}

/// A shard's files must agree with each other and with its manifest: a
/// file cut short, emptied or copied from another run is refused (or, for
/// a shard that died writing, or whose latency.hlog ends in a `torn` line,
/// said).
fn check_counts(
    shard: &ShardBundle,
    labels: &[String],
    per_label: &[u64],
    timed: &[u64],
    torn: bool,
    partial: &mut Vec<String>,
) -> Result<(), BundleError> {
    let finished = !matches!(shard.manifest.status, RunStatus::Running | RunStatus::Died);
    if let (true, Some(summary)) = (finished, shard.manifest.summary.as_ref()) {
        let names = std::iter::once(TOTAL_LABEL).chain(labels.iter().map(String::as_str));
        for (name, counted) in names.zip(per_label) {
            let reported = if name == TOTAL_LABEL {
                summary.total.count
            } else {
                summary.labels.get(name).map_or(0, |l| l.count)
            };
            if reported != *counted {
                return Err(invalid(
                    &shard.dir.join(INTERVALS),
                    format!(
                        "counts {counted} requests of {name} but the shard's manifest {reported}: \
                         the file is damaged or from another run. Run the shard again, or leave \
                         it out of the merge"
                    ),
                ));
            }
        }
    }
    // TOTAL first, then each label: a shard cut between a second's TOTAL
    // line and its labels' lines has all its TOTAL but not a label's.
    let names = std::iter::once(TOTAL_LABEL).chain(labels.iter().map(String::as_str));
    let Some((name, timed, counted)) = names
        .zip(timed.iter().zip(per_label))
        .map(|(name, (t, c))| (name, *t, *c))
        .find(|(_, t, c)| t != c)
    else {
        return Ok(());
    };
    let of = if name == TOTAL_LABEL {
        String::new()
    } else {
        format!(" of {name}")
    };
    let reason =
        format!("holds {timed} response times{of} but intervals.csv counts {counted} requests{of}");
    if torn && timed < counted {
        // Said already: the torn line's seconds are the ones missing.
        return Ok(());
    }
    if finished {
        return Err(invalid(
            &shard.dir.join(LATENCY),
            format!("{reason}: the file is damaged or from another run. Run the shard again, or leave it out of the merge"),
        ));
    }
    partial.push(format!(
        "shard {}/{} ({}): its latency.hlog {reason} (it died while writing)",
        shard.record.index,
        shard.record.count,
        shard.dir.display()
    ));
    Ok(())
}

fn create_dir(out: &Path) -> Result<(), BundleError> {
    if out.join(MANIFEST).exists() {
        return Err(BundleError::Exists {
            path: out.to_path_buf(),
        });
    }
    if out.is_file() {
        return Err(invalid(
            out,
            "is a file, and a bundle is a directory: choose another --out",
        ));
    }
    fs::create_dir_all(out).map_err(io_error(out))
}

fn write_files(
    out: &Path,
    labels: &[String],
    cells: &BTreeMap<(u64, usize), Cell>,
    generators: &BTreeMap<u64, SecondGenerator>,
    start_ms: f64,
    wall_start: SystemTime,
) -> Result<(), BundleError> {
    let io_err = io_error(out);
    let mut text = intervals::header();
    text.push('\n');
    let file = fs::File::create(out.join(LATENCY)).map_err(io_err)?;
    let mut hlog = HlogWriter::new(std::io::BufWriter::new(file), wall_start).map_err(io_err)?;
    for (&(second, index), cell) in cells {
        let label = if index == 0 {
            TOTAL_LABEL
        } else {
            &labels[index - 1]
        };
        let g = generators.get(&second).copied().unwrap_or_default();
        let generator = Generator {
            active_vus: g.active_vus.min(u64::from(u32::MAX)) as u32,
            arrivals: g.arrivals.min(u64::from(u32::MAX)) as u32,
            busy: g.busy,
            wait: g.wait,
            loop_lag: Duration::from_secs_f64(g.lag_ms.max(0.0) / 1000.0),
        };
        let figures = RowFigures {
            counts: &cell.counts,
            response: &cell.response,
            service_mean_ms: if cell.counts.count == 0 {
                0.0
            } else {
                cell.service_sum / cell.counts.count as f64
            },
        };
        let length = Duration::from_secs_f64(cell.length_s.clamp(0.0, 1.0));
        intervals::write_figures(
            &mut text,
            second,
            start_ms as u64 + second * 1000,
            length,
            label,
            &figures,
            &generator,
        );
        let tag = (index != 0).then_some(label);
        hlog.write(&cell.response, Duration::from_secs(second), length, tag)
            .map_err(io_err)?;
    }
    hlog.flush().map_err(io_err)?;
    fs::write(out.join(INTERVALS), text).map_err(io_err)
}

/// Resources and events are sampled by shard 0 only: its files, moved to
/// the merged run's seconds.
fn copy_first_shard_files(
    out: &Path,
    shards: &[ShardBundle],
    manifest: &mut Manifest,
    partial: &mut Vec<String>,
) -> Result<(), BundleError> {
    let Some(first) = shards.iter().find(|s| s.record.index == 0) else {
        if shards
            .iter()
            .any(|s| !s.manifest.monitored_hosts.is_empty())
        {
            partial
                .push("shard 0, which samples the agents, is missing: no server resources".into());
        }
        return Ok(());
    };
    let io_err = io_error(out);
    let shift = first.shift;
    if first.manifest.files.resources.is_some() {
        let csv = fs::read_to_string(first.dir.join(RESOURCES)).map_err(io_err)?;
        let moved: String = csv
            .lines()
            .enumerate()
            .map(|(i, line)| {
                let line = match (i, line.split_once(',')) {
                    (0, _) | (_, None) => line.to_string(),
                    (_, Some((second, rest))) => match second.parse::<u64>() {
                        Ok(s) => format!("{},{rest}", s.saturating_add(shift)),
                        Err(_) => line.to_string(),
                    },
                };
                line + "\n"
            })
            .collect();
        fs::write(out.join(RESOURCES), moved).map_err(io_err)?;
        manifest.files.resources = Some(RESOURCES.into());
        if let Ok(detail) = fs::read_to_string(first.dir.join(RESOURCES_DETAIL)) {
            let mut moved = String::new();
            for line in detail.lines() {
                let mut value: serde_json::Value = match serde_json::from_str(line) {
                    Ok(v) => v,
                    Err(_) => continue,
                };
                if let Some(s) = value.get("second").and_then(|s| s.as_u64()) {
                    value["second"] = s.saturating_add(shift).into();
                }
                moved.push_str(&value.to_string());
                moved.push('\n');
            }
            fs::write(out.join(RESOURCES_DETAIL), moved).map_err(io_err)?;
            manifest.files.resources_detail = Some(RESOURCES_DETAIL.into());
        }
    }
    if first.manifest.files.events.is_some() {
        let events = crate::events::read(&first.dir)?;
        for mut event in events {
            event.offset_s += shift as f64;
            crate::events::append(out, &event)?;
        }
        manifest.files.events = Some(EVENTS.into());
    }
    Ok(())
}

/// The shards' samples.jtl in one file, with one header.
fn concatenate_samples(out: &Path, shards: &[ShardBundle]) -> Result<(), BundleError> {
    let io_err = io_error(out);
    let mut file = std::io::BufWriter::new(fs::File::create(out.join(SAMPLES)).map_err(io_err)?);
    for (i, shard) in shards.iter().enumerate() {
        let text = fs::read_to_string(shard.dir.join(SAMPLES))
            .map_err(crate::read_error(&shard.dir.join(SAMPLES)))?;
        let mut lines = text.lines();
        if let Some(header) = lines.next() {
            if i == 0 {
                writeln!(file, "{header}").map_err(io_err)?;
            }
        }
        for line in lines {
            writeln!(file, "{line}").map_err(io_err)?;
        }
    }
    file.flush().map_err(io_err)
}

/// Figures the merged files do not hold, from the shards' summaries:
/// status codes, connections, resent requests and checks summed; service
/// and first-byte means weighted by count; the service p95 is the highest
/// shard's. The resources are shard 0's.
fn combine_shard_figures(summary: &mut RunSummary, shards: &[ShardBundle]) {
    let parts: Vec<&RunSummary> = shards
        .iter()
        .filter_map(|s| s.manifest.summary.as_ref())
        .collect();
    combine(&mut summary.total, parts.iter().map(|p| &p.total));
    for (name, figures) in summary.labels.iter_mut() {
        combine(figures, parts.iter().filter_map(|p| p.labels.get(name)));
    }
    for part in &parts {
        for (name, check) in &part.checks {
            let sum = summary
                .checks
                .entry(name.clone())
                .or_insert(crate::summary::CheckFigures {
                    passes: 0,
                    failures: 0,
                    labels: Vec::new(),
                });
            // Every shard ran the same scenario: the same steps check it.
            if sum.labels.is_empty() {
                sum.labels = check.labels.clone();
            }
            sum.passes = sum.passes.saturating_add(check.passes);
            sum.failures = sum.failures.saturating_add(check.failures);
        }
    }
    summary.resources = shards
        .iter()
        .find(|s| s.record.index == 0)
        .and_then(|s| s.manifest.summary.as_ref())
        .map(|s| s.resources.clone())
        .unwrap_or_default();
}

fn combine<'a>(figures: &mut LabelFigures, parts: impl Iterator<Item = &'a LabelFigures>) {
    let parts: Vec<&LabelFigures> = parts.collect();
    let weighted = |value: fn(&LabelFigures) -> f64, weight: fn(&LabelFigures) -> u64| {
        let total: u64 = parts.iter().map(|p| weight(p)).sum();
        if total == 0 {
            return 0.0;
        }
        let sum: f64 = parts.iter().map(|p| value(p) * weight(p) as f64).sum();
        (sum / total as f64 * 1000.0).round() / 1000.0
    };
    figures.service_mean_ms = weighted(|p| p.service_mean_ms, |p| p.count);
    figures.service_p95_ms = parts.iter().map(|p| p.service_p95_ms).fold(0.0, f64::max);
    figures.ttfb_mean_ms = weighted(|p| p.ttfb_mean_ms, |p| p.count);
    figures.connect_mean_ms = weighted(|p| p.connect_mean_ms, |p| p.connections);
    figures.connections = parts.iter().map(|p| p.connections).sum();
    figures.tls_mean_ms = weighted(|p| p.tls_mean_ms, |p| p.tls_handshakes);
    figures.tls_handshakes = parts.iter().map(|p| p.tls_handshakes).sum();
    figures.tls_resumed = parts.iter().map(|p| p.tls_resumed).sum();
    figures.resent = parts.iter().map(|p| p.resent).sum();
    let sum_maps = |map: fn(&LabelFigures) -> &BTreeMap<String, u64>| {
        let mut out: BTreeMap<String, u64> = BTreeMap::new();
        for part in &parts {
            for (key, n) in map(part) {
                let sum = out.entry(key.clone()).or_default();
                *sum = sum.saturating_add(*n);
            }
        }
        out
    };
    figures.status_codes = sum_maps(|p| &p.status_codes);
    figures.error_statuses = sum_maps(|p| &p.error_statuses);
    for part in &parts {
        for (kind, detail) in &part.error_details {
            figures
                .error_details
                .entry(kind.clone())
                .or_insert_with(|| detail.clone());
        }
    }
}

fn merged_shard(shard: &ShardBundle, reference: f64) -> MergedShard {
    let summary = shard.manifest.summary.as_ref();
    MergedShard {
        index: shard.record.index,
        dir: shard.dir.display().to_string(),
        hostname: shard.manifest.client.hostname.clone(),
        status: shard.manifest.status.name().to_string(),
        started_at: shard.manifest.started_at.clone(),
        late_ms: ((shard.start_ms - reference) * 10.0).round() / 10.0,
        clock_offset_ms: shard.record.clock.as_ref().map(|c| c.offset_ms),
        count: shard.counted,
        errors: summary.map_or(0, |s| s.total.errors),
        warnings: shard.manifest.warnings.clone(),
        fingerprint: shard.manifest.fingerprint.clone(),
    }
}

/// Epoch milliseconds of an RFC 3339 time.
fn parse_ms(text: &str) -> Option<f64> {
    let time = humantime::parse_rfc3339_weak(text).ok()?;
    Some(time.duration_since(UNIX_EPOCH).ok()?.as_secs_f64() * 1000.0)
}
