//! What limits the server, by the USE method over its own evidence: for
//! each resource the watched processes have (a worker pool, the CPU
//! quota of their control group, a listening socket's accept queue), its
//! utilization over the measured seconds, whether it saturated (full,
//! with work waiting), what was measured, and what to change. Read from
//! resources.jsonl's seconds ([`read_details`]); judged by [`use_method`].

use crate::{invalid, read_error, BundleError, RESOURCES_DETAIL};
use headroom_monitor::database::DatabaseFigures;
use headroom_monitor::sampler::{ProcessFigures, ServerConnections};
use headroom_monitor::threads::ThreadStates;
use headroom_monitor::Resources;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// One resource judged over a level's measured seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    /// `pool`, `cpu_quota`, `cpu`, `disk_quota`, `disk`, `accept_queue`,
    /// nginx's `worker_connections`, or a database's `connections`,
    /// `locks` or `command_thread`.
    pub kind: String,
    /// What it is, as a user names it: "php-fpm8.2's pool www".
    pub resource: String,
    pub host: String,
    /// How full it was on average, %: busy workers of the pool, CPU used
    /// of the quota, the fullest second's queue of its backlog.
    pub utilization_pct: f64,
    /// Full, with work waiting for it.
    pub saturated: bool,
    /// The work that waited for it, on average over the seconds: threads
    /// runnable for a CPU, requests in a pool's listen queue, connections
    /// in an accept queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<f64>,
    /// What was measured, in words.
    pub evidence: String,
    /// What to change, for a saturated resource.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub change: String,
    /// Why it could not be measured, when it could not (then its figures
    /// are not zero but unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmeasured: Option<String>,
    /// How far past its saturation point it was (for the order).
    pub severity: f64,
    /// A pool whose busy workers mostly waited for a reply over a socket
    /// (a database, a cache): it comes after a full one of those.
    #[serde(skip)]
    pub waits_on_a_socket: bool,
}

impl Limit {
    /// A resource judged not saturated, until its judge says more.
    fn new(kind: &str, resource: String, host: &str, utilization: f64) -> Limit {
        Limit {
            kind: kind.into(),
            resource,
            host: host.to_string(),
            utilization_pct: utilization,
            saturated: false,
            waiting: None,
            evidence: String::new(),
            change: String::new(),
            unmeasured: None,
            severity: 0.0,
            waits_on_a_socket: false,
        }
    }

    /// What its utilization counts ("busy", "of its backlog") and what
    /// its `waiting` counts ("requests queued"; empty when it holds none).
    pub fn units(&self) -> (&'static str, &'static str) {
        match self.kind.as_str() {
            "pool" => ("busy", "requests queued"),
            "accept_queue" => ("of its backlog", "connections queued"),
            "connections" => ("of max_connections open", ""),
            "worker_connections" => ("of its worker_connections in use", ""),
            "command_thread" => ("of a core busy", ""),
            "locks" => ("of statements waiting", "transactions waiting for a lock"),
            "cpu_quota" => ("used", "threads waiting for a CPU"),
            "disk_quota" => ("of its operations a second", "threads waiting for the disk"),
            "disk" => ("busy", "requests in its queue"),
            _ => ("busy", "threads waiting for a CPU"),
        }
    }

    /// The sentence a user reads: the resource, its evidence, what to change.
    pub fn describe(&self) -> String {
        let mut text = format!("{}: {}", self.resource, self.evidence);
        if !self.change.is_empty() {
            text.push_str(&format!(". {}", self.change));
        }
        text
    }
}

/// A pool is saturated when its workers were busy this share of the
/// time with requests waiting in its queue, or nearly always busy.
const POOL_BUSY: f64 = 90.0;
const POOL_ALWAYS_BUSY: f64 = 98.0;
/// A CPU quota is saturated when this share of it was used.
const QUOTA_USED: f64 = 90.0;
/// A CPU (a quota, or the machine's) this busy is saturated when the
/// server's threads queued for it: on average at least this many
/// waited runnable.
const QUEUED_USED: f64 = 50.0;
const WAITING_THREADS: f64 = 1.0;
/// A database's connections are saturated at this share of its
/// max_connections.
const CONNECTIONS_FULL: f64 = 90.0;
/// An accept queue is saturated when its fullest second reached this
/// share of its backlog.
const QUEUE_FULL: f64 = 90.0;

/// Per second and host, every figure the monitor took (resources.jsonl).
pub fn read_details(dir: &Path) -> Result<Vec<(u64, String, Resources)>, BundleError> {
    let path = dir.join(RESOURCES_DETAIL);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = fs::read_to_string(&path).map_err(read_error(&path))?;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        #[derive(Deserialize)]
        struct Row {
            second: u64,
            host: String,
            resources: Resources,
        }
        let row: Row = serde_json::from_str(line)
            .map_err(|e| invalid(&path, format!("line {}: {e}", i + 1)))?;
        rows.push((row.second, row.host, row.resources));
    }
    Ok(rows)
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// What a process's busy threads mostly did, from their states over the
/// seconds (waiting for a connection or in an event loop is not busy).
fn busy_with(states: &ThreadStates) -> Option<(&'static str, f64)> {
    let busy: Vec<(&str, u32)> = states
        .named()
        .into_iter()
        .filter(|(name, _)| !matches!(*name, "accept" | "events" | "unknown"))
        .collect();
    let total: u32 = busy.iter().map(|(_, n)| n).sum();
    let (name, most) = busy.into_iter().max_by_key(|(_, n)| *n)?;
    (total > 0 && most > 0).then(|| (name, 100.0 * most as f64 / total as f64))
}

fn doing(state: &str) -> &'static str {
    match state {
        "running" => "running or waiting for a CPU",
        "disk" => "waiting for the disk",
        "lock" => "waiting on a lock",
        "network" => "waiting for a reply over a socket (a database, a cache, another server)",
        "timer" => "sleeping on a timer",
        _ => "in the kernel on something else",
    }
}

/// One watched name over a level's seconds: what every judgement of
/// its resources reads.
struct Watched<'a> {
    host: &'a str,
    name: &'a str,
    seconds: &'a [&'a Resources],
    /// The name's figures, a second each.
    looks: Vec<&'a ProcessFigures>,
    /// What its busy threads mostly did, and the share of the looks.
    busy: Option<(&'static str, f64)>,
}

impl Watched<'_> {
    fn limit(&self, kind: &str, resource: String, utilization: f64) -> Limit {
        Limit::new(kind, resource, self.host, utilization)
    }

    fn waiting_for_cpu(&self) -> Option<f64> {
        mean(self.looks.iter().filter_map(|p| p.waiting_for_cpu))
    }

    /// Its threads in uninterruptible sleep (a disk, mostly) at a look,
    /// on average.
    fn waiting_for_disk(&self) -> Option<f64> {
        mean(
            self.looks
                .iter()
                .filter_map(|p| p.threads.as_ref())
                .map(|t| f64::from(t.disk)),
        )
    }
}

