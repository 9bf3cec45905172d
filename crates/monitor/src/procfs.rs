//! Raw counters from /proc and /sys, parsed without interpretation.

use crate::listen::{listening, socket_inodes, ListenQueue};
use crate::pressure::{
    cgroup_cpu, stall_totals, tcp_counters, CgroupCpu, StallTotals, TcpCounters,
};
use crate::threads::{pool_of, read_threads, ProcessThreads};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Where /proc and /sys are (the real ones, or a fixture tree).
#[derive(Debug, Clone)]
pub struct Roots {
    pub proc: PathBuf,
    pub sys: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Roots {
            proc: "/proc".into(),
            sys: "/sys".into(),
        }
    }
}

/// Jiffies of one CPU line of /proc/stat.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiskCounters {
    pub ios: u64,
    pub sectors_read: u64,
    pub sectors_written: u64,
    /// Milliseconds the device had I/O in flight (io_ticks).
    pub busy_ms: u64,
    /// Milliseconds its reads and writes took, summed over each.
    pub io_ms: u64,
    /// Milliseconds of I/O in flight, weighted by how many were
    /// (time_in_queue: its growth over an interval is the mean queue).
    pub weighted_ms: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NetCounters {
    pub rx_bytes: u64,
    pub tx_bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcessCounters {
    /// utime + stime, in clock ticks.
    pub cpu_ticks: u64,
    pub rss_bytes: u64,
    /// How many processes of the name there were.
    pub count: u64,
    /// What their threads waited for at this look, and the time they
    /// waited runnable for a CPU (see [`crate::threads`]).
    pub threads: ProcessThreads,
    /// Each pool's workers, how many of them were busy (not waiting in
    /// accept), and how many could not be told (their wchan unreadable),
    /// by their master's pid and the pool's name: php-fpm's pools (two
    /// masters may each have a pool "www").
    pub pools: BTreeMap<(String, String), (u32, u32, u32)>,
    /// What each pool's workers' threads waited for, by the same key.
    pub pool_states: BTreeMap<(String, String), crate::threads::ThreadStates>,
    /// Requests waiting in each master's listening sockets, by its pid.
    pub queued_by_master: BTreeMap<String, u32>,
    /// The CPU quota of their control group, where one is set.
    pub cgroup: Option<CgroupCpu>,
    /// The IOPS limit of its first master's control group, where one holds it.
    pub io_group: Option<crate::cgroup_io::CgroupIo>,
    /// The listening sockets they hold and each one's accept queue.
    pub listening: Vec<ListenQueue>,
    /// Apache's own count of its workers (mod_status), or why there is none.
    pub apache: Option<Result<crate::server_status::ApacheWorkers, String>>,
    /// nginx's own count of its connections (stub_status), its workers
    /// and their worker_connections: each master's, by its pid.
    pub nginx: BTreeMap<String, crate::stub_status::NginxLook>,
}

#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Index 0 is the total ("cpu" line), then cpu0, cpu1, ...
    pub cpus: Vec<CpuTimes>,
    pub mem_total_kb: u64,
    pub mem_available_kb: u64,
    pub swap_total_kb: u64,
    pub swap_free_kb: u64,
    pub load: [f64; 3],
    pub disks: BTreeMap<String, DiskCounters>,
    pub nets: BTreeMap<String, NetCounters>,
    /// Link speed in Mbit/s by interface, where /sys says.
    pub link_mbit: BTreeMap<String, f64>,
    /// Temperatures in °C by label.
    pub temperatures: BTreeMap<String, f64>,
    /// Current frequency in MHz per core.
    pub frequencies_mhz: Vec<f64>,
    /// Counters summed over all processes of each watched name.
    pub processes: BTreeMap<String, ProcessCounters>,
    /// Interrupts served since boot, all kinds and cores (/proc/stat's `intr`).
    pub interrupts: Option<u64>,
    /// Context switches since boot (/proc/stat's `ctxt`).
    pub context_switches: Option<u64>,
    /// Interrupts since boot by kind, over all cores (/proc/interrupts): a
    /// device's by its name ("virtio1-req.0", "mmc0"), the kernel's by
    /// what it calls them ("Local timer interrupts", "Rescheduling
    /// interrupts").
    pub interrupt_kinds: BTreeMap<String, u64>,
    /// Whether each interface's link is up (/sys/class/net/X/operstate),
    /// where the kernel knows.
    pub link_up: BTreeMap<String, bool>,
    /// Time stalled for a CPU, I/O and memory since boot (PSI), where the
    /// kernel counts it.
    pub stalls: Option<StallTotals>,
    /// TCP's listen overflows and retransmits since boot.
    pub tcp: TcpCounters,
    /// The databases' latest counters (see [`crate::database`]).
    pub databases: crate::database::DatabaseLooks,
    /// The pools this process counts itself (see [`crate::gauges`]).
    pub gauges: Vec<crate::gauges::GaugeReading>,
}

