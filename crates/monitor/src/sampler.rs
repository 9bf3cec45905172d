//! Per-second figures from two snapshots of /proc and /sys.

use crate::database::{
    database_figures, local_mariadb, DatabaseFigures, DatabaseKind, DatabaseReader, DatabaseSource,
};
use crate::listen::ListenQueue;
use crate::pressure::{pressure, Pressure};
use crate::procfs::{clock_ticks, CpuTimes, Roots, Snapshot};
use crate::threads::ThreadStates;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Default)]
pub struct SamplerConfig {
    pub roots: Roots,
    /// Process names whose CPU and memory are summed (`--process nginx,php-fpm`).
    pub processes: Vec<String>,
    /// Link capacity in Mbit/s for network % when sysfs does not know it
    /// (Wi-Fi), e.g. the 57 Mbit/s iperf3 measured on a Pi.
    pub link_capacity_mbit: Option<f64>,
    /// Databases whose own counters to read (from a credentials file); a
    /// watched MariaDB is found by itself besides.
    pub databases: Vec<DatabaseSource>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskFigures {
    pub name: String,
    /// Share of the second the device was busy (iostat's %util), at most 100.
    pub util_pct: f64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    pub iops: f64,
    /// Requests in flight or queued at the device, on average (iostat's
    /// aqu-sz).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<f64>,
    /// The mean time of a read or write, queue included (iostat's await),
    /// when there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub await_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetFigures {
    pub name: String,
    pub rx_mbit_s: f64,
    pub tx_mbit_s: f64,
    /// The busier direction as a share of the link capacity, when known
    /// and not exceeded (see [`link_share`]).
    pub link_pct: Option<f64>,
    /// Whether the link was up at the sample, where the kernel says.
    #[serde(default)]
    pub up: Option<bool>,
}

/// A measured throughput may exceed the stated link capacity by this share
/// (a capacity rounded down, counters read a little apart) before the
/// capacity is shown to be wrong.
pub const LINK_TOLERANCE: f64 = 0.05;

/// `mbit_s` as a % of a link of `capacity` Mbit/s; `None` when the
/// throughput is above the capacity beyond [`LINK_TOLERANCE`]: then the
/// capacity is wrong (a --link-capacity meant for another interface, a
/// speed sysfs misreports) or the traffic did not cross that link, and no
/// share above 100% is reported as a figure.
pub fn link_share(mbit_s: f64, capacity: f64) -> Option<f64> {
    (capacity > 0.0 && mbit_s <= capacity * (1.0 + LINK_TOLERANCE))
        .then(|| mbit_s / capacity * 100.0)
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessFigures {
    pub name: String,
    /// Of one core (200% = two cores busy).
    pub cpu_pct: f64,
    /// All the name's processes together (shared pages counted in each,
    /// as `ps` does).
    pub rss_mb: f64,
    /// How many processes of the name ran (0 from an older agent).
    #[serde(default)]
    pub count: u32,
    /// Threads of the name waiting runnable for a CPU, on average over
    /// the interval (schedstat's run delay; 0.5 = one thread waited half
    /// the time). `None` from an older agent or a kernel without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_for_cpu: Option<f64>,
    /// Major page faults a second (reads from disk into memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub major_faults_s: Option<f64>,
    /// What the name's threads waited for at the sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<ThreadStates>,
    /// Its worker pools (php-fpm's): workers and how many were busy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<WorkerPool>,
    /// The CPU quota of its control group and how much of it was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_limit: Option<CpuLimit>,
    /// Its listening sockets and their accept queues at the sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listening: Vec<ListenQueue>,
    /// The disk operations a second its control group may do, and did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_limit: Option<IoLimit>,
    /// Its own count of its connections (nginx's stub_status): each
    /// master's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<ServerConnections>,
}

/// A server's own count of its connections at a look, against how many
/// its workers may hold (nginx: workers × worker_connections, which
/// count the connections to its upstreams too).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerConnections {
    /// The master process whose connections these are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master: Option<u32>,
    /// Open client connections, idle keep-alive ones included (the
    /// look's own not counted).
    pub clients: u64,
    /// Requests in progress (the look's own not counted): a proxied or
    /// FastCGI request holds one connection to its upstream too.
    pub in_progress: u64,
    pub workers: u32,
    pub worker_connections: u64,
    /// Whether worker_connections came from its configuration (else
    /// nginx's default).
    pub configured: bool,
    /// Connections accepted and closed unserved (accepts less handled:
    /// worker_connections reached) since the last answered look.
    pub dropped: u64,
    /// Why there is no count this look.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unanswered: Option<String>,
}

impl ServerConnections {
    /// The connections in use: the clients', and one to an upstream for
    /// each request in progress.
    pub fn open(&self) -> u64 {
        self.clients + self.in_progress
    }

