//! The environment of a result: hardware, OS, power management, storage,
//! virtualisation. Recorded with every run so that two results can be
//! compared knowing what differed (a governor, a kernel, an SD card).

use crate::procfs::Roots;
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// Raspberry Pi throttling (`vcgencmd get_throttled`): now and since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Throttling {
    pub raw: u32,
    pub under_voltage_now: bool,
    pub frequency_capped_now: bool,
    pub throttled_now: bool,
    pub soft_temperature_limit_now: bool,
    pub under_voltage_since_boot: bool,
    pub frequency_capped_since_boot: bool,
    pub throttled_since_boot: bool,
    pub soft_temperature_limit_since_boot: bool,
}

impl Throttling {
    /// Parses `throttled=0x50005` (bits 0-3 now, 16-19 since boot).
    pub fn parse(text: &str) -> Option<Throttling> {
        let hex = text
            .trim()
            .strip_prefix("throttled=")?
            .trim_start_matches("0x");
        let raw = u32::from_str_radix(hex, 16).ok()?;
        let bit = |n: u32| raw & (1 << n) != 0;
        Some(Throttling {
            raw,
            under_voltage_now: bit(0),
            frequency_capped_now: bit(1),
            throttled_now: bit(2),
            soft_temperature_limit_now: bit(3),
            under_voltage_since_boot: bit(16),
            frequency_capped_since_boot: bit(17),
            throttled_since_boot: bit(18),
            soft_temperature_limit_since_boot: bit(19),
        })
    }

