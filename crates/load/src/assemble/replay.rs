//! An access log's replay: its requests read in time order, each the
//! arrival of an open model due at its logged time divided by the speed.

use super::manifest::{manifest, profile_record, ManifestParts};
use super::parts::{
    apdex, connect_checked, ensure_file_limit, setup, threads, AssembledRun, AssemblyError,
};
use crate::engine::{EnginePlan, PlanParts, Workload};
use crate::run::default_bundle_dir;
use crate::spec::{ReplayPace, ReplaySource, RunSpec};
use headroom_bundle::scenario_record::{ReplayRecord, ScenarioRecord};
use headroom_http::target::Target;
use headroom_journey::profile::{Profile, Think};
use headroom_journey::shard::Shard;
use headroom_traffic::replay::{read_replay, ReplayPlan};
use headroom_units::quantity::{group_thousands, Rate};
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
    // A wrong clock on one line would make a replay of years.
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
    let files: Vec<String> = source
        .files
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    // What the log held that is not sent, said before the run.
    let mut notes: Vec<String> = reading
        .warnings()
        .into_iter()
        .map(|line| {
            if line.starts_with("  ") {
                line
            } else {
                format!("headroom: {line}")
            }
        })
        .collect();
    if unusable > 0 {
        notes.push(format!(
            "headroom: warning: {} requests are left out: their target is not a path of printable ASCII (a proxy's full URL, *, bytes a client cannot send as they are)",
            group_thousands(unusable as i64)
        ));
    }
    let record = ScenarioRecord::Replay(ReplayRecord {
        files: files.clone(),
        format: source.format.clone(),
        requests: requests as u64,
        left_out: left_out.clone(),
        methods: source.methods.clone(),
        speed,
        logged_s: logged.as_secs_f64(),
        replayed_s: replayed.as_secs_f64(),
        // The bad lines' text (addresses, queries) stays out of the bundle.
        warnings: notes
            .iter()
            .filter(|n| !n.starts_with("  "))
            .map(|n| n.trim_start_matches("headroom: ").to_string())
            .collect(),
    });
    let threads = threads(spec);
    let manifest = manifest(
        spec,
        &apdex,
        ManifestParts {
            same_host: connector.address.ip().is_loopback(),
            kind: "replay",
            target: target.url.clone(),
            scenario: record,
            profile: profile_record(&profile, Think::None, None),
            labels,
            timeout: source.timeout,
            connections: connector.negotiated.iter().cloned().collect(),
        },
        threads,
    )?;
    let bundle_dir = spec.outputs.bundle_dir.clone().unwrap_or_else(|| {
        default_bundle_dir(&PathBuf::from("runs"), &format!("replay-{}", target.host))
    });
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
    let description = format!(
        "headroom: replay of {} against {target} — {} {} requests logged over {}, sent at {}× the log's pace: over {} (each when due, whatever the server does; up to {max_vus} VUs){left}",
        files_text(&source.files),
        group_thousands(requests as i64),
        source.methods.join("/"),
        short(logged),
        trim_speed(speed),
        short(replayed),
    );
    let description = std::iter::once(description)
        .chain(notes)
        .collect::<Vec<_>>()
        .join("\n");
    let mut setup = setup(spec, manifest, bundle_dir);
    // A failed exchange's request is the log's as it was (its ids and
    // tokens): replay.csv has every request's status instead.
    setup.save_failures = 0;
    Ok(AssembledRun {
        plan: EnginePlan::new(PlanParts {
            workload: Workload::Replay {
                connector: Arc::new(connector),
                plan,
            },
            profile,
            think: Think::None,
            throughput_cap: None,
            timeout: source.timeout,
            threads,
            apdex,
            seed: spec.seed,
        }),
        setup,
        target: target.url.clone(),
        description,
        start_at: None,
    })
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
