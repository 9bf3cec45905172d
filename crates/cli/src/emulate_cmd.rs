//! `headroom emulate --cpus N [--iops N] [--memory SIZE] -- COMMAND`: the
//! command run inside control groups that limit it
//! ([`headroom_bench::emulate`]); stopped with it on Ctrl-C or SIGTERM,
//! the groups removed after.

use crate::args::EmulateArgs;
use headroom_bench::emulate::{Emulation, Limits};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

/// The exit code when the groups cannot be made here (no root, no
/// controller, a directory on no block device): the command was not run
/// (as `env` and `timeout` say their own failure).
pub const CANNOT_EMULATE: u8 = 125;

pub fn run(args: EmulateArgs) -> ExitCode {
    let disk_dir = args.disk_dir.clone().unwrap_or_else(|| ".".into());
    let cpus = match (&args.like, &args.bench_here) {
        (Some(like), Some(dir)) => match like_cpus(like, dir) {
            Ok(cpus) => Some(cpus),
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
    let emulation = match Emulation::prepare(&limits, &std::process::id().to_string()) {
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
    eprintln!(
        "headroom emulate: {} runs limited to {}",
        args.command[0].to_string_lossy(),
        emulation.described.join(", ")
    );
    let mut command = Command::new(&args.command[0]);
    command.args(&args.command[1..]);
    let entry = emulation.entry();
    // SAFETY: the closure only calls async-signal-safe functions (open,
    // write, close, getpid, prctl) on memory prepared before the fork.
    unsafe {
        command.pre_exec(move || {
            entry.enter()?;
            // The command ends if headroom is killed.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!(
                "headroom emulate: cannot run {}: {e}",
                args.command[0].to_string_lossy()
            );
            return ExitCode::from(127);
        }
    };
    let mut stop = crate::signals::interrupt_on_signal();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if stop.try_recv().is_ok() {
            // SAFETY: signals the child this process started.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(status)) = child.try_wait() {
                    drop(emulation);
                    return ExitCode::from(exit_code(status));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
            return ExitCode::from(130);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(emulation);
    status.map_or(ExitCode::FAILURE, |s| ExitCode::from(exit_code(s)))
}

/// The CPUs of this host that do `like`'s all-cores work.
fn like_cpus(like: &str, bench_here: &std::path::Path) -> Result<f64, String> {
    use headroom_bench::host_scale::{emulated_cpus, TargetHost};
    let target = TargetHost::parse(like)?;
    let here = headroom_bundle::bench::read(bench_here).map_err(|e| e.to_string())?;
    let cpus = emulated_cpus(&target, &here)?;
    eprintln!("headroom emulate: a {like}'s CPU work is {cpus:.2} CPUs of this host");
    Ok(cpus)
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
