//! Saturation the kernel counts for the whole host and for a process's
//! control group: pressure stall information (/proc/pressure: the share
//! of time some or all tasks waited for a CPU, I/O or memory), a cgroup's
//! CPU quota and the time it was throttled (cgroup v2's cpu.max and
//! cpu.stat), and TCP's listen overflows and retransmits (/proc/net).

use serde::{Deserialize, Serialize};
use std::fs;
use std::path::Path;

/// Microseconds stalled since boot (each file's `total=`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StallTotals {
    pub cpu_some: Option<u64>,
    pub io_some: Option<u64>,
    pub io_full: Option<u64>,
    pub memory_some: Option<u64>,
    pub memory_full: Option<u64>,
}

/// The share of one interval (%) in which some task, or every task
/// (full), stalled waiting for the resource.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Pressure {
    pub cpu_some_pct: Option<f64>,
    pub io_some_pct: Option<f64>,
    pub io_full_pct: Option<f64>,
    pub memory_some_pct: Option<f64>,
    pub memory_full_pct: Option<f64>,
}

/// The `total=` of a pressure file's `some` or `full` line.
fn stall_total(text: &str, line: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(line))?
        .split_whitespace()
        .find_map(|w| w.strip_prefix("total="))?
        .parse()
        .ok()
}

/// The host's stall totals; `None` when the kernel has no PSI.
pub fn stall_totals(proc_: &Path) -> Option<StallTotals> {
    let read = |name: &str| fs::read_to_string(proc_.join("pressure").join(name)).ok();
    let (cpu, io, memory) = (read("cpu"), read("io"), read("memory"));
    if cpu.is_none() && io.is_none() && memory.is_none() {
        return None;
    }
    let total = |text: &Option<String>, line| text.as_deref().and_then(|t| stall_total(t, line));
    Some(StallTotals {
        cpu_some: total(&cpu, "some"),
        io_some: total(&io, "some"),
        io_full: total(&io, "full"),
        memory_some: total(&memory, "some"),
        memory_full: total(&memory, "full"),
    })
}

/// The stalls between two looks `seconds` apart, as shares of it.
pub fn pressure(old: &StallTotals, new: &StallTotals, seconds: f64) -> Pressure {
    let share = |n: Option<u64>, o: Option<u64>| -> Option<f64> {
        let grew = n?.checked_sub(o?)?;
        Some((grew as f64 / 1e6 / seconds * 100.0).min(100.0))
    };
    Pressure {
        cpu_some_pct: share(new.cpu_some, old.cpu_some),
        io_some_pct: share(new.io_some, old.io_some),
        io_full_pct: share(new.io_full, old.io_full),
        memory_some_pct: share(new.memory_some, old.memory_some),
        memory_full_pct: share(new.memory_full, old.memory_full),
    }
}

/// A control group's CPU quota and what it used and was throttled.
#[derive(Debug, Clone, PartialEq)]
pub struct CgroupCpu {
    /// The group that sets the quota (the process's own, or a parent).
    pub path: String,
    /// The quota in CPUs (cpu.max's quota over its period).
    pub cores: f64,
    /// Microseconds its tasks were throttled (cpu.stat's throttled_usec).
    pub throttled_us: u64,
    /// Microseconds of CPU its tasks used (v2's cpu.stat usage_usec, v1's
    /// cpuacct.usage); `None` where v1's cpuacct is not mounted.
    pub usage_us: Option<u64>,
}

