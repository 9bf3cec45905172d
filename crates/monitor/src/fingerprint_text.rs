//! A host's fingerprint and findings as `headroom doctor` shows them.

use crate::doctor::Finding;
use crate::fingerprint::Fingerprint;

/// The host, its CPU, memory, storage and load, then its findings (or
/// that there are none), a line each.
pub fn host_lines(f: &Fingerprint, findings: &[Finding]) -> Vec<String> {
    let mut lines = Vec::new();
    let opt = |v: Option<String>| v.unwrap_or_else(|| "unknown".into());
    lines.push(format!(
        "{} ({}): {}, {} cores, {} ({}-bit userland)",
        f.hostname, f.os_release, f.cpu_model, f.cores, f.architecture, f.userland_bits
    ));
    lines.push(format!(
        "  kernel {}, memory {} MB, swap {} MB ({} MB used)",
        f.kernel, f.memory_mb, f.swap_mb, f.swap_used_mb
    ));
    lines.push(format!(
        "  governor {}, frequency {} (min {}, max {}), temperature {}",
        opt(f.governor.clone()),
        opt(f.frequency_mhz.map(|v| format!("{v:.0} MHz"))),
        opt(f.frequency_min_mhz.map(|v| format!("{v:.0}"))),
        opt(f.frequency_max_mhz.map(|v| format!("{v:.0}"))),
        opt(f.temperature_c.map(|t| format!("{t:.1} °C")))
    ));
    if let Some(s) = &f.storage {
        lines.push(format!(
            "  storage for {}: {} ({}, {}), {}, scheduler {}, model {}",
            s.mount_point,
            s.device,
            s.filesystem,
            s.mount_options,
            match s.rotational {
                Some(true) => "rotational",
                Some(false) => "solid state",
                None => "unknown type",
            },
            opt(s.scheduler.clone()),
            opt(s.model.clone())
        ));
    }
    lines.push(format!(
        "  virtualization {}, load average {:.2} {:.2} {:.2}{}",
        f.virtualization,
        f.load_average[0],
        f.load_average[1],
        f.load_average[2],
        f.raspberry_pi_model
            .as_ref()
            .map(|m| format!(", {m}"))
            .unwrap_or_default()
    ));
    if findings.is_empty() {
        lines.push("\nNo findings: nothing here is known to distort a run.".to_string());
    } else {
        lines.push(String::new());
        for finding in findings {
            lines.push(format!("  {}: {}", finding.check, finding.message));
        }
    }
    lines
}
