//! Noise checks before a run: each finding says what it distorts and how to
//! fix it (hyperfine's warnings are the model).

use crate::fingerprint::{Fingerprint, Throttling};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable identifier, e.g. `governor`.
    pub check: String,
    pub message: String,
}

fn finding(check: &str, message: String) -> Finding {
    Finding {
        check: check.into(),
        message,
    }
}

/// Checks a host's fingerprint; `top_processes` names what keeps the CPU
/// busy (for the load check); `same_host_as_target` when the target runs
/// on the generator's machine.
pub fn examine(
    f: &Fingerprint,
    top_processes: &[String],
    same_host_as_target: bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(governor) = f.governor.as_deref().filter(|g| *g != "performance") {
        out.push(finding(
            "governor",
            format!(
                "the CPU frequency governor is '{governor}': the clock changes with load, which moves response times \
                 (power-save doubled them in a replication study). Set it with \
                 `cpupower frequency-set -g performance` for repeatable runs."
            ),
        ));
    }
    if let Some(t) = f.throttling {
        throttling_findings(&t, &mut out);
    }
    if let Some(t) = f.temperature_c.filter(|t| *t > 70.0) {
        out.push(finding(
            "temperature",
            format!("the CPU is at {t:.0} °C: above about 80 °C a Raspberry Pi slows itself down. Let it cool or improve cooling before measuring."),
        ));
    }
    if f.swap_used_mb > 0 {
        out.push(finding(
            "swap",
            format!(
                "{} MB of swap are in use: pages moving to and from disk make response times jump. \
                 Free memory (stop services) or disable swap for the measurement.",
                f.swap_used_mb
            ),
        ));
    }
    if f.load_average[0] > 0.5 {
        let who = if top_processes.is_empty() {
            String::new()
        } else {
            format!(" (busiest: {})", top_processes.join(", "))
        };
        out.push(finding(
            "load",
            format!(
                "the load average is {:.2} before the run{who}: other work competes for the CPU and adds noise. \
                 Stop it or wait until the machine is idle.",
                f.load_average[0]
            ),
        ));
    }
    limits_and_virtualization(f, &mut out);
    if same_host_as_target {
        out.push(finding(
            "same_host",
            "the target runs on this machine: headroom and the server share its cores, so the server's capacity is understated. \
             Run headroom from another machine for capacity figures."
                .into(),
        ));
    }
    out
}

/// What the Raspberry Pi's throttling flags say: under-voltage, and
/// throttling now or since boot.
fn throttling_findings(t: &Throttling, out: &mut Vec<Finding>) {
    if t.under_voltage_now || t.under_voltage_since_boot {
        out.push(finding(
            "under_voltage",
            "the power supply dropped below what the board needs (under-voltage): the CPU is slowed and results \
             are not those of a healthy machine. Use the official power supply and a short, thick cable."
                .into(),
        ));
    }
    if t.frequency_capped_now || t.throttled_now || t.soft_temperature_limit_now {
        out.push(finding(
            "throttled",
            format!(
                "the CPU is throttled or its frequency capped now (get_throttled {:#x}): it runs slower than it can. \
                 Cool it (heatsink, fan) and wait until the flags clear.",
                t.raw
            ),
        ));
    } else if t.frequency_capped_since_boot
        || t.throttled_since_boot
        || t.soft_temperature_limit_since_boot
    {
        out.push(finding(
            "throttled_since_boot",
            format!(
                "the CPU was throttled or capped since boot (get_throttled {:#x}): it may be again under load. \
                 Check cooling, and watch the temperature during the run (--monitor local).",
                t.raw
            ),
        ));
    }
}

/// What the cgroup limits and the virtualization (a container, a VM)
/// take from the machine's figures.
fn limits_and_virtualization(f: &Fingerprint, out: &mut Vec<Finding>) {
    if let Some(limit) = &f.cgroup_cpu_limit {
        out.push(finding(
            "cgroup_cpu",
            format!("a cgroup limits CPU to '{limit}' (quota period): the machine's cores are not all yours, and figures will not transfer to an unlimited host."),
        ));
    }
    if let Some(mb) = f.cgroup_memory_limit_mb {
        out.push(finding("cgroup_memory", format!("a cgroup limits memory to {mb} MB: the host's memory figures overstate what this run may use.")));
    }
    match f.virtualization.as_str() {
        "none" => {}
        container @ ("docker" | "kubernetes" | "lxc") => out.push(finding(
            "container",
            format!(
                "this runs in a {container} container: other containers share the host's CPU unseen and limits may \
                 apply, so repeat runs and compare their spread."
            ),
        )),
        vm => out.push(finding(
            "virtualized",
            format!(
                "this is a {vm} guest: neighbours and the hypervisor take CPU time unseen (watch steal %), so repeat \
                 runs and compare their spread."
            ),
        )),
    }
}

/// The `n` processes that used the most CPU over `window`, busiest first.
pub fn top_processes(
    roots: &crate::procfs::Roots,
    n: usize,
    window: std::time::Duration,
) -> Vec<String> {
    fn ticks(proc_: &std::path::Path) -> std::collections::HashMap<u32, (String, u64)> {
        let mut out = std::collections::HashMap::new();
        let Ok(entries) = std::fs::read_dir(proc_) else {
            return out;
        };
        for entry in entries.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            let Some((name, used)) = crate::procfs::parse_stat(&stat) else {
                continue;
            };
            out.insert(pid, (name.to_string(), used));
        }
        out
    }
    let before = ticks(&roots.proc);
    std::thread::sleep(window);
    let after = ticks(&roots.proc);
    let mut busy: Vec<(u64, String)> = after
        .into_iter()
        .filter_map(|(pid, (name, used))| {
            let delta = used.saturating_sub(before.get(&pid).map_or(used, |(_, b)| *b));
            (delta > 0).then_some((delta, name))
        })
        .collect();
    busy.sort_by_key(|b| std::cmp::Reverse(b.0));
    busy.into_iter().take(n).map(|(_, name)| name).collect()
}
