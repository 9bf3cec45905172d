//! The command `headroom emulate` runs, waited for ([`wait_or_stop`]):
//! its exit code, or its process group stopped when the caller is told to
//! stop (the CLI watches the signals).

use crate::emulate::Emulation;
use std::process::Child;
use std::time::{Duration, Instant};

/// Waits for the command, or once `stopped` says so (a signal came) stops
/// its process group (SIGTERM, then SIGKILL after 10 s) and waits for the
/// group to end, so that what is left after is what escaped it; the
/// command's exit code, 130 when it had to be killed.
pub fn wait_or_stop(
    mut child: Child,
    stopped: &mut dyn FnMut() -> bool,
    emulation: &Emulation,
) -> u8 {
    let group = child.id() as libc::pid_t;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return exit_code(status),
            Ok(None) => {}
            Err(_) => return 1,
        }
        if stopped() {
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
