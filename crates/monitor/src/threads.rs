//! What a watched process's threads are doing, from the process's own
//! entries in /proc: each thread's state and, for a sleeping one, the
//! kernel function it sleeps in (`wchan`), sorted into what it waits for
//! ([`Waiting`]); the time its threads waited runnable for a CPU
//! (`schedstat`'s run delay); and whether it is a pool's worker waiting
//! for work (php-fpm's "pool NAME" title, blocked in accept).

use serde::{Deserialize, Serialize};
use std::fs;
use std::path::Path;

/// What a thread waits for, sorted from its state and wchan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// On a CPU or runnable (R).
    Running,
    /// Uninterruptible sleep (D): a disk or file system, mostly.
    Disk,
    /// A lock (a futex).
    Lock,
    /// A read on a socket or pipe, or poll or select on one: a reply
    /// from a database, a cache, a client.
    Network,
    /// epoll: an event loop's idle time.
    Events,
    /// A new connection (accept): a worker with nothing to do.
    Accept,
    /// A timer (sleep, usleep).
    Timer,
    /// Anything else.
    Other,
    /// Sleeping on something the kernel does not say: wchan is "0" to a
    /// reader who may not trace the process (not root, another user's).
    Unknown,
}

/// How many threads waited for each thing at one look.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ThreadStates {
    pub running: u32,
    pub disk: u32,
    pub lock: u32,
    pub network: u32,
    pub events: u32,
    pub accept: u32,
    pub timer: u32,
    pub other: u32,
    /// Sleeping, on what unknown (wchan unreadable: run as root to know).
    pub unknown: u32,
}

impl ThreadStates {
    pub fn add(&mut self, waiting: Waiting) {
        let slot = match waiting {
            Waiting::Running => &mut self.running,
            Waiting::Disk => &mut self.disk,
            Waiting::Lock => &mut self.lock,
            Waiting::Network => &mut self.network,
            Waiting::Events => &mut self.events,
            Waiting::Accept => &mut self.accept,
            Waiting::Timer => &mut self.timer,
            Waiting::Other => &mut self.other,
            Waiting::Unknown => &mut self.unknown,
        };
        *slot += 1;
    }

    pub fn merge(&mut self, other: &ThreadStates) {
        self.running += other.running;
        self.disk += other.disk;
        self.lock += other.lock;
        self.network += other.network;
        self.events += other.events;
        self.accept += other.accept;
        self.timer += other.timer;
        self.other += other.other;
        self.unknown += other.unknown;
    }

    pub fn total(&self) -> u32 {
        self.running
            + self.disk
            + self.lock
            + self.network
            + self.events
            + self.accept
            + self.timer
            + self.other
            + self.unknown
    }

    /// The states by name, in a fixed order, for text and columns.
    pub fn named(&self) -> [(&'static str, u32); 9] {
        [
            ("running", self.running),
            ("disk", self.disk),
            ("lock", self.lock),
            ("network", self.network),
            ("events", self.events),
            ("accept", self.accept),
            ("timer", self.timer),
            ("other", self.other),
            ("unknown", self.unknown),
        ]
    }
}

/// What a thread in `state` (stat's third field) sleeping in `wchan`
/// waits for. The kernel functions are those of Linux 5.x and 6.x.
pub fn classify(state: char, wchan: &str) -> Waiting {
    match state {
        'R' => return Waiting::Running,
        'D' => return Waiting::Disk,
        _ => {}
    }
    let w = wchan.trim();
    let any = |names: &[&str]| names.iter().any(|n| w.starts_with(n));
    if w.is_empty() || w == "0" {
        Waiting::Unknown
    } else if any(&["futex_"]) {
        Waiting::Lock
    } else if any(&[
        "inet_csk_accept",
        "inet_csk_wait_for_connect",
        "unix_accept",
        "__skb_wait_for_more_packets",
    ]) {
        // A unix socket's accept waits in __skb_wait_for_more_packets.
        Waiting::Accept
    } else if any(&["do_epoll_wait", "ep_poll"]) {
        // An event loop waiting for anything to do.
        Waiting::Events
    } else if any(&[
        // poll and select wait for one reply (PHP's database and cache
        // clients wait so); an event loop waits in epoll.
        "poll_schedule_timeout",
        "do_sys_poll",
        "do_select",
        "core_sys_select",
        "sk_wait_data",
        "wait_woken",
        "unix_stream_read_generic",
        "unix_stream_data_wait",
        "tcp_recvmsg",
        "pipe_read",
        "pipe_wait",
        "sk_stream_wait_memory",
    ]) {
        Waiting::Network
    } else if any(&["hrtimer_nanosleep", "do_nanosleep", "clock_nanosleep"]) {
        Waiting::Timer
    } else if any(&[
        "io_schedule",
        "jbd2_",
        "folio_wait",
        "wait_on_page",
        "blkdev_",
    ]) {
        Waiting::Disk
    } else {
        Waiting::Other
    }
}

/// One process's threads at one look.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessThreads {
    pub states: ThreadStates,
    /// Nanoseconds its threads have waited runnable for a CPU, summed
    /// (schedstat's second field), since each started.
    pub run_delay_ns: u64,
    /// Major page faults since it started (stat's majflt).
    pub major_faults: u64,
}