    /// How many its workers may hold.
    pub fn most(&self) -> u64 {
        u64::from(self.workers.max(1)) * self.worker_connections
    }
}

/// A control group's IOPS limit over one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IoLimit {
    /// The group that sets it.
    pub group: String,
    /// The limit, operations a second (the least of reads' and writes').
    pub iops: u64,
    /// Operations a second its tasks did on the limited devices.
    pub done_s: f64,
}

/// A pool of workers at one look: php-fpm's pool `pool` had `workers`
/// processes, of which `busy` were serving (not waiting for a connection).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerPool {
    pub pool: String,
    pub workers: u32,
    pub busy: u32,
    /// Why the pool's own count is missing this look (Apache's status
    /// page did not answer: no worker was free to serve it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unanswered: Option<String>,
    /// The pid of the master whose pool it is (php-fpm's), which tells
    /// apart two masters' pools of one name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master: Option<u32>,
    /// Requests waiting in its master's listening sockets at the look.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued: Option<u32>,
    /// What its workers' threads waited for at the look.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub states: Option<ThreadStates>,
    /// A pool that counts itself ([`crate::gauges`]): the share of the
    /// interval its workers were held (0–1), exact rather than a look.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_share: Option<f64>,
    /// Such a pool's work waiting for a worker, on average over the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<f64>,
    /// What to change when it is full, in its owner's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advice: Option<String>,
}

/// A control group's CPU quota over one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuLimit {
    /// The group that sets it.
    pub group: String,
    /// The quota, in CPUs.
    pub cores: f64,
    /// The group's CPU use as a share of its quota.
    pub used_pct: f64,
    /// The share of the interval its tasks were throttled.
    pub throttled_pct: f64,
}

/// A host's resources over one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    /// Busy share of all cores (iowait counts as idle, as in top).
    pub cpu_pct: f64,
    pub user_pct: f64,
    pub system_pct: f64,
    pub iowait_pct: f64,
    pub steal_pct: f64,
    pub per_core_pct: Vec<f64>,
    pub load: [f64; 3],
    /// (total - available) / total, as `free` computes it.
    pub memory_used_pct: f64,
    pub swap_used_mb: f64,
    pub disks: Vec<DiskFigures>,
    pub networks: Vec<NetFigures>,
    pub temperatures_c: BTreeMap<String, f64>,
    pub frequencies_mhz: Vec<f64>,
    pub processes: Vec<ProcessFigures>,
    /// Raspberry Pi throttling flags (vcgencmd), where available.
    #[serde(default)]
    pub throttling: Option<crate::fingerprint::Throttling>,
    /// Memory a new process could take without swapping (MemAvailable).
    #[serde(default)]
    pub memory_available_mb: Option<f64>,
    /// Interrupts a second, all kinds and cores.
    #[serde(default)]
    pub interrupts_per_s: Option<f64>,
    /// Context switches a second.
    #[serde(default)]
    pub context_switches_per_s: Option<f64>,
    /// Interrupts a second by kind (those that happened), as in
    /// /proc/interrupts: timer, rescheduling, each device's.
    #[serde(default)]
    pub interrupts_by_kind: BTreeMap<String, f64>,
    /// The share of the interval tasks stalled for a CPU, I/O or memory
    /// (pressure stall information), where the kernel counts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<Pressure>,
    /// Connections a second that found a listener's accept queue full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen_overflows_s: Option<f64>,
    /// TCP segments sent again a second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retransmits_s: Option<f64>,
    /// The databases' own figures (see [`crate::database`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub databases: Vec<DatabaseFigures>,
    /// Pools that programs of the monitoring process count themselves
    /// (the demo's testbed: [`crate::gauges`]), by their owner's name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counted_pools: BTreeMap<String, Vec<WorkerPool>>,
}

