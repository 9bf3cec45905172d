//! `resources.csv` (per second and monitored host: the aggregates, and a
//! pair of columns per watched process) and `resources.jsonl` (the same
//! seconds with every figure), and the per-host summary kept in the
//! manifest. The columns are declared here once, for writer and reader.

use crate::reader::{columns, number, open_csv, whole_records};
use crate::{invalid, read_error, BundleError, RESOURCES, RESOURCES_DETAIL};
use headroom_monitor::Resources;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// The aggregate columns, in the file's order.
pub const COLUMNS: [&str; 25] = [
    "second",
    "start_epoch_ms",
    "host",
    "cpu_pct",
    "user_pct",
    "system_pct",
    "iowait_pct",
    "steal_pct",
    "load1",
    "memory_used_pct",
    "swap_used_mb",
    "disk_util_pct",
    "disk_read_mb_s",
    "disk_write_mb_s",
    "disk_iops",
    "net_rx_mbit_s",
    "net_tx_mbit_s",
    "net_link_pct",
    "temperature_max_c",
    "cpu_mhz",
    "throttled",
    "memory_available_mb",
    "interrupts_s",
    "context_switches_s",
    "links_down",
];
/// A watched process's columns are its name followed by these.
const PROCESS_CPU: &str = "_cpu_pct";
const PROCESS_RSS: &str = "_rss_mb";
const PROCESS_COUNT: &str = "_count";

/// The header line of resources.csv: the aggregates, then a CPU %, RSS
/// and process count column per watched process.
pub fn header(processes: &[String]) -> String {
    let mut header = COLUMNS.join(",");
    for name in processes {
        header.push_str(&format!(
            ",{name}{PROCESS_CPU},{name}{PROCESS_RSS},{name}{PROCESS_COUNT}"
        ));
    }
    header
}

/// Appends one host's second to resources.csv.
pub fn write_row(
    out: &mut impl Write,
    second: u64,
    epoch_ms: u64,
    host: &str,
    r: &Resources,
    processes: &[String],
) -> io::Result<()> {
    let sum =
        |f: fn(&headroom_monitor::sampler::DiskFigures) -> f64| r.disks.iter().map(f).sum::<f64>();
    let link = r
        .networks
        .iter()
        .filter_map(|n| n.link_pct)
        .reduce(f64::max);
    let temperature = r.temperatures_c.values().copied().reduce(f64::max);
    let mhz = if r.frequencies_mhz.is_empty() {
        None
    } else {
        Some(r.frequencies_mhz.iter().sum::<f64>() / r.frequencies_mhz.len() as f64)
    };
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.1}"));
    let whole = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.0}"));
    let known: Vec<bool> = r.networks.iter().filter_map(|n| n.up).collect();
    let links_down = if known.is_empty() {
        String::new()
    } else {
        known.iter().filter(|up| !**up).count().to_string()
    };
    write!(
        out,
        "{second},{epoch_ms},{host},{:.1},{:.1},{:.1},{:.1},{:.1},{:.2},{:.1},{:.1},{:.1},{:.3},{:.3},{:.1},{:.3},{:.3},{},{},{},{},{},{},{},{}",
        r.cpu_pct,
        r.user_pct,
        r.system_pct,
        r.iowait_pct,
        r.steal_pct,
        r.load[0],
        r.memory_used_pct,
        r.swap_used_mb,
        r.disks.iter().map(|d| d.util_pct).fold(0.0, f64::max),
        sum(|d| d.read_mb_s),
        sum(|d| d.write_mb_s),
        sum(|d| d.iops),
        r.networks.iter().map(|n| n.rx_mbit_s).sum::<f64>(),
        r.networks.iter().map(|n| n.tx_mbit_s).sum::<f64>(),
        opt(link),
        opt(temperature),
        opt(mhz),
        r.throttling.map_or(String::new(), |t| u8::from(throttled_now(&t)).to_string()),
        opt(r.memory_available_mb),
        whole(r.interrupts_per_s),
        whole(r.context_switches_per_s),
        links_down,
    )?;
    for name in processes {
        match r.processes.iter().find(|p| &p.name == name) {
            Some(p) => write!(out, ",{:.1},{:.1},{}", p.cpu_pct, p.rss_mb, p.count)?,
            None => write!(out, ",0.0,0.0,0")?,
        }
    }
    writeln!(out)
}

/// The CPU runs slower than it can right now (any "now" bit of get_throttled).
pub fn throttled_now(t: &headroom_monitor::fingerprint::Throttling) -> bool {
    t.throttled_now || t.frequency_capped_now || t.soft_temperature_limit_now || t.under_voltage_now
}

