//! The watched server's own resources in the agent's `/metrics` (the USE
//! method's figures of [`crate::sampler::ProcessFigures`] and the host's
//! stalls and databases): its pools, CPU and disk limits, accept queues,
//! threads waiting for a CPU, pressure stalls and databases, in base
//! units, one family each, written only when some sample has it.

use crate::exposition::Exposition;
use crate::sampler::{ProcessFigures, Resources, WorkerPool};

/// Every family below for the sample `r`.
pub fn render(e: &mut Exposition, r: &Resources) {
    waiting_threads(e, r);
    pools(e, r);
    quotas(e, r);
    listening(e, r);
    connections(e, r);
    pressure(e, r);
    databases(e, r);
}

/// A family of `(labels, value)` samples, left out when there are none.
fn family(e: &mut Exposition, name: &str, help: &str, samples: &[(Vec<(&str, &str)>, f64)]) {
    if samples.is_empty() {
        return;
    }
    e.family(name, "gauge", help);
    for (labels, value) in samples {
        e.sample(name, labels, *value);
    }
}

fn waiting_threads(e: &mut Exposition, r: &Resources) {
    let samples: Vec<_> = r
        .processes
        .iter()
        .filter_map(|p| Some((vec![("name", p.name.as_str())], p.waiting_for_cpu?)))
        .collect();
    family(
        e,
        "headroom_process_threads_waiting_for_cpu",
        "Threads of the named processes runnable but waiting for a CPU, on average over the last second.",
        &samples,
    );
}

/// A server's own count of its connections (nginx's stub_status): in
/// use, the most its workers may hold, and those closed unserved.
fn connections(e: &mut Exposition, r: &Resources) {
    // Each master's, labelled by its pid.
    let answered: Vec<_> = r
        .processes
        .iter()
        .flat_map(|p| p.connections.iter().map(move |c| (p.name.as_str(), c)))
        .filter(|(_, c)| c.unanswered.is_none())
        .map(|(name, c)| (name, c.master.map(|m| m.to_string()).unwrap_or_default(), c))
        .collect();
    let each = |value: fn(&crate::sampler::ServerConnections) -> f64| -> Vec<_> {
        answered
            .iter()
            .map(|(name, master, c)| (vec![("name", *name), ("master", master.as_str())], value(c)))
            .collect()
    };
    family(
        e,
        "headroom_server_connections",
        "Connections a server holds (nginx's stub_status: its clients', and one to an upstream for each request in progress).",
        &each(|c| c.open() as f64),
    );
    family(
        e,
        "headroom_server_connections_max",
        "The most connections its workers may hold (nginx: workers × worker_connections).",
        &each(|c| c.most() as f64),
    );
    family(
        e,
        "headroom_server_connections_closed_unserved",
        "Connections accepted and closed unserved since the last answered look (nginx's accepts less handled).",
        &each(|c| c.dropped as f64),
    );
}

/// Each pool with its process name: the watched processes' and those the
/// monitoring process counts itself.
fn all_pools(r: &Resources) -> Vec<(&str, &WorkerPool)> {
    r.processes
        .iter()
        .flat_map(|p| p.pools.iter().map(move |pool| (p.name.as_str(), pool)))
        .chain(
            r.counted_pools
                .iter()
                .flat_map(|(owner, pools)| pools.iter().map(move |pool| (owner.as_str(), pool))),
        )
        .filter(|(_, pool)| pool.unanswered.is_none())
        .collect()
}

/// A pool's labels: its process's name and its own.
fn pool_labels<'a>((process, pool): &(&'a str, &'a WorkerPool)) -> Vec<(&'a str, &'a str)> {
    vec![("name", *process), ("pool", pool.pool.as_str())]
}

fn pools(e: &mut Exposition, r: &Resources) {
    let pools = all_pools(r);
    let workers: Vec<_> = pools
        .iter()
        .map(|p| (pool_labels(p), f64::from(p.1.workers)))
        .collect();
    family(
        e,
        "headroom_pool_workers",
        "Workers of a server's pool (php-fpm's, Apache's, the testbed's SQLite writer).",
        &workers,
    );
    let busy: Vec<_> = pools
        .iter()
        .filter(|p| p.1.workers > 0)
        .map(|p| {
            let share =
                p.1.busy_share
                    .unwrap_or(f64::from(p.1.busy) / f64::from(p.1.workers));
            (pool_labels(p), share)
        })
        .collect();
    family(
        e,
        "headroom_pool_busy_ratio",
        "Share of a pool's workers busy: at the sample, or over the last second where the pool counts itself.",
        &busy,
    );
    let queued: Vec<_> = pools
        .iter()
        .filter_map(|p| Some((pool_labels(p), f64::from(p.1.queued?))))
        .collect();
    family(
        e,
        "headroom_pool_queued_requests",
        "Requests waiting for a pool's worker (in its listen queue at the sample, or the most at once over the last second).",
        &queued,
    );
}