fn read(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok()
}

fn numbers(text: &str) -> Vec<u64> {
    text.split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// The interrupts, context switches and CPU times of /proc/stat (`stat`).
fn stat_counters(stat: &str, s: &mut Snapshot) {
    for line in stat.lines() {
        let first = |key: &str| {
            line.strip_prefix(key)
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|n| n.parse::<u64>().ok())
        };
        if let Some(n) = first("intr ") {
            s.interrupts = Some(n);
        } else if let Some(n) = first("ctxt ") {
            s.context_switches = Some(n);
        }
    }
    for line in stat.lines().filter(|l| l.starts_with("cpu")) {
        let n = numbers(line.split_once(' ').map_or("", |(_, rest)| rest));
        if n.len() >= 8 {
            s.cpus.push(CpuTimes {
                user: n[0],
                nice: n[1],
                system: n[2],
                idle: n[3],
                iowait: n[4],
                irq: n[5],
                softirq: n[6],
                steal: n[7],
            });
        }
    }
}

/// The memory and swap of /proc/meminfo (`meminfo`), in kB.
fn memory(meminfo: &str, s: &mut Snapshot) {
    for line in meminfo.lines() {
        let (key, rest) = line.split_once(':').unwrap_or((line, ""));
        let value = numbers(rest).first().copied().unwrap_or(0);
        match key {
            "MemTotal" => s.mem_total_kb = value,
            "MemAvailable" => s.mem_available_kb = value,
            "SwapTotal" => s.swap_total_kb = value,
            "SwapFree" => s.swap_free_kb = value,
            _ => {}
        }
    }
}

impl Roots {
    /// Reads everything; missing files leave their part empty.
    pub fn snapshot(&self, watched: &[String]) -> Snapshot {
        let mut s = Snapshot::default();
        if let Some(stat) = read(&self.proc.join("stat")) {
            stat_counters(&stat, &mut s);
        }
        if let Some(meminfo) = read(&self.proc.join("meminfo")) {
            memory(&meminfo, &mut s);
        }
        if let Some(load) = read(&self.proc.join("loadavg")) {
            for (slot, value) in s.load.iter_mut().zip(load.split_whitespace()) {
                *slot = value.parse().unwrap_or(0.0);
            }
        }
        if let Some(disks) = read(&self.proc.join("diskstats")) {
            self.disks(&disks, &mut s);
        }
        if let Some(dev) = read(&self.proc.join("net/dev")) {
            self.networks(&dev, &mut s);
        }
        if let Some(table) = read(&self.proc.join("interrupts")) {
            s.interrupt_kinds = interrupt_kinds(&table);
        }
        self.temperatures(&mut s);
        self.frequencies(&mut s);
        s.stalls = stall_totals(&self.proc);
        s.tcp = tcp_counters(&self.proc);
        if !watched.is_empty() {
            self.processes(watched, &mut s);
        }
        s
    }