/// Every resource of `host`'s watched processes over `seconds`, judged:
/// the saturated ones first, the most saturated first; a pool whose busy
/// workers were mostly running comes after a saturated CPU quota (they
/// were busy because they waited for the CPU).
pub fn use_method(host: &str, seconds: &[&Resources]) -> Vec<Limit> {
    let names: BTreeSet<&str> = seconds
        .iter()
        .flat_map(|r| r.processes.iter().map(|p| p.name.as_str()))
        .collect();
    let mut found = Vec::new();
    // The names without a CPU quota, and their threads waiting for a CPU.
    let mut unquoted: Vec<(&str, f64)> = Vec::new();
    // The names without an IOPS limit, and their threads waiting for a disk.
    let mut on_disk: Vec<(&str, f64)> = Vec::new();
    for name in names {
        let looks: Vec<&ProcessFigures> = seconds
            .iter()
            .filter_map(|r| r.processes.iter().find(|p| p.name == name))
            .collect();
        let mut states = ThreadStates::default();
        for s in looks.iter().filter_map(|p| p.threads.as_ref()) {
            states.merge(s);
        }
        let watched = Watched {
            host,
            name,
            seconds,
            looks,
            busy: busy_with(&states),
        };
        found.extend(pools(&watched));
        match cpu_quota(&watched) {
            Some(quota) => found.push(quota),
            None => unquoted.extend(watched.waiting_for_cpu().map(|w| (name, w))),
        }
        match io_quota(&watched) {
            Some(quota) => found.push(quota),
            None => on_disk.extend(watched.waiting_for_disk().map(|w| (name, w))),
        }
        found.extend(accept_queues(&watched));
        found.extend(server_connections(&watched));
    }
    found.extend(machine_cpu(host, seconds, &unquoted));
    found.extend(machine_disks(host, seconds, &on_disk));
    found.extend(databases(host, seconds));
    found.extend(counted_pools(host, seconds));
    behind_a_full_database(&mut found);
    in_order(&mut found);
    found
}

/// Pools whose workers were busy waiting for a reply over a socket come
/// after a full database or cache: more workers would only wait too.
fn behind_a_full_database(found: &mut [Limit]) {
    let Some(downstream) = found
        .iter()
        .filter(|l| {
            l.saturated && matches!(l.kind.as_str(), "connections" | "locks" | "command_thread")
        })
        .max_by(|a, b| a.severity.total_cmp(&b.severity))
        .map(|l| l.resource.clone())
    else {
        return;
    };
    for pool in found.iter_mut().filter(|l| l.waits_on_a_socket) {
        pool.severity *= 0.5;
        pool.change = format!(
            "Its workers were busy waiting for a reply over a socket while {downstream} was full: more workers would wait too, so see to that first"
        );
    }
}

/// The pools that programs of the monitoring process count themselves
/// (the demo's testbed), judged as a server's pools are.
fn counted_pools(host: &str, seconds: &[&Resources]) -> Vec<Limit> {
    let owners: BTreeSet<&str> = seconds
        .iter()
        .flat_map(|r| r.counted_pools.keys().map(String::as_str))
        .collect();
    let mut found = Vec::new();
    for owner in owners {
        let figures: Vec<ProcessFigures> = seconds
            .iter()
            .filter_map(|r| r.counted_pools.get(owner))
            .map(|pools| ProcessFigures {
                name: owner.to_string(),
                pools: pools.clone(),
                ..ProcessFigures::default()
            })
            .collect();
        let watched = Watched {
            host,
            name: owner,
            seconds,
            looks: figures.iter().collect(),
            busy: None,
        };
        found.extend(pools(&watched));
    }
    found
}

/// Each database's connections against its max_connections, and its
/// transactions waiting for locks.
fn databases(host: &str, seconds: &[&Resources]) -> Vec<Limit> {
    let addresses: BTreeSet<(&str, &str)> = seconds
        .iter()
        .flat_map(|r| r.databases.iter())
        .map(|d| (d.server.as_str(), d.address.as_str()))
        .collect();
    let mut found = Vec::new();
    for (server, address) in addresses {
        let looks: Vec<_> = seconds
            .iter()
            .flat_map(|r| r.databases.iter())
            .filter(|d| d.address == address && d.problem.is_none())
            .collect();
        let limit = |kind: &str, what: &str, utilization: f64| {
            Limit::new(
                kind,
                format!("{server}'s {what} ({address})"),
                host,
                utilization,
            )
        };
        if looks.is_empty() {
            // Never read: unknown, and said so.
            let why = seconds
                .iter()
                .flat_map(|r| r.databases.iter())
                .filter(|d| d.address == address)
                .find_map(|d| d.problem.clone())
                .unwrap_or_else(|| "no figures".into());
            let mut unread = limit("connections", "counters", 0.0);
            unread.evidence = format!("not measured: {why}");
            unread.unmeasured = Some(why);
            found.push(unread);
            continue;
        }
        let max = looks.iter().map(|d| d.max_connections).max().unwrap_or(0);
        let reserved = looks
            .iter()
            .map(|d| d.reserved_connections)
            .max()
            .unwrap_or(0)
            .min(max);
        // What the application may open: PostgreSQL keeps some for
        // superusers, and headroom's own look holds one.
        let usable = max.saturating_sub(reserved + 1);
        let most = looks
            .iter()
            .map(|d| d.most_connections.max(d.connections))
            .max()
            .unwrap_or(0);
        let open = mean(looks.iter().map(|d| d.connections as f64)).unwrap_or(0.0);
        let refused: f64 = looks.iter().map(|d| d.refused_s).sum();
        let share = |n: f64| {
            if usable > 0 {
                (100.0 * n / usable as f64).min(100.0)
            } else {
                0.0
            }
        };
        let mut connections = limit("connections", "connections", share(open));
        connections.saturated = share(most as f64) >= CONNECTIONS_FULL || refused > 0.0;
        let kept = if reserved > 0 {
            format!("{reserved} are kept for superusers, 1 is headroom's own")
        } else {
            "1 is headroom's own".to_string()
        };
        let redis = server == "Redis";
        let setting = if redis {
            "maxclients"
        } else {
            "max_connections"
        };
        connections.evidence = format!("at most {most} of the {usable} connections its {setting} {max} leaves to applications ({kept}) were open ({open:.0} on average)");
        if refused > 0.0 {
            connections.evidence.push_str(&format!(
                "; it refused {refused:.0} connections because all were in use"
            ));
        }
        if connections.saturated {
            connections.change = if redis {
                "Raise maxclients (each client takes an open file: the service's limit of open files must allow it), or have the application keep fewer connections open".into()
            } else {
                "Raise max_connections (each connection takes memory), or have the application hold fewer connections (a connection pool such as PgBouncer, or fewer workers opening one each)".into()
            };
        }
        connections.severity =
            share(most as f64) / CONNECTIONS_FULL + if refused > 0.0 { 0.2 } else { 0.0 };
        found.push(connections);
        if redis {
            found.push(command_thread(
                &looks,
                limit("command_thread", "command thread", 0.0),
            ));
            continue;
        }
        let waiting = mean(looks.iter().map(|d| d.lock_waiting)).unwrap_or(0.0);
        let waits = mean(looks.iter().map(|d| d.lock_waits_s)).unwrap_or(0.0);
        let running = mean(looks.iter().map(|d| d.running as f64)).unwrap_or(0.0);
        let busy = (100.0 * waiting / running.max(waiting).max(1e-9)).min(100.0);
        let mut locks = limit("locks", "row locks", if waiting > 0.0 { busy } else { 0.0 });
        locks.waiting = Some(waiting);
        locks.saturated = waiting >= WAITING_THREADS;
        locks.evidence = format!(
            "on average {waiting:.1} transactions waited for a lock{}",
            if server == "MariaDB" {
                format!(" ({waits:.0} row lock waits a second)")
            } else {
                String::new()
            }
        );
        if locks.saturated {
            locks.change = "Requests wait for the same rows: commit the transactions that update them sooner, update shared rows (counters, sessions) less often or in batches, and index what the updates search by so that fewer rows are locked".into();
        }
        locks.severity = waiting / WAITING_THREADS;
        found.push(locks);
    }
    found
}

