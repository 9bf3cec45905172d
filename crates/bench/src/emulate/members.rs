//! The processes in an emulation's control groups: stopped (SIGTERM, then
//! SIGKILL or `cgroup.kill`) and the groups removed, by headroom when the
//! command ends and by a guard process when headroom itself is killed.
//!
//! Everything here after [`Group::new`] runs in the guard, a child forked
//! from a process that may have other threads, so it calls only
//! async-signal-safe functions (open, read, write, kill, rmdir, nanosleep)
//! on memory prepared before the fork, and allocates nothing.

use std::ffi::{CStr, CString};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// How long the processes left in a group have to end after SIGTERM
/// before they are killed.
const GRACE_ROUNDS: u32 = 20;
/// Rounds of SIGKILL (and of `rmdir`) before giving up.
const KILL_ROUNDS: u32 = 50;
/// One round: 100 ms.
const ROUND_NS: libc::c_long = 100_000_000;

/// One control group's directory and files, as C strings.
#[derive(Debug)]
pub(super) struct Group {
    pub(super) dir: PathBuf,
    dir_c: CString,
    pub(super) procs: CString,
    /// cgroup v2's `cgroup.kill` (Linux 5.14): kills every process in
    /// the group at once, those forking meanwhile included.
    kill: CString,
}

fn c_path(path: &Path) -> Result<CString, String> {
    CString::new(path.to_string_lossy().into_owned()).map_err(|e| e.to_string())
}

impl Group {
    pub(super) fn new(dir: &Path) -> Result<Group, String> {
        Ok(Group {
            dir: dir.to_path_buf(),
            dir_c: c_path(dir)?,
            procs: c_path(&dir.join("cgroup.procs"))?,
            kill: c_path(&dir.join("cgroup.kill"))?,
        })
    }
}

/// `n` in decimal, at the end of `digits`.
pub(super) fn decimal(mut n: u64, digits: &mut [u8; 20]) -> &[u8] {
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &digits[at..]
}

/// Sends `signal` (0: none, only counted) to each process listed in
/// `procs`; how many were listed.
fn signal_members(procs: &CStr, signal: libc::c_int) -> usize {
    // SAFETY: open, read, kill and close on buffers owned here.
    unsafe {
        let fd = libc::open(procs.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return 0;
        }
        let own = libc::getpid();
        let (mut count, mut pid, mut in_number) = (0, 0 as libc::pid_t, false);
        let mut buf = [0u8; 4096];
        let mut signal_one = |pid: libc::pid_t| {
            if pid > 0 && pid != own {
                libc::kill(pid, signal);
                count += 1;
            }
        };
        loop {
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            if n <= 0 {
                break;
            }
            for &b in &buf[..n as usize] {
                if b.is_ascii_digit() {
                    pid = pid
                        .saturating_mul(10)
                        .saturating_add((b - b'0') as libc::pid_t);
                    in_number = true;
                } else if in_number {
                    signal_one(pid);
                    (pid, in_number) = (0, false);
                }
            }
        }
        if in_number {
            signal_one(pid);
        }
        libc::close(fd);
        count
    }
}

