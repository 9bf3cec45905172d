//! The processes an experiment starts: hooks (shell commands that must end,
//! within a timeout), services (shell commands that run through a cell,
//! ready when a port or URL answers, stopped by process group) and runs.
//! Every output goes to a log file; errors carry the log's last lines.

use crate::plan::PlannedReady;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const POLL: Duration = Duration::from_millis(50);
/// How long a service has to stop after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// Lines of a log shown with an error.
const TAIL_LINES: usize = 15;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// From now on Ctrl-C and SIGTERM set [`interrupted`] instead of ending
/// the process, so the runner can stop its services and keep its runs.
pub fn catch_interrupts() {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The last lines of a log, indented, for an error message.
pub fn tail(path: &Path) -> String {
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(8000)));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(TAIL_LINES);
    lines[from..]
        .iter()
        .map(|l| format!("    | {l}\n"))
        .collect()
}

/// Why a process failed, with the end of its log.
#[derive(Debug, Clone)]
pub struct ProcessError {
    pub what: String,
    pub log: PathBuf,
}

impl std::fmt::Display for ProcessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.log.exists() {
            return write!(f, "{}", self.what);
        }
        let tail = tail(&self.log);
        write!(f, "{} (its output: {})", self.what, self.log.display())?;
        if !tail.is_empty() {
            write!(f, "; its last lines:\n{}", tail.trim_end())?;
        }
        Ok(())
    }
}

fn log_file(log: &Path) -> std::io::Result<(std::fs::File, std::fs::File)> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    let err = out.try_clone()?;
    Ok((out, err))
}

/// A hook: a shell in its own process group that gets SIGTERM if the
/// runner dies.
fn shell(command: &str, log: &Path, env: &[(String, String)]) -> std::io::Result<Child> {
    let mut command = shell_command(command, log, env)?;
    die_with_runner(&mut command, libc::SIGTERM);
    command.spawn()
}

/// Makes the child get `signal` when the runner dies (Linux's
/// PR_SET_PDEATHSIG). The signal comes when the *thread* that spawned the
/// child ends, so a child must be spawned by a thread that outlives it:
/// hooks and services by the runner's main thread, a run by the thread
/// that waits for it. A runner that died before the child set this up is
/// seen by the child's parent id changing: the child then does not start.
fn die_with_runner(command: &mut Command, signal: libc::c_int) {
    let runner = std::process::id() as libc::pid_t;
    // SAFETY: prctl(2) and getppid(2) are async-signal-safe and touch no
    // memory of the parent.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != runner {
                // The runner ended (no allocation between fork and exec).
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

fn shell_command(command: &str, log: &Path, env: &[(String, String)]) -> std::io::Result<Command> {
    let (out, err) = log_file(log)?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    Ok(cmd)
}

fn kill_group(pgid: u32, signal: libc::c_int) {
    // SAFETY: kill(2) with a negative pid signals a process group.
    unsafe {
        libc::kill(-(pgid as libc::pid_t), signal);
    }
}

/// Whether a process group still has a member.
fn group_alive(pgid: u32) -> bool {
    // SAFETY: signal 0 only checks that the group exists.
    unsafe { libc::kill(-(pgid as libc::pid_t), 0) == 0 }
}

/// Runs a hook to its end: `what` names it in errors ("the setup of cell
/// store=redis"). A hook still running at `timeout` is killed. It is in
/// `record` while it runs, so a resumed runner stops it if the runner
/// died meanwhile.
pub fn run_hook(
    what: &str,
    command: &str,
    log: &Path,
    env: &[(String, String)],
    timeout: Duration,
    record: &crate::leftovers::Record,
) -> Result<(), ProcessError> {
    let mut child = shell(command, log, env).map_err(|e| ProcessError {
        what: format!("{what} could not start: {e}"),
        log: log.to_path_buf(),
    })?;
    record.add(child.id(), "hook", what);
    let result = wait_hook(&mut child, what, command, log, timeout);
    record.remove(child.id());
    result
}

fn wait_hook(
    child: &mut Child,
    what: &str,
    command: &str,
    log: &Path,
    timeout: Duration,
) -> Result<(), ProcessError> {
    let fail = |what: String| ProcessError {
        what,
        log: log.to_path_buf(),
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                kill_group(child.id(), libc::SIGKILL);
                return Err(fail(format!(
                    "{what} failed ({}): `{command}`",
                    describe_status(status)
                )));
            }
            Ok(None) => {}
            Err(e) => return Err(fail(format!("{what}: lost track of `{command}`: {e}"))),
        }
        if interrupted() {
            kill_group(child.id(), libc::SIGKILL);
            let _ = child.wait();
            return Err(fail(format!("{what} was interrupted: `{command}`")));
        }
        if started.elapsed() > timeout {
            kill_group(child.id(), libc::SIGKILL);
            let _ = child.wait();
            return Err(fail(format!(
                "{what} did not end within {} and was stopped: `{command}` (raise hook_timeout: if it needs longer)",
                humantime::format_duration(timeout)
            )));
        }
        std::thread::sleep(POLL);
    }
}