/// A database's one command thread (Redis's main thread, which runs
/// every command one at a time): full when busy ≥ 90% of a core.
fn command_thread(looks: &[&DatabaseFigures], mut limit: Limit) -> Limit {
    let Some(busy) = mean(looks.iter().filter_map(|d| d.command_thread_pct)) else {
        let why = "its INFO does not give its main thread's CPU".to_string();
        limit.evidence = format!("not measured: {why}");
        limit.unmeasured = Some(why);
        return limit;
    };
    let commands = mean(looks.iter().filter_map(|d| d.commands_s)).unwrap_or(0.0);
    let blocked = mean(
        looks
            .iter()
            .map(|d| d.waiting.get("blocked").copied().unwrap_or(0) as f64),
    )
    .unwrap_or(0.0);
    limit.utilization_pct = busy;
    limit.saturated = busy >= QUOTA_USED;
    limit.evidence = format!(
        "it runs every command one at a time on one thread, and that thread was busy {busy:.0}% of a core ({commands:.0} commands a second{})",
        if blocked > 0.0 {
            format!("; {blocked:.1} clients blocked in a waiting command on average")
        } else {
            String::new()
        }
    );
    if limit.saturated {
        limit.change = "Make each command cheaper (no KEYS or long Lua scripts, smaller values, fewer round trips: pipelines, MGET), spread the keys over more Redis instances, or give it a faster core".into();
    }
    limit.severity = busy / QUOTA_USED;
    limit
}

/// Each php-fpm pool of the name: its workers busy, requests queued.
fn pools(w: &Watched) -> Vec<Limit> {
    // Each second's requests waiting in the name's listen queues (for a
    // pool whose master's own are not known).
    let name_queued: Vec<u32> = w
        .looks
        .iter()
        .map(|p| p.listening.iter().map(|l| l.queue).sum())
        .collect();
    let available = w
        .seconds
        .iter()
        .filter_map(|r| r.memory_available_mb)
        .reduce(f64::min);
    let each = mean(
        w.looks
            .iter()
            .filter(|p| p.count > 0)
            .map(|p| p.rss_mb / f64::from(p.count)),
    );
    // Each pool by its master and name: two php-fpm masters may each
    // have a pool "www".
    let keys: BTreeSet<(Option<u32>, &str)> = w
        .looks
        .iter()
        .flat_map(|p| p.pools.iter().map(|pool| (pool.master, pool.pool.as_str())))
        .collect();
    let shared = |pool: &str| keys.iter().filter(|(_, name)| *name == pool).count() > 1;
    keys.iter()
        .map(|&(master, pool)| {
            let all: Vec<_> = w
                .looks
                .iter()
                .filter_map(|p| p.pools.iter().find(|x| x.pool == pool && x.master == master))
                .collect();
            let queued: Vec<u32> = if all.iter().any(|x| x.queued.is_some()) {
                all.iter().map(|x| x.queued.unwrap_or(0)).collect()
            } else {
                name_queued.clone()
            };
            let most_queued = queued.iter().copied().max().unwrap_or(0);
            let queue_mean = mean(queued.iter().map(|&q| f64::from(q))).unwrap_or(0.0);
            // What this pool's own workers were busy with, where the
            // looks say (else the name's threads).
            let mut own = ThreadStates::default();
            for states in all.iter().filter_map(|x| x.states.as_ref()) {
                own.merge(states);
            }
            let busy_with_own = if own.total() > 0 { busy_with(&own) } else { w.busy };
            let computing = busy_with_own.is_some_and(|(state, _)| state == "running");
            let on_disk = busy_with_own.is_some_and(|(state, _)| state == "disk");
            let on_socket = busy_with_own.is_some_and(|(state, _)| state == "network");
            let counted = all.iter().any(|x| x.busy_share.is_some());
            let label = match master {
                _ if counted => format!("{}'s {pool}", w.name),
                Some(pid) if shared(pool) => format!("{}'s pool {pool} (master {pid})", w.name),
                _ => format!("{}'s pool {pool}", w.name),
            };
            // Each answered look's busy share, %: a pool that counts
            // itself says it exactly, else the busy workers at the look.
            let looks: Vec<(u32, f64)> = all
                .iter()
                .filter(|x| x.unanswered.is_none() && x.workers > 0)
                .map(|x| {
                    let share = x
                        .busy_share
                        .map_or(f64::from(x.busy) / f64::from(x.workers), |s| s);
                    (x.workers, 100.0 * share)
                })
                .collect();
            // A look whose own count did not come because no worker was
            // free to answer counts as all busy.
            let late = all
                .iter()
                .filter(|x| x.unanswered.as_deref().is_some_and(|why| why.contains("no worker was free")))
                .count();
            let workers = looks.iter().map(|l| l.0).max().unwrap_or(0);
            let answered = looks.len();
            let utilization = if answered + late == 0 {
                0.0
            } else {
                (looks.iter().map(|l| l.1).sum::<f64>() + 100.0 * late as f64)
                    / (answered + late) as f64
            };
            // A pool that counts itself says its mean queue too.
            let queue_mean = if counted {
                mean(all.iter().filter_map(|x| x.waiting)).unwrap_or(0.0)
            } else {
                queue_mean
            };
            let advice = all.iter().find_map(|x| x.advice.clone());
            let mut limit = w.limit("pool", label, utilization);
            if answered + late == 0 {
                limit.unmeasured = Some(
                    all.iter()
                        .find_map(|x| x.unanswered.clone())
                        .unwrap_or_else(|| "no worker was counted".into()),
                );
                limit.evidence = format!("not measured: {}", limit.unmeasured.as_deref().unwrap_or(""));
                return limit;
            }
            // Full with work waiting; or, as for a CPU, busy and never
            // without a queue (on average at least one request waited),
            // unless its busy workers were computing: then requests waited
            // while workers were free, for a CPU to run them, and more
            // workers would wait for it too (a server held to half a CPU
            // queued 2.2 requests on average with its 20 workers 51% busy).
            limit.saturated = (utilization >= POOL_BUSY && most_queued > 0)
                || utilization >= POOL_ALWAYS_BUSY
                || (utilization >= QUEUED_USED && queue_mean >= WAITING_THREADS && !computing);
            limit.waiting = Some(queue_mean);
            limit.evidence = if workers == 1 && counted {
                format!("it was busy {utilization:.0}% of the measured time")
            } else if workers == 1 {
                format!("its one worker was busy {utilization:.0}% of the measured time")
            } else {
                format!("its {workers} workers were busy {utilization:.0}% of the measured time")
            };
            let queue = match (counted, workers) {
                (true, 1) => "for it",
                (true, _) => "for one",
                _ => "in its listen queue",
            };
            limit.evidence.push_str(&if most_queued > 0 {
                format!(
                    " and up to {} waited {queue} ({queue_mean:.1} on average)",
                    headroom_units::quantity::count(most_queued as usize, "request", "requests")
                )
            } else if counted {
                format!(" and no request waited {queue}")
            } else {
                " and no request waited in its listen queue".to_string()
            });
            if late > 0 {
                limit.evidence.push_str(&format!(
                    "; its status page did not answer in {late} of {} seconds (no worker was free to serve it)",
                    all.len()
                ));
            }
            if let Some((state, share)) = busy_with_own {
                limit.evidence.push_str(&format!(
                    "; its busy threads were {} {share:.0}% of the time",
                    doing(state)
                ));
            }
            let apache = w.name.starts_with("apache2") || w.name.starts_with("httpd");
            limit.change = if !limit.saturated {
                String::new()
            } else if let Some(advice) = advice {
                advice
            } else if apache {
                format!("Raise MaxRequestWorkers (now {workers} workers; ServerLimit × ThreadsPerChild must allow it), as 001 raised Apache's ServerLimit, if memory allows")
            } else if computing {
                format!("Its workers were busy computing: more workers (pm.max_children, now {workers}) help only if a CPU is free; otherwise give the server more CPU or make each request cheaper")
            } else if on_disk {
                format!("Its workers were busy waiting for the disk: more workers (pm.max_children, now {workers}) help only if the disk has operations to spare")
            } else {
                let room = match (available, each) {
                    (Some(available), Some(each)) if each > 0.0 => format!(
                        ": memory allows {} more workers of {each:.0} MB each",
                        (available / each).floor() as u64
                    ),
                    _ => String::new(),
                };
                format!("Raise pm.max_children (now {workers}){room}")
            };
            limit.waits_on_a_socket = on_socket && limit.saturated;
            limit.severity = utilization / POOL_BUSY + if most_queued > 0 { 0.1 } else { 0.0 };
            // Busy because they waited for a CPU or a disk: that comes first.
            if computing || on_disk {
                limit.severity *= 0.5;
            }
            limit
        })
        .collect()
}

