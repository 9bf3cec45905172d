//! A smaller host emulated on this one: control groups that limit the
//! CPU time (CFS quota: `cpus` CPUs' worth each 10 ms, 100 ms over
//! several cores, on ⌈cpus⌉ cores of their own, the last ones: a host of
//! one slow core has one run queue, and a quota spread over more cores
//! than it needs lets a server's threads use only part of it, each core
//! taking 5 ms slices of it in turn), a disk's random
//! IOPS (the block-I/O throttle, reads and writes each) and memory of the
//! processes put in them, through cgroup v2 where its controllers are
//! enabled, else the v1 hierarchies. The groups are made when the
//! emulation is prepared; when it finishes, what the command left in them
//! is stopped and they are removed (by a guard process when headroom
//! itself is killed, and at the next emulation's start when the guard was
//! killed too).

mod members;

use members::{Group, Guard};
use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs;
use std::path::{Path, PathBuf};

/// The CFS period: quotas are this long's share. Short, so that a
/// throttled server waits milliseconds, as a slower CPU would make it, not
/// most of 100 ms (the kernel's default) every time it used its share.
const PERIOD_US: u64 = 10_000;
/// The period of a quota over several cores (the kernel's default).
const MULTI_CORE_PERIOD_US: u64 = 100_000;
/// The least quota the kernel takes (1 ms) and the longest period (1 s).
const LEAST_QUOTA_US: u64 = 1_000;
const LONGEST_PERIOD_US: u64 = 1_000_000;
/// The least share of a CPU the kernel can hold a command to: 1 ms of CPU
/// each second.
pub const LEAST_CPUS: f64 = LEAST_QUOTA_US as f64 / LONGEST_PERIOD_US as f64;
/// The least memory emulated: below it no server starts (the kernel's
/// OOM killer ends the command at its first pages; a Python interpreter
/// alone takes 7 MiB).
pub const LEAST_MEMORY: u64 = 4 << 20;
/// The groups' names: this and the emulating process's id.
const GROUP_PREFIX: &str = "headroom-emulate-";

/// What to limit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    pub cpus: Option<f64>,
    /// Reads and writes a second each, on the disk holding the directory.
    pub iops: Option<(u32, PathBuf)>,
    pub memory_bytes: Option<u64>,
}

impl Limits {
    /// Why these limits cannot be emulated on a host of `cores` CPUs
    /// (a quota above them holds nothing back; below the kernel's least
    /// share or too little memory to start in, nothing runs as asked).
    pub fn refusal(&self, cores: usize) -> Option<String> {
        if let Some(cpus) = self.cpus {
            if cpus > cores as f64 + 1e-9 {
                return Some(format!(
                    "{} CPUs are more than this host has ({cores}): a quota above its CPUs holds \
                     nothing back, and the command would run as on this host. Give --cpus {cores} or less",
                    cpus_shown(cpus)
                ));
            }
            if cpus < LEAST_CPUS - 1e-12 {
                return Some(format!(
                    "{} CPU is less than the kernel can hold a command to: its least quota is 1 ms \
                     of CPU each second ({LEAST_CPUS} CPU). Give --cpus {LEAST_CPUS} or more",
                    cpus_shown(cpus)
                ));
            }
        }
        if let Some(bytes) = self.memory_bytes.filter(|b| *b < LEAST_MEMORY) {
            return Some(format!(
                "{} of memory is too little for a server to start in (the kernel's OOM killer would \
                 end the command at its first pages; a Python interpreter alone takes 7 MiB). Give \
                 --memory {}M or more",
                memory_shown(bytes),
                LEAST_MEMORY >> 20
            ));
        }
        None
    }
}