    /// The whole disks' counters from /proc/diskstats (`disks`): no
    /// partition, loop or ram disk.
    fn disks(&self, disks: &str, s: &mut Snapshot) {
        for line in disks.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 14 {
                continue;
            }
            let name = fields[2];
            // Whole devices only (partitions have no /sys/block entry); no loop or ram disks.
            if name.starts_with("loop")
                || name.starts_with("ram")
                || !self.sys.join("block").join(name).exists()
            {
                continue;
            }
            let n = |i: usize| fields[i].parse::<u64>().unwrap_or(0);
            s.disks.insert(
                name.to_string(),
                DiskCounters {
                    ios: n(3) + n(7),
                    sectors_read: n(5),
                    sectors_written: n(9),
                    busy_ms: n(12),
                    io_ms: n(6) + n(10),
                    weighted_ms: n(13),
                },
            );
        }
    }

    /// The network interfaces' bytes from /proc/net/dev (`dev`), with
    /// their links' state and speed; not the loopback.
    fn networks(&self, dev: &str, s: &mut Snapshot) {
        for line in dev.lines().skip(2) {
            let Some((name, rest)) = line.split_once(':') else {
                continue;
            };
            let name = name.trim();
            let n = numbers(rest);
            if name == "lo" || n.len() < 9 {
                continue;
            }
            s.nets.insert(
                name.to_string(),
                NetCounters {
                    rx_bytes: n[0],
                    tx_bytes: n[8],
                },
            );
            self.link(name, s);
        }
    }

    /// Whether the interface `name`'s link is up, if it is switched on,
    /// and its speed, if it has one.
    fn link(&self, name: &str, s: &mut Snapshot) {
        let class = self.sys.join("class/net").join(name);
        // Only interfaces switched on (IFF_UP): one switched off
        // (an unused ifb, a spare port) has no link to lose.
        let switched_on = read(&class.join("flags"))
            .and_then(|f| u64::from_str_radix(f.trim().trim_start_matches("0x"), 16).ok())
            .is_some_and(|flags| flags & 1 == 1);
        if switched_on {
            match read(&class.join("operstate")).as_deref().map(str::trim) {
                Some("up") => {
                    s.link_up.insert(name.to_string(), true);
                }
                Some("down" | "lowerlayerdown") => {
                    s.link_up.insert(name.to_string(), false);
                }
                _ => {}
            }
        }
        if let Some(speed) = read(&self.sys.join("class/net").join(name).join("speed"))
            .and_then(|t| t.trim().parse::<f64>().ok())
        {
            if speed > 0.0 {
                s.link_mbit.insert(name.to_string(), speed);
            }
        }
    }

    /// Each CPU's current frequency, in order, until the first without one.
    fn frequencies(&self, s: &mut Snapshot) {
        for cpu in 0.. {
            let path = self.sys.join(format!(
                "devices/system/cpu/cpu{cpu}/cpufreq/scaling_cur_freq"
            ));
            match read(&path).and_then(|t| t.trim().parse::<f64>().ok()) {
                Some(khz) => s.frequencies_mhz.push(khz / 1000.0),
                None => break,
            }
        }
    }

    fn temperatures(&self, s: &mut Snapshot) {
        let list = |dir: PathBuf| -> Vec<PathBuf> {
            let mut entries: Vec<PathBuf> = fs::read_dir(dir)
                .map(|d| d.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            entries.sort();
            entries
        };
        for zone in list(self.sys.join("class/thermal")) {
            let name = zone
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            if !name.starts_with("thermal_zone") {
                continue;
            }
            let (Some(kind), Some(milli)) = (
                read(&zone.join("type")),
                read(&zone.join("temp")).and_then(|t| t.trim().parse::<f64>().ok()),
            ) else {
                continue;
            };
            s.temperatures
                .insert(format!("{} ({name})", kind.trim()), milli / 1000.0);
        }
        for hwmon in list(self.sys.join("class/hwmon")) {
            let chip = read(&hwmon.join("name"))
                .map(|n| n.trim().to_string())
                .unwrap_or_default();
            for entry in list(hwmon.clone()) {
                let file = entry
                    .file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default();
                let Some(index) = file
                    .strip_prefix("temp")
                    .and_then(|f| f.strip_suffix("_input"))
                else {
                    continue;
                };
                let Some(milli) = read(&entry).and_then(|t| t.trim().parse::<f64>().ok()) else {
                    continue;
                };
                let label = read(&hwmon.join(format!("temp{index}_label")))
                    .map(|l| l.trim().to_string())
                    .unwrap_or(format!("temp{index}"));
                s.temperatures
                    .insert(format!("{chip} {label}"), milli / 1000.0);
            }
        }
    }

    fn processes(&self, watched: &[String], s: &mut Snapshot) {
        let page = page_size();
        let Ok(entries) = fs::read_dir(&self.proc) else {
            return;
        };
        // Each name's processes: pid and parent's pid.
        let mut family: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let pid = name.to_string_lossy().to_string();
            if !pid.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            // A process may end between listing and reading: skip it then.
            let Some(stat) = read(&entry.path().join("stat")) else {
                continue;
            };
            let Some((comm, ticks)) = parse_stat(&stat) else {
                continue;
            };
            let Some(watched_name) = watched
                .iter()
                .find(|w| comm == w.as_str() || comm.starts_with(&format!("{w}:")))
            else {
                continue;
            };
            let rss_pages = read(&entry.path().join("statm"))
                .and_then(|m| {
                    m.split_whitespace()
                        .nth(1)
                        .and_then(|r| r.parse::<u64>().ok())
                })
                .unwrap_or(0);
            let threads = read_threads(&entry.path()).unwrap_or_default();
            let pool = read(&entry.path().join("cmdline")).and_then(|c| pool_of(&c));
            let parent = stat
                .rfind(')')
                .and_then(|close| stat[close + 1..].split_whitespace().nth(1))
                .unwrap_or("0")
                .to_string();
            let counters = s.processes.entry(watched_name.clone()).or_default();
            counters.cpu_ticks += ticks;
            counters.rss_bytes += rss_pages * page;
            counters.count += 1;
            counters.threads.run_delay_ns += threads.run_delay_ns;
            counters.threads.major_faults += threads.major_faults;
            counters.threads.states.merge(&threads.states);
            if let Some(pool) = pool {
                counters
                    .pool_states
                    .entry((parent.clone(), pool.clone()))
                    .or_default()
                    .merge(&threads.states);
                let (workers, busy, unreadable) =
                    counters.pools.entry((parent.clone(), pool)).or_default();
                let states = &threads.states;
                if states.unknown > 0 && states.unknown == states.total() {
                    // What it sleeps on is not said to this reader: busy or not, unknown.
                    *unreadable += 1;
                } else {
                    *workers += 1;
                    // A worker is busy unless every thread of it waits for a connection.
                    *busy += u32::from(states.accept < states.total());
                }
            }
            family
                .entry(watched_name.clone())
                .or_default()
                .push((pid, parent));
        }
        let mut queues: Option<BTreeMap<u64, ListenQueue>> = None;
        for (name, processes) in family {
            let pids: BTreeSet<&str> = processes.iter().map(|(pid, _)| pid.as_str()).collect();
            // The name's masters (whose parent is not of the name) hold its
            // listening sockets; workers inherit the same ones.
            let masters: Vec<&str> = processes
                .iter()
                .filter(|(_, parent)| !pids.contains(parent.as_str()))
                .map(|(pid, _)| pid.as_str())
                .collect();
            let Some(counters) = s.processes.get_mut(&name) else {
                continue;
            };
            // The first master a CPU quota (or an IOPS limit) holds: of two
            // php-fpm masters, one may be emulated on a smaller host.
            counters.cgroup = masters
                .iter()
                .find_map(|pid| cgroup_cpu(&self.proc, &self.sys, pid));
            counters.io_group = masters
                .iter()
                .find_map(|pid| crate::cgroup_io::cgroup_io(&self.proc, &self.sys, pid));
            let held: BTreeMap<&str, Vec<u64>> = masters
                .iter()
                .map(|pid| (*pid, socket_inodes(&self.proc.join(pid))))
                .filter(|(_, inodes)| !inodes.is_empty())
                .collect();
            if held.is_empty() {
                continue;
            }
            // One netlink dump a look, and only when a watched process
            // holds sockets.
            let all = queues.get_or_insert_with(|| listening().unwrap_or_default());
            let mut seen = BTreeSet::new();
            let mut by_master: Vec<(&str, Vec<ListenQueue>)> = Vec::new();
            for (master, inodes) in &held {
                let mine: Vec<ListenQueue> = inodes
                    .iter()
                    .filter(|i| seen.insert(**i))
                    .filter_map(|i| all.get(i).cloned())
                    .collect();
                counters
                    .queued_by_master
                    .insert(master.to_string(), mine.iter().map(|l| l.queue).sum());
                counters.listening.extend(mine.iter().cloned());
                by_master.push((master, mine));
            }
            if name == "nginx" {
                counters.nginx = self.nginx(&by_master, &processes);
            }
            if name.starts_with("apache2") || name.starts_with("httpd") {
                counters.apache = counters
                    .listening
                    .iter()
                    .find_map(|l| crate::server_status::local_address(&l.address))
                    .map(crate::server_status::apache_workers);
            }
        }
    }
}