/// Samples one host; the first call only primes the counters.
pub struct Sampler {
    config: SamplerConfig,
    previous: Option<(Snapshot, Instant)>,
    /// Reads the databases, once the first look found them.
    databases: Option<DatabaseReader>,
    /// A Raspberry Pi: read its throttling flags every sample.
    raspberry_pi: bool,
}

/// The growth of a counter, allowing for a 32-bit counter that wrapped
/// (32-bit kernels, e.g. a Pi's); a counter that went back otherwise was reset.
pub fn counter_delta(new: u64, old: u64) -> u64 {
    if new >= old {
        new - old
    } else if old <= u32::MAX as u64 {
        new + (u32::MAX as u64 + 1 - old)
    } else {
        0
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

struct CpuShares {
    busy: f64,
    user: f64,
    system: f64,
    iowait: f64,
    steal: f64,
}

/// Each disk's busy share, MB/s read and written and operations a second
/// between two snapshots `seconds` apart.
fn disk_figures(old: &Snapshot, new: &Snapshot, seconds: f64) -> Vec<DiskFigures> {
    new.disks
        .iter()
        .filter_map(|(name, n)| {
            let o = old.disks.get(name)?;
            let busy_ms = counter_delta(n.busy_ms, o.busy_ms) as f64;
            Some(DiskFigures {
                name: name.clone(),
                util_pct: (busy_ms / (seconds * 1000.0) * 100.0).min(100.0),
                read_mb_s: counter_delta(n.sectors_read, o.sectors_read) as f64 * 512.0
                    / 1e6
                    / seconds,
                write_mb_s: counter_delta(n.sectors_written, o.sectors_written) as f64 * 512.0
                    / 1e6
                    / seconds,
                iops: counter_delta(n.ios, o.ios) as f64 / seconds,
                queue: Some(
                    counter_delta(n.weighted_ms, o.weighted_ms) as f64 / (seconds * 1000.0),
                ),
                await_ms: (n.ios > o.ios).then(|| {
                    counter_delta(n.io_ms, o.io_ms) as f64 / counter_delta(n.ios, o.ios) as f64
                }),
            })
        })
        .collect()
}

/// Each watched process's CPU share, memory and count.
fn process_figures(old: &Snapshot, new: &Snapshot, seconds: f64) -> Vec<ProcessFigures> {
    let ticks = clock_ticks();
    new.processes
        .iter()
        .map(|(name, n)| {
            let used = old
                .processes
                .get(name)
                .map_or(0, |o| n.cpu_ticks.saturating_sub(o.cpu_ticks));
            let o = old.processes.get(name);
            let grew = |get: fn(&crate::procfs::ProcessCounters) -> u64| {
                o.map(|o| get(n).saturating_sub(get(o)) as f64 / seconds)
            };
            ProcessFigures {
                name: name.clone(),
                cpu_pct: used as f64 / ticks / seconds * 100.0,
                rss_mb: n.rss_bytes as f64 / 1e6,
                count: n.count.min(u32::MAX as u64) as u32,
                waiting_for_cpu: grew(|c| c.threads.run_delay_ns).map(|ns| ns / 1e9),
                major_faults_s: grew(|c| c.threads.major_faults),
                threads: Some(n.threads.states),
                pools: n
                    .pools
                    .iter()
                    .map(|((master, pool), &(workers, busy, unreadable))| WorkerPool {
                        pool: pool.clone(),
                        workers,
                        busy,
                        unanswered: (workers == 0 && unreadable > 0).then(|| {
                            "what its workers wait for is not readable here (wchan: run the monitor as root)".to_string()
                        }),
                        master: master.parse().ok(),
                        queued: n.queued_by_master.get(master).copied(),
                        states: n.pool_states.get(&(master.clone(), pool.clone())).copied(),
                        ..WorkerPool::default()
                    })
                    .chain(n.apache.as_ref().map(|status| match status {
                        Ok(w) => WorkerPool {
                            pool: "workers".into(),
                            workers: w.busy + w.idle,
                            busy: w.busy,
                            ..WorkerPool::default()
                        },
                        Err(why) => WorkerPool {
                            pool: "workers".into(),
                            workers: 0,
                            busy: 0,
                            unanswered: Some(why.clone()),
                            ..WorkerPool::default()
                        },
                    }))
                    .collect(),
                cpu_limit: n.cgroup.as_ref().map(|g| {
                    let before = o
                        .and_then(|o| o.cgroup.as_ref())
                        .filter(|b| b.path == g.path);
                    let micros = |get: fn(&crate::pressure::CgroupCpu) -> u64| {
                        before.map_or(0, |b| get(g).saturating_sub(get(b))) as f64
                    };
                    // Without the group's own usage (cgroup v1 without
                    // cpuacct), the name's processes' CPU stands for it.
                    let used_cores = match (g.usage_us, before.and_then(|b| b.usage_us)) {
                        (Some(now), Some(then)) => now.saturating_sub(then) as f64 / 1e6 / seconds,
                        _ => used as f64 / ticks / seconds,
                    };
                    CpuLimit {
                        group: g.path.clone(),
                        cores: g.cores,
                        used_pct: used_cores / g.cores * 100.0,
                        throttled_pct: (micros(|c| c.throttled_us) / 1e6 / seconds * 100.0)
                            .min(100.0),
                    }
                }),
                listening: n.listening.clone(),
                io_limit: n.io_group.as_ref().map(|g| {
                    let before = o
                        .and_then(|o| o.io_group.as_ref())
                        .filter(|b| b.path == g.path);
                    IoLimit {
                        group: g.path.clone(),
                        iops: g.iops,
                        done_s: before.map_or(0.0, |b| g.ios.saturating_sub(b.ios) as f64 / seconds),
                    }
                }),
                connections: n
                    .nginx
                    .iter()
                    .map(|(master, look)| {
                        let before = o
                            .and_then(|o| o.nginx.get(master))
                            .and_then(|b| b.last_answered.as_ref());
                        server_connections(master, look, before)
                    })
                .collect(),
            }
        })
        .collect()
}

/// One nginx master's connections at a look; those it closed unserved
/// since `before`, its last answered page.
fn server_connections(
    master: &str,
    look: &crate::stub_status::NginxLook,
    before: Option<&crate::stub_status::StubStatus>,
) -> ServerConnections {
    let mut connections = ServerConnections {
        master: master.parse().ok(),
        workers: look.workers,
        worker_connections: look.worker_connections,
        configured: look.configured,
        ..ServerConnections::default()
    };
    match &look.status {
        Ok(now) => {
            connections.clients = now.active.saturating_sub(1);
            connections.in_progress = now.writing.saturating_sub(1);
            let unserved = |s: &crate::stub_status::StubStatus| s.accepts.saturating_sub(s.handled);
            // Since the last answered look, which may be seconds back when
            // nginx was full.
            connections.dropped = before.map_or(0, |b| unserved(now).saturating_sub(unserved(b)));
        }
        Err(why) => connections.unanswered = Some(why.clone()),
    }
    connections
}

/// Each watched nginx's latest answered stub_status page: this look's,
/// or the one before's when this look was not answered.
fn carry_answered(old: Option<&Snapshot>, new: &mut Snapshot) {
    for (name, counters) in &mut new.processes {
        for (master, look) in &mut counters.nginx {
            look.last_answered = look.status.as_ref().ok().copied().or_else(|| {
                old.and_then(|o| o.processes.get(name))
                    .and_then(|c| c.nginx.get(master))
                    .and_then(|l| l.last_answered)
            });
        }
    }
}

/// Interrupts a second by kind, of the kinds that grew.
fn interrupt_rates(old: &Snapshot, new: &Snapshot, seconds: f64) -> BTreeMap<String, f64> {
    new.interrupt_kinds
        .iter()
        .filter_map(|(kind, &n)| {
            let o = *old.interrupt_kinds.get(kind)?;
            // A row that went back (a device re-registered) is not a rate.
            let grew = n.checked_sub(o)?;
            (grew > 0).then(|| (kind.clone(), grew as f64 / seconds))
        })
        .collect()
}

fn cpu_shares(new: &CpuTimes, old: &CpuTimes) -> CpuShares {
    let d = |n: u64, o: u64| counter_delta(n, o);
    let total = d(new.total(), old.total());
    let idle = d(new.idle, old.idle) + d(new.iowait, old.iowait);
    CpuShares {
        busy: pct(total.saturating_sub(idle), total),
        user: pct(d(new.user, old.user) + d(new.nice, old.nice), total),
        system: pct(
            d(new.system, old.system) + d(new.irq, old.irq) + d(new.softirq, old.softirq),
            total,
        ),
        iowait: pct(d(new.iowait, old.iowait), total),
        steal: pct(d(new.steal, old.steal), total),
    }
}

impl Sampler {
    pub fn new(config: SamplerConfig) -> Sampler {
        let model = std::fs::read_to_string(config.roots.proc.join("device-tree/model"))
            .unwrap_or_default();
        Sampler {
            raspberry_pi: model.contains("Raspberry Pi"),
            config,
            previous: None,
            databases: None,
        }
    }

    /// Reads the host now; `None` on the first call.
    pub fn sample(&mut self) -> Option<Resources> {
        let mut snapshot = self.config.roots.snapshot(&self.config.processes);
        snapshot.gauges = crate::gauges::read_all();
        carry_answered(self.previous.as_ref().map(|(old, _)| old), &mut snapshot);
        if self.previous.is_none() {
            self.start_databases(&snapshot);
        }
        if let Some(reader) = &self.databases {
            snapshot.databases = reader.latest();
        }
        let now = Instant::now();
        let mut result = self
            .previous
            .as_ref()
            .map(|(old, at)| self.figures(old, &snapshot, now - *at));
        if let (Some(r), true) = (&mut result, self.raspberry_pi) {
            r.throttling = crate::fingerprint::Throttling::read();
        }
        self.previous = Some((snapshot, now));
        result
    }

    /// Starts reading the databases: those of the credentials, and a
    /// watched MariaDB (or MySQL) through its unix socket, unless the
    /// credentials name a MariaDB already.
    fn start_databases(&mut self, first: &Snapshot) {
        let mut sources = self.config.databases.clone();
        if !sources.iter().any(|s| s.kind == DatabaseKind::MariaDb) {
            let socket = first
                .processes
                .iter()
                .filter(|(name, _)| name.starts_with("mariadb") || name.starts_with("mysqld"))
                .flat_map(|(_, p)| &p.listening)
                .find(|l| l.address.starts_with('/'));
            if let Some(socket) = socket {
                sources.push(local_mariadb(&socket.address));
            }
        }
        // Each watched Redis (one a port, though it listens on IPv4 and
        // IPv6) that the credentials do not name, read without a password.
        let mut ports: Vec<u16> = sources
            .iter()
            .filter(|s| s.kind == DatabaseKind::Redis)
            .filter_map(|s| s.address.rsplit_once(':')?.1.parse().ok())
            .collect();
        let mut addresses: Vec<std::net::SocketAddr> = first
            .processes
            .iter()
            .filter(|(name, _)| name.starts_with("redis") || name.starts_with("valkey"))
            .flat_map(|(_, p)| &p.listening)
            .filter_map(|l| crate::server_status::local_address(&l.address))
            .collect();
        addresses.sort_by_key(|a| (a.port(), a.is_ipv6()));
        for address in addresses {
            if ports.contains(&address.port()) {
                continue;
            }
            ports.push(address.port());
            sources.extend(crate::database::source(&format!("redis://{address}")));
        }
        if !sources.is_empty() {
            self.databases = Some(DatabaseReader::start(sources));
        }
    }

    /// Figures between two snapshots taken `elapsed` apart.
    pub fn figures(&self, old: &Snapshot, new: &Snapshot, elapsed: Duration) -> Resources {
        let seconds = elapsed.as_secs_f64().max(1e-3);
        // intr and ctxt are 64-bit counters on every kernel: one that went
        // back was reset, and gives no rate.
        let rate = |new: Option<u64>, old: Option<u64>| -> Option<f64> {
            Some(new?.checked_sub(old?)? as f64 / seconds)
        };
        let total = match (new.cpus.first(), old.cpus.first()) {
            (Some(n), Some(o)) => cpu_shares(n, o),
            _ => CpuShares {
                busy: 0.0,
                user: 0.0,
                system: 0.0,
                iowait: 0.0,
                steal: 0.0,
            },
        };
        let per_core_pct = new
            .cpus
            .iter()
            .zip(&old.cpus)
            .skip(1)
            .map(|(n, o)| cpu_shares(n, o).busy)
            .collect();
        let disks = disk_figures(old, new, seconds);
        let networks = self.network_figures(old, new, seconds);
        let processes = process_figures(old, new, seconds);
        Resources {
            cpu_pct: total.busy,
            user_pct: total.user,
            system_pct: total.system,
            iowait_pct: total.iowait,
            steal_pct: total.steal,
            per_core_pct,
            load: new.load,
            memory_used_pct: pct(
                new.mem_total_kb.saturating_sub(new.mem_available_kb),
                new.mem_total_kb,
            ),
            swap_used_mb: new.swap_total_kb.saturating_sub(new.swap_free_kb) as f64 / 1000.0,
            disks,
            networks,
            temperatures_c: new.temperatures.clone(),
            frequencies_mhz: new.frequencies_mhz.clone(),
            processes,
            throttling: None,
            memory_available_mb: (new.mem_total_kb > 0)
                .then(|| new.mem_available_kb as f64 / 1000.0),
            interrupts_per_s: rate(new.interrupts, old.interrupts),
            context_switches_per_s: rate(new.context_switches, old.context_switches),
            interrupts_by_kind: interrupt_rates(old, new, seconds),
            pressure: match (&old.stalls, &new.stalls) {
                (Some(o), Some(n)) => Some(pressure(o, n, seconds)),
                _ => None,
            },
            databases: database_figures(&old.databases, &new.databases, seconds),
            counted_pools: gauge_figures(old, new, seconds),
            listen_overflows_s: rate(new.tcp.listen_overflows, old.tcp.listen_overflows),
            retransmits_s: rate(new.tcp.retransmits, old.tcp.retransmits),
        }
    }

    /// Each network interface's Mbit/s received and sent, against its
    /// link's capacity (the configured one, else the link's speed).
    fn network_figures(&self, old: &Snapshot, new: &Snapshot, seconds: f64) -> Vec<NetFigures> {
        new.nets
            .iter()
            .filter_map(|(name, n)| {
                let o = old.nets.get(name)?;
                let rx = counter_delta(n.rx_bytes, o.rx_bytes) as f64 * 8.0 / 1e6 / seconds;
                let tx = counter_delta(n.tx_bytes, o.tx_bytes) as f64 * 8.0 / 1e6 / seconds;
                let capacity = self
                    .config
                    .link_capacity_mbit
                    .or_else(|| new.link_mbit.get(name).copied());
                Some(NetFigures {
                    name: name.clone(),
                    rx_mbit_s: rx,
                    tx_mbit_s: tx,
                    link_pct: capacity.and_then(|c| link_share(rx.max(tx), c)),
                    up: new.link_up.get(name).copied(),
                })
            })
            .collect()
    }
}

/// The pools this process counts itself ([`crate::gauges`]) by owner,
/// between two readings `seconds` apart: each pool's exact busy share,
/// its mean queue, and the most that waited at once.
fn gauge_figures(
    old: &Snapshot,
    new: &Snapshot,
    seconds: f64,
) -> BTreeMap<String, Vec<WorkerPool>> {
    let mut owners: BTreeMap<String, Vec<WorkerPool>> = BTreeMap::new();
    for reading in &new.gauges {
        let Some(before) = old.gauges.iter().find(|o| o.id == reading.id) else {
            continue;
        };
        let micros = seconds * 1e6;
        let held = reading.held_us.saturating_sub(before.held_us) as f64 / micros;
        let waited = reading.waited_us.saturating_sub(before.waited_us) as f64 / micros;
        let workers = reading.workers.max(1);
        let busy_share = (held / f64::from(workers)).min(1.0);
        owners
            .entry(reading.owner.clone())
            .or_default()
            .push(WorkerPool {
                pool: reading.pool.clone(),
                workers,
                busy: held.round() as u32,
                queued: Some(reading.most_waiting),
                busy_share: Some(busy_share),
                waiting: Some(waited),
                advice: Some(reading.advice.clone()).filter(|a| !a.is_empty()),
                ..WorkerPool::default()
            });
    }
    owners
}
