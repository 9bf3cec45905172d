//! The disk operations a second a process's control group may do (cgroup
//! v2's io.max riops/wiops, v1's blkio.throttle.*_iops_device: what
//! `headroom emulate --iops` sets, or a container's limit) and the
//! operations it did, to judge the limit by.

use crate::pressure::nearest;
use std::fs;
use std::path::Path;

/// A group's IOPS limit and the operations its tasks did since it began.
#[derive(Debug, Clone, PartialEq)]
pub struct CgroupIo {
    /// The group that sets the limit (the process's own, or a parent).
    pub path: String,
    /// The least of its read and write limits, operations a second.
    pub iops: u64,
    /// Reads and writes done on the limited devices.
    pub ios: u64,
}

/// The IOPS limit that holds the process `pid`, where one does.
pub fn cgroup_io(proc_: &Path, sys: &Path, pid: &str) -> Option<CgroupIo> {
    let groups = fs::read_to_string(proc_.join(pid).join("cgroup")).ok()?;
    let root = sys.join("fs/cgroup");
    // v1: "6:blkio:/path"; v2: "0::/path".
    let v1 = groups.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        names
            .split(',')
            .any(|n| n == "blkio")
            .then(|| (names.to_string(), path.trim().to_string()))
    });
    if let Some((names, own)) = v1 {
        let mount = root.join(&names);
        let mount = if mount.exists() {
            mount
        } else {
            root.join("blkio")
        };
        return nearest(&own, |path| {
            let dir = mount.join(path);
            let limits = [
                "blkio.throttle.read_iops_device",
                "blkio.throttle.write_iops_device",
            ]
            .map(|f| v1_limits(&fs::read_to_string(dir.join(f)).unwrap_or_default()));
            let devices: Vec<&str> = limits.iter().flatten().map(|(d, _)| d.as_str()).collect();
            let iops = limits.iter().flatten().map(|(_, n)| *n).min()?;
            let serviced = fs::read_to_string(dir.join("blkio.throttle.io_serviced")).ok()?;
            Some(CgroupIo {
                path: format!("/{path}"),
                iops,
                ios: v1_serviced(&serviced, &devices),
            })
        });
    }
    let own = groups.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    nearest(own, |path| {
        let dir = root.join(path);
        let limits = v2_limits(&fs::read_to_string(dir.join("io.max")).ok()?);
        let iops = limits.iter().map(|(_, n)| *n).min()?;
        let devices: Vec<&str> = limits.iter().map(|(d, _)| d.as_str()).collect();
        let stat = fs::read_to_string(dir.join("io.stat")).unwrap_or_default();
        Some(CgroupIo {
            path: format!("/{path}"),
            iops,
            ios: v2_ios(&stat, &devices),
        })
    })
}

/// v1's "8:0 100" lines: each device's limit.
fn v1_limits(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|l| {
            let (device, n) = l.trim().split_once(' ')?;
            Some((device.to_string(), n.trim().parse().ok()?))
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// v1's io_serviced: the reads and writes of `devices`.
fn v1_serviced(text: &str, devices: &[&str]) -> u64 {
    text.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let (device, kind, n) = (words.next()?, words.next()?, words.next()?);
            (devices.contains(&device) && (kind == "Read" || kind == "Write"))
                .then(|| n.parse::<u64>().ok())?
        })
        .sum()
}

/// v2's io.max lines ("8:0 rbps=max wbps=max riops=100 wiops=100"): each
/// device's least IOPS limit.
fn v2_limits(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let device = words.next()?.to_string();
            let least = words
                .filter_map(|w| {
                    let n = w
                        .strip_prefix("riops=")
                        .or_else(|| w.strip_prefix("wiops="))?;
                    n.parse::<u64>().ok()
                })
                .min()?;
            Some((device, least))
        })
        .collect()
}

/// v2's io.stat: the reads and writes of `devices`.
fn v2_ios(text: &str, devices: &[&str]) -> u64 {
    text.lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|d| devices.contains(&d))
        })
        .flat_map(|l| l.split_whitespace().skip(1))
        .filter_map(|w| {
            w.strip_prefix("rios=")
                .or_else(|| w.strip_prefix("wios="))?
                .parse::<u64>()
                .ok()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_operations_are_read_as_each_version_writes_them() {
        assert_eq!(v1_limits("8:0 100\n"), vec![("8:0".into(), 100)]);
        assert_eq!(v1_limits(""), vec![]);
        let serviced = "8:0 Read 12\n8:0 Write 30\n8:0 Sync 30\n8:0 Async 12\n8:0 Total 42\n8:16 Read 5\nTotal 47\n";
        assert_eq!(v1_serviced(serviced, &["8:0"]), 42);
        assert_eq!(
            v2_limits("254:0 rbps=max wbps=max riops=100 wiops=150\n"),
            vec![("254:0".into(), 100)]
        );
        assert_eq!(
            v2_limits("254:0 rbps=1000000 wbps=max riops=max wiops=max\n"),
            vec![]
        );
        let stat =
            "254:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n259:0 rios=7 wios=7\n";
        assert_eq!(v2_ios(stat, &["254:0"]), 3);
    }

    #[test]
    fn a_group_with_a_v1_limit_is_found_at_the_nearest_parent() {
        let root = std::env::temp_dir().join(format!("headroom-cgroup-io-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let proc_ = root.join("proc");
        fs::create_dir_all(proc_.join("42")).unwrap();
        fs::write(
            proc_.join("42/cgroup"),
            "6:blkio:/emulate/inner\n4:cpu,cpuacct:/\n",
        )
        .unwrap();
        let group = root.join("sys/fs/cgroup/blkio/emulate");
        fs::create_dir_all(group.join("inner")).unwrap();
        fs::write(group.join("blkio.throttle.read_iops_device"), "8:0 100\n").unwrap();
        fs::write(group.join("blkio.throttle.write_iops_device"), "8:0 100\n").unwrap();
        fs::write(
            group.join("blkio.throttle.io_serviced"),
            "8:0 Read 3\n8:0 Write 9\nTotal 12\n",
        )
        .unwrap();
        let io = cgroup_io(&proc_, &root.join("sys"), "42").unwrap();
        assert_eq!(
            io,
            CgroupIo {
                path: "/emulate".into(),
                iops: 100,
                ios: 12
            }
        );
        fs::remove_dir_all(&root).unwrap();
    }
}