/// Every process in `group` killed: by `cgroup.kill` where the kernel
/// has it, else one by one.
fn kill_all(group: &Group) {
    // SAFETY: open, write and close on a path owned by `group`.
    let killed = unsafe {
        let fd = libc::open(group.kill.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        fd >= 0 && {
            let written = libc::write(fd, b"1".as_ptr().cast(), 1);
            libc::close(fd);
            written == 1
        }
    };
    if !killed {
        signal_members(&group.procs, libc::SIGKILL);
    }
}

fn pause_a_round() {
    let round = libc::timespec {
        tv_sec: 0,
        tv_nsec: ROUND_NS,
    };
    // SAFETY: a valid timespec; an interrupted sleep only ends early.
    unsafe { libc::nanosleep(&round, std::ptr::null_mut()) };
}

fn empty(groups: &[Group]) -> bool {
    groups.iter().all(|g| signal_members(&g.procs, 0) == 0)
}

/// Stops the processes in `groups`: SIGTERM, up to 2 s to end, then
/// killed. How many there were (a process is in each of a v1 emulation's
/// groups: the most any group held).
pub(super) fn stop_members(groups: &[Group]) -> usize {
    let found = groups
        .iter()
        .map(|g| signal_members(&g.procs, libc::SIGTERM))
        .max()
        .unwrap_or(0);
    if found == 0 {
        return 0;
    }
    for _ in 0..GRACE_ROUNDS {
        if empty(groups) {
            return found;
        }
        pause_a_round();
    }
    for _ in 0..KILL_ROUNDS {
        if empty(groups) {
            break;
        }
        groups.iter().for_each(kill_all);
        pause_a_round();
    }
    found
}

/// Removes `group`'s directory, retrying while its last processes leave
/// it; the error number when it cannot (0 when it was already gone).
pub(super) fn remove(group: &Group) -> Result<(), libc::c_int> {
    for _ in 0..KILL_ROUNDS {
        // SAFETY: rmdir on a path owned by `group`; errno read at once.
        let errno = unsafe {
            if libc::rmdir(group.dir_c.as_ptr()) == 0 {
                return Ok(());
            }
            *libc::__errno_location()
        };
        match errno {
            libc::ENOENT => return Ok(()),
            libc::EBUSY | libc::EINTR => pause_a_round(),
            other => return Err(other),
        }
    }
    Err(libc::EBUSY)
}

/// The guard: a process outside the groups, in a session of its own, that
/// waits for headroom to end however it ends (killed with SIGKILL too: the
/// end of a pipe it holds closes), then stops what is left in the groups
/// and removes them. When headroom ended normally it has done so already
/// and the guard finds nothing.
#[derive(Debug)]
pub(super) struct Guard {
    /// Closed when headroom ends: the guard's signal to act.
    alive: OwnedFd,
    pid: libc::pid_t,
}

impl Guard {
    pub(super) fn start(groups: &[Group]) -> std::io::Result<Guard> {
        let mut ends = [0 as libc::c_int; 2];
        // SAFETY: pipe2 fills the two descriptors; O_CLOEXEC keeps them out
        // of the command.
        if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let [read_end, write_end] = ends;
        // SAFETY: the child runs only async-signal-safe calls (see
        // guard_main) and ends with _exit.
        match unsafe { libc::fork() } {
            -1 => {
                let e = std::io::Error::last_os_error();
                // SAFETY: both descriptors are owned here.
                unsafe {
                    libc::close(read_end);
                    libc::close(write_end);
                }
                Err(e)
            }
            0 => guard_main(read_end, write_end, groups),
            pid => {
                // SAFETY: the read end is the guard's; the write end is owned here.
                unsafe { libc::close(read_end) };
                Ok(Guard {
                    alive: unsafe { OwnedFd::from_raw_fd(write_end) },
                    pid,
                })
            }
        }
    }

    /// Lets the guard go (headroom has stopped and removed everything)
    /// and waits for it to end.
    pub(super) fn release(self) {
        let Guard { alive, pid } = self;
        drop(alive);
        // SAFETY: waits for this process's own child.
        unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
    }
}

/// The guard's life: wait for the pipe to close, then clean up.
fn guard_main(read_end: libc::c_int, write_end: libc::c_int, groups: &[Group]) -> ! {
    // SAFETY: async-signal-safe calls only, on descriptors of this process
    // and memory prepared before the fork.
    unsafe {
        libc::close(write_end);
        // Out of the terminal's process group: Ctrl-C and a kill of
        // headroom's group do not reach it.
        libc::setsid();
        // Only standard error is kept (to say what it did); the command's
        // other descriptors are not held open.
        for fd in (0..1024).filter(|&fd| fd != 2 && fd != read_end) {
            libc::close(fd);
        }
        let mut byte = 0u8;
        loop {
            let n = libc::read(read_end, (&mut byte as *mut u8).cast(), 1);
            if n == 0 || (n < 0 && *libc::__errno_location() != libc::EINTR) {
                break;
            }
        }
        let stopped = stop_members(groups);
        for group in groups {
            let _ = remove(group);
        }
        if stopped > 0 {
            say_stopped(stopped as u64);
        }
        libc::_exit(0)
    }
}

/// "headroom emulate: headroom ended before its command; 2 processes left
/// in its control groups were stopped and the groups removed", on
/// standard error.
fn say_stopped(stopped: u64) {
    let mut digits = [0u8; 20];
    let parts: [&[u8]; 4] = [
        b"headroom emulate: headroom ended before its command; ",
        decimal(stopped, &mut digits),
        if stopped == 1 {
            &b" process left in its control groups was stopped"[..]
        } else {
            &b" processes left in its control groups were stopped"[..]
        },
        b" and the groups removed\n",
    ];
    for part in parts {
        // SAFETY: write of a buffer owned here.
        unsafe { libc::write(2, part.as_ptr().cast(), part.len()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_in_decimal() {
        let mut digits = [0u8; 20];
        assert_eq!(decimal(0, &mut digits), b"0");
        assert_eq!(decimal(26223, &mut digits), b"26223");
        assert_eq!(decimal(u64::MAX, &mut digits), b"18446744073709551615");
    }

    /// A file in the format of `cgroup.procs`: each listed process is
    /// signalled (0 here, only counted), this process never.
    #[test]
    fn members_are_read_from_the_procs_file() {
        let dir = std::env::temp_dir().join(format!("headroom-members-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let procs = dir.join("cgroup.procs");
        std::fs::write(&procs, format!("{}\n1\n", std::process::id())).unwrap();
        let group = Group::new(&dir).unwrap();
        assert_eq!(signal_members(&group.procs, 0), 1);
        std::fs::write(&procs, "").unwrap();
        assert_eq!(signal_members(&group.procs, 0), 0);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(signal_members(&group.procs, 0), 0);
    }
}
