//! The agent's `/metrics`: its latest one-second sample in Prometheus's
//! text format, the figures of `/samples` in base units (ratios 0-1, bytes,
//! hertz, degrees Celsius), named `headroom_*`.

use crate::exposition::Exposition;
use crate::fingerprint::Throttling;
use crate::sampler::Resources;

/// The page for `host` and its latest sample, with when it ended (epoch
/// ms; none yet: only the info).
pub fn render(host: &str, version: &str, latest: Option<(u64, &Resources)>) -> String {
    let mut e = Exposition::default();
    e.family(
        "headroom_agent_info",
        "gauge",
        "The agent's host and version (always 1).",
    )
    .sample(
        "headroom_agent_info",
        &[("host", host), ("version", version)],
        1.0,
    );
    let Some((time_ms, r)) = latest else {
        return e.finish();
    };
    e.single(
        "headroom_sample_timestamp_seconds",
        "gauge",
        "When the latest one-second sample ended (Unix time).",
        time_ms as f64 / 1000.0,
    );
    cpu(&mut e, r);
    memory(&mut e, r);
    interrupts(&mut e, r);
    disks(&mut e, r);
    networks(&mut e, r);
    sensors(&mut e, r);
    processes(&mut e, r);
    crate::server_metrics::render(&mut e, r);
    if let Some(t) = &r.throttling {
        throttling(&mut e, t);
    }
    e.finish()
}

/// Busy shares: all cores, by mode, each core; the load averages.
fn cpu(e: &mut Exposition, r: &Resources) {
    e.single(
        "headroom_cpu_busy_ratio",
        "gauge",
        "Busy share of all cores over the last second (iowait counts as idle).",
        r.cpu_pct / 100.0,
    );
    e.family(
        "headroom_cpu_mode_ratio",
        "gauge",
        "Share of all cores' time in a mode over the last second.",
    );
    for (mode, pct) in [
        ("user", r.user_pct),
        ("system", r.system_pct),
        ("iowait", r.iowait_pct),
        ("steal", r.steal_pct),
    ] {
        e.sample("headroom_cpu_mode_ratio", &[("mode", mode)], pct / 100.0);
    }
    e.family(
        "headroom_cpu_core_busy_ratio",
        "gauge",
        "Busy share of one core over the last second.",
    );
    for (i, pct) in r.per_core_pct.iter().enumerate() {
        let core = i.to_string();
        e.sample(
            "headroom_cpu_core_busy_ratio",
            &[("core", &core)],
            pct / 100.0,
        );
    }
    for (i, minutes) in ["1", "5", "15"].iter().enumerate() {
        let name = format!("headroom_load{minutes}");
        e.single(
            &name,
            "gauge",
            &format!("{minutes}-minute load average."),
            r.load[i],
        );
    }
}

/// Memory and swap in use.
fn memory(e: &mut Exposition, r: &Resources) {
    e.single(
        "headroom_memory_used_ratio",
        "gauge",
        "Memory in use, (total - available) / total, as free computes it.",
        r.memory_used_pct / 100.0,
    );
    e.single(
        "headroom_swap_used_bytes",
        "gauge",
        "Swap in use.",
        // The sample's figure is /proc/meminfo's KiB divided by 1000.
        r.swap_used_mb * 1000.0 * 1024.0,
    );
    if let Some(available) = r.memory_available_mb {
        e.single(
            "headroom_memory_available_bytes",
            "gauge",
            "Memory a new process could take without swapping (MemAvailable).",
            available * 1000.0 * 1024.0,
        );
    }
}

/// Interrupts and context switches over the last second.
fn interrupts(e: &mut Exposition, r: &Resources) {
    if let Some(n) = r.interrupts_per_s {
        e.single(
            "headroom_interrupts_per_second",
            "gauge",
            "Interrupts over the last second, all kinds and cores.",
            n,
        );
    }
    if let Some(n) = r.context_switches_per_s {
        e.single(
            "headroom_context_switches_per_second",
            "gauge",
            "Context switches over the last second.",
            n,
        );
    }
    if !r.interrupts_by_kind.is_empty() {
        e.family(
            "headroom_interrupts_by_kind_per_second",
            "gauge",
            "Interrupts of one kind over the last second, as /proc/interrupts names it.",
        );
        for (kind, n) in &r.interrupts_by_kind {
            e.sample(
                "headroom_interrupts_by_kind_per_second",
                &[("kind", kind)],
                *n,
            );
        }
    }
}