impl Roots {
    /// Each master of a watched nginx that listens on TCP: its
    /// stub_status page (or why there is none), its worker processes (its
    /// children called "nginx: worker process") and their
    /// worker_connections, from its configuration.
    fn nginx(
        &self,
        masters: &[(&str, Vec<ListenQueue>)],
        processes: &[(String, String)],
    ) -> BTreeMap<String, crate::stub_status::NginxLook> {
        let cmdline = |pid: &str| fs::read(self.proc.join(pid).join("cmdline")).unwrap_or_default();
        // Its configuration's path is under the root /proc is in.
        let root = self.proc.parent().unwrap_or(Path::new("/"));
        let mut looks = BTreeMap::new();
        for (master, listening) in masters {
            let addresses: Vec<std::net::SocketAddr> = listening
                .iter()
                .filter_map(|l| crate::server_status::local_address(&l.address))
                .collect();
            if addresses.is_empty() {
                continue;
            }
            let workers = processes
                .iter()
                .filter(|(pid, parent)| {
                    parent == master
                        && String::from_utf8_lossy(&cmdline(pid)).contains("worker process")
                })
                .count() as u32;
            let configured = crate::stub_status::worker_connections(root, &cmdline(master));
            looks.insert(
                master.to_string(),
                crate::stub_status::NginxLook {
                    status: crate::stub_status::read(&addresses),
                    last_answered: None,
                    workers,
                    worker_connections: configured
                        .unwrap_or(crate::stub_status::DEFAULT_WORKER_CONNECTIONS),
                    configured: configured.is_some(),
                },
            );
        }
        looks
    }
}