/// "0.25", "1.13", "0.001", "0.0015": two decimals, or up to two
/// significant digits below a tenth.
fn cpus_shown(cpus: f64) -> String {
    if cpus >= 0.1 {
        format!("{cpus:.2}")
    } else {
        let decimals = ((-cpus.log10()).ceil() as usize + 1).min(12);
        let shown = format!("{cpus:.decimals$}");
        shown
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// "512 MiB", "4.5 MiB", "1 KiB", "100 bytes".
pub fn memory_shown(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        let mib = bytes as f64 / (1u64 << 20) as f64;
        if bytes.is_multiple_of(1 << 20) {
            format!("{mib:.0} MiB")
        } else {
            format!("{mib:.1} MiB")
        }
    } else if bytes >= 1 << 10 {
        format!("{:.0} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{bytes} bytes")
    }
}

/// Control groups made for one command.
#[derive(Debug)]
pub struct Emulation {
    groups: Vec<Group>,
    /// The memory group's file counting OOM kills (v2 `memory.events`,
    /// v1 `memory.oom_control`) and its limit.
    memory: Option<(PathBuf, u64)>,
    guard: Option<Guard>,
    /// The limits in words ("0.5 CPU (quota 50 ms each 100 ms)").
    pub described: Vec<String>,
}

/// What the command did to its groups, said when it has ended.
#[derive(Debug, Default, PartialEq)]
pub struct EmulationEnd {
    /// Processes the kernel's OOM killer ended at the memory limit.
    pub oom_kills: u64,
    /// The memory limit, bytes.
    pub memory_bytes: Option<u64>,
    /// Processes the command left in the groups, stopped.
    pub left_behind: usize,
    /// Groups that could not be removed, and why.
    pub not_removed: Vec<(PathBuf, String)>,
}

/// The CPUs online on this machine (the last one's number + 1).
pub fn online_cores() -> usize {
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|text| {
            let last = text
                .trim()
                .rsplit(['-', ','])
                .next()?
                .parse::<usize>()
                .ok()?;
            Some(last + 1)
        })
        .unwrap_or(online)
}

/// The CFS quota and period, µs, that hold a command to `cpus`.
/// The kernel's least quota is 1 ms: a smaller share takes a longer
/// period (up to 1 s, so the least share is 0.001 CPU, refused below).
/// Over several cores the quota is handed out in 5 ms slices to each
/// core's queue: a 10 ms period leaves it unenforced (2 threads on
/// 1.51 CPUs ran as on 2), so several cores keep the kernel's 100 ms.
fn quota_and_period(cpus: f64) -> (u64, u64) {
    let period = if cpus > 1.0 {
        MULTI_CORE_PERIOD_US
    } else {
        PERIOD_US
    };
    let period = period
        .max((LEAST_QUOTA_US as f64 / cpus).ceil() as u64)
        .min(LONGEST_PERIOD_US);
    let quota = ((cpus * period as f64).round() as u64).max(LEAST_QUOTA_US);
    (quota, period)
}

/// The last ⌈cpus⌉ cores of this machine ("1", "2-3"), all of them when
/// it has fewer.
fn cores_for(cpus: f64) -> String {
    let online = online_cores();
    let wanted = (cpus.ceil() as usize).clamp(1, online);
    let first = online - wanted;
    if wanted == 1 {
        first.to_string()
    } else {
        format!("{first}-{}", online - 1)
    }
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    fs::write(path, value)
        .map_err(|e| format!("the kernel refused {value:?} in {}: {e}", path.display()))
}

/// The block device (major:minor) of the disk holding `dir`: its whole
/// disk when it is a partition.
fn disk_of(dir: &Path) -> Result<String, String> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dev = meta.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    if !sys.exists() {
        return Err(format!(
            "{} is not on a block device ({major}:{minor}: a tmpfs, overlay or network file system): its IOPS cannot be limited; give --disk-dir a directory on a disk",
            dir.display()
        ));
    }
    if sys.join("partition").exists() {
        let whole = fs::read_to_string(sys.join("../dev")).map_err(|e| e.to_string())?;
        return Ok(whole.trim().to_string());
    }
    Ok(format!("{major}:{minor}"))
}

/// Where this kernel's controllers are: the v2 tree when it offers them,
/// else each v1 hierarchy.
enum Tree {
    V2(PathBuf),
    V1,
}

