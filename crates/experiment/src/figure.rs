//! The figures an experiment compares, where each comes from in a run's
//! bundle, and which direction is better.

use headroom_bundle::resources::HostSummary;
use headroom_bundle::summary::RunSummary;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Figure {
    Apdex,
    Min,
    Mean,
    P50,
    P90,
    P95,
    P99,
    Max,
    /// The response times' standard deviation within the run (003's σ).
    Sd,
    /// Responses above 5 × the run's mean (003's peaks).
    Peaks,
    /// Errors as a share of requests.
    Errors,
    /// Requests per second.
    Throughput,
    /// A capacity search's answer, in users.
    Users,
    /// The first monitored host's average CPU %.
    Cpu,
    /// The watched server processes' (`--process`) CPU on the first
    /// monitored host, summed, in % of one core (100: one core busy).
    ServerCpu,
    /// The first monitored host's average memory in use, % of its memory.
    Memory,
    /// The watched server processes' RSS at its largest, summed, in MB.
    ServerMemory,
    /// The first monitored host's busiest disk, average %util.
    Disk,
    /// The first monitored host's network traffic, average Mbit/s.
    Network,
    /// The first monitored host's hottest sensor at its hottest, °C.
    Temperature,
    /// The first monitored host's average core frequency, MHz.
    CpuMhz,
    /// The share of the seconds a Raspberry Pi was throttled, capped or
    /// under-voltage.
    Throttled,
    /// Interrupts a second on the first monitored host, on average.
    Interrupts,
    /// Context switches a second on the first monitored host, on average.
    ContextSwitches,
    /// The utilization (%) of the watched server's resource judged first
    /// over the run (the saturated first, the fullest first: a pool, a CPU
    /// or disk quota, an accept queue, a database's connections).
    Limit,
    /// Errors from the second of the run's first fault on.
    FaultErrors,
    /// Seconds from the first fault until errors stay at 0 and p95 is back
    /// within 20% of before (none when the run did not recover).
    Recovery,
    /// Users whose `lost_check` failed after the first fault (sessions lost).
    UsersLost,
}

/// The figures compared when the file names none.
pub const DEFAULT_FIGURES: [Figure; 6] = [
    Figure::Apdex,
    Figure::Mean,
    Figure::P90,
    Figure::P95,
    Figure::Errors,
    Figure::Throughput,
];