/// /proc/interrupts's rows summed over the cores, by kind: a numbered
/// row (a device's line) by the device names that end it ("mmc1, mmc0"); a named row
/// (the kernel's own: LOC, RES, IPI0, ...) by its description, or its
/// label when it has none (ERR, MIS). Rows of the same kind add up.
pub fn interrupt_kinds(table: &str) -> BTreeMap<String, u64> {
    let mut lines = table.lines();
    let cores = lines
        .next()
        .map_or(0, |header| header.split_whitespace().count());
    let mut kinds = BTreeMap::new();
    for line in lines {
        let Some((label, rest)) = line.split_once(':') else {
            continue;
        };
        let label = label.trim();
        let mut words = rest.split_whitespace().peekable();
        let mut total = 0u64;
        let mut counted = 0;
        while counted < cores.max(1) {
            match words.peek().and_then(|w| w.parse::<u64>().ok()) {
                Some(n) => {
                    total = total.saturating_add(n);
                    words.next();
                    counted += 1;
                }
                None => break,
            }
        }
        if counted == 0 {
            continue;
        }
        let text: Vec<&str> = words.collect();
        let kind = if label.bytes().all(|b| b.is_ascii_digit()) {
            // The devices sharing the line end it, as "mmc1, mmc0".
            let mut first = text.len().saturating_sub(1);
            while first > 0 && text[first - 1].ends_with(',') {
                first -= 1;
            }
            match text.get(first..).filter(|names| !names.is_empty()) {
                Some(names) => names.join(" "),
                None => label.to_string(),
            }
        } else if text.is_empty() {
            label.to_string()
        } else {
            text.join(" ")
        };
        *kinds.entry(kind).or_insert(0) += total;
    }
    kinds
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as u64
    } else {
        4096
    }
}