fn tree() -> Tree {
    for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
        let controllers =
            fs::read_to_string(Path::new(root).join("cgroup.controllers")).unwrap_or_default();
        if controllers.split_whitespace().any(|c| c == "cpu") {
            return Tree::V2(PathBuf::from(root));
        }
    }
    Tree::V1
}

/// What an emulation's groups are set to: its limits, the group's name,
/// the CPU quota and period (µs), the cores and the disk.
struct GroupSettings<'a> {
    limits: &'a Limits,
    group: String,
    quota: Option<u64>,
    period: u64,
    cores: Option<String>,
    disk: Option<String>,
}

impl Emulation {
    /// Makes the groups with `limits`; `name` keeps them apart from other
    /// emulations (e.g. the process id).
    pub fn prepare(limits: &Limits, name: &str) -> Result<Emulation, String> {
        let mut emulation = Emulation {
            groups: Vec::new(),
            memory: None,
            guard: None,
            described: Vec::new(),
        };
        if limits == &Limits::default() {
            return Err("nothing to emulate: give --cpus, --iops or --memory".to_string());
        }
        if let Some(why) = limits.refusal(online_cores()) {
            return Err(why);
        }
        let disk = match &limits.iops {
            Some((_, dir)) => Some(disk_of(dir)?),
            None => None,
        };
        let group = format!("{GROUP_PREFIX}{name}");
        let (quota, period) = match limits.cpus.map(quota_and_period) {
            Some((quota, period)) => (Some(quota), period),
            None => (None, PERIOD_US),
        };
        let cores = limits.cpus.map(cores_for);
        let settings = GroupSettings {
            limits,
            group,
            quota,
            period,
            cores,
            disk,
        };
        match tree() {
            Tree::V2(root) => emulation.limit_v2(&root, &settings)?,
            Tree::V1 => emulation.limit_v1(&settings)?,
        }
        emulation.describe_limits(&settings);
        Ok(emulation)
    }

    /// The limits in words, a line each.
    fn describe_limits(&mut self, settings: &GroupSettings) {
        let limits = settings.limits;
        let (quota, period) = (settings.quota, settings.period);
        let (cores, disk) = (&settings.cores, &settings.disk);
        if let (Some(cpus), Some(quota), Some(cores)) = (limits.cpus, quota, cores) {
            self.described.push(format!(
                "{} CPU (a quota of {:.1} ms of CPU each {} ms, on core{} {cores})",
                cpus_shown(cpus),
                quota as f64 / 1000.0,
                period as f64 / 1000.0,
                if cores.contains('-') { "s" } else { "" }
            ));
        }
        if let (Some((iops, dir)), Some(disk)) = (&limits.iops, disk) {
            self.described.push(format!(
                "{iops} reads and {iops} writes a second on disk {disk} (holding {})",
                dir.display()
            ));
        }
        if let Some(bytes) = limits.memory_bytes {
            self.described
                .push(format!("{} of memory", memory_shown(bytes)));
        }
    }

    /// Makes the group under a cgroup v2 `root`, its controllers enabled,
    /// with the limits asked.
    fn limit_v2(&mut self, root: &Path, settings: &GroupSettings) -> Result<(), String> {
        let limits = settings.limits;
        let (quota, period) = (settings.quota, settings.period);
        let (cores, disk) = (&settings.cores, &settings.disk);
        let dir = root.join(&settings.group);
        let wanted: Vec<&str> = [
            limits.cpus.map(|_| "+cpu"),
            limits.cpus.map(|_| "+cpuset"),
            limits.iops.as_ref().map(|_| "+io"),
            limits.memory_bytes.map(|_| "+memory"),
        ]
        .into_iter()
        .flatten()
        .collect();
        write(&root.join("cgroup.subtree_control"), &wanted.join(" "))?;
        self.make(&dir)?;
        if let Some(quota) = quota {
            write(&dir.join("cpu.max"), &format!("{quota} {period}"))?;
        }
        if let Some(cores) = cores {
            write(&dir.join("cpuset.cpus"), cores)?;
        }
        if let (Some((iops, _)), Some(disk)) = (&limits.iops, disk) {
            write(
                &dir.join("io.max"),
                &format!("{disk} riops={iops} wiops={iops}"),
            )?;
        }
        if let Some(bytes) = limits.memory_bytes {
            write(&dir.join("memory.max"), &bytes.to_string())?;
            self.memory = Some((dir.join("memory.events"), bytes));
        }
        Ok(())
    }

