//! The sharded start: which part of a split run this generator runs
//! (`--shard`), where its bundle goes, when it starts (`--start-at`, or
//! `--start-in` after a barrier file) and how far its clock is from the
//! other shards' (measured by [`crate::clock`] and recorded in the manifest).

use crate::assemble::parts::{AssembledRun, AssemblyError};
use crate::spec::{ShardChoice, StartSpec};
use headroom_bundle::manifest::ShardRecord;
use headroom_journey::shard::Shard;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A barrier's start further in the past than `--start-in` (and this) is
/// an earlier run's.
const STALE_BARRIER: Duration = Duration::from_secs(1);

fn usage(text: String) -> AssemblyError {
    AssemblyError::Usage(text)
}

/// The shard this generator runs (with `auto`, from the scheduler's
/// environment); `None` for an unsplit run.
pub fn resolve(choice: Option<ShardChoice>) -> Result<Option<Shard>, AssemblyError> {
    match choice {
        None => Ok(None),
        Some(ShardChoice::Given(shard)) => Ok(Some(shard)),
        Some(ShardChoice::Auto { shards }) => {
            from_environment(shards, |name| std::env::var(name).ok())
                .map(Some)
                .map_err(usage)
        }
    }
}

/// `--shard auto`: Slurm's task number, a Kubernetes Indexed Job's
/// completion index (with `--shards`), or `HEADROOM_SHARD=i/N`.
fn from_environment(
    shards: Option<u32>,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Shard, String> {
    let number = |name: &str, text: String| {
        text.trim()
            .parse::<u32>()
            .map_err(|_| format!("--shard auto: {name}='{text}' is not a whole number"))
    };
    if let Some(text) = var("HEADROOM_SHARD") {
        return Shard::parse(&text).map_err(|e| format!("--shard auto: HEADROOM_SHARD {e}"));
    }
    if let (Some(index), Some(count)) = (var("SLURM_PROCID"), var("SLURM_NTASKS")) {
        return Shard::new(
            number("SLURM_PROCID", index)?,
            number("SLURM_NTASKS", count)?,
        );
    }
    if let Some(index) = var("JOB_COMPLETION_INDEX") {
        let count = shards.ok_or(
            "--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but the Job's \
             size is not: add --shards N (the Job's completions)",
        )?;
        return Shard::new(number("JOB_COMPLETION_INDEX", index)?, count);
    }
    Err(
        "--shard auto: none of HEADROOM_SHARD (i/N), SLURM_PROCID with SLURM_NTASKS (srun) or \
         JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set: run under srun, in an Indexed \
         Job, or give --shard i/N"
            .into(),
    )
}

/// The bundle directory: `{index}` replaced; an unsplit run may not have it.
pub fn bundle_dir(
    dir: &Path,
    shard: Option<Shard>,
    out_given: bool,
) -> Result<PathBuf, AssemblyError> {
    let text = dir.to_string_lossy();
    match shard {
        Some(shard) if text.contains("{index}") => {
            Ok(PathBuf::from(text.replace("{index}", &shard.index.to_string())))
        }
        Some(shard) if !out_given => {
            Ok(PathBuf::from(format!("{text}-shard-{}", shard.index)))
        }
        Some(_) => Ok(dir.to_path_buf()),
        None if text.contains("{index}") => Err(usage(format!(
            "--out {text} holds {{index}}, which only a sharded run fills in: add --shard, or name the directory"
        ))),
        None => Ok(dir.to_path_buf()),
    }
}

/// Makes `prepared` this shard's run: the engine takes its share, the
/// manifest records it, and only shard 0 samples the agents. `population`
/// is the run's users (or most VUs): each shard needs at least one.
pub fn apply(
    prepared: &mut AssembledRun,
    shard: Option<Shard>,
    start_spec: &StartSpec,
    out_given: bool,
) -> Result<(), AssemblyError> {
    prepared.setup.bundle_dir = bundle_dir(&prepared.setup.bundle_dir, shard, out_given)?;
    prepared.start_at = start(start_spec)?;
    let Some(shard) = shard else {
        if prepared.start_at.is_some() {
            prepared.setup.manifest.shard = Some(ShardRecord {
                index: 0,
                count: 1,
                start_at: prepared.start_at.map(rfc3339),
                clock: None,
            });
        }
        return Ok(());
    };
    let population = u64::from(prepared.plan.profile.population());
    if shard.share(population) == 0 {
        return Err(usage(format!(
            "shard {shard} would run no user: the run has {population} user(s) (or VUs) for {} \
             shards. Use at most {population} shards, or more users",
            shard.count
        )));
    }
    if let headroom_journey::profile::Profile::Closed {
        requests: Some(requests),
        ..
    } = prepared.plan.profile
    {
        if shard.share(requests) == 0 {
            return Err(usage(format!(
                "shard {shard} would send no request: -n {requests} over {} shards. Use at most \
                 {requests} shards",
                shard.count
            )));
        }
    }
    prepared.plan.shard = shard;
    prepared.setup.manifest.shard = Some(ShardRecord {
        index: shard.index,
        count: shard.count,
        start_at: prepared.start_at.map(rfc3339),
        clock: None,
    });
    if shard.index != 0 {
        prepared
            .setup
            .monitor
            .retain(|source| !matches!(source, crate::monitoring::MonitorSource::Agent { .. }));
    }
    prepared.description = format!("{} [shard {shard}]", prepared.description);
    Ok(())
}

fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

/// When the load starts: at its moment, or a delay after the barrier.
fn start(spec: &StartSpec) -> Result<Option<SystemTime>, AssemblyError> {
    if let Some(at) = spec.at {
        return Ok(Some(at));
    }
    match &spec.after_barrier {
        Some(b) => barrier(&b.path, b.delay).map(Some),
        None => Ok(None),
    }
}

/// The first shard to arrive writes its time plus `delay` into the barrier
/// file (atomically: a hard link of a complete file, which fails when the
/// barrier exists); the others read it.
fn barrier(path: &Path, delay: Duration) -> Result<SystemTime, AssemblyError> {
    let path = if path.is_dir() {
        path.join("headroom-start")
    } else {
        path.to_path_buf()
    };
    let cannot = |e: std::io::Error| {
        AssemblyError::CannotRun(format!(
            "cannot use the barrier {}: {e}. It must be on storage every shard can write (its directory must exist)",
            path.display()
        ))
    };
    let start = SystemTime::now() + delay;
    let draft = path.with_file_name(format!(
        ".{}.{}",
        path.file_name()
            .map_or("barrier".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    std::fs::write(&draft, rfc3339(start) + "\n").map_err(cannot)?;
    let linked = std::fs::hard_link(&draft, &path);
    let _ = std::fs::remove_file(&draft);
    match linked {
        Ok(()) => return Ok(start),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(cannot(e)),
    }
    let text = std::fs::read_to_string(&path).map_err(cannot)?;
    let at = humantime::parse_rfc3339_weak(text.trim()).map_err(|_| {
        usage(format!(
            "the barrier {} holds '{}', not a start time: remove it and start the shards again",
            path.display(),
            text.trim()
        ))
    })?;
    if let Ok(past) = SystemTime::now().duration_since(at) {
        if past > delay.max(STALE_BARRIER) {
            return Err(usage(format!(
                "the barrier {} says the load started at {} ({} s ago): it is an earlier run's. \
                 Remove it (or use a new path) and start every shard again",
                path.display(),
                text.trim(),
                past.as_secs()
            )));
        }
    }
    Ok(at)
}

/// The connector of the run's first request (its target's, a journey's
/// first host's).
fn first_connector(run: &AssembledRun) -> Option<std::sync::Arc<headroom_http::conn::Connector>> {
    use crate::engine::Workload;
    Some(match &run.plan.workload {
        Workload::Url { connector, .. } => connector.clone(),
        Workload::Journey(journey) => journey.connectors.first()?.clone(),
        Workload::Mix(mix) => mix.journeys.first()?.plan.connectors.first()?.clone(),
        Workload::Replay { connector, .. } => connector.clone(),
    })
}

/// Before a planned start: measures this clock against the shards' common
/// reference (the first agent, else the target's Date header), records
/// it, then waits for the start. False when `interrupt` came first.
pub async fn wait_for_start(
    prepared: &mut AssembledRun,
    agent_token: Option<&str>,
    quiet: bool,
    interrupt: impl Future<Output = ()>,
) -> bool {
    let Some(at) = prepared.start_at else {
        return true;
    };
    let clock = match prepared.setup.manifest.monitored_hosts.first() {
        Some(host) => crate::clock::agent_record(&host.agent, agent_token).await,
        None => match first_connector(prepared) {
            Some(connector) => crate::clock::date_record(connector, &prepared.target).await,
            None => None,
        },
    };
    if let (Some(record), Some(clock)) = (prepared.setup.manifest.shard.as_mut(), clock) {
        record.clock = Some(clock);
    }
    let now = SystemTime::now();
    match at.duration_since(now) {
        Ok(wait) => {
            if !quiet {
                eprintln!(
                    "headroom: the load starts at {} (in {:.1} s)",
                    rfc3339(at),
                    wait.as_secs_f64()
                );
            }
            tokio::select! {
                _ = tokio::time::sleep(wait.saturating_sub(crate::run::STARTUP_LEAD)) => true,
                _ = interrupt => {
                    eprintln!("headroom: stopped before the planned start; nothing was sent");
                    false
                }
            }
        }
        Err(late) => {
            eprintln!(
                "headroom: warning: the planned start {} passed {:.1} s ago; starting now. The \
                 merge will flag this shard as late if that is beyond its tolerance",
                rfc3339(at),
                late.duration().as_secs_f64()
            );
            true
        }
    }
}

/// An RFC 3339 time: `Z` (either case) or an offset such as `+01:00`.
pub fn parse_start_time(text: &str) -> Result<SystemTime, String> {
    let bad = || {
        format!(
            "'{text}' is not a time: write it in RFC 3339 with its zone, e.g. \
             2026-12-01T10:00:00Z (UTC) or 2026-12-01T11:00:00+01:00"
        )
    };
    let upper = text.trim().to_ascii_uppercase();
    let (local, offset_s) = if let Some(base) = upper.strip_suffix('Z') {
        (base.to_string(), 0i64)
    } else {
        let at = upper.len().checked_sub(6).ok_or_else(bad)?;
        let (base, zone) = upper.split_at(at);
        let sign = match zone.as_bytes()[0] {
            b'+' => 1,
            b'-' => -1,
            _ => return Err(bad()),
        };
        let (h, m) = zone[1..].split_once(':').ok_or_else(bad)?;
        let (h, m): (i64, i64) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
        if h > 23 || m > 59 {
            return Err(bad());
        }
        (base.to_string(), sign * (h * 3600 + m * 60))
    };
    let utc = humantime::parse_rfc3339_weak(&local).map_err(|_| bad())?;
    let shift = Duration::from_secs(offset_s.unsigned_abs());
    Ok(if offset_s >= 0 {
        utc - shift
    } else {
        utc + shift
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_times_take_any_rfc3339_zone() {
        let utc = parse_start_time("2026-12-01T10:00:00Z").unwrap();
        assert_eq!(parse_start_time("2026-12-01t10:00:00z").unwrap(), utc);
        assert_eq!(parse_start_time("2026-12-01T11:00:00+01:00").unwrap(), utc);
        assert_eq!(parse_start_time("2026-12-01T05:30:00-04:30").unwrap(), utc);
        assert_eq!(
            parse_start_time("2026-12-01T10:00:00.250Z").unwrap(),
            utc + Duration::from_millis(250)
        );
        for bad in [
            "2026-12-01T10:00:00",
            "tomorrow",
            "2026-12-01T10:00:00+25:00",
            "",
        ] {
            assert!(
                parse_start_time(bad).unwrap_err().contains("RFC 3339"),
                "{bad}"
            );
        }
    }

    #[test]
    fn scheduler_environments_give_the_shard() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let slurm = env(&[("SLURM_PROCID", "3"), ("SLURM_NTASKS", "4")]);
        assert_eq!(
            from_environment(None, slurm).unwrap(),
            Shard::new(3, 4).unwrap()
        );
        let k8s = env(&[("JOB_COMPLETION_INDEX", "1")]);
        assert_eq!(
            from_environment(Some(8), k8s).unwrap(),
            Shard::new(1, 8).unwrap()
        );
        assert!(from_environment(None, k8s)
            .unwrap_err()
            .contains("--shards N"));
        let ours = env(&[("HEADROOM_SHARD", "2/5"), ("SLURM_PROCID", "0")]);
        assert_eq!(
            from_environment(None, ours).unwrap(),
            Shard::new(2, 5).unwrap()
        );
        assert!(from_environment(None, env(&[]))
            .unwrap_err()
            .contains("srun"));
        let bad = env(&[("SLURM_PROCID", "x"), ("SLURM_NTASKS", "4")]);
        assert!(from_environment(None, bad)
            .unwrap_err()
            .contains("SLURM_PROCID='x'"));
    }

    #[test]
    fn out_directories_take_the_index() {
        let shard = Shard::new(2, 4).ok();
        let dir = |s: &str| PathBuf::from(s);
        assert_eq!(
            bundle_dir(&dir("runs/shard-{index}"), shard, true).ok(),
            Some(dir("runs/shard-2"))
        );
        assert_eq!(
            bundle_dir(&dir("runs/x"), shard, false).ok(),
            Some(dir("runs/x-shard-2"))
        );
        assert!(bundle_dir(&dir("runs/{index}"), None, true).is_err());
    }
}