fn quotas(e: &mut Exposition, r: &Resources) {
    let cpu: Vec<(&ProcessFigures, &crate::sampler::CpuLimit)> = r
        .processes
        .iter()
        .filter_map(|p| Some((p, p.cpu_limit.as_ref()?)))
        .collect();
    let samples = |value: fn(&crate::sampler::CpuLimit) -> f64| -> Vec<(Vec<(&str, &str)>, f64)> {
        cpu.iter()
            .map(|(p, l)| {
                (
                    vec![("name", p.name.as_str()), ("group", l.group.as_str())],
                    value(l),
                )
            })
            .collect()
    };
    family(
        e,
        "headroom_cgroup_cpu_quota_cores",
        "The CPU quota of the named processes' control group, in CPUs.",
        &samples(|l| l.cores),
    );
    family(
        e,
        "headroom_cgroup_cpu_used_ratio",
        "Share of that quota used over the last second.",
        &samples(|l| l.used_pct / 100.0),
    );
    family(
        e,
        "headroom_cgroup_cpu_throttled_ratio",
        "Share of the last second that control group was throttled.",
        &samples(|l| l.throttled_pct / 100.0),
    );
    let io: Vec<_> = r
        .processes
        .iter()
        .filter_map(|p| Some((p, p.io_limit.as_ref()?)))
        .collect();
    let limits: Vec<_> = io
        .iter()
        .map(|(p, l)| {
            (
                vec![("name", p.name.as_str()), ("group", l.group.as_str())],
                l.iops as f64,
            )
        })
        .collect();
    family(
        e,
        "headroom_cgroup_disk_operations_limit",
        "The disk operations a second the named processes' control group may do.",
        &limits,
    );
    let done: Vec<_> = io
        .iter()
        .map(|(p, l)| {
            (
                vec![("name", p.name.as_str()), ("group", l.group.as_str())],
                l.done_s,
            )
        })
        .collect();
    family(
        e,
        "headroom_cgroup_disk_operations_per_second",
        "Disk operations that control group did a second over the last second.",
        &done,
    );
}

fn listening(e: &mut Exposition, r: &Resources) {
    let sockets: Vec<_> = r
        .processes
        .iter()
        .flat_map(|p| p.listening.iter().map(move |l| (p.name.as_str(), l)))
        .collect();
    let samples = |value: fn(&crate::listen::ListenQueue) -> u32| -> Vec<(Vec<(&str, &str)>, f64)> {
        sockets
            .iter()
            .map(|(name, l)| {
                (
                    vec![("name", *name), ("address", l.address.as_str())],
                    f64::from(value(l)),
                )
            })
            .collect()
    };
    family(
        e,
        "headroom_listen_queue_connections",
        "Connections waiting to be accepted on a listening socket of the named processes.",
        &samples(|l| l.queue),
    );
    family(
        e,
        "headroom_listen_backlog_connections",
        "That socket's backlog: the most connections its accept queue holds.",
        &samples(|l| l.backlog),
    );
}

fn pressure(e: &mut Exposition, r: &Resources) {
    let Some(p) = r.pressure else {
        return;
    };
    let samples: Vec<_> = [
        ("cpu", "some", p.cpu_some_pct),
        ("io", "some", p.io_some_pct),
        ("io", "full", p.io_full_pct),
        ("memory", "some", p.memory_some_pct),
        ("memory", "full", p.memory_full_pct),
    ]
    .into_iter()
    .filter_map(|(resource, kind, pct)| {
        Some((vec![("resource", resource), ("kind", kind)], pct? / 100.0))
    })
    .collect();
    family(
        e,
        "headroom_pressure_stall_ratio",
        "Share of the last second some (or all) tasks stalled for a resource (pressure stall information).",
        &samples,
    );
}

fn databases(e: &mut Exposition, r: &Resources) {
    let read: Vec<_> = r.databases.iter().filter(|d| d.problem.is_none()).collect();
    let samples =
        |value: fn(&crate::database::DatabaseFigures) -> f64| -> Vec<(Vec<(&str, &str)>, f64)> {
            read.iter()
                .map(|d| {
                    (
                        vec![
                            ("server", d.server.as_str()),
                            ("address", d.address.as_str()),
                        ],
                        value(d),
                    )
                })
                .collect()
        };
    family(
        e,
        "headroom_database_connections",
        "Connections open to a database.",
        &samples(|d| d.connections as f64),
    );
    family(
        e,
        "headroom_database_max_connections",
        "The most connections the database takes (max_connections; Redis's maxclients).",
        &samples(|d| d.max_connections as f64),
    );
    family(
        e,
        "headroom_database_lock_waiting_transactions",
        "Transactions waiting for a lock at the database's last look.",
        &samples(|d| d.lock_waiting)
            .into_iter()
            .filter(|(labels, _)| labels[0].1 != "Redis")
            .collect::<Vec<_>>(),
    );
    let threads: Vec<_> = read
        .iter()
        .filter_map(|d| {
            Some((
                vec![
                    ("server", d.server.as_str()),
                    ("address", d.address.as_str()),
                ],
                d.command_thread_pct? / 100.0,
            ))
        })
        .collect();
    family(
        e,
        "headroom_database_command_thread_busy_ratio",
        "The share of a core the database's one command thread was busy (Redis's main thread).",
        &threads,
    );
}
