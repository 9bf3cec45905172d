//! `headroom emulate --cpus N [--iops N] [--memory SIZE] -- COMMAND`: the
//! command run inside control groups that limit it
//! ([`headroom_bench::emulate`]), in a process group of its own; stopped
//! with it on Ctrl-C or SIGTERM; what it leaves in the groups stopped and
//! the groups removed after, and an OOM kill at the memory limit said
//! ([`headroom_bench::emulate_text`] words it).

use crate::args::EmulateArgs;
use headroom_bench::emulate::{self, Emulation, Limits};
use headroom_bench::emulate_text::{ending_lines, like_cpus};
use headroom_bench::emulate_wait::wait_or_stop;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

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
    let mut stop = crate::signals::interrupt_on_signal();
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
    let code = wait_or_stop(child, &mut || stop.try_recv().is_ok(), &emulation);
    let ending = emulation.finish();
    for line in ending_lines(&ending, code) {
        eprintln!("headroom emulate: {line}");
    }
    ExitCode::from(code)
}