/// The state letter and major faults of a /proc/[pid]/stat (or task) line.
fn state_and_faults(stat: &str) -> Option<(char, u64)> {
    let close = stat.rfind(')')?;
    let mut fields = stat.get(close + 1..)?.split_whitespace();
    let state = fields.next()?.chars().next()?;
    // After the state: ppid pgrp session tty_nr tpgid flags minflt cminflt majflt.
    let majflt = fields.nth(8).and_then(|v| v.parse().ok()).unwrap_or(0);
    Some((state, majflt))
}

/// Reads the threads of the process whose /proc directory is `dir`;
/// `None` when it ended meanwhile.
pub fn read_threads(dir: &Path) -> Option<ProcessThreads> {
    let tasks = fs::read_dir(dir.join("task")).ok()?;
    let mut threads = ProcessThreads::default();
    let mut seen = false;
    for task in tasks.flatten() {
        let path = task.path();
        let Some((state, faults)) = fs::read_to_string(path.join("stat"))
            .ok()
            .as_deref()
            .and_then(state_and_faults)
        else {
            continue;
        };
        seen = true;
        let wchan = fs::read_to_string(path.join("wchan")).unwrap_or_default();
        threads.states.add(classify(state, &wchan));
        threads.major_faults += faults;
        if let Some(delay) = fs::read_to_string(path.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        {
            threads.run_delay_ns += delay;
        }
    }
    seen.then_some(threads)
}

/// The pool a worker serves, from its title: php-fpm names its workers
/// "php-fpm: pool www".
pub fn pool_of(cmdline: &str) -> Option<String> {
    let title = cmdline.split('\0').next()?.trim();
    let (_, pool) = title.split_once(": pool ")?;
    let pool = pool.trim();
    (!pool.is_empty()).then(|| pool.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_sorted_by_what_they_wait_for() {
        assert_eq!(classify('R', "0"), Waiting::Running);
        assert_eq!(classify('D', "folio_wait_bit_common"), Waiting::Disk);
        assert_eq!(classify('S', "futex_wait_queue"), Waiting::Lock);
        assert_eq!(classify('S', "inet_csk_accept"), Waiting::Accept);
        assert_eq!(
            classify('S', "__skb_wait_for_more_packets"),
            Waiting::Accept
        );
        assert_eq!(classify('S', "do_epoll_wait"), Waiting::Events);
        assert_eq!(
            classify('S', "poll_schedule_timeout.constprop.0"),
            Waiting::Network
        );
        assert_eq!(classify('S', "wait_woken"), Waiting::Network);
        assert_eq!(classify('S', "unix_stream_read_generic"), Waiting::Network);
        assert_eq!(classify('S', "hrtimer_nanosleep"), Waiting::Timer);
        assert_eq!(classify('S', "0"), Waiting::Unknown);
        assert_eq!(classify('I', ""), Waiting::Unknown);
        assert_eq!(classify('S', "pipe_write"), Waiting::Other);
    }

    #[test]
    fn a_stat_line_gives_its_state_and_major_faults() {
        let line = "6203 (php-fpm8.2) S 6201 6201 1 0 -1 4194624 1500 0 7 0 12 3 0 0 20 0 1 0";
        assert_eq!(state_and_faults(line), Some(('S', 7)));
        assert_eq!(state_and_faults("garbage"), None);
    }

    #[test]
    fn a_php_fpm_worker_names_its_pool() {
        assert_eq!(
            pool_of("php-fpm: pool www                     \0\0"),
            Some("www".into())
        );
        assert_eq!(
            pool_of("php-fpm: master process (/etc/php/8.2/fpm/php-fpm.conf)"),
            None
        );
        assert_eq!(pool_of("/usr/sbin/nginx\0-g\0daemon off;"), None);
        assert_eq!(pool_of(""), None);
    }

    #[test]
    fn this_process_has_a_running_thread() {
        let me = read_threads(Path::new("/proc/self")).unwrap();
        assert!(me.states.running >= 1, "{:?}", me.states);
        assert!(read_threads(Path::new("/proc/not-a-process")).is_none());
    }
}
