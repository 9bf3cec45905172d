//! The words of `headroom emulate` ([`crate::emulate`]): the CPUs that
//! emulate another host's, and what the command did to its groups by its
//! end. The CLI runs the command, handles the signals and prints.

use crate::emulate::{memory_shown, EmulationEnd};
use crate::host_scale::{emulated_cpus, TargetHost};
use std::path::Path;

/// The CPUs of this host that do `like`'s all-cores work (from the bench
/// bundle of this host in `bench_here`), and the sentence that says so.
pub fn like_cpus(like: &str, bench_here: &Path) -> Result<(f64, String), String> {
    let target = TargetHost::parse(like)?;
    let here = headroom_bundle::bench::read(bench_here).map_err(|e| e.to_string())?;
    let cpus = emulated_cpus(&target, &here)?;
    Ok((
        cpus,
        format!("a {like}'s CPU work is {cpus:.2} CPUs of this host"),
    ))
}

/// What the command did to its groups, in sentences; `code` is its exit
/// code (128 + 9 when SIGKILL ended it).
pub fn ending_lines(ending: &EmulationEnd, code: u8) -> Vec<String> {
    let mut lines = Vec::new();
    if ending.oom_kills > 0 {
        let limit = ending
            .memory_bytes
            .map_or(String::new(), |b| format!(" ({})", memory_shown(b)));
        let who = if code == 128 + libc::SIGKILL as u8 {
            "the command was killed by the --memory limit".to_string()
        } else {
            format!(
                "{} of the command's processes {} killed by the --memory limit",
                ending.oom_kills,
                if ending.oom_kills == 1 { "was" } else { "were" }
            )
        };
        lines.push(format!(
            "{who}{limit}: the kernel's OOM killer ended {} process{} at it; give a larger \
             --memory or find what grew",
            ending.oom_kills,
            if ending.oom_kills == 1 { "" } else { "es" }
        ));
    }
    if ending.left_behind > 0 {
        let n = ending.left_behind;
        lines.push(format!(
            "{n} process{} the command left behind {} stopped (a command that starts a server in \
             the background and exits ends it here: run the server in the foreground, e.g. nginx \
             -g 'daemon off;', php-fpm -F)",
            if n == 1 { "" } else { "es" },
            if n == 1 { "was" } else { "were" }
        ));
    }
    for (dir, why) in &ending.not_removed {
        lines.push(format!(
            "cannot remove the control group {}: {why}; remove it with `rmdir {}` once its \
             processes have ended (the next emulate also does)",
            dir.display(),
            dir.display()
        ));
    }
    lines
}
