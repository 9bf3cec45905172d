//! The figures an experiment compares, where each comes from in a run's
//! bundle, and which direction is better.

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
pub const ALL: [Figure; 13] = [
    Figure::Apdex,
    Figure::Min,
    Figure::Mean,
    Figure::P50,
    Figure::P90,
    Figure::P95,
    Figure::P99,
    Figure::Max,
    Figure::Errors,
    Figure::Throughput,
    Figure::Users,
    Figure::Cpu,
    Figure::ServerCpu,
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
            Figure::Errors => "errors",
            Figure::Throughput => "throughput",
            Figure::Users => "users",
            Figure::Cpu => "cpu",
            Figure::ServerCpu => "server_cpu",
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
            Figure::Errors => "error_rate",
            Figure::Throughput => "throughput_rps",
            Figure::Users => "capacity_users",
            Figure::Cpu => "cpu_pct",
            Figure::ServerCpu => "server_cpu_pct",
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
            Figure::Errors => "errors (%)",
            Figure::Throughput => "throughput (req/s)",
            Figure::Users => "capacity (users)",
            Figure::Cpu => "CPU (%)",
            Figure::ServerCpu => "server CPU (% of a core)",
            Figure::FaultErrors => "errors after the fault",
            Figure::Recovery => "recovery after the fault (s)",
            Figure::UsersLost => "users who lost their session",
        }
    }

    /// A share (errors of the requests, CPU of the host): its changes are
    /// said in percentage points, not in % of itself.
    pub fn is_share(self) -> bool {
        matches!(self, Figure::Errors | Figure::Cpu | Figure::ServerCpu)
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
            | Figure::Max => "ms",
            Figure::Errors | Figure::Cpu | Figure::ServerCpu => "%",
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

    /// True when a larger value is better (Apdex, throughput, capacity).
    pub fn higher_is_better(self) -> bool {
        matches!(self, Figure::Apdex | Figure::Throughput | Figure::Users)
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
            Figure::Users | Figure::UsersLost | Figure::FaultErrors => 0,
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
    /// outside a capacity search).
    pub fn of_run(self, summary: &RunSummary, label: Option<&str>) -> Option<f64> {
        let figures = match label {
            Some(label) => summary.labels.get(label)?,
            None => &summary.total,
        };
        // Without a sample (no journey finished) there is no response time
        // or error rate, only a throughput of 0.
        if figures.count == 0
            && !matches!(self, Figure::Throughput | Figure::Cpu | Figure::ServerCpu)
        {
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
            Figure::Errors => figures.error_rate,
            Figure::Throughput => figures.rps,
            Figure::Users | Figure::FaultErrors | Figure::Recovery | Figure::UsersLost => {
                return None
            }
            Figure::Cpu => summary.resources.first()?.cpu_pct.avg,
            Figure::ServerCpu => {
                let host = summary.resources.first()?;
                if host.processes.is_empty() {
                    return None;
                }
                host.processes.values().map(|p| p.cpu_pct.avg).sum()
            }
        };
        value.is_finite().then_some(value)
    }
}
