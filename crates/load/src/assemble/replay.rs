//! An access log's replay: its requests read in time order, each the
//! arrival of an open model due at its logged time divided by the speed.

use super::parts::{apdex, connect_checked, ensure_file_limit, AssembledRun, AssemblyError};
use super::pipeline::{finish, Shaped, Tables};
use crate::engine::Workload;
use crate::spec::{ReplayPace, ReplaySource, RunSpec};
use headroom_bundle::scenario_record::{ReplayRecord, ScenarioRecord};
use headroom_http::target::Target;
use headroom_import::access_log::read::LogReading;
use headroom_journey::profile::{Profile, Think};
use headroom_journey::shard::Shard;
use headroom_traffic::replay::{read_replay, ReplayLog, ReplayPlan};
use headroom_units::quantity::{group_thousands, Rate};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// VUs at once unless `--max-vus` says otherwise.
const DEFAULT_MAX_VUS: u32 = 1000;
/// The longest log a replay takes at once.
const MAX_SPAN: Duration = Duration::from_secs(31 * 86_400);

pub(super) async fn assemble(
    spec: &RunSpec,
    source: &ReplaySource,
    shard: Option<Shard>,
) -> Result<AssembledRun, AssemblyError> {
    if shard.is_some_and(|s| !s.is_whole()) {
        return Err(AssemblyError::Usage(
            "a replay cannot be split into shards yet: run it whole from one generator".into(),
        ));
    }
    let target = Target::parse(&source.target).map_err(|e| AssemblyError::Usage(e.to_string()))?;
    let (log, reading) = read_log(source)?;
    let logged = log.span();
    let speed = speed(source, &log, logged)?;
    let requests = log.len();
    let left_out = log.left_out.clone();
    let unusable = log.unusable;
    let labels = log.labels.clone();
    let mut extra = source.headers.clone();
    extra.retain(|(name, _)| !name.eq_ignore_ascii_case("connection"));
    let plan = Arc::new(ReplayPlan::new(log, speed, &target.host_header(), &extra));
    let replayed = plan.span();
    let max_vus = spec.profile.max_vus.unwrap_or(DEFAULT_MAX_VUS);
    // The last requests may answer up to the timeout after they are due;
    // the run ends when they have. Its rate is the requests over that
    // time, so that the two multiply to the requests sent.
    let duration = replayed + source.timeout + Duration::from_millis(1);
    let rate = Rate {
        per_second: requests as f64 / duration.as_secs_f64(),
    };
    let profile = Profile::Open {
        rate,
        max_vus,
        duration,
        session: None,
    };
    let apdex = apdex(&spec.apdex)?;
    ensure_file_limit(u64::from(max_vus) + 64)?;
    let connector = connect_checked(&target, spec.insecure, spec.http.unwrap_or_default()).await?;
    let notes = notes(&reading, unusable);
    let counts = ReplayCounts {
        requests,
        left_out,
        speed,
        logged,
        replayed,
    };
    let record = replay_record(source, &counts, &notes);
    let description = describe_replay(source, &target, &counts, max_vus);
    finish(
        spec,
        Shaped {
            same_host: connector.address.ip().is_loopback(),
            connections: connector.negotiated.iter().cloned().collect(),
            workload: Workload::Replay {
                connector: Arc::new(connector),
                plan,
            },
            profile,
            iterations: None,
            think: Think::None,
            throughput: None,
            timeout: source.timeout,
            apdex,
            kind: "replay",
            target: target.url.clone(),
            scenario: record,
            labels,
            slug: format!("replay-{}", target.host),
            description: std::iter::once(description)
                .chain(notes)
                .collect::<Vec<_>>()
                .join("\n"),
            tables: Tables {
                // A failed exchange's request is the log's as it was (its
                // ids and tokens): replay.csv has every request's status
                // instead.
                no_saved_failures: true,
                ..Tables::default()
            },
        },
    )
}

/// What a replay sends, against what its log holds.
struct ReplayCounts {
    requests: usize,
    /// The requests of other methods, by method.
    left_out: BTreeMap<String, u64>,
    speed: f64,
    /// The log's span and the replay's.
    logged: Duration,
    replayed: Duration,
}

/// The replay as the bundle records it, with the reading's warnings.
fn replay_record(source: &ReplaySource, counts: &ReplayCounts, notes: &[String]) -> ScenarioRecord {
    ScenarioRecord::Replay(ReplayRecord {
        files: source
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect(),
        format: source.format.clone(),
        requests: counts.requests as u64,
        left_out: counts.left_out.clone(),
        methods: source.methods.clone(),
        speed: counts.speed,
        logged_s: counts.logged.as_secs_f64(),
        replayed_s: counts.replayed.as_secs_f64(),
        // The bad lines' text (addresses, queries) stays out of the bundle.
        warnings: notes
            .iter()
            .filter(|n| !n.starts_with("  "))
            .map(|n| n.trim_start_matches("headroom: ").to_string())
            .collect(),
    })
}

