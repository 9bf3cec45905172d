//! `headroom emulate --cpus N [--iops N] [--memory SIZE] -- COMMAND`: the
//! command run inside control groups that limit it
//! ([`headroom_bench::emulate`]), in a process group of its own; stopped
//! with it on Ctrl-C or SIGTERM; what it leaves in the groups stopped and
//! the groups removed after, and an OOM kill at the memory limit said
//! ([`headroom_bench::emulate_text`] words it).

use crate::args::EmulateArgs;
use headroom_bench::emulate::{self, Emulation, Limits};
use headroom_bench::emulate_text::{ending_lines, like_cpus};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitCode};
use std::time::{Duration, Instant};
use tokio::sync::oneshot::Receiver;

/// The exit code when the groups cannot be made here (no root, no
/// controller, a directory on no block device): the command was not run
/// (as `env` and `timeout` say their own failure).
pub const CANNOT_EMULATE: u8 = 125;

pub fn run(args: EmulateArgs) -> ExitCode {
    let disk_dir = args.disk_dir.clone().unwrap_or_else(|| ".".into());
    let cpus = match (&args.like, &args.bench_here) {
        (Some(like), Some(dir)) => match like_cpus(like, dir) {
            Ok((cpus, said)) => {
                eprintln!("headroom emulate: {said}");
                Some(cpus)
            }
            Err(e) => {
                eprintln!("headroom emulate: {e}");
                return ExitCode::from(crate::execute::EXIT_USAGE);
            }
        },
        _ => args.cpus,
    };
    let limits = Limits {
        cpus,
        iops: args.iops.map(|n| (n, disk_dir)),
        memory_bytes: args.memory,
    };
    if let Some(why) = limits.refusal(emulate::online_cores()) {
        eprintln!("headroom emulate: {why}. The command was not run");
        return ExitCode::from(crate::execute::EXIT_USAGE);
    }
    for line in emulate::remove_stale() {
        eprintln!("headroom emulate: {line}");
    }
    let mut emulation = match Emulation::prepare(&limits, &std::process::id().to_string()) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("headroom emulate: {e}: the command was not run");
            return ExitCode::from(if limits == Limits::default() {
                crate::execute::EXIT_USAGE
            } else {
                CANNOT_EMULATE
            });
        }
    };
    if let Err(e) = emulation.guard() {
        eprintln!(
            "headroom emulate: warning: cannot start the guard that stops the command if headroom \
             is killed ({e}); the groups of a killed headroom are removed by the next emulate"
        );
    }
    eprintln!(
        "headroom emulate: {} runs limited to {}",
        args.command[0].to_string_lossy(),
        emulation.described.join(", ")
    );
    // Watched before the command starts: a signal at once stops it too.
    let stop = crate::signals::interrupt_on_signal();
    let mut command = Command::new(&args.command[0]);
    command.args(&args.command[1..]);
    let entry = emulation.entry();
    // SAFETY: the closure only calls async-signal-safe functions (open,
    // write, close, getpid, setpgid, prctl) on memory prepared before the
    // fork.
    unsafe {
        command.pre_exec(move || {
            entry.enter()?;
            // A process group of its own: stopped whole, its children too.
            libc::setpgid(0, 0);
            // The command ends if headroom is killed.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!(
                "headroom emulate: cannot run {}: {e}",
                args.command[0].to_string_lossy()
            );
            return ExitCode::from(127);
        }
    };
    let code = wait_or_stop(child, stop, &emulation);
    let ending = emulation.finish();
    for line in ending_lines(&ending, code) {
        eprintln!("headroom emulate: {line}");
    }
    ExitCode::from(code)
}

/// Waits for the command, or on a signal stops its process group (SIGTERM,
/// then SIGKILL after 10 s) and waits for the group to end, so that what
/// is left after is what escaped it; the command's exit code, 130 when it
/// had to be killed.
fn wait_or_stop(mut child: Child, mut stop: Receiver<()>, emulation: &Emulation) -> u8 {
    let group = child.id() as libc::pid_t;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return exit_code(status),
            Ok(None) => {}
            Err(_) => return 1,
        }
        if stop.try_recv().is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: signals the process group of the child this process started.
    unsafe { libc::kill(-group, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut status = None;
    while Instant::now() < deadline {
        status = status.or_else(|| child.try_wait().ok().flatten());
        if status.is_some() && !group_running(emulation, group) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if let Some(status) = status {
        return exit_code(status);
    }
    // SAFETY: as above.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    let _ = child.kill();
    let _ = child.wait();
    130
}

/// Whether a process of the command's process group is still running in
/// the emulation's groups.
fn group_running(emulation: &Emulation, group: libc::pid_t) -> bool {
    emulation
        .members()
        // SAFETY: getpgid only reads; a process gone meanwhile gives -1.
        .any(|pid| unsafe { libc::getpgid(pid as libc::pid_t) } == group)
}

/// The command's exit code, or 128 + the signal that ended it.
fn exit_code(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(signal)) => (128 + signal) as u8,
        _ => 1,
    }
}