pub fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => "ended abnormally".into(),
    }
}

/// A service started for a cell.
pub struct RunningService {
    pub name: String,
    child: Child,
    pub log: PathBuf,
}

impl RunningService {
    pub fn start(
        name: &str,
        command: &str,
        log: &Path,
        env: &[(String, String)],
    ) -> Result<RunningService, ProcessError> {
        let fail = |e: std::io::Error| ProcessError {
            what: format!("service '{name}' could not start: {e}"),
            log: log.to_path_buf(),
        };
        let mut command = shell_command(command, log, env).map_err(fail)?;
        // The service (its shell, or the program it execs) gets SIGTERM if
        // the runner dies; what it forked is stopped by a resumed runner
        // (its process group is recorded).
        die_with_runner(&mut command, libc::SIGTERM);
        let child = command.spawn().map_err(fail)?;
        Ok(RunningService {
            name: name.to_string(),
            child,
            log: log.to_path_buf(),
        })
    }

    /// The process group to stop if the runner itself dies.
    pub fn group(&self) -> u32 {
        self.child.id()
    }

    /// `None` while it runs; how it ended otherwise.
    pub fn ended(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(describe_status(status)),
            _ => None,
        }
    }

    /// Waits until the service answers; fails when it exits first or
    /// does not answer within `timeout`.
    pub fn wait_ready(
        &mut self,
        ready: Option<&PlannedReady>,
        timeout: Duration,
    ) -> Result<Duration, ProcessError> {
        let started = Instant::now();
        let fail = |what: String| ProcessError {
            what,
            log: self.log.clone(),
        };
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(fail(format!(
                    "service '{}' ended before it was ready ({})",
                    self.name,
                    describe_status(status)
                )));
            }
            let answered = match ready {
                None => true,
                Some(PlannedReady::Tcp(address)) => tcp_answers(address),
                Some(PlannedReady::Http(url)) => http_answers(url),
            };
            if answered {
                return Ok(started.elapsed());
            }
            if interrupted() {
                return Err(fail(format!(
                    "interrupted while waiting for service '{}'",
                    self.name
                )));
            }
            if started.elapsed() > timeout {
                let what = match ready {
                    Some(PlannedReady::Tcp(a)) => format!("connection to {a}"),
                    Some(PlannedReady::Http(u)) => format!("answer from {u}"),
                    None => String::new(),
                };
                return Err(fail(format!(
                    "service '{}' was not ready within {}: no {what} (raise its timeout:, or check its command)",
                    self.name,
                    humantime::format_duration(timeout)
                )));
            }
            std::thread::sleep(POLL);
        }
    }

    /// SIGTERM to its process group, SIGKILL after a grace period.
    pub fn stop(mut self) {
        let group = self.child.id();
        kill_group(group, libc::SIGTERM);
        let started = Instant::now();
        while started.elapsed() < STOP_GRACE {
            let _ = self.child.try_wait();
            if !group_alive(group) {
                break;
            }
            std::thread::sleep(POLL);
        }
        if group_alive(group) {
            kill_group(group, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// Stops process groups a previous, killed runner left behind (their ids
/// are in `pids`), so a resumed experiment does not find old services on
/// its ports.
pub fn stop_leftovers(pids: &Path) {
    let Ok(text) = std::fs::read_to_string(pids) else {
        return;
    };
    for group in text.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
        if group > 1 && group_alive(group) {
            kill_group(group, libc::SIGTERM);
            let started = Instant::now();
            while group_alive(group) && started.elapsed() < STOP_GRACE {
                std::thread::sleep(POLL);
            }
            if group_alive(group) {
                kill_group(group, libc::SIGKILL);
            }
        }
    }
    let _ = std::fs::remove_file(pids);
}

/// Whether something answers at the service's ready address already.
pub fn already_answers(ready: &PlannedReady) -> bool {
    match ready {
        PlannedReady::Tcp(address) => tcp_answers(address),
        PlannedReady::Http(url) => http_answers(url),
    }
}

fn tcp_answers(address: &str) -> bool {
    use std::net::ToSocketAddrs;
    let Ok(addrs) = address.to_socket_addrs() else {
        return false;
    };
    addrs
        .into_iter()
        .any(|a| std::net::TcpStream::connect_timeout(&a, Duration::from_millis(500)).is_ok())
}

/// A plain-HTTP GET of `url` (the monitor's blocking GET, 2 s at most)
/// answers with a status below 500.
fn http_answers(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let authority = if authority.contains(':') {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    // A service is not an agent: its answer (HTML, say) counts by its status.
    match headroom_monitor::agent::get(&authority, path, None) {
        Ok((status, _)) => status < 500,
        Err(e) => headroom_monitor::agent::not_an_agent(&e).is_some_and(|n| n.status < 500),
    }
}

/// Runs `program argv` to its end with its output in `log`; forwards an
/// interrupt to it (it then saves its bundle as interrupted). Returns how
/// it ended. The run is the leader of its own process group (with the
/// fault commands it starts), is killed if the runner dies (SIGKILL: a
/// run without its runner measures nothing anyone keeps) and is in
/// `record` while it runs, so a resumed runner stops it if that failed.
pub fn run_child(
    program: &Path,
    argv: &[String],
    log: &Path,
    env: &[(String, String)],
    record: &crate::leftovers::Record,
    what: &str,
) -> std::io::Result<std::process::ExitStatus> {
    let (out, err) = log_file(log)?;
    let mut command = Command::new(program);
    command
        .args(argv)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    die_with_runner(&mut command, libc::SIGKILL);
    let mut child = command.spawn()?;
    record.add(child.id(), "run", what);
    let status = wait_forwarding_interrupts(&mut child);
    record.remove(child.id());
    status
}

fn wait_forwarding_interrupts(child: &mut Child) -> std::io::Result<std::process::ExitStatus> {
    let mut forwarded = false;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if interrupted() && !forwarded {
            // SAFETY: signals the child we started.
            unsafe {
                libc::kill(child.id() as libc::pid_t, libc::SIGINT);
            }
            forwarded = true;
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A service answering HTML on a kept-alive connection is ready (its
    /// status counts), not an agent's timeout.
    #[test]
    fn a_web_page_answers_a_ready_check() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(1) {
                let mut stream = stream.unwrap();
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 4\r\n\r\nhi!\n"
                );
                // Kept open, as a web server keeps it.
                std::thread::sleep(std::time::Duration::from_secs(3));
            }
        });
        let started = std::time::Instant::now();
        assert!(http_answers(&format!("http://127.0.0.1:{port}/")));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("headroom-process-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_failing_hook_names_itself_and_shows_its_output() {
        let dir = temp("hook");
        let record = crate::leftovers::Record::new(dir.join("children.pids"));
        let log = dir.join("setup.log");
        let env = vec![("HEADROOM_CELL".to_string(), "store=redis".to_string())];
        run_hook(
            "the setup",
            "echo ok $HEADROOM_CELL",
            &log,
            &env,
            Duration::from_secs(5),
            &record,
        )
        .unwrap();
        let e = run_hook(
            "the setup of cell store=redis",
            "echo cannot reach the database >&2; exit 4",
            &log,
            &env,
            Duration::from_secs(5),
            &record,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("the setup of cell store=redis failed (exit code 4)"),
            "{e}"
        );
        assert!(e.contains("| ok store=redis"), "{e}");
        assert!(e.contains("| cannot reach the database"), "{e}");
        let e = run_hook(
            "a hook",
            "sleep 10",
            &log,
            &env,
            Duration::from_millis(200),
            &record,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("did not end within 200ms"), "{e}");
        assert!(
            record.read().is_empty(),
            "a hook that ended is still recorded"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn services_become_ready_or_say_why_not_and_stop_with_their_children() {
        let dir = temp("service");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let mut up =
            RunningService::start("up", "sleep 30 & sleep 30", &dir.join("up.log"), &[]).unwrap();
        up.wait_ready(Some(&PlannedReady::Tcp(address)), Duration::from_secs(5))
            .unwrap();
        let group = up.group();
        up.stop();
        assert!(!group_alive(group), "the service's children outlived it");
        drop(listener);

        let mut never = RunningService::start(
            "never",
            "echo starting on 1; sleep 30",
            &dir.join("never.log"),
            &[],
        )
        .unwrap();
        let e = never
            .wait_ready(
                Some(&PlannedReady::Tcp("127.0.0.1:1".into())),
                Duration::from_millis(300),
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("was not ready within 300ms"), "{e}");
        assert!(e.contains("| starting on 1"), "{e}");
        never.stop();

        let mut dies = RunningService::start("dies", "exit 7", &dir.join("dies.log"), &[]).unwrap();
        let e = dies
            .wait_ready(
                Some(&PlannedReady::Http("http://127.0.0.1:1/".into())),
                Duration::from_secs(5),
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("ended before it was ready (exit code 7)"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