/// The CPU quota of the name's control group, where one holds it.
fn cpu_quota(w: &Watched) -> Option<Limit> {
    let waiting = w.waiting_for_cpu()?;
    let quotas: Vec<_> = w
        .looks
        .iter()
        .filter_map(|p| p.cpu_limit.as_ref())
        .collect();
    let first = quotas.first()?;
    let used = mean(quotas.iter().map(|q| q.used_pct)).unwrap_or(0.0);
    let throttled = mean(quotas.iter().map(|q| q.throttled_pct)).unwrap_or(0.0);
    let mut limit = w.limit(
        "cpu_quota",
        format!(
            "the CPU quota of {}'s control group {}",
            w.name, first.group
        ),
        used,
    );
    limit.evidence = format!(
        "it is held to {} CPU and used {used:.0}% of it; it was throttled {throttled:.0}% of the time and {waiting:.1} of its threads waited for a CPU on average",
        trim(first.cores)
    );
    judge_queued(&mut limit, waiting, QUOTA_USED, "Give it more CPU (raise cpu.max, systemd's CPUQuota=, a container's --cpus) or make each request cheaper");
    Some(limit)
}

/// The machine's CPUs as the watched processes without a quota found
/// them: how busy, and how many of their threads waited for one.
fn machine_cpu(host: &str, seconds: &[&Resources], waiting: &[(&str, f64)]) -> Option<Limit> {
    if waiting.is_empty() {
        return None;
    }
    let busy = mean(seconds.iter().map(|r| r.cpu_pct)).unwrap_or(0.0);
    let stalled = mean(
        seconds
            .iter()
            .filter_map(|r| r.pressure.and_then(|p| p.cpu_some_pct)),
    );
    let total: f64 = waiting.iter().map(|(_, w)| w).sum();
    let mut limit = Limit::new("cpu", "the machine's CPUs".into(), host, busy);
    limit.evidence = format!(
        "they were {busy:.0}% busy and on average {total:.1} of the server's threads waited for one ({}){}",
        waiting
            .iter()
            .map(|(name, w)| format!("{name} {w:.1}"))
            .collect::<Vec<_>>()
            .join(", "),
        stalled.map_or(String::new(), |s| format!(
            "; some task waited for a CPU {s:.0}% of the time (pressure stall information)"
        ))
    );
    judge_queued(&mut limit, total, f64::INFINITY, "Give the server more or faster CPUs, move other work off the machine, or make each request cheaper");
    Some(limit)
}

/// The disk operations a second of the name's control group against its
/// limit (`emulate --iops`, a container's io.max), where one holds it.
fn io_quota(w: &Watched) -> Option<Limit> {
    let limits: Vec<_> = w.looks.iter().filter_map(|p| p.io_limit.as_ref()).collect();
    let first = limits.first()?;
    let done = mean(limits.iter().map(|l| l.done_s)).unwrap_or(0.0);
    let used = 100.0 * done / first.iops.max(1) as f64;
    let waiting = w.waiting_for_disk().unwrap_or(0.0);
    let mut limit = w.limit(
        "disk_quota",
        format!(
            "the disk operations of {}'s control group {}",
            w.name, first.group
        ),
        used,
    );
    limit.evidence = format!(
        "it did {done:.0} of its {} operations a second ({used:.0}%) and on average {waiting:.1} of {}'s threads waited for the disk",
        first.iops, w.name
    );
    judge_queued(&mut limit, waiting, QUOTA_USED, DISK_CHANGE);
    Some(limit)
}

/// What to change when a disk's operations are the limit.
const DISK_CHANGE: &str = "The disk's operations a second are the limit (an SD card's are few): put the data on a faster disk (an SSD), make fewer synced writes per request (fewer commits; sessions and caches out of the database), or raise the group's limit";

