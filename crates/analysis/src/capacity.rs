//! A capacity level's figures judged: what a level must meet ([`ApdexGoal`]),
//! a monitored host's figures over a level ([`host_figures`]), and the rule
//! that names what saturated ([`bottleneck`]). Plain data and pure rules:
//! capacity.json holds these types; the search itself (which levels to run,
//! when a level is measured enough, the answer) is the `headroom-capacity`
//! crate's.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What a level must meet.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ApdexGoal {
    pub apdex: f64,
    /// Largest error share, 0..1.
    pub max_error: f64,
    /// The 95th percentile must stay within this (written in ms).
    #[serde(rename = "p95_max_ms", with = "crate::apdex::optional_ms", default)]
    pub p95_max: Option<Duration>,
}

/// A monitored host's resources over a level's measurement.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostFigures {
    pub host: String,
    pub cpu_avg: Option<f64>,
    pub cpu_peak: Option<f64>,
    pub memory_avg: Option<f64>,
    pub disk_avg: Option<f64>,
    /// The disks' operations a second together (reads and writes), on
    /// average.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_iops_avg: Option<f64>,
    pub net_link_avg: Option<f64>,
    pub temperature_max: Option<f64>,
    pub throttled_seconds: u64,
    /// The busiest core and its average busy %: a server limited to one
    /// core (single-threaded, or pinned) saturates it while the host's
    /// average stays low.
    pub busiest_core: Option<(usize, f64)>,
    /// Each watched process's average CPU, as a share of the whole host
    /// (the scale of `cpu_avg`), busiest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<(String, f64)>,
}

/// One second of a monitored host, as the capacity figures use it.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostSecond<'a> {
    pub cpu_pct: Option<f64>,
    pub memory_used_pct: Option<f64>,
    pub disk_util_pct: Option<f64>,
    pub disk_iops: Option<f64>,
    pub net_link_pct: Option<f64>,
    pub temperature_max_c: Option<f64>,
    pub throttled: Option<bool>,
    /// Each watched process's CPU % of one core.
    pub processes: &'a [(String, f64)],
    /// Each core's busy %, when known.
    pub per_core: Option<&'a [f64]>,
}

fn average(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// A host's figures over a level's measured seconds: averages, peaks, the
/// busiest core, and each watched process's CPU as a share of the whole
/// host (a process's own figure is of one core).
pub fn host_figures(host: &str, seconds: &[HostSecond]) -> HostFigures {
    let values = |get: fn(&HostSecond) -> Option<f64>| -> Vec<f64> {
        seconds.iter().filter_map(get).collect()
    };
    let with_cores: Vec<&[f64]> = seconds.iter().filter_map(|s| s.per_core).collect();
    let cores = with_cores.iter().map(|c| c.len()).max().unwrap_or(0);
    let busiest_core = (cores > 0)
        .then(|| {
            (0..cores)
                .map(|i| {
                    let sum: f64 = with_cores.iter().filter_map(|c| c.get(i)).sum();
                    (i, sum / with_cores.len() as f64)
                })
                .max_by(|a, b| a.1.total_cmp(&b.1))
        })
        .flatten();
    let mut processes: std::collections::BTreeMap<&str, (f64, usize)> = Default::default();
    for (name, pct) in seconds.iter().flat_map(|s| s.processes) {
        let (sum, n) = processes.entry(name).or_default();
        *sum += pct;
        *n += 1;
    }
    let mut processes: Vec<(String, f64)> = processes
        .into_iter()
        .map(|(name, (sum, n))| (name.to_string(), sum / n as f64 / cores.max(1) as f64))
        .collect();
    processes.sort_by(|a, b| b.1.total_cmp(&a.1));
    let cpu = values(|s| s.cpu_pct);
    HostFigures {
        host: host.to_string(),
        cpu_avg: average(&cpu),
        cpu_peak: cpu.iter().copied().reduce(f64::max),
        memory_avg: average(&values(|s| s.memory_used_pct)),
        disk_avg: average(&values(|s| s.disk_util_pct)),
        disk_iops_avg: average(&values(|s| s.disk_iops)),
        net_link_avg: average(&values(|s| s.net_link_pct)),
        temperature_max: values(|s| s.temperature_max_c).into_iter().reduce(f64::max),
        throttled_seconds: seconds.iter().filter(|s| s.throttled == Some(true)).count() as u64,
        busiest_core,
        processes,
    }
}

/// What limits the server at the knee.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Bottleneck {
    /// `cpu`, `memory`, `disk`, `network`, `throttling`, `temperature`.
    pub resource: String,
    pub host: String,
    /// The figure: % (cpu, memory, disk, network), seconds (throttling) or °C.
    pub figure: f64,
    pub users: u32,
    /// For `cpu`: the one core that saturated while the host's average did not.
    pub core: Option<usize>,
    /// For `cpu`: the watched processes that used it (share of the host, busiest first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<(String, f64)>,
    /// For the host's `cpu` with processes watched (`--process`): the %
    /// of the host they used together, all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_pct: Option<f64>,
}

/// The share of a saturated machine's CPU below which the watched server
/// processes are not what saturated it: other work on the machine (the
/// load generator, other programs) took most of it.
pub const SERVER_SHARE_OF_CPU: f64 = 0.5;

impl Bottleneck {
    /// Whether the machine's CPU saturated while the watched server
    /// processes used less than half of it: then it is not the server's
    /// own limit.
    pub fn crowded_out(&self) -> bool {
        self.resource == "cpu"
            && self.core.is_none()
            && self
                .server_pct
                .is_some_and(|server| server < self.figure * SERVER_SHARE_OF_CPU)
    }