/// The figures a user can name in `measure:` (fault figures come with `faults:`).
pub const ALL: [Figure; 25] = [
    Figure::Apdex,
    Figure::Min,
    Figure::Mean,
    Figure::P50,
    Figure::P90,
    Figure::P95,
    Figure::P99,
    Figure::Max,
    Figure::Sd,
    Figure::Peaks,
    Figure::Errors,
    Figure::Throughput,
    Figure::Users,
    Figure::Cpu,
    Figure::ServerCpu,
    Figure::Memory,
    Figure::ServerMemory,
    Figure::Disk,
    Figure::Network,
    Figure::Temperature,
    Figure::CpuMhz,
    Figure::Throttled,
    Figure::Interrupts,
    Figure::ContextSwitches,
    Figure::Limit,
];

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::Apdex => "apdex",
            Figure::Min => "min",
            Figure::Mean => "mean",
            Figure::P50 => "p50",
            Figure::P90 => "p90",
            Figure::P95 => "p95",
            Figure::P99 => "p99",
            Figure::Max => "max",
            Figure::Sd => "sd",
            Figure::Peaks => "peaks",
            Figure::Errors => "errors",
            Figure::Throughput => "throughput",
            Figure::Users => "users",
            Figure::Cpu => "cpu",
            Figure::ServerCpu => "server_cpu",
            Figure::Memory => "memory",
            Figure::ServerMemory => "server_memory",
            Figure::Disk => "disk",
            Figure::Network => "network",
            Figure::Temperature => "temperature",
            Figure::CpuMhz => "cpu_mhz",
            Figure::Throttled => "throttled",
            Figure::Interrupts => "interrupts",
            Figure::ContextSwitches => "context_switches",
            Figure::Limit => "limit",
            Figure::FaultErrors => "fault_errors",
            Figure::Recovery => "recovery",
            Figure::UsersLost => "users_lost",
        }
    }

    pub fn parse(name: &str) -> Option<Figure> {
        ALL.iter().copied().find(|f| f.name() == name.trim())
    }

    /// The column name in runs.csv and cells.csv (with its unit).
    pub fn column(self) -> &'static str {
        match self {
            Figure::Apdex => "apdex",
            Figure::Min => "min_ms",
            Figure::Mean => "mean_ms",
            Figure::P50 => "p50_ms",
            Figure::P90 => "p90_ms",
            Figure::P95 => "p95_ms",
            Figure::P99 => "p99_ms",
            Figure::Max => "max_ms",
            Figure::Sd => "sd_ms",
            Figure::Peaks => "peaks",
            Figure::Errors => "error_rate",
            Figure::Throughput => "throughput_rps",
            Figure::Users => "capacity_users",
            Figure::Cpu => "cpu_pct",
            Figure::ServerCpu => "server_cpu_pct",
            Figure::Memory => "memory_pct",
            Figure::ServerMemory => "server_rss_mb",
            Figure::Disk => "disk_util_pct",
            Figure::Network => "network_mbit_s",
            Figure::Temperature => "temperature_max_c",
            Figure::CpuMhz => "cpu_mhz",
            Figure::Throttled => "throttled_pct",
            Figure::Interrupts => "interrupts_s",
            Figure::ContextSwitches => "context_switches_s",
            Figure::Limit => "limit_pct",
            Figure::FaultErrors => "fault_errors",
            Figure::Recovery => "recovery_s",
            Figure::UsersLost => "users_lost",
        }
    }

    /// How a user reads it: "p95 (ms)".
    pub fn title(self) -> &'static str {
        match self {
            Figure::Apdex => "Apdex",
            Figure::Min => "min (ms)",
            Figure::Mean => "mean (ms)",
            Figure::P50 => "p50 (ms)",
            Figure::P90 => "p90 (ms)",
            Figure::P95 => "p95 (ms)",
            Figure::P99 => "p99 (ms)",
            Figure::Max => "max (ms)",
            Figure::Sd => "σ within a run (ms)",
            Figure::Peaks => "peaks (responses above 5 × the run's mean)",
            Figure::Errors => "errors (%)",
            Figure::Throughput => "throughput (req/s)",
            Figure::Users => "capacity (users)",
            Figure::Cpu => "CPU (%)",
            Figure::ServerCpu => "server CPU (% of a core)",
            Figure::Memory => "memory (%)",
            Figure::ServerMemory => "server memory (MB)",
            Figure::Disk => "disk busy (%)",
            Figure::Network => "network (Mbit/s)",
            Figure::Temperature => "temperature (°C)",
            Figure::CpuMhz => "CPU frequency (MHz)",
            Figure::Throttled => "throttled (% of seconds)",
            Figure::Interrupts => "interrupts (/s)",
            Figure::ContextSwitches => "context switches (/s)",
            Figure::Limit => "its fullest resource (%)",
            Figure::FaultErrors => "errors after the fault",
            Figure::Recovery => "recovery after the fault (s)",
            Figure::UsersLost => "users who lost their session",
        }
    }

    /// A share (errors of the requests, CPU of the host): its changes are
    /// said in percentage points, not in % of itself.
    pub fn is_share(self) -> bool {
        matches!(
            self,
            Figure::Errors
                | Figure::Cpu
                | Figure::ServerCpu
                | Figure::Memory
                | Figure::Disk
                | Figure::Throttled
                | Figure::Limit
        )
    }

    /// What a stored value can be, low and high: an Apdex and an error
    /// share 0-1, a share of the host 0-100 %, the rest not below 0 (a
    /// temperature anything). An interval of a mean is clipped to them (a
    /// Student's t interval of two repetitions can reach far past them).
    pub fn bounds(self) -> (f64, f64) {
        match self {
            Figure::Apdex | Figure::Errors => (0.0, 1.0),
            Figure::Cpu | Figure::Memory | Figure::Disk | Figure::Throttled | Figure::Limit => {
                (0.0, 100.0)
            }
            Figure::Temperature => (f64::NEG_INFINITY, f64::INFINITY),
            _ => (0.0, f64::INFINITY),
        }
    }

    /// An interval of a mean, clipped to [`Figure::bounds`].
    pub fn clip(self, (low, high): (f64, f64)) -> (f64, f64) {
        let (least, most) = self.bounds();
        (low.clamp(least, most), high.clamp(least, most))
    }

    /// An interval of a difference of two means, clipped to what a
    /// difference of two values within [`Figure::bounds`] can be.
    pub fn clip_difference(self, (low, high): (f64, f64)) -> (f64, f64) {
        let (least, most) = self.bounds();
        let span = most - least;
        (low.clamp(-span, span), high.clamp(-span, span))
    }

    /// A figure of the monitored host (it needs `--monitor`).
    pub fn of_host(self) -> bool {
        matches!(
            self,
            Figure::Cpu
                | Figure::ServerCpu
                | Figure::Memory
                | Figure::ServerMemory
                | Figure::Disk
                | Figure::Network
                | Figure::Temperature
                | Figure::CpuMhz
                | Figure::Throttled
                | Figure::Interrupts
                | Figure::ContextSwitches
                | Figure::Limit
        )
    }

    /// Why no run has the figure, when none has.
    pub fn missing_reason(self) -> &'static str {
        match self {
            Figure::Temperature => {
                "no run's host reported a temperature (it has no sensor in /sys)"
            }
            Figure::Throttled => "throttling is read on a Raspberry Pi only (vcgencmd)",
            Figure::CpuMhz => "no run's host reported its clock (no cpufreq in /sys)",
            Figure::Interrupts | Figure::ContextSwitches => {
                "no run's host reported them (an agent older than these figures)"
            }
            Figure::ServerCpu | Figure::ServerMemory => "no watched process (--process) ran",
            Figure::Limit => {
                "no run judged a resource of the server (watch its processes with --process)"
            }
            Figure::Peaks => "the runs' bundles were written before peaks were counted",
            _ => "no run reported it",
        }
    }

    /// A figure of the watched server processes (it needs `--process`).
    pub fn of_server(self) -> bool {
        matches!(self, Figure::ServerCpu | Figure::ServerMemory)
    }

    /// The unit of a shown value ("ms", "req/s"; "" for the Apdex, "%"
    /// for shares).
    pub fn unit(self) -> &'static str {
        match self {
            Figure::Apdex => "",
            Figure::Min
            | Figure::Mean
            | Figure::P50
            | Figure::P90
            | Figure::P95
            | Figure::P99
            | Figure::Max
            | Figure::Sd => "ms",
            Figure::Peaks => "responses",
            Figure::Errors
            | Figure::Cpu
            | Figure::ServerCpu
            | Figure::Memory
            | Figure::Disk
            | Figure::Throttled
            | Figure::Limit => "%",
            Figure::ServerMemory => "MB",
            Figure::Network => "Mbit/s",
            Figure::Temperature => "°C",
            Figure::CpuMhz => "MHz",
            Figure::Interrupts | Figure::ContextSwitches => "/s",
            Figure::Throughput => "req/s",
            Figure::Users | Figure::UsersLost => "users",
            Figure::FaultErrors => "errors",
            Figure::Recovery => "s",
        }
    }

    /// The unit of a stored value (runs.csv, experiment.json): errors as a
    /// share of 1, the rest as shown.
    pub fn stored_unit(self) -> &'static str {
        match self {
            Figure::Errors => "share of requests (0-1)",
            Figure::Apdex => "Apdex (0-1)",
            other => other.unit(),
        }
    }

    /// True when a larger value is better (Apdex, throughput, capacity,
    /// a CPU's clock).
    pub fn higher_is_better(self) -> bool {
        matches!(
            self,
            Figure::Apdex | Figure::Throughput | Figure::Users | Figure::CpuMhz
        )
    }

    /// The value as shown: errors in percent, the rest as stored.
    pub fn shown(self, value: f64) -> f64 {
        if self == Figure::Errors {
            value * 100.0
        } else {
            value
        }
    }

    /// Decimals shown: Apdex 3, counts of users and errors 0, the rest 1.
    pub fn decimals(self) -> usize {
        match self {
            Figure::Apdex => 3,
            Figure::Users
            | Figure::UsersLost
            | Figure::FaultErrors
            | Figure::Peaks
            | Figure::CpuMhz
            | Figure::Interrupts
            | Figure::ContextSwitches => 0,
            _ => 1,
        }
    }

    /// A shown mean with the half-width of its interval: "123.4 ±5.6", or
    /// "123.4 (n=1)" without one.
    pub fn with_interval(self, mean: f64, half: Option<f64>) -> String {
        let d = self.decimals();
        match half {
            Some(half) => format!("{mean:.d$} ±{half:.d$}"),
            None => format!("{mean:.d$} (n=1)"),
        }
    }

    /// The figure of a run's summary, for `label` or the total; `None`
    /// when the run does not have it (no Apdex without requests, no CPU
    /// without --monitor, no server CPU without --process, no users
    /// outside a capacity search, no temperature without a sensor).
    pub fn of_run(self, summary: &RunSummary, label: Option<&str>) -> Option<f64> {
        let figures = match label {
            Some(label) => summary.labels.get(label)?,
            None => &summary.total,
        };
        // Without a sample (no journey finished) there is no response time
        // or error rate, only a throughput of 0.
        if figures.count == 0 && !(self == Figure::Throughput || self.of_host()) {
            return None;
        }
        let value = match self {
            Figure::Apdex => figures.apdex?,
            Figure::Min => figures.min_ms,
            Figure::Mean => figures.mean_ms,
            Figure::P50 => figures.p50_ms,
            Figure::P90 => figures.p90_ms,
            Figure::P95 => figures.p95_ms,
            Figure::P99 => figures.p99_ms,
            Figure::Max => figures.max_ms,
            Figure::Sd => figures.stdev_ms,
            Figure::Peaks => figures.peaks? as f64,
            Figure::Errors => figures.error_rate,
            Figure::Throughput => figures.rps,
            Figure::Users | Figure::FaultErrors | Figure::Recovery | Figure::UsersLost => {
                return None
            }
            host_figure => return host_figure.of_host_summary(summary.resources.first()?),
        };
        value.is_finite().then_some(value)
    }

    /// A host figure from the host's summary; `None` for other figures and
    /// for what the host did not report.
    fn of_host_summary(self, host: &HostSummary) -> Option<f64> {
        let server = || (!host.processes.is_empty()).then_some(host.processes.values());
        let value = match self {
            Figure::Cpu => host.cpu_pct.avg,
            Figure::ServerCpu => server()?.map(|p| p.cpu_pct.avg).sum(),
            Figure::Memory => host.memory_used_pct.avg,
            Figure::ServerMemory => server()?.map(|p| p.rss_mb_peak).sum(),
            Figure::Disk => host.disk_util_pct.avg,
            Figure::Network => host.network_mbit_s.avg,
            Figure::Temperature => host.temperature_max_c?,
            Figure::CpuMhz => host.cpu_mhz?.avg,
            Figure::Throttled => {
                host.throttled?;
                100.0 * host.throttled_seconds as f64 / host.samples.max(1) as f64
            }
            Figure::Interrupts => host.interrupts_s?.avg,
            Figure::ContextSwitches => host.context_switches_s?.avg,
            Figure::Limit => host.limits.first()?.utilization_pct,
            _ => return None,
        };
        value.is_finite().then_some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Pi's run: 10 seconds, 3 of them throttled, two server programs.
    fn pi_run() -> RunSummary {
        let spread = |avg: f64, peak: f64| serde_json::json!({"avg": avg, "peak": peak});
        let host: HostSummary = serde_json::from_value(serde_json::json!({
            "host": "pi", "samples": 10,
            "cpu_pct": spread(61.0, 99.0), "iowait_pct": spread(2.0, 5.0),
            "memory_used_pct": spread(42.5, 44.0), "swap_used_mb": spread(0.0, 0.0),
            "disk_util_pct": spread(17.0, 40.0), "network_mbit_s": spread(12.5, 30.0),
            "network_link_pct": null, "temperature_max_c": 71.2,
            "processes": {
                "php-fpm": {"cpu_pct": spread(150.0, 190.0), "rss_mb_peak": 160.0},
                "nginx": {"cpu_pct": spread(20.0, 30.0), "rss_mb_peak": 12.0}
            },
            "throttled": true, "throttled_seconds": 3,
            "cpu_mhz": spread(1350.0, 1500.0),
            "interrupts_s": spread(9000.0, 9900.0),
            "context_switches_s": spread(40000.0, 44000.0)
        }))
        .unwrap();
        RunSummary {
            resources: vec![host],
            ..Default::default()
        }
    }

    #[test]
    fn host_figures_come_from_the_first_monitored_host() {
        let run = pi_run();
        let of = |f: Figure| f.of_run(&run, None);
        assert_eq!(of(Figure::Memory), Some(42.5));
        assert_eq!(of(Figure::ServerMemory), Some(172.0));
        assert_eq!(of(Figure::ServerCpu), Some(170.0));
        assert_eq!(of(Figure::Disk), Some(17.0));
        assert_eq!(of(Figure::Network), Some(12.5));
        assert_eq!(of(Figure::Temperature), Some(71.2));
        assert_eq!(of(Figure::CpuMhz), Some(1350.0));
        assert_eq!(of(Figure::Throttled), Some(30.0));
        assert_eq!(of(Figure::Interrupts), Some(9000.0));
        assert_eq!(of(Figure::ContextSwitches), Some(40000.0));
        // A run without requests still has its host's figures.
        assert_eq!(run.total.count, 0);
        assert_eq!(of(Figure::Mean), None);
        assert_eq!(of(Figure::Peaks), None);
        // 003's σ and peaks come from the run's responses.
        let mut run = run;
        run.total.count = 1000;
        run.total.stdev_ms = 12.5;
        run.total.peaks = Some(7);
        assert_eq!(Figure::Sd.of_run(&run, None), Some(12.5));
        assert_eq!(Figure::Peaks.of_run(&run, None), Some(7.0));
    }

    #[test]
    fn what_a_host_did_not_report_is_no_figure() {
        let mut run = pi_run();
        let host = &mut run.resources[0];
        host.temperature_max_c = None;
        host.throttled = None;
        host.cpu_mhz = None;
        host.interrupts_s = None;
        host.processes.clear();
        for f in [
            Figure::Temperature,
            Figure::Throttled,
            Figure::CpuMhz,
            Figure::Interrupts,
            Figure::ServerMemory,
            Figure::ServerCpu,
        ] {
            assert_eq!(f.of_run(&run, None), None, "{}", f.name());
        }
        run.resources.clear();
        assert_eq!(Figure::Memory.of_run(&run, None), None);
        // Every name parses back to its figure; shares and directions.
        for f in ALL {
            assert_eq!(Figure::parse(f.name()), Some(f));
        }
        assert!(Figure::Throttled.is_share() && !Figure::Temperature.is_share());
        assert!(Figure::CpuMhz.higher_is_better() && !Figure::Temperature.higher_is_better());
    }

    /// Two repetitions' Student's t interval of a CPU % reached -1462 to
    /// 1549, and of its change -282 to +318 pp: clipped to what a CPU %
    /// and a difference of two can be.
    #[test]
    fn an_interval_is_clipped_to_what_the_figure_can_be() {
        assert_eq!(Figure::Cpu.clip((-1462.4, 1549.1)), (0.0, 100.0));
        assert_eq!(Figure::Cpu.clip((12.0, 30.5)), (12.0, 30.5));
        assert_eq!(
            Figure::Cpu.clip_difference((-282.1, 317.8)),
            (-100.0, 100.0)
        );
        assert_eq!(Figure::Apdex.clip((0.8, 1.3)), (0.8, 1.0));
        assert_eq!(Figure::Errors.clip_difference((-0.2, 1.7)), (-0.2, 1.0));
        assert_eq!(Figure::Mean.clip((-40.0, 90.0)), (0.0, 90.0));
        assert_eq!(Figure::Temperature.clip((-5.0, 90.0)), (-5.0, 90.0));
    }
}