/// Each disk device's busy share, throughput and operations.
fn disks(e: &mut Exposition, r: &Resources) {
    let disks: Vec<(&str, &crate::sampler::DiskFigures)> =
        r.disks.iter().map(|d| (d.name.as_str(), d)).collect();
    for (name, help, value) in [
        (
            "headroom_disk_busy_ratio",
            "Share of the last second the device was busy (iostat's %util).",
            (|d: &crate::sampler::DiskFigures| d.util_pct / 100.0) as fn(&_) -> f64,
        ),
        (
            "headroom_disk_read_bytes_per_second",
            "Bytes read per second over the last second.",
            |d| d.read_mb_s * 1e6,
        ),
        (
            "headroom_disk_written_bytes_per_second",
            "Bytes written per second over the last second.",
            |d| d.write_mb_s * 1e6,
        ),
        (
            "headroom_disk_operations_per_second",
            "Reads and writes completed per second over the last second.",
            |d| d.iops,
        ),
        (
            "headroom_disk_queue_requests",
            "Requests in flight or queued at the device, on average over the last second (iostat's aqu-sz).",
            |d| d.queue.unwrap_or(0.0),
        ),
        (
            "headroom_disk_await_seconds",
            "Mean time of a read or write over the last second, queue included (iostat's await); 0 without any.",
            |d| d.await_ms.unwrap_or(0.0) / 1000.0,
        ),
    ] {
        e.family(name, "gauge", help);
        for (device, d) in &disks {
            e.sample(name, &[("device", device)], value(d));
        }
    }
}

/// Each network device's throughput both ways and its link's use.
fn networks(e: &mut Exposition, r: &Resources) {
    e.family(
        "headroom_network_receive_bytes_per_second",
        "gauge",
        "Bytes received per second over the last second.",
    );
    for n in &r.networks {
        e.sample(
            "headroom_network_receive_bytes_per_second",
            &[("device", &n.name)],
            n.rx_mbit_s * 1e6 / 8.0,
        );
    }
    e.family(
        "headroom_network_transmit_bytes_per_second",
        "gauge",
        "Bytes sent per second over the last second.",
    );
    for n in &r.networks {
        e.sample(
            "headroom_network_transmit_bytes_per_second",
            &[("device", &n.name)],
            n.tx_mbit_s * 1e6 / 8.0,
        );
    }
    e.family(
        "headroom_network_link_used_ratio",
        "gauge",
        "The busier direction as a share of the link's capacity, where it is known.",
    );
    for n in &r.networks {
        if let Some(pct) = n.link_pct {
            e.sample(
                "headroom_network_link_used_ratio",
                &[("device", &n.name)],
                pct / 100.0,
            );
        }
    }
    e.family(
        "headroom_network_up",
        "gauge",
        "1 when an interface that is switched on has its link up, 0 when the link is down.",
    );
    for n in &r.networks {
        if let Some(up) = n.up {
            e.sample(
                "headroom_network_up",
                &[("device", &n.name)],
                f64::from(u8::from(up)),
            );
        }
    }
}

/// Temperatures and core frequencies.
fn sensors(e: &mut Exposition, r: &Resources) {
    e.family(
        "headroom_temperature_celsius",
        "gauge",
        "Temperature of a sensor (thermal zone or hwmon).",
    );
    for (sensor, celsius) in &r.temperatures_c {
        e.sample(
            "headroom_temperature_celsius",
            &[("sensor", sensor)],
            *celsius,
        );
    }
    e.family(
        "headroom_cpu_frequency_hertz",
        "gauge",
        "Current frequency of a core.",
    );
    for (i, mhz) in r.frequencies_mhz.iter().enumerate() {
        let core = i.to_string();
        e.sample(
            "headroom_cpu_frequency_hertz",
            &[("core", &core)],
            mhz * 1e6,
        );
    }
}

/// The named processes' CPU and memory.
fn processes(e: &mut Exposition, r: &Resources) {
    e.family(
        "headroom_process_cpu_ratio",
        "gauge",
        "CPU of the named processes over the last second, in cores (2 = two cores busy).",
    );
    for p in &r.processes {
        e.sample(
            "headroom_process_cpu_ratio",
            &[("name", &p.name)],
            p.cpu_pct / 100.0,
        );
    }
    e.family(
        "headroom_process_resident_memory_bytes",
        "gauge",
        "Resident memory of the named processes, summed.",
    );
    for p in &r.processes {
        e.sample(
            "headroom_process_resident_memory_bytes",
            &[("name", &p.name)],
            p.rss_mb * 1e6,
        );
    }
    e.family(
        "headroom_process_count",
        "gauge",
        "How many processes of the name ran.",
    );
    for p in &r.processes {
        e.sample(
            "headroom_process_count",
            &[("name", &p.name)],
            p.count as f64,
        );
    }
}

/// Raspberry Pi throttling flags.
fn throttling(e: &mut Exposition, t: &Throttling) {
    e.family(
        "headroom_throttling",
        "gauge",
        "Raspberry Pi throttling flags (vcgencmd get_throttled): 1 when set.",
    );
    for (flag, when, set) in [
        ("under_voltage", "now", t.under_voltage_now),
        ("frequency_capped", "now", t.frequency_capped_now),
        ("throttled", "now", t.throttled_now),
        (
            "soft_temperature_limit",
            "now",
            t.soft_temperature_limit_now,
        ),
        ("under_voltage", "since_boot", t.under_voltage_since_boot),
        (
            "frequency_capped",
            "since_boot",
            t.frequency_capped_since_boot,
        ),
        ("throttled", "since_boot", t.throttled_since_boot),
        (
            "soft_temperature_limit",
            "since_boot",
            t.soft_temperature_limit_since_boot,
        ),
    ] {
        e.sample(
            "headroom_throttling",
            &[("flag", flag), ("when", when)],
            f64::from(u8::from(set)),
        );
    }
}