    /// Makes a group in each cgroup v1 controller a limit needs (cpu,
    /// cpuset, blkio, memory), with the limits asked.
    fn limit_v1(&mut self, settings: &GroupSettings) -> Result<(), String> {
        let limits = settings.limits;
        let (quota, period) = (settings.quota, settings.period);
        let (cores, disk) = (&settings.cores, &settings.disk);
        if let Some(quota) = quota {
            let dir = Path::new("/sys/fs/cgroup/cpu").join(&settings.group);
            self.make(&dir)?;
            write(&dir.join("cpu.cfs_period_us"), &period.to_string())?;
            write(&dir.join("cpu.cfs_quota_us"), &quota.to_string())?;
        }
        if let Some(cores) = cores {
            let root = Path::new("/sys/fs/cgroup/cpuset");
            let dir = root.join(&settings.group);
            self.make(&dir)?;
            // A v1 cpuset needs its memory nodes before a process.
            let mems = fs::read_to_string(root.join("cpuset.mems"))
                .map_err(|e| format!("{}: {e}", root.display()))?;
            write(&dir.join("cpuset.mems"), mems.trim())?;
            write(&dir.join("cpuset.cpus"), cores)?;
        }
        if let (Some((iops, _)), Some(disk)) = (&limits.iops, disk) {
            let dir = Path::new("/sys/fs/cgroup/blkio").join(&settings.group);
            self.make(&dir)?;
            write(
                &dir.join("blkio.throttle.read_iops_device"),
                &format!("{disk} {iops}"),
            )?;
            write(
                &dir.join("blkio.throttle.write_iops_device"),
                &format!("{disk} {iops}"),
            )?;
        }
        if let Some(bytes) = limits.memory_bytes {
            let dir = Path::new("/sys/fs/cgroup/memory").join(&settings.group);
            self.make(&dir)?;
            write(&dir.join("memory.limit_in_bytes"), &bytes.to_string())?;
            self.memory = Some((dir.join("memory.oom_control"), bytes));
        }
        Ok(())
    }

    fn make(&mut self, dir: &Path) -> Result<(), String> {
        fs::create_dir(dir).map_err(|e| {
            format!(
                "cannot make the control group {}: {e} (emulation needs root and a kernel with cgroups mounted under /sys/fs/cgroup)",
                dir.display()
            )
        })?;
        let group = Group::new(dir);
        if group.is_err() {
            let _ = fs::remove_dir(dir);
        }
        self.groups.push(group?);
        Ok(())
    }

    /// What a child needs to enter the groups ([`EmulationEntry::enter`]).
    pub fn entry(&self) -> EmulationEntry {
        EmulationEntry(self.groups.iter().map(|g| g.procs.clone()).collect())
    }

    /// The processes in the groups now.
    pub fn members(&self) -> impl Iterator<Item = u32> + '_ {
        self.groups.iter().flat_map(|g| {
            fs::read_to_string(g.dir.join("cgroup.procs"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|pid| pid.parse().ok())
                .collect::<Vec<u32>>()
        })
    }

    /// Starts the guard that stops what is left in the groups and removes
    /// them if headroom is killed (SIGKILL included) before
    /// [`Emulation::finish`].
    pub fn guard(&mut self) -> std::io::Result<()> {
        self.guard = Some(Guard::start(&self.groups)?);
        Ok(())
    }

