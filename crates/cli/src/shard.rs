//! `--shard`, `--start-at` and `--start-in`: which part of a split run this
//! generator runs, where its bundle goes, when it starts, and how far its
//! clock is from the other shards'.

use crate::args::ShardArgs;
use crate::execute::{Failure, Prepared};
use headroom_bundle::manifest::{ClockRecord, ShardRecord};
use headroom_load::engine::Workload;
use headroom_load::shard::Shard;
use headroom_load::target::Target;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A barrier's start further in the past than `--start-in` (and this) is
/// an earlier run's.
const STALE_BARRIER: Duration = Duration::from_secs(1);
/// The Date header is watched this long for its second to change.
const DATE_WATCH: Duration = Duration::from_millis(1200);

fn usage(text: String) -> Failure {
    Failure::Usage(anyhow::anyhow!(text))
}

/// The shard this generator runs, from `--shard` (and the scheduler's
/// environment with `auto`); `None` for an unsplit run.
pub fn resolve(args: &ShardArgs) -> Result<Option<Shard>, Failure> {
    let Some(spec) = &args.shard else {
        return Ok(None);
    };
    let shard = if spec == "auto" {
        from_environment(args.shards, |name| std::env::var(name).ok())
    } else {
        Shard::parse(spec).map_err(|e| format!("--shard {e}"))
    }
    .map_err(usage)?;
    Ok(Some(shard))
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
pub fn bundle_dir(dir: &Path, shard: Option<Shard>, out_given: bool) -> Result<PathBuf, Failure> {
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
    prepared: &mut Prepared,
    shard: Option<Shard>,
    args: &ShardArgs,
    out_given: bool,
) -> Result<(), Failure> {
    prepared.setup.bundle_dir = bundle_dir(&prepared.setup.bundle_dir, shard, out_given)?;
    prepared.start_at = start(args)?;
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
    if let headroom_load::profile::Profile::Closed {
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
        prepared.setup.monitor.retain(|source| {
            !matches!(
                source,
                headroom_load::monitoring::MonitorSource::Agent { .. }
            )
        });
    }
    prepared.description = format!("{} [shard {shard}]", prepared.description);
    Ok(())
}

fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

/// When the load starts: `--start-at`, or `--start-in` after the barrier.
fn start(args: &ShardArgs) -> Result<Option<SystemTime>, Failure> {
    if let Some(at) = args.start_at {
        return Ok(Some(at));
    }
    match (args.start_in, &args.barrier) {
        (Some(delay), Some(path)) => barrier(path, delay).map(Some),
        _ => Ok(None),
    }
}

/// The first shard to arrive writes its time plus `delay` into the barrier
/// file (atomically: a hard link of a complete file, which fails when the
/// barrier exists); the others read it.
fn barrier(path: &Path, delay: Duration) -> Result<SystemTime, Failure> {
    let path = if path.is_dir() {
        path.join("headroom-start")
    } else {
        path.to_path_buf()
    };
    let cannot = |e: std::io::Error| {
        Failure::CannotRun(anyhow::anyhow!(
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

/// Before a planned start: measures this clock against the shards' common
/// reference (the first agent, else the target's Date header), records
/// it, then waits for the start. False when interrupted meanwhile.
pub async fn wait_for_start(
    prepared: &mut Prepared,
    agent_token: Option<&str>,
    quiet: bool,
) -> bool {
    let Some(at) = prepared.start_at else {
        return true;
    };
    let clock = match prepared.setup.manifest.monitored_hosts.first() {
        Some(host) => agent_offset(&host.agent, agent_token).await,
        None => date_offset(prepared).await,
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
            let interrupt = crate::signals::interrupt_on_signal();
            tokio::select! {
                _ = tokio::time::sleep(wait.saturating_sub(headroom_load::run::STARTUP_LEAD)) => true,
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

/// The agent's clock: the reply with the shortest round trip of five.
async fn agent_offset(authority: &str, token: Option<&str>) -> Option<ClockRecord> {
    let authority = authority.to_string();
    let token = token.map(str::to_string);
    tokio::task::spawn_blocking(move || {
        let mut best: Option<(f64, f64)> = None;
        for _ in 0..5 {
            let t0 = epoch_ms(SystemTime::now());
            let (status, body) = headroom_monitor::agent::get(
                &authority,
                &format!("/samples?since={}", u64::MAX),
                token.as_deref(),
            )
            .ok()?;
            let t1 = epoch_ms(SystemTime::now());
            if status != 200 {
                return None;
            }
            let reply: serde_json::Value = serde_json::from_slice(&body).ok()?;
            let agent = reply.get("now_ms")?.as_f64()?;
            let rtt = t1 - t0;
            if best.is_none_or(|(r, _)| rtt < r) {
                best = Some((rtt, agent - (t0 + t1) / 2.0));
            }
        }
        let (rtt, offset) = best?;
        Some(ClockRecord {
            reference: format!("agent {authority}"),
            offset_ms: (offset * 10.0).round() / 10.0,
            uncertainty_ms: ((rtt / 2.0 + 0.5) * 10.0).round() / 10.0,
        })
    })
    .await
    .ok()
    .flatten()
}

fn epoch_ms(time: SystemTime) -> f64 {
    time.duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
        * 1000.0
}

/// The target's clock from its Date header, whose second is watched until
/// it changes: the change happened between the two requests around it.
async fn date_offset(prepared: &Prepared) -> Option<ClockRecord> {
    let connector = match &prepared.plan.workload {
        Workload::Url { connector, .. } => connector.clone(),
        Workload::Journey(journey) => journey.connectors.first()?.clone(),
    };
    let target = Target::parse(&prepared.target).ok()?;
    let request = format!(
        "HEAD {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: headroom/{}\r\n\r\n",
        target.path_and_query,
        target.authority(),
        env!("CARGO_PKG_VERSION")
    );
    let mut client = headroom_load::client::HttpClient::new(connector, Duration::from_secs(2));
    let mut head = Vec::new();
    let mut previous: Option<(f64, u64)> = None;
    let watch_until = std::time::Instant::now() + DATE_WATCH;
    while std::time::Instant::now() < watch_until {
        head.clear();
        let sent = SystemTime::now();
        let exchange = client
            .send(
                headroom_load::client::Outgoing {
                    bytes: request.as_bytes(),
                    is_head: true,
                    keep_alive: true,
                },
                std::time::Instant::now(),
                &mut |_, _| {},
                Some(&mut head),
            )
            .await;
        let received = epoch_ms(SystemTime::now());
        if exchange.error.is_some() {
            return None;
        }
        let date = date_header(&head)?;
        if let Some((before, second)) = previous {
            if date > second {
                let offset = date as f64 * 1000.0 - (before + received) / 2.0;
                return Some(ClockRecord {
                    reference: format!("Date header of {}", prepared.target),
                    offset_ms: (offset * 10.0).round() / 10.0,
                    uncertainty_ms: (((received - before) / 2.0) * 10.0).round() / 10.0,
                });
            }
        }
        previous = Some((epoch_ms(sent), date));
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    None
}

/// The Date header's time, epoch seconds ("Sun, 06 Nov 1994 08:49:37 GMT").
fn date_header(head: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(head).ok()?;
    let value = text.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("date")
            .then(|| value.trim())
    })?;
    http_date(value)
}

fn http_date(value: &str) -> Option<u64> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m == month)? as i64 + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let mut hms = time.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + h * 3600 + m * 60 + s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn http_dates_are_read() {
        assert_eq!(http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784111777));
        assert_eq!(http_date("Mon, 23 Nov 2026 10:00:00 GMT"), Some(1795428000));
        assert_eq!(http_date("yesterday"), None);
        assert_eq!(
            date_header(b"HTTP/1.1 200 OK\r\ndate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n"),
            Some(784111777)
        );
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