/// Appends one host's second to resources.jsonl: every figure of the
/// sample (per core, device, interface, sensor) as one JSON object.
pub fn write_detail(
    out: &mut impl Write,
    second: u64,
    epoch_ms: u64,
    host: &str,
    r: &Resources,
) -> io::Result<()> {
    let line = serde_json::json!({
        "second": second,
        "start_epoch_ms": epoch_ms,
        "host": host,
        "resources": r,
    });
    writeln!(out, "{line}")
}

/// One row of resources.csv: a host's aggregates in one second.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResourceRow {
    pub second: u64,
    pub host: String,
    pub cpu_pct: Option<f64>,
    pub memory_used_pct: Option<f64>,
    pub disk_util_pct: Option<f64>,
    /// Operations a second, reads and writes, all disks together.
    pub disk_iops: Option<f64>,
    pub net_mbit_s: Option<f64>,
    /// The busiest interface's share of its link, when the capacity is known.
    pub net_link_pct: Option<f64>,
    pub temperature_max_c: Option<f64>,
    pub cpu_mhz: Option<f64>,
    /// A Raspberry Pi's throttling now; `None` elsewhere.
    pub throttled: Option<bool>,
    pub memory_available_mb: Option<f64>,
    /// Interrupts a second, all kinds and cores.
    pub interrupts_s: Option<f64>,
    pub context_switches_s: Option<f64>,
    /// How many network interfaces were down; `None` when the kernel
    /// said of none.
    pub links_down: Option<u32>,
    /// Each watched process's CPU % (of one core) this second.
    pub processes: Vec<(String, f64)>,
}

/// Per second and host, each core's busy % (from resources.jsonl); empty
/// when the run monitored nothing.
pub fn read_core_loads(dir: &Path) -> Result<Vec<(u64, String, Vec<f64>)>, BundleError> {
    let path = dir.join(RESOURCES_DETAIL);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = fs::read_to_string(&path).map_err(read_error(&path))?;
    let mut rows = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let value: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| invalid(&path, format!("line {}: {e}", i + 1)))?;
        let second = value.get("second").and_then(|v| v.as_u64());
        let host = value.get("host").and_then(|v| v.as_str());
        let cores = value
            .pointer("/resources/per_core_pct")
            .and_then(|v| v.as_array());
        if let (Some(second), Some(host), Some(cores)) = (second, host, cores) {
            let cores = cores.iter().filter_map(|c| c.as_f64()).collect();
            rows.push((second, host.to_string(), cores));
        }
    }
    Ok(rows)
}

/// resources.csv, or `None` when the run monitored nothing.
pub fn read_resources(dir: &Path) -> Result<Option<Vec<ResourceRow>>, BundleError> {
    let path = dir.join(RESOURCES);
    if !path.exists() {
        return Ok(None);
    }
    let (mut reader, headers) = open_csv(&path)?;
    let at = columns(&path, &headers, &["second", "host"])?;
    let optional = |name: &str| headers.iter().position(|h| h == name);
    let (mhz, throttled, link) = (
        optional("cpu_mhz"),
        optional("throttled"),
        optional("net_link_pct"),
    );
    let iops = optional("disk_iops");
    let (available, interrupts, switches, down) = (
        optional("memory_available_mb"),
        optional("interrupts_s"),
        optional("context_switches_s"),
        optional("links_down"),
    );
    let (cpu, memory, disk, rx, tx, temperature) = (
        optional("cpu_pct"),
        optional("memory_used_pct"),
        optional("disk_util_pct"),
        optional("net_rx_mbit_s"),
        optional("net_tx_mbit_s"),
        optional("temperature_max_c"),
    );
    let processes: Vec<(String, usize)> = headers
        .iter()
        .enumerate()
        .filter(|(_, h)| !COLUMNS.contains(h))
        .filter_map(|(i, h)| Some((h.strip_suffix(PROCESS_CPU)?.to_string(), i)))
        .collect();
    let mut rows = Vec::new();
    for (line, record) in whole_records(&path, &mut reader)? {
        let value = |column: Option<usize>| -> Option<f64> {
            column
                .and_then(|c| record.get(c))
                .filter(|t| !t.is_empty())
                .and_then(|t| t.parse::<f64>().ok())
                // Unreadable or infinite: unknown, like a missing reading.
                .filter(|v| v.is_finite())
        };
        let net = match (value(rx), value(tx)) {
            (Some(r), Some(t)) => Some(r + t),
            (r, t) => r.or(t),
        };
        let second: u64 = number(&path, line, "second", record.get(at[0]).unwrap_or(""))?;
        if second > crate::intervals::LONGEST_RUN_S {
            return Err(invalid(
                &path,
                format!("line {line}: second {second} is not one of a run (at most a year)"),
            ));
        }
        rows.push(ResourceRow {
            second,
            host: record.get(at[1]).unwrap_or("").to_string(),
            cpu_pct: value(cpu),
            memory_used_pct: value(memory),
            disk_util_pct: value(disk),
            disk_iops: value(iops),
            net_mbit_s: net,
            net_link_pct: value(link),
            temperature_max_c: value(temperature),
            cpu_mhz: value(mhz),
            throttled: value(throttled).map(|v| v > 0.0),
            memory_available_mb: value(available),
            interrupts_s: value(interrupts),
            context_switches_s: value(switches),
            links_down: value(down).map(|v| v.clamp(0.0, u32::MAX as f64) as u32),
            processes: processes
                .iter()
                .filter_map(|(name, at)| Some((name.clone(), value(Some(*at))?)))
                .collect(),
        });
    }
    Ok(Some(rows))
}