/// Clock ticks per second for /proc/[pid]/stat times.
pub fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

/// The name and CPU ticks (utime + stime) of a /proc/[pid]/stat line. The
/// name sits in parentheses and may itself contain spaces or parentheses.
pub fn parse_stat(stat: &str) -> Option<(&str, u64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let fields: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    // After the name: state is field 3 of the line; utime and stime are fields 14 and 15.
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Some((stat.get(open + 1..close)?, tick(11) + tick(12)))
}

#[cfg(test)]
mod tests {
    use super::interrupt_kinds;

    #[test]
    fn interrupts_are_summed_over_the_cores_by_kind() {
        // A Raspberry Pi 4's table (4 cores) and an x86 VM's rows.
        let pi = "           CPU0       CPU1       CPU2       CPU3\n\
             11:     123456     234567     345678     456789     GICv2  30 Level     arch_timer\n\
             21:          0          0          0          0     GICv2 169 Level     brcmstb_thermal\n\
             28:       5000          0          0          0     GICv2 158 Level     mmc1, mmc0\n\
            IPI0:      1000       2000       3000       4000       Rescheduling interrupts\n\
            IPI5:        10         20         30         40       IRQ work interrupts\n\
            Err:          0\n";
        let kinds = interrupt_kinds(pi);
        assert_eq!(kinds["arch_timer"], 123_456 + 234_567 + 345_678 + 456_789);
        assert_eq!(kinds["mmc1, mmc0"], 5000);
        assert_eq!(kinds["Rescheduling interrupts"], 10_000);
        assert_eq!(kinds["IRQ work interrupts"], 100);
        assert_eq!(kinds["brcmstb_thermal"], 0);
        assert_eq!(kinds["Err"], 0);
        assert_eq!(kinds.len(), 6);
        let vm = "           CPU0       CPU1\n\
             36:        263      91544  PCI-MSIX-0000:00:04.0   1-edge      virtio1-req.0\n\
            LOC:    2000000    1000000   Local timer interrupts\n\
            RES:        700        300   Rescheduling interrupts\n\
            ERR:          0\n\
            MIS:          0\n\
            garbage line\n\
            XYZ: words only\n";
        let kinds = interrupt_kinds(vm);
        assert_eq!(kinds["virtio1-req.0"], 91_807);
        assert_eq!(kinds["Local timer interrupts"], 3_000_000);
        assert_eq!(kinds["Rescheduling interrupts"], 1000);
        assert_eq!(kinds["ERR"], 0);
        assert_eq!(kinds.len(), 5, "{kinds:?}");
        assert!(interrupt_kinds("").is_empty());
    }
}