/// The CPU quota that holds the process `pid`: its cgroup's, or the
/// nearest parent's that sets one (cgroup v2's cpu.max; v1's
/// cpu.cfs_quota_us, with cpuacct's usage where it is mounted); `None`
/// without a quota.
pub fn cgroup_cpu(proc_: &Path, sys: &Path, pid: &str) -> Option<CgroupCpu> {
    let groups = fs::read_to_string(proc_.join(pid).join("cgroup")).ok()?;
    let root = sys.join("fs/cgroup");
    // v1: "4:cpu,cpuacct:/path" (or cpu and cpuacct apart); v2: "0::/path".
    let v1 = |controller: &str| {
        groups.lines().find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
            names
                .split(',')
                .any(|n| n == controller)
                .then(|| (names.to_string(), path.trim().to_string()))
        })
    };
    if let Some((names, own)) = v1("cpu") {
        let mount = root.join(&names);
        let mount = if mount.exists() {
            mount
        } else {
            root.join("cpu")
        };
        // cpuacct counts the same group only when the process sits in the
        // same path there (emulate's groups leave it at the root, which
        // counts the whole machine).
        let accounting = v1("cpuacct")
            .filter(|(_, path)| *path == own)
            .map(|(names, path)| {
                let mount = root.join(&names);
                let mount = if mount.exists() {
                    mount
                } else {
                    root.join("cpuacct")
                };
                (mount, path)
            });
        return nearest(&own, |path| {
            let dir = mount.join(path);
            let quota: f64 = read_number(&dir.join("cpu.cfs_quota_us"))?;
            let period: f64 = read_number(&dir.join("cpu.cfs_period_us"))?;
            let cores = (quota > 0.0 && period > 0.0).then(|| quota / period)?;
            let stat = fs::read_to_string(dir.join("cpu.stat")).unwrap_or_default();
            let usage = accounting.as_ref().and_then(|(mount, own)| {
                // cpuacct's own group for the process (usage is of that group).
                read_number::<u64>(
                    &mount
                        .join(own.trim_start_matches('/'))
                        .join("cpuacct.usage"),
                )
            });
            Some(CgroupCpu {
                path: format!("/{path}"),
                cores,
                throttled_us: stat_field(&stat, "throttled_time ") / 1000,
                usage_us: usage.map(|ns| ns / 1000),
            })
        });
    }
    let own = groups.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    nearest(own, |path| {
        let dir = root.join(path);
        let cores = quota(&fs::read_to_string(dir.join("cpu.max")).ok()?)?;
        let stat = fs::read_to_string(dir.join("cpu.stat")).unwrap_or_default();
        Some(CgroupCpu {
            path: format!("/{path}"),
            cores,
            throttled_us: stat_field(&stat, "throttled_usec "),
            usage_us: Some(stat_field(&stat, "usage_usec ")),
        })
    })
}

/// `found` at the group `own` or the nearest parent where it finds something.
pub(crate) fn nearest<T>(own: &str, found: impl Fn(&str) -> Option<T>) -> Option<T> {
    let mut path = own.trim_start_matches('/').to_string();
    loop {
        if let Some(group) = found(&path) {
            return Some(group);
        }
        if path.is_empty() {
            return None;
        }
        path = match path.rsplit_once('/') {
            Some((parent, _)) => parent.to_string(),
            None => String::new(),
        };
    }
}

fn read_number<T: std::str::FromStr>(path: &Path) -> Option<T> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn stat_field(stat: &str, name: &str) -> u64 {
    stat.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
        .unwrap_or(0)
}

/// cpu.max's quota in CPUs ("50000 100000" is half a CPU); `None` for "max".
fn quota(max: &str) -> Option<f64> {
    let mut words = max.split_whitespace();
    let quota: f64 = words.next()?.parse().ok()?;
    let period: f64 = words
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or(100_000.0);
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

/// TCP's counters since boot that say a server turned connections away
/// or the network lost segments.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TcpCounters {
    /// Connections that found an accept queue full (TcpExt ListenOverflows).
    pub listen_overflows: Option<u64>,
    /// Connections dropped at a listener, overflows included (ListenDrops).
    pub listen_drops: Option<u64>,
    /// Segments sent again (Tcp RetransSegs).
    pub retransmits: Option<u64>,
    /// Segments sent (Tcp OutSegs).
    pub segments_out: Option<u64>,
}

/// A counter of a /proc/net/netstat or /proc/net/snmp table: a header
/// line of names and a line of values, both starting with `prefix`.
fn table_value(text: &str, prefix: &str, name: &str) -> Option<u64> {
    let mut lines = text.lines().filter(|l| l.starts_with(prefix));
    while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
        let at = names.split_whitespace().position(|n| n == name);
        if let Some(at) = at {
            return values.split_whitespace().nth(at)?.parse().ok();
        }
    }
    None
}