/// Average and peak of one figure over the run; both unknown (NaN, null
/// in JSON) for a host that gave no sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    #[serde(deserialize_with = "number_or_null")]
    pub avg: f64,
    #[serde(deserialize_with = "number_or_null")]
    pub peak: f64,
}

/// A figure written as null (unknown) reads back as NaN.
fn number_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// What a host's resources did over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostSummary {
    pub host: String,
    pub samples: u64,
    pub cpu_pct: Spread,
    pub iowait_pct: Spread,
    pub memory_used_pct: Spread,
    pub swap_used_mb: Spread,
    /// The busiest disk each second.
    pub disk_util_pct: Spread,
    /// Received + sent over all interfaces.
    pub network_mbit_s: Spread,
    /// The busiest interface's share of its link, when a capacity is known.
    pub network_link_pct: Option<Spread>,
    pub temperature_max_c: Option<f64>,
    pub processes: BTreeMap<String, ProcessSummary>,
    /// Whether the CPU was throttled or capped in any second (Raspberry Pi; `None` elsewhere).
    #[serde(default)]
    pub throttled: Option<bool>,
    /// The least memory available in any second (MB): what more server
    /// processes could take. `None` from runs before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_available_mb_least: Option<f64>,
    /// Interrupts a second, all kinds and cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupts_s: Option<Spread>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_switches_s: Option<Spread>,
    /// Interrupts over the run by kind (the kinds that happened), as
    /// /proc/interrupts names them: what 003 compared before and after.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub interrupts_by_kind: BTreeMap<String, u64>,
    /// The cores' average clock, where cpufreq says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_mhz: Option<Spread>,
    /// Seconds a Raspberry Pi was throttled, capped or under-voltage.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub throttled_seconds: u64,
    /// Seconds some network interface's link was down.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub link_down_seconds: u64,
    /// Seconds an agent did not answer (its figures are missing there).
    #[serde(default)]
    pub gap_seconds: u64,
    /// Agent clock minus this machine's clock, as estimated at the start.
    #[serde(default)]
    pub clock_offset_ms: Option<f64>,
    /// Why figures are missing (the last reason an agent gave none), when
    /// some are: with `samples` 0 the host's figures are unknown, not zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The watched server's own resources judged over the run (the USE
    /// method, see [`crate::limits`]), the saturated first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<crate::limits::Limit>,
}

impl HostSummary {
    /// True when there is not one second of figures for this host.
    pub fn no_data(&self) -> bool {
        self.samples == 0
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessSummary {
    pub cpu_pct: Spread,
    /// All the name's processes together, at their largest.
    pub rss_mb_peak: f64,
    /// The most processes of the name at once (0 from older runs).
    #[serde(default)]
    pub count_peak: u32,
    /// The average process's RSS: each second's RSS over its count,
    /// averaged over the seconds (`None` from older runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_mb_each: Option<f64>,
}

impl ProcessSummary {
    /// How many more processes of this size fit in `available_mb`, as
    /// 001 sizes Apache's ServerLimit (spare memory over the average
    /// process's size; RSS counts shared pages in each, so it errs low).
    pub fn more_that_fit(&self, available_mb: f64) -> Option<u64> {
        let each = self.rss_mb_each.filter(|e| *e > 0.0)?;
        (available_mb.is_finite() && available_mb >= 0.0).then(|| (available_mb / each) as u64)
    }
}
