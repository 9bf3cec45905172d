//! What a runner that was killed (`kill -9`, a crash, a lost session) left
//! running: each run and service it starts is written to
//! [`CHILDREN`](crate::store::CHILDREN) with its process id and its start
//! time (from `/proc/<pid>/stat`), and removed when it ends. A resumed
//! runner stops every recorded process group whose leader is still the
//! same process (same pid, same start time), so it never measures beside
//! an orphan, and never signals an unrelated process that reused the pid.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long a leftover has to stop after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// One recorded child: the leader of its own process group.
#[derive(Debug, Clone, PartialEq)]
pub struct Child {
    pub pid: u32,
    /// Clock ticks after boot at which it started (`/proc/<pid>/stat`
    /// field 22); 0 when it could not be read.
    pub started: u64,
    /// `run` or `service`.
    pub kind: String,
    /// What it was: `cells/c1-level-a/r2` for a run, the service's name.
    pub what: String,
}

/// A process's start time, in clock ticks after boot (`None` when it
/// does not exist).
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    // After ')': field 3 (state) is the first; field 22 the 20th.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// The study's record of its running children.
#[derive(Debug, Clone)]
pub struct Record {
    path: PathBuf,
}

impl Record {
    pub fn new(path: PathBuf) -> Record {
        Record { path }
    }

    /// Adds a child that was just started (its pid is its process group).
    pub fn add(&self, pid: u32, kind: &str, what: &str) {
        let started = start_time(pid).unwrap_or(0);
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
        {
            let what = what.replace(['\n', '\r'], " ");
            let _ = writeln!(f, "{pid} {started} {kind} {what}");
            let _ = f.sync_data();
        }
    }

    /// Removes a child that ended or was stopped.
    pub fn remove(&self, pid: u32) {
        let left: Vec<Child> = self.read().into_iter().filter(|c| c.pid != pid).collect();
        if left.is_empty() {
            let _ = std::fs::remove_file(&self.path);
            return;
        }
        let text: String = left
            .iter()
            .map(|c| format!("{} {} {} {}\n", c.pid, c.started, c.kind, c.what))
            .collect();
        let _ = crate::store::write_atomic(&self.path, text.as_bytes());
    }

    pub fn read(&self) -> Vec<Child> {
        let Ok(text) = std::fs::read_to_string(&self.path) else {
            return Vec::new();
        };
        text.lines()
            .filter_map(|line| {
                let mut parts = line.splitn(4, ' ');
                Some(Child {
                    pid: parts.next()?.parse().ok()?,
                    started: parts.next()?.parse().ok()?,
                    kind: parts.next()?.to_string(),
                    what: parts.next().unwrap_or_default().to_string(),
                })
            })
            .collect()
    }

    /// Stops what a dead runner left: every recorded child whose process
    /// group still has a running member, unless its pid now belongs to
    /// another process (another start time). The whole group is stopped:
    /// a service's shell that got SIGTERM with its runner may have left
    /// the programs it forked. Returns the ones it stopped and empties
    /// the record.
    pub fn stop_all(&self) -> Vec<Child> {
        let mut stopped = Vec::new();
        for child in self.read() {
            if child.pid <= 1 || child.pid == std::process::id() {
                continue;
            }
            // The leader, alive or a zombie, is the recorded process; or
            // it is gone, and then no new process can have its pid while
            // its group has members.
            let reused =
                start_time(child.pid).is_some_and(|now| child.started != 0 && now != child.started);
            if !reused && running_members(child.pid) {
                stop_group(child.pid);
                stopped.push(child);
            }
        }
        let _ = std::fs::remove_file(&self.path);
        stopped
    }
}

/// `/proc/<pid>/stat`'s fields after the command name: state first.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// Whether a process of group `pgid` still runs (zombies do not).
fn running_members(pgid: u32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(stat_fields)
        .any(|f| {
            f.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
                && f.first().is_some_and(|s| s != "Z" && s != "X")
        })
}

/// SIGTERM to the group, SIGKILL after [`GRACE`].
fn stop_group(pgid: u32) {
    // SAFETY: kill(2) on a process group this study started.
    unsafe {
        libc::kill(-(pgid as libc::pid_t), libc::SIGTERM);
    }
    let started = Instant::now();
    while running_members(pgid) && started.elapsed() < GRACE {
        std::thread::sleep(Duration::from_millis(50));
    }
    if running_members(pgid) {
        // SAFETY: as above.
        unsafe {
            libc::kill(-(pgid as libc::pid_t), libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_recorded_child_is_stopped_and_a_reused_pid_is_left_alone() {
        let dir = std::env::temp_dir().join(format!("headroom-leftovers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let record = Record::new(dir.join("children.pids"));
        let mut orphan = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        record.add(orphan.id(), "run", "cells/c1-a/r2");
        assert_ne!(start_time(orphan.id()), None);
        // A record whose start time is not the process's: a reused pid.
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join("children.pids"))
            .and_then(|mut f| writeln!(f, "{} 1 service db", other.id()))
            .unwrap();
        assert_eq!(record.read().len(), 2);
        let stopped = record.stop_all();
        assert_eq!(stopped.len(), 1, "{stopped:?}");
        assert_eq!(stopped[0].what, "cells/c1-a/r2");
        assert!(orphan.wait().unwrap().code().is_none(), "not signalled");
        assert_eq!(
            other.try_wait().unwrap(),
            None,
            "the unrelated process was signalled"
        );
        assert!(record.read().is_empty());
        other.kill().unwrap();
        other.wait().unwrap();
        // A service's shell that ended (with its runner) and left what it
        // forked: the group is stopped.
        let shell = std::process::Command::new("sh")
            .args(["-c", "sleep 30 >/dev/null & echo $!"])
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let group = shell.id();
        record.add(group, "service", "'db' of cell store=redis");
        let output = shell.wait_with_output().unwrap();
        let forked: u32 = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .unwrap();
        assert!(start_time(forked).is_some());
        let stopped = record.stop_all();
        assert_eq!(stopped.len(), 1, "{stopped:?}");
        let gone = std::time::Instant::now();
        while stat_fields(forked).is_some_and(|f| f[0] != "Z") && gone.elapsed() < GRACE {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            stat_fields(forked).is_none_or(|f| f[0] == "Z"),
            "the service's forked child still runs"
        );
        record.add(std::process::id(), "run", "x");
        record.remove(std::process::id());
        assert!(!dir.join("children.pids").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