    /// Reads it with vcgencmd, when the tool exists (Raspberry Pi OS).
    pub fn read() -> Option<Throttling> {
        let output = std::process::Command::new("vcgencmd")
            .arg("get_throttled")
            .output()
            .ok()?;
        Throttling::parse(&String::from_utf8_lossy(&output.stdout))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Storage {
    pub mount_point: String,
    pub device: String,
    pub filesystem: String,
    pub mount_options: String,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fingerprint {
    pub hostname: String,
    pub headroom_version: String,
    pub cpu_model: String,
    pub cores: usize,
    /// Kernel architecture (uname -m).
    pub architecture: String,
    /// 32 or 64: the userland headroom was built for (a 64-bit OS ran Moodle faster in the study).
    pub userland_bits: u32,
    pub kernel: String,
    pub os_release: String,
    pub memory_mb: u64,
    pub swap_mb: u64,
    /// Swap in use when the fingerprint was taken.
    pub swap_used_mb: u64,
    pub storage: Option<Storage>,
    pub governor: Option<String>,
    pub frequency_min_mhz: Option<f64>,
    pub frequency_max_mhz: Option<f64>,
    pub frequency_mhz: Option<f64>,
    pub temperature_c: Option<f64>,
    pub throttling: Option<Throttling>,
    /// e.g. "kvm", "docker", "none".
    pub virtualization: String,
    pub cgroup_cpu_limit: Option<String>,
    pub cgroup_memory_limit_mb: Option<u64>,
    pub load_average: [f64; 3],
    pub raspberry_pi_model: Option<String>,
    /// A Raspberry Pi's board revision code (/proc/cpuinfo's Revision,
    /// e.g. c03114 for a Pi 4 B 4 GB rev 1.4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board_revision: Option<String>,
    /// The OS image the system was installed from (Raspberry Pi OS's
    /// /etc/rpi-issue first line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub os_image: Option<String>,
    /// The server's software and settings, on a host monitored as the
    /// server (an agent, or `--monitor local`); `None` elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::software::ServerSoftware>,
}

fn read(path: &Path) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().trim_end_matches('\0').to_string())
        .filter(|s| !s.is_empty())
}

fn mhz(path: PathBuf) -> Option<f64> {
    read(&path)?.parse::<f64>().ok().map(|khz| khz / 1000.0)
}

impl Fingerprint {
    /// The fingerprint of the host `roots` describe; `etc` is where
    /// os-release lives and `cwd` the directory whose storage matters.
    pub fn collect(roots: &Roots, etc: &Path, cwd: &Path, version: &str) -> Fingerprint {
        let proc_ = &roots.proc;
        let sys = &roots.sys;
        let snapshot = roots.snapshot(&[]);
        let cpuinfo = read(&proc_.join("cpuinfo")).unwrap_or_default();
        let field = |name: &str| {
            cpuinfo
                .lines()
                .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        let cores = cpuinfo
            .lines()
            .filter(|l| l.starts_with("processor"))
            .count();
        let cpu_model = field("model name")
            .or_else(|| field("Model"))
            .or_else(|| field("Hardware"))
            .unwrap_or_default();
        let os_release = read(&etc.join("os-release"))
            .and_then(|text| {
                text.lines().find_map(|l| {
                    l.strip_prefix("PRETTY_NAME=")
                        .map(|v| v.trim_matches('"').to_string())
                })
            })
            .unwrap_or_default();
        let cpufreq = sys.join("devices/system/cpu/cpu0/cpufreq");
        let pi_model =
            read(&proc_.join("device-tree/model")).filter(|m| m.contains("Raspberry Pi"));
        Fingerprint {
            hostname: read(&proc_.join("sys/kernel/hostname")).unwrap_or_default(),
            headroom_version: version.to_string(),
            cpu_model,
            cores: cores.max(snapshot.cpus.len().saturating_sub(1)),
            architecture: read(&proc_.join("sys/kernel/arch"))
                .unwrap_or_else(|| std::env::consts::ARCH.to_string()),
            userland_bits: if cfg!(target_pointer_width = "64") {
                64
            } else {
                32
            },
            kernel: read(&proc_.join("sys/kernel/osrelease")).unwrap_or_default(),
            os_release,
            memory_mb: snapshot.mem_total_kb / 1000,
            swap_mb: snapshot.swap_total_kb / 1000,
            swap_used_mb: snapshot.swap_total_kb.saturating_sub(snapshot.swap_free_kb) / 1000,
            storage: storage(proc_, sys, cwd),
            governor: read(&cpufreq.join("scaling_governor")),
            frequency_min_mhz: mhz(cpufreq.join("cpuinfo_min_freq")),
            frequency_max_mhz: mhz(cpufreq.join("cpuinfo_max_freq")),
            frequency_mhz: mhz(cpufreq.join("scaling_cur_freq")),
            temperature_c: snapshot.temperatures.values().copied().reduce(f64::max),
            throttling: if pi_model.is_some() {
                Throttling::read()
            } else {
                None
            },
            virtualization: virtualization(proc_, sys, &cpuinfo),
            cgroup_cpu_limit: read(&sys.join("fs/cgroup/cpu.max"))
                .filter(|v| !v.starts_with("max")),
            cgroup_memory_limit_mb: read(&sys.join("fs/cgroup/memory.max"))
                .and_then(|v| v.parse::<u64>().ok())
                .map(|b| b / 1_000_000),
            load_average: snapshot.load,
            board_revision: pi_model.as_ref().and_then(|_| field("Revision")),
            raspberry_pi_model: pi_model,
            os_image: read(&etc.join("rpi-issue"))
                .and_then(|t| t.lines().next().map(|l| l.trim().to_string()))
                .filter(|l| !l.is_empty()),
            server: None,
        }
    }

    /// With the server's software and settings read from this host's
    /// files (`watched`: the `--process` names whose command lines count).
    pub fn with_server(mut self, watched: &[String]) -> Fingerprint {
        let software =
            crate::software::ServerSoftware::collect(Path::new("/"), Path::new("/proc"), watched);
        self.server = (!software.is_empty()).then_some(software);
        self
    }

    /// This machine, the working directory's storage.
    pub fn local(version: &str) -> Fingerprint {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        Fingerprint::collect(&Roots::default(), Path::new("/etc"), &cwd, version)
    }
}

fn virtualization(proc_: &Path, sys: &Path, cpuinfo: &str) -> String {
    let cgroup = read(&proc_.join("1/cgroup")).unwrap_or_default();
    if proc_.join("../.dockerenv").exists() || cgroup.contains("docker") {
        return "docker".into();
    }
    if cgroup.contains("kubepods") {
        return "kubernetes".into();
    }
    if cgroup.contains("lxc") {
        return "lxc".into();
    }
    let vendor = format!(
        "{} {}",
        read(&sys.join("class/dmi/id/sys_vendor")).unwrap_or_default(),
        read(&sys.join("class/dmi/id/product_name")).unwrap_or_default()
    )
    .to_ascii_lowercase();
    for (needle, name) in [
        ("kvm", "kvm"),
        ("qemu", "qemu"),
        ("vmware", "vmware"),
        ("virtualbox", "virtualbox"),
        ("microsoft", "hyper-v"),
        ("xen", "xen"),
    ] {
        if vendor.contains(needle) {
            return name.into();
        }
    }
    if cpuinfo
        .lines()
        .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"))
    {
        return "vm".into();
    }
    "none".into()
}

/// The mount holding `path` on this host and its device's properties.
pub fn storage_at(path: &Path) -> Option<Storage> {
    storage(Path::new("/proc"), Path::new("/sys"), path)
}

/// The mount holding `cwd` (longest mount point that prefixes it) and its device's properties.
fn storage(proc_: &Path, sys: &Path, cwd: &Path) -> Option<Storage> {
    let mountinfo = read(&proc_.join("self/mountinfo"))?;
    let cwd = cwd.to_string_lossy();
    let mut best: Option<(usize, Storage, String)> = None;
    for line in mountinfo.lines() {
        let (left, right) = line.split_once(" - ")?;
        let l: Vec<&str> = left.split_whitespace().collect();
        let r: Vec<&str> = right.split_whitespace().collect();
        if l.len() < 6 || r.len() < 2 {
            continue;
        }
        let mount_point = l[4];
        let prefixes =
            cwd == mount_point || mount_point == "/" || cwd.starts_with(&format!("{mount_point}/"));
        if prefixes
            && best
                .as_ref()
                .is_none_or(|(len, _, _)| mount_point.len() > *len)
        {
            best = Some((
                mount_point.len(),
                Storage {
                    mount_point: mount_point.into(),
                    device: r[1].into(),
                    filesystem: r[0].into(),
                    mount_options: l[5].into(),
                    ..Default::default()
                },
                l[2].to_string(),
            ));
        }
    }
    let (_, mut storage, major_minor) = best?;
    // /sys/dev/block/MAJ:MIN is the partition or disk; its queue is on the disk.
    let dev = sys.join("dev/block").join(&major_minor);
    let disk = if dev.join("partition").exists() {
        dev.join("..")
    } else {
        dev
    };
    storage.rotational = read(&disk.join("queue/rotational")).map(|r| r == "1");
    storage.scheduler = read(&disk.join("queue/scheduler")).map(|s| {
        s.split('[')
            .nth(1)
            .and_then(|x| x.split(']').next())
            .unwrap_or(&s)
            .to_string()
    });
    storage.model = read(&disk.join("device/model")).or_else(|| read(&disk.join("device/name")));
    Some(storage)
}