    /// After the command has ended: the OOM kills at the memory limit,
    /// what it left in the groups stopped, and the groups removed.
    pub fn finish(mut self) -> EmulationEnd {
        let mut ending = EmulationEnd {
            memory_bytes: self.memory.as_ref().map(|(_, bytes)| *bytes),
            oom_kills: self.memory.as_ref().map_or(0, |(file, _)| oom_kills(file)),
            ..EmulationEnd::default()
        };
        ending.left_behind = members::stop_members(&self.groups);
        for group in std::mem::take(&mut self.groups) {
            if let Err(errno) = members::remove(&group) {
                let e = std::io::Error::from_raw_os_error(errno);
                ending.not_removed.push((group.dir, e.to_string()));
            }
        }
        if let Some(guard) = self.guard.take() {
            guard.release();
        }
        ending
    }
}

/// The OOM kills counted in a memory group's `memory.events` or
/// `memory.oom_control` ("oom_kill 1").
fn oom_kills(file: &Path) -> u64 {
    oom_kills_in(&fs::read_to_string(file).unwrap_or_default())
}

fn oom_kills_in(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
        .unwrap_or(0)
}

/// An emulation's groups left by an emulating process that has ended
/// (killed together with its guard): `(its process id, the groups)`.
fn stale_groups() -> BTreeMap<u32, Vec<PathBuf>> {
    let roots = [
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/unified",
        "/sys/fs/cgroup/cpu",
        "/sys/fs/cgroup/cpuset",
        "/sys/fs/cgroup/blkio",
        "/sys/fs/cgroup/memory",
    ];
    let mut seen = Vec::new();
    let mut stale: BTreeMap<u32, Vec<PathBuf>> = BTreeMap::new();
    for root in roots {
        // /sys/fs/cgroup/cpu may be a link to cpu,cpuacct: each hierarchy once.
        let Ok(real) = fs::canonicalize(root) else {
            continue;
        };
        if seen.contains(&real) {
            continue;
        }
        seen.push(real.clone());
        for entry in fs::read_dir(&real).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(GROUP_PREFIX))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if !emulating(pid) {
                stale.entry(pid).or_default().push(entry.path());
            }
        }
    }
    stale
}

/// Whether `pid` is a running `headroom emulate` (not a process that took
/// an ended one's number).
fn emulating(pid: u32) -> bool {
    fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|cmdline| cmdline.split(|b| *b == 0).any(|arg| arg == b"emulate"))
}

/// Stops what is left in the groups of emulations whose process has ended
/// and removes them; a line for each such emulation.
pub fn remove_stale() -> Vec<String> {
    stale_groups()
        .into_iter()
        .map(|(pid, dirs)| {
            let groups: Vec<Group> = dirs.iter().filter_map(|d| Group::new(d).ok()).collect();
            let stopped = members::stop_members(&groups);
            let failed: Vec<String> = groups
                .iter()
                .filter_map(|g| {
                    let errno = members::remove(g).err()?;
                    Some(format!(
                        "{} ({})",
                        g.dir.display(),
                        std::io::Error::from_raw_os_error(errno)
                    ))
                })
                .collect();
            let mut line = format!(
                "the control groups of an emulation that ended without removing them (process {pid}): "
            );
            if stopped > 0 {
                line += &format!(
                    "{stopped} process{} left in them stopped, ",
                    if stopped == 1 { "" } else { "es" }
                );
            }
            if failed.is_empty() {
                line += "removed";
            } else {
                line += &format!("{} could not be removed: {}", failed.len(), failed.join(", "));
            }
            line
        })
        .collect()
}

/// The groups' `cgroup.procs` files.
#[derive(Debug, Clone)]
pub struct EmulationEntry(Vec<CString>);