/// The replay in a line: its log, what it sends at what pace, and what
/// it leaves out.
fn describe_replay(
    source: &ReplaySource,
    target: &Target,
    counts: &ReplayCounts,
    max_vus: u32,
) -> String {
    let left_out = &counts.left_out;
    let left = if left_out.is_empty() {
        String::new()
    } else {
        format!(
            "; left out: {} (their bodies are not in the log: --methods sends them empty)",
            left_out
                .iter()
                .map(|(m, n)| format!("{} {m}", group_thousands(*n as i64)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!(
        "headroom: replay of {} against {target} — {} {} requests logged over {}, sent at {}× the log's pace: over {} (each when due, whatever the server does; up to {max_vus} VUs){left}",
        files_text(&source.files),
        group_thousands(counts.requests as i64),
        source.methods.join("/"),
        short(counts.logged),
        trim_speed(counts.speed),
        short(counts.replayed),
    )
}

/// The log's requests in time order, refused when there is none or when
/// they span more than [`MAX_SPAN`] (a wrong clock on one line would make
/// a replay of years).
fn read_log(source: &ReplaySource) -> Result<(ReplayLog, LogReading), AssemblyError> {
    let (log, reading) = read_replay(&source.files, &source.format, &source.methods)
        .map_err(AssemblyError::Usage)?;
    if log.is_empty() {
        return Err(AssemblyError::Usage(format!(
            "no request of {} is in {} ({} lines, {} in the format, {} not a path{}): nothing to replay",
            source.methods.join(", "),
            files_text(&source.files),
            group_thousands(reading.lines as i64),
            group_thousands(reading.entries as i64),
            group_thousands(log.unusable as i64),
            if log.left_out.is_empty() {
                String::new()
            } else {
                format!(
                    "; others: {}; --methods sends them",
                    log.left_out
                        .iter()
                        .map(|(m, n)| format!("{m} {n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        )));
    }
    let logged = log.span();
    if logged > MAX_SPAN {
        return Err(AssemblyError::Usage(format!(
            "the log spans {} from its first request to its last, more than {} days: replay it in parts (a file or a day at a time), or check its times ({})",
            short(logged),
            MAX_SPAN.as_secs() / 86_400,
            log.widest_gap()
                .map(|(n, gap)| format!(
                    "the longest gap is {} before request {} of the log's time order",
                    short(gap),
                    n + 1
                ))
                .unwrap_or_default()
        )));
    }
    Ok((log, reading))
}

/// The replay's speed: given, or the asked rate over the log's own.
fn speed(source: &ReplaySource, log: &ReplayLog, logged: Duration) -> Result<f64, AssemblyError> {
    let speed = match source.pace {
        ReplayPace::Speed(speed) => speed,
        ReplayPace::PerSecond(rate) => {
            // The mean rate of the log as recorded: requests over its span
            // (a log of one instant has none: as recorded).
            let recorded = log.len() as f64 / logged.as_secs_f64().max(1e-3);
            rate / recorded
        }
    };
    if !(speed.is_finite() && speed > 0.0) {
        return Err(AssemblyError::Usage(format!(
            "the replay's speed must be above 0, not {speed}"
        )));
    }
    Ok(speed)
}

/// What the log held that is not sent, said before the run.
fn notes(reading: &LogReading, unusable: u64) -> Vec<String> {
    let mut notes = reading.said_warnings();
    if unusable > 0 {
        notes.push(format!(
            "headroom: warning: {} requests are left out: their target is not a path of printable ASCII (a proxy's full URL, *, bytes a client cannot send as they are)",
            group_thousands(unusable as i64)
        ));
    }
    notes
}

fn files_text(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// "1h02m", "31.5 s".
fn short(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        let m = (s / 60.0).round() as u64;
        if m < 60 {
            format!("{m} min")
        } else {
            format!("{}h{:02}m", m / 60, m % 60)
        }
    }
}

/// 2 → "2", 1.5 → "1.5", 0.333 → "0.333", 0.0003 → "0.0003".
fn trim_speed(speed: f64) -> String {
    let decimals = if speed >= 0.001 {
        3
    } else {
        (-speed.log10()).ceil() as usize + 2
    };
    let text = format!("{speed:.decimals$}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}