pub fn tcp_counters(proc_: &Path) -> TcpCounters {
    let netstat = fs::read_to_string(proc_.join("net/netstat")).unwrap_or_default();
    let snmp = fs::read_to_string(proc_.join("net/snmp")).unwrap_or_default();
    TcpCounters {
        listen_overflows: table_value(&netstat, "TcpExt:", "ListenOverflows"),
        listen_drops: table_value(&netstat, "TcpExt:", "ListenDrops"),
        retransmits: table_value(&snmp, "Tcp:", "RetransSegs"),
        segments_out: table_value(&snmp, "Tcp:", "OutSegs"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_are_shares_of_the_interval() {
        let text = "some avg10=1.00 avg60=0.50 avg300=0.10 total=1000000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=250000\n";
        assert_eq!(stall_total(text, "some"), Some(1_000_000));
        assert_eq!(stall_total(text, "full"), Some(250_000));
        let old = StallTotals {
            cpu_some: Some(1_000_000),
            io_full: Some(0),
            ..Default::default()
        };
        let new = StallTotals {
            cpu_some: Some(1_400_000),
            io_full: Some(3_000_000),
            ..Default::default()
        };
        let p = pressure(&old, &new, 2.0);
        assert_eq!(p.cpu_some_pct, Some(20.0));
        assert_eq!(p.io_full_pct, Some(100.0), "at most the whole interval");
        assert_eq!(p.memory_some_pct, None);
    }

    #[test]
    fn a_quota_is_read_from_the_nearest_group_that_sets_one() {
        let root = std::env::temp_dir().join(format!("headroom-cgroup-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let (proc_, sys) = (root.join("proc"), root.join("sys"));
        fs::create_dir_all(proc_.join("42")).unwrap();
        fs::write(proc_.join("42/cgroup"), "0::/server.slice/php.service\n").unwrap();
        let group = sys.join("fs/cgroup/server.slice");
        fs::create_dir_all(group.join("php.service")).unwrap();
        fs::write(group.join("php.service/cpu.max"), "max 100000\n").unwrap();
        assert_eq!(cgroup_cpu(&proc_, &sys, "42"), None);
        fs::write(group.join("cpu.max"), "50000 100000\n").unwrap();
        fs::write(
            group.join("cpu.stat"),
            "usage_usec 900\nnr_periods 10\nnr_throttled 4\nthrottled_usec 700\n",
        )
        .unwrap();
        let cpu = cgroup_cpu(&proc_, &sys, "42").unwrap();
        assert_eq!(cpu.path, "/server.slice");
        assert_eq!(
            (cpu.cores, cpu.throttled_us, cpu.usage_us),
            (0.5, 700, Some(900))
        );
        assert_eq!(cgroup_cpu(&proc_, &sys, "43"), None);
        // cgroup v1, cpu and cpuacct mounted apart (this machine's layout).
        fs::create_dir_all(proc_.join("44")).unwrap();
        fs::write(
            proc_.join("44/cgroup"),
            "2:cpuacct:/headroom/srv\n1:cpu:/headroom/srv\n0::/\n",
        )
        .unwrap();
        let cpu_v1 = sys.join("fs/cgroup/cpu/headroom");
        fs::create_dir_all(cpu_v1.join("srv")).unwrap();
        fs::write(cpu_v1.join("srv/cpu.cfs_quota_us"), "-1\n").unwrap();
        fs::write(cpu_v1.join("srv/cpu.cfs_period_us"), "100000\n").unwrap();
        fs::write(cpu_v1.join("cpu.cfs_quota_us"), "25000\n").unwrap();
        fs::write(cpu_v1.join("cpu.cfs_period_us"), "100000\n").unwrap();
        fs::write(
            cpu_v1.join("cpu.stat"),
            "nr_periods 10\nnr_throttled 3\nthrottled_time 4000000\n",
        )
        .unwrap();
        let acct = sys.join("fs/cgroup/cpuacct/headroom/srv");
        fs::create_dir_all(&acct).unwrap();
        fs::write(acct.join("cpuacct.usage"), "7000000\n").unwrap();
        let cpu = cgroup_cpu(&proc_, &sys, "44").unwrap();
        assert_eq!(cpu.path, "/headroom");
        assert_eq!(
            (cpu.cores, cpu.throttled_us, cpu.usage_us),
            (0.25, 4000, Some(7000))
        );
        // cpuacct left at the root counts the machine, not the group.
        fs::create_dir_all(proc_.join("45")).unwrap();
        fs::write(
            proc_.join("45/cgroup"),
            "2:cpuacct:/\n1:cpu:/headroom/srv\n",
        )
        .unwrap();
        let cpu = cgroup_cpu(&proc_, &sys, "45").unwrap();
        assert_eq!((cpu.cores, cpu.usage_us), (0.25, None));
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn tcp_counters_are_read_by_name() {
        let netstat = "TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 0 12 15\nIpExt: InNoRoutes\nIpExt: 3\n";
        assert_eq!(table_value(netstat, "TcpExt:", "ListenOverflows"), Some(12));
        assert_eq!(table_value(netstat, "TcpExt:", "ListenDrops"), Some(15));
        assert_eq!(table_value(netstat, "IpExt:", "InNoRoutes"), Some(3));
        assert_eq!(table_value(netstat, "TcpExt:", "Missing"), None);
        let real = tcp_counters(Path::new("/proc"));
        assert!(real.listen_overflows.is_some() && real.retransmits.is_some());
    }
}