impl EmulationEntry {
    /// Puts the calling process in every group: for a child between fork
    /// and exec (no allocation, async-signal-safe calls only), so that
    /// everything it starts is limited from its first instruction.
    pub fn enter(&self) -> std::io::Result<()> {
        // SAFETY: getpid, open, write and close on buffers owned here.
        unsafe {
            let mut digits = [0u8; 20];
            let text = members::decimal(libc::getpid() as u64, &mut digits);
            for procs in &self.0 {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let written = libc::write(fd, text.as_ptr().cast(), text.len());
                libc::close(fd);
                if written < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }
}

impl Drop for Emulation {
    /// An emulation not finished (the command could not start): its groups
    /// emptied and removed all the same.
    fn drop(&mut self) {
        members::stop_members(&self.groups);
        for group in &self.groups {
            let _ = members::remove(group);
        }
        if let Some(guard) = self.guard.take() {
            guard.release();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_to_limit_or_a_disk_without_a_device_is_said() {
        let error = Emulation::prepare(&Limits::default(), "t").unwrap_err();
        assert!(error.contains("give --cpus"), "{error}");
        let error = Emulation::prepare(
            &Limits {
                iops: Some((100, PathBuf::from("/proc"))),
                ..Limits::default()
            },
            "t",
        )
        .unwrap_err();
        assert!(error.contains("not on a block device"), "{error}");
    }

    /// Finding 8 of adversary-3: `--cpus 3` on 2 cores emulated nothing,
    /// `--cpus 0.0001` set 10× that, `--memory 1k` was taken; each is
    /// refused before any group is made, saying why.
    #[test]
    fn limits_that_hold_nothing_or_cannot_be_held_are_refused() {
        let cpus = |c| Limits {
            cpus: Some(c),
            ..Limits::default()
        };
        let why = cpus(3.0).refusal(2).unwrap();
        assert!(
            why.starts_with("3.00 CPUs are more than this host has (2)")
                && why.contains("--cpus 2 or less"),
            "{why}"
        );
        assert_eq!(cpus(2.0).refusal(2), None);
        let why = cpus(0.0001).refusal(2).unwrap();
        assert!(
            why.starts_with("0.0001 CPU is less than the kernel can hold a command to")
                && why.contains("--cpus 0.001 or more"),
            "{why}"
        );
        assert_eq!(cpus(0.001).refusal(2), None);
        let memory = Limits {
            memory_bytes: Some(1024),
            ..Limits::default()
        };
        let why = memory.refusal(2).unwrap();
        assert!(
            why.starts_with("1 KiB of memory is too little for a server to start in")
                && why.contains("--memory 4M or more"),
            "{why}"
        );
        let enough = Limits {
            memory_bytes: Some(LEAST_MEMORY),
            ..Limits::default()
        };
        assert_eq!(enough.refusal(2), None);
        // Refused by prepare too, before any group.
        let error = Emulation::prepare(&cpus(1000.0), "t").unwrap_err();
        assert!(error.contains("more than this host has"), "{error}");
    }

    /// The quota is the share asked for, the least one included (it was
    /// 1 ms each 1 s, not each 10 s, for 0.0001).
    #[test]
    fn the_quota_is_the_share_asked_for() {
        for cpus in [0.001, 0.0015, 0.05, 0.25, 1.0, 1.13, 2.0] {
            let (quota, period) = quota_and_period(cpus);
            assert!(quota >= LEAST_QUOTA_US && period <= LONGEST_PERIOD_US);
            let share = quota as f64 / period as f64;
            assert!(
                (share / cpus - 1.0).abs() < 1e-3,
                "{cpus}: {quota}/{period}"
            );
        }
        assert_eq!(quota_and_period(0.25), (2_500, 10_000));
        assert_eq!(quota_and_period(1.13), (113_000, 100_000));
        assert_eq!(quota_and_period(0.001), (1_000, 1_000_000));
        assert_eq!(cpus_shown(0.001), "0.001");
        assert_eq!(cpus_shown(0.0015), "0.0015");
        assert_eq!(cpus_shown(0.25), "0.25");
        assert_eq!(memory_shown(16 << 20), "16 MiB");
        assert_eq!(memory_shown(4_718_592), "4.5 MiB");
    }

    #[test]
    fn oom_kills_are_read_from_v1_and_v2_files() {
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n";
        let v2 = "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n";
        assert_eq!(oom_kills_in(v1), 1);
        assert_eq!(oom_kills_in(v2), 2);
        assert_eq!(oom_kills_in("oom_kill_disable 0\n"), 0);
    }
}
