//! A smaller host emulated on this one: control groups that limit the
//! CPU time (CFS quota: `cpus` CPUs' worth each 10 ms, 100 ms over
//! several cores, on ⌈cpus⌉ cores of their own, the last ones: a host of
//! one slow core has one run queue, and a quota spread over more cores
//! than it needs lets a server's threads use only part of it, each core
//! taking 5 ms slices of it in turn), a disk's random
//! IOPS (the block-I/O throttle, reads and writes each) and memory of the
//! processes put in them, through cgroup v2 where its controllers are
//! enabled, else the v1 hierarchies. The groups are made when the
//! emulation is prepared and removed when it is dropped.

use std::ffi::CString;
use std::fs;
use std::path::{Path, PathBuf};

/// The CFS period: quotas are this long's share. Short, so that a
/// throttled server waits milliseconds, as a slower CPU would make it, not
/// most of 100 ms (the kernel's default) every time it used its share.
const PERIOD_US: u64 = 10_000;
/// The period of a quota over several cores (the kernel's default).
const MULTI_CORE_PERIOD_US: u64 = 100_000;

/// What to limit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    pub cpus: Option<f64>,
    /// Reads and writes a second each, on the disk holding the directory.
    pub iops: Option<(u32, PathBuf)>,
    pub memory_bytes: Option<u64>,
}

/// Control groups made for one command.
#[derive(Debug)]
pub struct Emulation {
    /// The groups' `cgroup.procs` files, as C strings for a child to write
    /// itself into between fork and exec.
    procs: Vec<CString>,
    groups: Vec<PathBuf>,
    /// The limits in words ("0.5 CPU (quota 50 ms each 100 ms)").
    pub described: Vec<String>,
}

/// The last ⌈cpus⌉ cores of this machine ("1", "2-3"), all of them when
/// it has fewer.
fn cores_for(cpus: f64) -> String {
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    let online = fs::read_to_string("/sys/devices/system/cpu/online")
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
        .unwrap_or(online);
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

impl Emulation {
    /// Makes the groups with `limits`; `name` keeps them apart from other
    /// emulations (e.g. the process id).
    pub fn prepare(limits: &Limits, name: &str) -> Result<Emulation, String> {
        let mut emulation = Emulation {
            procs: Vec::new(),
            groups: Vec::new(),
            described: Vec::new(),
        };
        if limits == &Limits::default() {
            return Err("nothing to emulate: give --cpus, --iops or --memory".to_string());
        }
        let disk = match &limits.iops {
            Some((_, dir)) => Some(disk_of(dir)?),
            None => None,
        };
        let group = format!("headroom-emulate-{name}");
        // The kernel's least quota is 1 ms: a smaller share takes a longer
        // period.
        // Over several cores the quota is handed out in 5 ms slices to each
        // core's queue: a 10 ms period leaves it unenforced (2 threads on
        // 1.51 CPUs ran as on 2), so several cores keep the kernel's 100 ms.
        let period = limits.cpus.map_or(PERIOD_US, |c| {
            let period = if c > 1.0 {
                MULTI_CORE_PERIOD_US
            } else {
                PERIOD_US
            };
            period.max((1000.0 / c).ceil() as u64).min(1_000_000)
        });
        let quota = limits
            .cpus
            .map(|c| ((c * period as f64).round() as u64).max(1000));
        let cores = limits.cpus.map(cores_for);
        match tree() {
            Tree::V2(root) => {
                let dir = root.join(&group);
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
                emulation.make(&dir)?;
                if let Some(quota) = quota {
                    write(&dir.join("cpu.max"), &format!("{quota} {period}"))?;
                }
                if let Some(cores) = &cores {
                    write(&dir.join("cpuset.cpus"), cores)?;
                }
                if let (Some((iops, _)), Some(disk)) = (&limits.iops, &disk) {
                    write(
                        &dir.join("io.max"),
                        &format!("{disk} riops={iops} wiops={iops}"),
                    )?;
                }
                if let Some(bytes) = limits.memory_bytes {
                    write(&dir.join("memory.max"), &bytes.to_string())?;
                }
            }
            Tree::V1 => {
                if let Some(quota) = quota {
                    let dir = Path::new("/sys/fs/cgroup/cpu").join(&group);
                    emulation.make(&dir)?;
                    write(&dir.join("cpu.cfs_period_us"), &period.to_string())?;
                    write(&dir.join("cpu.cfs_quota_us"), &quota.to_string())?;
                }
                if let Some(cores) = &cores {
                    let root = Path::new("/sys/fs/cgroup/cpuset");
                    let dir = root.join(&group);
                    emulation.make(&dir)?;
                    // A v1 cpuset needs its memory nodes before a process.
                    let mems = fs::read_to_string(root.join("cpuset.mems"))
                        .map_err(|e| format!("{}: {e}", root.display()))?;
                    write(&dir.join("cpuset.mems"), mems.trim())?;
                    write(&dir.join("cpuset.cpus"), cores)?;
                }
                if let (Some((iops, _)), Some(disk)) = (&limits.iops, &disk) {
                    let dir = Path::new("/sys/fs/cgroup/blkio").join(&group);
                    emulation.make(&dir)?;
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
                    let dir = Path::new("/sys/fs/cgroup/memory").join(&group);
                    emulation.make(&dir)?;
                    write(&dir.join("memory.limit_in_bytes"), &bytes.to_string())?;
                }
            }
        }
        if let (Some(cpus), Some(quota), Some(cores)) = (limits.cpus, quota, &cores) {
            emulation.described.push(format!(
                "{cpus:.2} CPU (a quota of {:.1} ms of CPU each {} ms, on core{} {cores})",
                quota as f64 / 1000.0,
                period as f64 / 1000.0,
                if cores.contains('-') { "s" } else { "" }
            ));
        }
        if let (Some((iops, dir)), Some(disk)) = (&limits.iops, &disk) {
            emulation.described.push(format!(
                "{iops} reads and {iops} writes a second on disk {disk} (holding {})",
                dir.display()
            ));
        }
        if let Some(bytes) = limits.memory_bytes {
            emulation
                .described
                .push(format!("{} MiB of memory", bytes >> 20));
        }
        Ok(emulation)
    }

    fn make(&mut self, dir: &Path) -> Result<(), String> {
        fs::create_dir(dir).map_err(|e| {
            format!(
                "cannot make the control group {}: {e} (emulation needs root and a kernel with cgroups mounted under /sys/fs/cgroup)",
                dir.display()
            )
        })?;
        self.groups.push(dir.to_path_buf());
        let procs = CString::new(dir.join("cgroup.procs").to_string_lossy().into_owned())
            .map_err(|e| e.to_string())?;
        self.procs.push(procs);
        Ok(())
    }

    /// What a child needs to enter the groups ([`EmulationEntry::enter`]).
    pub fn entry(&self) -> EmulationEntry {
        EmulationEntry(self.procs.clone())
    }
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
            let pid = libc::getpid();
            let mut digits = [0u8; 20];
            let mut at = digits.len();
            let mut n = pid as u64;
            loop {
                at -= 1;
                digits[at] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            for procs in &self.0 {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let text = &digits[at..];
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
    fn drop(&mut self) {
        // A group is removed once its processes have ended; they may take
        // a moment to leave it.
        for dir in &self.groups {
            for _ in 0..50 {
                if fs::remove_dir(dir).is_ok() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
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
}