/// Each disk of the host that was busy with requests queued for it while
/// the server's threads waited for a disk: saturated, and named.
fn machine_disks(host: &str, seconds: &[&Resources], waiting: &[(&str, f64)]) -> Vec<Limit> {
    let total: f64 = waiting.iter().map(|(_, w)| w).sum();
    if total < WAITING_THREADS {
        return Vec::new();
    }
    let names: BTreeSet<&str> = seconds
        .iter()
        .flat_map(|r| r.disks.iter().map(|d| d.name.as_str()))
        .collect();
    names
        .into_iter()
        .filter_map(|name| {
            let looks: Vec<_> = seconds
                .iter()
                .flat_map(|r| r.disks.iter().filter(|d| d.name == name))
                .collect();
            let busy = mean(looks.iter().map(|d| d.util_pct))?;
            let queue = mean(looks.iter().filter_map(|d| d.queue)).unwrap_or(0.0);
            let wait = mean(looks.iter().filter_map(|d| d.await_ms));
            let iops = mean(looks.iter().map(|d| d.iops)).unwrap_or(0.0);
            let mut limit = Limit::new("disk", format!("the disk {name}"), host, busy);
            limit.evidence = format!(
                "it was busy {busy:.0}% of the time at {iops:.0} operations a second, with {queue:.1} requests in its queue on average{}, and {total:.1} of the server's threads waited for a disk ({})",
                wait.map_or(String::new(), |w| format!(" taking {w:.1} ms each")),
                waiting
                    .iter()
                    .map(|(name, w)| format!("{name} {w:.1}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            limit.waiting = Some(queue);
            limit.saturated = busy >= QUOTA_USED && queue >= WAITING_THREADS;
            if limit.saturated {
                limit.change = DISK_CHANGE.into();
            }
            limit.severity = busy / QUOTA_USED + if queue >= WAITING_THREADS { 0.2 } else { 0.0 };
            // Only a disk that was busy speaks for the threads' waits.
            (busy >= QUEUED_USED).then_some(limit)
        })
        .collect()
}

/// A CPU is saturated when `full` of it is used, or when it is busy
/// enough and work queued for it: a thread waiting all the time on average.
fn judge_queued(limit: &mut Limit, waiting: f64, full: f64, change: &str) {
    let used = limit.utilization_pct;
    let queued = waiting >= WAITING_THREADS;
    limit.waiting = Some(waiting);
    limit.saturated = used >= full || (used >= QUEUED_USED && queued);
    if limit.saturated {
        limit.change = change.into();
    }
    limit.severity = used / QUOTA_USED + if queued { 0.2 } else { 0.0 };
}

/// Each listening socket of the name: its fullest accept queue against
/// its backlog, and the packets of new connections the kernel dropped at
/// it (a SYN, or the handshake's last ACK, each time its queue was full).
fn accept_queues(w: &Watched) -> Vec<Limit> {
    #[derive(Default)]
    struct Socket {
        most: u32,
        backlog: u32,
        summed: u64,
        dropped: Option<u64>,
        last_count: Option<u64>,
    }
    let mut sockets: BTreeMap<&str, Socket> = BTreeMap::new();
    for look in &w.looks {
        // A look's drop count by address (several sockets may share one).
        let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
        for l in &look.listening {
            let socket = sockets.entry(l.address.as_str()).or_default();
            socket.most = socket.most.max(l.queue);
            socket.backlog = socket.backlog.max(l.backlog);
            socket.summed += u64::from(l.queue);
            if let Some(d) = l.dropped {
                *counts.entry(l.address.as_str()).or_default() += d;
            }
        }
        for (address, count) in counts {
            let socket = sockets.entry(address).or_default();
            // A count that went down is a socket opened again, from zero.
            let grew = match socket.last_count {
                Some(last) if count >= last => count - last,
                Some(_) => count,
                None => 0,
            };
            socket.dropped = Some(socket.dropped.unwrap_or(0) + grew);
            socket.last_count = Some(count);
        }
    }
    let looks = w.looks.len().max(1) as f64;
    sockets
        .into_iter()
        .map(|(address, socket)| {
            let (most, backlog) = (socket.most, socket.backlog);
            let fill = if backlog > 0 {
                100.0 * f64::from(most) / f64::from(backlog)
            } else {
                0.0
            };
            let mut limit = w.limit(
                "accept_queue",
                format!("{}'s listening socket {address}", w.name),
                fill,
            );
            let dropped = socket.dropped.unwrap_or(0);
            // Full at a look, or full between looks: the socket's own count
            // of the packets it dropped grew (a burst fills it in between).
            limit.saturated = fill >= QUEUE_FULL || dropped > 0;
            limit.waiting = Some(socket.summed as f64 / looks);
            limit.evidence = format!(
                "at most {most} connections waited to be accepted, of a backlog of {backlog}"
            );
            if dropped > 0 {
                limit.evidence.push_str(&format!(
                    "; its own drop count grew by {dropped} (packets of new connections the kernel dropped there, its accept queue full)"
                ));
            }
            if limit.saturated {
                limit.change = "Raise its listen backlog (nginx: `listen ... backlog=N`; php-fpm: listen.backlog; Apache: ListenBacklog), and net.core.somaxconn, which caps it; or serve faster so fewer wait".into();
                if w.name.starts_with("nginx") {
                    limit.change.push_str("; an nginx worker with worker_connections open stops accepting, so raise that too");
                }
            }
            limit.severity = if dropped > 0 {
                (fill / QUEUE_FULL).max(1.0)
            } else {
                fill / QUEUE_FULL
            };
            limit
        })
        .collect()
}

/// A server's own count of its connections (nginx's stub_status)
/// against what its workers may hold: each master's, named by its pid
/// when there were several.
fn server_connections(w: &Watched) -> Vec<Limit> {
    let masters: BTreeSet<Option<u32>> = w
        .looks
        .iter()
        .flat_map(|p| p.connections.iter().map(|c| c.master))
        .collect();
    masters
        .iter()
        .filter_map(|master| {
            let all: Vec<&ServerConnections> = w
                .looks
                .iter()
                .flat_map(|p| p.connections.iter().filter(|c| c.master == *master))
                .collect();
            let resource = match master {
                Some(pid) if masters.len() > 1 => {
                    format!("{}'s connections (master {pid})", w.name)
                }
                _ => format!("{}'s connections", w.name),
            };
            master_connections(w, &all, resource)
        })
        .collect()
}

/// One master's connections over the looks.
fn master_connections(w: &Watched, all: &[&ServerConnections], resource: String) -> Option<Limit> {
    let last = *all.last()?;
    let answered: Vec<&&ServerConnections> =
        all.iter().filter(|c| c.unanswered.is_none()).collect();
    // A look whose page was not served in time: no connection was free.
    let late = all
        .iter()
        .filter(|c| {
            c.unanswered
                .as_deref()
                .is_some_and(|why| why.contains("no connection was free"))
        })
        .count();
    let most = all.iter().map(|c| c.most()).max().unwrap_or(0).max(1);
    if answered.is_empty() && late == 0 {
        let why = last.unanswered.clone().unwrap_or_default();
        let mut limit = w.limit("worker_connections", resource, 0.0);
        limit.evidence = format!("not measured: {why}");
        limit.unmeasured = Some(why);
        return Some(limit);
    }
    let share = |open: u64| (100.0 * open as f64 / most as f64).min(100.0);
    let utilization = (answered.iter().map(|c| share(c.open())).sum::<f64>() + 100.0 * late as f64)
        / (answered.len() + late) as f64;
    let most_open = answered.iter().map(|c| c.open()).max().unwrap_or(0);
    let mean_open = mean(answered.iter().map(|c| c.open() as f64)).unwrap_or(0.0);
    let dropped: u64 = all.iter().map(|c| c.dropped).sum();
    let mut limit = w.limit("worker_connections", resource, utilization);
    // Full when nearly all were in use, when it closed connections
    // unserved, or when it had none free in half the seconds or more.
    limit.saturated = share(most_open) >= CONNECTIONS_FULL
        || dropped > 0
        || utilization >= CONNECTIONS_FULL
        || late * 2 >= all.len();
    let workers =
        headroom_units::quantity::count(last.workers.max(1) as usize, "worker", "workers");
    let allowed = format!(
        "(worker_connections {}{})",
        last.worker_connections,
        if last.configured {
            ""
        } else {
            ", nginx's default: its configuration does not say"
        }
    );
    let mut parts = Vec::new();
    if late > 0 {
        parts.push(format!(
            "in {late} of {} seconds it had no connection free to serve its stub_status page",
            all.len()
        ));
    }
    parts.push(if answered.is_empty() {
        format!("its {workers} may hold {most} connections {allowed}")
    } else {
        format!(
            "at most {most_open} of the {most} connections its {workers} may hold {allowed} were in use in the {} it answered ({mean_open:.1} on average; a request in progress holds one to its upstream too)",
            headroom_units::quantity::count(answered.len(), "second", "seconds")
        )
    });
    if dropped > 0 {
        parts.push(format!(
            "it closed {dropped} connections unserved (accepted, not handled: worker_connections reached)"
        ));
    }
    limit.evidence = parts.join("; ");
    if limit.saturated {
        limit.change = format!(
            "Raise worker_connections (now {}; the workers' open files must allow it: worker_rlimit_nofile), or worker_processes (now {}) if a CPU is free",
            last.worker_connections,
            last.workers.max(1)
        );
    }
    limit.severity =
        utilization.max(share(most_open)) / CONNECTIONS_FULL + if dropped > 0 { 0.2 } else { 0.0 };
    Some(limit)
}

/// The saturated first, the most saturated first.
pub fn in_order(limits: &mut [Limit]) {
    limits.sort_by(|a, b| {
        b.saturated
            .cmp(&a.saturated)
            .then(b.severity.total_cmp(&a.severity))
    });
}

/// A CPU count as written: 0.5, 2.
fn trim(cores: f64) -> String {
    let text = format!("{cores:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_monitor::listen::ListenQueue;
    use headroom_monitor::sampler::{CpuLimit, WorkerPool};

    fn second(pool: (u32, u32), queue: u32, states: ThreadStates, quota: Option<f64>) -> Resources {
        let mut r: Resources = serde_json::from_value(serde_json::json!({
            "cpu_pct": 20.0, "user_pct": 15.0, "system_pct": 5.0, "iowait_pct": 0.0,
            "steal_pct": 0.0, "per_core_pct": [20.0, 20.0], "load": [0.0, 0.0, 0.0],
            "memory_used_pct": 40.0, "swap_used_mb": 0.0, "disks": [], "networks": [],
            "temperatures_c": {}, "frequencies_mhz": [], "processes": [],
            "memory_available_mb": 620.0
        }))
        .unwrap();
        r.processes.push(ProcessFigures {
            name: "php-fpm8.2".into(),
            cpu_pct: 10.0,
            rss_mb: 93.0,
            count: 3,
            waiting_for_cpu: Some(0.1),
            major_faults_s: Some(0.0),
            threads: Some(states),
            pools: vec![WorkerPool {
                pool: "www".into(),
                workers: pool.0,
                busy: pool.1,
                unanswered: None,
                master: Some(41),
                queued: Some(queue),
                ..WorkerPool::default()
            }],
            cpu_limit: quota.map(|used| CpuLimit {
                group: "/php.slice".into(),
                cores: 0.5,
                used_pct: used,
                throttled_pct: used / 2.0,
            }),
            listening: vec![ListenQueue {
                address: "/run/php/php.sock".into(),
                queue,
                backlog: 511,
                dropped: None,
            }],
            io_limit: None,
            connections: Vec::new(),
        });
        r
    }

    fn sleeping(timer: u32) -> ThreadStates {
        ThreadStates {
            timer,
            events: 1,
            ..Default::default()
        }
    }

    /// Two nginx masters: one with 95 of its 100 connections in use, one
    /// nearly idle. Each is judged on its own count, named by its pid.
    #[test]
    fn each_nginx_master_is_judged_on_its_own_connections() {
        use headroom_monitor::sampler::ServerConnections;
        let master = |pid: u32, clients: u64, worker_connections: u64| ServerConnections {
            master: Some(pid),
            clients,
            workers: 1,
            worker_connections,
            configured: true,
            ..ServerConnections::default()
        };
        let seconds: Vec<Resources> = [(60, 3), (95, 2)]
            .iter()
            .map(|(busy, idle)| {
                let mut r = second((20, 2), 0, sleeping(2), None);
                r.processes[0].name = "nginx".into();
                r.processes[0].connections = vec![master(7, *busy, 100), master(9, *idle, 512)];
                r
            })
            .collect();
        let looks: Vec<&Resources> = seconds.iter().collect();
        let limits = use_method("local", &looks);
        let named = |resource: &str| limits.iter().find(|l| l.resource == resource).unwrap();
        let busy = named("nginx's connections (master 7)");
        assert!(busy.saturated, "{busy:?}");
        assert!(
            busy.evidence.contains("at most 95 of the 100 connections"),
            "{busy:?}"
        );
        assert!(
            busy.change.contains("worker_connections (now 100"),
            "{busy:?}"
        );
        let idle = named("nginx's connections (master 9)");
        assert!(!idle.saturated, "{idle:?}");
        assert!(idle.evidence.contains("at most 3 of the 512"), "{idle:?}");
    }

    /// A socket whose queue looked a third full at each look but whose own
    /// drop count grew by 9 between them (a burst, then a socket opened
    /// again from zero) is full; one whose count stayed is not.
    #[test]
    fn an_accept_queue_that_dropped_between_looks_is_full() {
        let looks_with = |drops: &[(u64, u64)]| -> Vec<Resources> {
            drops
                .iter()
                .map(|(bursty, calm)| {
                    let mut r = second((20, 2), 0, sleeping(2), None);
                    r.processes[0].listening = vec![
                        ListenQueue {
                            address: "127.0.0.1:80".into(),
                            queue: 5,
                            backlog: 16,
                            dropped: Some(*bursty),
                        },
                        ListenQueue {
                            address: "127.0.0.1:81".into(),
                            queue: 5,
                            backlog: 16,
                            dropped: Some(*calm),
                        },
                    ];
                    r
                })
                .collect()
        };
        let seconds = looks_with(&[(3, 40), (10, 40), (2, 40)]);
        let looks: Vec<&Resources> = seconds.iter().collect();
        let limits = use_method("local", &looks);
        let queue = |address: &str| {
            limits
                .iter()
                .find(|l| l.kind == "accept_queue" && l.resource.ends_with(address))
                .unwrap()
        };
        let bursty = queue("127.0.0.1:80");
        assert!(bursty.saturated, "{bursty:?}");
        assert!(bursty.evidence.contains("its own drop count grew by 9 ("));
        assert!(bursty.change.contains("listen backlog"));
        let calm = queue("127.0.0.1:81");
        assert!(!calm.saturated, "{calm:?}");
        assert!(!calm.evidence.contains("dropped"));
    }

    #[test]
    fn a_full_pool_with_a_queue_is_named_with_room_for_more_workers() {
        let seconds = [
            second((2, 2), 20, sleeping(2), None),
            second((2, 2), 23, sleeping(2), None),
            second((2, 2), 0, sleeping(2), None),
        ];
        let looks: Vec<&Resources> = seconds.iter().collect();
        let limits = use_method("local", &looks);
        let pool = &limits[0];
        assert_eq!(pool.kind, "pool");
        assert!(pool.saturated);
        assert_eq!(pool.utilization_pct, 100.0);
        assert_eq!(
            pool.describe(),
            "php-fpm8.2's pool www: its 2 workers were busy 100% of the measured time and up to 23 requests waited in its listen queue (14.3 on average); its busy threads were sleeping on a timer 100% of the time. Raise pm.max_children (now 2): memory allows 20 more workers of 31 MB each"
        );
        // The unix socket's queue is far from its backlog.
        let queue = limits.iter().find(|l| l.kind == "accept_queue").unwrap();
        assert!(!queue.saturated);
    }

    #[test]
    fn a_pool_computing_under_a_full_quota_names_the_quota_first() {
        let running = ThreadStates {
            running: 18,
            events: 1,
            ..Default::default()
        };
        let seconds = [
            second((20, 20), 5, running, Some(99.0)),
            second((20, 20), 8, running, Some(97.0)),
        ];
        let looks: Vec<&Resources> = seconds.iter().collect();
        let limits = use_method("local", &looks);
        assert_eq!(limits[0].kind, "cpu_quota", "{limits:#?}");
        assert!(limits[0]
            .evidence
            .starts_with("it is held to 0.5 CPU and used 98% of it"));
        assert_eq!(limits[1].kind, "pool");
        assert!(limits[1].change.contains("busy computing"));
    }

    /// Half its workers busy computing and requests in its queue: they
    /// waited for a CPU, not for a worker (more workers would wait too);
    /// the same queue before workers sleeping on something is the pool's.
    #[test]
    fn a_half_busy_pool_whose_queue_waited_for_a_cpu_is_not_full() {
        let running = ThreadStates {
            running: 10,
            events: 1,
            ..Default::default()
        };
        let judged = |states: ThreadStates| {
            let seconds = [
                second((20, 10), 2, states, Some(99.0)),
                second((20, 11), 3, states, Some(98.0)),
            ];
            let looks: Vec<&Resources> = seconds.iter().collect();
            use_method("local", &looks)
                .into_iter()
                .find(|l| l.kind == "pool")
                .unwrap()
        };
        let computing = judged(running);
        assert!(!computing.saturated, "{computing:?}");
        assert!(judged(sleeping(10)).saturated);
    }

    /// Run without root, the monitor cannot read what another user's
    /// workers sleep on: the pool is unknown, not idle and not full.
    #[test]
    fn a_pool_whose_workers_cannot_be_read_is_not_measured() {
        let mut unreadable = second((0, 0), 0, sleeping(0), None);
        unreadable.processes[0].pools[0].unanswered = Some(
            "what its workers wait for is not readable here (wchan: run the monitor as root)"
                .into(),
        );
        let looks = [&unreadable, &unreadable];
        let limits = use_method("local", &looks);
        let pool = limits.iter().find(|l| l.kind == "pool").unwrap();
        assert!(!pool.saturated);
        assert!(pool
            .unmeasured
            .as_deref()
            .unwrap()
            .contains("run the monitor as root"));
        assert!(pool.evidence.starts_with("not measured: "));
    }

    /// Two php-fpm masters, each with a pool "www": each is judged by its
    /// own workers and its own master's queue, and named by its master.
    #[test]
    fn two_masters_pools_of_one_name_are_judged_apart() {
        let mut both = second((2, 2), 9, sleeping(2), None);
        both.processes[0].pools[0].states = Some(sleeping(2));
        let mut other = both.processes[0].pools[0].clone();
        other.master = Some(77);
        other.workers = 20;
        other.busy = 3;
        other.queued = Some(0);
        // The other master's workers wait on a database: not ours.
        other.states = Some(ThreadStates {
            network: 30,
            accept: 17,
            ..Default::default()
        });
        both.processes[0].pools.push(other);
        let looks = [&both, &both];
        let limits = use_method("local", &looks);
        let full = limits
            .iter()
            .find(|l| l.resource == "php-fpm8.2's pool www (master 41)")
            .unwrap();
        assert!(full.saturated && full.utilization_pct == 100.0, "{full:?}");
        assert!(
            full.evidence
                .ends_with("sleeping on a timer 100% of the time"),
            "{full:?}"
        );
        let calm = limits
            .iter()
            .find(|l| l.resource == "php-fpm8.2's pool www (master 77)")
            .unwrap();
        assert!(!calm.saturated && calm.utilization_pct == 15.0, "{calm:?}");
        assert_eq!(calm.waiting, Some(0.0));
    }

    /// A database that refused every look is not measured, and says why.
    #[test]
    fn a_database_never_read_is_not_measured() {
        let mut refused = second((4, 1), 0, sleeping(1), None);
        refused.databases = vec![serde_json::from_value(serde_json::json!({
            "server": "PostgreSQL", "address": "127.0.0.1",
            "problem": "cannot connect: password authentication failed",
            "connections": 0, "max_connections": 0, "running": 0
        }))
        .unwrap()];
        let looks = [&refused];
        let limits = use_method("local", &looks);
        let db = limits
            .iter()
            .find(|l| l.resource.starts_with("PostgreSQL"))
            .unwrap();
        assert!(!db.saturated);
        assert_eq!(
            db.unmeasured.as_deref(),
            Some("cannot connect: password authentication failed")
        );
    }

    #[test]
    fn a_database_is_full_at_the_connections_left_to_applications() {
        let db = |connections: u64, most: u64| {
            let mut look = second((20, 5), 0, sleeping(5), None);
            look.databases = vec![serde_json::from_value(serde_json::json!({
                "server": "PostgreSQL", "address": "127.0.0.1:5432",
                "connections": connections, "most_connections": most,
                "max_connections": 10, "reserved_connections": 3, "running": 0
            }))
            .unwrap()];
            look
        };
        // Open 5 at the looks, 6 at a quick count between them: the
        // application's 6 (10, less 3 for superusers, less headroom's own).
        let seconds = [db(5, 6), db(4, 5)];
        let looks: Vec<&Resources> = seconds.iter().collect();
        let limits = use_method("local", &looks);
        let connections = limits.iter().find(|l| l.kind == "connections").unwrap();
        assert!(connections.saturated, "{connections:?}");
        assert_eq!(connections.evidence, "at most 6 of the 6 connections its max_connections 10 leaves to applications (3 are kept for superusers, 1 is headroom's own) were open (4 on average)");
        assert!((connections.utilization_pct - 75.0).abs() < 1e-9);
        // At most 4 of 6: not full.
        let seconds = [db(4, 4), db(3, 0)];
        let looks: Vec<&Resources> = seconds.iter().collect();
        let limits = use_method("local", &looks);
        let connections = limits.iter().find(|l| l.kind == "connections").unwrap();
        assert!(!connections.saturated, "{connections:?}");
    }

    #[test]
    fn a_pool_waiting_for_a_full_redis_comes_after_it() {
        let on_socket = ThreadStates {
            network: 20,
            events: 1,
            ..Default::default()
        };
        let look = |busy_pct: f64| {
            let mut r = second((20, 20), 8, on_socket, None);
            r.databases = vec![serde_json::from_value(serde_json::json!({
                "server": "Redis", "address": "127.0.0.1:6379",
                "connections": 20, "max_connections": 10000, "running": 0,
                "command_thread_pct": busy_pct, "commands_s": 190.0
            }))
            .unwrap()];
            r
        };
        let seconds = [look(99.0), look(97.0)];
        let limits = use_method("local", &seconds.iter().collect::<Vec<_>>());
        assert_eq!(
            limits[0].resource,
            "Redis's command thread (127.0.0.1:6379)"
        );
        assert!(limits[0].saturated);
        assert_eq!(limits[0].evidence, "it runs every command one at a time on one thread, and that thread was busy 98% of a core (190 commands a second)");
        let pool = limits.iter().find(|l| l.kind == "pool").unwrap();
        assert!(pool.saturated && pool.change.starts_with("Its workers were busy waiting for a reply over a socket while Redis's command thread"), "{pool:?}");
        // A Redis with a core to spare leaves the pool first, as it was.
        let seconds = [look(30.0), look(31.0)];
        let limits = use_method("local", &seconds.iter().collect::<Vec<_>>());
        assert_eq!(limits[0].kind, "pool", "{limits:?}");
        assert!(
            limits[0].change.starts_with("Raise pm.max_children"),
            "{:?}",
            limits[0]
        );
    }

    #[test]
    fn an_idle_pool_is_measured_and_not_saturated() {
        let seconds = [second((4, 1), 0, sleeping(1), Some(20.0))];
        let looks: Vec<&Resources> = seconds.iter().collect();
        let limits = use_method("local", &looks);
        assert!(limits.iter().all(|l| !l.saturated && l.change.is_empty()));
        assert_eq!(limits.len(), 3);
    }

    /// The demo's testbed counts its SQLite writer itself: 88% busy with
    /// 7.9 requests waiting on average is its limit (busy, and never
    /// without a queue), told with the testbed's own advice; 40% busy
    /// with 0.2 waiting is not.
    #[test]
    fn a_pool_that_counts_itself_is_judged_by_its_busy_share_and_mean_queue() {
        let counted = |share: f64, waiting: f64, most: u32| {
            let mut r = second((0, 0), 0, sleeping(0), None);
            r.processes.clear();
            r.counted_pools.insert(
                "the testbed".into(),
                vec![WorkerPool {
                    pool: "SQLite writer".into(),
                    workers: 1,
                    busy: 1,
                    queued: Some(most),
                    busy_share: Some(share),
                    waiting: Some(waiting),
                    advice: Some("Use PostgreSQL".into()),
                    ..WorkerPool::default()
                }],
            );
            r
        };
        let full = [counted(0.87, 7.5, 9), counted(0.89, 8.3, 10)];
        let limits = use_method("local", &full.iter().collect::<Vec<_>>());
        assert_eq!(limits.len(), 1, "{limits:?}");
        let writer = &limits[0];
        assert_eq!(
            (writer.kind.as_str(), writer.resource.as_str()),
            ("pool", "the testbed's SQLite writer")
        );
        assert!(writer.saturated);
        assert!((writer.utilization_pct - 88.0).abs() < 1e-9);
        assert_eq!(
            writer.describe(),
            "the testbed's SQLite writer: it was busy 88% of the measured time and up to 10 requests waited for it (7.9 on average). Use PostgreSQL"
        );
        let calm = [counted(0.4, 0.2, 2), counted(0.4, 0.2, 1)];
        let limits = use_method("local", &calm.iter().collect::<Vec<_>>());
        assert!(!limits[0].saturated, "{limits:?}");
        assert_eq!(limits[0].change, "");
    }

    /// A control group held to 100 disk operations a second that did 98
    /// with 8 of the server's threads in disk sleep is its limit; the pool
    /// whose workers all waited for the disk comes after it. Without a
    /// limit, a disk busy 95% with 3 requests queued is named; one busy
    /// 20% is not named at all.
    #[test]
    fn a_disk_limit_and_a_busy_disk_are_judged_by_the_threads_waiting_for_them() {
        use headroom_monitor::sampler::{DiskFigures, IoLimit};
        let on_disk = ThreadStates {
            disk: 8,
            ..Default::default()
        };
        let held = |done: f64| {
            let mut r = second((20, 20), 12, on_disk, None);
            r.processes[0].io_limit = Some(IoLimit {
                group: "/headroom-emulate-7".into(),
                iops: 100,
                done_s: done,
            });
            r
        };
        let seconds = [held(97.0), held(99.0)];
        let limits = use_method("local", &seconds.iter().collect::<Vec<_>>());
        let first = &limits[0];
        assert_eq!(first.kind, "disk_quota", "{limits:?}");
        assert!(first.saturated);
        assert_eq!(
            first.evidence,
            "it did 98 of its 100 operations a second (98%) and on average 8.0 of php-fpm8.2's threads waited for the disk"
        );
        let pool = limits.iter().find(|l| l.kind == "pool").unwrap();
        assert!(
            pool.saturated
                && pool
                    .change
                    .starts_with("Its workers were busy waiting for the disk")
        );
        assert!(pool.severity < first.severity);
        let disk = |util: f64| {
            let mut r = second((20, 2), 0, on_disk, None);
            r.disks = vec![DiskFigures {
                name: "mmcblk0".into(),
                util_pct: util,
                read_mb_s: 0.1,
                write_mb_s: 0.4,
                iops: 180.0,
                queue: Some(3.0),
                await_ms: Some(16.5),
            }];
            r
        };
        let busy = [disk(95.0), disk(95.0)];
        let limits = use_method("local", &busy.iter().collect::<Vec<_>>());
        let named = limits.iter().find(|l| l.kind == "disk").unwrap();
        assert!(named.saturated, "{named:?}");
        assert_eq!(named.resource, "the disk mmcblk0");
        assert!(named.evidence.starts_with(
            "it was busy 95% of the time at 180 operations a second, with 3.0 requests in its queue on average taking 16.5 ms each"
        ));
        let idle = [disk(20.0), disk(20.0)];
        let limits = use_method("local", &idle.iter().collect::<Vec<_>>());
        assert!(limits.iter().all(|l| l.kind != "disk"), "{limits:?}");
    }
}