    pub fn describe(&self) -> String {
        if self.crowded_out() {
            return format!(
                "{} machine CPU {:.0}% at {} users, of which the watched server processes used only {:.0}%{}: other work on the machine (the load generator, other programs) took the rest, so this is not the server's own limit",
                self.host,
                self.figure,
                self.users,
                self.server_pct.unwrap_or(0.0),
                if self.processes.is_empty() {
                    String::new()
                } else {
                    format!(
                        " ({})",
                        self.processes
                            .iter()
                            .map(|(name, pct)| format!("{name} {pct:.0}%"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            );
        }
        match self.resource.as_str() {
            "throttling" => format!(
                "{} throttled {} s at {} users",
                self.host, self.figure, self.users
            ),
            "temperature" => format!(
                "{} at {:.0} °C at {} users",
                self.host, self.figure, self.users
            ),
            "cpu" if self.core.is_some() => format!(
                "{} CPU core {} {:.0}% at {} users (one core saturated; the host's average is lower){}",
                self.host,
                self.core.unwrap_or(0),
                self.figure,
                self.users,
                if self.processes.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; of all cores: {}",
                        self.processes
                            .iter()
                            .map(|(name, pct)| format!("{name} {pct:.0}%"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            ),
            "cpu" if !self.processes.is_empty() => format!(
                "{} machine CPU {:.0}% ({} of it) at {} users",
                self.host,
                self.figure,
                self.processes
                    .iter()
                    .map(|(name, pct)| format!("{name} {pct:.0}%"))
                    .collect::<Vec<_>>()
                    .join(", "),
                self.users
            ),
            resource => format!(
                "{} {} {:.0}% at {} users",
                self.host,
                match resource {
                    "cpu" => "machine CPU",
                    "disk" => "disk %util",
                    "network" => "network link",
                    other => other,
                },
                self.figure,
                self.users
            ),
        }
    }
}

/// Whether a level's figures meet `target`: Apdex at least the target,
/// errors at most the share allowed, p95 within its bound, and at least one
/// sample.
pub fn meets(
    target: &ApdexGoal,
    apdex: Option<f64>,
    error_rate: f64,
    p95: Option<Duration>,
    samples: u64,
) -> bool {
    apdex.is_some_and(|a| a + 1e-9 >= target.apdex)
        && error_rate <= target.max_error
        && target
            .p95_max
            .is_none_or(|max| p95.is_some_and(|p| p <= max))
        && samples > 0
}

/// The saturated resource of a level at `users` with `resources`, if any:
/// CPU, disk or network link ≥ 90%, memory ≥ 90%, throttling, or ≥ 80 °C.
/// The most saturated wins; a saturated CPU names the watched processes
/// that used at least 1% of it.
pub fn bottleneck(users: u32, resources: &[HostFigures]) -> Option<Bottleneck> {
    let mut found: Vec<(f64, Bottleneck)> = Vec::new();
    for host in resources {
        let mut candidate =
            |resource: &str, figure: Option<f64>, limit: f64, core: Option<usize>| {
                if let Some(figure) = figure.filter(|f| *f >= limit) {
                    found.push((
                        figure / limit,
                        Bottleneck {
                            resource: resource.into(),
                            host: host.host.clone(),
                            figure,
                            users,
                            core,
                            processes: if resource == "cpu" {
                                host.processes
                                    .iter()
                                    .filter(|(_, pct)| *pct >= 1.0)
                                    .cloned()
                                    .collect()
                            } else {
                                Vec::new()
                            },
                            server_pct: (resource == "cpu" && !host.processes.is_empty())
                                .then(|| host.processes.iter().map(|(_, pct)| pct).sum()),
                        },
                    ));
                }
            };
        candidate("cpu", host.cpu_avg, 90.0, None);
        if host.cpu_avg.is_none_or(|c| c < 90.0) {
            if let Some((core, busy)) = host.busiest_core {
                candidate("cpu", Some(busy), 95.0, Some(core));
            }
        }
        candidate("memory", host.memory_avg, 90.0, None);
        candidate("disk", host.disk_avg, 90.0, None);
        candidate("network", host.net_link_avg, 90.0, None);
        candidate("temperature", host.temperature_max, 80.0, None);
        if host.throttled_seconds > 0 {
            candidate("throttling", Some(host.throttled_seconds as f64), 1.0, None);
        }
    }
    found
        .into_iter()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, b)| b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_figures_average_and_share_processes_over_the_cores() {
        let php = vec![
            ("php-fpm".to_string(), 160.0),
            ("mariadbd".to_string(), 14.0),
        ];
        let second = |cpu: f64, cores: &'static [f64]| HostSecond {
            cpu_pct: Some(cpu),
            processes: &php,
            per_core: Some(cores),
            ..HostSecond::default()
        };
        let f = host_figures(
            "db",
            &[second(90.0, &[80.0, 100.0]), second(98.0, &[96.0, 100.0])],
        );
        assert_eq!((f.cpu_avg, f.cpu_peak), (Some(94.0), Some(98.0)));
        assert_eq!(f.busiest_core, Some((1, 100.0)));
        // 160% of one core on a 2-core host is 80% of the host.
        assert_eq!(f.processes[0], ("php-fpm".to_string(), 80.0));
        let b = bottleneck(90, &[f]).unwrap();
        assert_eq!(
            b.describe(),
            "db machine CPU 94% (php-fpm 80%, mariadbd 7% of it) at 90 users"
        );
    }
}
